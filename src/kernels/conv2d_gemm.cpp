#include "kernels/conv2d_gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

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

bool conv2d_gemm_wants_wide_rows(const GemmKernel& kern, const Conv2dGemmGeometry& g)
{
    return g.stride_h == 1 && g.stride_w == 1 && g.in_w > g.out_w && g.outch_g <= 2 * kern.mr;
}

bool conv2d_gemm_wants_split_columns(const Conv2dGemmGeometry& g)
{
    return g.stride_w == 2 && g.dilation_w == 1;
}

void conv2d_gemm_input_row(const Conv2dGemmGeometry& g, const float* src, int64_t w, int64_t pad_left, float pad,
                           float* dst)
{
    const auto padded = [&](int64_t x) { return x >= pad_left && x < pad_left + w ? src[x - pad_left] : pad; };
    if (!g.split_columns) {
        std::fill(dst, dst + pad_left, pad);
        std::memcpy(dst + pad_left, src, sizeof(float) * w);
        std::fill(dst + pad_left + w, dst + g.in_w, pad);
        return;
    }
    const int64_t evens = (g.in_w + 1) / 2, odds = g.in_w / 2;
    float* even = dst;
    float* odd = dst + evens;
    // Pairs (2i, 2i+1) inside src in one loop (vectorized: a load feeds both
    // halves); the pads and an odd end value by value.
    const int64_t first = (pad_left + 1) / 2, end = std::max(first, std::min(odds, (pad_left + w) / 2));
    for (int64_t i = 0; i < first; ++i) even[i] = padded(2 * i), odd[i] = padded(2 * i + 1);
    const float* s = src + (2 * first - pad_left);
    for (int64_t t = 0; t < end - first; ++t) {
        even[first + t] = s[2 * t];
        odd[first + t] = s[2 * t + 1];
    }
    for (int64_t i = end; i < evens; ++i) even[i] = padded(2 * i);
    for (int64_t i = end; i < odds; ++i) odd[i] = padded(2 * i + 1);
}

// Reading in place saves the packing but reads each tap's row from the input
// for every panel of A: worth it when the rows are few enough to stay in L1
// (a first layer).
bool conv2d_gemm_reads_in_place(int64_t depth) { return depth <= 160; }

namespace {

// Columns [col0, col0+cols) of one group's image-to-column matrix, as panels of
// nr pixels: panel[r*nr + j] = x[ic][oy*sh + ky*dh][ox*sw + kx*dw] for row
// r = (ic*kh + ky)*kw + kx and pixel col0 + j = oy*out_w + ox. A panel's pixels
// are copied in runs along one output row (a memcpy when the columns a tap
// reads are contiguous), or read in place by the GEMM tile when that is cheaper.
class ColumnPacker {
public:
    ColumnPacker(const Conv2dGemmGeometry& g, int nr, const float* x)
        : g_(g), nr_(nr), x_(x), step_(g.split_columns ? 1 : g.stride_w)
    {
        for (int64_t ic = 0; ic < g.inch_g; ++ic)
            for (int64_t ky = 0; ky < g.kh; ++ky)
                for (int64_t kx = 0; kx < g.kw; ++kx)
                    row_offset_.push_back((ic * g.in_h + ky * g.dilation_h) * g.in_w + g.column(kx * g.dilation_w));
        last_offset_ = row_offset_.empty() ? 0 : *std::max_element(row_offset_.begin(), row_offset_.end());
        in_place_ = step_ == 1 && conv2d_gemm_reads_in_place(g.depth());
    }

    void operator()(int64_t col0, int64_t cols, int64_t k0, int64_t kc, float* dst) const
    {
        for (int64_t j0 = 0; j0 < cols; j0 += nr_, dst += nr_ * kc)
            pack_panel(col0 + j0, std::min<int64_t>(nr_, cols - j0), k0, kc, dst);
    }

    // A 1x1 stride-1 kernel over an unpadded plane: B is the input itself,
    // row ic at x + ic * plane (whole panels: a partial one would read past it).
    // Otherwise, for shallow GEMMs, a panel within one output row: row r of
    // it starts at x + row_offset[r] + the pixel's place.
    bool direct(int64_t col, int64_t cols, GemmPanel& panel) const
    {
        const bool pointwise = g_.kh == 1 && g_.kw == 1 && g_.stride_h == 1 && g_.stride_w == 1 &&
                               g_.in_h == g_.out_h && g_.in_w == g_.out_w;
        const int64_t plane = g_.in_h * g_.in_w;
        if (g_.wide_rows) { // the panel read in place unless it runs past the input
            panel = GemmPanel{x_ + col, 0, row_offset_.data()};
            return col + last_offset_ + nr_ <= g_.inch_g * plane;
        }
        if (pointwise) {
            panel = GemmPanel{x_ + col, plane};
            return cols == nr_ && gemm_direct_b_ok(plane, g_.depth());
        }
        const int64_t oy = col / g_.out_w, ox = col % g_.out_w;
        const int64_t start = oy * g_.stride_h * g_.in_w + ox;
        // The tile reads nr columns of every row: they must lie in the group's planes.
        if (!in_place_ || ox + cols > g_.out_w || start + last_offset_ + nr_ > g_.inch_g * plane) return false;
        panel = GemmPanel{x_ + start, 0, row_offset_.data()};
        return true;
    }

private:
    struct Run {
        int64_t j, len, src; // panel column, pixels, offset in the input plane
    };

    static constexpr int64_t kShortRun = 16;

    // Rows [k0, k0 + kc) of the panel.
    void pack_panel(int64_t pixel0, int64_t valid, int64_t k0, int64_t kc, float* dst) const
    {
        if (g_.wide_rows) return pack_wide_panel(pixel0, valid, k0, kc, dst);
        Run runs[64]; // a panel crosses at most nr output rows
        int n_runs = 0;
        for (int64_t j = 0; j < valid;) {
            const int64_t p = pixel0 + j, oy = p / g_.out_w, ox = p % g_.out_w;
            const int64_t len = std::min(valid - j, g_.out_w - ox);
            runs[n_runs++] = Run{j, len, oy * g_.stride_h * g_.in_w + ox * step_};
            j += len;
        }
        for (int64_t r = 0; r < kc; ++r) {
            float* d = dst + r * nr_;
            const float* plane = x_ + row_offset_[static_cast<size_t>(k0 + r)];
            for (int i = 0; i < n_runs; ++i) {
                const Run& run = runs[i];
                const float* s = plane + run.src;
                if (step_ == 1 && run.len <= kShortRun) // a small plane's row: no call per run
                    for (int64_t t = 0; t < run.len; ++t) d[run.j + t] = s[t];
                else if (step_ == 1)
                    std::memcpy(d + run.j, s, sizeof(float) * run.len);
                else if (step_ == 2) // a constant stride: the compiler vectorizes it with shuffles
                    for (int64_t t = 0; t < run.len; ++t) d[run.j + t] = s[2 * t];
                else
                    for (int64_t t = 0; t < run.len; ++t) d[run.j + t] = s[t * step_];
            }
            std::fill(d + valid, d + nr_, 0.f);
        }
    }

    // A wide-rows panel past the direct ones: each row's contiguous run, as
    // far as the input goes (0 after it, in columns that are dropped).
    void pack_wide_panel(int64_t pixel0, int64_t valid, int64_t k0, int64_t kc, float* dst) const
    {
        const int64_t end = g_.inch_g * g_.in_h * g_.in_w;
        for (int64_t r = 0; r < kc; ++r) {
            const int64_t at = row_offset_[static_cast<size_t>(k0 + r)] + pixel0;
            const int64_t n = std::max<int64_t>(0, std::min(valid, end - at));
            float* d = dst + r * nr_;
            std::copy(x_ + at, x_ + at + n, d);
            std::fill(d + n, d + nr_, 0.f);
        }
    }

    const Conv2dGemmGeometry& g_;
    int64_t nr_;
    const float* x_;
    int64_t step_; // input columns from one output column to the next
    std::vector<int64_t> row_offset_;
    int64_t last_offset_ = 0;
    bool in_place_ = false;
};

} // namespace

namespace {

// One group's GEMM (threads from ctx), its wide rows copied out into the planes.
void conv2d_gemm_group(const GemmKernel& kern, const Conv2dGemmGeometry& g, int64_t grp, const float* packed_weights,
                       const float* x, const float* bias, float* y,
                       const std::function<void(int64_t, float*, int64_t)>& post, const ParallelContext& ctx,
                       const float* clamp, float* wide)
{
    const int64_t k = g.depth(), pixels = g.out_h * g.out_w;
    const int64_t panels = (g.outch_g + kern.mr - 1) / kern.mr;
    // With wide rows the GEMM's columns are the wide ones, into `wide`.
    const int64_t columns = g.wide_rows ? g.wide_columns() : pixels;
    const ColumnPacker pack(g, kern.nr, x + grp * g.inch_g * g.in_h * g.in_w);
    const int64_t oc0 = grp * g.outch_g;
    float* c = g.wide_rows ? wide : y + oc0 * pixels;
    gemm_f32(kern, g.outch_g, columns, k, packed_weights + grp * panels * kern.mr * k,
             bias ? GemmStart::RowInit : GemmStart::Zero, bias ? bias + oc0 : nullptr, c, columns, pack,
             [&](int64_t row, float* values, int64_t count) {
                 if (post && !g.wide_rows) post(oc0 + row, values, count);
             },
             ctx, clamp);
    if (!g.wide_rows) return;
    // The wide rows' outputs into the planes, then post over each plane.
    ctx.parallel_for(g.outch_g, [&](int64_t begin, int64_t end) {
        for (int64_t oc = begin; oc < end; ++oc) {
            float* plane = y + (oc0 + oc) * pixels;
            for (int64_t oy = 0; oy < g.out_h; ++oy)
                std::memcpy(plane + oy * g.out_w, c + oc * columns + oy * g.in_w, sizeof(float) * g.out_w);
            if (post) post(oc0 + oc, plane, pixels);
        }
    });
}

} // namespace

bool conv2d_gemm_groups_in_parallel(const Conv2dGemmGeometry& g, int threads)
{
    return threads > 1 && g.groups >= threads && (g.groups % threads == 0 || g.groups >= 4 * threads);
}

void conv2d_gemm(const GemmKernel& kern, const Conv2dGemmGeometry& g, const float* packed_weights, const float* x,
                 const float* bias, float* y, const std::function<void(int64_t, float*, int64_t)>& post,
                 const ParallelContext& ctx, const float* clamp, float* wide)
{
    const bool own_wide_rows = g.wide_rows && wide == nullptr;
    if (!conv2d_gemm_groups_in_parallel(g, ctx.threads()) && !own_wide_rows) {
        for (int64_t grp = 0; grp < g.groups; ++grp)
            conv2d_gemm_group(kern, g, grp, packed_weights, x, bias, y, post, ctx, clamp, wide);
        return;
    }
    // Groups dealt to the threads, each group on one thread: one hand-off for
    // the layer instead of one per group, and no group split in slivers. (Also
    // the way for wide rows without scratch: prepared for more threads.)
    const int64_t wide_floats = g.wide_rows ? g.outch_g * g.wide_columns() : 0;
    const ParallelContext one_thread(nullptr, 1);
    ctx.parallel_for(g.groups, [&](int64_t begin, int64_t end) {
        // The thread's own wide rows (`wide` is one group's), kept from call to call.
        thread_local std::vector<float> own_wide;
        if (own_wide.size() < static_cast<size_t>(wide_floats)) own_wide.resize(static_cast<size_t>(wide_floats));
        for (int64_t grp = begin; grp < end; ++grp)
            conv2d_gemm_group(kern, g, grp, packed_weights, x, bias, y, post, one_thread, clamp, own_wide.data());
    });
}

} // namespace kestrel
