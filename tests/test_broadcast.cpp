// Tests of the broadcast engine (kernels/broadcast.h) and the element-wise
// functors (kernels/elementwise_ops.h). Every expected value comes from a
// reference written here: ncnn's rules as explicit per-axis index loops in
// ncnn's own [w,h,d,c] notation (spec §1.8 table), numpy's as a multi-index
// odometer, and plain scalar expressions for the functors.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/broadcast.h"
#include "kernels/elementwise_ops.h"

using namespace kestrel;

namespace {

// ---------------------------------------------------------------------------
// Reference: ncnn broadcasting, in ncnn notation.

struct NMat {
    int dims = 0;
    int64_t w = 1, h = 1, d = 1, c = 1;
};

// Our shape (outermost first) -> ncnn [w,h,d,c].
NMat to_nmat(const Shape& s)
{
    NMat m;
    m.dims = static_cast<int>(s.size());
    if (m.dims == 1) m.w = s[0];
    if (m.dims == 2) m.h = s[0], m.w = s[1];
    if (m.dims == 3) m.c = s[0], m.h = s[1], m.w = s[2];
    if (m.dims == 4) m.c = s[0], m.d = s[1], m.h = s[2], m.w = s[3];
    return m;
}

Shape from_nmat(const NMat& m)
{
    switch (m.dims) {
    case 0: return {};
    case 1: return {m.w};
    case 2: return {m.h, m.w};
    case 3: return {m.c, m.h, m.w};
    default: return {m.c, m.d, m.h, m.w};
    }
}

// ncnn shape notation "[w,h,...]" -> our shape.
Shape ncnn_shape(std::vector<int64_t> whdc)
{
    std::reverse(whdc.begin(), whdc.end());
    return whdc;
}

NMat make_nmat(int dims, int64_t w, int64_t h, int64_t d, int64_t c)
{
    NMat m;
    m.dims = dims;
    m.w = w, m.h = h, m.d = d, m.c = c;
    return m;
}

// Spec §1.8 step 2, row by row: lift X (lower rank) next to Y.
NMat ref_lift(const NMat& X, const NMat& Y, int outdims)
{
    if (X.dims == outdims) return X;
    if (X.dims == 0) return make_nmat(outdims, 1, 1, 1, 1); // a scalar
    if (outdims == 2) return X.w == Y.h ? make_nmat(2, 1, X.w, 1, 1) : make_nmat(2, X.w, 1, 1, 1);
    if (outdims == 3 && X.dims == 1) return X.w == Y.c ? make_nmat(3, 1, 1, 1, X.w) : make_nmat(3, X.w, 1, 1, 1);
    if (outdims == 3 && X.dims == 2) return make_nmat(3, 1, X.w, 1, X.h);
    if (outdims == 4 && X.dims == 1) return X.w == Y.c ? make_nmat(4, 1, 1, 1, X.w) : make_nmat(4, X.w, 1, 1, 1);
    if (outdims == 4 && X.dims == 2) return make_nmat(4, 1, 1, X.w, X.h);
    return make_nmat(4, 1, X.w, X.h, X.c); // 3 -> 4
}

bool axis_ok(int64_t a, int64_t b) { return a == b || a == 1 || b == 1; }

// Output shape (ours) under ncnn rules, or false when the shapes mismatch.
bool ref_ncnn_shape(const Shape& sa, const Shape& sb, Shape& out, NMat& A2, NMat& B2, NMat& C)
{
    const NMat A = to_nmat(sa), B = to_nmat(sb);
    const int outdims = std::max(A.dims, B.dims);
    A2 = ref_lift(A, B, outdims);
    B2 = ref_lift(B, A, outdims);
    if (!axis_ok(A2.w, B2.w) || !axis_ok(A2.h, B2.h) || !axis_ok(A2.d, B2.d) || !axis_ok(A2.c, B2.c)) return false;
    C = make_nmat(outdims, std::max(A2.w, B2.w), std::max(A2.h, B2.h), std::max(A2.d, B2.d), std::max(A2.c, B2.c));
    out = from_nmat(C);
    return true;
}

// Spec §1.8 step 3: per-axis loops with min(idx, size-1).
template <class T, class Fn>
std::vector<T> ref_ncnn_compute(const Shape& sa, const std::vector<T>& a, const Shape& sb, const std::vector<T>& b,
                                Fn fn)
{
    Shape out;
    NMat A2, B2, C;
    if (!ref_ncnn_shape(sa, sb, out, A2, B2, C)) ADD_FAILURE() << "reference: incompatible";
    std::vector<T> r;
    for (int64_t q = 0; q < C.c; ++q)
        for (int64_t z = 0; z < C.d; ++z)
            for (int64_t y = 0; y < C.h; ++y)
                for (int64_t x = 0; x < C.w; ++x) {
                    const int64_t ia = ((std::min(q, A2.c - 1) * A2.d + std::min(z, A2.d - 1)) * A2.h +
                                        std::min(y, A2.h - 1)) * A2.w + std::min(x, A2.w - 1);
                    const int64_t ib = ((std::min(q, B2.c - 1) * B2.d + std::min(z, B2.d - 1)) * B2.h +
                                        std::min(y, B2.h - 1)) * B2.w + std::min(x, B2.w - 1);
                    r.push_back(fn(a[static_cast<size_t>(ia)], b[static_cast<size_t>(ib)]));
                }
    return r;
}

// ---------------------------------------------------------------------------
// Reference: numpy broadcasting with an odometer over the output multi-index.

int64_t numel_of(const Shape& s)
{
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

// Right-aligned numpy output shape, or false.
bool ref_numpy_shape(const std::vector<Shape>& in, Shape& out)
{
    size_t rank = 0;
    for (const auto& s : in) rank = std::max(rank, s.size());
    out.assign(rank, 1);
    for (size_t k = 0; k < rank; ++k) {
        for (const auto& s : in) {
            if (k + s.size() < rank) continue; // missing leading axis
            const int64_t d = s[k + s.size() - rank];
            if (d == 1) continue;
            if (out[k] != 1 && out[k] != d) return false;
            out[k] = d;
        }
    }
    return true;
}

// Linear index into `s` for output multi-index `idx` (numpy alignment).
int64_t ref_numpy_index(const Shape& s, const std::vector<int64_t>& idx)
{
    const size_t lead = idx.size() - s.size();
    int64_t lin = 0;
    for (size_t k = 0; k < s.size(); ++k) lin = lin * s[k] + (s[k] == 1 ? 0 : idx[lead + k]);
    return lin;
}

// Calls visit(vector of per-input linear indices) for each output element in order.
template <class Visit> void ref_numpy_walk(const Shape& out, const std::vector<Shape>& in, Visit visit)
{
    const int64_t n = numel_of(out);
    std::vector<int64_t> idx(out.size(), 0);
    std::vector<int64_t> lin(in.size());
    for (int64_t e = 0; e < n; ++e) {
        for (size_t i = 0; i < in.size(); ++i) lin[i] = ref_numpy_index(in[i], idx);
        visit(lin);
        for (size_t k = out.size(); k-- > 0;) {
            if (++idx[k] < out[k]) break;
            idx[k] = 0;
        }
    }
}

template <class T> std::vector<T> random_values(std::mt19937& rng, int64_t n, double lo, double hi)
{
    std::vector<T> v(static_cast<size_t>(n));
    std::uniform_real_distribution<double> dist(lo, hi);
    for (auto& x : v) x = static_cast<T>(dist(rng));
    return v;
}

bool same_float(float x, float y)
{
    if (std::isnan(x) && std::isnan(y)) return true;
    uint32_t a, b;
    std::memcpy(&a, &x, 4);
    std::memcpy(&b, &y, 4);
    return a == b;
}

std::string str(const Shape& s) { return shape_str(s); }

// ---------------------------------------------------------------------------
// ncnn's broadcast tables (docs/developer-guide/binaryop-broadcasting.md), in
// ncnn [w,h,d,c] notation: A, B.

struct NcnnRow {
    std::vector<int64_t> a, b;
};

std::vector<NcnnRow> ncnn_table_rows()
{
    return {
        // scalar-like
        {{2}, {1}}, {{2, 3}, {1}}, {{2, 3}, {1, 1}}, {{2, 3, 4}, {1}}, {{2, 3, 4}, {1, 1}}, {{2, 3, 4}, {1, 1, 1}},
        {{2, 3, 4, 5}, {1}}, {{2, 3, 4, 5}, {1, 1}}, {{2, 3, 4, 5}, {1, 1, 1}}, {{2, 3, 4, 5}, {1, 1, 1, 1}},
        // no broadcast
        {{2}, {2}}, {{2, 3}, {2, 3}}, {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4, 5}, {2, 3, 4, 5}},
        // explicit broadcast
        {{2, 3}, {1, 3}}, {{2, 3}, {2, 1}},
        {{2, 3, 4}, {1, 3, 4}}, {{2, 3, 4}, {2, 1, 4}}, {{2, 3, 4}, {2, 3, 1}}, {{2, 3, 4}, {1, 1, 4}},
        {{2, 3, 4}, {1, 3, 1}}, {{2, 3, 4}, {2, 1, 1}},
        {{2, 3, 4, 5}, {1, 3, 4, 5}}, {{2, 3, 4, 5}, {2, 1, 4, 5}}, {{2, 3, 4, 5}, {2, 3, 1, 5}},
        {{2, 3, 4, 5}, {2, 3, 4, 1}}, {{2, 3, 4, 5}, {1, 1, 4, 5}}, {{2, 3, 4, 5}, {1, 3, 1, 5}},
        {{2, 3, 4, 5}, {1, 3, 4, 1}}, {{2, 3, 4, 5}, {2, 1, 1, 5}}, {{2, 3, 4, 5}, {2, 1, 4, 1}},
        {{2, 3, 4, 5}, {2, 3, 1, 1}}, {{2, 3, 4, 5}, {1, 1, 1, 5}}, {{2, 3, 4, 5}, {1, 1, 4, 1}},
        {{2, 3, 4, 5}, {1, 3, 1, 1}}, {{2, 3, 4, 5}, {2, 1, 1, 1}},
        // implicit, B on the outer axes
        {{2, 3}, {3}}, {{2, 3, 4}, {4}}, {{2, 3, 4}, {3, 4}}, {{2, 3, 4, 5}, {5}}, {{2, 3, 4, 5}, {4, 5}},
        {{2, 3, 4, 5}, {3, 4, 5}},
        // implicit, 1-D B along w (compatibility rule)
        {{2, 3}, {2}}, {{2, 3, 4}, {2}}, {{2, 3, 4, 5}, {2}},
        // ties: the outer axis wins
        {{2, 2}, {2}}, {{2, 3, 2}, {2}}, {{2, 3, 4, 2}, {2}},
        // older special types (per-channel, per-row, and their mirrors)
        {{2, 3, 4}, {1, 1, 4}}, {{2, 3, 4}, {2, 3, 1}}, {{1, 1, 4}, {2, 3, 4}}, {{2, 3, 1}, {2, 3, 4}},
        {{2, 3, 4}, {1, 3, 4}}, {{2, 1, 4}, {2, 3, 4}},
        // both operands broadcast
        {{2, 1, 4}, {1, 3, 1}}, {{1, 3, 1, 5}, {2, 1, 4, 1}},
        // longer rows (SIMD paths) and 1-element blobs
        {{37, 5, 3}, {37}}, {{64, 9}, {1, 9}}, {{40, 3, 2}, {3, 2}}, {{1}, {1}}, {{1, 1, 1}, {1}},
    };
}

// ---------------------------------------------------------------------------

TEST(Broadcast, NcnnTableShapesAndValuesBothOrders)
{
    std::mt19937 rng(1);
    for (const NcnnRow& row : ncnn_table_rows()) {
        for (int order = 0; order < 2; ++order) {
            const Shape sa = ncnn_shape(order == 0 ? row.a : row.b);
            const Shape sb = ncnn_shape(order == 0 ? row.b : row.a);
            SCOPED_TRACE("A " + str(sa) + " B " + str(sb));
            Shape want;
            NMat A2, B2, C;
            ASSERT_TRUE(ref_ncnn_shape(sa, sb, want, A2, B2, C));
            const BroadcastPlan plan = broadcast_ncnn(sa, sb);
            ASSERT_EQ(plan.out_shape, want);
            ASSERT_EQ(plan.numel, numel_of(want));

            const auto a = random_values<float>(rng, numel_of(sa), -3, 3);
            const auto b = random_values<float>(rng, numel_of(sb), 0.5, 3);
            std::vector<float> out(static_cast<size_t>(plan.numel), -1.f);
            broadcast_binary(plan, a.data(), b.data(), out.data(), ew::Sub());
            const auto ref = ref_ncnn_compute(sa, a, sb, b, [](float x, float y) { return x - y; });
            for (size_t i = 0; i < out.size(); ++i) ASSERT_TRUE(same_float(out[i], ref[i])) << "at " << i;

            broadcast_binary(plan, a.data(), b.data(), out.data(), ew::Rev<ew::Div>());
            const auto ref2 = ref_ncnn_compute(sa, a, sb, b, [](float x, float y) { return y / x; });
            for (size_t i = 0; i < out.size(); ++i) ASSERT_TRUE(same_float(out[i], ref2[i])) << "at " << i;
        }
    }
}

TEST(Broadcast, NcnnSpecificAlignments)
{
    // ncnn [2,3,4] (+) [4]: per-channel, ours (4,3,2) with (4,1,1).
    EXPECT_EQ(broadcast_ncnn({4, 3, 2}, {4}).out_shape, (Shape{4, 3, 2}));
    EXPECT_EQ(broadcast_ncnn({4, 3, 2}, {4}).strides[1], (std::vector<int64_t>{1, 0}));
    // ncnn [2,3] (+) [2]: not h (3), so along w.
    EXPECT_EQ(broadcast_ncnn({3, 2}, {2}).strides[1], (std::vector<int64_t>{0, 1}));
    // ncnn [2,2] (+) [2]: tie, the outer axis h wins.
    EXPECT_EQ(broadcast_ncnn({2, 2}, {2}).strides[1], (std::vector<int64_t>{1, 0}));
    // 1-D never aligns to h or d of a 3-D/4-D blob: ncnn [2,3,4] (+) [3] is an error.
    EXPECT_THROW(broadcast_ncnn({4, 3, 2}, {3}), Error);
    // 2-D to 3-D aligns outer: ncnn [2,3,4] (+) [3,4] -> ours (4,3) as (4,3,1).
    EXPECT_EQ(broadcast_ncnn({4, 3, 2}, {4, 3}).strides[1], (std::vector<int64_t>{1, 0}));
    // numpy would align the other way.
    EXPECT_THROW(broadcast_numpy({4, 3, 2}, {4, 3}), Error);
    // rank 0 is a scalar under every rule.
    EXPECT_EQ(broadcast_ncnn({4, 3, 2}, {}).out_shape, (Shape{4, 3, 2}));
    EXPECT_EQ(broadcast_ncnn({}, {}).out_shape, Shape{});
}

TEST(Broadcast, MergesAxes)
{
    // same shape: one flat loop
    BroadcastPlan p = broadcast_numpy({2, 3, 4, 5}, {2, 3, 4, 5});
    EXPECT_EQ(p.dims, (std::vector<int64_t>{120}));
    // scalar
    p = broadcast_numpy({2, 3, 4, 5}, {1});
    EXPECT_EQ(p.dims, (std::vector<int64_t>{120}));
    EXPECT_EQ(p.strides[1], (std::vector<int64_t>{0}));
    // per-channel: (C, H*W)
    p = broadcast_ncnn({8, 6, 5}, {8});
    EXPECT_EQ(p.dims, (std::vector<int64_t>{8, 30}));
    EXPECT_EQ(p.strides[0], (std::vector<int64_t>{30, 1}));
    EXPECT_EQ(p.strides[1], (std::vector<int64_t>{1, 0}));
    // per-row broadcast over the outer axes
    p = broadcast_numpy({7, 3, 16}, {16});
    EXPECT_EQ(p.dims, (std::vector<int64_t>{21, 16}));
    EXPECT_EQ(p.strides[1], (std::vector<int64_t>{0, 1}));
    // size-1 axes vanish
    p = broadcast_numpy({1, 7, 1, 16}, {7, 1, 1});
    EXPECT_EQ(p.dims, (std::vector<int64_t>{7, 16}));
    // zero elements
    p = broadcast_numpy({3, 0, 2}, {2});
    EXPECT_EQ(p.numel, 0);
    EXPECT_EQ(p.out_shape, (Shape{3, 0, 2}));
}

TEST(Broadcast, NumpyRandomRanks0To8)
{
    std::mt19937 rng(2024);
    for (int iter = 0; iter < 600; ++iter) {
        const int rank = iter % 9;
        Shape out(static_cast<size_t>(rank));
        for (auto& d : out) d = std::uniform_int_distribution<int>(1, rank > 5 ? 3 : 4)(rng);
        if (rank > 0 && iter % 50 == 7) out[static_cast<size_t>(iter % rank)] = 0; // empty tensor now and then
        Shape s[2];
        for (auto& sh : s) {
            const int r = std::uniform_int_distribution<int>(0, rank)(rng);
            sh.assign(out.end() - r, out.end());
            for (auto& d : sh)
                if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) d = 1;
        }
        SCOPED_TRACE(str(s[0]) + " with " + str(s[1]));
        Shape want;
        ASSERT_TRUE(ref_numpy_shape({s[0], s[1]}, want));
        const BroadcastPlan plan = broadcast_numpy(s[0], s[1]);
        ASSERT_EQ(plan.out_shape, want);

        const auto a = random_values<double>(rng, numel_of(s[0]), -5, 5);
        const auto b = random_values<double>(rng, numel_of(s[1]), -5, 5);
        std::vector<double> got(static_cast<size_t>(plan.numel));
        broadcast_binary(plan, a.data(), b.data(), got.data(), ew::Sub());
        size_t e = 0;
        ref_numpy_walk(want, {s[0], s[1]}, [&](const std::vector<int64_t>& lin) {
            ASSERT_EQ(got[e], a[static_cast<size_t>(lin[0])] - b[static_cast<size_t>(lin[1])]) << "element " << e;
            ++e;
        });
        ASSERT_EQ(e, got.size());

        // integer dtype and a bool result through the same engine
        std::vector<int32_t> ia(a.size()), ib(b.size());
        for (size_t i = 0; i < a.size(); ++i) ia[i] = static_cast<int32_t>(a[i] * 3);
        for (size_t i = 0; i < b.size(); ++i) ib[i] = static_cast<int32_t>(b[i] * 3);
        std::unique_ptr<bool[]> gt(new bool[static_cast<size_t>(plan.numel) + 1]);
        broadcast_binary(plan, ia.data(), ib.data(), gt.get(), ew::Greater());
        e = 0;
        ref_numpy_walk(want, {s[0], s[1]}, [&](const std::vector<int64_t>& lin) {
            ASSERT_EQ(gt[e], ia[static_cast<size_t>(lin[0])] > ib[static_cast<size_t>(lin[1])]) << "element " << e;
            ++e;
        });
    }
}

TEST(Broadcast, NumpyHighRankNoCap)
{
    // Rank 18, alternating broadcast axes so nothing merges: exercises the
    // odometer beyond its inline state.
    Shape out(18, 2), sa(18, 2), sb(18, 2);
    for (size_t k = 0; k < 18; k += 2) sa[k] = 1;
    for (size_t k = 1; k < 18; k += 2) sb[k] = 1;
    const BroadcastPlan plan = broadcast_numpy(sa, sb);
    ASSERT_EQ(plan.out_shape, out);
    EXPECT_GE(plan.rank(), 17);
    std::vector<int64_t> a(static_cast<size_t>(numel_of(sa))), b(static_cast<size_t>(numel_of(sb)));
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int64_t>(i) * 1000;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int64_t>(i);
    std::vector<int64_t> got(static_cast<size_t>(plan.numel));
    ThreadPool pool(2);
    broadcast_binary(plan, a.data(), b.data(), got.data(), ew::Add(), Parallel{&pool, 3});
    size_t e = 0;
    ref_numpy_walk(out, {sa, sb}, [&](const std::vector<int64_t>& lin) {
        ASSERT_EQ(got[e], a[static_cast<size_t>(lin[0])] + b[static_cast<size_t>(lin[1])]) << e;
        ++e;
    });
}

TEST(Broadcast, ThreeInputWhere)
{
    std::mt19937 rng(7);
    for (int iter = 0; iter < 200; ++iter) {
        const int rank = iter % 6;
        Shape out(static_cast<size_t>(rank));
        for (auto& d : out) d = std::uniform_int_distribution<int>(1, 5)(rng);
        Shape s[3];
        for (auto& sh : s) {
            const int r = std::uniform_int_distribution<int>(0, rank)(rng);
            sh.assign(out.end() - r, out.end());
            for (auto& d : sh)
                if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) d = 1;
        }
        Shape want;
        ASSERT_TRUE(ref_numpy_shape({s[0], s[1], s[2]}, want));
        const BroadcastPlan plan = broadcast_numpy({s[0], s[1], s[2]});
        ASSERT_EQ(plan.out_shape, want);
        std::unique_ptr<bool[]> cond(new bool[static_cast<size_t>(numel_of(s[0]))]);
        for (int64_t i = 0; i < numel_of(s[0]); ++i) cond[i] = (rng() & 1) != 0;
        const auto x = random_values<float>(rng, numel_of(s[1]), -1, 1);
        const auto y = random_values<float>(rng, numel_of(s[2]), -1, 1);
        std::vector<float> got(static_cast<size_t>(plan.numel));
        broadcast_ternary(plan, cond.get(), x.data(), y.data(), got.data(), ew::Select());
        size_t e = 0;
        ref_numpy_walk(want, {s[0], s[1], s[2]}, [&](const std::vector<int64_t>& lin) {
            const float w = cond[lin[0]] ? x[static_cast<size_t>(lin[1])] : y[static_cast<size_t>(lin[2])];
            ASSERT_EQ(got[e], w) << e;
            ++e;
        });
    }
}

TEST(Broadcast, Unidirectional)
{
    BroadcastPlan p = broadcast_unidirectional({2, 3, 4}, {3, 1});
    EXPECT_EQ(p.out_shape, (Shape{2, 3, 4}));
    p = broadcast_unidirectional({2, 3, 4}, {});
    EXPECT_EQ(p.out_shape, (Shape{2, 3, 4}));
    // A never grows: B larger on an axis or of higher rank is an error.
    EXPECT_THROW(broadcast_unidirectional({2, 1, 4}, {3, 4}), Error);
    EXPECT_THROW(broadcast_unidirectional({3, 4}, {1, 3, 4}), Error);
    EXPECT_NO_THROW(broadcast_numpy({2, 1, 4}, {3, 4}));

    const std::vector<float> a = {1, 2, 3, 4, 5, 6};
    const std::vector<float> b = {10, 20};
    std::vector<float> out(6);
    broadcast_binary(broadcast_unidirectional({2, 3}, {2, 1}), a.data(), b.data(), out.data(), ew::Mul());
    EXPECT_EQ(out, (std::vector<float>{10, 20, 30, 80, 100, 120}));
}

TEST(Broadcast, BroadcastToOneInput)
{
    const BroadcastPlan p = broadcast_to({3, 1}, {2, 3, 4});
    ASSERT_EQ(p.num_inputs(), 1);
    ASSERT_EQ(p.out_shape, (Shape{2, 3, 4}));
    const std::vector<int16_t> in = {7, 8, 9};
    std::vector<int16_t> out(24);
    broadcast_unary(p, in.data(), out.data(), [](int16_t v) { return v; });
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], in[(i / 4) % 3]) << i;
    EXPECT_THROW(broadcast_to({2, 3}, {3, 3}), Error);
    EXPECT_THROW(broadcast_to({1, 2, 3}, {2, 3}), Error);
}

TEST(Broadcast, IncompatibleShapesNameBothShapes)
{
    auto message = [](auto fn) -> std::string {
        try {
            fn();
        } catch (const Error& e) {
            return e.what();
        }
        return "no error";
    };
    std::string m = message([] { broadcast_numpy({2, 3}, {4}); });
    EXPECT_NE(m.find("(2,3)"), std::string::npos) << m;
    EXPECT_NE(m.find("(4,)"), std::string::npos) << m;
    EXPECT_NE(m.find("numpy"), std::string::npos) << m;
    m = message([] { broadcast_ncnn({4, 3, 2}, {5, 3, 2}); });
    EXPECT_NE(m.find("(4,3,2)"), std::string::npos) << m;
    EXPECT_NE(m.find("(5,3,2)"), std::string::npos) << m;
    EXPECT_NE(m.find("ncnn"), std::string::npos) << m;
    m = message([] { broadcast_numpy({{2}, {2}, {3}}); });
    EXPECT_NE(m.find("(3,)"), std::string::npos) << m;
    EXPECT_THROW(broadcast_ncnn({1, 2, 3, 4, 5}, {1}), Error); // ncnn rank cap
    EXPECT_THROW(broadcast_ncnn({2, 3}, {4, 3}), Error);
    EXPECT_THROW(broadcast_ncnn({3}, {2}), Error);
    EXPECT_THROW(broadcast_numpy({3, 0}, {2}), Error); // 0 is a size like any other
    EXPECT_THROW(broadcast_numpy({-1}, {1}), Error);
}

TEST(Broadcast, InPlaceAndOverlap)
{
    // out is a's buffer (full, same element size): written in place.
    std::vector<float> a(4 * 40);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
    const std::vector<float> a0 = a;
    std::vector<float> b(40);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 0.5f;
    broadcast_binary(broadcast_numpy({4, 40}, {40}), a.data(), b.data(), a.data(), ew::Sub());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], a0[i] - b[i % 40]);

    // b (broadcast, smaller) lies inside out: it must be read before being overwritten.
    std::vector<float> buf(4 * 40);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(i) + 1000;
    const std::vector<float> buf0 = buf;
    broadcast_binary(broadcast_numpy({4, 40}, {40}), a0.data(), buf.data(), buf.data(), ew::Add());
    for (size_t i = 0; i < buf.size(); ++i) ASSERT_EQ(buf[i], a0[i] + buf0[i % 40]) << i;

    // Shifted overlap (out = a + 1 element)
    std::vector<int32_t> v(65);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i);
    const std::vector<int32_t> v0 = v;
    const int32_t one = 1;
    broadcast_binary(broadcast_numpy({64}, {}), v.data(), &one, v.data() + 1, ew::Add());
    for (size_t i = 0; i < 64; ++i) ASSERT_EQ(v[i + 1], v0[i] + 1);

    // unary in place
    std::vector<float> u = {1, 4, 9, 16};
    broadcast_unary(elementwise_plan({4}), u.data(), u.data(), ew::Sqrt());
    EXPECT_EQ(u, (std::vector<float>{1, 2, 3, 4}));
}

TEST(Broadcast, MultithreadedMatchesSerial)
{
    ThreadPool pool(3);
    std::mt19937 rng(5);
    const std::vector<std::pair<Shape, Shape>> cases = {
        {{1, 200000}, {1}},          // one long row: split into chunks
        {{3, 70001}, {3, 1}},        // few long rows, odd length
        {{64, 33, 17}, {33, 1}},     // many rows
        {{5, 1, 4099}, {1, 7, 4099}},
        {{2, 3, 50000}, {50000}},
    };
    for (const auto& [sa, sb] : cases) {
        SCOPED_TRACE(str(sa) + " with " + str(sb));
        const BroadcastPlan plan = broadcast_numpy(sa, sb);
        const auto a = random_values<float>(rng, numel_of(sa), -2, 2);
        const auto b = random_values<float>(rng, numel_of(sb), -2, 2);
        std::vector<float> serial(static_cast<size_t>(plan.numel)), par(serial.size());
        broadcast_binary(plan, a.data(), b.data(), serial.data(), ew::Atan2());
        for (int threads : {2, 4, 7}) {
            std::fill(par.begin(), par.end(), 0.f);
            broadcast_binary(plan, a.data(), b.data(), par.data(), ew::Atan2(), Parallel{&pool, threads});
            ASSERT_EQ(std::memcmp(par.data(), serial.data(), par.size() * sizeof(float)), 0) << threads;
            std::fill(par.begin(), par.end(), 0.f);
            broadcast_binary(plan, a.data(), b.data(), par.data(), ew::Max(), Parallel{&pool, threads});
            std::vector<float> ref(par.size());
            size_t e = 0;
            ref_numpy_walk(plan.out_shape, {sa, sb}, [&](const std::vector<int64_t>& lin) {
                ref[e++] = std::max(a[static_cast<size_t>(lin[0])], b[static_cast<size_t>(lin[1])]);
            });
            ASSERT_EQ(par, ref) << threads;
        }
    }
}

// Every SIMD row kernel this CPU can run, against the scalar expression, bit for
// bit, including NaN, infinities and signed zeros (max/min operand order).
TEST(Broadcast, SimdRowKernelsMatchScalar)
{
    const float specials[] = {0.f, -0.f, 1.f, -1.f, 2.5f, -3.25f, 1e-39f, 3e38f, INFINITY, -INFINITY, NAN, -NAN};
    std::mt19937 rng(11);
    auto scalar = [](SimdBinary op, float x, float y) -> float {
        switch (op) {
        case SimdBinary::Add: return x + y;
        case SimdBinary::Sub: return x - y;
        case SimdBinary::Mul: return x * y;
        case SimdBinary::Div: return x / y;
        case SimdBinary::Max: return std::max(x, y);
        case SimdBinary::Min: return std::min(x, y);
        default: return 0.f;
        }
    };
    for (const BroadcastRowKernel* kern : broadcast_row_kernels_available()) {
        for (int opi = 1; opi < kSimdBinaryCount; ++opi) {
            const SimdRowKernels* k = &kern->rows[opi];
            const auto op = static_cast<SimdBinary>(opi);
            for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257}) {
                std::vector<float> a(static_cast<size_t>(n) + 3), b(a.size());
                for (size_t i = 0; i < a.size(); ++i) {
                    a[i] = (rng() % 3 == 0) ? specials[rng() % 12] : std::uniform_real_distribution<float>(-4, 4)(rng);
                    b[i] = (rng() % 3 == 0) ? specials[rng() % 12] : std::uniform_real_distribution<float>(-4, 4)(rng);
                }
                const size_t off = static_cast<size_t>(n % 3); // unaligned starts
                for (int pattern = 0; pattern < 3; ++pattern) {
                    std::vector<float> o(static_cast<size_t>(n) + 1, 12345.f);
                    const RowKernelF32 fn = pattern == 0 ? k->vv : pattern == 1 ? k->vs : k->sv;
                    fn(o.data(), a.data() + off, b.data() + off, n);
                    for (int64_t i = 0; i < n; ++i) {
                        const float x = a[off + static_cast<size_t>(pattern == 2 ? 0 : i)];
                        const float y = b[off + static_cast<size_t>(pattern == 1 ? 0 : i)];
                        ASSERT_TRUE(same_float(o[static_cast<size_t>(i)], scalar(op, x, y)))
                            << kern->isa << " op " << opi << " pattern " << pattern << " n " << n << " i "
                            << i << ": " << x << ", " << y << " -> " << o[static_cast<size_t>(i)];
                    }
                    ASSERT_EQ(o[static_cast<size_t>(n)], 12345.f) << "wrote past the end";
                }
            }
        }
    }
    EXPECT_EQ(&broadcast_row_kernel(), broadcast_row_kernels_available().back());
    for (int opi = 1; opi < kSimdBinaryCount; ++opi)
        EXPECT_EQ(simd_row_kernels_f32(static_cast<SimdBinary>(opi)), &broadcast_row_kernel().rows[opi]);
    EXPECT_EQ(simd_row_kernels_f32(SimdBinary::None), nullptr);
}

// NaN handling of max/min through the whole engine (SIMD or not) matches std::max/min.
TEST(Broadcast, MaxMinNanSemanticsThroughEngine)
{
    std::vector<float> a(100), b(100);
    for (size_t i = 0; i < a.size(); ++i) {
        a[i] = (i % 4 == 0) ? NAN : static_cast<float>(i);
        b[i] = (i % 3 == 0) ? NAN : 50.f;
    }
    std::vector<float> o(100);
    const BroadcastPlan p = broadcast_numpy({100}, {100});
    broadcast_binary(p, a.data(), b.data(), o.data(), ew::Max());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(same_float(o[i], std::max(a[i], b[i]))) << i;
    broadcast_binary(p, a.data(), b.data(), o.data(), ew::Min());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(same_float(o[i], std::min(a[i], b[i]))) << i;
    broadcast_binary(p, a.data(), b.data(), o.data(), ew::Rev<ew::Max>());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(same_float(o[i], std::max(b[i], a[i]))) << i;
    const BroadcastPlan ps = broadcast_numpy({100}, {1});
    const float nan = NAN;
    broadcast_binary(ps, a.data(), &nan, o.data(), ew::Rev<ew::Min>());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(same_float(o[i], std::min(nan, a[i]))) << i;
}

// ---------------------------------------------------------------------------
// Functors over integer types: no UB (UBSan runs these), defined results.

TEST(Broadcast, IntegerOpsNeverCrash)
{
    const std::vector<int32_t> a = {7, -7, 7, -7, INT_MIN, INT_MIN, 0, 5, INT_MAX, 3};
    const std::vector<int32_t> b = {2, 2, -2, -2, -1, 0, 0, 0, 1, -1};
    const Shape s = {static_cast<int64_t>(a.size())};
    const BroadcastPlan p = broadcast_numpy(s, s);
    std::vector<int32_t> o(a.size());

    broadcast_binary(p, a.data(), b.data(), o.data(), ew::Div());
    EXPECT_EQ(o, (std::vector<int32_t>{3, -3, -3, 3, INT_MIN, 0, 0, 0, INT_MAX, -3}));
    broadcast_binary(p, a.data(), b.data(), o.data(), ew::Fmod()); // C: sign of a
    EXPECT_EQ(o, (std::vector<int32_t>{1, -1, 1, -1, 0, 0, 0, 0, 0, 0}));
    broadcast_binary(p, a.data(), b.data(), o.data(), ew::Mod()); // numpy: sign of b
    EXPECT_EQ(o, (std::vector<int32_t>{1, 1, -1, -1, 0, 0, 0, 0, 0, 0}));
    broadcast_binary(p, a.data(), b.data(), o.data(), ew::FloorDivide());
    EXPECT_EQ(o, (std::vector<int32_t>{3, -4, -4, 3, INT_MIN, 0, 0, 0, INT_MAX, -3}));
    broadcast_binary(p, a.data(), b.data(), o.data(), ew::Add()); // wraps
    EXPECT_EQ(o[8], INT_MIN);
    broadcast_binary(p, a.data(), b.data(), o.data(), ew::Mul());
    EXPECT_EQ(o[4], INT_MIN); // INT_MIN * -1 wraps

    const std::vector<int8_t> c = {-128, 100, 2, -2, 3};
    const std::vector<int8_t> d = {-1, 100, 7, 3, -2};
    std::vector<int8_t> o8(c.size());
    const BroadcastPlan p8 = broadcast_numpy({5}, {5});
    broadcast_binary(p8, c.data(), d.data(), o8.data(), ew::Div());
    EXPECT_EQ(o8[0], -128);
    broadcast_binary(p8, c.data(), d.data(), o8.data(), ew::Mul());
    EXPECT_EQ(o8[1], static_cast<int8_t>(10000 & 0xff)); // wraps: 10000 mod 256 = 16
    broadcast_binary(p8, c.data(), d.data(), o8.data(), ew::Pow());
    EXPECT_EQ(o8[2], static_cast<int8_t>(128 & 0xff)); // 2^7 wraps to -128
    EXPECT_EQ(o8[3], -8);
    EXPECT_EQ(o8[4], 0); // 3^-2 -> 0

    const std::vector<uint16_t> u = {65535, 40000};
    std::vector<uint16_t> ou(2);
    broadcast_binary(broadcast_numpy({2}, {2}), u.data(), u.data(), ou.data(), ew::Mul()); // no signed-int promotion
    EXPECT_EQ(ou[0], 1);
    EXPECT_EQ(ou[1], static_cast<uint16_t>((40000ull * 40000ull) & 0xffff));

    const std::vector<uint8_t> x = {1, 128, 255, 1};
    const std::vector<uint8_t> sh = {7, 1, 8, 200};
    std::vector<uint8_t> ox(4);
    broadcast_binary(broadcast_numpy({4}, {4}), x.data(), sh.data(), ox.data(), ew::ShiftLeft());
    EXPECT_EQ(ox, (std::vector<uint8_t>{128, 0, 0, 0}));
    broadcast_binary(broadcast_numpy({4}, {4}), x.data(), sh.data(), ox.data(), ew::ShiftRight());
    EXPECT_EQ(ox, (std::vector<uint8_t>{0, 64, 0, 0}));

    const std::vector<uint64_t> big = {~0ull, 10};
    const uint64_t zero = 0;
    std::vector<uint64_t> ob(2);
    broadcast_binary(broadcast_numpy({2}, {}), big.data(), &zero, ob.data(), ew::Mod());
    EXPECT_EQ(ob, (std::vector<uint64_t>{0, 0}));
}

TEST(Broadcast, LogicAndComparisonFunctors)
{
    bool a[4] = {false, false, true, true};
    bool b[4] = {false, true, false, true};
    bool o[4];
    const BroadcastPlan p = broadcast_numpy({4}, {4});
    broadcast_binary(p, a, b, o, ew::And());
    EXPECT_EQ(std::vector<bool>(o, o + 4), (std::vector<bool>{false, false, false, true}));
    broadcast_binary(p, a, b, o, ew::Or());
    EXPECT_EQ(std::vector<bool>(o, o + 4), (std::vector<bool>{false, true, true, true}));
    broadcast_binary(p, a, b, o, ew::Xor());
    EXPECT_EQ(std::vector<bool>(o, o + 4), (std::vector<bool>{false, true, true, false}));
    broadcast_unary(elementwise_plan({4}), a, o, ew::Not());
    EXPECT_EQ(std::vector<bool>(o, o + 4), (std::vector<bool>{true, true, false, false}));

    const float f[3] = {1.f, NAN, 3.f};
    const float g = 3.f;
    const BroadcastPlan ps = broadcast_numpy({3}, {});
    broadcast_binary(ps, f, &g, o, ew::Equal());
    EXPECT_EQ(std::vector<bool>(o, o + 3), (std::vector<bool>{false, false, true}));
    broadcast_binary(ps, f, &g, o, ew::NotEqual());
    EXPECT_EQ(std::vector<bool>(o, o + 3), (std::vector<bool>{true, true, false}));
    broadcast_binary(ps, f, &g, o, ew::Less());
    EXPECT_EQ(std::vector<bool>(o, o + 3), (std::vector<bool>{true, false, false}));
    broadcast_binary(ps, f, &g, o, ew::GreaterOrEqual());
    EXPECT_EQ(std::vector<bool>(o, o + 3), (std::vector<bool>{false, false, true}));
}

TEST(Broadcast, FloatModAndFloorDivide)
{
    const std::vector<double> a = {7, -7, 7, -7, 5.5, -0.0};
    const std::vector<double> b = {3, 3, -3, -3, 2, 3};
    std::vector<double> o(a.size());
    const BroadcastPlan p = broadcast_numpy({6}, {6});
    broadcast_binary(p, a.data(), b.data(), o.data(), ew::Mod());
    EXPECT_EQ(o, (std::vector<double>{1, 2, -2, -1, 1.5, 0}));
    broadcast_binary(p, a.data(), b.data(), o.data(), ew::Fmod());
    EXPECT_EQ(o, (std::vector<double>{1, -1, 1, -1, 1.5, -0.0}));
    broadcast_binary(p, a.data(), b.data(), o.data(), ew::FloorDivide());
    EXPECT_EQ(o, (std::vector<double>{2, -3, -3, 2, 2, -0.0}));
    broadcast_binary(p, a.data(), b.data(), o.data(), ew::Remainder());
    EXPECT_EQ(o, (std::vector<double>{1, -1, 1, -1, -0.5, -0.0}));
}

TEST(Broadcast, PlanSwapAndDescribe)
{
    const BroadcastPlan p = broadcast_numpy({4, 5}, {5});
    const BroadcastPlan q = p.swapped(0, 1);
    EXPECT_EQ(q.in_shapes[0], (Shape{5}));
    EXPECT_EQ(q.strides[0], p.strides[1]);
    EXPECT_NE(p.describe().find("(4,5)"), std::string::npos);
}

} // namespace
