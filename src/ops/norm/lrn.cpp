// LRN (ncnn params): 0=region_type (0 across channels, 1 within channel),
// 1=local_size (5), 2=alpha (1), 3=beta (0.75), 4=bias (1).
//
// y = x * (bias + alpha / n * sum(x^2 over the window))^-beta, as ncnn:
//   across channels: window channels [q - local_size/2, q + local_size/2]
//     clipped to the tensor, n = local_size;
//   within channel: a local_size x local_size square starting local_size/2
//     before the position, zero outside the plane, n = local_size^2.
// Input rank 1-3 (ncnn w,h,c with absent axes 1); ncnn ignores d of a 4-D
// blob, so rank 4 is refused.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/activations.h"
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class LRN : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        region_ = pd.get_int(0, 0);
        check(region_ == 0 || region_ == 1, "region_type (param 0) must be 0 (across channels) or 1 (within channel), got ",
              region_);
        local_size_ = positive_param(pd, 1, 5, "local_size");
        alpha_ = pd.get_float(2, 1.f);
        beta_ = pd.get_float(3, 0.75f);
        bias_ = pd.get_float(4, 1.f);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const NcnnDims n = ncnn_dims(in[0].shape);
        check(n.dims <= 3, "expects a rank 1-3 input (c,h,w), got ", shape_str(in[0].shape));
        out[0] = TensorDesc();
        out[0].shape = in[0].shape;
    }

    // Not in place: an output plane would overwrite input values the next
    // planes' windows still read.

    // Scratch 0: the squares of the input (within-channel windows, and
    // across channels with a beta other than 3/4).
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        if (region_ != 0 || beta_ != 0.75f) ctx.request_scratch(shape_numel(in[0].shape) * 4);
        return nullptr;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const NcnnDims n = ncnn_dims(in[0].shape());
        const int64_t w = n.w, h = n.h, c = n.c, size = w * h;
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();
        if (region_ == 0 && beta_ == 0.75f) {
            // Caffe's beta: sums, power and product in one pass of the
            // activation kernel over the window's planes (std::pow went
            // value by value, 9 ns each: a quarter of GoogLeNet's time).
            const float alpha_div = alpha_ / static_cast<float>(local_size_);
            const int64_t half = local_size_ / 2;
            ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
                std::vector<const float*> planes;
                for (int64_t q = begin; q < end; ++q) {
                    planes.clear();
                    for (int64_t p = std::max<int64_t>(0, q - half); p <= std::min(c - 1, q + half); ++p)
                        planes.push_back(x + p * size);
                    activation_kernel().lrn_across_channels(planes.data(), static_cast<int>(planes.size()),
                                                            x + q * size, bias_, alpha_div, y + q * size, size);
                }
            });
            return;
        }
        float* sq = ctx.scratch_as<float>(0);
        ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin * size; i < end * size; ++i) sq[i] = x[i] * x[i];
        });
        if (region_ == 0) {
            const float alpha_div = alpha_ / static_cast<float>(local_size_);
            const int64_t half = local_size_ / 2;
            ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
                std::vector<float> ss(static_cast<size_t>(size));
                for (int64_t q = begin; q < end; ++q) {
                    std::fill(ss.begin(), ss.end(), 0.f);
                    for (int64_t p = q - half; p <= q + half; ++p) {
                        if (p < 0 || p >= c) continue;
                        const float* sp = sq + p * size;
                        for (int64_t i = 0; i < size; ++i) ss[i] += sp[i];
                    }
                    const float* xq = x + q * size;
                    float* yq = y + q * size;
                    for (int64_t i = 0; i < size; ++i) yq[i] = xq[i] * std::pow(bias_ + alpha_div * ss[i], -beta_);
                }
            });
            return;
        }
        const int64_t ls = local_size_, pad = ls / 2;
        const float alpha_div = alpha_ / static_cast<float>(ls * ls);
        ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
            for (int64_t q = begin; q < end; ++q) {
                const float* sp = sq + q * size;
                for (int64_t i = 0; i < h; ++i) {
                    for (int64_t j = 0; j < w; ++j) {
                        float sum = 0.f;
                        for (int64_t di = 0; di < ls; ++di) {
                            const int64_t yi = i - pad + di;
                            if (yi < 0 || yi >= h) continue;
                            for (int64_t dj = 0; dj < ls; ++dj) {
                                const int64_t xj = j - pad + dj;
                                if (xj >= 0 && xj < w) sum += sp[yi * w + xj];
                            }
                        }
                        y[q * size + i * w + j] = x[q * size + i * w + j] * std::pow(bias_ + alpha_div * sum, -beta_);
                    }
                }
            }
        });
    }

private:
    int region_ = 0;
    int local_size_ = 5;
    float alpha_ = 1.f, beta_ = 0.75f, bias_ = 1.f;
};

} // namespace

std::unique_ptr<Op> make_lrn() { return std::make_unique<LRN>(); }

} // namespace kestrel
