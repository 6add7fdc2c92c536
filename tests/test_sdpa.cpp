// SDPA (ncnn's scaled dot-product attention layer) against a naive
// double-precision reference written here from the formula
//   out = softmax(q . k^T * scale + mask) . v
// over ncnn's 3-D blobs, grouped heads, numpy-broadcast batch axes, masks of
// one row or column, the kv cache, thread counts, and the errors.
#include <cmath>

#include "layer_test_util.h"
#include "reference_util.h"

namespace kestrel {
namespace {

using layer_test::error_of;
using layer_test::random_f32;
using layer_test::run_layer;
using testing::expect_close_to_reference;

struct Case {
    Shape q, k, v, mask; // mask empty: none
    float scale = 0.f;   // 0: 1 / sqrt(E)
};

// Index of the matrix of an input with batch axes `in` read by output batch
// multi-index `idx` of `out` (right-aligned; a size n serves out / n
// consecutive indices: 1 broadcasts, equal pairs, fewer heads are groups).
int64_t source_matrix(const Shape& in, const Shape& out, const std::vector<int64_t>& idx)
{
    int64_t m = 0;
    const size_t skip = out.size() - in.size();
    for (size_t a = 0; a < in.size(); ++a) m = m * in[a] + idx[a + skip] / (out[a + skip] / in[a]);
    return m;
}

Tensor sdpa_ref(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, float scale)
{
    const Shape& qs = q.shape();
    const int64_t Lq = qs[qs.size() - 2], E = qs.back(), Lk = k.shape()[k.shape().size() - 2], Ev = v.shape().back();
    std::vector<Shape> batches;
    for (const Tensor* t : {&q, &k, &v, mask})
        if (t != nullptr) batches.emplace_back(t->shape().begin(), t->shape().end() - 2);
    size_t rank = 0;
    for (const Shape& b : batches) rank = std::max(rank, b.size());
    Shape out_batch(rank, 1);
    for (const Shape& b : batches)
        for (size_t a = 0; a < b.size(); ++a) out_batch[rank - b.size() + a] = std::max(out_batch[rank - b.size() + a], b[a]);
    const double s = scale != 0.f ? scale : 1.0 / std::sqrt(static_cast<double>(E));
    Shape out_shape = out_batch;
    out_shape.push_back(Lq);
    out_shape.push_back(Ev);
    Tensor out(out_shape, DType::F32);
    std::vector<int64_t> idx(rank, 0);
    for (int64_t b = 0; b < shape_numel(out_batch); ++b) {
        for (int64_t rest = b, a = static_cast<int64_t>(rank) - 1; a >= 0; --a) {
            idx[static_cast<size_t>(a)] = rest % out_batch[static_cast<size_t>(a)];
            rest /= out_batch[static_cast<size_t>(a)];
        }
        const float* qm = q.data<float>() + source_matrix(batches[0], out_batch, idx) * Lq * E;
        const float* km = k.data<float>() + source_matrix(batches[1], out_batch, idx) * Lk * E;
        const float* vm = v.data<float>() + source_matrix(batches[2], out_batch, idx) * Lk * Ev;
        for (int64_t i = 0; i < Lq; ++i) {
            std::vector<double> p(static_cast<size_t>(Lk));
            double top = -INFINITY, sum = 0;
            for (int64_t j = 0; j < Lk; ++j) {
                double d = 0;
                for (int64_t e = 0; e < E; ++e) d += double(qm[i * E + e]) * km[j * E + e];
                d *= s;
                if (mask != nullptr) {
                    const Shape& ms = mask->shape();
                    const int64_t rows = ms[ms.size() - 2], cols = ms.back();
                    d += mask->data<float>()[source_matrix(batches[3], out_batch, idx) * rows * cols +
                                             (rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
                }
                p[static_cast<size_t>(j)] = d;
                top = std::max(top, d);
            }
            for (double& x : p) sum += (x = std::exp(x - top));
            for (int64_t e = 0; e < Ev; ++e) {
                double y = 0;
                for (int64_t j = 0; j < Lk; ++j) y += p[static_cast<size_t>(j)] / sum * vm[j * Ev + e];
                out.data<float>()[(b * Lq + i) * Ev + e] = static_cast<float>(y);
            }
        }
    }
    return out;
}

ParamDict sdpa_params(bool mask, float scale, bool kv_cache = false)
{
    ParamDict pd;
    pd.set_int(5, mask ? 1 : 0);
    pd.set_float(6, scale);
    pd.set_int(7, kv_cache ? 1 : 0);
    return pd;
}

void check_case(const Case& c, unsigned seed)
{
    SCOPED_TRACE("q " + shape_str(c.q) + " k " + shape_str(c.k) + " v " + shape_str(c.v) + " mask " + shape_str(c.mask));
    const Tensor q = random_f32(c.q, seed), k = random_f32(c.k, seed + 1), v = random_f32(c.v, seed + 2);
    const Tensor mask = c.mask.empty() ? Tensor() : random_f32(c.mask, seed + 3, -3.f, 0.f);
    std::vector<layer_test::In> ins = {q, k, v};
    if (mask.defined()) ins.push_back(mask);
    const ParamDict pd = sdpa_params(mask.defined(), c.scale);
    const Tensor ref = sdpa_ref(q, k, v, mask.defined() ? &mask : nullptr, c.scale);
    const Tensor one = run_layer("SDPA", pd, ins)[0];
    expect_close_to_reference(one, ref, 1e-5);
    const Tensor two = run_layer("SDPA", pd, ins, 1, {}, 2)[0];
    ASSERT_EQ(two.shape(), one.shape());
    for (int64_t i = 0; i < one.numel(); ++i) ASSERT_EQ(one.data<float>()[i], two.data<float>()[i]) << "thread count changed element " << i;
}

TEST(Sdpa, NcnnBlobsHeadsSequenceEmbedding)
{
    check_case({{4, 5, 8}, {4, 7, 8}, {4, 7, 6}, {}, 0.f}, 1);        // default scale 1/sqrt(E)
    check_case({{4, 5, 8}, {4, 7, 8}, {4, 7, 6}, {4, 5, 7}, 0.3f}, 2); // a mask per head
    check_case({{1, 33}, {9, 33}, {9, 3}, {1, 9}, 0.f}, 3);            // 2-D, embedding not a multiple of 16
}

TEST(Sdpa, GroupedHeadsShareKeysAndValues)
{
    check_case({{6, 5, 8}, {2, 7, 8}, {2, 7, 6}, {1, 5, 7}, 0.f}, 4); // 3 query heads per key/value head
    check_case({{6, 5, 8}, {1, 7, 8}, {3, 7, 6}, {}, 0.5f}, 5);      // broadcast keys, grouped values
}

TEST(Sdpa, BatchAxesBroadcastLikeNumpyAndMasksBroadcastRowsOrColumns)
{
    check_case({{2, 3, 5, 19}, {1, 3, 6, 19}, {2, 1, 6, 4}, {5, 1}, 0.f}, 6);
    check_case({{3, 5, 16}, {2, 3, 6, 16}, {6, 4}, {2, 1, 1, 6}, 0.2f}, 7);
}

TEST(Sdpa, KvCacheAppendsToThePastAndAttendsToAll)
{
    const Tensor q = random_f32({2, 3, 8}, 10), k = random_f32({2, 2, 8}, 11), v = random_f32({2, 2, 5}, 12);
    const Tensor pk = random_f32({2, 4, 8}, 13), pv = random_f32({2, 4, 5}, 14), mask = random_f32({3, 6}, 15, -1.f, 0.f);
    const std::vector<Tensor> got = run_layer("SDPA", sdpa_params(true, 0.f, true), {q, k, v, mask, pk, pv}, 3);
    // The full keys and values: per head, the past rows then the new ones.
    Tensor fk({2, 6, 8}, DType::F32), fv({2, 6, 5}, DType::F32);
    for (int64_t h = 0; h < 2; ++h) {
        for (int64_t r = 0; r < 6; ++r) {
            for (int64_t e = 0; e < 8; ++e)
                fk.data<float>()[(h * 6 + r) * 8 + e] = r < 4 ? pk.data<float>()[(h * 4 + r) * 8 + e] : k.data<float>()[(h * 2 + r - 4) * 8 + e];
            for (int64_t e = 0; e < 5; ++e)
                fv.data<float>()[(h * 6 + r) * 5 + e] = r < 4 ? pv.data<float>()[(h * 4 + r) * 5 + e] : v.data<float>()[(h * 2 + r - 4) * 5 + e];
        }
    }
    expect_close_to_reference(got[1], fk, 0);
    expect_close_to_reference(got[2], fv, 0);
    expect_close_to_reference(got[0], sdpa_ref(q, fk, fv, &mask, 0.f), 1e-5);
}

TEST(Sdpa, BadShapesAndParamsAreErrors)
{
    const Tensor q = random_f32({2, 3, 8}, 1), k = random_f32({2, 4, 8}, 2), v = random_f32({2, 4, 5}, 3);
    auto err = [](const ParamDict& pd, const std::vector<layer_test::In>& ins) {
        return error_of([&] { run_layer("SDPA", pd, ins); });
    };
    EXPECT_TRUE(layer_test::contains(err(sdpa_params(false, 0.f), {q, random_f32({2, 4, 7}, 4), v}), "embedding size"));
    EXPECT_TRUE(layer_test::contains(err(sdpa_params(false, 0.f), {q, k, random_f32({2, 5, 5}, 4)}), "as many rows"));
    EXPECT_TRUE(layer_test::contains(err(sdpa_params(false, 0.f), {random_f32({3, 3, 8}, 4), k, v}), "does not broadcast"));
    EXPECT_TRUE(layer_test::contains(err(sdpa_params(true, 0.f), {q, k, v, random_f32({2, 4}, 4)}), "rows"));
    EXPECT_TRUE(layer_test::contains(err(sdpa_params(false, 0.f), {random_f32({8}, 4), k, v}), "rank >= 2"));
    EXPECT_TRUE(layer_test::contains(err(layer_test::P({{5, 2}}), {q, k, v}), "attn_mask"));
    EXPECT_TRUE(layer_test::contains(err(layer_test::P({{18, 1}}), {q, k, v}), "int8_scale_term"));
    EXPECT_TRUE(layer_test::contains(err(sdpa_params(true, 0.f), {q, k, v}), "input"));
}

} // namespace
} // namespace kestrel
