// Scale (ncnn params): 0=scale_data_size, 1=bias_term. Weights, raw fp32
// [scale_data_size]: scale, then bias if bias_term. y = x * s + b per channel
// (outermost axis for ranks 2-4, each element for rank 1, as BatchNorm).
//
// 0=-233: the scales come from a second input instead (no weights). ncnn loads
// no bias then and would read a missing one, so bias_term with -233 is refused.
// The second input must hold one value per channel (any shape).
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

constexpr int kFromInput = -233;

class Scale : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        size_ = pd.get_int(0, 0);
        const int bias_term = pd.get_int(1, 0);
        check(bias_term == 0 || bias_term == 1, "bias_term (param 1) must be 0 or 1, got ", bias_term);
        bias_term_ = bias_term == 1;
        check(size_ > 0 || size_ == kFromInput, "scale_data_size (param 0) must be > 0 or -233 (scale from input 1), got ",
              size_);
        check(!(size_ == kFromInput && bias_term_),
              "bias_term (param 1) is not supported with scale_data_size -233 (ncnn loads no bias then)");
    }

    void load_model(WeightReader& wr) override
    {
        if (size_ == kFromInput) return;
        scale_ = wr.load(size_, WeightEncoding::Raw);
        check(scale_.dtype() == DType::F32, "scale must be float32");
        if (bias_term_) {
            bias_ = wr.load(size_, WeightEncoding::Raw);
            check(bias_.dtype() == DType::F32, "bias must be float32");
        }
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const size_t n = size_ == kFromInput ? 2 : 1;
        expect_input_count(in, n, n);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        ncnn_dims(s); // rank 1-4
        if (size_ == kFromInput) {
            expect_f32(in[1], "scale input");
            check(shape_numel(in[1].shape) == s[0], "scale input ", shape_str(in[1].shape), " must hold ", s[0],
                  " values (one per channel of ", shape_str(s), ")");
        } else {
            check(s[0] == size_, "input ", shape_str(s), " has ", s[0], s.size() == 1 ? " elements" : " channels",
                  ", scale_data_size (param 0) is ", size_);
        }
        out[0] = TensorDesc();
        out[0].shape = s;
    }

    bool supports_inplace() const override { return true; }
    int64_t weight_bytes() const override
    {
        return static_cast<int64_t>((scale_.defined() ? scale_.nbytes() : 0) + (bias_.defined() ? bias_.nbytes() : 0));
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t channels = in[0].shape()[0];
        const int64_t inner = channels == 0 ? 0 : in[0].numel() / channels;
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();
        // Scales from an input are copied first: that input may share storage
        // with input 0 (views of one blob), which is overwritten when in place.
        std::vector<float> copied;
        if (size_ == kFromInput) copied.assign(in[1].data<float>(), in[1].data<float>() + channels);
        const float* s = size_ == kFromInput ? copied.data() : scale_.data<float>();
        const float* b = bias_term_ ? bias_.data<float>() : nullptr;
        ctx.parallel_for(channels, [&](int64_t begin, int64_t end) {
            for (int64_t q = begin; q < end; ++q) {
                const float sq = s[q];
                const float* xq = x + q * inner;
                float* yq = y + q * inner;
                if (b) {
                    const float bq = b[q];
                    for (int64_t i = 0; i < inner; ++i) yq[i] = xq[i] * sq + bq;
                } else {
                    for (int64_t i = 0; i < inner; ++i) yq[i] = xq[i] * sq;
                }
            }
        });
    }

private:
    int size_ = 0;
    bool bias_term_ = false;
    Tensor scale_, bias_;
};

} // namespace

std::unique_ptr<Op> make_scale() { return std::make_unique<Scale>(); }

} // namespace kestrel
