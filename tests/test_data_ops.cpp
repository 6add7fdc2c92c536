// Data-movement layers (ncnn format): Concat, Slice, Crop, Permute, Padding,
// ShuffleChannel, MemoryData, Reshape. Every case runs on several dtypes
// (these layers copy bytes), and every expectation comes from a reference
// written here from the spec (ncnn-compat-spec §1.4, §1.6, §1.9): element
// positions are computed in ncnn's [w,h,d,c] terms by plain loops, and the
// expected boxes / piece sizes of Crop and Slice are worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kestrel/kestrel.h"
#include "kestrel/op.h"
#include "layer_test_util.h"

using namespace kestrel;

namespace {

// ---- generic helpers ---------------------------------------------------------

const std::vector<DType> kDtypes = {DType::F32, DType::I8, DType::I32};

using layer_test::contains;
using layer_test::error_of;

// Random bytes: data-movement layers must carry any bit pattern unchanged.
Tensor random_tensor(const Shape& s, DType t, unsigned seed)
{
    Tensor x(s, t);
    std::mt19937 rng(seed);
    uint8_t* p = static_cast<uint8_t*>(x.raw());
    for (size_t i = 0; i < x.nbytes(); ++i) p[i] = static_cast<uint8_t>(rng() & 0xff);
    return x;
}

Tensor ints_tensor(const Shape& s, DType t, const std::vector<int64_t>& v)
{
    Tensor x(s, t);
    for (size_t i = 0; i < v.size(); ++i) {
        if (t == DType::I32) x.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
        else if (t == DType::I64) x.data<int64_t>()[i] = v[i];
        else if (t == DType::I8) x.data<int8_t>()[i] = static_cast<int8_t>(v[i]);
        else if (t == DType::F32) {
            // ncnn stores the ints' bit patterns in a 4-byte Mat
            const int32_t w = static_cast<int32_t>(v[i]);
            std::memcpy(x.data<float>() + i, &w, 4);
        }
    }
    return x;
}

bool same_bytes(const Tensor& a, const Tensor& b)
{
    return a.shape() == b.shape() && a.dtype() == b.dtype() &&
           (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

// Builds the expected output: element i is element src[i].second of input
// src[i].first, or (first == -1) the `fill` bytes.
Tensor gather(const std::vector<Tensor>& inputs, const Shape& shape, DType t,
              const std::vector<std::pair<int, int64_t>>& src, const std::vector<std::vector<uint8_t>>& fill = {})
{
    Tensor out(shape, t);
    const size_t es = dtype_size(t);
    EXPECT_EQ(static_cast<int64_t>(src.size()), out.numel());
    for (size_t i = 0; i < src.size(); ++i) {
        uint8_t* o = static_cast<uint8_t*>(out.raw()) + i * es;
        if (src[i].first < 0) std::memcpy(o, fill[static_cast<size_t>(src[i].second)].data(), es);
        else std::memcpy(o, static_cast<const uint8_t*>(inputs[src[i].first].raw()) + src[i].second * es, es);
    }
    return out;
}

ParamDict params(const std::vector<std::pair<int, int>>& ints)
{
    ParamDict pd;
    for (auto& kv : ints) pd.set_int(kv.first, kv.second);
    return pd;
}

std::unique_ptr<Op> make_op(const std::string& type, const ParamDict& pd)
{
    auto op = create_op(type);
    if (!op) throw Error("layer type " + type + " is not registered");
    op->type = type;
    op->name = "l0";
    op->load_param(pd);
    return op;
}

TensorDesc desc_of(const Tensor& t, bool with_value)
{
    TensorDesc d;
    d.shape = t.shape();
    d.dtype = t.dtype();
    if (with_value) d.value = t;
    return d;
}

// infer + forward; `known` marks inputs whose value is passed to infer.
std::vector<Tensor> run(const Op& op, const std::vector<Tensor>& in, size_t n_out = 1, int threads = 1,
                        const std::vector<bool>& known = {})
{
    std::vector<TensorDesc> descs;
    for (size_t i = 0; i < in.size(); ++i) descs.push_back(desc_of(in[i], i < known.size() && known[i]));
    std::vector<TensorDesc> outs(n_out);
    op.infer(descs, outs);
    std::vector<Tensor> out;
    for (const auto& d : outs) out.emplace_back(d.shape, d.dtype);
    static ThreadPool pool(2);
    op.run(in, out, ExecContext(&pool, threads));
    return out;
}

std::vector<TensorDesc> infer(const Op& op, const std::vector<Tensor>& in, size_t n_out = 1)
{
    std::vector<TensorDesc> descs, outs(n_out);
    for (const auto& t : in) descs.push_back(desc_of(t, false));
    op.infer(descs, outs);
    return outs;
}

// ---- ncnn view of a shape (spec §1.4) ------------------------------------------

struct NV {
    int dims = 0;
    int64_t w = 1, h = 1, d = 1, c = 1;
};

NV nv(const Shape& s)
{
    NV v;
    v.dims = static_cast<int>(s.size());
    v.w = s[s.size() - 1];
    if (v.dims >= 2) v.h = s[s.size() - 2];
    if (v.dims == 3) v.c = s[0];
    if (v.dims == 4) v.d = s[1], v.c = s[0];
    return v;
}

int64_t lin(const NV& v, int64_t w, int64_t h, int64_t d, int64_t c) { return ((c * v.d + d) * v.h + h) * v.w + w; }

using layer_test::coords;
using layer_test::linear;

} // namespace

// ================================ registration ================================

TEST(DataOps, AllTypesRegistered)
{
    for (const char* t : {"Concat", "Slice", "Crop", "Permute", "Padding", "ShuffleChannel", "MemoryData", "Reshape",
                          "Flatten", "Split"})
        EXPECT_NE(create_op(t), nullptr) << t;
}

// =================================== Concat ===================================

namespace {
// Concatenation by definition: walk the output, find the input owning the coordinate on the axis.
Tensor ref_concat(const std::vector<Tensor>& in, int axis)
{
    const int rank = in[0].rank();
    const int a = axis < 0 ? axis + rank : axis;
    Shape out = in[0].shape();
    out[a] = 0;
    for (const auto& t : in) out[a] += t.shape()[a];
    std::vector<std::pair<int, int64_t>> src;
    for (int64_t i = 0; i < shape_numel(out); ++i) {
        std::vector<int64_t> c = coords(out, i);
        int b = 0;
        while (c[a] >= in[b].shape()[a]) c[a] -= in[b++].shape()[a];
        src.push_back({b, linear(in[b].shape(), c)});
    }
    return gather(in, out, in[0].dtype(), src);
}
} // namespace

TEST(Concat, EveryAxisEveryRankAnyDtype)
{
    struct Case {
        std::vector<Shape> shapes;
        int axis;
    };
    const std::vector<Case> cases = {
        {{{3}, {5}}, 0},
        {{{4}, {1}, {2}}, -1},
        {{{2, 5}, {3, 5}}, 0},
        {{{2, 5}, {2, 1}, {2, 3}}, 1},
        {{{2, 5}, {2, 2}}, -1},
        {{{2, 3, 4}, {1, 3, 4}}, 0},
        {{{2, 3, 4}, {2, 5, 4}, {2, 1, 4}}, 1},
        {{{2, 3, 4}, {2, 3, 2}}, 2},
        {{{2, 3, 4}, {3, 3, 4}}, -3},
        {{{2, 3, 4, 5}, {1, 3, 4, 5}}, 0},
        {{{2, 3, 4, 5}, {2, 2, 4, 5}}, 1},
        {{{2, 3, 4, 5}, {2, 3, 1, 5}, {2, 3, 2, 5}}, 2},
        {{{2, 3, 4, 5}, {2, 3, 4, 3}}, 3},
        {{{2, 3, 4, 5}, {2, 3, 6, 5}}, -2},
        {{{2, 3, 4}}, 1}, // one input: a copy
    };
    unsigned seed = 1;
    for (DType t : kDtypes) {
        for (const Case& c : cases) {
            SCOPED_TRACE(std::string(dtype_name(t)) + " axis " + std::to_string(c.axis) + " first " +
                         shape_str(c.shapes[0]));
            std::vector<Tensor> in;
            for (const auto& s : c.shapes) in.push_back(random_tensor(s, t, seed++));
            auto op = make_op("Concat", params({{0, c.axis}}));
            const Tensor got = run(*op, in)[0];
            EXPECT_TRUE(same_bytes(got, ref_concat(in, c.axis)));
        }
    }
}

TEST(Concat, DefaultAxisIsOutermostAndThreadsDoNotMatter)
{
    const std::vector<Tensor> in = {random_tensor({3, 40, 50}, DType::F32, 7), random_tensor({5, 40, 50}, DType::F32, 8)};
    auto def = make_op("Concat", ParamDict{});
    EXPECT_TRUE(same_bytes(run(*def, in, 1, 3)[0], ref_concat(in, 0)));
    const std::vector<Tensor> in2 = {random_tensor({3, 40, 50}, DType::I8, 9), random_tensor({3, 40, 7}, DType::I8, 10)};
    EXPECT_TRUE(same_bytes(run(*make_op("Concat", params({{0, 2}})), in2, 1, 3)[0], ref_concat(in2, 2)));
    // Outputs of several 64 KB parts, split among threads mid-input and
    // mid-slice: channels (one outer index) and an inner axis.
    const std::vector<Tensor> big = {random_tensor({48, 55, 55}, DType::F32, 11),
                                     random_tensor({1, 55, 55}, DType::F32, 12),
                                     random_tensor({64, 55, 55}, DType::F32, 13)};
    for (int threads : {1, 2, 3}) EXPECT_TRUE(same_bytes(run(*def, big, 1, threads)[0], ref_concat(big, 0))) << threads;
    const std::vector<Tensor> rows = {random_tensor({3, 50, 700}, DType::I32, 14), random_tensor({3, 21, 700}, DType::I32, 15)};
    EXPECT_TRUE(same_bytes(run(*make_op("Concat", params({{0, 1}})), rows, 1, 2)[0], ref_concat(rows, 1)));
}

TEST(Concat, Errors)
{
    auto op = make_op("Concat", params({{0, 1}}));
    const Tensor a = random_tensor({2, 3, 4}, DType::F32, 1);
    // other dims differ
    std::string m = error_of([&] { run(*op, {a, random_tensor({2, 3, 5}, DType::F32, 2)}); });
    EXPECT_TRUE(contains(m, "(2,3,5)")) << m;
    // rank differs
    EXPECT_THROW(run(*op, {a, random_tensor({3, 4}, DType::F32, 2)}), Error);
    // dtype differs
    m = error_of([&] { run(*op, {a, random_tensor({2, 3, 4}, DType::I8, 2)}); });
    EXPECT_TRUE(contains(m, "I8") || contains(m, "int8")) << m;
    // axis out of range
    m = error_of([&] { run(*make_op("Concat", params({{0, 3}})), {a, a}); });
    EXPECT_TRUE(contains(m, "axis")) << m;
    EXPECT_THROW(run(*make_op("Concat", params({{0, -4}})), {a, a}), Error);
    EXPECT_THROW(run(*make_op("Concat", params({{0, 1}})), {random_tensor({4}, DType::F32, 1)}), Error);
    EXPECT_THROW(run(*op, {}), Error);
    // beyond ncnn's ranks (the ONNX importer's Concat of any rank): rank 5 joins as well
    const Tensor r5 = random_tensor({1, 1, 1, 1, 2}, DType::F32, 1);
    const std::vector<Tensor> joined = run(*op, {r5, r5});
    ASSERT_EQ(joined[0].shape(), Shape({1, 2, 1, 1, 2}));
    EXPECT_EQ(joined[0].data<float>()[2], r5.data<float>()[0]);
}

// ==================================== Slice ===================================

namespace {
// Output i holds [start_i, start_i + size_i) of the axis, starts being the running sum.
std::vector<Tensor> ref_slice(const Tensor& in, int axis, const std::vector<int64_t>& sizes)
{
    const int a = axis < 0 ? axis + in.rank() : axis;
    std::vector<Tensor> outs;
    int64_t start = 0;
    for (int64_t size : sizes) {
        Shape s = in.shape();
        s[a] = size;
        std::vector<std::pair<int, int64_t>> src;
        for (int64_t i = 0; i < shape_numel(s); ++i) {
            std::vector<int64_t> c = coords(s, i);
            c[a] += start;
            src.push_back({0, linear(in.shape(), c)});
        }
        outs.push_back(gather({in}, s, in.dtype(), src));
        start += size;
    }
    return outs;
}
} // namespace

TEST(Slice, SlicesAndIndicesFormsEveryAxis)
{
    struct Case {
        Shape shape;
        int axis;
        std::vector<int> slices, indices;
        std::vector<int64_t> expect; // worked out by hand from the spec
    };
    const std::vector<Case> cases = {
        {{7}, 0, {2, -233, -233}, {}, {2, 2, 3}},           // remainder split evenly, last takes the extra
        {{10}, -1, {-233, -233, -233}, {}, {3, 3, 4}},
        {{3, 10}, 1, {3, 4}, {}, {3, 4}},                    // sum < size: the rest is dropped
        {{10, 3}, 0, {}, {2, 5}, {2, 3, 5}},                 // end positions; last takes the rest
        {{2, 10}, -1, {}, {-3}, {7, 3}},                     // negative end counts from the end
        {{4, 6, 5}, 1, {}, {2, -1}, {2, 3, 1}},              // h of a 3-D blob
        {{4, 6, 5}, 0, {1, -233}, {}, {1, 3}},
        {{4, 6, 5}, 2, {1, 1, 1, 1, 1}, {}, {1, 1, 1, 1, 1}},
        {{2, 6, 3, 4}, 1, {-233, -233}, {}, {3, 3}},         // d of a 4-D blob
        {{2, 6, 3, 4}, -1, {}, {1}, {1, 3}},
        {{5, 2, 3, 4}, 0, {2, 9}, {3}, {3, 2}},              // indices win over slices
        {{4, 6, 5}, 2, {5, 7}, {}, {5}},                     // extra entries ignored
    };
    unsigned seed = 100;
    for (DType t : kDtypes) {
        for (const Case& c : cases) {
            SCOPED_TRACE(std::string(dtype_name(t)) + " " + shape_str(c.shape) + " axis " + std::to_string(c.axis));
            ParamDict pd;
            if (!c.slices.empty()) pd.set_ints(0, c.slices);
            pd.set_int(1, c.axis);
            if (!c.indices.empty()) pd.set_ints(2, c.indices);
            auto op = make_op("Slice", pd);
            const Tensor in = random_tensor(c.shape, t, seed++);
            const std::vector<Tensor> got = run(*op, {in}, c.expect.size(), 2);
            const std::vector<Tensor> want = ref_slice(in, c.axis, c.expect);
            ASSERT_EQ(got.size(), want.size());
            for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(same_bytes(got[i], want[i])) << "output " << i;
        }
    }
}

TEST(Slice, Errors)
{
    const Tensor in = random_tensor({4, 10}, DType::F32, 1);
    auto slice = [](std::vector<int> slices, int axis, std::vector<int> indices) {
        ParamDict pd;
        if (!slices.empty()) pd.set_ints(0, slices);
        pd.set_int(1, axis);
        if (!indices.empty()) pd.set_ints(2, indices);
        return make_op("Slice", pd);
    };
    // Neither slices nor indices: ONNX's Split, chunks of ceil(10 / 3) and the rest.
    const std::vector<Tensor> chunks = run(*slice({}, 1, {}), {in}, 3);
    EXPECT_EQ(chunks[0].shape(), Shape({4, 4}));
    EXPECT_EQ(chunks[2].shape(), Shape({4, 2}));
    EXPECT_EQ(chunks[2].data<float>()[0], in.data<float>()[8]);
    EXPECT_TRUE(contains(error_of([&] { slice({2, 0}, 0, {}); }), "-233"));
    EXPECT_THROW(slice({2, -5}, 0, {}), Error);
    // more outputs than slices
    EXPECT_THROW(run(*slice({2, 3}, 1, {}), {in}, 3), Error);
    // past the end
    std::string m = error_of([&] { run(*slice({5, 6}, 1, {}), {in}, 2); });
    EXPECT_TRUE(contains(m, "10")) << m;
    EXPECT_THROW(run(*slice({}, 1, {12}), {in}, 2), Error);
    // indices not increasing: an empty or negative piece
    EXPECT_THROW(run(*slice({}, 1, {5, 3}), {in}, 3), Error);
    EXPECT_THROW(run(*slice({}, 1, {5, 5}), {in}, 3), Error);
    // not enough indices
    EXPECT_THROW(run(*slice({}, 1, {5}), {in}, 3), Error);
    // -233 leaving nothing
    EXPECT_THROW(run(*slice({-233, -233, -233, -233, -233}, 0, {}), {in}, 5), Error);
    // axis
    m = error_of([&] { run(*slice({1, 1}, 2, {}), {in}, 2); });
    EXPECT_TRUE(contains(m, "axis")) << m;
    EXPECT_THROW(run(*slice({1, 1}, -3, {}), {in}, 2), Error);
    // input count
    EXPECT_THROW(run(*slice({1, 1}, 0, {}), {in, in}, 2), Error);
}

// ===================================== Crop ===================================

namespace {
// The expected box, per axis of our shape (outermost first).
struct ExpBox {
    std::vector<int64_t> off, len;
};

Tensor ref_crop(const Tensor& in, const ExpBox& b)
{
    Shape s(b.len.begin(), b.len.end());
    std::vector<std::pair<int, int64_t>> src;
    for (int64_t i = 0; i < shape_numel(s); ++i) {
        std::vector<int64_t> c = coords(s, i);
        for (size_t k = 0; k < c.size(); ++k) c[k] += b.off[k];
        src.push_back({0, linear(in.shape(), c)});
    }
    return gather({in}, s, in.dtype(), src);
}

struct CropCase {
    std::string what;
    Shape shape;
    ParamDict pd;
    ExpBox expect;
};

ParamDict crop_numpy(std::vector<int> starts, std::vector<int> ends, std::vector<int> axes = {})
{
    ParamDict pd;
    pd.set_ints(9, starts);
    pd.set_ints(10, ends);
    if (!axes.empty()) pd.set_ints(11, axes);
    return pd;
}

void check_crop_cases(const std::vector<CropCase>& cases)
{
    unsigned seed = 300;
    for (DType t : kDtypes) {
        for (const CropCase& c : cases) {
            SCOPED_TRACE(c.what + " " + dtype_name(t));
            auto op = make_op("Crop", c.pd);
            const Tensor in = random_tensor(c.shape, t, seed++);
            const Tensor got = run(*op, {in}, 1, 2)[0];
            EXPECT_TRUE(same_bytes(got, ref_crop(in, c.expect))) << shape_str(got.shape());
        }
    }
}
} // namespace

TEST(Crop, NumpyStyle)
{
    const std::vector<CropCase> cases = {
        {"1d start end", {10}, crop_numpy({2}, {-3}), {{2}, {5}}},
        {"1d negative start, open end", {10}, crop_numpy({-4}, {-233}), {{6}, {4}}},
        {"1d end 0 means to the end", {10}, crop_numpy({3}, {0}), {{3}, {7}}},
        {"1d end past the size is clamped", {10}, crop_numpy({1}, {1000}), {{1}, {9}}},
        {"2d all axes", {6, 8}, crop_numpy({1, 2}, {-1, 100}), {{1, 2}, {4, 6}}},
        {"3d axis -1 is w", {4, 6, 8}, crop_numpy({3}, {5}, {-1}), {{0, 0, 3}, {4, 6, 2}}},
        {"3d axis 0 is c", {4, 6, 8}, crop_numpy({1, -233}, {-233, -2}, {0, 2}), {{1, 0, 0}, {3, 6, 6}}},
        {"3d axis 1 is h", {4, 6, 8}, crop_numpy({2}, {4}, {1}), {{0, 2, 0}, {4, 2, 8}}},
        {"4d d and h", {3, 4, 5, 6}, crop_numpy({1, 0}, {3, -1}, {1, 2}), {{0, 1, 0, 0}, {3, 2, 4, 6}}},
        {"4d all, with end 0", {3, 4, 5, 6}, crop_numpy({0, 1, 2, 3}, {-233, 0, -1, 5}), {{0, 1, 2, 3}, {3, 3, 2, 2}}},
        {"4d c and w", {3, 4, 5, 6}, crop_numpy({-1, 1}, {3, 2}, {0, 3}), {{2, 0, 0, 1}, {1, 4, 5, 1}}},
    };
    check_crop_cases(cases);
}

TEST(Crop, OffsetStyle)
{
    const std::vector<CropCase> cases = {
        {"1d offset, open size", {10}, params({{0, 2}, {3, -233}}), {{2}, {8}}},
        {"1d size", {10}, params({{0, 2}, {3, 4}}), {{2}, {4}}},
        {"1d size larger than what is left", {10}, params({{0, 7}, {3, 5}}), {{7}, {3}}},
        {"1d far-end offset", {10}, params({{0, 1}, {6, 2}, {3, -233}}), {{1}, {7}}},
        {"2d", {6, 8}, params({{0, 1}, {1, 2}, {3, 3}, {4, -233}}), {{2, 1}, {4, 3}}},
        {"2d ignores outc", {6, 8}, params({{3, -233}, {4, -233}}), {{0, 0}, {6, 8}}},
        {"3d", {5, 6, 8}, params({{0, 1}, {1, 1}, {2, 1}, {3, -233}, {4, -233}, {5, 2}, {7, 1}}), {{1, 1, 1}, {2, 4, 7}}},
        {"3d ignores d params", {5, 6, 8}, params({{13, 3}, {14, 1}, {15, 1}, {3, -233}, {4, -233}, {5, -233}}),
         {{0, 0, 0}, {5, 6, 8}}},
        {"4d", {4, 5, 6, 7},
         params({{0, 1}, {1, 2}, {13, 1}, {2, 1}, {3, -233}, {4, 2}, {14, -233}, {5, -233}, {6, 1}, {15, 1}, {8, 1}}),
         {{1, 1, 2, 1}, {2, 3, 2, 5}}},
    };
    check_crop_cases(cases);
}

TEST(Crop, OffsetStyleUnsetSizeIsAnErrorNamingTheParam)
{
    // outc left at its default 0 on a 3-D input: ncnn produces an empty Mat and fails.
    auto op = make_op("Crop", params({{3, -233}, {4, -233}}));
    const std::string m = error_of([&] { run(*op, {random_tensor({5, 6, 8}, DType::F32, 1)}); });
    EXPECT_TRUE(contains(m, "param 5") && contains(m, "-233")) << m;
    // only a far-end offset: outw stays 0 as well
    EXPECT_THROW(run(*make_op("Crop", params({{6, 1}})), {random_tensor({10}, DType::F32, 1)}), Error);
}

TEST(Crop, ReferenceBlobStyle)
{
    struct Case {
        std::string what;
        Shape shape, ref;
        ParamDict pd;
        ExpBox expect;
    };
    const std::vector<Case> cases = {
        {"1d", {10}, {4}, params({{0, 3}}), {{3}, {4}}},
        {"2d from a 1-D reference: h becomes ref.h = 1", {6, 8}, {5}, params({{0, 2}, {1, 4}}), {{4, 2}, {1, 5}}},
        {"2d", {6, 8}, {3, 5}, params({{1, 1}}), {{1, 0}, {3, 5}}},
        {"3d", {5, 6, 8}, {2, 3, 4}, params({{0, 1}, {1, 2}, {2, 3}}), {{3, 2, 1}, {2, 3, 4}}},
        {"3d, 2-D reference keeps c", {5, 6, 8}, {3, 4}, params({{0, 2}}), {{0, 0, 2}, {5, 3, 4}}},
        {"4d", {4, 5, 6, 7}, {2, 3, 4, 5}, params({{0, 1}, {1, 1}, {13, 1}, {2, 1}}), {{1, 1, 1, 1}, {2, 3, 4, 5}}},
        {"4d, 3-D reference: d from ref (1), c kept", {4, 5, 6, 7}, {2, 3, 4}, params({{13, 2}}),
         {{0, 2, 0, 0}, {4, 1, 3, 4}}},
    };
    unsigned seed = 500;
    for (DType t : kDtypes) {
        for (const Case& c : cases) {
            SCOPED_TRACE(c.what + " " + dtype_name(t));
            auto op = make_op("Crop", c.pd);
            const Tensor in = random_tensor(c.shape, t, seed++);
            const Tensor ref = random_tensor(c.ref, DType::F32, seed++);
            EXPECT_TRUE(same_bytes(run(*op, {in, ref})[0], ref_crop(in, c.expect)));
        }
    }
    // one input is not enough in this mode
    EXPECT_THROW(run(*make_op("Crop", params({{0, 1}})), {random_tensor({5}, DType::F32, 1)}), Error);
    // the reference box must fit
    EXPECT_THROW(run(*make_op("Crop", params({{0, 3}})), {random_tensor({5}, DType::F32, 1), random_tensor({3}, DType::F32, 2)}),
                 Error);
}

TEST(Crop, RoiFromSecondInputValues)
{
    auto op = make_op("Crop", params({{0, -233}}));
    EXPECT_TRUE(op->dynamic_output_shape());
    const Tensor in3 = random_tensor({5, 6, 8}, DType::I8, 1);
    // 3-D: [woff, hoff, coff, outw, outh, outc]
    const std::vector<int64_t> roi3 = {1, 2, 1, 3, 2, 2};
    const ExpBox box3 = {{1, 2, 1}, {2, 2, 3}};
    for (DType rt : {DType::I32, DType::I64, DType::F32}) {
        SCOPED_TRACE(dtype_name(rt));
        const Tensor roi = ints_tensor({6}, rt, roi3);
        // value known while planning: exact shape from infer
        EXPECT_TRUE(same_bytes(run(*op, {in3, roi}, 1, 1, {false, true})[0], ref_crop(in3, box3)));
        // value unknown: infer bounds it by the input, forward gives the true shape
        EXPECT_EQ(infer(*op, {in3, roi})[0].shape, in3.shape());
        EXPECT_TRUE(same_bytes(run(*op, {in3, roi})[0], ref_crop(in3, box3)));
    }
    // 4-D: [woff, hoff, doff, coff, outw, outh, outd, outc]
    const Tensor in4 = random_tensor({4, 5, 6, 7}, DType::F32, 2);
    const Tensor roi4 = ints_tensor({8}, DType::I32, {2, 1, 0, 3, 4, 5, 2, 1});
    EXPECT_TRUE(same_bytes(run(*op, {in4, roi4})[0], ref_crop(in4, {{3, 0, 1, 2}, {1, 2, 5, 4}})));
    // 1-D: [woff, -, -, outw]; 2-D: [woff, hoff, -, outw, outh]
    const Tensor in1 = random_tensor({9}, DType::I32, 3);
    EXPECT_TRUE(same_bytes(run(*op, {in1, ints_tensor({4}, DType::I32, {4, 99, 99, 3})})[0], ref_crop(in1, {{4}, {3}})));
    const Tensor in2 = random_tensor({6, 9}, DType::I32, 3);
    EXPECT_TRUE(same_bytes(run(*op, {in2, ints_tensor({5}, DType::I32, {4, 1, 99, 3, 5})})[0],
                           ref_crop(in2, {{1, 4}, {5, 3}})));
    // errors: too few values, a box outside, a dtype that cannot hold ints
    EXPECT_THROW(run(*op, {in3, ints_tensor({5}, DType::I32, {1, 2, 1, 3, 2})}), Error);
    EXPECT_THROW(run(*op, {in3, ints_tensor({6}, DType::I32, {6, 2, 1, 3, 2, 2})}), Error);
    EXPECT_THROW(run(*op, {in3, ints_tensor({6}, DType::I8, roi3)}), Error);
}

TEST(Crop, ExpressionParams)
{
    auto expr = [](const std::string& s, const std::string& e, const std::string& a) {
        ParamDict pd;
        pd.set_string(19, s);
        pd.set_string(20, e);
        if (!a.empty()) pd.set_string(21, a);
        return make_op("Crop", pd);
    };
    unsigned seed = 700;
    for (DType t : kDtypes) {
        SCOPED_TRACE(dtype_name(t));
        const Tensor in = random_tensor({4, 6, 8}, t, seed++);
        // starts [1,2], ends [-1, 0w-2 = 6], axes [0,2]
        EXPECT_TRUE(same_bytes(run(*expr("1,2", "-1,+(0w,-2)", "0,2"), {in})[0], ref_crop(in, {{1, 0, 2}, {2, 6, 4}})));
        // no axes: every axis, with -233 and the end == 0 quirk
        EXPECT_TRUE(same_bytes(run(*expr("0,1,2", "-233,-1,0", ""), {in})[0], ref_crop(in, {{0, 1, 2}, {4, 4, 6}})));
        // blob 1 referenced: two inputs, crop to its h and w
        auto two = expr("0,0", "1h,1w", "1,2");
        const Tensor like = random_tensor({3, 5}, DType::F32, seed++);
        EXPECT_TRUE(same_bytes(run(*two, {in, like})[0], ref_crop(in, {{0, 0, 0}, {4, 3, 5}})));
        EXPECT_THROW(run(*two, {in}), Error); // needs both inputs
    }
    // the expression list wins over 9/10 when both are present
    ParamDict both = crop_numpy({0}, {1}, {0});
    both.set_string(19, "1");
    both.set_string(20, "3");
    both.set_string(21, "0");
    const Tensor v = random_tensor({10}, DType::F32, 1);
    EXPECT_TRUE(same_bytes(run(*make_op("Crop", both), {v})[0], ref_crop(v, {{1}, {2}})));
    // syntax errors surface at load; evaluation errors at infer
    EXPECT_THROW(expr("+(1", "2", ""), Error);
    EXPECT_THROW(run(*expr("//(1,0)", "2", ""), {v}), Error);
}

TEST(Crop, Errors)
{
    const Tensor v = random_tensor({10}, DType::F32, 1);
    const Tensor m3 = random_tensor({4, 6, 8}, DType::F32, 1);
    // start beyond the axis, start below -size, box empty
    EXPECT_THROW(run(*make_op("Crop", crop_numpy({11}, {-233})), {v}), Error);
    EXPECT_THROW(run(*make_op("Crop", crop_numpy({-11}, {-233})), {v}), Error);
    std::string m = error_of([&] { run(*make_op("Crop", crop_numpy({5}, {5})), {v}); });
    EXPECT_TRUE(contains(m, "empty")) << m;
    // axis out of range; starts/ends shorter than the axes
    m = error_of([&] { run(*make_op("Crop", crop_numpy({1}, {2}, {3})), {m3}); });
    EXPECT_TRUE(contains(m, "axis")) << m;
    EXPECT_THROW(run(*make_op("Crop", crop_numpy({1}, {2}, {-4})), {m3}), Error);
    EXPECT_THROW(run(*make_op("Crop", crop_numpy({1}, {2})), {m3}), Error); // 3 axes need 3 entries
    EXPECT_THROW(run(*make_op("Crop", crop_numpy({1, 1}, {2}, {0, 1})), {m3}), Error);
    // params that only make sense together
    ParamDict only_starts;
    only_starts.set_ints(9, {1});
    EXPECT_THROW(make_op("Crop", only_starts), Error);
    ParamDict only_expr;
    only_expr.set_string(19, "1");
    EXPECT_THROW(make_op("Crop", only_expr), Error);
    ParamDict axes_expr;
    axes_expr.set_string(21, "0");
    EXPECT_THROW(make_op("Crop", axes_expr), Error);
    // offset style: negative offset, offset past the end
    EXPECT_THROW(make_op("Crop", params({{0, -1}, {3, -233}})), Error);
    EXPECT_THROW(make_op("Crop", params({{3, -5}})), Error);
    EXPECT_THROW(run(*make_op("Crop", params({{0, 12}, {3, -233}})), {v}), Error);
    // too many inputs for a one-input mode
    EXPECT_THROW(run(*make_op("Crop", crop_numpy({1}, {2})), {v, v}), Error);
}

// =================================== Permute ==================================

namespace {
// The spec's table (§1.6): the input axis landing at output w, h, [d], c.
const std::vector<std::string> kPermute2 = {"w h", "h w"};
const std::vector<std::string> kPermute3 = {"w h c", "h w c", "w c h", "c w h", "h c w", "c h w"};
const std::vector<std::string> kPermute4 = {
    "w h d c", "h w d c", "w d h c", "d w h c", "h d w c", "d h w c", "w h c d", "h w c d",
    "w c h d", "c w h d", "h c w d", "c h w d", "w d c h", "d w c h", "w c d h", "c w d h",
    "d c w h", "c d w h", "h d c w", "d h c w", "h c d w", "c h d w", "d c h w", "c d h w"};

int letter_slot(char l) { return l == 'w' ? 0 : l == 'h' ? 1 : l == 'd' ? 2 : 3; }

// Output by the table: output axis p (innermost first) walks input axis letters[p].
Tensor ref_permute(const Tensor& in, const std::string& entry)
{
    std::vector<int> from; // per output position (w, h, [d], c): input [w,h,d,c] slot
    for (char ch : entry)
        if (ch != ' ') from.push_back(letter_slot(ch));
    const NV v = nv(in.shape());
    const int64_t in_size[4] = {v.w, v.h, v.d, v.c};
    const int rank = static_cast<int>(from.size());
    // output ncnn sizes per output position, then our shape (outermost first)
    std::vector<int64_t> out_size(from.size());
    for (int p = 0; p < rank; ++p) out_size[p] = in_size[from[p]];
    const Shape out_shape(out_size.rbegin(), out_size.rend());
    std::vector<std::pair<int, int64_t>> src;
    for (int64_t i = 0; i < shape_numel(out_shape); ++i) {
        const std::vector<int64_t> oc = coords(out_shape, i); // outermost first
        int64_t ic[4] = {0, 0, 0, 0};                         // input [w,h,d,c]
        for (int p = 0; p < rank; ++p) ic[from[p]] = oc[rank - 1 - p];
        src.push_back({0, lin(v, ic[0], ic[1], ic[2], ic[3])});
    }
    return gather({in}, out_shape, in.dtype(), src);
}
} // namespace

TEST(Permute, EveryOrderTypeOfTheSpecTable)
{
    unsigned seed = 900;
    // element sizes 1, 2, 4, 8
    for (DType t : {DType::I8, DType::F16, DType::F32, DType::I32, DType::F64}) {
        SCOPED_TRACE(dtype_name(t));
        const Tensor in2 = random_tensor({3, 5}, t, seed++);
        for (size_t ot = 0; ot < kPermute2.size(); ++ot)
            EXPECT_TRUE(same_bytes(run(*make_op("Permute", params({{0, int(ot)}})), {in2})[0], ref_permute(in2, kPermute2[ot])))
                << "2-D order " << ot;
        const Tensor in3 = random_tensor({2, 3, 5}, t, seed++);
        for (size_t ot = 0; ot < kPermute3.size(); ++ot)
            EXPECT_TRUE(same_bytes(run(*make_op("Permute", params({{0, int(ot)}})), {in3})[0], ref_permute(in3, kPermute3[ot])))
                << "3-D order " << ot;
        const Tensor in4 = random_tensor({2, 3, 4, 5}, t, seed++);
        for (size_t ot = 0; ot < kPermute4.size(); ++ot)
            EXPECT_TRUE(same_bytes(run(*make_op("Permute", params({{0, int(ot)}})), {in4}, 1, 2)[0],
                                   ref_permute(in4, kPermute4[ot])))
                << "4-D order " << ot;
    }
}

TEST(Permute, SpecExampleOneDPassThroughAndAliasing)
{
    // 3-D order 2 = "w c h": ncnn output [w, h, c] = [in.w, in.c, in.h], i.e. our (in.h, in.c, in.w).
    const Tensor in = random_tensor({2, 3, 5}, DType::F32, 1);
    EXPECT_EQ(run(*make_op("Permute", params({{0, 2}})), {in})[0].shape(), (Shape{3, 2, 5}));
    const Tensor v = random_tensor({7}, DType::I8, 2);
    for (int ot : {0, 1, 5, 23}) EXPECT_TRUE(same_bytes(run(*make_op("Permute", params({{0, ot}})), {v})[0], v)) << ot;
    EXPECT_TRUE(make_op("Permute", ParamDict{})->outputs_alias_input());
    EXPECT_FALSE(make_op("Permute", params({{0, 1}}))->outputs_alias_input());
    // larger, several threads
    const Tensor big = random_tensor({7, 9, 11, 13}, DType::F32, 3);
    EXPECT_TRUE(same_bytes(run(*make_op("Permute", params({{0, 17}})), {big}, 1, 3)[0], ref_permute(big, kPermute4[17])));
}

TEST(Permute, Errors)
{
    EXPECT_THROW(make_op("Permute", params({{0, 24}})), Error);
    EXPECT_THROW(make_op("Permute", params({{0, -1}})), Error);
    std::string m = error_of([] { run(*make_op("Permute", params({{0, 2}})), {random_tensor({3, 4}, DType::F32, 1)}); });
    EXPECT_TRUE(contains(m, "order_type") && contains(m, "rank 2")) << m;
    EXPECT_THROW(run(*make_op("Permute", params({{0, 6}})), {random_tensor({2, 3, 4}, DType::F32, 1)}), Error);
    EXPECT_THROW(run(*make_op("Permute", params({{0, 1}})), {random_tensor({1, 2, 3, 4, 5}, DType::F32, 1)}), Error);
}

// =================================== Padding ==================================

namespace {
struct Pads {
    int top = 0, bottom = 0, left = 0, right = 0, front = 0, behind = 0, type = 0;
    float value = 0.f;
};

ParamDict padding_params(const Pads& p, int per_channel = 0)
{
    ParamDict pd;
    pd.set_int(0, p.top);
    pd.set_int(1, p.bottom);
    pd.set_int(2, p.left);
    pd.set_int(3, p.right);
    pd.set_int(4, p.type);
    pd.set_float(5, p.value);
    if (per_channel) pd.set_int(6, per_channel);
    pd.set_int(7, p.front);
    pd.set_int(8, p.behind);
    return pd;
}

// Source index along one axis of size n for output index i (lo pads before), or -1 for the pad value.
int64_t pad_source(int64_t i, int64_t lo, int64_t n, int type)
{
    const int64_t j = i - lo;
    if (j >= 0 && j < n) return j;
    if (type == 0) return -1;
    if (type == 1) return j < 0 ? 0 : n - 1; // replicate the edge
    // reflect without repeating the edge: mirror with period 2(n-1)
    const int64_t period = 2 * (n - 1);
    const int64_t k = ((j % period) + period) % period;
    return k < n ? k : period - k;
}

// How ncnn stores the float pad value in a blob of dtype t (static_cast, spec §1.6 / padding.cpp).
std::vector<uint8_t> pad_bytes(float v, DType t)
{
    std::vector<uint8_t> b(dtype_size(t));
    if (t == DType::F32) std::memcpy(b.data(), &v, 4);
    if (t == DType::I8) b[0] = static_cast<uint8_t>(static_cast<int8_t>(v));
    if (t == DType::I32) {
        const int32_t x = static_cast<int32_t>(v);
        std::memcpy(b.data(), &x, 4);
    }
    return b;
}

Tensor ref_padding(const Tensor& in, const Pads& p, const std::vector<float>& per_channel)
{
    const NV v = nv(in.shape());
    // which axes each rank pads (spec: w; h from rank 2; c for rank 3, d for rank 4 by front/behind)
    const int64_t l = p.left, r = p.right;
    const int64_t t = v.dims >= 2 ? p.top : 0, b = v.dims >= 2 ? p.bottom : 0;
    const int64_t fc = v.dims == 3 ? p.front : 0, bc = v.dims == 3 ? p.behind : 0;
    const int64_t fd = v.dims == 4 ? p.front : 0, bd = v.dims == 4 ? p.behind : 0;
    NV o = v;
    o.w = v.w + l + r, o.h = v.h + t + b, o.d = v.d + fd + bd, o.c = v.c + fc + bc;
    Shape shape;
    if (v.dims == 1) shape = {o.w};
    if (v.dims == 2) shape = {o.h, o.w};
    if (v.dims == 3) shape = {o.c, o.h, o.w};
    if (v.dims == 4) shape = {o.c, o.d, o.h, o.w};
    std::vector<std::vector<uint8_t>> fills;
    std::vector<std::pair<int, int64_t>> src;
    for (int64_t q = 0; q < o.c; ++q)
        for (int64_t z = 0; z < o.d; ++z)
            for (int64_t y = 0; y < o.h; ++y)
                for (int64_t x = 0; x < o.w; ++x) {
                    const int64_t sq = pad_source(q, fc, v.c, p.type), sz = pad_source(z, fd, v.d, p.type);
                    const int64_t sy = pad_source(y, t, v.h, p.type), sx = pad_source(x, l, v.w, p.type);
                    if (sq >= 0 && sz >= 0 && sy >= 0 && sx >= 0) {
                        src.push_back({0, lin(v, sx, sy, sz, sq)});
                    } else {
                        // per-channel values index the output channel (3-D) or the channel (4-D)
                        const float value = !per_channel.empty() && v.dims >= 3 ? per_channel[q] : p.value;
                        fills.push_back(pad_bytes(value, in.dtype()));
                        src.push_back({-1, static_cast<int64_t>(fills.size() - 1)});
                    }
                }
    return gather({in}, shape, in.dtype(), src, fills);
}
} // namespace

TEST(Padding, EveryRankEveryType)
{
    struct Case {
        Shape shape;
        Pads pads;
    };
    std::vector<Case> cases;
    for (int type = 0; type < 3; ++type) {
        cases.push_back({{7}, {0, 0, 2, 3, 0, 0, type, -3.75f}});
        cases.push_back({{7}, {4, 4, 1, 0, 2, 2, type, 2.f}});        // top/bottom/front/behind ignored for 1-D
        cases.push_back({{5, 6}, {1, 2, 3, 2, 0, 0, type, 7.5f}});
        cases.push_back({{5, 6}, {4, 0, 0, 5, 3, 3, type, 1.f}});      // front/behind ignored for 2-D
        cases.push_back({{4, 5, 6}, {1, 2, 2, 1, 1, 2, type, -1.f}}); // c padded by front/behind
        cases.push_back({{4, 5, 6}, {0, 0, 0, 0, 3, 0, type, 9.f}});
        cases.push_back({{3, 4, 5, 6}, {2, 1, 1, 2, 1, 3, type, 5.f}}); // d padded, c not
        cases.push_back({{2, 3, 4, 5}, {0, 0, 0, 0, 0, 0, type, 5.f}}); // nothing: a copy
    }
    unsigned seed = 1100;
    for (DType t : kDtypes) {
        for (const Case& c : cases) {
            SCOPED_TRACE(std::string(dtype_name(t)) + " " + shape_str(c.shape) + " type " + std::to_string(c.pads.type));
            auto op = make_op("Padding", padding_params(c.pads));
            const Tensor in = random_tensor(c.shape, t, seed++);
            EXPECT_TRUE(same_bytes(run(*op, {in}, 1, 2)[0], ref_padding(in, c.pads, {})));
        }
    }
}

TEST(Padding, PerChannelPadDataFromWeights)
{
    // rank 3: one value per output channel (front/behind channels included)
    const Pads p3 = {1, 0, 0, 2, 1, 1, 0, 0.f};
    std::vector<float> pc3 = {10.f, 20.f, 30.f, 40.f, 50.f, 60.f};
    // rank 4: one value per channel
    const Pads p4 = {0, 1, 1, 0, 1, 0, 0, 0.f};
    std::vector<float> pc4 = {-1.f, -2.f, -3.f};
    for (DType t : kDtypes) {
        SCOPED_TRACE(dtype_name(t));
        for (int rank : {3, 4}) {
            const Pads& p = rank == 3 ? p3 : p4;
            const std::vector<float>& pc = rank == 3 ? pc3 : pc4;
            const Shape s = rank == 3 ? Shape{4, 3, 5} : Shape{3, 2, 3, 4};
            Net net;
            net.add_layer("Input", "in", {}, {"x"});
            Tensor w({static_cast<int64_t>(pc.size())}, DType::F32);
            std::copy(pc.begin(), pc.end(), w.data<float>());
            net.add_layer("Padding", "pad", {"x"}, {"y"}, padding_params(p, static_cast<int>(pc.size())), {w});
            net.finish_graph();
            Session session(net);
            const Tensor in = random_tensor(s, t, 5);
            session.set_input("x", in);
            EXPECT_TRUE(same_bytes(session.get("y"), ref_padding(in, p, pc))) << "rank " << rank;
        }
    }
    // too few values for the output channels
    Net net;
    net.add_layer("Input", "in", {}, {"x"});
    Tensor w({4}, DType::F32);
    net.add_layer("Padding", "pad", {"x"}, {"y"}, padding_params(p3, 4), {w});
    net.finish_graph();
    Session session(net);
    session.set_input("x", random_tensor({4, 3, 5}, DType::F32, 1));
    const std::string m = error_of([&] { session.get("y"); });
    EXPECT_TRUE(contains(m, "per_channel")) << m;
}

TEST(Padding, Errors)
{
    EXPECT_THROW(make_op("Padding", params({{0, -1}})), Error);
    EXPECT_THROW(make_op("Padding", params({{8, -2}})), Error);
    std::string m = error_of([] { make_op("Padding", params({{4, 3}})); });
    EXPECT_TRUE(contains(m, "param 4")) << m;
    EXPECT_THROW(make_op("Padding", params({{6, -1}})), Error);
    // reflect needs pads smaller than the axis
    m = error_of([] { run(*make_op("Padding", params({{2, 4}, {4, 2}})), {random_tensor({4}, DType::F32, 1)}); });
    EXPECT_TRUE(contains(m, "reflect")) << m;
    EXPECT_THROW(run(*make_op("Padding", params({{7, 3}, {4, 2}})), {random_tensor({3, 4, 5}, DType::F32, 1)}), Error);
    EXPECT_NO_THROW(run(*make_op("Padding", params({{7, 2}, {4, 2}})), {random_tensor({3, 4, 5}, DType::F32, 1)}));
    EXPECT_THROW(run(*make_op("Padding", params({{2, 1}})), {random_tensor({1, 1, 1, 1, 2}, DType::F32, 1)}), Error);
}

// ================================ ShuffleChannel ==============================

namespace {
// Channels seen as a (g, c/g) matrix, transposed: output channel o reads input
// channel (o % g) * (c/g) + o / g; with reverse, g = c / group.
Tensor ref_shuffle(const Tensor& in, int group, bool reverse)
{
    const NV v = nv(in.shape());
    const int64_t g = reverse ? v.c / group : group;
    const int64_t per = v.w * v.h * v.d;
    std::vector<std::pair<int, int64_t>> src;
    for (int64_t o = 0; o < v.c; ++o)
        for (int64_t k = 0; k < per; ++k) src.push_back({0, ((o % g) * (v.c / g) + o / g) * per + k});
    return gather({in}, in.shape(), in.dtype(), src);
}
} // namespace

TEST(ShuffleChannel, GroupsReverseRanks)
{
    unsigned seed = 1300;
    for (DType t : kDtypes) {
        for (const Shape& s : {Shape{6, 2, 3}, Shape{12, 2, 2, 3}}) {
            for (int group : {1, 2, 3, 6}) {
                for (int reverse : {0, 1}) {
                    SCOPED_TRACE(std::string(dtype_name(t)) + " " + shape_str(s) + " group " + std::to_string(group) +
                                 " reverse " + std::to_string(reverse));
                    const Tensor in = random_tensor(s, t, seed++);
                    auto op = make_op("ShuffleChannel", params({{0, group}, {1, reverse}}));
                    EXPECT_TRUE(same_bytes(run(*op, {in}, 1, 2)[0], ref_shuffle(in, group, reverse != 0)));
                }
            }
        }
    }
    // ranks 1 and 2 have one channel: group 1 is a copy
    const Tensor v = random_tensor({3, 4}, DType::I8, 1);
    EXPECT_TRUE(same_bytes(run(*make_op("ShuffleChannel", ParamDict{}), {v})[0], v));
    // a 4 x 1 x 1 shuffle spelled out: group 2 -> channels 0,2,1,3
    Tensor c4 = ints_tensor({4, 1, 1}, DType::I32, {10, 11, 12, 13});
    const Tensor o = run(*make_op("ShuffleChannel", params({{0, 2}})), {c4})[0];
    EXPECT_EQ(std::vector<int32_t>(o.data<int32_t>(), o.data<int32_t>() + 4), (std::vector<int32_t>{10, 12, 11, 13}));
}

TEST(ShuffleChannel, Errors)
{
    EXPECT_THROW(make_op("ShuffleChannel", params({{0, 0}})), Error);
    const std::string m =
        error_of([] { run(*make_op("ShuffleChannel", params({{0, 4}})), {random_tensor({6, 2, 2}, DType::F32, 1)}); });
    EXPECT_TRUE(contains(m, "group")) << m;
    EXPECT_THROW(run(*make_op("ShuffleChannel", params({{0, 2}})), {random_tensor({4, 4}, DType::F32, 1)}), Error);
}

// ================================== MemoryData ================================

namespace {
std::string bytes_of(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }
std::string u32_bytes(uint32_t v) { return bytes_of(&v, 4); }
std::string f32_bytes(const std::vector<float>& v) { return bytes_of(v.data(), v.size() * 4); }
} // namespace

TEST(MemoryData, ShapesFromParamsRawAndTagged)
{
    struct Case {
        std::string params;
        Shape shape;
    };
    const std::vector<Case> cases = {
        {"0=5", {5}},
        {"0=4 1=3", {3, 4}},
        {"0=4 1=3 2=2", {2, 3, 4}},
        {"0=4 1=3 11=2 2=2", {2, 2, 3, 4}},
        {"0=4 1=3 2=2 21=1", {2, 3, 4}},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.params);
        Net net;
        net.load_param_mem("7767517\n1 1\nMemoryData md 0 1 out " + c.params + "\n");
        std::vector<float> values(static_cast<size_t>(shape_numel(c.shape)));
        for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * static_cast<float>(i) - 3.f;
        const std::string bin = f32_bytes(values);
        net.load_model_mem(bin.data(), bin.size());
        Session s(net);
        const Tensor out = s.get("out");
        ASSERT_EQ(out.shape(), c.shape);
        ASSERT_EQ(out.dtype(), DType::F32);
        EXPECT_EQ(std::memcmp(out.raw(), values.data(), bin.size()), 0);
    }
    // tagged fp32 (tag 0) and tagged int8 (an I8 blob)
    {
        Net net;
        net.load_param_mem("7767517\n1 1\nMemoryData md 0 1 out 0=3 21=0\n");
        const std::string bin = u32_bytes(0) + f32_bytes({1.5f, -2.f, 4.f});
        net.load_model_mem(bin.data(), bin.size());
        Session s(net);
        const Tensor out = s.get("out");
        EXPECT_EQ(std::vector<float>(out.data<float>(), out.data<float>() + 3), (std::vector<float>{1.5f, -2.f, 4.f}));
    }
    {
        Net net;
        net.load_param_mem("7767517\n1 1\nMemoryData md 0 1 out 0=3 1=2 21=0\n");
        const int8_t q[8] = {1, -2, 3, -4, 5, -128, 0, 0}; // 6 values, padded to 4 bytes
        const std::string bin = u32_bytes(0x000D4B38) + bytes_of(q, 8);
        net.load_model_mem(bin.data(), bin.size());
        Session s(net);
        const Tensor out = s.get("out");
        ASSERT_EQ(out.dtype(), DType::I8);
        ASSERT_EQ(out.shape(), (Shape{2, 3}));
        EXPECT_EQ(std::memcmp(out.raw(), q, 6), 0);
    }
    // no size: one element, no weights needed
    {
        Net net;
        net.load_param_mem("7767517\n1 1\nMemoryData md 0 1 out\n");
        EXPECT_FALSE(net.needs_weights());
        Session s(net);
        EXPECT_EQ(s.get("out").shape(), (Shape{1}));
    }
}

TEST(MemoryData, FeedsOtherLayersAndRunsRepeatedly)
{
    // MemoryData joined to an input by Concat, twice through one session.
    Net net;
    net.load_param_mem("7767517\n3 3\nInput in 0 1 x\nMemoryData md 0 1 m 0=4 1=2\nConcat cat 2 1 x m y 0=0\n");
    const std::vector<float> mv = {1, 2, 3, 4, 5, 6, 7, 8};
    const std::string bin = f32_bytes(mv);
    net.load_model_mem(bin.data(), bin.size());
    Session s(net);
    for (int run_index = 0; run_index < 2; ++run_index) {
        const Tensor x = random_tensor({3, 4}, DType::F32, 10 + run_index);
        s.set_input("x", x);
        const Tensor y = s.get("y");
        Tensor m({2, 4}, DType::F32);
        std::memcpy(m.raw(), mv.data(), 32);
        EXPECT_TRUE(same_bytes(y, ref_concat({x, m}, 0)));
    }
}

TEST(MemoryData, Errors)
{
    auto load = [](const std::string& p) {
        Net net;
        net.load_param_mem("7767517\n1 1\nMemoryData md 0 1 out " + p + "\n");
    };
    std::string m = error_of([&] { load("0=3 21=2"); });
    EXPECT_TRUE(contains(m, "param 21")) << m;
    EXPECT_THROW(load("0=0 1=3"), Error);  // h without w
    EXPECT_THROW(load("0=2 2=3"), Error);  // c without h
    EXPECT_THROW(load("0=-2"), Error);
    EXPECT_THROW(load("0=2 1=2 11=2"), Error); // d without c
    // a .bin too short for the declared size
    Net net;
    net.load_param_mem("7767517\n1 1\nMemoryData md 0 1 out 0=4\n");
    const std::string bin = f32_bytes({1, 2});
    EXPECT_THROW(net.load_model_mem(bin.data(), bin.size()), Error);
    // an input given to it
    auto op = make_op("MemoryData", ParamDict{});
    EXPECT_THROW(run(*op, {random_tensor({1}, DType::F32, 1)}), Error);
}

// ============================ Crop / Slice in a Net ===========================

TEST(Crop, InNetsReferenceExpressionAndRoi)
{
    // reference style and multi-input expression style, from .param text
    Net net;
    net.load_param_mem("7767517\n5 6\n"
                       "Input in 0 1 x\n"
                       "Input in2 0 1 r\n"
                       "Split sp 1 2 x x0 x1\n"
                       "Crop ref 2 1 x0 r a 0=1 1=2\n"
                       "Crop expr 2 1 x1 r b 19=\"0,1\" 20=\"1h,+(1w,1)\" 21=\"1,2\"\n");
    Session s(net);
    const Tensor x = random_tensor({3, 7, 9}, DType::I8, 1), r = random_tensor({4, 5}, DType::F32, 2);
    s.set_input("x", x);
    s.set_input("r", r);
    EXPECT_TRUE(same_bytes(s.get("a"), ref_crop(x, {{0, 2, 1}, {3, 4, 5}})));
    EXPECT_TRUE(same_bytes(s.get("b"), ref_crop(x, {{0, 0, 1}, {3, 4, 5}})));

    // ROI from a MemoryData holding int32 words (known while planning) and from an input (run time)
    const int32_t roi[6] = {2, 1, 0, 4, 3, 2};
    for (bool from_input : {false, true}) {
        SCOPED_TRACE(from_input ? "ROI from an input" : "ROI from MemoryData");
        Net n2;
        n2.load_param_mem(from_input ? "7767517\n3 3\nInput in 0 1 x\nInput in2 0 1 roi\nCrop c 2 1 x roi y 0=-233\n"
                                     : "7767517\n3 3\nInput in 0 1 x\nMemoryData md 0 1 roi 0=6\nCrop c 2 1 x roi y 0=-233\n");
        if (!from_input) n2.load_model_mem(roi, sizeof roi);
        Session s2(n2);
        const Tensor in = random_tensor({3, 5, 8}, DType::F32, 3);
        s2.set_input("x", in);
        if (from_input) s2.set_input("roi", ints_tensor({6}, DType::I32, {2, 1, 0, 4, 3, 2}));
        EXPECT_TRUE(same_bytes(s2.get("y"), ref_crop(in, {{0, 1, 2}, {2, 3, 4}})));
    }
}

TEST(Slice, InNetWithSeveralOutputs)
{
    Net net;
    net.load_param_mem("7767517\n2 4\nInput in 0 1 x\nSlice s 1 3 x a b c -23300=3,1,-233,-233 1=-1\n");
    Session s(net);
    const Tensor x = random_tensor({2, 3, 8}, DType::I32, 1);
    s.set_input("x", x);
    const std::vector<Tensor> got = s.run({"a", "b", "c"});
    const std::vector<Tensor> want = ref_slice(x, -1, {1, 3, 4});
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(same_bytes(got[i], want[i])) << i;
}

// =================================== Reshape ==================================

namespace {
Shape reshape_shape(const ParamDict& pd, const Shape& in, DType t = DType::F32)
{
    auto op = make_op("Reshape", pd);
    return infer(*op, {random_tensor(in, t, 1)})[0].shape;
}
} // namespace

TEST(Reshape, ParamFormsCopyInferAndRanks)
{
    const Shape in = {2, 3, 4}; // ncnn [w=4, h=3, c=2], 24 elements
    EXPECT_EQ(reshape_shape(params({{0, -1}}), in), (Shape{24}));
    EXPECT_EQ(reshape_shape(params({{0, 24}}), in), (Shape{24}));
    EXPECT_EQ(reshape_shape(params({{0, 4}, {1, -1}}), in), (Shape{6, 4}));
    EXPECT_EQ(reshape_shape(params({{0, -1}, {1, 8}}), in), (Shape{8, 3})); // spec: 0=-1 1=768 is [w=?, h=768]
    EXPECT_EQ(reshape_shape(params({{0, 0}, {1, -1}}), in), (Shape{6, 4}));  // w copied
    EXPECT_EQ(reshape_shape(params({{0, -1}, {1, 0}}), in), (Shape{3, 8}));  // h copied
    EXPECT_EQ(reshape_shape(params({{0, 2}, {1, 3}, {2, -1}}), in), (Shape{4, 3, 2}));
    EXPECT_EQ(reshape_shape(params({{0, 0}, {1, 0}, {2, 0}}), in), (Shape{2, 3, 4}));
    EXPECT_EQ(reshape_shape(params({{0, 2}, {1, 0}, {11, 2}, {2, -1}}), in), (Shape{2, 2, 3, 2}));
    EXPECT_EQ(reshape_shape(params({{0, 0}, {1, 1}, {11, -1}, {2, 2}}), in), (Shape{2, 3, 1, 4}));
    // d without c: the rank is 2 (ncnn drops d)
    EXPECT_EQ(reshape_shape(params({{0, 6}, {1, 4}, {11, 3}}), in), (Shape{4, 6}));
    // copying from a lower-rank input reads 1 for absent dims
    EXPECT_EQ(reshape_shape(params({{0, -1}, {1, 0}, {2, 0}}), {12}), (Shape{1, 1, 12}));
    // 4-D input to 2-D
    EXPECT_EQ(reshape_shape(params({{0, -1}, {1, 0}}), {2, 3, 4, 5}), (Shape{4, 30}));
    // dtype is kept
    auto op = make_op("Reshape", params({{0, -1}}));
    EXPECT_EQ(infer(*op, {random_tensor(in, DType::I8, 1)})[0].dtype, DType::I8);
    EXPECT_TRUE(op->outputs_alias_input());
}

TEST(Reshape, MultiInputExpressionExampleInNet)
{
    // spec §1.9: 6="-1,*(0h,2),+(1c,2)" gives [w=-1, h=A.h*2, c=B.c+2]
    Net net;
    net.load_param_mem("7767517\n3 3\nInput a 0 1 A\nInput b 0 1 B\nReshape r 2 1 A B out 6=\"-1,*(0h,2),+(1c,2)\"\n");
    for (DType t : {DType::F32, DType::I8}) {
        Session s(net);
        const Tensor a = random_tensor({2, 3, 12}, t, 1); // A.h = 3, 72 elements
        s.set_input("A", a);
        s.set_input("B", random_tensor({1, 5, 5}, DType::F32, 2)); // B.c = 1
        const Tensor out = s.get("out");
        ASSERT_EQ(out.shape(), (Shape{3, 6, 4}));
        ASSERT_EQ(out.dtype(), t);
        EXPECT_EQ(std::memcmp(out.raw(), a.raw(), a.nbytes()), 0); // a reshape keeps the element order
    }
    // expression of one input: 2-D and 4-D lists
    ParamDict pd;
    pd.set_string(6, "0w,-1");
    EXPECT_EQ(reshape_shape(pd, {2, 3, 4}), (Shape{6, 4}));
    pd.set_string(6, "0w,0h,-1,1");
    EXPECT_EQ(reshape_shape(pd, {2, 3, 4}), (Shape{1, 2, 3, 4}));
    pd.set_string(6, "24");
    EXPECT_EQ(reshape_shape(pd, {2, 3, 4}), (Shape{24}));
}

// ncnn hands a layer every bottom its .param lists; a shape expression reads
// the blobs it names and the rest are ignored (pnnx writes such layers). The
// results equal those of the same layer listing only the blobs it reads.
TEST(ExpressionLayers, ExtraBottomsAreAccepted)
{
    const std::string head = "7767517\n6 6\nInput a 0 1 A\nInput b 0 1 B\nInput c 0 1 C\n";
    const Tensor a = random_tensor({2, 3, 4}, DType::F32, 1), b = random_tensor({5, 6}, DType::F32, 2),
                 c = random_tensor({7}, DType::F32, 3);
    auto run = [&](const std::string& layers) {
        Net net;
        net.load_param_mem(head + layers);
        Session s(net);
        s.set_input("A", a);
        s.set_input("B", b);
        s.set_input("C", c);
        return std::vector<Tensor>{s.get("r"), s.get("k"), s.get("i")};
    };
    const std::vector<Tensor> many = run("Reshape re 3 1 A B C r 6=\"0w,-1\"\n"
                                         "Crop cr 3 1 A B C k 19=\"0\" 20=\"1h\" 21=\"-1\"\n"
                                         "Interp ip 2 1 A C i 0=1 9=\"*(0w,2),0h\"\n");
    const std::vector<Tensor> needed = run("Reshape re 1 1 A r 6=\"0w,-1\"\n"
                                           "Crop cr 2 1 A B k 19=\"0\" 20=\"1h\" 21=\"-1\"\n"
                                           "Interp ip 1 1 A i 0=1 9=\"*(0w,2),0h\"\n");
    EXPECT_EQ(many[0].shape(), Shape({6, 4}));
    EXPECT_EQ(many[1].shape(), Shape({2, 3, 4})); // w cropped to [0, B.h = 5): all 4
    EXPECT_EQ(many[2].shape(), Shape({2, 3, 8}));
    for (size_t i = 0; i < many.size(); ++i) {
        EXPECT_EQ(many[i].shape(), needed[i].shape()) << i;
        EXPECT_EQ(std::memcmp(many[i].raw(), needed[i].raw(), many[i].nbytes()), 0) << i;
    }
    // Fewer bottoms than the expression names is still an error naming the layer.
    Net bad;
    EXPECT_TRUE(contains(error_of([&] {
        bad.load_param_mem("7767517\n2 2\nInput a 0 1 A\nReshape re 1 1 A r 6=\"1w,-1\"\n");
        Session s(bad);
        s.set_input("A", a);
        s.get("r");
    }), "at least 2"));
}

// A layer ncnn always runs on its first bottom (one_blob_only) may list more:
// they are ignored, as ncnn does.
TEST(ExpressionLayers, OneBlobLayersIgnoreExtraBottoms)
{
    const Tensor a = random_tensor({2, 3, 4}, DType::F32, 5), b = random_tensor({7}, DType::F32, 6);
    auto run = [&](const std::string& layers) {
        Net net;
        net.load_param_mem("7767517\n5 5\nInput a 0 1 A\nInput b 0 1 B\n" + layers);
        Session s(net);
        s.set_input("A", a);
        s.set_input("B", b);
        return std::vector<Tensor>{s.get("r"), s.get("n")};
    };
    const auto many = run("ReLU re 2 1 A B r 0=0.1\nInstanceNorm in 2 1 r B n 0=2 2=0\nNoop keep 1 1 B k\n");
    const auto one = run("ReLU re 1 1 A r 0=0.1\nInstanceNorm in 1 1 r n 0=2 2=0\nNoop keep 1 1 B k\n");
    for (size_t i = 0; i < many.size(); ++i) {
        ASSERT_EQ(many[i].shape(), one[i].shape());
        EXPECT_EQ(std::memcmp(many[i].raw(), one[i].raw(), many[i].nbytes()), 0) << i;
    }
}

TEST(Reshape, BatchAxisForms)
{
    // ncnn's batch-aware form with batch 1: target read outermost first with a batch axis.
    const Shape in = {3, 4}; // logical with 12=0: (1, 3, 4)
    // target [h=1, w=-1] with the output batch at 0 -> (12)
    EXPECT_EQ(reshape_shape(params({{0, -1}, {1, 1}, {12, 0}, {13, 0}}), in), (Shape{12}));
    // target [c=0 (copies logical 0 = batch 1), h=1, w=-1], output batch at 1 -> (1, 12)
    EXPECT_EQ(reshape_shape(params({{0, -1}, {1, 1}, {2, 0}, {12, 0}, {13, 1}}), in), (Shape{1, 12}));
    // input batch at the end (-1): logical (3, 4, 1); target [c=0 -> 3, h=0 -> 4, w=-1 -> 1]
    EXPECT_EQ(reshape_shape(params({{0, -1}, {1, 0}, {2, 0}, {12, -1}}), in), (Shape{3, 4, 1}));
    // expression lists are innermost first: "-1,0" is [0 (batch), -1]
    ParamDict pd = params({{12, 0}, {13, 0}});
    pd.set_string(6, "-1,0");
    EXPECT_EQ(reshape_shape(pd, in), (Shape{12}));
    // a batch other than 1 is not representable
    std::string m = error_of([&] { reshape_shape(params({{0, -1}, {1, 3}, {12, 0}, {13, 0}}), in); });
    EXPECT_TRUE(contains(m, "batch")) << m;
    EXPECT_THROW(reshape_shape(params({{0, -1}, {12, 3}}), in), Error); // axis past rank + 1
    EXPECT_THROW(reshape_shape(params({{0, -1}, {13, 1}}), in), Error); // output axis past the target
}

TEST(Reshape, Errors)
{
    // No dims, no expression: the target must then come as input 1.
    std::string m = error_of([] { reshape_shape(ParamDict{}, {2, 3, 4}); });
    EXPECT_TRUE(contains(m, "param 0")) << m;
    EXPECT_THROW(make_op("Reshape", params({{0, -2}})), Error);
    EXPECT_THROW(make_op("Reshape", params({{0, 4}, {1, -5}})), Error);
    m = error_of([] { reshape_shape(params({{0, -1}, {1, -1}}), {2, 3, 4}); });
    EXPECT_TRUE(contains(m, "-1")) << m;
    m = error_of([] { reshape_shape(params({{0, 5}, {1, -1}}), {2, 3, 4}); });
    EXPECT_TRUE(contains(m, "24")) << m;
    EXPECT_THROW(reshape_shape(params({{0, 5}, {1, 5}}), {2, 3, 4}), Error);
    ParamDict five;
    five.set_string(6, "1,1,1,1,24");
    EXPECT_THROW(reshape_shape(five, {2, 3, 4}), Error);
    ParamDict bad;
    bad.set_string(6, "*(0w");
    EXPECT_THROW(make_op("Reshape", bad), Error);
    // an expression over two blobs needs two inputs
    ParamDict two;
    two.set_string(6, "1w,-1");
    EXPECT_THROW(reshape_shape(two, {2, 3, 4}), Error);
    // target dims whose product overflows int64 (2^31-1 to the 3rd and 5th power): an error, not UB
    const int big = 2147483647;
    m = error_of([&] { reshape_shape(params({{0, big}, {1, big}, {2, big}}), {2, 3, 4}); });
    EXPECT_TRUE(contains(m, "overflow")) << m;
    ParamDict batched = params({{12, 0}, {13, 0}});
    batched.set_string(6, "2147483647,2147483647,2147483647,2147483647,1");
    m = error_of([&] { reshape_shape(batched, {3, 4}); });
    EXPECT_TRUE(contains(m, "overflow")) << m;
}
