// The GEMM microkernels (kernels/gemm.h) and the convolution built on them
// (kernels/conv2d_gemm.h), for every kernel this CPU runs, against sums in
// double written here: tails of every size, blocks, groups, strides,
// dilations; results bit-identical at any thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/conv2d_gemm.h"
#include "kernels/gemm.h"
#include "reference_conv.h"

namespace kestrel {
namespace {

std::vector<float> random_values(int64_t n, uint32_t seed) { return conv_test::random_vector(n, seed); }

ThreadPool& pool()
{
    static ThreadPool p(3);
    return p;
}

// B (k x n, row-major) packed the way gemm_f32 asks for, or (in_place) read
// where it lies: at row stride n, or (row_offsets) through one offset per row
// into `reversed`, B's rows stored last first.
struct RowMajorPacker {
    const std::vector<float>& b;
    int64_t k, n, nr;
    bool in_place;
    const std::vector<float>* reversed = nullptr;
    std::vector<int64_t> row_offsets;
    bool direct(int64_t col, int64_t cols, GemmPanel& panel) const
    {
        if (!in_place || cols != nr) return false;
        panel = reversed ? GemmPanel{reversed->data() + col, 0, row_offsets.data()} : GemmPanel{b.data() + col, n};
        return true;
    }
    void operator()(int64_t col0, int64_t cols, int64_t k0, int64_t kc, float* dst) const
    {
        for (int64_t j0 = 0; j0 < cols; j0 += nr, dst += nr * kc)
            for (int64_t kk = 0; kk < kc; ++kk)
                for (int64_t j = 0; j < nr; ++j)
                    dst[kk * nr + j] = j0 + j < cols ? b[(k0 + kk) * n + col0 + j0 + j] : 0.f;
    }
};

// Where the tile finds B: packed per call, read in place (rows at a stride or
// at offsets), or packed once.
enum class BSource { Packed, InPlace, RowOffsets, Prepacked };

struct GemmRun {
    std::vector<float> c;       // m x ldc
    std::vector<int> post_seen; // m x n: times post() covered the element
};

// With GemmStart::C, C starts as c_start (m x n) and NaN past n.
GemmRun run_gemm(const GemmKernel& kern, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldc,
                 const std::vector<float>& a, const std::vector<float>& b, GemmStart start, const float* init,
                 const std::vector<float>& c_start, int threads, BSource source = BSource::Packed,
                 const float* clamp = nullptr)
{
    const std::vector<float> packed = gemm_pack_a(kern, a.data(), m, k, lda);
    GemmRun r;
    r.c.assign(static_cast<size_t>(m * ldc), std::numeric_limits<float>::quiet_NaN());
    if (start == GemmStart::C)
        for (int64_t i = 0; i < m; ++i) std::copy(&c_start[i * n], &c_start[i * n] + n, &r.c[i * ldc]);
    r.post_seen.assign(static_cast<size_t>(m * n), 0);
    float* c = r.c.data();
    std::vector<int>& seen = r.post_seen;
    const auto post = [&](int64_t row, float* values, int64_t count) {
        const int64_t col0 = values - (c + row * ldc);
        for (int64_t j = 0; j < count; ++j) ++seen[row * n + col0 + j]; // tasks own disjoint pieces
    };
    const ExecContext ctx(threads > 1 ? &pool() : nullptr, threads);
    RowMajorPacker packer{b, k, n, kern.nr, source == BSource::InPlace || source == BSource::RowOffsets, nullptr, {}};
    std::vector<float> reversed;
    if (source == BSource::RowOffsets) {
        for (int64_t kk = k - 1; kk >= 0; --kk) reversed.insert(reversed.end(), &b[kk * n], &b[kk * n] + n);
        for (int64_t kk = 0; kk < k; ++kk) packer.row_offsets.push_back((k - 1 - kk) * n);
        packer.reversed = &reversed;
    }
    if (source == BSource::Prepacked) {
        const std::vector<float> panels = gemm_pack_b(kern, n, k, packer);
        gemm_f32(kern, m, n, k, packed.data(), start, init, c, ldc, GemmPackedB{panels.data(), k, kern.nr}, post, ctx,
                 clamp);
    } else {
        gemm_f32(kern, m, n, k, packed.data(), start, init, c, ldc, packer, post, ctx, clamp);
    }
    return r;
}

void check_gemm_run(const GemmKernel& kern, int64_t m, int64_t n, int64_t k, GemmStart start, uint32_t seed,
                    BSource source, const float* clamp = nullptr)
{
    SCOPED_TRACE(::testing::Message() << kern.isa << " m=" << m << " n=" << n << " k=" << k
                                      << " start=" << static_cast<int>(start) << " B source " << static_cast<int>(source) << (clamp ? " clamped" : ""));
    const int64_t lda = k + 3, ldc = n + 2; // strides wider than the rows
    const std::vector<float> a = random_values(m * lda, seed), b = random_values(k * n, seed + 1);
    const std::vector<float> init = random_values(m, seed + 2), c_start = random_values(m * n, seed + 3);
    const GemmRun r = run_gemm(kern, m, n, k, lda, ldc, a, b, start, init.data(), c_start, 1, source, clamp);
    int bad = 0;
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            double want = start == GemmStart::RowInit ? init[i] : start == GemmStart::C ? c_start[i * n + j] : 0.0;
            double scale = std::fabs(want);
            for (int64_t kk = 0; kk < k; ++kk) {
                want += static_cast<double>(a[i * lda + kk]) * b[kk * n + j];
                scale += std::fabs(static_cast<double>(a[i * lda + kk]) * b[kk * n + j]);
            }
            if (clamp) want = std::min(std::max(want, double(clamp[0])), double(clamp[1]));
            const float got = r.c[i * ldc + j];
            if (!(std::fabs(got - want) <= 1e-6 * (scale + 1.0)) && ++bad <= 5)
                ADD_FAILURE() << "c[" << i << "][" << j << "] = " << got << ", expected " << want;
            EXPECT_EQ(r.post_seen[i * n + j], 1) << "post() at [" << i << "][" << j << "]";
        }
        for (int64_t j = n; j < ldc; ++j) EXPECT_TRUE(std::isnan(r.c[i * ldc + j])) << "wrote past row " << i;
    }
    EXPECT_EQ(bad, 0);
}

// B from every source, and the values clamped as they are stored.
void check_gemm_case(const GemmKernel& kern, int64_t m, int64_t n, int64_t k, GemmStart start, uint32_t seed)
{
    const float clamp[2] = {-0.3f, 0.4f};
    for (BSource source : {BSource::Packed, BSource::InPlace, BSource::RowOffsets, BSource::Prepacked})
        check_gemm_run(kern, m, n, k, start, seed, source);
    check_gemm_run(kern, m, n, k, start, seed, BSource::Packed, clamp);
}

TEST(Gemm, EveryKernelMatchesDoubleSumsOnTilesAndTails)
{
    uint32_t seed = 1;
    int cases = 0;
    for (const GemmKernel* kern : gemm_kernels_available()) {
        const int64_t mr = kern->mr, nr = kern->nr;
        // Rows for each tile height: the short tiles' (exactly and partly), the full one's.
        const int64_t fewest = kern->short_tiles[0].rows, fewer = kern->short_tiles[1].rows;
        for (int64_t m : {int64_t{1}, fewest + 1, fewer, mr - 1, mr, mr + 1, 2 * mr + 3})
            for (int64_t n : {int64_t{1}, nr / 2 + 1, nr - 1, nr, nr + 1, 3 * nr + 5})
                for (int64_t k : {1, 7, 64}) {
                    seed += 3;
                    check_gemm_case(*kern, m, n, k, static_cast<GemmStart>((cases + cases / 3) % 3), seed);
                    ++cases;
                }
        // More columns than one packed block holds.
        for (GemmStart start : {GemmStart::RowInit, GemmStart::C})
            check_gemm_case(*kern, 2 * mr + 1, gemm_block_cols(*kern, 40) * 2 + 5, 40, start, seed += 3);
        // A depth of several chunks (each sum continued from the stored C).
        for (GemmStart start : {GemmStart::Zero, GemmStart::RowInit, GemmStart::C})
            {
                const int64_t m = 60 * mr + 2, k = 2 * gemm_depth_chunk(m, 1 << 20) + 77; // A larger than L2
                ASSERT_LT(gemm_depth_chunk(m, k), k);
                check_gemm_case(*kern, m, nr + 3, k, start, seed += 3);
            }
    }
    EXPECT_GE(cases, 90);
}

TEST(Gemm, ResultsAreBitIdenticalAtAnyThreadCount)
{
    for (const GemmKernel* kern : gemm_kernels_available()) {
        SCOPED_TRACE(kern->isa);
        const int64_t m = 60 * kern->mr + 3, k = gemm_depth_chunk(m, 1 << 20) + 150; // chunked depth
        const int64_t n = gemm_block_cols(*kern, gemm_depth_chunk(m, k)) + 3 * kern->nr + 1;
        const std::vector<float> a = random_values(m * k, 11), b = random_values(k * n, 12), init = random_values(m, 13);
        const GemmRun one = run_gemm(*kern, m, n, k, k, n, a, b, GemmStart::RowInit, init.data(), {}, 1);
        for (int threads : {2, 3, 4}) {
            const GemmRun many = run_gemm(*kern, m, n, k, k, n, a, b, GemmStart::RowInit, init.data(), {}, threads);
            EXPECT_EQ(0, std::memcmp(one.c.data(), many.c.data(), one.c.size() * sizeof(float))) << threads;
        }
        // Reading B in place (at a stride or at row offsets) or packed once gives
        // the same bits as packing it per call.
        for (BSource source : {BSource::InPlace, BSource::RowOffsets, BSource::Prepacked}) {
            const GemmRun other = run_gemm(*kern, m, n, k, k, n, a, b, GemmStart::RowInit, init.data(), {}, 2, source);
            EXPECT_EQ(0, std::memcmp(one.c.data(), other.c.data(), one.c.size() * sizeof(float)));
        }
    }
}

TEST(Gemm, TheChosenKernelIsTheBestAvailable)
{
    const std::vector<const GemmKernel*> all = gemm_kernels_available();
    ASSERT_FALSE(all.empty());
    EXPECT_STREQ(all.front()->isa, "generic");
    EXPECT_EQ(&gemm_kernel(), all.back());
}

// ---------------------------------------------------------------- conv2d_gemm

struct ConvGemmCase {
    int64_t groups, inch_g, outch_g, h, w, kh, kw, sh, sw, dh, dw;
};

// With split_columns, x's rows go to conv2d_gemm laid out as conv2d_gemm_input_row makes them.
void check_conv_gemm(const GemmKernel& kern, const ConvGemmCase& c, uint32_t seed, int threads,
                     bool split_columns = false, bool wide_rows = false, bool wide_scratch = true)
{
    SCOPED_TRACE(::testing::Message() << kern.isa << " groups=" << c.groups << " inch_g=" << c.inch_g << " outch_g="
                                      << c.outch_g << " in=" << c.h << "x" << c.w << " k=" << c.kh << "x" << c.kw
                                      << " s=" << c.sh << "x" << c.sw << " d=" << c.dh << "x" << c.dw
                                      << " threads=" << threads << (split_columns ? " split columns" : "")
                                      << (wide_rows ? " wide rows" : "") << (wide_scratch ? "" : " own wide rows"));
    Conv2dGemmGeometry g;
    g.groups = c.groups, g.inch_g = c.inch_g, g.outch_g = c.outch_g, g.in_h = c.h, g.in_w = c.w;
    g.kh = c.kh, g.kw = c.kw, g.stride_h = c.sh, g.stride_w = c.sw, g.dilation_h = c.dh, g.dilation_w = c.dw;
    g.out_h = (c.h - (c.kh - 1) * c.dh - 1) / c.sh + 1;
    g.out_w = (c.w - (c.kw - 1) * c.dw - 1) / c.sw + 1;
    const int64_t inch = c.groups * c.inch_g, outch = c.groups * c.outch_g;
    const std::vector<float> x = random_values(inch * c.h * c.w, seed);
    const std::vector<float> wt = random_values(outch * g.depth(), seed + 1), bias = random_values(outch, seed + 2);
    const std::vector<float> packed = conv2d_gemm_pack_weights(kern, wt.data(), g);
    std::vector<float> laid_out = x;
    g.split_columns = split_columns;
    for (int64_t row = 0; row < inch * c.h; ++row)
        conv2d_gemm_input_row(g, &x[row * c.w], c.w, 0, 0.f, &laid_out[row * c.w]);
    std::vector<float> y(static_cast<size_t>(outch * g.out_h * g.out_w), std::numeric_limits<float>::quiet_NaN());
    g.wide_rows = wide_rows;
    std::vector<float> wide(static_cast<size_t>(wide_rows ? c.outch_g * g.wide_columns() : 0));
    conv2d_gemm(kern, g, packed.data(), laid_out.data(), bias.data(), y.data(),
                [](int64_t, float* v, int64_t n) {
                    for (int64_t i = 0; i < n; ++i) v[i] = std::max(v[i], 0.f);
                },
                ExecContext(threads > 1 ? &pool() : nullptr, threads), nullptr, wide_scratch ? wide.data() : nullptr);

    const conv_test::ConvWindow win{c.kh, c.kw, c.sh, c.sw, c.dh, c.dw, 0, 0, 0, 0};
    std::vector<double> want, scale;
    const Shape shape = conv_test::naive_conv(
        inch, c.h, c.w, outch, c.groups, win, [&](int64_t oc) { return std::pair<double, double>(bias[oc], 0.0); },
        [&](std::pair<double, double>& s, int64_t, int64_t xi, int64_t wi) {
            s.first += static_cast<double>(x[xi]) * wt[wi];
            s.second += std::fabs(static_cast<double>(x[xi]) * wt[wi]);
        },
        [&](int64_t, const std::pair<double, double>& s) {
            want.push_back(std::max(s.first, 0.0));
            scale.push_back(s.second);
        });
    ASSERT_EQ(shape, (Shape{outch, g.out_h, g.out_w}));
    int bad = 0;
    for (size_t i = 0; i < y.size(); ++i)
        if (!(std::fabs(y[i] - want[i]) <= 1e-6 * (scale[i] + 1.0)) && ++bad <= 5)
            ADD_FAILURE() << "y[" << i << "] = " << y[i] << ", expected " << want[i];
    EXPECT_EQ(bad, 0);
}

TEST(Conv2dGemm, EveryKernelMatchesTheNaiveConvolution)
{
    const ConvGemmCase cases[] = {
        {1, 3, 16, 9, 11, 3, 3, 1, 1, 1, 1},  // 3x3, rows of 9 output pixels cut across panels
        {1, 8, 13, 12, 12, 1, 1, 1, 1, 1, 1}, // 1x1: B is the input itself
        {1, 5, 7, 13, 10, 3, 2, 2, 3, 1, 1},  // strides: strided runs
        {1, 4, 20, 14, 15, 3, 3, 1, 1, 2, 3}, // dilations
        {2, 3, 6, 8, 9, 3, 3, 1, 2, 1, 1},    // groups
        {1, 2, 9, 40, 1, 3, 1, 1, 1, 1, 1},   // one output column: a run per pixel
        {1, 16, 33, 30, 30, 3, 3, 1, 1, 1, 1}, // more than one column block
        // Shallow (first-layer) kernels on rows wider than a panel: B read in place.
        {1, 3, 8, 10, 70, 3, 3, 1, 1, 1, 1},
        {1, 3, 16, 21, 81, 3, 3, 2, 2, 1, 1},
        {1, 3, 20, 19, 90, 7, 7, 2, 2, 1, 1},
        {1, 6, 12, 9, 100, 1, 1, 2, 2, 1, 1},
        // Grouped layers of 8 channels on small planes (regnet's): wide rows.
        {5, 8, 8, 9, 9, 3, 3, 1, 1, 1, 1},
        {3, 8, 8, 30, 30, 3, 3, 1, 1, 1, 1},
        {4, 8, 8, 11, 9, 3, 3, 1, 1, 1, 1}, // groups dealt to 2 threads
    };
    uint32_t seed = 50;
    for (const GemmKernel* kern : gemm_kernels_available())
        for (const ConvGemmCase& c : cases) {
            check_conv_gemm(*kern, c, seed += 5, 1);
            Conv2dGemmGeometry g;
            g.stride_w = c.sw, g.dilation_w = c.dw;
            if (conv2d_gemm_wants_split_columns(g)) check_conv_gemm(*kern, c, seed += 5, 2, true);
            // Wide rows for every stride-1 layer whose rows the kernel narrows.
            // (Prepared for more threads than it runs on, a layer keeps its own.)
            if (c.sh == 1 && c.sw == 1 && (c.kw - 1) * c.dw > 0) {
                check_conv_gemm(*kern, c, seed += 5, 2, false, true);
                check_conv_gemm(*kern, c, seed += 5, 1, false, true, false);
            }
        }
}

TEST(Conv2dGemm, InputRowsArePaddedAndSplitIntoEvenAndOddColumns)
{
    for (bool split : {false, true})
        for (int64_t w : {1, 2, 5, 8, 33})
            for (int64_t pad_left : {0, 1, 2, 3})
                for (int64_t pad_right : {0, 1, 2}) {
                    Conv2dGemmGeometry g;
                    g.in_w = pad_left + w + pad_right, g.split_columns = split;
                    const std::vector<float> src = random_values(w, static_cast<uint32_t>(w + pad_left));
                    std::vector<float> row(static_cast<size_t>(g.in_w), std::numeric_limits<float>::quiet_NaN());
                    conv2d_gemm_input_row(g, src.data(), w, pad_left, -7.f, row.data());
                    for (int64_t x = 0; x < g.in_w; ++x) {
                        const float want = x >= pad_left && x < pad_left + w ? src[x - pad_left] : -7.f;
                        ASSERT_EQ(row[g.column(x)], want) << "split " << split << " w " << w << " pads " << pad_left
                                                          << "," << pad_right << " column " << x;
                    }
                }
}

TEST(Conv2dGemm, ResultsAreBitIdenticalAtAnyThreadCount)
{
    const ConvGemmCase c{1, 16, 40, 30, 30, 3, 3, 1, 1, 1, 1};
    const GemmKernel& kern = gemm_kernel();
    Conv2dGemmGeometry g;
    g.inch_g = c.inch_g, g.outch_g = c.outch_g, g.in_h = c.h, g.in_w = c.w, g.kh = c.kh, g.kw = c.kw;
    g.out_h = c.h - 2, g.out_w = c.w - 2;
    const std::vector<float> x = random_values(c.inch_g * c.h * c.w, 7), wt = random_values(c.outch_g * g.depth(), 8);
    const std::vector<float> packed = conv2d_gemm_pack_weights(kern, wt.data(), g);
    std::vector<std::vector<float>> ys;
    for (int threads : {1, 2, 3}) {
        ys.emplace_back(static_cast<size_t>(c.outch_g * g.out_h * g.out_w));
        conv2d_gemm(kern, g, packed.data(), x.data(), nullptr, ys.back().data(), {},
                    ExecContext(threads > 1 ? &pool() : nullptr, threads));
    }
    EXPECT_EQ(ys[0], ys[1]);
    EXPECT_EQ(ys[0], ys[2]);
    check_conv_gemm(kern, c, 9, 3); // and right
}

} // namespace
} // namespace kestrel
