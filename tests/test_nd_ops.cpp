// Layers in their ONNX forms (any rank and dtype). Every expectation comes from a
// naive reference written here from the ONNX operator spec (coordinates
// decoded one element at a time, index lists built by plain loops) or from
// values worked out by hand; never from the layers' own code.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kestrel/kestrel.h"
#include "kestrel/op.h"
#include "layer_test_util.h"
#ifdef KESTREL_HAVE_ONNX
#include "kestrel/onnx.h"
#include "onnx/onnx_pb.h"
#endif

using namespace kestrel;
using namespace kestrel::layer_test;

namespace {

// ---- helpers ----------------------------------------------------------------


// Random bytes: data-movement layers must carry any bit pattern unchanged.
Tensor random_bytes(const Shape& s, DType t, unsigned seed)
{
    Tensor x(s, t);
    std::mt19937 rng(seed);
    uint8_t* p = static_cast<uint8_t*>(x.raw());
    for (size_t i = 0; i < x.nbytes(); ++i) p[i] = static_cast<uint8_t>(rng() & 0xff);
    return x;
}

Tensor ramp(const Shape& s, float start = 0.f)
{
    Tensor t(s, DType::F32);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + static_cast<float>(i);
    return t;
}

// Coordinates <-> flat index, row-major.
std::vector<int64_t> coords_of(int64_t flat, const Shape& s)
{
    std::vector<int64_t> c(s.size());
    for (int k = static_cast<int>(s.size()) - 1; k >= 0; --k) {
        c[k] = flat % s[k];
        flat /= s[k];
    }
    return c;
}
int64_t flat_of(const std::vector<int64_t>& c, const Shape& s)
{
    int64_t f = 0;
    for (size_t k = 0; k < s.size(); ++k) f = f * s[k] + c[k];
    return f;
}

// Expected tensor whose element i is element src[i] of `from` (same dtype).
Tensor pick(const Tensor& from, const Shape& shape, const std::vector<int64_t>& src)
{
    Tensor out(shape, from.dtype());
    EXPECT_EQ(static_cast<int64_t>(src.size()), out.numel());
    const size_t es = dtype_size(from.dtype());
    for (size_t i = 0; i < src.size(); ++i)
        std::memcpy(static_cast<uint8_t*>(out.raw()) + i * es, static_cast<const uint8_t*>(from.raw()) + src[i] * es, es);
    return out;
}

::testing::AssertionResult same(const Tensor& got, const Tensor& want)
{
    if (got.dtype() != want.dtype())
        return ::testing::AssertionFailure() << "dtype " << dtype_name(got.dtype()) << " vs " << dtype_name(want.dtype());
    if (got.shape() != want.shape())
        return ::testing::AssertionFailure() << "shape " << shape_str(got.shape()) << " vs " << shape_str(want.shape());
    if (got.nbytes() && std::memcmp(got.raw(), want.raw(), got.nbytes()) != 0) {
        const size_t es = dtype_size(got.dtype());
        for (int64_t i = 0; i < got.numel(); ++i)
            if (std::memcmp(static_cast<const uint8_t*>(got.raw()) + i * es,
                            static_cast<const uint8_t*>(want.raw()) + i * es, es) != 0)
                return ::testing::AssertionFailure() << "element " << i << " differs";
    }
    return ::testing::AssertionSuccess();
}

ParamDict dynamic() { return P({{20, 1}}); }

// ---- Transpose -------------------------------------------------------------------

TEST(NdOpsTranspose, MatchesNaiveReferenceForRanksPermsAndDtypes)
{
    std::mt19937 rng(7);
    const std::vector<DType> dtypes = {DType::F32, DType::I8, DType::F16, DType::I64, DType::Bool};
    for (int rank = 0; rank <= 5; ++rank) {
        for (int trial = 0; trial < 4; ++trial) {
            Shape s;
            for (int k = 0; k < rank; ++k) s.push_back(1 + static_cast<int64_t>(rng() % 4));
            std::vector<int> perm(static_cast<size_t>(rank));
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), rng);
            const DType t = dtypes[static_cast<size_t>(trial + rank) % dtypes.size()];
            const Tensor x = random_bytes(s, t, static_cast<unsigned>(rank * 10 + trial));
            Shape os;
            for (int p : perm) os.push_back(s[static_cast<size_t>(p)]);
            std::vector<int64_t> src;
            for (int64_t i = 0; i < shape_numel(os); ++i) {
                const std::vector<int64_t> oc = coords_of(i, os);
                std::vector<int64_t> ic(s.size());
                for (size_t k = 0; k < perm.size(); ++k) ic[static_cast<size_t>(perm[k])] = oc[k];
                src.push_back(flat_of(ic, s));
            }
            ParamDict pd;
            if (trial % 2 == 0 || rank == 0) {
                if (rank > 0) pd.set_ints(1, perm);
                else pd.set_int(2, 1);
            } else {
                // 2=1: reversed axes
                pd.set_int(2, 1);
                std::iota(perm.rbegin(), perm.rend(), 0);
                os.clear();
                for (int p : perm) os.push_back(s[static_cast<size_t>(p)]);
                src.clear();
                for (int64_t i = 0; i < shape_numel(os); ++i) {
                    const std::vector<int64_t> oc = coords_of(i, os);
                    std::vector<int64_t> ic(s.size());
                    for (size_t k = 0; k < perm.size(); ++k) ic[static_cast<size_t>(perm[k])] = oc[k];
                    src.push_back(flat_of(ic, s));
                }
            }
            EXPECT_TRUE(same(run1("Permute", pd, {R(x)}), pick(x, os, src)))
                << "rank " << rank << " trial " << trial << " shape " << shape_str(s);
        }
    }
}

TEST(NdOpsTranspose, LargeInputWithThreadsEqualsReference)
{
    const Shape s{3, 64, 48, 5};
    const Tensor x = random_bytes(s, DType::F32, 3);
    const std::vector<int> perm{2, 0, 3, 1};
    Shape os{48, 3, 5, 64};
    std::vector<int64_t> src;
    for (int64_t i = 0; i < shape_numel(os); ++i) {
        const auto oc = coords_of(i, os);
        src.push_back(flat_of({oc[1], oc[3], oc[0], oc[2]}, s));
    }
    ParamDict pd;
    pd.set_ints(1, perm);
    EXPECT_TRUE(same(run_layer("Permute", pd, {R(x)}, 1, {}, 2)[0], pick(x, os, src)));
}

TEST(NdOpsTranspose, RejectsBadPerm)
{
    ParamDict pd;
    pd.set_ints(1, {0, 0, 1});
    EXPECT_TRUE(contains(error_of([&] { run1("Permute", pd, {R(ramp({2, 2, 2}))}); }), "not a permutation"));
    pd.set_ints(1, {1, 0});
    EXPECT_TRUE(contains(error_of([&] { run1("Permute", pd, {R(ramp({2, 2, 2}))}); }), "rank 3"));
}

// ---- Gather family ---------------------------------------------------------------

TEST(NdOpsGather, AxesNegativeIndicesAndIndexDtypes)
{
    const Shape s{3, 4, 2};
    const Tensor x = random_bytes(s, DType::I16, 11);
    const std::vector<int64_t> idx{2, -1, 0, -3, 1, 1};
    for (int axis : {0, 1, 2, -1, -2}) {
        const int a = axis < 0 ? axis + 3 : axis;
        for (bool use_i32 : {false, true}) {
            std::vector<int64_t> iv;
            for (int64_t i : idx) iv.push_back(std::clamp<int64_t>(i, -s[a], s[a] - 1));
            const Shape is{2, 3};
            Tensor indices = use_i32 ? make<int32_t>(is, DType::I32, std::vector<int32_t>(iv.begin(), iv.end()))
                                     : i64(is, iv);
            Shape os(s.begin(), s.begin() + a);
            os.insert(os.end(), is.begin(), is.end());
            os.insert(os.end(), s.begin() + a + 1, s.end());
            std::vector<int64_t> src;
            for (int64_t i = 0; i < shape_numel(os); ++i) {
                const auto oc = coords_of(i, os);
                std::vector<int64_t> ic;
                for (int k = 0; k < a; ++k) ic.push_back(oc[k]);
                int64_t j = iv[static_cast<size_t>(oc[a] * 3 + oc[a + 1])];
                if (j < 0) j += s[a];
                ic.push_back(j);
                for (size_t k = a + 2; k < oc.size(); ++k) ic.push_back(oc[k]);
                src.push_back(flat_of(ic, s));
            }
            EXPECT_TRUE(same(run1("Gather", P({{0, axis}}), {R(x), R(indices)}), pick(x, os, src))) << "axis " << axis;
        }
    }
}

TEST(NdOpsGather, ScalarIndexDropsTheAxisAndOutOfRangeFails)
{
    const Tensor x = ramp({3, 4});
    const Tensor y = run1("Gather", P({{0, 1}}), {R(x), R(i64({}, {-2}))});
    EXPECT_EQ(y.shape(), Shape({3}));
    EXPECT_EQ(values<float>(y), std::vector<float>({2, 6, 10}));
    EXPECT_TRUE(contains(error_of([&] { run1("Gather", P({{0, 1}}), {R(x), R(i64v({4}))}); }), "out of range"));
    EXPECT_TRUE(contains(error_of([&] { run1("Gather", P({{0, 2}}), {R(x), R(i64v({0}))}); }), "axis"));
}

TEST(NdOpsGather, GatherElementsMatchesReference)
{
    const Shape s{3, 4};
    const Tensor x = ramp(s, 1.f);
    for (int axis : {0, 1, -1}) {
        const int a = axis < 0 ? axis + 2 : axis;
        const Shape is{2, 3};
        std::vector<int64_t> iv{0, -1, 2, 1, 1, -2};
        const Tensor indices = i64(is, iv);
        std::vector<int64_t> src;
        for (int64_t i = 0; i < shape_numel(is); ++i) {
            auto c = coords_of(i, is);
            int64_t j = iv[static_cast<size_t>(i)];
            if (j < 0) j += s[a];
            c[a] = j;
            src.push_back(flat_of(c, s));
        }
        EXPECT_TRUE(same(run1("GatherElements", P({{0, axis}}), {R(x), R(indices)}), pick(x, is, src)));
    }
}

TEST(NdOpsGather, GatherNDWithBatchDims)
{
    // batch_dims 0: indices [[1,0],[0,2]] on (2,3,2) picks rows x[1,0,:] and x[0,2,:].
    const Tensor x = ramp({2, 3, 2});
    Tensor y = run1("GatherND", P({}), {R(x), R(i64({2, 2}, {1, 0, 0, 2}))});
    EXPECT_EQ(y.shape(), Shape({2, 2}));
    EXPECT_EQ(values<float>(y), std::vector<float>({6, 7, 4, 5}));
    // batch_dims 1: per batch b, indices[b] = [[i]] picks x[b, i, :].
    y = run1("GatherND", P({{0, 1}}), {R(x), R(i64({2, 1, 1}, {2, -3}))});
    EXPECT_EQ(y.shape(), Shape({2, 1, 2}));
    EXPECT_EQ(values<float>(y), std::vector<float>({4, 5, 6, 7}));
    // Full tuples give scalars.
    y = run1("GatherND", P({}), {R(x), R(i64({3}, {1, 2, 1}))});
    EXPECT_EQ(y.shape(), Shape({}));
    EXPECT_EQ(values<float>(y), std::vector<float>({11}));
    EXPECT_TRUE(contains(error_of([&] { run1("GatherND", P({}), {R(x), R(i64({1, 4}, {0, 0, 0, 0}))}); }),
                         "last dim"));
}

// ---- Scatter family ----------------------------------------------------------

TEST(NdOpsScatter, ScatterElementsAllReductionsWithDuplicates)
{
    const Shape s{2, 3};
    const std::vector<float> data{1, 2, 3, 4, 5, 6};
    const Shape is{2, 2};
    const std::vector<int64_t> idx{2, 2, -3, 1}; // row 0 hits column 2 twice
    const std::vector<float> upd{10, 20, 30, 40};
    for (int red = 0; red <= 4; ++red) {
        std::vector<float> want = data;
        for (int64_t i = 0; i < shape_numel(is); ++i) {
            const auto c = coords_of(i, is);
            int64_t j = idx[static_cast<size_t>(i)];
            if (j < 0) j += 3;
            float& d = want[static_cast<size_t>(c[0] * 3 + j)];
            const float u = upd[static_cast<size_t>(i)];
            d = red == 0 ? u : red == 1 ? d + u : red == 2 ? d * u : red == 3 ? std::max(d, u) : std::min(d, u);
        }
        const Tensor y = run1("ScatterElements", P({{0, 1}, {1, red}}), {R(f32(s, data)), R(i64(is, idx)), R(f32(is, upd))});
        EXPECT_EQ(values<float>(y), want) << "reduction " << red;
    }
}

TEST(NdOpsScatter, ScatterElementsAxis0OnInt64)
{
    const Tensor data = i64({3, 2}, {1, 2, 3, 4, 5, 6});
    const Tensor y = run1("ScatterElements", P({}), {R(data), R(i64({1, 2}, {2, 0})), R(i64({1, 2}, {-7, -8}))});
    EXPECT_EQ(values<int64_t>(y), std::vector<int64_t>({1, -8, 3, 4, -7, 6}));
}

TEST(NdOpsScatter, ScatterNDSlicesAndReductions)
{
    const Shape s{4, 2};
    const Tensor data = ramp(s);
    // k = 1: whole rows; row 1 is updated twice.
    const Tensor idx = i64({3, 1}, {1, -1, 1});
    const Tensor upd = f32({3, 2}, {10, 11, 20, 21, 30, 31});
    for (int red : {0, 1, 2}) {
        std::vector<float> want = values<float>(data);
        const std::vector<int64_t> rows{1, 3, 1};
        for (size_t t = 0; t < 3; ++t)
            for (int e = 0; e < 2; ++e) {
                float& d = want[static_cast<size_t>(rows[t] * 2 + e)];
                const float u = upd.data<float>()[t * 2 + e];
                d = red == 0 ? u : red == 1 ? d + u : d * u;
            }
        EXPECT_EQ(values<float>(run1("ScatterND", P({{0, red}}), {R(data), R(idx), R(upd)})), want) << red;
    }
    // k = rank: single elements.
    const Tensor y = run1("ScatterND", P({}), {R(data), R(i64({2, 2}, {0, 1, 3, 0})), R(f32({2}, {-1, -2}))});
    EXPECT_EQ(values<float>(y), std::vector<float>({0, -1, 2, 3, 4, 5, -2, 7}));
    EXPECT_TRUE(contains(error_of([&] { run1("ScatterND", P({}), {R(data), R(idx), R(f32({3}, {1, 2, 3}))}); }),
                         "updates"));
}

// ---- Slice -------------------------------------------------------------------------

// ONNX Slice index list of one axis, written from the spec's pseudo-code.
std::vector<int64_t> slice_indices(int64_t dim, int64_t start, int64_t end, int64_t step)
{
    auto fix = [&](int64_t v, int64_t lo, int64_t hi) {
        if (v < 0) v += dim;
        return std::max(lo, std::min(hi, v));
    };
    std::vector<int64_t> out;
    if (step > 0) {
        for (int64_t i = fix(start, 0, dim), e = fix(end, 0, dim); i < e; i += step) out.push_back(i);
    } else {
        for (int64_t i = fix(start, 0, dim - 1), e = fix(end, -1, dim - 1); i > e; i += step) out.push_back(i);
    }
    return out;
}

TEST(NdOpsSlice, NegativeStepsClampingAndAxesAgainstReference)
{
    const Shape s{4, 5, 6};
    const Tensor x = random_bytes(s, DType::U16, 5);
    struct Case {
        std::vector<int64_t> starts, ends, axes, steps;
    };
    const std::vector<Case> cases = {
        {{-1}, {INT64_MIN}, {1}, {-1}},             // reverse an axis
        {{100, 1}, {-100, 4}, {2, 0}, {-2, 2}},     // clamped starts/ends, two axes out of order
        {{0, 0, 0}, {INT64_MAX, INT64_MAX, 3}, {}, {1, 3, 1}},
        {{3}, {3}, {-1}, {1}},                       // empty
        {{-2, 4}, {-5, -10}, {-3, -1}, {-1, -3}},   // negative axes
        {{1}, {0}, {0}, {-5}},
    };
    for (size_t ci = 0; ci < cases.size(); ++ci) {
        const Case& c = cases[ci];
        std::vector<std::vector<int64_t>> lists(3);
        for (int k = 0; k < 3; ++k)
            for (int64_t i = 0; i < s[k]; ++i) lists[k].push_back(i);
        for (size_t i = 0; i < c.starts.size(); ++i) {
            int64_t a = c.axes.empty() ? static_cast<int64_t>(i) : c.axes[i];
            if (a < 0) a += 3;
            lists[static_cast<size_t>(a)] = slice_indices(s[a], c.starts[i], c.ends[i], c.steps[i]);
        }
        const Shape os{static_cast<int64_t>(lists[0].size()), static_cast<int64_t>(lists[1].size()),
                       static_cast<int64_t>(lists[2].size())};
        std::vector<int64_t> src;
        for (int64_t i = 0; i < shape_numel(os); ++i) {
            const auto oc = coords_of(i, os);
            src.push_back(flat_of({lists[0][oc[0]], lists[1][oc[1]], lists[2][oc[2]]}, s));
        }
        const Tensor want = pick(x, os, src);
        std::vector<In> ins{R(x), C(i64v(c.starts)), C(i64v(c.ends))};
        ins.push_back(C(i64v(c.axes))); // empty = default axes
        ins.push_back(C(i64v(c.steps)));
        EXPECT_TRUE(same(run1("Crop", P({{22, 1}}), ins), want)) << "case " << ci;
        // The same with values fed at run time (dynamic).
        std::vector<In> rins{R(x), R(i64v(c.starts)), R(i64v(c.ends)), R(i64v(c.axes)), R(i64v(c.steps))};
        EXPECT_TRUE(same(run1("Crop", P({{22, 1}, {23, 1}}), rins), want)) << "dynamic case " << ci;
    }
}

TEST(NdOpsSlice, HandWorkedNegativeStepAndErrors)
{
    // x = 0..9, start -1, end INT64_MIN, step -3 -> 9 6 3 0
    const Tensor x = ramp({10});
    Tensor y = run1("Crop", P({{22, 1}}), {R(x), C(i64v({-1})), C(i64v({INT64_MIN})), C(i64v({0})), C(i64v({-3}))});
    EXPECT_EQ(values<float>(y), std::vector<float>({9, 6, 3, 0}));
    // int32 starts/ends, no axes/steps
    y = run1("Crop", P({{22, 1}}), {R(x), C(i32v({2})), C(i32v({-5}))});
    EXPECT_EQ(values<float>(y), std::vector<float>({2, 3, 4}));
    EXPECT_TRUE(contains(
        error_of([&] { run1("Crop", P({{22, 1}}), {R(x), C(i64v({0})), C(i64v({5})), C(i64v({0})), C(i64v({0}))}); }),
        "step"));
    EXPECT_TRUE(contains(error_of([&] { run1("Crop", P({{22, 1}}), {R(x), R(i64v({0})), R(i64v({5}))}); }),
                         "known while planning"));
}

// ---- Pad ---------------------------------------------------------------------------

// Source index of output index o on an axis of size d padded by `begin` in
// `mode`, by repeated mirroring/stepping (not a closed formula); -1 = fill.
int64_t pad_source(int64_t o, int64_t begin, int64_t d, int mode)
{
    int64_t i = o - begin;
    if (i >= 0 && i < d) return i;
    switch (mode) {
    case 0: return -1;
    case 1:
        if (d == 1) return 0;
        while (i < 0 || i >= d) {
            if (i < 0) i = -i;
            if (i >= d) i = 2 * (d - 1) - i;
        }
        return i;
    case 2: return i < 0 ? 0 : d - 1;
    default:
        while (i < 0) i += d;
        while (i >= d) i -= d;
        return i;
    }
}

TEST(NdOpsPad, AllModesAgainstReference)
{
    const Shape s{3, 4};
    const Tensor x = ramp(s, 1.f);
    const std::vector<std::vector<int64_t>> pads_list = {{1, 2, 2, 3}, {0, 0, 0, 0}, {2, 3, 2, 5}, {-1, 1, 0, -2}};
    for (int mode = 0; mode <= 3; ++mode) {
        for (const auto& pads : pads_list) {
            const Shape os{s[0] + pads[0] + pads[2], s[1] + pads[1] + pads[3]};
            std::vector<float> want;
            for (int64_t i = 0; i < shape_numel(os); ++i) {
                const auto oc = coords_of(i, os);
                const int64_t r = pad_source(oc[0], pads[0], s[0], mode), c = pad_source(oc[1], pads[1], s[1], mode);
                want.push_back(r < 0 || c < 0 ? 7.5f : x.data<float>()[r * s[1] + c]);
            }
            static const int kType[4] = {0, 2, 1, 3}; // Padding's types of ONNX's modes
            const Tensor y = run1("Padding", P({{21, 1}, {4, kType[mode]}}), {R(x), C(i64v(pads)), C(f32({}, {7.5f}))});
            EXPECT_EQ(y.shape(), os);
            EXPECT_EQ(values<float>(y), want) << "mode " << mode << " pads " << shape_str(pads);
        }
    }
}

TEST(NdOpsPad, HandWorkedModesAxesAndDtypes)
{
    const Tensor x = f32({3}, {1, 2, 3});
    EXPECT_EQ(values<float>(run1("Padding", P({{21, 1}, {4, 2}}), {R(x), C(i64v({2, 2}))})),
              std::vector<float>({3, 2, 1, 2, 3, 2, 1}));
    EXPECT_EQ(values<float>(run1("Padding", P({{21, 1}, {4, 1}}), {R(x), C(i64v({2, 1}))})), std::vector<float>({1, 1, 1, 2, 3, 3}));
    EXPECT_EQ(values<float>(run1("Padding", P({{21, 1}, {4, 3}}), {R(x), C(i64v({2, 1}))})), std::vector<float>({2, 3, 1, 2, 3, 1}));
    EXPECT_EQ(values<float>(run1("Padding", P({{21, 1}}), {R(x), C(i64v({1, 0}))})), std::vector<float>({0, 1, 2, 3}));
    // axes input (opset 18): pad only the last axis of (2, 2), int64 data, value converted from float.
    const Tensor xi = i64({2, 2}, {1, 2, 3, 4});
    const Tensor y = run1("Padding", P({{21, 1}}), {R(xi), C(i64v({1, 0})), C(f32({}, {9.f})), C(i64v({-1}))});
    EXPECT_EQ(y.shape(), Shape({2, 3}));
    EXPECT_EQ(values<int64_t>(y), std::vector<int64_t>({9, 1, 2, 9, 3, 4}));
    // Pads fed at run time need dynamic=1.
    EXPECT_EQ(run1("Padding", P({{20, 1}, {21, 1}}), {R(x), R(i64v({1, 1}))}).shape(), Shape({5}));
    EXPECT_TRUE(contains(error_of([&] { run1("Padding", P({{21, 1}}), {R(x), C(i64v({1, 1, 1}))}); }), "pads"));
    EXPECT_TRUE(contains(error_of([&] { run1("Padding", P({{21, 1}}), {R(x), C(i64v({-2, -2}))}); }), "below zero"));
}

// ---- shape-value flow through a Session ----------------------------------------

TEST(NdOpsShapeFlow, ShapeGatherConcatReshapeFoldsWhilePlanning)
{
    // y = Reshape(x, Concat(Gather(Shape(x), [0]), [-1])): (N, ...) -> (N, rest)
    Net net;
    net.add_layer("Input", "x", {}, {"x"});
    net.add_layer("Shape", "shape", {"x"}, {"s"});
    const Tensor zero = i64v({0}), minus1 = i64v({-1});
    net.add_layer("Constant", "idx", {}, {"idx"}, constant_params(zero), {zero});
    net.add_layer("Gather", "gather", {"s", "idx"}, {"n"}, P({{0, 0}}));
    net.add_layer("Constant", "m1", {}, {"m1"}, constant_params(minus1), {minus1});
    net.add_layer("Concat", "concat", {"n", "m1"}, {"target"}, P({{0, 0}}));
    net.add_layer("Reshape", "reshape", {"x", "target"}, {"y"});
    net.add_layer("Size", "size", {"x"}, {"count"});
    net.finish_graph();
    Session session(net);
    std::vector<std::string> ran;
    session.set_callbacks(nullptr, [&](const OpEvent& e) { ran.push_back(e.layer_name); });
    for (const Shape& s : {Shape{2, 3, 4}, Shape{5, 2, 1, 3}, Shape{1, 7}}) {
        ran.clear();
        const Tensor x = ramp(s);
        session.set_input("x", x);
        const std::vector<Tensor> out = session.run({"y", "count", "target"});
        EXPECT_EQ(out[0].shape(), Shape({s[0], shape_numel(s) / s[0]}));
        EXPECT_EQ(values<float>(out[0]), values<float>(x));
        EXPECT_EQ(values<int64_t>(out[1]), std::vector<int64_t>({shape_numel(s)}));
        EXPECT_EQ(values<int64_t>(out[2]), std::vector<int64_t>({s[0], -1}));
        // Shape, Gather, Concat and Size were evaluated while planning; only the view step remains.
        EXPECT_EQ(ran, std::vector<std::string>({"reshape"}));
    }
}

TEST(NdOpsShapeFlow, ShapeStartEndAndSliceOfShape)
{
    const Tensor x = ramp({2, 3, 4, 5});
    EXPECT_EQ(values<int64_t>(run1("Shape", P({}), {R(x)})), std::vector<int64_t>({2, 3, 4, 5}));
    EXPECT_EQ(values<int64_t>(run1("Shape", P({{0, 1}, {1, -1}}), {R(x)})), std::vector<int64_t>({3, 4}));
    EXPECT_EQ(values<int64_t>(run1("Shape", P({{0, -10}, {1, 10}}), {R(x)})), std::vector<int64_t>({2, 3, 4, 5}));
    EXPECT_EQ(run1("Shape", P({{0, 3}, {1, 1}}), {R(x)}).shape(), Shape({0}));
    EXPECT_EQ(run1("Size", P({}), {R(x)}).shape(), Shape({}));
}

TEST(NdOpsShapeFlow, ReshapeRulesAndDynamicShapes)
{
    const Tensor x = ramp({2, 3, 4});
    EXPECT_EQ(run1("Reshape", P({}), {R(x), C(i64v({0, -1}))}).shape(), Shape({2, 12}));
    EXPECT_EQ(run1("Reshape", P({}), {R(x), C(i64v({4, 0, 2}))}).shape(), Shape({4, 3, 2}));
    EXPECT_EQ(run1("Reshape", P({}), {R(x), C(i64v({-1}))}).shape(), Shape({24}));
    // allowzero: a 0 is a real zero dim.
    EXPECT_EQ(run1("Reshape", P({{21, 1}}), {R(Tensor({0, 3}, DType::F32)), C(i64v({3, 0}))}).shape(), Shape({3, 0}));
    EXPECT_TRUE(contains(error_of([&] { run1("Reshape", P({{21, 1}}), {R(x), C(i64v({0, -1}))}); }), "-1"));
    EXPECT_TRUE(contains(error_of([&] { run1("Reshape", P({}), {R(x), C(i64v({5, -1}))}); }), "cannot reshape"));
    EXPECT_TRUE(contains(error_of([&] { run1("Reshape", P({}), {R(x), C(i64v({-1, -1}))}); }), "more than one"));
    EXPECT_TRUE(contains(error_of([&] { run1("Reshape", P({}), {R(x), R(i64v({6, 4}))}); }), "known while planning"));
    // dynamic=1: the shape arrives at run time.
    const Tensor y = run1("Reshape", dynamic(), {R(x), R(i64v({6, -1}))});
    EXPECT_EQ(y.shape(), Shape({6, 4}));
    EXPECT_EQ(values<float>(y), values<float>(x));
}

TEST(NdOpsShapeFlow, DynamicReshapeFeedsDownstreamLayers)
{
    // x -> Reshape(dynamic, shape from a graph input) -> Transpose: the
    // transpose is re-inferred with the real shape at run time.
    Net net;
    net.add_layer("Input", "x", {}, {"x"});
    net.add_layer("Input", "shape", {}, {"shape"});
    net.add_layer("Reshape", "r", {"x", "shape"}, {"r"}, dynamic());
    net.add_layer("Permute", "t", {"r"}, {"y"}, P({{2, 1}}));
    net.finish_graph();
    Session session(net);
    const Tensor x = ramp({6});
    session.set_input("x", x);
    session.set_input("shape", i64v({2, 3}));
    Tensor y = session.get("y");
    EXPECT_EQ(y.shape(), Shape({3, 2}));
    EXPECT_EQ(values<float>(y), std::vector<float>({0, 3, 1, 4, 2, 5}));
    session.set_input("shape", i64v({3, 2}));
    y = session.get("y");
    EXPECT_EQ(y.shape(), Shape({2, 3}));
    EXPECT_EQ(values<float>(y), std::vector<float>({0, 2, 4, 1, 3, 5}));
}

TEST(NdOpsShapeFlow, DynamicLayersUseValuesKnownWhilePlanning)
{
    // Reshape and TopK with 20=dynamic=1 fed from a shape chain: the values are
    // known while planning, so downstream layers are planned with the real shapes.
    Net net;
    net.add_layer("Input", "x", {}, {"x"});
    net.add_layer("Shape", "shape", {"x"}, {"s"});
    const Tensor idx = i64v({1}), minus1 = i64v({-1});
    net.add_layer("Constant", "idx", {}, {"idx"}, constant_params(idx), {idx});
    net.add_layer("Constant", "m1", {}, {"m1"}, constant_params(minus1), {minus1});
    net.add_layer("Gather", "k", {"s", "idx"}, {"k"});
    net.add_layer("TopK", "topk", {"x", "k"}, {"v", "i"}, P({{0, 0}, {20, 1}}));
    net.add_layer("Concat", "target", {"k", "m1"}, {"target"});
    net.add_layer("Reshape", "r", {"x", "target"}, {"r"}, dynamic());
    net.add_layer("Permute", "t", {"r"}, {"y"}, P({{2, 1}}));
    net.finish_graph();
    Session session(net);
    const Tensor x = ramp({3, 2}); // k = dim 1 = 2
    session.set_input("x", x);
    const std::vector<Tensor> out = session.run({"v", "i", "y"});
    EXPECT_EQ(out[0].shape(), Shape({2, 2}));
    EXPECT_EQ(values<float>(out[0]), std::vector<float>({4, 5, 2, 3}));
    EXPECT_EQ(values<int64_t>(out[1]), std::vector<int64_t>({2, 2, 1, 1}));
    // (3, 2) reshaped to (2, -1) = (2, 3), then transposed to (3, 2).
    EXPECT_EQ(out[2].shape(), Shape({3, 2}));
    EXPECT_EQ(values<float>(out[2]), std::vector<float>({0, 3, 1, 4, 2, 5}));
}

TEST(NdOpsShapeFlow, FlattenSqueezeUnsqueeze)
{
    const Tensor x = ramp({2, 1, 3, 1});
    EXPECT_EQ(run1("Flatten", P({{0, 1}}), {R(x)}).shape(), Shape({2, 3}));
    EXPECT_EQ(run1("Flatten", P({}), {R(x)}).shape(), Shape({6})); // ncnn's form: one row
    EXPECT_EQ(run1("Flatten", P({{0, 0}}), {R(x)}).shape(), Shape({1, 6}));
    EXPECT_EQ(run1("Flatten", P({{0, 4}}), {R(x)}).shape(), Shape({6, 1}));
    EXPECT_EQ(run1("Flatten", P({{0, -1}}), {R(x)}).shape(), Shape({6, 1}));
    EXPECT_EQ(run1("Squeeze", P({{21, 1}}), {R(x)}).shape(), Shape({2, 3}));
    EXPECT_EQ(run1("Squeeze", P({{21, 1}}), {R(x), C(i64v({-1}))}).shape(), Shape({2, 1, 3}));
    EXPECT_EQ(run1("ExpandDims", P({{21, 1}}), {R(x), C(i64v({0, -1}))}).shape(), Shape({1, 2, 1, 3, 1, 1}));
    EXPECT_EQ(run1("ExpandDims", P({{21, 1}}), {R(f32({}, {1.f})), C(i64v({0}))}).shape(), Shape({1}));
    EXPECT_EQ(run1("ExpandDims", P({{20, 1}, {21, 1}}), {R(ramp({3})), R(i64v({1}))}).shape(), Shape({3, 1}));
    EXPECT_TRUE(contains(error_of([&] { run1("Squeeze", P({{21, 1}}), {R(x), C(i64v({0}))}); }), "not 1"));
    EXPECT_TRUE(contains(error_of([&] { run1("ExpandDims", P({{21, 1}}), {R(x), C(i64v({1, 1}))}); }), "repeat"));
    EXPECT_EQ(values<float>(run1("Squeeze", P({{21, 1}}), {R(x)})), values<float>(x));
}

// ---- split / concat / expand / tile -----------------------------------------

TEST(NdOpsJoin, SplitEvenUnevenAndSizes)
{
    const Tensor x = ramp({2, 7});
    std::vector<Tensor> out = run_layer("Slice", P({{1, 1}}), {R(x)}, 3);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].shape(), Shape({2, 3}));
    EXPECT_EQ(out[2].shape(), Shape({2, 1}));
    EXPECT_EQ(values<float>(out[1]), std::vector<float>({3, 4, 5, 10, 11, 12}));
    EXPECT_EQ(values<float>(out[2]), std::vector<float>({6, 13}));
    out = run_layer("Slice", P({{1, -1}}), {R(x), C(i64v({1, 0, 6}))}, 3);
    EXPECT_EQ(values<float>(out[0]), std::vector<float>({0, 7}));
    EXPECT_EQ(out[1].shape(), Shape({2, 0}));
    EXPECT_EQ(out[2].shape(), Shape({2, 6}));
    out = run_layer("Slice", dynamic(), {R(x), R(i64v({1, 1}))}, 2);
    EXPECT_EQ(values<float>(out[1]), std::vector<float>({7, 8, 9, 10, 11, 12, 13}));
    EXPECT_TRUE(contains(error_of([&] { run_layer("Slice", P({}), {R(x), C(i64v({1, 2}))}, 2); }), "sum to"));
}

TEST(NdOpsJoin, ConcatAnyRankAndDtype)
{
    const Tensor a = random_bytes({2, 1, 2, 1, 3}, DType::I8, 1), b = random_bytes({2, 2, 2, 1, 3}, DType::I8, 2);
    const Tensor y = run1("Concat", P({{0, 1}}), {R(a), R(b)});
    EXPECT_EQ(y.shape(), Shape({2, 3, 2, 1, 3}));
    for (int64_t i = 0; i < y.numel(); ++i) {
        const auto c = coords_of(i, y.shape());
        const int8_t want = c[1] < 1 ? a.data<int8_t>()[flat_of(c, a.shape())]
                                     : b.data<int8_t>()[flat_of({c[0], c[1] - 1, c[2], c[3], c[4]}, b.shape())];
        ASSERT_EQ(y.data<int8_t>()[i], want) << i;
    }
    EXPECT_EQ(values<int64_t>(run1("Concat", P({}), {R(i64v({1})), R(i64v({})), R(i64v({2, 3}))})),
              std::vector<int64_t>({1, 2, 3}));
    EXPECT_TRUE(contains(error_of([&] { run1("Concat", P({}), {R(ramp({2})), R(i64v({1}))}); }), "int64"));
}

TEST(NdOpsJoin, ExpandAndTileAgainstReference)
{
    const Tensor x = f32({3, 1}, {1, 2, 3});
    Tensor y = run1("Expand", P({}), {R(x), C(i64v({2, 1, 4}))});
    EXPECT_EQ(y.shape(), Shape({2, 3, 4}));
    for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.data<float>()[i], x.data<float>()[coords_of(i, y.shape())[1]]);
    y = run1("Expand", dynamic(), {R(x), R(i64v({3, 2}))});
    EXPECT_EQ(values<float>(y), std::vector<float>({1, 1, 2, 2, 3, 3}));
    EXPECT_TRUE(contains(error_of([&] { run1("Expand", P({}), {R(x), C(i64v({2, 2}))}); }), "3"));

    const Tensor t = random_bytes({2, 3}, DType::I16, 9);
    y = run1("Tile", P({{21, 1}}), {R(t), C(i64v({3, 2}))});
    EXPECT_EQ(y.shape(), Shape({6, 6}));
    for (int64_t i = 0; i < y.numel(); ++i) {
        const auto c = coords_of(i, y.shape());
        ASSERT_EQ(y.data<int16_t>()[i], t.data<int16_t>()[(c[0] % 2) * 3 + c[1] % 3]);
    }
    EXPECT_EQ(run1("Tile", P({{20, 1}, {21, 1}}), {R(t), R(i64v({0, 1}))}).shape(), Shape({0, 3}));
}

// ---- generators, casts, index ops ---------------------------------------------

TEST(NdOpsMisc, ConstantOfShapeRangeEyeLike)
{
    Tensor v = i64({1}, {42});
    Tensor y = run1("ConstantOfShape", P({{0, static_cast<int>(DType::I64)}}), {C(i64v({2, 3}))}, {v});
    EXPECT_EQ(y.shape(), Shape({2, 3}));
    EXPECT_EQ(values<int64_t>(y), std::vector<int64_t>(6, 42));
    y = run1("ConstantOfShape", P({{1, 0}, {20, 1}}), {R(i64v({}))});
    EXPECT_EQ(y.shape(), Shape({}));
    EXPECT_EQ(values<float>(y), std::vector<float>({0.f}));

    y = run1("Range", P({}), {C(i64({}, {10})), C(i64({}, {1})), C(i64({}, {-3}))});
    EXPECT_EQ(values<int64_t>(y), std::vector<int64_t>({10, 7, 4}));
    y = run1("Range", dynamic(), {R(f32({}, {1.f})), R(f32({}, {2.f})), R(f32({}, {0.25f}))});
    EXPECT_EQ(values<float>(y), std::vector<float>({1.f, 1.25f, 1.5f, 1.75f}));
    EXPECT_EQ(run1("Range", P({}), {C(i64({}, {1})), C(i64({}, {5})), C(i64({}, {-1}))}).shape(), Shape({0}));

    y = run1("EyeLike", P({{1, -1}}), {R(ramp({3, 4}))});
    EXPECT_EQ(values<float>(y), std::vector<float>({0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}));
    y = run1("EyeLike", P({{0, static_cast<int>(DType::I32)}, {1, 2}}), {R(ramp({2, 4}))});
    EXPECT_EQ(values<int32_t>(y), std::vector<int32_t>({0, 0, 1, 0, 0, 0, 0, 1}));
}

TEST(NdOpsMisc, CastTruncatesAndConvertsEveryPair)
{
    const Tensor x = f32({6}, {-2.7f, -0.5f, 0.f, 0.5f, 2.7f, 300.f});
    EXPECT_EQ(values<int32_t>(run1("Cast", P({{2, static_cast<int>(DType::I32)}}), {R(x)})),
              std::vector<int32_t>({-2, 0, 0, 0, 2, 300}));
    EXPECT_EQ(values<int8_t>(run1("Cast", P({{2, static_cast<int>(DType::I8)}}), {R(x)})),
              std::vector<int8_t>({-2, 0, 0, 0, 2, 127}));
    const Tensor b = run1("Cast", P({{2, static_cast<int>(DType::Bool)}}), {R(x)});
    EXPECT_EQ(values<bool>(b), std::vector<bool>({true, true, false, true, true, true}));
    // CastLike takes the dtype of input 1.
    EXPECT_EQ(values<double>(run1("Cast", P({}), {R(i64v({-3, 5})), R(Tensor({1}, DType::F64))})),
              std::vector<double>({-3.0, 5.0}));
    // Every pair round-trips small integers.
    const std::vector<DType> all = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I8, DType::U8, DType::I16,
                                    DType::U16, DType::I32, DType::U32, DType::I64, DType::U64};
    const Tensor src = i64v({0, 1, 7, 100});
    for (DType from : all)
        for (DType to : all) {
            const Tensor a = run1("Cast", P({{2, static_cast<int>(from)}}), {R(src)});
            const Tensor c = run1("Cast", P({{2, static_cast<int>(to)}}), {R(a)});
            ASSERT_EQ(c.dtype(), to);
            EXPECT_EQ(values<int64_t>(run1("Cast", P({{2, static_cast<int>(DType::I64)}}), {R(c)})), values<int64_t>(src))
                << dtype_name(from) << " -> " << dtype_name(to);
        }
}

TEST(NdOpsMisc, TopKArgMaxArgMin)
{
    const Tensor x = f32({2, 4}, {3, 1, 3, 2, -1, 5, 5, 0});
    std::vector<Tensor> out = run_layer("TopK", P({}), {R(x), C(i64v({2}))}, 2);
    EXPECT_EQ(values<float>(out[0]), std::vector<float>({3, 3, 5, 5}));
    EXPECT_EQ(values<int64_t>(out[1]), std::vector<int64_t>({0, 2, 1, 2})); // ties: lower index first
    out = run_layer("TopK", P({{0, 0}, {1, 0}, {20, 1}}), {R(x), R(i64v({1}))}, 2);
    EXPECT_EQ(out[0].shape(), Shape({1, 4}));
    EXPECT_EQ(values<float>(out[0]), std::vector<float>({-1, 1, 3, 0}));
    EXPECT_EQ(values<int64_t>(out[1]), std::vector<int64_t>({1, 0, 0, 1}));
    EXPECT_TRUE(contains(error_of([&] { run_layer("TopK", P({}), {R(x), C(i64v({5}))}, 2); }), "k (input 1)"));

    EXPECT_EQ(values<int64_t>(run1("ArgMax", P({{20, 1}, {21, 1}}), {R(x)})), std::vector<int64_t>({0, 1}));
    EXPECT_EQ(values<int64_t>(run1("ArgMax", P({{20, 1}, {21, 1}, {23, 1}}), {R(x)})), std::vector<int64_t>({2, 2}));
    const Tensor m = run1("ArgMin", P({{0, 0}, {1, 0}}), {R(x)});
    EXPECT_EQ(m.shape(), Shape({4}));
    EXPECT_EQ(values<int64_t>(m), std::vector<int64_t>({1, 0, 0, 1}));
}

TEST(NdOpsMisc, CumSumTriluOneHotNonZeroCompress)
{
    const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    EXPECT_EQ(values<float>(run1("CumSum", P({}), {R(x), C(i64({}, {1}))})), std::vector<float>({1, 3, 6, 4, 9, 15}));
    EXPECT_EQ(values<float>(run1("CumSum", P({{0, 1}, {1, 1}}), {R(x), R(i32v({-1}))})),
              std::vector<float>({5, 3, 0, 11, 6, 0}));
    EXPECT_EQ(values<float>(run1("CumSum", P({{1, 1}}), {R(x), C(i64({}, {0}))})), std::vector<float>({5, 7, 9, 4, 5, 6}));

    const Tensor sq = ramp({3, 3}, 1.f);
    EXPECT_EQ(values<float>(run1("Trilu", P({}), {R(sq)})), std::vector<float>({1, 2, 3, 0, 5, 6, 0, 0, 9}));
    EXPECT_EQ(values<float>(run1("Trilu", P({{0, 0}}), {R(sq), C(i64({}, {-1}))})),
              std::vector<float>({0, 0, 0, 4, 0, 0, 7, 8, 0}));
    EXPECT_EQ(values<float>(run1("Trilu", P({}), {R(sq), C(i64({}, {5}))})), std::vector<float>(9, 0.f));

    const Tensor oh = run1("OneHot", P({{0, 0}}), {R(i64v({0, -1, 5})), C(f32({}, {3.f})), R(f32({2}, {0.f, 2.f}))});
    EXPECT_EQ(oh.shape(), Shape({3, 3}));
    EXPECT_EQ(values<float>(oh), std::vector<float>({2, 0, 0, 0, 0, 0, 0, 2, 0}));

    const Tensor nz = run1("NonZero", P({}), {R(f32({2, 3}, {0, 1, 0, 2, 0, 3}))});
    EXPECT_EQ(nz.shape(), Shape({2, 3}));
    EXPECT_EQ(values<int64_t>(nz), std::vector<int64_t>({0, 1, 1, 1, 0, 2}));

    Tensor cond({3}, DType::Bool);
    cond.data<bool>()[0] = false;
    cond.data<bool>()[1] = true;
    cond.data<bool>()[2] = true;
    const Tensor cx = run1("Compress", P({{0, 1}}), {R(x), R(cond)});
    EXPECT_EQ(cx.shape(), Shape({2, 2}));
    EXPECT_EQ(values<float>(cx), std::vector<float>({2, 3, 5, 6}));
    EXPECT_EQ(values<float>(run1("Compress", P({{1, 0}}), {R(x), R(cond)})), std::vector<float>({2, 3}));
}

TEST(NdOpsMisc, DepthToSpaceAndSpaceToDepthAgainstReference)
{
    const int64_t n = 2, c = 8, h = 2, w = 3, b = 2;
    const Tensor x = random_bytes({n, c, h, w}, DType::F32, 4);
    for (int mode : {0, 1}) {
        const Shape os{n, c / (b * b), h * b, w * b};
        std::vector<int64_t> src;
        for (int64_t i = 0; i < shape_numel(os); ++i) {
            const auto o = coords_of(i, os);
            const int64_t bh = o[2] % b, bw = o[3] % b;
            const int64_t ch = mode == 0 ? (bh * b + bw) * (c / (b * b)) + o[1] : o[1] * b * b + bh * b + bw;
            src.push_back(flat_of({o[0], ch, o[2] / b, o[3] / b}, {n, c, h, w}));
        }
        const Tensor y = run1("DepthToSpace", P({{0, 2}, {1, mode}}), {R(x)});
        EXPECT_TRUE(same(y, pick(x, os, src))) << "mode " << mode;
        if (mode == 0) {
            // SpaceToDepth inverts DCR DepthToSpace.
            EXPECT_TRUE(same(run1("SpaceToDepth", P({{0, 2}}), {R(y)}), x));
        }
    }
    EXPECT_TRUE(contains(error_of([&] { run1("SpaceToDepth", P({{0, 2}}), {R(ramp({1, 1, 3, 4}))}); }), "multiples"));
    EXPECT_TRUE(contains(error_of([&] { run1("DepthToSpace", P({}), {R(x)}); }), "blocksize"));
}

// ---- threads ---------------------------------------------------------------------

TEST(NdOpsThreads, ResultsDoNotDependOnThreadCount)
{
    const Tensor x = random_bytes({16, 64, 72}, DType::F32, 21);
    ParamDict perm;
    perm.set_ints(1, {2, 0, 1});
    std::vector<int64_t> idx;
    for (int i = 0; i < 300; ++i) idx.push_back((i * 37) % 64 - 32);
    Tensor xf = ramp({16, 64, 72});
    struct Case {
        std::string type;
        ParamDict pd;
        std::vector<In> ins;
        int outputs;
    };
    const std::vector<Case> cases = {
        {"Permute", perm, {R(x)}, 1},
        {"Gather", P({{0, 1}}), {R(x), C(i64v(idx))}, 1},
        {"Padding", P({{21, 1}, {4, 2}}), {R(x), C(i64v({1, 3, 2, 0, 5, 7}))}, 1},
        {"Concat", P({{0, 2}}), {R(x), R(x)}, 1},
        {"Crop", P({{22, 1}}), {R(x), C(i64v({-1, 60})), C(i64v({INT64_MIN, 2})), C(i64v({0, 2})), C(i64v({-3, -5}))}, 1},
        {"Tile", P({{21, 1}}), {R(x), C(i64v({2, 1, 2}))}, 1},
        {"Cast", P({{2, static_cast<int>(DType::F16)}}), {R(xf)}, 1},
        {"TopK", P({{0, 1}}), {R(xf), C(i64v({5}))}, 2},
    };
    for (const Case& c : cases) {
        const std::vector<Tensor> one = run_layer(c.type, c.pd, c.ins, c.outputs, {}, 1);
        const std::vector<Tensor> four = run_layer(c.type, c.pd, c.ins, c.outputs, {}, 4);
        for (int i = 0; i < c.outputs; ++i) EXPECT_TRUE(same(four[i], one[i])) << c.type << " output " << i;
    }
}

#ifdef KESTREL_HAVE_ONNX
// ---- converters: attribute forms of older opsets ----------------------------------

struct OnnxCase {
    onnx::ModelProto model;
    onnx::NodeProto* node() { return model.mutable_graph()->mutable_node(0); }
};

// One-node model; outputs are (name, rank) with float type and unknown dims.
OnnxCase onnx_model(int opset, const std::string& op, const std::vector<std::pair<std::string, Shape>>& inputs,
                    const std::vector<std::pair<std::string, int>>& outputs)
{
    OnnxCase c;
    c.model.set_ir_version(8);
    c.model.add_opset_import()->set_version(opset);
    onnx::GraphProto* g = c.model.mutable_graph();
    g->set_name("g");
    onnx::NodeProto* node = g->add_node();
    node->set_op_type(op);
    node->set_name("n");
    for (const auto& [name, shape] : inputs) {
        node->add_input(name);
        onnx::ValueInfoProto* vi = g->add_input();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto::FLOAT);
        for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    for (const auto& [name, rank] : outputs) {
        node->add_output(name);
        onnx::ValueInfoProto* vi = g->add_output();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto::FLOAT);
        tt->mutable_shape();
        for (int k = 0; k < rank; ++k) tt->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(k));
    }
    return c;
}

void add_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v)
{
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
}
void add_int(onnx::NodeProto* n, const std::string& name, int64_t v)
{
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}
void add_string(onnx::NodeProto* n, const std::string& name, const std::string& v)
{
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
}

std::vector<Tensor> run_onnx(const OnnxCase& c, const std::vector<Tensor>& inputs) { return run_model(c.model, inputs); }

TEST(NdOpsConverters, OldOpsetAttributeForms)
{
    const Tensor x = ramp({2, 3, 4});
    {   // Slice opset 9: starts/ends/axes attributes
        OnnxCase c = onnx_model(9, "Slice", {{"x", {2, 3, 4}}}, {{"y", 3}});
        add_ints(c.node(), "starts", {1, -3});
        add_ints(c.node(), "ends", {INT64_MAX, -1});
        add_ints(c.node(), "axes", {1, 2});
        const Tensor y = run_onnx(c, {x})[0];
        EXPECT_EQ(y.shape(), Shape({2, 2, 2}));
        EXPECT_EQ(values<float>(y), std::vector<float>({5, 6, 9, 10, 17, 18, 21, 22}));
    }
    {   // Squeeze / Unsqueeze opset 11: axes attributes
        OnnxCase c = onnx_model(11, "Unsqueeze", {{"x", {2, 3, 4}}}, {{"y", 5}});
        add_ints(c.node(), "axes", {0, -1});
        EXPECT_EQ(run_onnx(c, {x})[0].shape(), Shape({1, 2, 3, 4, 1}));
        OnnxCase s = onnx_model(11, "Squeeze", {{"x", {1, 3, 1}}}, {{"y", 2}});
        add_ints(s.node(), "axes", {2});
        EXPECT_EQ(run_onnx(s, {ramp({1, 3, 1})})[0].shape(), Shape({1, 3}));
    }
    {   // Split opset 11: split attribute
        OnnxCase c = onnx_model(11, "Split", {{"x", {2, 3, 4}}}, {{"a", 3}, {"b", 3}});
        add_int(c.node(), "axis", 2);
        add_ints(c.node(), "split", {3, 1});
        const std::vector<Tensor> out = run_onnx(c, {x});
        EXPECT_EQ(out[0].shape(), Shape({2, 3, 3}));
        EXPECT_EQ(values<float>(out[1]), std::vector<float>({3, 7, 11, 15, 19, 23}));
    }
    {   // Pad opset 2: pads/mode/value attributes
        OnnxCase c = onnx_model(10, "Pad", {{"x", {3}}}, {{"y", 1}});
        add_ints(c.node(), "pads", {1, 2});
        add_string(c.node(), "mode", "constant");
        auto* a = c.node()->add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(-1.f);
        EXPECT_EQ(values<float>(run_onnx(c, {f32({3}, {1, 2, 3})})[0]), std::vector<float>({-1, 1, 2, 3, -1, -1}));
    }
    {   // TopK opset 9: k attribute
        OnnxCase c = onnx_model(9, "TopK", {{"x", {2, 3, 4}}}, {{"v", 3}, {"i", 3}});
        add_int(c.node(), "k", 2);
        add_int(c.node(), "axis", 1);
        const std::vector<Tensor> out = run_onnx(c, {x});
        EXPECT_EQ(out[0].shape(), Shape({2, 2, 4}));
        EXPECT_EQ(values<int64_t>(out[1])[0], 2);
    }
}

TEST(NdOpsConverters, RuntimeValueInputsBecomeDynamicLayers)
{
    // Reshape whose shape is a graph input (as in ONNX's conformance cases).
    OnnxCase c = onnx_model(14, "Reshape", {{"x", {2, 3}}, {"shape", {2}}}, {{"y", 2}});
    c.model.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::INT64);
    const Tensor y = run_onnx(c, {ramp({2, 3}), i64v({3, -1})})[0];
    EXPECT_EQ(y.shape(), Shape({3, 2}));
    EXPECT_EQ(values<float>(y), values<float>(ramp({2, 3})));
}
#endif

} // namespace
