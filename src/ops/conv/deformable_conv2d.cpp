// DeformableConv2D (ncnn, torchvision's deform_conv2d with one offset group):
// a 2-D convolution whose taps are moved by learned offsets and scaled by an
// optional mask. Params as Convolution's (0=num_output, the window 1/11 2/12
// 3/13 4/15/14/16, 5=bias_term, 6=weight_data_size, 9/10 activation);
// weights [num_output][C][kh][kw] (tagged), bias [num_output] (raw).
// Inputs: x (C, H, W), offsets (2*kh*kw, out_h, out_w) as (dy, dx) per tap,
// optional mask (kh*kw, out_h, out_w). Tap (i, j) of output (y, x) reads x at
// (y*stride - pad_top + i*dilation + dy, x*stride - pad_left + j*dilation + dx)
// bilinearly, corners outside the image as 0 and the whole tap as 0 unless
// the point lies in (-1, H) x (-1, W) (ncnn's and torchvision's rule).
// The sampled taps are gathered per output position in scratch, then each
// output is a dot product with its weights.
#include <cmath>

#include "kernels/dot.h"
#include "ops/common/op_util.h"
#include "ops/conv/conv_params.h"

namespace kestrel {

namespace {

class DeformableConv2D : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        p_ = ConvParams::read(pd, 2, false, 19);
        check(!p_.dynamic, "dynamic weights are not supported by DeformableConv2D");
    }

    void load_model(WeightReader& wr) override { w_ = load_f32_conv_weights(wr, p_, "DeformableConv2D"); }

    int64_t weight_bytes() const override { return w_.bytes(); }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 3);
        expect_output_count(out, 1);
        for (const TensorDesc& d : in) expect_f32(d);
        const ConvKernel k = conv_kernel_for_input(p_, in, 2, false);
        const Geometry g = geometry(in[0].shape);
        const int64_t taps = k.kernel[0] * k.kernel[1], oh = g.rows.axis.out, ow = g.cols.axis.out;
        check(in[1].shape == Shape({2 * taps, oh, ow}), "offsets (input 1) must be (", 2 * taps, ", ", oh, ", ", ow,
              "), got ", shape_str(in[1].shape));
        if (in.size() == 3)
            check(in[2].shape == Shape({taps, oh, ow}), "mask (input 2) must be (", taps, ", ", oh, ", ", ow, "), got ",
                  shape_str(in[2].shape));
        out[0] = TensorDesc(Shape{p_.num_output, oh, ow});
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out) const override
    {
        return shape_numel(out[0].shape) * in[0].shape[0] * p_.window.kernel[0] * p_.window.kernel[1];
    }

    // Scratch 0: the sampled taps, (out_h*out_w, C*kh*kw).
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                                     PrepareContext& ctx) const override
    {
        ctx.request_scratch(out[0].shape[1] * out[0].shape[2] * depth(in[0].shape[0]) * 4);
        return nullptr;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Geometry g = geometry(in[0].shape());
        const int64_t oh = g.rows.axis.out, ow = g.cols.axis.out, k = depth(in[0].dim(0));
        float* cols = ctx.scratch_as<float>(0);
        ctx.parallel_for(oh * ow, [&](int64_t begin, int64_t end) {
            for (int64_t pos = begin; pos < end; ++pos) sample_taps(in, g, pos, cols + pos * k);
        });
        const float* weight = w_.weight.data<float>();
        const float* bias = w_.bias.defined() ? w_.bias.data<float>() : nullptr;
        float* y = out[0].data<float>();
        ctx.parallel_for(p_.num_output, [&](int64_t begin, int64_t end) {
            for (int64_t oc = begin; oc < end; ++oc)
                for (int64_t pos = 0; pos < oh * ow; ++pos) {
                    const float sum = dot_f32(weight + oc * k, cols + pos * k, k) + (bias ? bias[oc] : 0.f);
                    y[oc * oh * ow + pos] = p_.activation(sum);
                }
        });
    }

private:
    struct Geometry {
        ConvAxis rows, cols;
    };
    Geometry geometry(const Shape& x) const
    {
        return Geometry{conv_axis(p_, 0, x[1], p_.window.kernel[0]), conv_axis(p_, 1, x[2], p_.window.kernel[1])};
    }
    int64_t depth(int64_t channels) const { return channels * p_.window.kernel[0] * p_.window.kernel[1]; }

    // Every (channel, tap) value output position `pos` reads, mask applied,
    // in the weights' order.
    void sample_taps(const std::vector<Tensor>& in, const Geometry& g, int64_t pos, float* col) const
    {
        const int64_t c = in[0].dim(0), h = in[0].dim(1), w = in[0].dim(2);
        const int64_t kh = p_.window.kernel[0], kw = p_.window.kernel[1], plane = g.rows.axis.out * g.cols.axis.out;
        const int64_t oy = pos / g.cols.axis.out, ox = pos % g.cols.axis.out;
        const float* x = in[0].data<float>();
        const float* offsets = in[1].data<float>();
        const float* mask = in.size() == 3 ? in[2].data<float>() : nullptr;
        for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
                const int64_t tap = i * kw + j;
                const float py = static_cast<float>(oy * g.rows.axis.stride - g.rows.axis.pad_begin + i * g.rows.axis.dilation) +
                                 offsets[(2 * tap) * plane + pos];
                const float px = static_cast<float>(ox * g.cols.axis.stride - g.cols.axis.pad_begin + j * g.cols.axis.dilation) +
                                 offsets[(2 * tap + 1) * plane + pos];
                const float m = mask ? mask[tap * plane + pos] : 1.f;
                const Corners k = corners(py, px, h, w);
                for (int64_t ch = 0; ch < c; ++ch) {
                    const float* p = x + ch * h * w;
                    float v = 0.f;
                    for (int q = 0; q < 4; ++q)
                        if (k.at[q] >= 0) v += k.weight[q] * p[k.at[q]];
                    col[ch * kh * kw + tap] = v * m;
                }
            }
    }

    // The four bilinear corners of (y, x): flat positions (-1 outside) and weights.
    struct Corners {
        int64_t at[4] = {-1, -1, -1, -1};
        float weight[4] = {0, 0, 0, 0};
    };
    static Corners corners(float y, float x, int64_t h, int64_t w)
    {
        Corners k;
        if (!(y > -1.f && x > -1.f && y < static_cast<float>(h) && x < static_cast<float>(w))) return k;
        const int64_t y0 = static_cast<int64_t>(std::floor(y)), x0 = static_cast<int64_t>(std::floor(x));
        const float ly = y - static_cast<float>(y0), lx = x - static_cast<float>(x0);
        const int64_t ys[2] = {y0, y0 + 1}, xs[2] = {x0, x0 + 1};
        const float wy[2] = {1 - ly, ly}, wx[2] = {1 - lx, lx};
        for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b) {
                const int q = a * 2 + b;
                k.weight[q] = wy[a] * wx[b];
                if (ys[a] >= 0 && ys[a] < h && xs[b] >= 0 && xs[b] < w) k.at[q] = ys[a] * w + xs[b];
            }
        return k;
    }

    ConvParams p_;
    ConvWeights w_;
};

} // namespace

std::unique_ptr<Op> make_deformable_conv2d() { return std::make_unique<DeformableConv2D>(); }

} // namespace kestrel
