// Dequantize: integers to float, in ncnn's form or ONNX's DequantizeLinear (20=1).
//
// ncnn's form: I32 -> F32, y = x * scale + bias. 0=scale_data_size (1),
//   1=bias_data_size (0); weights scale, bias, each one value or one per row
//   (2-D) / channel (3-D, 4-D).
// ONNX's form (20=1): y = (x - zero_point) * scale, y of scale's dtype.
//   Inputs x (integer), scale (one value or per-axis), optional zero_point
//   (x's dtype). 21=axis (default 1) of a per-axis scale.
#include "kernels/int8_output.h"
#include "ops/quant/channel_values.h"

namespace kestrel {

namespace {

class Dequantize : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        onnx_ = onnx_form(pd, "DequantizeLinear");
        if (onnx_) {
            axis_ = pd.get_int(21, 1);
            return;
        }
        scale_.read_size(pd, 0, "scale_data_size", false);
        bias_.read_size(pd, 1, "bias_data_size", true);
    }
    void load_model(WeightReader& wr) override
    {
        if (onnx_) return;
        scale_.load(wr);
        bias_.load(wr);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        if (!onnx_) return infer_ncnn_rowwise(in, out, DType::I32, DType::F32, {&scale_, &bias_});
        expect_input_count(in, 2, 3);
        expect_output_count(out, 1);
        check(nd::is_integer_dtype(in[0].dtype), "x (input 0) must be an integer tensor, got ", dtype_name(in[0].dtype));
        check_onnx_scale_and_zero_point(in, axis_);
        if (onnx_input_present(in, 2))
            check(in[2].dtype == in[0].dtype, "zero_point (input 2) must have x's dtype ", dtype_name(in[0].dtype),
                  ", got ", dtype_name(in[2].dtype));
        out[0] = TensorDesc(in[0].shape, in[1].dtype);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        if (onnx_) return forward_onnx(in, out, ctx);
        const int32_t* x = in[0].data<int32_t>();
        float* y = out[0].data<float>();
        for_each_block(ncnn_row_groups(in[0].shape(), std::max(scale_.size(), bias_.size())), in[0].numel(), ctx,
                       [&](int64_t c, int64_t begin, int64_t end) {
                           const float scale = scale_.at(c), bias = bias_.at(c);
                           for (int64_t j = begin; j < end; ++j) y[j] = static_cast<float>(x[j]) * scale + bias;
                       });
    }

    int64_t weight_bytes() const override { return scale_.bytes() + bias_.bytes(); }

private:
    void forward_onnx(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const
    {
        const ChannelGroups g = onnx_axis_groups(in[0].shape(), in[1].shape(), axis_);
        const std::vector<float> scale = values_as_floats(in[1]);
        const std::vector<float> zp =
            onnx_input_present(in, 2) ? values_as_floats(in[2]) : std::vector<float>(scale.size(), 0.f);
        const DType xt = in[0].dtype();
        if ((xt == DType::U8 || xt == DType::I8) && out[0].dtype() == DType::F32) {
            // Floats from bytes: the vector kernel (the same bits).
            const Int8OutputKernel& kern = int8_output_kernel();
            for_each_block(g, in[0].numel(), ctx, [&](int64_t c, int64_t begin, int64_t end) {
                const size_t k = static_cast<size_t>(c);
                kern.dequantize_bytes(static_cast<const uint8_t*>(in[0].raw()) + begin, end - begin, xt == DType::I8,
                                      static_cast<int32_t>(zp[k]), scale[k], out[0].data<float>() + begin);
            });
            return;
        }
        const std::vector<float> x = values_as_floats(in[0]);
        visit_dtype(out[0].dtype(), [&](auto tag) {
            using Y = typename decltype(tag)::type;
            Y* y = out[0].data<Y>();
            for_each_block(g, in[0].numel(), ctx, [&](int64_t c, int64_t begin, int64_t end) {
                const size_t k = static_cast<size_t>(c);
                for (int64_t i = begin; i < end; ++i) y[i] = convert_value<Y>((x[static_cast<size_t>(i)] - zp[k]) * scale[k]);
            });
        });
    }

    bool onnx_ = false;
    NcnnChannelValues scale_, bias_; // ncnn's form
    int axis_ = 1;                   // ONNX's form
};

} // namespace

std::unique_ptr<Op> make_dequantize() { return std::make_unique<Dequantize>(); }

} // namespace kestrel
