// BatchNorm (ncnn params): 0=channels, 1=eps (0). Weights, raw fp32
// [channels] each: slope, mean, var, bias.
//
// As ncnn, at load: s = sqrtf(var + eps) (0 replaced by 1e-4),
// b = slope / s, a = bias - slope * mean / s; then y = b * x + a per channel.
// The channel is the outermost axis for ranks 2-4 (ncnn h for 2-D, c for
// 3-D/4-D) and each element for rank 1 (ncnn w).
#include <cmath>

#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class BatchNorm : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        channels_ = positive_param(pd, 0, 0, "channels");
        eps_ = pd.get_float(1, 0.f);
    }

    void load_model(WeightReader& wr) override
    {
        const Tensor slope = wr.load(channels_, WeightEncoding::Raw);
        const Tensor mean = wr.load(channels_, WeightEncoding::Raw);
        const Tensor var = wr.load(channels_, WeightEncoding::Raw);
        const Tensor bias = wr.load(channels_, WeightEncoding::Raw);
        for (const Tensor* t : {&slope, &mean, &var, &bias}) check(t->dtype() == DType::F32, "weights must be float32");
        a_ = Tensor({channels_}, DType::F32);
        b_ = Tensor({channels_}, DType::F32);
        for (int64_t i = 0; i < channels_; ++i) {
            const float sl = slope.data<float>()[i];
            float sqrt_var = std::sqrt(var.data<float>()[i] + eps_);
            if (sqrt_var == 0.f) sqrt_var = 0.0001f; // ncnn's guard against dividing by zero
            a_.data<float>()[i] = bias.data<float>()[i] - sl * mean.data<float>()[i] / sqrt_var;
            b_.data<float>()[i] = sl / sqrt_var;
        }
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        ncnn_dims(s); // rank 1-4
        check(s[0] == channels_, "input ", shape_str(s), " has ", s[0], s.size() == 1 ? " elements" : " channels",
              ", channels (param 0) is ", channels_);
        out[0] = TensorDesc();
        out[0].shape = s;
    }

    bool supports_inplace() const override { return true; }
    int64_t weight_bytes() const override { return channels_ * 4 * 4; }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t inner = in[0].numel() / channels_;
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();
        const float* a = a_.data<float>();
        const float* b = b_.data<float>();
        ctx.parallel_for(channels_, [&](int64_t begin, int64_t end) {
            for (int64_t q = begin; q < end; ++q) {
                const float aq = a[q], bq = b[q];
                const float* xq = x + q * inner;
                float* yq = y + q * inner;
                for (int64_t i = 0; i < inner; ++i) yq[i] = bq * xq[i] + aq;
            }
        });
    }

private:
    int64_t channels_ = 0;
    float eps_ = 0.f;
    Tensor a_, b_;
};

} // namespace

std::unique_ptr<Op> make_batch_norm() { return std::make_unique<BatchNorm>(); }

} // namespace kestrel
