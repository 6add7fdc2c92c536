// Unfold and Fold (ncnn, torch.nn.Unfold / nn.Fold without the batch): the
// im2col of a convolution and its adjoint. Params as Convolution's window:
// 1/11=kernel_w/h, 2/12=dilation_w/h, 3/13=stride_w/h, 4/15=pad left/right,
// 14/16=pad top/bottom (each defaulting as ncnn: h to w, right to left, top to
// left, bottom to top); float32.
//   Unfold  x (C, H, W) -> (C*kh*kw, L), L = out_h*out_w: row (c, u, v) holds
//           tap (u, v) of every window, in window order. 18=pad_value (0);
//           pads -233/-234 are SAME_UPPER/SAME_LOWER.
//   Fold    (C*kh*kw, L) -> (C, output_h, output_w), 20=output_w 21=output_h
//           (-> output_w): every tap added to where Unfold took it from
//           (overlaps sum); the padding is cut off. Explicit pads only.
#include <algorithm>

#include "ops/common/op_util.h"
#include "ops/conv/conv_params.h"

namespace kestrel {

namespace {

class FoldUnfold : public Op {
public:
    explicit FoldUnfold(bool fold) : fold_(fold) {}

    void load_param(const ParamDict& pd) override
    {
        p_.window = window::read_ncnn_window(pd, 2, window::NcnnWindowIds{1, 3, 2, 4, 15}, true);
        pad_value_ = pd.get_float(18, 0.f);
        if (!fold_) return;
        check(p_.window.same == 0, "Fold takes explicit pads (params 4/15/14/16), not SAME (-233/-234)");
        out_w_ = positive_param(pd, 20, 0, "output_w");
        out_h_ = positive_param(pd, 21, out_w_, "output_h");
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        const int64_t taps = p_.window.kernel[0] * p_.window.kernel[1];
        if (!fold_) {
            check(s.size() == 3, "expects a (C, H, W) input, got ", shape_str(s));
            const Geometry g = geometry(s[1], s[2]);
            out[0] = TensorDesc(Shape{s[0] * taps, g.rows.axis.out * g.cols.axis.out});
            return;
        }
        check(s.size() == 2, "expects a (C*kh*kw, L) input, got ", shape_str(s));
        check(s[0] % taps == 0, "input rows ", s[0], " are not a multiple of the kernel's ", taps, " taps");
        const Geometry g = geometry(out_h_, out_w_);
        check(s[1] == g.rows.axis.out * g.cols.axis.out, "input has ", s[1], " windows; an ", out_h_, "x", out_w_,
              " output has ", g.rows.axis.out * g.cols.axis.out);
        out[0] = TensorDesc(Shape{s[0] / taps, out_h_, out_w_});
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const bool fold = fold_;
        const Tensor& cols = fold ? in[0] : out[0];
        const Tensor& image = fold ? out[0] : in[0];
        const int64_t c = image.dim(0), h = image.dim(1), w = image.dim(2);
        const int64_t kh = p_.window.kernel[0], kw = p_.window.kernel[1];
        const Geometry g = geometry(h, w);
        const window::Axis &ry = g.rows.axis, &rx = g.cols.axis;
        const int64_t windows = ry.out * rx.out;
        float* col = const_cast<float*>(cols.data<float>());
        float* img = const_cast<float*>(image.data<float>());
        ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
            for (int64_t ch = begin; ch < end; ++ch) {
                float* plane = img + ch * h * w;
                if (fold) std::fill_n(plane, h * w, 0.f);
                for (int64_t u = 0; u < kh; ++u)
                    for (int64_t v = 0; v < kw; ++v) {
                        float* row = col + ((ch * kh + u) * kw + v) * windows;
                        for (int64_t i = 0; i < ry.out; ++i) {
                            const int64_t y = i * ry.stride + u * ry.dilation - ry.pad_begin;
                            for (int64_t j = 0; j < rx.out; ++j) {
                                const int64_t x = j * rx.stride + v * rx.dilation - rx.pad_begin;
                                const bool inside = y >= 0 && y < h && x >= 0 && x < w;
                                float& tap = row[i * rx.out + j];
                                if (fold) {
                                    if (inside) plane[y * w + x] += tap;
                                } else {
                                    tap = inside ? plane[y * w + x] : pad_value_;
                                }
                            }
                        }
                    }
            }
        });
    }

private:
    struct Geometry {
        ConvAxis rows, cols;
    };
    Geometry geometry(int64_t h, int64_t w) const
    {
        return Geometry{conv_axis(p_, 0, h, p_.window.kernel[0]), conv_axis(p_, 1, w, p_.window.kernel[1])};
    }

    bool fold_;
    ConvParams p_;
    float pad_value_ = 0.f;
    int out_w_ = 0, out_h_ = 0;
};

} // namespace

std::unique_ptr<Op> make_unfold() { return std::make_unique<FoldUnfold>(false); }
std::unique_ptr<Op> make_fold() { return std::make_unique<FoldUnfold>(true); }

} // namespace kestrel
