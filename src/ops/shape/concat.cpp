// Concat: joins N inputs along 0=axis (default 0; outermost first, negative
// from the end), for any rank and dtype; inputs share rank, dtype and every
// other dim, and may be empty. ncnn's layer on ranks 1-4 is the same thing (its
// axes count outermost first over the batch-less blob, as ours do); the ONNX
// importer writes it for ONNX's Concat of any rank. The kernel copies bytes.
#include <algorithm>
#include <cstring>

#include "ops/common/element_moves.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

// Checks the inputs and gives the output along a normalized axis.
TensorDesc concat_desc(const std::vector<TensorDesc>& in, int axis)
{
    check(!in.empty(), "expects at least 1 input, got 0");
    const Shape& s0 = in[0].shape;
    const size_t a = static_cast<size_t>(axis);
    Shape s = s0;
    s[a] = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        check(in[i].dtype == in[0].dtype, "input ", i, " is ", dtype_name(in[i].dtype), " but input 0 is ",
              dtype_name(in[0].dtype));
        check(in[i].shape.size() == s0.size(), "input ", i, " ", shape_str(in[i].shape),
              " has another rank than input 0 ", shape_str(s0));
        for (size_t k = 0; k < s0.size(); ++k)
            check(k == a || in[i].shape[k] == s0[k], "input ", i, " ", shape_str(in[i].shape),
                  " differs from input 0 ", shape_str(s0), " outside the concat axis ", axis);
        s[a] += in[i].shape[a];
    }
    return TensorDesc(s, in[0].dtype);
}

// Fills the output: per outer index, each input's slice in turn. The output's
// bytes are cut into even ranges for the threads (a channel concat has one
// outer index: its copies would otherwise run on one thread), each range
// copied from the inputs it covers.
void concat_copy(const std::vector<Tensor>& in, int axis, Tensor& out, const ExecContext& ctx)
{
    const Shape& s0 = in[0].shape();
    const size_t a = static_cast<size_t>(axis);
    const int64_t outer = nd::dims_product(s0, 0, a);
    const size_t es = dtype_size(in[0].dtype());
    size_t out_chunk = 0; // bytes per outer index
    for (const Tensor& t : in) out_chunk += static_cast<size_t>(nd::dims_product(t.shape(), a, s0.size())) * es;
    const size_t total = out_chunk * static_cast<size_t>(outer);
    if (total == 0) return;
    uint8_t* dst = static_cast<uint8_t*>(out.raw());
    if (outer == 1) { // nothing to do when every input was written in place
        bool in_place = true;
        size_t at = 0;
        for (const Tensor& t : in) {
            in_place = in_place && t.raw() == dst + at;
            at += t.nbytes();
        }
        if (in_place) return;
    }
    // Output bytes [b0, b1): within each outer index's slice, the parts of the inputs it spans.
    const auto copy_range = [&](size_t b0, size_t b1) {
        while (b0 < b1) {
            const size_t o = b0 / out_chunk, slice_end = std::min(b1, (o + 1) * out_chunk);
            size_t at = o * out_chunk; // where the current input's slice starts in the output
            for (const Tensor& t : in) {
                const size_t n = static_cast<size_t>(nd::dims_product(t.shape(), a, s0.size())) * es;
                const size_t lo = std::max(b0, at), hi = std::min(slice_end, at + n);
                const uint8_t* src = static_cast<const uint8_t*>(t.raw()) + o * n + (lo - at);
                if (lo < hi && src != dst + lo) std::memcpy(dst + lo, src, hi - lo); // else written in place
                at += n;
            }
            b0 = slice_end;
        }
    };
    constexpr size_t kPart = 64 * 1024; // bytes per task; smaller copies stay on one thread
    const int64_t parts = static_cast<int64_t>((total + kPart - 1) / kPart);
    if (parts == 1) return copy_range(0, total);
    ctx.parallel_for(parts, [&](int64_t p0, int64_t p1) {
        copy_range(total * static_cast<size_t>(p0) / static_cast<size_t>(parts),
                   total * static_cast<size_t>(p1) / static_cast<size_t>(parts));
    });
}

struct ConcatState : OpState {
    int axis = 0;
};

class Concat : public Op, public MovesElements {
public:
    void load_param(const ParamDict& pd) override { axis_ = pd.get_int(0, 0); }
    bool int8_passthrough(const std::vector<TensorDesc>&) const override { return true; } // copies

    // A float concat of channels ([..., C, H, W] on C) takes channel blocks
    // when every input but the last fills whole blocks: then the stored blobs
    // join along the block axis by the same copies (the last input's padding
    // lanes become the output's).
    BlockedLayouts blocked_layouts(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, bool) const override
    {
        const int64_t rank = static_cast<int64_t>(out[0].shape.size());
        if (rank < 3 || out[0].dtype != DType::F32 || nd::normalize_axis(axis_, rank, "axis (param 0)") != rank - 3)
            return {};
        for (size_t i = 0; i + 1 < in.size(); ++i)
            if (in[i].shape[static_cast<size_t>(rank - 3)] % channel_block() != 0) return {};
        return BlockedLayouts{std::vector<int>(in.size(), 0), {0}};
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        check(!in.empty(), "expects at least 1 input, got 0");
        expect_output_count(out, 1);
        out[0] = concat_desc(in, nd::normalize_axis(axis_, static_cast<int64_t>(in[0].shape.size()), "axis (param 0)"));
    }

    // One outer index (a channel concat of one sample): each input's bytes
    // follow the previous ones'.
    std::vector<int64_t> input_offsets_in_output(const std::vector<TensorDesc>& in,
                                                 const std::vector<TensorDesc>& out) const override
    {
        const Shape& s = out[0].shape;
        const size_t axis = static_cast<size_t>(nd::normalize_axis(axis_, static_cast<int64_t>(s.size()), "axis (param 0)"));
        if (nd::dims_product(s, 0, axis) != 1) return {};
        std::vector<int64_t> offsets;
        int64_t at = 0;
        for (const TensorDesc& d : in) {
            offsets.push_back(at);
            at += shape_numel(stored_shape(d.shape, d.layout)) * static_cast<int64_t>(dtype_size(d.dtype));
        }
        return offsets;
    }

    // The axis counted on the logical rank: blocked tensors have one axis more (the lanes).
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext&) const override
    {
        auto st = std::make_unique<ConcatState>();
        st->axis = static_cast<int>(nd::normalize_axis(axis_, static_cast<int64_t>(in[0].shape.size()), "axis (param 0)"));
        return st;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int axis = ctx.state() ? ctx.state_as<ConcatState>().axis
                                     : static_cast<int>(nd::normalize_axis(axis_, in[0].rank(), "axis (param 0)"));
        concat_copy(in, axis, out[0], ctx);
    }

    // Per input, its slice of each outer index.
    bool element_moves(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                       ElementMoves& moves) const override
    {
        const Shape& s = out[0].shape;
        const size_t axis = static_cast<size_t>(nd::normalize_axis(axis_, static_cast<int64_t>(s.size()), "axis (param 0)"));
        const int64_t outer = nd::dims_product(s, 0, axis), out_chunk = nd::dims_product(s, axis, s.size());
        int64_t at = 0;
        for (size_t i = 0; i < in.size(); ++i) {
            const int64_t chunk = nd::dims_product(in[i].shape, axis, s.size());
            moves.copies.push_back(StridedCopy{i, 0, 0, at, {outer, chunk}, {chunk, 1}, {out_chunk, 1}});
            at += chunk;
        }
        return true;
    }

private:
    int axis_ = 0;
};

} // namespace

std::unique_ptr<Op> make_concat() { return std::make_unique<Concat>(); }

} // namespace kestrel
