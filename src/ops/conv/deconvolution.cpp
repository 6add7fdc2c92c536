// Deconvolution (transposed convolution) of every rank: Deconvolution1D,
// Deconvolution, Deconvolution3D and their DepthWise types (ncnn params; one
// class, the depthwise types add param 7 = group, the rank comes from the
// type). Input (c, spatial...) -> (num_output, spatial...).
//
// Weights are [outch][inch/group][kernel...], then bias [num_output]. Each
// input position scatters kernel*value into the full ("bordered") output of
// size (in-1)*stride + dilation*(k-1)+1 + output_pad per axis; then
//  * explicit pads (any > 0) are cut from both ends,
//  * or with an output size and pads -233/-234 the full output is cut to that
//    size, the odd position cut at the end (SAME_UPPER) or start (LOWER),
//  * otherwise the full output is the result.
// The activation (9/10) is applied per element.
// Params: ConvParams (conv_params.h) with dynamic weight id 28, and
// DeconvOutputParams (output_pad 18/19/20, output sizes 20/21 for 1-D/2-D or
// 25/26/27 for 3-D).
// Dynamic weight (28 = 1): inputs [x, W, (bias)] with W in ONNX order,
// (inch, outch/group, kernel...).
// 2-D layers accumulate each full output plane (deconv2d below: a GEMM and
// col2im with one group); the other ranks use the N-d reference kernel
// (common/sliding_window.h).
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/gemm.h"
#include "ops/activation/activation.h"
#include "ops/registry.h"
#include "ops/common/sliding_window.h"
#include "ops/conv/conv_params.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Deconvolution : public Op {
public:
    Deconvolution(int rank, bool depthwise) : rank_(rank), depthwise_(depthwise) {}

    void load_param(const ParamDict& pd) override
    {
        p_ = ConvParams::read(pd, rank_, depthwise_, 28);
        check(pd.get_int(8, 0) == 0, "int8 (param 8) is not supported by ", type);
        output_ = DeconvOutputParams::read(pd, rank_, p_.window);
    }

    void load_model(WeightReader& wr) override
    {
        weights_ = load_f32_conv_weights(wr, p_, type);
        gemm_weights_.clear();
        if (rank_ == 2 && p_.group == 1 && !p_.dynamic) {
            // A of the columns' GEMM: row (oc, ky, kx), column ic, from [oc][ic][ky][kx].
            const int64_t ksize = p_.window.kernel[0] * p_.window.kernel[1], outch = p_.num_output;
            const int64_t inch = weights_.weight.numel() / (outch * ksize);
            const float* w = weights_.weight.data<float>();
            std::vector<float> rows(static_cast<size_t>(outch * ksize * inch));
            for (int64_t oc = 0; oc < outch; ++oc)
                for (int64_t ic = 0; ic < inch; ++ic)
                    for (int64_t t = 0; t < ksize; ++t) rows[((oc * ksize + t) * inch + ic)] = w[(oc * inch + ic) * ksize + t];
            gemm_weights_ = gemm_pack_a(gemm_kernel(), rows.data(), outch * ksize, inch, inch);
        }
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, p_.input_count(), p_.input_count());
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const ConvKernel k = conv_kernel_for_input(p_, in, rank_, true);
        Shape o = {k.outch};
        for (const DeconvAxis& a : geometry(in[0].shape, k)) o.push_back(a.axis.out);
        out[0] = TensorDesc(o, DType::F32);
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&) const override
    {
        // Every input value scatters over outch/group * taps outputs.
        const ConvKernel k = conv_kernel(p_, in, rank_, true);
        int64_t taps = 1;
        for (int64_t v : k.kernel) taps *= v;
        return shape_numel(in[0].shape) * (k.outch / p_.group) * taps;
    }

    int64_t weight_bytes() const override
    {
        return weights_.bytes() + static_cast<int64_t>(gemm_weights_.size() * sizeof(float));
    }

    // Scratch 0: with dynamic weights, them in our order; with the GEMM, its columns.
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        if (p_.dynamic) ctx.request_scratch(shape_numel(in[1].shape) * 4);
        if (!gemm_weights_.empty())
            ctx.request_scratch(int64_t(p_.num_output) * p_.window.kernel[0] * p_.window.kernel[1] *
                                shape_numel(in[0].shape) / in[0].shape[0] * 4);
        return nullptr;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const ConvKernel k = conv_kernel(p_, in, rank_, true);
        const std::vector<DeconvAxis> g = geometry(in[0].shape(), k);
        // Weights as [outch][inch/g][kernel...]; the dynamic input is [inch][outch/g][kernel...] per group.
        const float* wt = weights_.weight_data(p_, in);
        const float* bias = weights_.bias_data(p_, in);
        if (p_.dynamic) {
            float* reordered = ctx.scratch_as<float>(0);
            window::deconv_weight_from_onnx(wt, k.inch, k.outch / p_.group, p_.group, shape_numel(k.kernel), reordered);
            wt = reordered;
        }
        if (rank_ == 2) {
            deconv2d(in[0], k, g[0], g[1], wt, bias, out[0], ctx);
            return;
        }
        std::vector<window::Axis> axes;
        for (const DeconvAxis& a : g) axes.push_back(a.axis);
        window::deconv_forward(in[0], wt, bias, p_.group, axes, out[0], ctx);
        p_.activation.apply(out[0].data<float>(), out[0].numel());
    }

private:
    // 2-D: each output plane accumulated over its full extent, then cut.
    // With one group and static weights, the products come from one GEMM
    // (kernels/gemm.h): columns C[(oc, ky, kx)][pixel] = sum over input channels,
    // scattered into the planes tap by tap (col2im); otherwise channel by channel.
    void deconv2d(const Tensor& x, const ConvKernel& k, const DeconvAxis& row_axis, const DeconvAxis& col_axis,
                  const float* wt, const float* bias, Tensor& y, const ExecContext& ctx) const
    {
        const int64_t h = x.dim(1), w = x.dim(2), ksize = k.kernel[0] * k.kernel[1];
        const int64_t inch_g = k.inch / p_.group, outch_g = k.outch / p_.group;
        const float* src = x.data<float>();
        if (!gemm_weights_.empty()) {
            const GemmKernel& kern = gemm_kernel();
            float* columns = ctx.scratch_as<float>(0);
            gemm_f32(kern, k.outch * ksize, h * w, k.inch, gemm_weights_.data(), GemmStart::Zero, nullptr, columns, h * w,
                     GemmRowMajorB{src, k.inch, h * w, kern.nr}, gemm_no_post, ctx);
            each_output_plane(k, row_axis, col_axis, bias, y, ctx, [&](int64_t oc, float* f) {
                for (int64_t t = 0; t < ksize; ++t)
                    scatter_tap(f, columns + (oc * ksize + t) * h * w, h, w, k, t, row_axis, col_axis, 1.f);
            });
            return;
        }
        each_output_plane(k, row_axis, col_axis, bias, y, ctx, [&](int64_t oc, float* f) {
            const int64_t grp = oc / outch_g;
            for (int64_t ic = 0; ic < inch_g; ++ic) {
                const float* xp = src + (grp * inch_g + ic) * h * w;
                const float* kp = wt + (oc * inch_g + ic) * ksize;
                for (int64_t t = 0; t < ksize; ++t) scatter_tap(f, xp, h, w, k, t, row_axis, col_axis, kp[t]);
            }
        });
    }

    // f (a full output plane) += v * tap t's contribution of plane `in` (h x w).
    static void scatter_tap(float* f, const float* in, int64_t h, int64_t w, const ConvKernel& k, int64_t t,
                            const DeconvAxis& row_axis, const DeconvAxis& col_axis, float v)
    {
        const window::Axis &rows = row_axis.axis, &cols = col_axis.axis;
        const int64_t ky = t / k.kernel[1], kx = t % k.kernel[1], full_w = col_axis.full;
        for (int64_t y = 0; y < h; ++y) {
            float* orow = f + (y * rows.stride + ky * rows.dilation) * full_w + kx * cols.dilation;
            const float* xrow = in + y * w;
            for (int64_t xx = 0; xx < w; ++xx) orow[xx * cols.stride] += xrow[xx] * v;
        }
    }

    // Every output channel's plane: the bias, accumulate(oc, full plane), the
    // cut to the kept part, the activation.
    template <class Accumulate>
    void each_output_plane(const ConvKernel& k, const DeconvAxis& row_axis, const DeconvAxis& col_axis,
                           const float* bias, Tensor& y, const ExecContext& ctx, const Accumulate& accumulate) const
    {
        float* dst = y.data<float>();
        const window::Axis &rows = row_axis.axis, &cols = col_axis.axis;
        const int64_t full_w = col_axis.full, full_plane = row_axis.full * full_w, out_plane = rows.out * cols.out;
        const bool cut = row_axis.full != rows.out || full_w != cols.out;
        ctx.parallel_for(k.outch, [&](int64_t begin, int64_t end) {
            thread_local std::vector<float> full; // the thread's own, kept from call to call
            if (cut) full.resize(std::max(full.size(), static_cast<size_t>(full_plane)));
            for (int64_t oc = begin; oc < end; ++oc) {
                float* f = cut ? full.data() : dst + oc * out_plane;
                std::fill(f, f + full_plane, bias ? bias[oc] : 0.f);
                accumulate(oc, f);
                if (cut) {
                    float* o = dst + oc * out_plane;
                    for (int64_t yy = 0; yy < rows.out; ++yy)
                        std::memcpy(o + yy * cols.out, f + (yy + rows.pad_begin) * full_w + cols.pad_begin,
                                    sizeof(float) * cols.out);
                }
                p_.activation.apply(dst + oc * out_plane, out_plane);
            }
        });
    }

    // Per spatial axis: the full output and the part kept. Throws when the
    // output is empty or the output size exceeds the full output.
    std::vector<DeconvAxis> geometry(const Shape& s, const ConvKernel& k) const
    {
        std::vector<DeconvAxis> axes;
        for (size_t i = 0; i < static_cast<size_t>(rank_); ++i) {
            check(s[i + 1] > 0, "expects a non-empty spatial size, got ", shape_str(s));
            axes.push_back(deconv_axis(p_, output_, i, s[i + 1], k.kernel[i]));
        }
        return axes;
    }

    int rank_;
    bool depthwise_;
    ConvParams p_;
    DeconvOutputParams output_;
    ConvWeights weights_;
    std::vector<float> gemm_weights_; // packed for the columns' GEMM (one group, static weights)
};

} // namespace

std::unique_ptr<Op> make_deconvolution() { return std::make_unique<Deconvolution>(2, false); }
std::unique_ptr<Op> make_deconvolution_depthwise() { return std::make_unique<Deconvolution>(2, true); }
std::unique_ptr<Op> make_deconvolution_1d() { return std::make_unique<Deconvolution>(1, false); }
std::unique_ptr<Op> make_deconvolution_3d() { return std::make_unique<Deconvolution>(3, false); }
std::unique_ptr<Op> make_deconvolution_depthwise_1d() { return std::make_unique<Deconvolution>(1, true); }
std::unique_ptr<Op> make_deconvolution_depthwise_3d() { return std::make_unique<Deconvolution>(3, true); }

} // namespace kestrel
