// GridSample (ncnn's params; ONNX's GridSample): Y[n, c, i, j] samples X
// (N, C, H, W) float32 at the normalized point Grid[n, i, j] = (x, y) in
// [-1, 1] (Grid (N, Ho, Wo, 2) float32); Y is (N, C, Ho, Wo). ncnn's blobs
// without a batch, X (C, H, W) and Grid (Ho, Wo, 2), are the case N = 1.
// Params: 0=sample_type (1 bilinear, 2 nearest (ties to even), 3 bicubic with
// A = -0.75), 1=padding_mode (1 zeros, 2 border, 3 reflection),
// 2=align_corner (1: -1 and 1 are the centers of the corner pixels; 0: their
// outer edges), 3=permute_fusion (0; ncnn's 1, a grid stored (2, Ho, Wo), is
// not read yet).
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
        // ncnn's codes count from 1.
        mode_ = pd.get_int(0, Bilinear + 1) - 1;
        check(mode_ >= Bilinear && mode_ <= Bicubic, "sample_type (param 0) must be 1, 2 or 3, got ", mode_ + 1);
        padding_ = pd.get_int(1, Zeros + 1) - 1;
        check(padding_ >= Zeros && padding_ <= Reflection, "padding_mode (param 1) must be 1, 2 or 3, got ", padding_ + 1);
        align_ = pd.get_int(2, 0) != 0;
        check(pd.get_int(3, 0) == 0, "permute_fusion (param 3) 1 is not supported yet");
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        expect_f32(in[0], "X (input 0)");
        expect_f32(in[1], "grid (input 1)");
        const Shape x = with_batch(in[0].shape), g = with_batch(in[1].shape);
        check(x.size() == 4 && x[2] > 0 && x[3] > 0, "X (input 0) must be (N, C, H, W) or (C, H, W) with H, W > 0, got ",
              shape_str(in[0].shape));
        check(g.size() == 4 && g[0] == x[0] && g[3] == 2, "grid (input 1) must be (", x[0], ", H_out, W_out, 2), got ",
              shape_str(in[1].shape));
        Shape y = {x[0], x[1], g[1], g[2]};
        if (in[0].shape.size() == 3) y.erase(y.begin());
        out[0] = TensorDesc(y);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape x = with_batch(in[0].shape()), g = with_batch(in[1].shape());
        const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
        const int64_t points = g[1] * g[2];
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
    // ncnn's batch-less blobs as a batch of one.
    static Shape with_batch(Shape s)
    {
        if (s.size() == 3) s.insert(s.begin(), 1);
        return s;
    }

    int mode_ = Bilinear, padding_ = Zeros;
    bool align_ = false;
};

} // namespace

std::unique_ptr<Op> make_grid_sample() { return std::make_unique<GridSample>(); }

} // namespace kestrel
