// InnerProduct (ncnn params): y = W x + b with a fused activation. Input is
// flattened to num_input, except a 2-D (h, num_input) input, done row by row.
#include "ops/activation.h"
#include "ops/builtin_ops.h"
#include "ops/op_util.h"

namespace kestrel {

namespace {

class InnerProduct : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        num_output_ = positive_param(pd, 0, 0, "num_output");
        bias_term_ = pd.get_int(1, 0) != 0;
        weight_data_size_ = positive_param(pd, 2, 0, "weight_data_size");
        check(pd.get_int(8, 0) == 0, "int8 inner product (param 8) is not supported yet");
        activation_ = Activation::from_ncnn(pd.get_int(9, 0), pd.get_floats(10));
        check(weight_data_size_ % num_output_ == 0, "weight_data_size ", weight_data_size_,
              " is not a multiple of num_output ", num_output_);
        num_input_ = weight_data_size_ / num_output_;
    }

    void load_model(WeightReader& wr) override
    {
        weight_ = wr.load(weight_data_size_, WeightEncoding::Tagged);
        check(weight_.dtype() == DType::F32, "int8 weights need int8_scale_term (param 8)");
        bias_ = bias_term_ ? wr.load(num_output_, WeightEncoding::Raw) : Tensor();
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        if (s.size() == 2 && s[1] == num_input_) {
            out[0] = TensorDesc{{s[0], num_output_}, DType::F32};
            return;
        }
        check(shape_numel(s) == num_input_, "expects ", num_input_, " input values (from weight_data_size), got ",
              shape_numel(s));
        out[0] = TensorDesc{{num_output_}, DType::F32};
    }

    int64_t macs(const std::vector<TensorDesc>&, const std::vector<TensorDesc>& out) const override
    {
        return shape_numel(out[0].shape) * num_input_;
    }

    int64_t weight_bytes() const override
    {
        return static_cast<int64_t>(weight_.nbytes() + (bias_.defined() ? bias_.nbytes() : 0));
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t rows = in[0].numel() / num_input_;
        const float* x = in[0].data<float>();
        const float* w = weight_.data<float>();
        float* y = out[0].data<float>();
        ctx.parallel_for(rows * num_output_, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                const int64_t r = i / num_output_, o = i % num_output_;
                const float* xr = x + r * num_input_;
                const float* wr = w + o * num_input_;
                float sum = bias_.defined() ? bias_.data<float>()[o] : 0.f;
                for (int64_t k = 0; k < num_input_; ++k) sum += wr[k] * xr[k];
                y[i] = activation_(sum);
            }
        });
    }

private:
    int64_t num_output_ = 0, num_input_ = 0;
    int weight_data_size_ = 0;
    bool bias_term_ = false;
    Activation activation_;
    Tensor weight_, bias_;
};

} // namespace

std::unique_ptr<Op> make_inner_product() { return std::make_unique<InnerProduct>(); }

} // namespace kestrel
