// Compute kernels against the machine's FMA peak, measured in the same run
// (issue 18's target 4; docs/benchmarks.md has the recorded figures):
//   BM_FmaPeak        independent fused multiply-adds in the widest vectors
//                     this CPU runs (no memory): the peak the others are a
//                     fraction of
//   BM_Gemm           C = A B, 1024^3, A packed once (as weights are), B packed
//                     per call (as a convolution's input is)
//   BM_GemmConv       a convolution-shaped GEMM: resnet's 3x3, 256 channels on
//                     a 14x14 plane (M 256, K 2304, N 196)
//   BM_GemmConv7      resnet's 3x3, 512 channels on a 7x7 plane (M 512,
//                     K 4608, N 49: a 32 + 16 + 1 column split)
//   BM_GemmConv7Cold  the same with the weights taken in turn from 16 copies
//                     (150 MB: from memory, as in a network)
//   BM_Conv3x3Direct  a 3x3 convolution, 128 channels, 56x56, by the direct
//                     GEMM (kernels/conv2d_gemm.h)
//   BM_Conv3x3Winograd  the same layer by Winograd F(4,3) and F(6,3)
//   BM_Conv3x3Blocks  the same layer on channel blocks by the direct tile
//                     (kernels/conv2d_blocked.h)
//   BM_Conv3x3WinogradBlocks  on channel blocks by Winograd F(4,3) and F(6,3),
//                     its products on the direct tile
//   BM_Depthwise3x3   a depthwise 3x3 plane set, 256 channels, 56x56
//   BM_Int8GemmConv   the int8 GEMM (kernels/int8_gemm.h) on BM_GemmConv's
//                     shape, both operands packed once; GOPS counts 2 per
//                     multiply-add as GFLOPS does
// Counters: GFLOPS (2 per multiply-add of the direct algorithm, so Winograd's
// figure is its effective rate) and, for the peak, the same. Arg = threads.
// The FMA-peak fraction is printed by bench/summarize_kernels.py from the JSON.
#include <benchmark/benchmark.h>

#include <vector>

#include "core/thread_pool.h"
#include "kernels/conv2d_blocked.h"
#include "kernels/conv2d_gemm.h"
#include "kernels/conv2d_winograd.h"
#include "kernels/depthwise_conv2d.h"
#include "kernels/gemm.h"
#include "kernels/int8_gemm.h"
#include "kernels/isa.h"
#include "kernels/vector_of.h"

namespace {

using namespace kestrel;

ParallelContext context(const benchmark::State& state)
{
    const int threads = static_cast<int>(state.range(0));
    return ParallelContext(threads > 1 ? &ThreadPool::global() : nullptr, threads);
}

std::vector<float> values(int64_t n, float scale = 0.01f)
{
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7919) % 97 - 48);
    return v;
}

void report(benchmark::State& state, double macs_per_iteration)
{
    state.counters["GFLOPS"] =
        benchmark::Counter(2 * macs_per_iteration * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

// 12 independent accumulator chains of W-float vectors: enough to cover the
// FMA latency on both pipes of the CPUs we run on. (This file is compiled with
// -ffp-contract=fast: acc * a + b is one fused multiply-add.)
template <int W> __attribute__((always_inline)) inline float fma_chains(int64_t iterations)
{
    using vec = typename detail::VectorOf<W>::vec;
    vec acc[12];
    for (int i = 0; i < 12; ++i) acc[i] = vec{} + 0.001f * static_cast<float>(i);
    const vec a = vec{} + 0.999f, b = vec{} + 0.0001f;
    for (int64_t it = 0; it < iterations; ++it)
        for (int i = 0; i < 12; ++i) acc[i] = acc[i] * a + b;
    vec s = acc[0];
    for (int i = 1; i < 12; ++i) s += acc[i];
    return s[0];
}

__attribute__((target("avx512f"), noinline)) float fma_peak_avx512(int64_t iterations)
{
    return fma_chains<16>(iterations);
}
__attribute__((target("avx2,fma"), noinline)) float fma_peak_avx2(int64_t iterations) { return fma_chains<8>(iterations); }

void BM_FmaPeak(benchmark::State& state)
{
    const Isa isa = isas_available().back();
    if (isa == Isa::Generic) {
        state.SkipWithError("no FMA on this CPU");
        return;
    }
    const int width = isa == Isa::Avx512 ? 16 : 8;
    constexpr int64_t kIterations = 1 << 20;
    const ParallelContext ctx = context(state);
    for (auto _ : state)
        ctx.parallel_for(ctx.threads(), [&](int64_t begin, int64_t end) {
            for (int64_t t = begin; t < end; ++t)
                benchmark::DoNotOptimize(isa == Isa::Avx512 ? fma_peak_avx512(kIterations)
                                                            : fma_peak_avx2(kIterations));
        });
    report(state, double(kIterations) * 12 * width * ctx.threads());
}

void gemm_case(benchmark::State& state, int64_t m, int64_t n, int64_t k)
{
    const GemmKernel& kern = gemm_kernel();
    const std::vector<float> a = values(m * k), b = values(k * n);
    std::vector<float> c(static_cast<size_t>(m * n));
    const std::vector<float> packed = gemm_pack_a(kern, a.data(), m, k, k);
    const GemmRowMajorB pack_b{b.data(), k, n, kern.nr};
    const ParallelContext ctx = context(state);
    for (auto _ : state) {
        gemm_f32(kern, m, n, k, packed.data(), GemmStart::Zero, nullptr, c.data(), n, pack_b,
                 gemm_no_post, ctx);
        benchmark::ClobberMemory();
    }
    report(state, double(m) * n * k);
}

void BM_Gemm(benchmark::State& state) { gemm_case(state, 1024, 1024, 1024); }
void BM_GemmConv(benchmark::State& state) { gemm_case(state, 256, 196, 2304); }
void BM_GemmConv7(benchmark::State& state) { gemm_case(state, 512, 49, 4608); }
void BM_GemmConv7Cold(benchmark::State& state)
{
    const GemmKernel& kern = gemm_kernel();
    const int64_t m = 512, n = 49, k = 4608;
    const std::vector<float> a = values(m * k), b = values(k * n);
    std::vector<float> c(static_cast<size_t>(m * n));
    std::vector<std::vector<float>> packed;
    for (int i = 0; i < 16; ++i) packed.push_back(gemm_pack_a(kern, a.data(), m, k, k));
    const GemmRowMajorB pack_b{b.data(), k, n, kern.nr};
    const ParallelContext ctx = context(state);
    size_t i = 0;
    for (auto _ : state) {
        gemm_f32(kern, m, n, k, packed[i++ % packed.size()].data(), GemmStart::Zero, nullptr, c.data(), n, pack_b,
                 gemm_no_post, ctx);
        benchmark::ClobberMemory();
    }
    report(state, double(m) * n * k);
}

constexpr int64_t kConvChannels = 128, kConvSide = 56;

void BM_Conv3x3Direct(benchmark::State& state)
{
    const GemmKernel& kern = gemm_kernel();
    Conv2dGemmGeometry g;
    g.inch_g = g.outch_g = kConvChannels;
    g.in_h = g.in_w = kConvSide + 2, g.out_h = g.out_w = kConvSide, g.kh = g.kw = 3;
    const std::vector<float> w = values(kConvChannels * kConvChannels * 9), x = values(kConvChannels * 58 * 58, 1.f);
    const std::vector<float> packed = conv2d_gemm_pack_weights(kern, w.data(), g);
    std::vector<float> y(static_cast<size_t>(kConvChannels * kConvSide * kConvSide));
    const ParallelContext ctx = context(state);
    for (auto _ : state) {
        conv2d_gemm(kern, g, packed.data(), x.data(), nullptr, y.data(), {}, ctx);
        benchmark::ClobberMemory();
    }
    report(state, double(kConvChannels) * kConvChannels * 9 * kConvSide * kConvSide);
}

void BM_Conv3x3Winograd(benchmark::State& state)
{
    const GemmKernel& gemm = gemm_kernel();
    const int m = static_cast<int>(state.range(1));
    const WinogradGeometry g{m, kConvChannels, kConvChannels, kConvSide + 2, kConvSide + 2, kConvSide, kConvSide};
    const std::vector<float> w = values(kConvChannels * kConvChannels * 9), x = values(kConvChannels * 58 * 58, 1.f);
    const std::vector<float> packed = winograd_pack_weights(gemm, m, w.data(), kConvChannels, kConvChannels);
    std::vector<float> y(static_cast<size_t>(kConvChannels * kConvSide * kConvSide));
    std::vector<float> scratch(static_cast<size_t>(winograd_scratch_floats(gemm, g)));
    const ParallelContext ctx = context(state);
    for (auto _ : state) {
        conv2d_winograd(gemm, winograd_kernel(), g, packed.data(), x.data(), nullptr, y.data(), scratch.data(), {},
                        ctx);
        benchmark::ClobberMemory();
    }
    report(state, double(kConvChannels) * kConvChannels * 9 * kConvSide * kConvSide);
}

void BM_Conv3x3Blocks(benchmark::State& state)
{
    const Conv2dBlockedKernel& kern = conv2d_blocked_kernel();
    const int64_t side = kConvSide + 2, blocks = kConvChannels / kern.block;
    const std::vector<float> w = values(kConvChannels * kConvChannels * 9), x = values(kConvChannels * side * side, 1.f);
    const std::vector<float> packed = pack_conv2d_blocked_weights(w.data(), kConvChannels, kConvChannels, 9, kern.block);
    const std::vector<float> bias(static_cast<size_t>(kConvChannels), 0.f);
    std::vector<float> y(static_cast<size_t>(kConvChannels * kConvSide * kConvSide));
    Conv2dBlockedProblem pr{x.data(), true, kConvChannels, kConvChannels, side, side, kConvSide, kConvSide};
    pr.kh = pr.kw = 3, pr.packed = packed.data(), pr.bias = bias.data(), pr.y = y.data(), pr.y_blocked = true;
    const ParallelContext ctx = context(state);
    for (auto _ : state) {
        // Pairs of output blocks (the tile's two) over the threads.
        ctx.parallel_for(blocks / 2, [&](int64_t begin, int64_t end) {
            kern.run(pr, 2 * begin, 2 * end, 0, pr.out_pixels());
        });
        benchmark::ClobberMemory();
    }
    report(state, double(kConvChannels) * kConvChannels * 9 * kConvSide * kConvSide);
}

void BM_Conv3x3WinogradBlocks(benchmark::State& state)
{
    const int m = static_cast<int>(state.range(1));
    const Conv2dBlockedKernel& tile = conv2d_blocked_kernel();
    const WinogradKernel& kern = winograd_kernel();
    const WinogradGeometry g{m, kConvChannels, kConvChannels, kConvSide + 2, kConvSide + 2, kConvSide, kConvSide};
    const WinogradBlockSource src{nullptr, kConvSide, kConvSide, 1, 1, kConvSide + 2, kConvSide + 2, 0.f};
    const std::vector<float> w = values(kConvChannels * kConvChannels * 9), x = values(kConvChannels * kConvSide * kConvSide, 1.f);
    const std::vector<float> packed = winograd_pack_block_weights(m, w.data(), kConvChannels, kConvChannels, kern.lanes);
    const std::vector<float> bias(static_cast<size_t>(kConvChannels), 0.f);
    std::vector<float> y(static_cast<size_t>(kConvChannels * kConvSide * kConvSide));
    std::vector<float> scratch(static_cast<size_t>(winograd_block_scratch_floats(g, kern.lanes)));
    WinogradBlockSource input = src;
    input.plane = x.data();
    const ParallelContext ctx = context(state);
    for (auto _ : state) {
        conv2d_winograd_blocks(tile, kern, g, packed.data(), input, bias.data(), nullptr, y.data(), scratch.data(), {},
                               ctx);
        benchmark::ClobberMemory();
    }
    report(state, double(kConvChannels) * kConvChannels * 9 * kConvSide * kConvSide);
}

void BM_Depthwise3x3(benchmark::State& state)
{
    constexpr int64_t channels = 256, side = 56;
    Depthwise2dGeometry g;
    g.in_h = g.in_w = g.out_h = g.out_w = side, g.kh = g.kw = 3, g.pad_top = g.pad_left = 1;
    const std::vector<float> w = values(channels * 9), x = values(channels * side * side, 1.f);
    std::vector<float> y(static_cast<size_t>(channels * side * side));
    const DepthwiseKernel& kern = depthwise_kernel();
    const ParallelContext ctx = context(state);
    for (auto _ : state) {
        ctx.parallel_for(channels, [&](int64_t begin, int64_t end) {
            std::vector<float> scratch(static_cast<size_t>(g.scratch_floats()));
            for (int64_t c = begin; c < end; ++c)
                kern.plane(g, x.data() + c * side * side, w.data() + c * 9, 0.f, y.data() + c * side * side,
                           scratch.data());
        });
        benchmark::ClobberMemory();
    }
    report(state, double(channels) * 9 * side * side);
}

void BM_Int8GemmConv(benchmark::State& state)
{
    const Int8GemmKernel& kern = int8_gemm_kernel();
    const int64_t m = 256, n = 196, k = 2304;
    std::vector<int8_t> a(static_cast<size_t>(m * k)), a_packed(static_cast<size_t>(int8_gemm_packed_a_bytes(kern, m, k)));
    std::vector<uint8_t> b(static_cast<size_t>(k * n)), b_packed(static_cast<size_t>(int8_gemm_packed_b_bytes(kern, n, k)));
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>((i * 7919) % 255 - 127);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>((i * 104729) % 256);
    int8_gemm_pack_a(kern, a.data(), m, k, k, a_packed.data());
    int8_gemm_pack_b(kern, b.data(), k, n, n, b_packed.data());
    const std::vector<int32_t> init(static_cast<size_t>(m), 0);
    std::vector<int32_t> c(static_cast<size_t>(m * n));
    const ParallelContext ctx = context(state);
    for (auto _ : state) {
        int8_gemm(kern, m, n, k, a_packed.data(), init.data(), b_packed.data(), c.data(), n, ctx);
        benchmark::ClobberMemory();
    }
    state.SetLabel(kern.isa);
    state.counters["GOPS"] = benchmark::Counter(2.0 * m * n * k * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

#define KESTREL_KERNEL_BENCH(fn) BENCHMARK(fn)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond)

KESTREL_KERNEL_BENCH(BM_FmaPeak);
KESTREL_KERNEL_BENCH(BM_Gemm);
KESTREL_KERNEL_BENCH(BM_GemmConv);
KESTREL_KERNEL_BENCH(BM_GemmConv7);
KESTREL_KERNEL_BENCH(BM_GemmConv7Cold);
KESTREL_KERNEL_BENCH(BM_Conv3x3Direct);
BENCHMARK(BM_Conv3x3Winograd)->Args({1, 4})->Args({1, 6})->Args({2, 4})->Args({2, 6})->UseRealTime()->Unit(benchmark::kMillisecond);
KESTREL_KERNEL_BENCH(BM_Conv3x3Blocks);
BENCHMARK(BM_Conv3x3WinogradBlocks)->Args({1, 4})->Args({1, 6})->Args({2, 4})->Args({2, 6})->UseRealTime()->Unit(benchmark::kMillisecond);
KESTREL_KERNEL_BENCH(BM_Depthwise3x3);
KESTREL_KERNEL_BENCH(BM_Int8GemmConv);

} // namespace

BENCHMARK_MAIN();
