// Slice (ncnn's name for a split): cuts input 0 (any rank and dtype) along
// 1=axis (default 0; outermost first, negative from the end) into as many
// outputs as the layer has tops. The sizes come as
//   0=slices   ncnn: sizes per output; -233 = (what remains) / (outputs remaining)
//   2=indices  ncnn: end positions of outputs 0..N-2 (negative from the end);
//              the last output takes the rest. Used instead of slices when present.
//   input 1    neither 0 nor 2 (ONNX's Split): 1-D integer sizes summing to the
//              axis size; without input 1, chunks of ceil(dim / outputs) with a
//              shorter last one (opset 18; equal when the dim divides).
//              20=dynamic=1 accepts sizes known only at run time.
// ncnn ignores entries beyond the number of outputs, and so do we; an ncnn
// piece of size <= 0 or one running past the end is an error (ncnn fails or
// reads garbage). Outputs are copies; the kernel copies bytes.
#include <algorithm>
#include <cstring>

#include "ops/common/element_moves.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

constexpr int kRemainder = -233;

class Slice : public Op, public MovesElements {
public:
    void load_param(const ParamDict& pd) override
    {
        slices_ = pd.get_ints(0);
        axis_ = pd.get_int(1, 0);
        indices_ = pd.get_ints(2);
        sizes_input_ = slices_.empty() && indices_.empty();
        dynamic_ = pd.get_int(20, 0) != 0;
        if (indices_.empty())
            for (int s : slices_)
                check(s > 0 || s == kRemainder, "slices (param 0) must be > 0 or -233, got ", s);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, sizes_input_ ? 2 : 1);
        check(!out.empty(), "expects at least 1 output");
        const Shape& s = in[0].shape;
        const int axis = nd::normalize_axis(axis_, static_cast<int64_t>(s.size()), "axis (param 1)");
        std::vector<int64_t> sizes;
        if (in.size() == 2 && !in[1].value.defined() && dynamic_)
            sizes = even_sizes(s[axis], out.size()); // a placeholder: forward() gives the real sizes
        else
            sizes = piece_sizes(s[axis], out.size(), in.size() == 2 ? &nd::known_value(in[1], "split (input 1)") : nullptr);
        for (size_t i = 0; i < out.size(); ++i) {
            Shape piece = s;
            piece[axis] = sizes[i];
            out[i] = TensorDesc(piece, in[0].dtype);
        }
    }

    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& s = in[0].shape();
        const int axis = nd::normalize_axis(axis_, in[0].rank(), "axis (param 1)");
        const std::vector<int64_t> sizes = piece_sizes(s[axis], out.size(), in.size() == 2 ? &in[1] : nullptr);
        const size_t esize = dtype_size(in[0].dtype());
        const int64_t outer = nd::dims_product(s, 0, static_cast<size_t>(axis));
        const int64_t inner = nd::dims_product(s, static_cast<size_t>(axis) + 1, s.size());
        const size_t in_chunk = static_cast<size_t>(s[axis] * inner) * esize;
        std::vector<size_t> chunk(out.size()), start(out.size());
        size_t at = 0;
        for (size_t i = 0; i < out.size(); ++i) {
            Shape piece = s;
            piece[axis] = sizes[i];
            if (out[i].shape() != piece) out[i] = Tensor(piece, in[0].dtype()); // dynamic sizes only
            chunk[i] = static_cast<size_t>(sizes[i] * inner) * esize;
            start[i] = at;
            at += chunk[i];
        }
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o)
                for (size_t i = 0; i < out.size(); ++i)
                    if (chunk[i])
                        std::memcpy(static_cast<uint8_t*>(out[i].raw()) + static_cast<size_t>(o) * chunk[i],
                                    src + static_cast<size_t>(o) * in_chunk + start[i], chunk[i]);
        });
    }

    // Per output, its slice of each outer index.
    bool element_moves(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                       ElementMoves& moves) const override
    {
        if (in.size() == 2 && !in[1].value.defined()) return false;
        const Shape& s = in[0].shape;
        const size_t axis = static_cast<size_t>(nd::normalize_axis(axis_, static_cast<int64_t>(s.size()), "axis (param 1)"));
        const std::vector<int64_t> sizes = piece_sizes(s[axis], out.size(), in.size() == 2 ? &in[1].value : nullptr);
        const int64_t outer = nd::dims_product(s, 0, axis), inner = nd::dims_product(s, axis + 1, s.size());
        int64_t at = 0;
        for (size_t i = 0; i < out.size(); ++i) {
            const int64_t chunk = sizes[i] * inner;
            moves.copies.push_back(StridedCopy{0, i, at, 0, {outer, chunk}, {s[axis] * inner, 1}, {chunk, 1}});
            at += chunk;
        }
        return true;
    }

private:
    // ONNX's default: chunks of ceil(dim / n), the last one shorter.
    static std::vector<int64_t> even_sizes(int64_t dim, size_t n)
    {
        const int64_t chunk = (dim + static_cast<int64_t>(n) - 1) / static_cast<int64_t>(n);
        std::vector<int64_t> sizes;
        int64_t left = dim;
        for (size_t i = 0; i < n; ++i) {
            sizes.push_back(std::min(chunk, left));
            left -= sizes.back();
        }
        return sizes;
    }

    // Sizes of the n pieces of an axis of length `size`: ncnn's rules, or the
    // ONNX sizes input (`split`, null or empty: even chunks).
    std::vector<int64_t> piece_sizes(int64_t size, size_t n, const Tensor* split) const
    {
        if (sizes_input_) return onnx_sizes(size, n, split);
        if (!indices_.empty())
            check(indices_.size() >= n - 1, "indices (param 2) has ", indices_.size(), " entries, ", n,
                  " outputs need ", n - 1);
        else
            check(slices_.size() >= n, "slices (param 0) has ", slices_.size(), " entries for ", n, " outputs");
        std::vector<int64_t> sizes(n);
        int64_t q = 0;
        for (size_t i = 0; i < n; ++i) {
            int64_t piece;
            if (!indices_.empty()) {
                if (i == n - 1) {
                    piece = size - q;
                } else {
                    const int64_t end = indices_[i] < 0 ? size + indices_[i] : indices_[i];
                    check(end <= size, "index ", indices_[i], " (param 2) is past the end of an axis of size ", size);
                    piece = end - q;
                }
            } else {
                piece = slices_[i] == kRemainder ? (size - q) / static_cast<int64_t>(n - i) : slices_[i];
            }
            check(piece > 0, "output ", i, " would be empty or negative (", piece, ") slicing an axis of size ", size);
            check(q + piece <= size, "slices run past the end of an axis of size ", size, " at output ", i);
            sizes[i] = piece;
            q += piece;
        }
        return sizes;
    }

    static std::vector<int64_t> onnx_sizes(int64_t dim, size_t n, const Tensor* split)
    {
        if (split == nullptr || split->numel() == 0) return even_sizes(dim, n);
        std::vector<int64_t> sizes = nd::int_values(*split, "split (input 1)");
        check(sizes.size() == n, "split (input 1) has ", sizes.size(), " sizes for ", n, " outputs");
        int64_t total = 0;
        for (int64_t s : sizes) {
            check(s >= 0, "split sizes must be >= 0, got ", shape_str(sizes));
            total += s;
        }
        check(total == dim, "split sizes ", shape_str(sizes), " sum to ", total, " but the axis has size ", dim);
        return sizes;
    }

    std::vector<int> slices_, indices_;
    int axis_ = 0;
    bool sizes_input_ = false, dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_slice() { return std::make_unique<Slice>(); }

} // namespace kestrel
