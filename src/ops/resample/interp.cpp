// Interp (ncnn params): 0=resize_type (1 nearest, 2 bilinear, 3 bicubic with
// A=-0.75; 0, which ncnn accepts but never implements, is an error),
// 1=height_scale (1) 2=width_scale (1) 3=output_height 4=output_width
// 5=dynamic_target_size (output size = w,h of input 1) 6=align_corner
// 9=size_expr (list "w" or "w,h" in ncnn's expression language; the blobs it
// references are inputs, so it may make the layer multi-input).
//
// Output size: size_expr, else input 1's (w, h) with dynamic_target_size, else
// output_width/height, else (when either is 0) int(w * width_scale),
// int(h * height_scale). Input (c, h, w) resizes both axes; (h, w) resizes
// only w; a 1-D input of n values becomes (n, outh, outw), channel q filled
// with value q (ncnn's "flattened blob" case, with w = h = 1 for the scales).
// Rank 4 is refused (ncnn ignores d).
//
// Coordinates as ncnn: nearest takes min(int(x * ws), w - 1) with ws = 1/scale
// when the width came from the scale and w/outw otherwise (per axis: whether
// output_width/height is set or an expression is given); bilinear and bicubic
// use the half-pixel source (x + 0.5) * w / outw - 0.5, or x * (w-1)/(outw-1)
// with align_corner, taps clamped to the borders. Differences from ncnn: with
// dynamic_target_size ncnn's nearest uses 1/scale (usually 1, so it copies the
// top-left part of the input) while we use w/outw; align_corner with an output
// size of 1 samples position 0 (ncnn divides by zero).
#include <algorithm>
#include <cmath>

#include "graph/expression.h"
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum { kNearest = 1, kBilinear = 2, kBicubic = 3 };

// Source taps and weights of one output coordinate.
struct Taps {
    int64_t idx[4] = {0, 0, 0, 0};
    float w[4] = {0, 0, 0, 0};
};

// ncnn's source position: fractional coordinate fx and integer base sx.
void source_position(int64_t in, int64_t out, int64_t dx, bool align_corner, int64_t& sx, float& fx)
{
    double scale = static_cast<double>(in) / static_cast<double>(out);
    if (align_corner) scale = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
    fx = align_corner ? static_cast<float>(static_cast<double>(dx) * scale)
                      : static_cast<float>((static_cast<double>(dx) + 0.5) * scale - 0.5);
    sx = static_cast<int64_t>(std::floor(fx));
    fx -= static_cast<float>(sx);
}

std::vector<Taps> linear_taps(int64_t in, int64_t out, bool align_corner)
{
    std::vector<Taps> t(static_cast<size_t>(out));
    for (int64_t dx = 0; dx < out; ++dx) {
        int64_t sx;
        float fx;
        source_position(in, out, dx, align_corner, sx, fx);
        if (sx < 0) {
            sx = 0;
            fx = 0.f;
        }
        if (sx >= in - 1) {
            sx = in - 2;
            fx = 1.f;
        }
        Taps& k = t[static_cast<size_t>(dx)];
        k.idx[0] = std::max<int64_t>(sx, 0);
        k.idx[1] = std::min(sx + 1, in - 1);
        k.w[0] = 1.f - fx;
        k.w[1] = fx;
    }
    return t;
}

std::vector<Taps> cubic_taps(int64_t in, int64_t out, bool align_corner)
{
    const float A = -0.75f;
    std::vector<Taps> t(static_cast<size_t>(out));
    for (int64_t dx = 0; dx < out; ++dx) {
        int64_t sx;
        float fx;
        source_position(in, out, dx, align_corner, sx, fx);
        Taps& k = t[static_cast<size_t>(dx)];
        const float x0 = fx + 1, x1 = fx, x2 = 1 - fx;
        k.w[0] = A * x0 * x0 * x0 - 5 * A * x0 * x0 + 8 * A * x0 - 4 * A;
        k.w[1] = (A + 2) * x1 * x1 * x1 - (A + 3) * x1 * x1 + 1;
        k.w[2] = (A + 2) * x2 * x2 * x2 - (A + 3) * x2 * x2 + 1;
        k.w[3] = 1.f - k.w[0] - k.w[1] - k.w[2];
        for (int i = 0; i < 4; ++i) k.idx[i] = std::min(std::max<int64_t>(sx - 1 + i, 0), in - 1);
    }
    return t;
}

class Interp : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        type_ = pd.get_int(0, 0);
        check(type_ >= 1 && type_ <= 3, "resize_type (param 0) must be 1 (nearest), 2 (bilinear) or 3 (bicubic), got ",
              type_);
        height_scale_ = pd.get_float(1, 1.f);
        width_scale_ = pd.get_float(2, 1.f);
        check(std::isfinite(height_scale_) && std::isfinite(width_scale_) && height_scale_ > 0.f && width_scale_ > 0.f,
              "height_scale/width_scale (params 1, 2) must be finite and > 0, got ", height_scale_, ", ", width_scale_);
        output_height_ = pd.get_int(3, 0);
        output_width_ = pd.get_int(4, 0);
        check(output_height_ >= 0 && output_width_ >= 0, "output_height/width (params 3, 4) must be >= 0, got ",
              output_height_, ", ", output_width_);
        const int dyn = pd.get_int(5, 0);
        check(dyn == 0 || dyn == 1, "dynamic_target_size (param 5) must be 0 or 1, got ", dyn);
        dynamic_ = dyn == 1;
        const int ac = pd.get_int(6, 0);
        check(ac == 0 || ac == 1, "align_corner (param 6) must be 0 or 1, got ", ac);
        align_corner_ = ac == 1;
        const std::string text = pd.get_string(9, "");
        has_expr_ = !text.empty();
        if (has_expr_) expr_ = Expression::parse(text);
        inputs_ = std::max<size_t>(dynamic_ ? 2 : 1, has_expr_ ? static_cast<size_t>(expr_.blob_count()) : 1);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, inputs_, inputs_);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        std::vector<Shape> shapes;
        for (const auto& d : in) shapes.push_back(d.shape);
        out[0] = TensorDesc();
        out[0].shape = resolve(shapes).out;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        std::vector<Shape> shapes;
        for (const auto& t : in) shapes.push_back(t.shape());
        const Size z = resolve(shapes);
        const NcnnDims n = ncnn_dims(in[0].shape());
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();

        if (n.dims == 1) {
            const int64_t plane = z.outw * z.outh;
            ctx.parallel_for(n.w, [&](int64_t begin, int64_t end) {
                for (int64_t q = begin; q < end; ++q) std::fill(y + q * plane, y + (q + 1) * plane, x[q]);
            });
            return;
        }
        const int64_t w = n.w, h = n.h, c = n.dims == 2 ? 1 : n.c;
        const int64_t outw = z.outw, outh = n.dims == 2 ? h : z.outh;
        if (outw == w && outh == h) {
            std::copy(x, x + in[0].numel(), y);
            return;
        }
        if (n.dims == 2) {
            // Each row is a 1-row image resized along w only.
            resize(x, y, h, 1, w, 1, outw, ctx);
            return;
        }
        resize(x, y, c, h, w, outh, outw, ctx);
    }

private:
    struct Size {
        int64_t outw = 0, outh = 0;
        Shape out;
    };

    Size resolve(const std::vector<Shape>& shapes) const
    {
        const Shape& s = shapes[0];
        const NcnnDims n = ncnn_dims(s);
        check(n.dims <= 3, "expects a rank 1-3 input, got ", shape_str(s));
        const int64_t w = n.dims == 1 ? 1 : n.w, h = n.dims == 1 ? 1 : n.h;
        Size z;
        if (has_expr_) {
            const std::vector<int> list = expr_.eval_list(shapes);
            check(list.size() == 1 || list.size() == 2, "size_expr (param 9) '", expr_.text(), "' gives ", list.size(),
                  " values, expected 1 (w) or 2 (w,h)");
            z.outw = list[0];
            z.outh = list.size() == 2 ? list[1] : n.h;
        } else if (dynamic_) {
            const NcnnDims r = ncnn_dims(shapes[1]);
            z.outw = r.w;
            z.outh = r.h;
        } else {
            z.outw = output_width_;
            z.outh = output_height_;
            if (z.outw == 0 || z.outh == 0) {
                const float fw = static_cast<float>(w) * width_scale_, fh = static_cast<float>(h) * height_scale_;
                check(fw < 2147483648.f && fh < 2147483648.f, "scaled output size (w ", fw, ", h ", fh, ") is too large");
                z.outw = static_cast<int64_t>(fw);
                z.outh = static_cast<int64_t>(fh);
            }
        }
        const bool uses_h = n.dims != 2;
        check(z.outw > 0 && (!uses_h || z.outh > 0), "output size (w ", z.outw, uses_h ? ", h " : "",
              uses_h ? std::to_string(z.outh) : std::string(), ") must be positive");
        if (n.dims == 1) z.out = {n.w, z.outh, z.outw};
        else if (n.dims == 2) z.out = {n.h, z.outw};
        else z.out = {n.c, z.outh, z.outw};
        return z;
    }

    // Resizes c planes of (h, w) to (outh, outw).
    // A single row to a single row (2-D input) is not resized vertically.
    void resize(const float* x, float* y, int64_t c, int64_t h, int64_t w, int64_t outh, int64_t outw,
                const ExecContext& ctx) const
    {
        if (type_ == kNearest) {
            const bool size_w = output_width_ != 0 || has_expr_ || dynamic_;
            const bool size_h = output_height_ != 0 || has_expr_ || dynamic_;
            const float ws = size_w ? static_cast<float>(w) / static_cast<float>(outw) : 1.f / width_scale_;
            const float hs = size_h ? static_cast<float>(h) / static_cast<float>(outh) : 1.f / height_scale_;
            std::vector<int64_t> xi(static_cast<size_t>(outw)), yi(static_cast<size_t>(outh));
            for (int64_t i = 0; i < outw; ++i)
                xi[i] = std::min(static_cast<int64_t>(static_cast<float>(i) * ws), w - 1);
            for (int64_t i = 0; i < outh; ++i)
                yi[i] = h == 1 ? 0 : std::min(static_cast<int64_t>(static_cast<float>(i) * hs), h - 1);
            ctx.parallel_for(c * outh, [&](int64_t begin, int64_t end) {
                for (int64_t r = begin; r < end; ++r) {
                    const int64_t q = r / outh, oy = r % outh;
                    const float* src = x + (q * h + yi[oy]) * w;
                    float* dst = y + r * outw;
                    for (int64_t ox = 0; ox < outw; ++ox) dst[ox] = src[xi[ox]];
                }
            });
            return;
        }
        const int taps = type_ == kBilinear ? 2 : 4;
        const std::vector<Taps> tx = type_ == kBilinear ? linear_taps(w, outw, align_corner_)
                                                        : cubic_taps(w, outw, align_corner_);
        std::vector<Taps> ty;
        if (outh == h && h == 1) {
            ty.resize(1);
            ty[0].w[0] = 1.f;
        } else {
            ty = type_ == kBilinear ? linear_taps(h, outh, align_corner_) : cubic_taps(h, outh, align_corner_);
        }
        const int vtaps = (outh == h && h == 1) ? 1 : taps;
        ctx.parallel_for(c * outh, [&](int64_t begin, int64_t end) {
            std::vector<float> rows(static_cast<size_t>(4 * outw));
            for (int64_t r = begin; r < end; ++r) {
                const int64_t q = r / outh, oy = r % outh;
                const Taps& ky = ty[static_cast<size_t>(oy)];
                // Horizontal pass on the source rows, then the vertical blend (ncnn's order).
                for (int t = 0; t < vtaps; ++t) {
                    const float* src = x + (q * h + ky.idx[t]) * w;
                    float* row = rows.data() + t * outw;
                    for (int64_t ox = 0; ox < outw; ++ox) {
                        const Taps& kx = tx[static_cast<size_t>(ox)];
                        if (taps == 2)
                            row[ox] = src[kx.idx[0]] * kx.w[0] + src[kx.idx[1]] * kx.w[1];
                        else
                            row[ox] = src[kx.idx[0]] * kx.w[0] + src[kx.idx[1]] * kx.w[1] + src[kx.idx[2]] * kx.w[2] +
                                      src[kx.idx[3]] * kx.w[3];
                    }
                }
                float* dst = y + r * outw;
                for (int64_t ox = 0; ox < outw; ++ox) {
                    if (vtaps == 1) {
                        dst[ox] = rows[static_cast<size_t>(ox)];
                    } else if (vtaps == 2) {
                        dst[ox] = rows[ox] * ky.w[0] + rows[outw + ox] * ky.w[1];
                    } else {
                        dst[ox] = rows[ox] * ky.w[0] + rows[outw + ox] * ky.w[1] + rows[2 * outw + ox] * ky.w[2] +
                                  rows[3 * outw + ox] * ky.w[3];
                    }
                }
            }
        });
    }

    int type_ = 0;
    float height_scale_ = 1.f, width_scale_ = 1.f;
    int output_height_ = 0, output_width_ = 0;
    bool dynamic_ = false, align_corner_ = false, has_expr_ = false;
    Expression expr_;
    size_t inputs_ = 1;
};

} // namespace

std::unique_ptr<Op> make_interp() { return std::make_unique<Interp>(); }

} // namespace kestrel
