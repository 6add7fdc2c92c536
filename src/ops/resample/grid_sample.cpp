// GridSample (ncnn's params; ONNX's GridSample): Y[n, c, i, j] samples X
// (N, C, H, W) float32 at the normalized point Grid[n, i, j] = (x, y) in
// [-1, 1] (Grid (N, Ho, Wo, 2) float32); Y is (N, C, Ho, Wo). Volumes too:
// X (N, C, D, H, W) at Grid (N, Do, Ho, Wo, 3) = (x, y, z) gives
// (N, C, Do, Ho, Wo). ncnn's blobs without a batch, X (C, H, W) or
// (C, D, H, W) and Grid (Ho, Wo, 2) or (Do, Ho, Wo, 3), are the case N = 1.
// Params: 0=sample_type (1 bilinear (trilinear for volumes), 2 nearest, 3
// bicubic with A = -0.75, planes only, as in ncnn), 1=padding_mode (1 zeros,
// 2 border, 3 reflection), 2=align_corner (1: -1 and 1 are the centers of the
// corner pixels; 0: their outer edges), 3=permute_fusion (ncnn's 1: the grid
// stored coordinate-major, (2, Ho, Wo) or (3, Do, Ho, Wo), no batch),
// 20=1 ONNX's form: nearest rounds halves to even as ONNX does; ncnn rounds
// them up (floor(v + 0.5)).
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

// One (n, c) image plane (d = 1) or volume with the sampling rules.
struct Plane {
    const float* data;
    int64_t h, w;
    int padding;
    bool align;
    int64_t d = 1;
    bool round_half_even = true;

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

    float round(float v) const { return round_half_even ? std::nearbyint(v) : std::floor(v + 0.5f); }

    float nearest(float y, float x) const { return at(round(pad(y, h)), round(pad(x, w))); }

    // A volume's voxel at integral coordinates; 0 outside.
    float at(float z, float y, float x) const
    {
        if (!(z >= 0.f && z < static_cast<float>(d))) return 0.f;
        return Plane{data + static_cast<int64_t>(z) * h * w, h, w, padding, align}.at(y, x);
    }

    float trilinear(float z, float y, float x) const
    {
        z = pad(z, d);
        y = pad(y, h);
        x = pad(x, w);
        const float z0 = std::floor(z), y0 = std::floor(y), x0 = std::floor(x);
        const float lz = z - z0, ly = y - y0, lx = x - x0;
        auto row = [&](float zz, float yy) { return (1 - lx) * at(zz, yy, x0) + lx * at(zz, yy, x0 + 1); };
        auto slice = [&](float zz) { return (1 - ly) * row(zz, y0) + ly * row(zz, y0 + 1); };
        return (1 - lz) * slice(z0) + lz * slice(z0 + 1);
    }

    float nearest(float z, float y, float x) const { return at(round(pad(z, d)), round(pad(y, h)), round(pad(x, w))); }

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
        coordinate_major_ = pd.get_int(3, 0) != 0;
        onnx_ = pd.get_int(20, 0) == 1;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        expect_f32(in[0], "X (input 0)");
        expect_f32(in[1], "grid (input 1)");
        const Layout l = layout(in[0].shape, in[1].shape);
        Shape y = {l.n, l.c};
        y.insert(y.end(), l.out.begin(), l.out.end());
        if (!l.batched) y.erase(y.begin());
        out[0] = TensorDesc(y);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Layout l = layout(in[0].shape(), in[1].shape());
        const int64_t k = static_cast<int64_t>(l.in.size()); // coordinates per point
        const int64_t h = l.in[k - 2], w = l.in[k - 1], depth = k == 3 ? l.in[0] : 1;
        const int64_t points = shape_numel(l.out);
        // Where coordinate i of point p is: interleaved (x, y[, z]) per point, or coordinate-major.
        const int64_t point_step = coordinate_major_ ? 1 : k, coord_step = coordinate_major_ ? points : 1;
        ctx.parallel_for(l.n * l.c, [&](int64_t begin, int64_t end) {
            for (int64_t nc = begin; nc < end; ++nc) {
                Plane p{in[0].data<float>() + nc * depth * h * w, h, w, padding_, align_, depth, onnx_};
                const float* grid = in[1].data<float>() + nc / l.c * points * k;
                float* y = out[0].data<float>() + nc * points;
                for (int64_t q = 0; q < points; ++q) {
                    const float* g = grid + q * point_step;
                    const float sx = p.unnormalize(g[0], w), sy = p.unnormalize(g[coord_step], h);
                    if (k == 3) {
                        const float sz = p.unnormalize(g[2 * coord_step], depth);
                        y[q] = mode_ == Bilinear ? p.trilinear(sz, sy, sx) : p.nearest(sz, sy, sx);
                    } else {
                        y[q] = mode_ == Bilinear ? p.bilinear(sy, sx) : mode_ == Nearest ? p.nearest(sy, sx) : p.bicubic(sy, sx);
                    }
                }
            }
        });
    }

private:
    // The shapes read: batch n, channels c, the input's spatial dims and the
    // output's (2 or 3 of each), and whether the tensors carry the batch.
    struct Layout {
        int64_t n = 1, c = 0;
        Shape in, out;
        bool batched = false;
    };

    Layout layout(const Shape& x, const Shape& g) const
    {
        check(!g.empty(), "grid (input 1) must not be a scalar");
        const int64_t k = coordinate_major_ ? g[0] : g.back(); // coordinates per point
        check(k == 2 || k == 3, "grid (input 1) ", shape_str(g), " must hold 2 (x, y) or 3 (x, y, z) coordinates per point",
              coordinate_major_ ? " in its first dim (permute_fusion, param 3)" : " in its last dim");
        const size_t rank = static_cast<size_t>(k) + 1; // without the batch
        Layout l;
        l.batched = x.size() == rank + 1 && !coordinate_major_;
        check(x.size() == rank || l.batched, "X (input 0) must be ", k == 2 ? "(N, C, H, W) or (C, H, W)" : "(N, C, D, H, W) or (C, D, H, W)",
              " for ", k, "-coordinate grids, got ", shape_str(x));
        const size_t skip = l.batched ? 1 : 0;
        l.n = l.batched ? x[0] : 1;
        l.c = x[skip];
        l.in.assign(x.begin() + static_cast<std::ptrdiff_t>(skip) + 1, x.end());
        for (int64_t v : l.in) check(v > 0, "X (input 0) ", shape_str(x), " has an empty spatial dim");
        check(g.size() == rank + skip && (!l.batched || g[0] == l.n), "grid (input 1) must be ",
              coordinate_major_ ? "(k, [D_out,] H_out, W_out)" : "([N,] [D_out,] H_out, W_out, k)", " for X ",
              shape_str(x), ", got ", shape_str(g));
        l.out = coordinate_major_ ? Shape(g.begin() + 1, g.end()) : Shape(g.begin() + static_cast<std::ptrdiff_t>(skip), g.end() - 1);
        check(k == 2 || mode_ != Bicubic, "bicubic sampling (sample_type 3) takes planes only, not volumes");
        return l;
    }

    int mode_ = Bilinear, padding_ = Zeros;
    bool align_ = false;
    bool coordinate_major_ = false; // ncnn's permute_fusion
    bool onnx_ = false;
};

} // namespace

std::unique_ptr<Op> make_grid_sample() { return std::make_unique<GridSample>(); }

} // namespace kestrel
