#include "kernels/conv2d_gemm.h"

#include <cstring>

namespace kestrel {

int64_t conv2d_gemm_packed_floats(const GemmKernel& kern, const Conv2dGemmGeometry& g)
{
    return g.groups * gemm_packed_a_floats(kern, g.outch_g, g.depth());
}

void conv2d_gemm_pack_weights_into(const GemmKernel& kern, const float* weights, const Conv2dGemmGeometry& g,
                                   float* dst)
{
    const int64_t k = g.depth(), per_group = gemm_packed_a_floats(kern, g.outch_g, k);
    for (int64_t grp = 0; grp < g.groups; ++grp)
        gemm_pack_a_into(kern, weights + grp * g.outch_g * k, g.outch_g, k, k, 1, dst + grp * per_group);
}

std::vector<float> conv2d_gemm_pack_weights(const GemmKernel& kern, const float* weights, const Conv2dGemmGeometry& g)
{
    std::vector<float> packed(static_cast<size_t>(conv2d_gemm_packed_floats(kern, g)));
    conv2d_gemm_pack_weights_into(kern, weights, g, packed.data());
    return packed;
}

namespace {

// Columns [col0, col0+cols) of one group's image-to-column matrix, as panels of
// nr pixels: panel[r*nr + j] = x[ic][oy*sh + ky*dh][ox*sw + kx*dw] for row
// r = (ic*kh + ky)*kw + kx and pixel col0 + j = oy*out_w + ox. A panel's pixels
// are copied in runs along one output row (a memcpy when stride_w is 1).
class ColumnPacker {
public:
    ColumnPacker(const Conv2dGemmGeometry& g, int nr, const float* x) : g_(g), nr_(nr), x_(x)
    {
        for (int64_t ic = 0; ic < g.inch_g; ++ic)
            for (int64_t ky = 0; ky < g.kh; ++ky)
                for (int64_t kx = 0; kx < g.kw; ++kx)
                    row_offset_.push_back((ic * g.in_h + ky * g.dilation_h) * g.in_w + kx * g.dilation_w);
    }

    void operator()(int64_t col0, int64_t cols, int64_t k0, int64_t kc, float* dst) const
    {
        for (int64_t j0 = 0; j0 < cols; j0 += nr_, dst += nr_ * kc)
            pack_panel(col0 + j0, std::min<int64_t>(nr_, cols - j0), k0, kc, dst);
    }

    // A 1x1 stride-1 kernel over an unpadded plane: B is the input itself,
    // row ic at x + ic * plane (whole panels: a partial one would read past it).
    const float* direct(int64_t col, int64_t cols, int64_t& ldb) const
    {
        const bool pointwise = g_.kh == 1 && g_.kw == 1 && g_.stride_h == 1 && g_.stride_w == 1 &&
                               g_.in_h == g_.out_h && g_.in_w == g_.out_w;
        ldb = g_.in_h * g_.in_w;
        return pointwise && cols == nr_ && gemm_direct_b_ok(ldb) ? x_ + col : nullptr;
    }

private:
    struct Run {
        int64_t j, len, src; // panel column, pixels, offset in the input plane
    };

    // Rows [k0, k0 + kc) of the panel.
    void pack_panel(int64_t pixel0, int64_t valid, int64_t k0, int64_t kc, float* dst) const
    {
        Run runs[64]; // a panel crosses at most nr output rows
        int n_runs = 0;
        for (int64_t j = 0; j < valid;) {
            const int64_t p = pixel0 + j, oy = p / g_.out_w, ox = p % g_.out_w;
            const int64_t len = std::min(valid - j, g_.out_w - ox);
            runs[n_runs++] = Run{j, len, oy * g_.stride_h * g_.in_w + ox * g_.stride_w};
            j += len;
        }
        const int64_t sw = g_.stride_w;
        for (int64_t r = 0; r < kc; ++r) {
            float* d = dst + r * nr_;
            const float* plane = x_ + row_offset_[static_cast<size_t>(k0 + r)];
            for (int i = 0; i < n_runs; ++i) {
                const Run& run = runs[i];
                const float* s = plane + run.src;
                if (sw == 1)
                    std::memcpy(d + run.j, s, sizeof(float) * run.len);
                else if (sw == 2) // a constant stride: the compiler vectorizes it with shuffles
                    for (int64_t t = 0; t < run.len; ++t) d[run.j + t] = s[2 * t];
                else
                    for (int64_t t = 0; t < run.len; ++t) d[run.j + t] = s[t * sw];
            }
            std::fill(d + valid, d + nr_, 0.f);
        }
    }

    const Conv2dGemmGeometry& g_;
    int64_t nr_;
    const float* x_;
    std::vector<int64_t> row_offset_;
};

} // namespace

void conv2d_gemm(const GemmKernel& kern, const Conv2dGemmGeometry& g, const float* packed_weights, const float* x,
                 const float* bias, float* y, const std::function<void(int64_t, float*, int64_t)>& post,
                 const ExecContext& ctx, const float* clamp)
{
    const int64_t k = g.depth(), pixels = g.out_h * g.out_w;
    const int64_t panels = (g.outch_g + kern.mr - 1) / kern.mr;
    for (int64_t grp = 0; grp < g.groups; ++grp) {
        const ColumnPacker pack(g, kern.nr, x + grp * g.inch_g * g.in_h * g.in_w);
        const int64_t oc0 = grp * g.outch_g;
        gemm_f32(kern, g.outch_g, pixels, k, packed_weights + grp * panels * kern.mr * k,
                 bias ? GemmStart::RowInit : GemmStart::Zero, bias ? bias + oc0 : nullptr, y + oc0 * pixels, pixels, pack,
                 [&](int64_t row, float* values, int64_t count) {
                     if (post) post(oc0 + row, values, count);
                 },
                 ctx, clamp);
    }
}

} // namespace kestrel
