// Per-channel maps y = x * s[c] + b[c], or PReLU's x < 0 ? x * s[c] : x (the
// channel is the outermost axis for ranks 2-4 and each element for rank 1,
// ncnn's c / h / w), float32, in place. Four ncnn layers are this one op:
//   Scale      0=scale_data_size, 1=bias_term. Weights, raw fp32: scale
//              [scale_data_size], then bias if bias_term. 0=-233: the scales
//              come from a second input instead (one value per channel, any
//              shape; no weights): ncnn loads no bias then and would read a
//              missing one, so bias_term with -233 is refused.
//   BatchNorm  0=channels, 1=eps (0). Weights, raw fp32 [channels] each:
//              slope, mean, var, bias. As ncnn, at load: r = sqrtf(var + eps)
//              (0 replaced by 1e-4), s = slope / r, b = bias - slope * mean / r.
//   Bias       0=bias_data_size; weights raw fp32 bias: s = 1, b = bias. As
//              ncnn, ranks 1 and 2 are one channel (ncnn's c is 1 there).
//   PReLU      0=num_slope; weights raw fp32 slope: one shared, or one per
//              channel.
#include <cmath>

#include "ops/common/op_util.h"
#include "ops/norm/channel_affine_plan.h"

namespace kestrel {

namespace {

constexpr int kFromInput = -233;

enum class Kind { Scale, BatchNorm, Bias, PReLU };

class ChannelAffine : public Op {
public:
    explicit ChannelAffine(Kind kind) : kind_(kind), batch_norm_(kind == Kind::BatchNorm) {}

    void load_param(const ParamDict& pd) override
    {
        if (kind_ == Kind::Bias || kind_ == Kind::PReLU) {
            channels_ = positive_param(pd, 0, 0, kind_ == Kind::Bias ? "bias_data_size" : "num_slope");
            has_bias_ = kind_ == Kind::Bias;
            return;
        }
        if (batch_norm_) {
            channels_ = positive_param(pd, 0, 0, "channels");
            eps_ = pd.get_float(1, 0.f);
            has_bias_ = true;
            return;
        }
        channels_ = pd.get_int(0, 0);
        const int bias_term = pd.get_int(1, 0);
        check(bias_term == 0 || bias_term == 1, "bias_term (param 1) must be 0 or 1, got ", bias_term);
        has_bias_ = bias_term == 1;
        check(channels_ > 0 || channels_ == kFromInput,
              "scale_data_size (param 0) must be > 0 or -233 (scale from input 1), got ", channels_);
        check(!(channels_ == kFromInput && has_bias_),
              "bias_term (param 1) is not supported with scale_data_size -233 (ncnn loads no bias then)");
    }

    void load_model(WeightReader& wr) override
    {
        if (channels_ == kFromInput) return;
        if (kind_ == Kind::Bias) {
            bias_ = f32_weight(wr, "bias");
            return;
        }
        if (!batch_norm_) {
            scale_ = f32_weight(wr, kind_ == Kind::PReLU ? "slope" : "scale");
            if (has_bias_) bias_ = f32_weight(wr, "bias");
            return;
        }
        const Tensor slope = f32_weight(wr, "slope"), mean = f32_weight(wr, "mean"), var = f32_weight(wr, "var"),
                     bias = f32_weight(wr, "bias");
        scale_ = Tensor({channels_}, DType::F32);
        bias_ = Tensor({channels_}, DType::F32);
        for (int64_t i = 0; i < channels_; ++i) {
            const float sl = slope.data<float>()[i];
            float sqrt_var = std::sqrt(var.data<float>()[i] + eps_);
            if (sqrt_var == 0.f) sqrt_var = 0.0001f; // ncnn's guard against dividing by zero
            bias_.data<float>()[i] = bias.data<float>()[i] - sl * mean.data<float>()[i] / sqrt_var;
            scale_.data<float>()[i] = sl / sqrt_var;
        }
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const size_t n = channels_ == kFromInput ? 2 : 1;
        expect_input_count(in, n, n);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        ncnn_dims(s); // rank 1-4
        if (kind_ == Kind::Bias || kind_ == Kind::PReLU) {
            const int64_t c = channels_of(s);
            check(channels_ == 1 || channels_ == c, "input ", shape_str(s), " has ", c,
                  kind_ == Kind::Bias ? " channels, bias_data_size (param 0) is " : " channels, num_slope (param 0) is ",
                  channels_);
        } else if (channels_ == kFromInput) {
            expect_f32(in[1], "scale input");
            check(shape_numel(in[1].shape) == s[0], "scale input ", shape_str(in[1].shape), " must hold ", s[0],
                  " values (one per channel of ", shape_str(s), ")");
        } else {
            check(s[0] == channels_, "input ", shape_str(s), " has ", s[0], s.size() == 1 ? " elements" : " channels",
                  batch_norm_ ? ", channels (param 0) is " : ", scale_data_size (param 0) is ", channels_);
        }
        out[0] = TensorDesc(s, DType::F32);
    }

    bool supports_inplace() const override { return true; }

    int64_t weight_bytes() const override
    {
        if (batch_norm_) return channels_ * 4 * 4; // as stored: slope, mean, var, bias
        return static_cast<int64_t>((scale_.defined() ? scale_.nbytes() : 0) + (bias_.defined() ? bias_.nbytes() : 0));
    }

    // Scratch 0, with scales from an input: a copy of them.
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        if (channels_ == kFromInput) ctx.request_scratch(in[0].shape[0] * 4);
        return nullptr;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t channels = channels_of(in[0].shape());
        const int64_t inner = channels == 0 ? 0 : in[0].numel() / channels;
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();
        // Scales from an input are copied first: that input may share storage
        // with input 0 (views of one blob), which is overwritten when in place.
        const float* s = scale_.defined() ? scale_.data<float>() : nullptr;
        if (channels_ == kFromInput) {
            float* copied = ctx.scratch_as<float>(0);
            std::copy_n(in[1].data<float>(), channels, copied);
            s = copied;
        }
        const float* b = has_bias_ ? bias_.data<float>() : nullptr;
        const bool shared = channels_ == 1; // one weight for every channel
        ctx.parallel_for(channels, [&](int64_t begin, int64_t end) {
            for (int64_t q = begin; q < end; ++q) {
                const int64_t w = shared ? 0 : q;
                const float* xq = x + q * inner;
                float* yq = y + q * inner;
                if (kind_ == Kind::PReLU) {
                    const float slope = s[w];
                    for (int64_t i = 0; i < inner; ++i) yq[i] = xq[i] < 0.f ? xq[i] * slope : xq[i];
                } else if (kind_ == Kind::Bias) {
                    const float bq = b[w];
                    for (int64_t i = 0; i < inner; ++i) yq[i] = xq[i] + bq;
                } else if (b) {
                    const float sq = s[q];
                    const float bq = b[q];
                    for (int64_t i = 0; i < inner; ++i) yq[i] = xq[i] * sq + bq;
                } else {
                    const float sq = s[q];
                    for (int64_t i = 0; i < inner; ++i) yq[i] = xq[i] * sq;
                }
            }
        });
    }

    bool plan(const Shape& x, ChannelAffinePlan& p) const
    {
        if (channels_ == kFromInput) return false;
        p.form = kind_ == Kind::PReLU ? ChannelAffinePlan::Form::PReLU
                 : kind_ == Kind::Bias ? ChannelAffinePlan::Form::Bias
                                       : ChannelAffinePlan::Form::Affine;
        p.scale = scale_;
        p.bias = has_bias_ ? bias_ : Tensor();
        p.channels = channels_of(x);
        p.inner = p.channels == 0 ? 0 : shape_numel(x) / p.channels;
        return true;
    }

private:
    // The channel count of x: its outermost dim (rank 1: each element), or,
    // for Bias at ranks 1 and 2, one.
    int64_t channels_of(const Shape& x) const { return kind_ == Kind::Bias && x.size() <= 2 ? 1 : x[0]; }

    Tensor f32_weight(WeightReader& wr, const char* what) const
    {
        Tensor t = wr.load(channels_, WeightEncoding::Raw);
        check(t.dtype() == DType::F32, what, " must be float32");
        return t;
    }

    Kind kind_;
    bool batch_norm_;
    int64_t channels_ = 0;
    float eps_ = 0.f;
    bool has_bias_ = false;
    Tensor scale_, bias_;
};

} // namespace

bool channel_affine_plan(const Op& op, const Shape& in, ChannelAffinePlan& plan)
{
    const auto* affine = dynamic_cast<const ChannelAffine*>(&op);
    return affine != nullptr && affine->plan(in, plan);
}

std::unique_ptr<Op> make_scale() { return std::make_unique<ChannelAffine>(Kind::Scale); }
std::unique_ptr<Op> make_batch_norm() { return std::make_unique<ChannelAffine>(Kind::BatchNorm); }
std::unique_ptr<Op> make_bias() { return std::make_unique<ChannelAffine>(Kind::Bias); }
std::unique_ptr<Op> make_prelu() { return std::make_unique<ChannelAffine>(Kind::PReLU); }

} // namespace kestrel
