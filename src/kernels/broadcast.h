// The one strided N-d broadcast engine behind every element-wise op.
//
// Two steps:
//   1. A policy turns input shapes into a BroadcastPlan: the output shape and,
//      per input, an element stride for every axis (0 on broadcast axes).
//      Size-1 output axes are dropped and adjacent axes that every operand walks
//      contiguously (or not at all) are merged, so the common cases (same shape,
//      scalar, per-channel, per-row) become one or two flat loops.
//        broadcast_ncnn            ncnn BinaryOp rules, ranks 0..4 (spec §1.8)
//        broadcast_numpy           numpy / ONNX multidirectional, any rank, N inputs
//        broadcast_unidirectional  B stretched to A's shape (ONNX Gemm C, PRelu)
//      Each reports incompatible shapes as kestrel::Error naming all shapes.
//   2. One templated executor walks the plan: an odometer over the outer merged
//      axes, a row kernel over the innermost one (inner strides are 0 or 1),
//      split across threads by rows and, for few long rows, by row chunks.
//        broadcast_unary / broadcast_binary / broadcast_ternary
//      Float add/sub/mul/div/max/min rows go to AVX2 / AVX-512 kernels when the
//      CPU has them (run-time check); every other op and dtype uses the inlined
//      scalar row loop, which compilers vectorize where they can.
//
// In place: the output may be the very buffer of an input of the same element
// size and the output's shape (the usual "write over input 0" case). Any other
// overlap between the output and an input is handled by copying that input first.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/thread_pool.h"
#include "kestrel/error.h"
#include "kestrel/tensor.h"

namespace kestrel {

class ParallelContext;

// ---------------------------------------------------------------------------
// Plans

enum class BroadcastRule : int {
    Ncnn = 0,           // ncnn BinaryOp: lower rank aligned to the outer axes (§1.8)
    Numpy = 1,          // numpy / ONNX multidirectional: right-aligned, any rank
    Unidirectional = 2, // B broadcast to A's shape; the output is A's shape
};
const char* broadcast_rule_name(BroadcastRule rule);

struct BroadcastPlan {
    Shape out_shape;              // output shape, outermost first
    std::vector<Shape> in_shapes; // input shapes as given
    // Merged iteration space, outermost first; never empty (a one-element output is {1}).
    std::vector<int64_t> dims;
    // strides[i][k]: element stride of input i along dims[k]; 0 where broadcast.
    // The innermost stride is always 0 or 1. The output is dense: its stride along
    // dims[k] is the product of dims[k+1..].
    std::vector<std::vector<int64_t>> strides;
    int64_t numel = 0; // output elements

    int num_inputs() const { return static_cast<int>(in_shapes.size()); }
    int rank() const { return static_cast<int>(dims.size()); }
    int64_t inner() const { return dims.back(); }
    int64_t inner_stride(int input) const { return strides[input].back(); }
    // Elements of input i (its buffer length).
    int64_t in_numel(int input) const;
    // True when input i has as many elements as the output (read 1:1, no repetition).
    bool is_full(int input) const { return in_numel(input) == numel; }
    // Same plan with inputs i and j exchanged (for reverse ops that swap operands).
    BroadcastPlan swapped(int i, int j) const;
    // "(2,3,4) (merged [6,4]: in0 [4,1] in1 [0,1])" for logs and test messages.
    std::string describe() const;
};

// Core builder: `aligned[i]` is input i lifted to out_shape's rank (every axis 1
// or equal to the output's), `original[i]` its real shape.
BroadcastPlan make_broadcast_plan(const Shape& out_shape, const std::vector<Shape>& aligned,
                                  const std::vector<Shape>& original);

// ncnn rules for two operands of rank 0..4 (rank 0 acts as a scalar).
BroadcastPlan broadcast_ncnn(const Shape& a, const Shape& b);
// numpy multidirectional for any number of inputs of any rank.
BroadcastPlan broadcast_numpy(const std::vector<Shape>& shapes);
BroadcastPlan broadcast_numpy(const Shape& a, const Shape& b);
// B broadcast (numpy-aligned) to A's shape.
BroadcastPlan broadcast_unidirectional(const Shape& a, const Shape& b);
BroadcastPlan broadcast_plan(BroadcastRule rule, const Shape& a, const Shape& b);
// One input stretched (numpy-aligned) to `target` (ONNX Expand after its
// output shape is known, Tile-like copies): a one-input plan for broadcast_unary.
BroadcastPlan broadcast_to(const Shape& in, const Shape& target);
// A plain element-wise map over one shape (unary ops).
BroadcastPlan elementwise_plan(const Shape& shape);

// ---------------------------------------------------------------------------
// Threading: what the executor splits work with (serial when default-constructed).
// Pass it as a call argument; it refers to (does not copy) an ParallelContext.

class ParallelRunner {
public:
    ParallelRunner() = default;
    ParallelRunner(const Parallel& parallel) : parallel_(parallel) {}   // NOLINT: implicit on purpose
    ParallelRunner(const ParallelContext& ctx);                             // NOLINT
    int threads() const;
    void run(int64_t n, const RangeFn& fn) const;

private:
    Parallel parallel_{};
    const ParallelContext* ctx_ = nullptr;
};

// Outputs smaller than this run on the calling thread.
constexpr int64_t kBroadcastParallelMin = 16384;

// ---------------------------------------------------------------------------
// SIMD fast paths for float rows (selected at run time)

enum class SimdBinary : uint8_t { None, Add, Sub, Mul, Div, Max, Min };
constexpr int kSimdBinaryCount = 7;

// Row kernels: vv o[i]=f(a[i],b[i]); vs o[i]=f(a[i],b[0]); sv o[i]=f(a[0],b[i]).
// Max/Min follow std::max/std::min(a, b) exactly, NaN and signed zeros included.
using RowKernelF32 = void (*)(float* out, const float* a, const float* b, int64_t n);
struct SimdRowKernels {
    RowKernelF32 vv = nullptr;
    RowKernelF32 vs = nullptr;
    RowKernelF32 sv = nullptr;
};

// One kernel per ISA (kernels/broadcast_rows.h): rows[op] for every SimdBinary
// but None.
struct BroadcastRowKernel {
    const char* isa;
    SimdRowKernels rows[kSimdBinaryCount];
};
// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const BroadcastRowKernel& broadcast_row_kernel();
std::vector<const BroadcastRowKernel*> broadcast_row_kernels_available();

// The fastest kernel's rows for op, or nullptr for SimdBinary::None.
const SimdRowKernels* simd_row_kernels_f32(SimdBinary op);

namespace detail {
// Rows shorter than this stay on the inlined scalar loop (call overhead).
constexpr int64_t kSimdMinRow = 16;

// A functor may declare `static constexpr SimdBinary simd` (its float meaning)
// and `static constexpr bool swapped` (it computes op(b, a)).
template <class F, class = void> struct SimdOf {
    static constexpr SimdBinary value = SimdBinary::None;
};
template <class F> struct SimdOf<F, std::void_t<decltype(F::simd)>> {
    static constexpr SimdBinary value = F::simd;
};
template <class F, class = void> struct SwappedOf {
    static constexpr bool value = false;
};
template <class F> struct SwappedOf<F, std::void_t<decltype(F::swapped)>> {
    static constexpr bool value = F::swapped;
};

// Elements per parallel task chunk when a few long rows are split.
constexpr int64_t kRowChunkMin = 4096;

// The odometer. Calls row(out_offset, in_offsets[N], length) for consecutive
// runs of the innermost axis; input offsets already include the run's start.
template <int N, class RowFn>
void broadcast_rows(const BroadcastPlan& plan, const ParallelRunner& runner, const RowFn& row)
{
    check(plan.num_inputs() == N, "broadcast plan has ", plan.num_inputs(), " inputs, kernel expects ", N);
    if (plan.numel == 0) return;
    const int r = plan.rank();
    const int outer_rank = r - 1;
    const int64_t inner = plan.dims[r - 1];
    const int64_t rows = plan.numel / inner;

    std::array<int64_t, N> inner_stride{};
    for (int i = 0; i < N; ++i) inner_stride[i] = plan.strides[i][r - 1];

    // Work items: rows, each cut into `chunks` pieces of `chunk_len` elements.
    const int threads = plan.numel >= kBroadcastParallelMin ? runner.threads() : 1;
    int64_t chunks = 1;
    int64_t chunk_len = inner;
    if (threads > 1 && rows < 2 * threads) {
        const int64_t want = (2 * threads + rows - 1) / rows;
        const int64_t max_chunks = std::max<int64_t>(1, inner / kRowChunkMin);
        chunks = std::min(want, max_chunks);
        chunk_len = (inner + chunks - 1) / chunks;
        chunk_len = (chunk_len + 63) / 64 * 64; // keep chunk starts vector-aligned
        chunks = (inner + chunk_len - 1) / chunk_len;
    }
    const int64_t tasks = rows * chunks;

    auto body = [&](int64_t t0, int64_t t1) {
        if (t0 >= t1) return;
        // Odometer state for the outer axes (heap only for very high ranks).
        int64_t small_idx[16];
        std::vector<int64_t> big_idx;
        int64_t* idx = small_idx;
        if (outer_rank > 16) {
            big_idx.assign(static_cast<size_t>(outer_rank), 0);
            idx = big_idx.data();
        }
        std::array<int64_t, N> base{};
        int64_t row_i = t0 / chunks;
        int64_t chunk_i = t0 % chunks;
        {
            int64_t rem = row_i;
            for (int k = outer_rank - 1; k >= 0; --k) {
                idx[k] = rem % plan.dims[k];
                rem /= plan.dims[k];
                for (int i = 0; i < N; ++i) base[i] += idx[k] * plan.strides[i][k];
            }
        }
        // Moves the odometer to the next row (carrying from axis `outer_rank - 1` up).
        auto next_row = [&]() {
            for (int k = outer_rank - 1; k >= 0; --k) {
                for (int i = 0; i < N; ++i) base[i] += plan.strides[i][k];
                if (++idx[k] < plan.dims[k]) return;
                for (int i = 0; i < N; ++i) base[i] -= plan.strides[i][k] * plan.dims[k];
                idx[k] = 0;
            }
        };
        std::array<int64_t, N> off{};
        if (chunks == 1) {
            // Whole rows: run along the second-innermost axis in a tight loop and
            // touch the rest of the odometer only when that axis wraps.
            std::array<int64_t, N> s1{};
            int64_t d1 = 1;
            if (outer_rank > 0) {
                d1 = plan.dims[outer_rank - 1];
                for (int i = 0; i < N; ++i) s1[i] = plan.strides[i][outer_rank - 1];
            }
            int64_t t = t0;
            for (;;) {
                const int64_t j0 = outer_rank > 0 ? idx[outer_rank - 1] : 0;
                const int64_t run = std::min(d1 - j0, t1 - t);
                off = base;
                for (int64_t q = 0; q < run; ++q) {
                    row((t + q) * inner, off.data(), inner);
                    for (int i = 0; i < N; ++i) off[i] += s1[i];
                }
                t += run;
                if (t >= t1) break;
                // jump to the end of this run of axis outer_rank-1, then carry
                for (int i = 0; i < N; ++i) base[i] += s1[i] * (run - 1);
                idx[outer_rank - 1] += run - 1;
                next_row();
            }
            return;
        }
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t begin = chunk_i * chunk_len;
            const int64_t len = std::min(chunk_len, inner - begin);
            for (int i = 0; i < N; ++i) off[i] = base[i] + begin * inner_stride[i];
            row(row_i * inner + begin, off.data(), len);
            if (++chunk_i == chunks && t + 1 < t1) {
                chunk_i = 0;
                ++row_i;
                next_row();
            }
        }
    };
    if (threads <= 1 || tasks <= 1)
        body(0, tasks);
    else
        runner.run(tasks, body);
}

// True when [p, p+np) and [q, q+nq) (bytes) overlap.
inline bool bytes_overlap(const void* p, size_t np, const void* q, size_t nq)
{
    const auto a = reinterpret_cast<uintptr_t>(p);
    const auto b = reinterpret_cast<uintptr_t>(q);
    return np != 0 && nq != 0 && a < b + nq && b < a + np;
}

// Returns `in`, or a private copy of it when writing `out` could clobber it
// before it is read. `keep` owns the copy.
template <class TI, class TO>
const TI* unalias_input(const BroadcastPlan& plan, int i, const TI* in, const TO* out,
                        std::unique_ptr<TI[]>& keep)
{
    const size_t in_bytes = static_cast<size_t>(plan.in_numel(i)) * sizeof(TI);
    const size_t out_bytes = static_cast<size_t>(plan.numel) * sizeof(TO);
    if (!bytes_overlap(in, in_bytes, out, out_bytes)) return in;
    const bool exact = static_cast<const void*>(in) == static_cast<const void*>(out) &&
                       sizeof(TI) == sizeof(TO) && plan.is_full(i);
    if (exact) return in;
    const size_t n = static_cast<size_t>(plan.in_numel(i));
    keep.reset(new TI[n]);
    std::copy(in, in + n, keep.get());
    return keep.get();
}

// The scalar row loop, one copy for all element-wise binary ops and dtypes.
template <class TA, class TB, class TO, class F>
inline void binary_row(TO* o, const TA* a, int64_t sa, const TB* b, int64_t sb, int64_t n, const F& f)
{
    if (sa != 0 && sb != 0) {
        for (int64_t x = 0; x < n; ++x) o[x] = static_cast<TO>(f(a[x], b[x]));
    } else if (sa != 0) {
        const TB bv = *b;
        for (int64_t x = 0; x < n; ++x) o[x] = static_cast<TO>(f(a[x], bv));
    } else if (sb != 0) {
        const TA av = *a;
        for (int64_t x = 0; x < n; ++x) o[x] = static_cast<TO>(f(av, b[x]));
    } else {
        const TO v = static_cast<TO>(f(*a, *b));
        for (int64_t x = 0; x < n; ++x) o[x] = v;
    }
}
} // namespace detail

// ---------------------------------------------------------------------------
// Executors

// out[i] = f(in[i]) over a plan with one input (elementwise_plan or broadcast_to).
template <class TI, class TO, class F>
void broadcast_unary(const BroadcastPlan& plan, const TI* in, TO* out, const F& f,
                     const ParallelRunner& runner = {})
{
    std::unique_ptr<TI[]> keep;
    in = detail::unalias_input(plan, 0, in, out, keep);
    detail::broadcast_rows<1>(plan, runner, [&](int64_t o, const int64_t* off, int64_t n) {
        TO* po = out + o;
        const TI* pi = in + off[0];
        if (plan.inner_stride(0) != 0) {
            for (int64_t x = 0; x < n; ++x) po[x] = static_cast<TO>(f(pi[x]));
        } else {
            const TO v = static_cast<TO>(f(*pi));
            for (int64_t x = 0; x < n; ++x) po[x] = v;
        }
    });
}

// out = f(a, b) broadcast per `plan` (two inputs).
template <class TA, class TB, class TO, class F>
void broadcast_binary(const BroadcastPlan& plan, const TA* a, const TB* b, TO* out, const F& f,
                      const ParallelRunner& runner = {})
{
    std::unique_ptr<TA[]> keep_a;
    std::unique_ptr<TB[]> keep_b;
    a = detail::unalias_input(plan, 0, a, out, keep_a);
    b = detail::unalias_input(plan, 1, b, out, keep_b);
    const int64_t sa = plan.inner_stride(0);
    const int64_t sb = plan.inner_stride(1);

    constexpr SimdBinary simd = detail::SimdOf<F>::value;
    if constexpr (simd != SimdBinary::None && std::is_same_v<TA, float> && std::is_same_v<TB, float> &&
                  std::is_same_v<TO, float>) {
        const SimdRowKernels* k = simd_row_kernels_f32(simd);
        if (k != nullptr && plan.inner() >= detail::kSimdMinRow && (sa != 0 || sb != 0)) {
            // A swapped functor computes op(b, a): hand the kernel the operands reversed.
            constexpr bool sw = detail::SwappedOf<F>::value;
            const RowKernelF32 fn = (sa != 0 && sb != 0) ? k->vv
                                    : (sa != 0)          ? (sw ? k->sv : k->vs)
                                                         : (sw ? k->vs : k->sv);
            detail::broadcast_rows<2>(plan, runner, [&](int64_t o, const int64_t* off, int64_t n) {
                if (sw)
                    fn(out + o, b + off[1], a + off[0], n);
                else
                    fn(out + o, a + off[0], b + off[1], n);
            });
            return;
        }
    }
    detail::broadcast_rows<2>(plan, runner, [&](int64_t o, const int64_t* off, int64_t n) {
        detail::binary_row(out + o, a + off[0], sa, b + off[1], sb, n, f);
    });
}

// out = f(c, a, b) broadcast per `plan` (three inputs; ONNX Where is f = select).
template <class TC, class TA, class TB, class TO, class F>
void broadcast_ternary(const BroadcastPlan& plan, const TC* c, const TA* a, const TB* b, TO* out, const F& f,
                       const ParallelRunner& runner = {})
{
    std::unique_ptr<TC[]> keep_c;
    std::unique_ptr<TA[]> keep_a;
    std::unique_ptr<TB[]> keep_b;
    c = detail::unalias_input(plan, 0, c, out, keep_c);
    a = detail::unalias_input(plan, 1, a, out, keep_a);
    b = detail::unalias_input(plan, 2, b, out, keep_b);
    const int64_t sc = plan.inner_stride(0);
    const int64_t sa = plan.inner_stride(1);
    const int64_t sb = plan.inner_stride(2);
    detail::broadcast_rows<3>(plan, runner, [&](int64_t o, const int64_t* off, int64_t n) {
        TO* po = out + o;
        const TC* pc = c + off[0];
        const TA* pa = a + off[1];
        const TB* pb = b + off[2];
        for (int64_t x = 0; x < n; ++x) po[x] = static_cast<TO>(f(pc[x * sc], pa[x * sa], pb[x * sb]));
    });
}

} // namespace kestrel
