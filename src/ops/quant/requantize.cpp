// Requantize (ncnn): I32 -> I8, q = float2int8(act(x * scale_in + bias) * scale_out).
// 0=scale_in_data_size (1) 1=scale_out_data_size (1) 2=bias_data_size (0)
// 3=activation_type (0) 4=activation_params; weights scale_in, scale_out,
// bias, each one value or one per row (2-D) / channel (3-D, 4-D).
#include "ops/activation/activation.h"
#include "ops/quant/channel_values.h"
#include "ops/quant/int8.h"

namespace kestrel {

namespace {

class Requantize : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        scale_in_.read_size(pd, 0, "scale_in_data_size", false);
        scale_out_.read_size(pd, 1, "scale_out_data_size", false);
        bias_.read_size(pd, 2, "bias_data_size", true);
        std::vector<float> act_params = pd.get_floats(4);
        const int act_type = pd.get_int(3, 0);
        // Activation::from_ncnn names params 9/10 in its messages; here they are 3/4.
        check(act_type >= 0 && act_type <= 6, "activation_type (param 3) must be 0..6, got ", act_type);
        const size_t need = act_type == 2 ? 1 : (act_type == 3 || act_type == 6) ? 2 : 0;
        check(act_params.size() >= need, "activation type ", act_type, " needs ", need,
              " params (param 4), got ", act_params.size());
        activation_ = Activation::from_ncnn(act_type, act_params);
    }
    void load_model(WeightReader& wr) override
    {
        scale_in_.load(wr);
        scale_out_.load(wr);
        bias_.load(wr);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        infer_ncnn_rowwise(in, out, DType::I32, DType::I8, {&scale_in_, &scale_out_, &bias_});
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int32_t* x = in[0].data<int32_t>();
        int8_t* y = out[0].data<int8_t>();
        const int64_t values = std::max({scale_in_.size(), scale_out_.size(), bias_.size()});
        for_each_block(ncnn_row_groups(in[0].shape(), values), in[0].numel(), ctx,
                       [&](int64_t c, int64_t begin, int64_t end) {
                           const float si = scale_in_.at(c), so = scale_out_.at(c), b = bias_.at(c);
                           for (int64_t j = begin; j < end; ++j)
                               y[j] = float2int8(activation_(static_cast<float>(x[j]) * si + b) * so);
                       });
    }

    int64_t weight_bytes() const override { return scale_in_.bytes() + scale_out_.bytes() + bias_.bytes(); }

private:
    NcnnChannelValues scale_in_, scale_out_, bias_;
    Activation activation_;
};

} // namespace

std::unique_ptr<Op> make_requantize() { return std::make_unique<Requantize>(); }

} // namespace kestrel
