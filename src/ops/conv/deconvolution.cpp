// Deconvolution and DeconvolutionDepthWise (ncnn params; one class, the
// depthwise type adds param 7 = group). Input (c,h,w) -> (num_output,outh,outw).
//
// Weights are [outch][inch][kh][kw] (depthwise: [group][outch/g][inch/g][kh][kw]),
// then bias [num_output]. Each input pixel scatters kernel*value into the full
// ("bordered") output of size (in-1)*stride + dilation*(k-1)+1 + output_pad; then
//  * explicit pads (any > 0) are cut from the four sides,
//  * or with output_w/output_h (20/21) > 0 and pads -233/-234 the full output is
//    cut to that size, the odd pixel cut at the end (SAME_UPPER) or start (LOWER),
//  * otherwise the full output is the result.
// The activation (9/10) is applied per element.
// Params: ConvParams (conv_params.h) with dynamic weight id 28, and
// DeconvOutputParams (output_pad 18/19, output_w/output_h 20/21).
// Dynamic weight (28 = 1): inputs [x, W, (bias)] with W in ONNX order, our shape
// (inch, outch/group, kh, kw) = ncnn [w=kw, h=kh, d=outch/group, c=inch].
#include <algorithm>
#include <cstring>
#include <vector>

#include "ops/activation/activation.h"
#include "ops/registry.h"
#include "ops/conv/conv_params.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

// Rows and columns: the full output, and the part kept (axis.pad_begin cut from its start).
struct DeconvGeometry {
    DeconvAxis rows, cols;
};

class Deconvolution : public Op {
public:
    explicit Deconvolution(bool depthwise) : depthwise_(depthwise) {}

    void load_param(const ParamDict& pd) override
    {
        p_ = ConvParams::read(pd, 2, depthwise_, 28);
        output_ = DeconvOutputParams::read(pd, 2, p_.window);
    }

    void load_model(WeightReader& wr) override
    {
        weights_ = load_f32_conv_weights(wr, p_, type);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, p_.input_count(), p_.input_count());
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        const ConvKernel k = conv_kernel_for_input(p_, in, 2, true);
        check(s[1] > 0 && s[2] > 0, "expects a non-empty spatial size, got ", shape_str(s));
        const DeconvGeometry g = geometry(s[1], s[2], k);
        out[0] = TensorDesc({k.outch, g.rows.axis.out, g.cols.axis.out}, DType::F32);
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&) const override
    {
        const ConvKernel k = conv_kernel(p_, in, 2, true);
        return shape_numel(in[0].shape) * (k.outch / p_.group) * k.kernel[0] * k.kernel[1];
    }

    int64_t weight_bytes() const override
    {
        return weights_.bytes();
    }

    // Scratch 0, with dynamic weights: them in our order.
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        if (p_.dynamic) ctx.request_scratch(shape_numel(in[1].shape) * 4);
        return nullptr;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const ConvKernel k = conv_kernel(p_, in, 2, true);
        const Tensor& x = in[0];
        const int64_t h = x.dim(1), w = x.dim(2);
        const DeconvGeometry g = geometry(h, w, k);
        const int64_t kh = k.kernel[0], kw = k.kernel[1];
        const int64_t inch_g = k.inch / p_.group, outch_g = k.outch / p_.group, ksize = kh * kw;

        // Weights as [outch][inch/g][kh][kw]; the dynamic input is [inch][outch/g][kh][kw] per group.
        const float* wt = weights_.weight_data(p_, in);
        const float* bias = weights_.bias_data(p_, in);
        if (p_.dynamic) {
            float* reordered = ctx.scratch_as<float>(0);
            window::deconv_weight_from_onnx(wt, k.inch, outch_g, p_.group, ksize, reordered);
            wt = reordered;
        }

        const float* src = x.data<float>();
        float* dst = out[0].data<float>();
        const window::Axis &rows = g.rows.axis, &cols = g.cols.axis;
        const int64_t full_w = g.cols.full, full_plane = g.rows.full * full_w, out_plane = rows.out * cols.out;
        const bool cut = g.rows.full != rows.out || full_w != cols.out;
        ctx.parallel_for(k.outch, [&](int64_t begin, int64_t end) {
            std::vector<float> full(cut ? static_cast<size_t>(full_plane) : 0);
            for (int64_t oc = begin; oc < end; ++oc) {
                float* f = cut ? full.data() : dst + oc * out_plane;
                std::fill(f, f + full_plane, bias ? bias[oc] : 0.f);
                const int64_t grp = oc / outch_g;
                for (int64_t ic = 0; ic < inch_g; ++ic) {
                    const float* xp = src + (grp * inch_g + ic) * h * w;
                    const float* kp = wt + (oc * inch_g + ic) * ksize;
                    for (int64_t ky = 0; ky < kh; ++ky)
                        for (int64_t kx = 0; kx < kw; ++kx) {
                            const float kv = kp[ky * kw + kx];
                            for (int64_t y = 0; y < h; ++y) {
                                float* orow = f + (y * rows.stride + ky * rows.dilation) * full_w + kx * cols.dilation;
                                const float* xrow = xp + y * w;
                                for (int64_t xx = 0; xx < w; ++xx) orow[xx * cols.stride] += xrow[xx] * kv;
                            }
                        }
                }
                if (cut) {
                    float* o = dst + oc * out_plane;
                    for (int64_t y = 0; y < rows.out; ++y)
                        std::memcpy(o + y * cols.out, f + (y + rows.pad_begin) * full_w + cols.pad_begin,
                                    sizeof(float) * cols.out);
                }
                p_.activation.apply(dst + oc * out_plane, out_plane);
            }
        });
    }

private:
    // Throws when the output is empty or the output size exceeds the full output.
    DeconvGeometry geometry(int64_t h, int64_t w, const ConvKernel& k) const
    {
        return DeconvGeometry{deconv_axis(p_, output_, 0, h, k.kernel[0]), deconv_axis(p_, output_, 1, w, k.kernel[1])};
    }

    bool depthwise_;
    ConvParams p_;
    DeconvOutputParams output_;
    ConvWeights weights_;
};

} // namespace

std::unique_ptr<Op> make_deconvolution() { return std::make_unique<Deconvolution>(false); }
std::unique_ptr<Op> make_deconvolution_depthwise() { return std::make_unique<Deconvolution>(true); }

} // namespace kestrel
