// ReverseSequence (ONNX): input 0 data (any dtype, rank >= 2), input 1
// sequence_lens (1-D integers, one per batch entry, each in [0, time size]).
// For each batch entry b the first sequence_lens[b] steps along the time axis
// are reversed; the rest are copied. Params 0=batch_axis (default 1),
// 1=time_axis (default 0); each is 0 or 1 and they differ.
#include <cstring>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class ReverseSequence : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        batch_axis_ = pd.get_int(0, 1);
        time_axis_ = pd.get_int(1, 0);
        check((batch_axis_ == 0 || batch_axis_ == 1) && (time_axis_ == 0 || time_axis_ == 1) && batch_axis_ != time_axis_,
              "batch_axis (param 0) and time_axis (param 1) must be 0 and 1 in some order, got ", batch_axis_, " and ",
              time_axis_);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        const Shape& x = in[0].shape;
        check(x.size() >= 2, "input 0 must have rank >= 2, got shape ", shape_str(x));
        check(nd::is_integer_dtype(in[1].dtype), "sequence_lens (input 1) must be an integer tensor, got ",
              dtype_name(in[1].dtype));
        const Shape lens_shape = {x[static_cast<size_t>(batch_axis_)]};
        check(in[1].shape == lens_shape, "sequence_lens (input 1) must have shape ", shape_str(lens_shape), ", got ",
              shape_str(in[1].shape));
        out[0] = TensorDesc(x, in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape& x = in[0].shape();
        const int64_t steps = x[static_cast<size_t>(time_axis_)];
        const std::vector<int64_t> lens = nd::int_values(in[1], "sequence_lens (input 1)");
        // Axes 0 and 1 are batch and time in some order; the rest is one contiguous block per (0, 1) pair.
        const size_t block = static_cast<size_t>(nd::dims_product(x, 2, x.size())) * dtype_size(in[0].dtype());
        const auto* src = static_cast<const uint8_t*>(in[0].raw());
        auto* dst = static_cast<uint8_t*>(out[0].raw());
        for (size_t b = 0; b < lens.size(); ++b) {
            const int64_t len = lens[b];
            check(len >= 0 && len <= steps, "sequence_lens[", b, "] = ", len, " is outside [0, ", steps, "]");
            for (int64_t t = 0; t < steps; ++t) {
                const int64_t from = t < len ? len - 1 - t : t;
                std::memcpy(dst + offset(b, t, x) * block, src + offset(b, from, x) * block, block);
            }
        }
    }

private:
    // Index of the (batch b, step t) block among the blocks of axes 0 and 1.
    size_t offset(size_t b, int64_t t, const Shape& x) const
    {
        const size_t step = static_cast<size_t>(t);
        return batch_axis_ == 0 ? b * static_cast<size_t>(x[1]) + step : step * static_cast<size_t>(x[1]) + b;
    }

    int batch_axis_ = 1, time_axis_ = 0;
};

} // namespace

std::unique_ptr<Op> make_reverse_sequence() { return std::make_unique<ReverseSequence>(); }

} // namespace kestrel
