// Every layer that only moves elements (Concat, Slice, Crop, Permute,
// ShuffleChannel, Padding, Tile, Expand, the gathers with known indices;
// ops/common/element_moves.h) on the GPU, from the
// moves the CPU layer describes: its fills and copies as strided copies of
// 32-bit words (shaders/strided_copy.comp), recorded once and run in one
// submission. Elements of 4 or 8 bytes (8: two words each); at most 6 axes
// once axes that continue each other are merged.
#include <algorithm>
#include <cstring>

#include "backend/vulkan/gpu_kernel.h"
#include "ops/common/element_moves.h"

namespace kestrel::vulkan {

namespace {

constexpr int kMaxRank = 6;

struct PushCopy {
    int32_t rank = 0;
    uint32_t count = 0;
    int32_t in_offset = 0, out_offset = 0;
    uint32_t dims[kMaxRank] = {};
    int32_t in_strides[kMaxRank] = {}, out_strides[kMaxRank] = {};
};

// A copy in words: offsets and strides scaled, and an innermost axis over an
// element's words.
StridedCopy in_words(StridedCopy c, int64_t words)
{
    if (words == 1) return c;
    c.in_offset *= words, c.out_offset *= words;
    for (auto& s : c.in_strides) s *= words;
    for (auto& s : c.out_strides) s *= words;
    c.dims.push_back(words), c.in_strides.push_back(1), c.out_strides.push_back(1);
    return c;
}

// The smallest and largest offset a side of the copy touches.
void reach(int64_t offset, const Shape& dims, const std::vector<int64_t>& strides, int64_t& lo, int64_t& hi)
{
    lo = hi = offset;
    for (size_t k = 0; k < dims.size(); ++k) (strides[k] < 0 ? lo : hi) += (dims[k] - 1) * strides[k];
}

// The push constants of a copy within buffers of in_words and out_words:
// axes of size 1 dropped, an axis merged into the next where both sides
// continue it. False when it does not fit (rank, 32-bit offsets, bounds).
bool push_of(const StridedCopy& c, int64_t in_words, int64_t out_words, PushCopy& p)
{
    const int64_t count = shape_numel(c.dims);
    if (count == 0) return true;
    int64_t lo = 0, hi = 0;
    reach(c.in_offset, c.dims, c.in_strides, lo, hi);
    if (lo < 0 || hi >= in_words) return false;
    reach(c.out_offset, c.dims, c.out_strides, lo, hi);
    if (lo < 0 || hi >= out_words || out_words >= (int64_t{1} << 31) || in_words >= (int64_t{1} << 31)) return false;
    Shape dims;
    std::vector<int64_t> is, os;
    for (size_t k = 0; k < c.dims.size(); ++k) {
        if (c.dims[k] == 1) continue;
        if (!dims.empty() && is.back() == c.in_strides[k] * c.dims[k] && os.back() == c.out_strides[k] * c.dims[k]) {
            dims.back() *= c.dims[k];
            is.back() = c.in_strides[k], os.back() = c.out_strides[k];
            continue;
        }
        dims.push_back(c.dims[k]), is.push_back(c.in_strides[k]), os.push_back(c.out_strides[k]);
    }
    if (dims.size() > static_cast<size_t>(kMaxRank)) return false;
    p.rank = static_cast<int32_t>(dims.size());
    p.count = static_cast<uint32_t>(count);
    p.in_offset = static_cast<int32_t>(c.in_offset), p.out_offset = static_cast<int32_t>(c.out_offset);
    for (size_t k = 0; k < dims.size(); ++k) {
        p.dims[k] = static_cast<uint32_t>(dims[k]);
        p.in_strides[k] = static_cast<int32_t>(is[k]), p.out_strides[k] = static_cast<int32_t>(os[k]);
    }
    return true;
}

Dispatch copy_dispatch(const Buffer* from, const Buffer* to, const PushCopy& p)
{
    return dispatch_of("strided_copy", {from, to}, p, p.count);
}

class ElementMovesKernel final : public GpuKernel {
public:
    explicit ElementMovesKernel(std::shared_ptr<Device> device) : device_(std::move(device)) {}

    // Buffers for the inputs the copies read and for every output, the
    // fills' values, and the dispatches; false when a move does not fit.
    bool build(const ElementMoves& moves, const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
    {
        const auto words_of = [](const TensorDesc& d) { return shape_numel(d.shape) * int64_t(dtype_size(d.dtype) / 4); };
        const auto f32 = [](const TensorDesc& d) { return d.dtype == DType::F32; };
        all_f32_ = std::all_of(in.begin(), in.end(), f32) && std::all_of(out.begin(), out.end(), f32);
        inputs_.resize(in.size());
        for (const TensorDesc& d : out) outputs_.push_back(device_->buffer(size_t(words_of(d)) * 4));
        for (const ConstantFill& f : moves.fills) {
            const int64_t words = int64_t(f.value.size() / 4);
            values_.push_back(device_->buffer(f.value.size()));
            std::memcpy(values_.back()->data(), f.value.data(), f.value.size());
            fills_.push_back(f.value);
            StridedCopy c{0, f.output, 0, f.offset, f.dims, std::vector<int64_t>(f.dims.size(), 0), f.strides};
            PushCopy p;
            if (!push_of(in_words(c, words), words, words_of(out[f.output]), p)) return false;
            if (p.count) steps_.push_back(copy_dispatch(values_.back().get(), outputs_[f.output].get(), p));
        }
        for (const StridedCopy& c : moves.copies) {
            const int64_t words = int64_t(dtype_size(in[c.input].dtype) / 4);
            PushCopy p;
            if (!push_of(in_words(c, words), words_of(in[c.input]), words_of(out[c.output]), p)) return false;
            if (!p.count) continue;
            if (!inputs_[c.input]) inputs_[c.input] = device_->buffer(size_t(words_of(in[c.input])) * 4);
            steps_.push_back(copy_dispatch(inputs_[c.input].get(), outputs_[c.output].get(), p));
        }
        for (size_t i = 0; i < inputs_.size(); ++i)
            if (inputs_[i]) input_buffer(i, inputs_[i].get());
        for (size_t o = 0; o < outputs_.size(); ++o) output_buffer(o, outputs_[o].get());
        return true;
    }

    void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) override
    {
        upload_inputs(in);
        last_ms_ = device_->run(steps_);
        download_outputs(out);
    }
    // Float32 tensors only: every element a float16 half, the fills' values too.
    bool store_fp16() override
    {
        if (!all_f32_) return false;
        for (Dispatch& d : steps_) d.shader = "strided_copy_fp16";
        for (size_t k = 0; k < fills_.size(); ++k) {
            Tensor values({int64_t(fills_[k].size() / 4)}, DType::F32);
            std::memcpy(values.raw(), fills_[k].data(), fills_[k].size());
            upload_fp16(values, *values_[k]);
        }
        return fp16_ = true;
    }

private:
    std::shared_ptr<Device> device_;
    bool all_f32_ = false;
    std::vector<std::vector<uint8_t>> fills_; // each fill's values, as the layer gave them
    std::vector<std::unique_ptr<Buffer>> inputs_, outputs_, values_;
    std::vector<Dispatch> steps_;
};

} // namespace

std::unique_ptr<DeviceKernel> make_element_moves_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                        const std::vector<TensorDesc>& in,
                                                        const std::vector<TensorDesc>& out)
{
    for (const auto* side : {&in, &out})
        for (const TensorDesc& d : *side)
            if (dtype_holds_objects(d.dtype) || dtype_size(d.dtype) % 4 != 0 || d.layout != Layout::Plain) return nullptr;
    ElementMoves moves;
    if (!element_moves_of(*l.op, in, out, moves)) return nullptr;
    auto kernel = std::make_unique<ElementMovesKernel>(device);
    return kernel->build(moves, in, out) ? std::move(kernel) : nullptr;
}

} // namespace kestrel::vulkan
