// LayerNorm (ncnn params): 0=affine_size, 1=eps (0.001), 2=affine (1).
// Weights (raw fp32, only with affine): gamma[affine_size], beta[affine_size].
//
// y = (x - mean) / sqrt(var + eps) * gamma + beta over groups of contiguous
// values (population variance). The group is, as in ncnn:
//   rank 1: the whole vector;  rank 2: each row (w);
//   rank 3: each row when affine_size == w, else each whole channel (h*w);
//   rank 4: each row when affine_size == w, each (h,w) plane when
//           affine_size == h*w, else each whole channel (d*h*w).
// With affine, the group size must equal affine_size (ncnn only asserts it).
// Mean and variance are accumulated in double.
#include <cmath>

#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class LayerNorm : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        affine_size_ = pd.get_int(0, 0);
        eps_ = pd.get_float(1, 0.001f);
        const int affine = pd.get_int(2, 1);
        check(affine == 0 || affine == 1, "affine (param 2) must be 0 or 1, got ", affine);
        affine_ = affine == 1;
        check(affine_size_ >= 0, "affine_size (param 0) must be >= 0, got ", affine_size_);
        check(!affine_ || affine_size_ > 0, "affine_size (param 0) must be > 0 when affine (param 2) is 1");
        check(std::isfinite(eps_) && eps_ >= 0.f, "eps (param 1) must be finite and >= 0, got ", eps_);
    }

    void load_model(WeightReader& wr) override
    {
        if (!affine_) return;
        gamma_ = wr.load(affine_size_, WeightEncoding::Raw);
        beta_ = wr.load(affine_size_, WeightEncoding::Raw);
        check(gamma_.dtype() == DType::F32 && beta_.dtype() == DType::F32, "gamma/beta must be float32");
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        group_size(in[0].shape);
        out[0] = TensorDesc();
        out[0].shape = in[0].shape;
    }

    bool supports_inplace() const override { return true; }

    int64_t weight_bytes() const override
    {
        return affine_ ? static_cast<int64_t>(gamma_.nbytes() + beta_.nbytes()) : 0;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t size = group_size(in[0].shape());
        const int64_t groups = size == 0 ? 0 : in[0].numel() / size;
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();
        const float* gamma = affine_ ? gamma_.data<float>() : nullptr;
        const float* beta = affine_ ? beta_.data<float>() : nullptr;
        ctx.parallel_for(groups, [&](int64_t begin, int64_t end) {
            for (int64_t g = begin; g < end; ++g) {
                const float* xg = x + g * size;
                float* yg = y + g * size;
                double sum = 0;
                for (int64_t i = 0; i < size; ++i) sum += xg[i];
                const double mean = sum / static_cast<double>(size);
                double sq = 0;
                for (int64_t i = 0; i < size; ++i) {
                    const double d = xg[i] - mean;
                    sq += d * d;
                }
                const double var = sq / static_cast<double>(size);
                const float a = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps_)));
                const float b = static_cast<float>(-mean) * a;
                // y may alias x: each value is read right before it is overwritten.
                if (gamma) {
                    for (int64_t i = 0; i < size; ++i) yg[i] = (xg[i] * a + b) * gamma[i] + beta[i];
                } else {
                    for (int64_t i = 0; i < size; ++i) yg[i] = xg[i] * a + b;
                }
            }
        });
    }

private:
    // Number of contiguous values normalized together (see the header comment).
    int64_t group_size(const Shape& s) const
    {
        const NcnnDims n = ncnn_dims(s);
        int64_t size = 0;
        switch (n.dims) {
        case 1: size = n.w; break;
        case 2: size = n.w; break;
        case 3: size = affine_size_ == n.w ? n.w : n.w * n.h; break;
        default:
            size = affine_size_ == n.w ? n.w : (affine_size_ == n.w * n.h ? n.w * n.h : n.w * n.h * n.d);
            break;
        }
        check(!affine_ || size == affine_size_, "affine_size (param 0) ", affine_size_,
              " does not match the normalized size ", size, " of input ", shape_str(s));
        return size;
    }

    int affine_size_ = 0;
    float eps_ = 0.001f;
    bool affine_ = true;
    Tensor gamma_, beta_;
};

} // namespace

std::unique_ptr<Op> make_layer_norm() { return std::make_unique<LayerNorm>(); }

} // namespace kestrel
