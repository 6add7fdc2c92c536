// GridSampleND (ONNX GridSample, 4-D; ncnn's GridSample differs):
// Y[n, c, i, j] samples X (N, C, H, W) float32 at the normalized point
// Grid[n, i, j] = (x, y) in [-1, 1] (Grid (N, Ho, Wo, 2) float32); Y is
// (N, C, Ho, Wo).
// Params: 0=mode (0 bilinear, 1 nearest (ties to even), 2 bicubic with
// A = -0.75), 1=padding (0 zeros, 1 border, 2 reflection), 2=align_corners
// (1: -1 and 1 are the centers of the corner pixels; 0: their outer edges).
// Padding acts on coordinates: border clamps into [0, size-1]; reflection
// mirrors at the borders (pixel centers when aligned, edges otherwise), then
// clamps. Bilinear and nearest pad the sampling point; bicubic pads each of
// its 16 taps. Pixels still outside the image read as 0.
#include <algorithm>
#include <array>
#include <cmath>

#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum Mode { Bilinear, Nearest, Bicubic };
enum Padding { Zeros, Border, Reflection };

// One (n, c) image plane with the sampling rules.
struct Plane {
    const float* data;
    int64_t h, w;
    int padding;
    bool align;

    // The pixel at integral coordinates; 0 outside (NaN coordinates included).
    float at(float y, float x) const
    {
        if (!(y >= 0.f && y < static_cast<float>(h) && x >= 0.f && x < static_cast<float>(w))) return 0.f;
        return data[static_cast<int64_t>(y) * w + static_cast<int64_t>(x)];
    }

    float unnormalize(float g, int64_t size) const
    {
        return align ? (g + 1.f) / 2.f * static_cast<float>(size - 1) : ((g + 1.f) * static_cast<float>(size) - 1.f) / 2.f;
    }

    // Mirror x into [lo, hi] (repeatedly).
    static float reflect(float x, float lo, float hi)
    {
        const float span = hi - lo;
        if (span <= 0.f) return lo;
        const float d = std::fabs(x - lo);
        const float flips = std::floor(d / span);
        const float extra = d - flips * span;
        return std::fmod(flips, 2.f) == 0.f ? lo + extra : hi - extra;
    }

    float pad(float x, int64_t size) const
    {
        const float last = static_cast<float>(size - 1);
        if (padding == Border) return std::clamp(x, 0.f, last);
        if (padding == Reflection) {
            x = align ? reflect(x, 0.f, last) : reflect(x, -0.5f, static_cast<float>(size) - 0.5f);
            return std::clamp(x, 0.f, last);
        }
        return x;
    }

    float bilinear(float y, float x) const
    {
        y = pad(y, h);
        x = pad(x, w);
        const float y0 = std::floor(y), x0 = std::floor(x);
        const float ly = y - y0, lx = x - x0;
        const float top = (1 - lx) * at(y0, x0) + lx * at(y0, x0 + 1);
        const float bottom = (1 - lx) * at(y0 + 1, x0) + lx * at(y0 + 1, x0 + 1);
        return (1 - ly) * top + ly * bottom;
    }

    float nearest(float y, float x) const
    {
        return at(std::nearbyint(pad(y, h)), std::nearbyint(pad(x, w)));
    }

    static std::array<float, 4> cubic_weights(float t)
    {
        const float a = -0.75f;
        auto near = [a](float d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };         // |d| <= 1
        auto far = [a](float d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };   // 1 < |d| < 2
        return {far(t + 1), near(t), near(1 - t), far(2 - t)};
    }

    float bicubic(float y, float x) const
    {
        const float y0 = std::floor(y), x0 = std::floor(x);
        const std::array<float, 4> wy = cubic_weights(y - y0), wx = cubic_weights(x - x0);
        float sum = 0.f;
        for (int i = 0; i < 4; ++i) {
            const float ty = pad(y0 - 1 + static_cast<float>(i), h);
            float row = 0.f;
            for (int j = 0; j < 4; ++j)
                row += wx[static_cast<size_t>(j)] * at(ty, pad(x0 - 1 + static_cast<float>(j), w));
            sum += wy[static_cast<size_t>(i)] * row;
        }
        return sum;
    }
};

class GridSample : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        mode_ = pd.get_int(0, Bilinear);
        check(mode_ >= Bilinear && mode_ <= Bicubic, "mode (param 0) must be 0, 1 or 2, got ", mode_);
        padding_ = pd.get_int(1, Zeros);
        check(padding_ >= Zeros && padding_ <= Reflection, "padding (param 1) must be 0, 1 or 2, got ", padding_);
        align_ = pd.get_int(2, 0) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        expect_f32(in[0], "X (input 0)");
        expect_f32(in[1], "grid (input 1)");
        const Shape &x = in[0].shape, &g = in[1].shape;
        check(x.size() == 4 && x[2] > 0 && x[3] > 0, "X (input 0) must be (N, C, H, W) with H, W > 0, got ", shape_str(x));
        check(g.size() == 4 && g[0] == x[0] && g[3] == 2, "grid (input 1) must be (", x[0], ", H_out, W_out, 2), got ",
              shape_str(g));
        out[0] = TensorDesc({x[0], x[1], g[1], g[2]});
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t n = in[0].dim(0), c = in[0].dim(1), h = in[0].dim(2), w = in[0].dim(3);
        const int64_t points = in[1].dim(1) * in[1].dim(2);
        ctx.parallel_for(n * c, [&](int64_t begin, int64_t end) {
            for (int64_t nc = begin; nc < end; ++nc) {
                const Plane p{in[0].data<float>() + nc * h * w, h, w, padding_, align_};
                const float* grid = in[1].data<float>() + nc / c * points * 2;
                float* y = out[0].data<float>() + nc * points;
                for (int64_t k = 0; k < points; ++k) {
                    const float sx = p.unnormalize(grid[2 * k], w), sy = p.unnormalize(grid[2 * k + 1], h);
                    y[k] = mode_ == Bilinear ? p.bilinear(sy, sx) : mode_ == Nearest ? p.nearest(sy, sx) : p.bicubic(sy, sx);
                }
            }
        });
    }

private:
    int mode_ = Bilinear, padding_ = Zeros;
    bool align_ = false;
};

} // namespace

std::unique_ptr<Op> make_nd_grid_sample() { return std::make_unique<GridSample>(); }

} // namespace kestrel
