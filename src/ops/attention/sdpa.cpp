// SDPA (ncnn layer 108): scaled dot-product attention,
//   out = softmax(q . k^T * scale [+ mask], last axis) . v
// Params (ncnn): 5=attn_mask (0/1: a fourth input, added to the scores),
// 6=scale (0: 1/sqrt(E)), 7=kv_cache (0/1: two more inputs, the past keys and
// values, which the new ones are appended to; the two extra outputs are the
// full keys and values, to pass as the past of the next call), 18=int8_scale_term
// (must be 0: ncnn's int8 path quantizes dynamically; we compute in fp32).
//
// Shapes, outermost first, each of rank >= 2:
//   q [..., Lq, E]   k [..., Lk, E]   v [..., Lk, Ev]   mask [..., Lq or 1, Lk or 1]
//   past_k [..., Lp, E]   past_v [..., Lp, Ev]   (k and v then have Lp + Lk rows)
//   -> out [..., Lq, Ev]
// The axes before the last two ("batch" axes: heads, batch) are aligned from
// the right, a missing axis counting as 1. The output's size along each is the
// largest input size, and each input's size must divide it: 1 broadcasts (as
// numpy), equal sizes pair up, and keys/values with G heads serve H = n * G
// query heads in groups (head h reads k/v head h / n: ncnn's grouped-query
// attention). ncnn's 3-D blobs (c = heads, h = sequence, w = embedding) are
// exactly these shapes. The past and current keys share their batch axes.
//
// The work item is a block of query rows of one batch, computed by the
// attention kernel (kernels/attention.h): their scores live in a per-thread
// buffer, so the (..., Lq, Lk) score matrix is never materialized, and results
// do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/attention.h"
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum Input { kQuery = 0, kKey = 1, kValue = 2 };

// Which matrix of one input each output batch index reads.
struct BatchMap {
    Shape batch;                                 // the output's batch axes
    std::vector<std::vector<int64_t>> matrix_of; // per input: per output batch index
};

Shape batch_axes(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

// Output batch axes from every input's (right-aligned, each dividing the largest).
BatchMap map_batches(const std::vector<Shape>& shapes, const char* const* names)
{
    BatchMap m;
    size_t rank = 0;
    for (const Shape& s : shapes) rank = std::max(rank, s.size() - 2);
    m.batch.assign(rank, 1);
    auto axis_size = [&](const Shape& s, size_t a) { // a counts from the outermost output axis
        const size_t r = s.size() - 2;
        return a + r < rank ? int64_t{1} : s[a + r - rank];
    };
    for (const Shape& s : shapes)
        for (size_t a = 0; a < rank; ++a) m.batch[a] = std::max(m.batch[a], axis_size(s, a));
    for (size_t i = 0; i < shapes.size(); ++i)
        for (size_t a = 0; a < rank; ++a) {
            const int64_t n = axis_size(shapes[i], a);
            check(n > 0 && m.batch[a] % n == 0, "the ", names[i], " ", shape_str(shapes[i]),
                  " does not broadcast with the other inputs' batch axes (", shape_str(m.batch),
                  "): sizes must be 1, equal, or divide the largest");
        }
    const int64_t total = shape_numel(m.batch);
    for (const Shape& s : shapes) {
        std::vector<int64_t> of(static_cast<size_t>(total));
        for (int64_t flat = 0; flat < total; ++flat) {
            int64_t rest = flat, index = 0, stride = 1;
            for (size_t a = rank; a-- > 0;) {
                const int64_t i = rest % m.batch[a], n = axis_size(s, a);
                rest /= m.batch[a];
                index += i / (m.batch[a] / n) * stride;
                stride *= n;
            }
            of[static_cast<size_t>(flat)] = index;
        }
        m.matrix_of.push_back(std::move(of));
    }
    return m;
}

// Keys or values: `rows` rows of `width` per batch matrix.
struct Rows {
    const float* data = nullptr;
    int64_t rows = 0, width = 0;
    const float* row(int64_t matrix, int64_t r) const { return data + (matrix * rows + r) * width; }
};

// Sizes of one call: query rows, key rows (past included), embeddings, mask rows/columns.
struct Geometry {
    int64_t Lq = 0, Lk = 0, E = 0, Ev = 0;
    int64_t mask_rows = 1, mask_cols = 1;
    BatchMap map;
    Shape out;
};

class Sdpa : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        has_mask_ = flag(pd, 5, "attn_mask");
        kv_cache_ = flag(pd, 7, "kv_cache");
        scale_ = pd.get_float(6, 0.f);
        check(std::isfinite(scale_), "scale (param 6) must be finite, got ", scale_);
        check(pd.get_int(18, 0) == 0, "int8_scale_term (param 18) is not supported: Kestrel computes SDPA in fp32");
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const size_t inputs = 3 + (has_mask_ ? 1 : 0) + (kv_cache_ ? 2 : 0);
        expect_input_count(in, inputs, inputs);
        expect_output_count(out, kv_cache_ ? 3 : 1);
        for (const TensorDesc& d : in) expect_f32(d);
        const Geometry g = geometry(shapes_of(in));
        out[0] = TensorDesc(g.out);
        if (kv_cache_) {
            out[1] = TensorDesc(with_rows(in[kKey].shape, g.Lk));
            out[2] = TensorDesc(with_rows(in[kValue].shape, g.Lk));
        }
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out) const override
    {
        const Geometry g = geometry(shapes_of(in));
        return shape_numel(batch_axes(out[0].shape)) * g.Lq * g.Lk * (g.E + g.Ev);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        std::vector<Shape> shapes;
        for (const Tensor& t : in) shapes.push_back(t.shape());
        const Geometry g = geometry(shapes);
        const Rows keys = rows(in, out, kKey, g.E), values = rows(in, out, kValue, g.Ev);
        const float scale = scale_ != 0.f ? scale_ : 1.f / std::sqrt(static_cast<float>(g.E));
        const int64_t blocks = (g.Lq + kAttentionRowBlock - 1) / kAttentionRowBlock;
        ctx.parallel_for(shape_numel(g.map.batch) * blocks, [&](int64_t begin, int64_t end) {
            thread_local std::vector<float> scratch; // the thread's own, kept from call to call
            for (int64_t item = begin; item < end; ++item) {
                const int64_t b = item / blocks, i0 = item % blocks * kAttentionRowBlock;
                const AttentionHead head{in[kQuery].data<float>() + g.map.matrix_of[kQuery][b] * g.Lq * g.E, g.E,
                                         keys.row(g.map.matrix_of[kKey][b], 0), g.E,
                                         values.row(g.map.matrix_of[kValue][b], 0), g.Ev,
                                         out[0].data<float>() + b * g.Lq * g.Ev, g.Ev,
                                         g.Lq, g.Lk, g.E, g.Ev};
                attention_rows(head, scale, mask_of(g, in, b), i0, std::min(kAttentionRowBlock, g.Lq - i0), scratch);
            }
        });
    }

private:
    // Adds the mask (input 3; rows and columns may broadcast) to batch b's scores.
    AttentionMask mask_of(const Geometry& g, const std::vector<Tensor>& in, int64_t b) const
    {
        if (!has_mask_) return nullptr;
        const float* m = in[3].data<float>() + g.map.matrix_of[3][b] * g.mask_rows * g.mask_cols;
        return [&g, m](int64_t i, float* s) {
            const float* row = m + (g.mask_rows == 1 ? 0 : i) * g.mask_cols;
            for (int64_t j = 0; j < g.Lk; ++j) s[j] += row[g.mask_cols == 1 ? 0 : j];
        };
    }

    static bool flag(const ParamDict& pd, int id, const char* what)
    {
        const int v = pd.get_int(id, 0);
        check(v == 0 || v == 1, what, " (param ", id, ") must be 0 or 1, got ", v);
        return v == 1;
    }

    static std::vector<Shape> shapes_of(const std::vector<TensorDesc>& in)
    {
        std::vector<Shape> s;
        for (const TensorDesc& d : in) s.push_back(d.shape);
        return s;
    }

    static Shape with_rows(Shape s, int64_t rows)
    {
        s[s.size() - 2] = rows;
        return s;
    }

    int past_index() const { return has_mask_ ? 4 : 3; }

    Geometry geometry(const std::vector<Shape>& in) const
    {
        static const char* const kNames[] = {"query", "key", "value", "mask"};
        for (size_t i = 0; i < in.size(); ++i)
            check(in[i].size() >= 2, "input ", i, " must have rank >= 2 ([..., rows, columns]), got ", shape_str(in[i]));
        const Shape &q = in[kQuery], &k = in[kKey], &v = in[kValue];
        Geometry g;
        g.Lq = q[q.size() - 2];
        g.E = q.back();
        g.Ev = v.back();
        g.Lk = k[k.size() - 2];
        check(k.back() == g.E, "key ", shape_str(k), " must have the query's embedding size ", g.E);
        check(v[v.size() - 2] == g.Lk, "value ", shape_str(v), " must have as many rows as the key ", shape_str(k));
        if (kv_cache_) {
            const Shape &pk = in[static_cast<size_t>(past_index())], &pv = in[static_cast<size_t>(past_index() + 1)];
            check(batch_axes(pk) == batch_axes(k) && pk.back() == g.E, "past key ", shape_str(pk),
                  " must match the key ", shape_str(k), " but for its rows");
            check(batch_axes(pv) == batch_axes(v) && pv.back() == g.Ev && pv[pv.size() - 2] == pk[pk.size() - 2],
                  "past value ", shape_str(pv), " must match the value ", shape_str(v), " and the past key's rows");
            g.Lk += pk[pk.size() - 2];
        }
        std::vector<Shape> operands = {q, k, v};
        if (has_mask_) {
            const Shape& m = in[3];
            g.mask_rows = m[m.size() - 2];
            g.mask_cols = m.back();
            check((g.mask_rows == 1 || g.mask_rows == g.Lq) && (g.mask_cols == 1 || g.mask_cols == g.Lk), "mask ",
                  shape_str(m), " must have ", g.Lq, " (or 1) rows and ", g.Lk, " (or 1) columns");
            operands.push_back(m);
        }
        g.map = map_batches(operands, kNames);
        g.out = g.map.batch;
        g.out.push_back(g.Lq);
        g.out.push_back(g.Ev);
        return g;
    }

    // Keys or values. With kv_cache: the past rows then the current ones,
    // written to output 1 (keys) or 2 (values), which the attention then reads.
    Rows rows(const std::vector<Tensor>& in, std::vector<Tensor>& out, Input which, int64_t width) const
    {
        const Tensor& cur = in[which];
        const int64_t cur_rows = cur.shape()[cur.shape().size() - 2];
        if (!kv_cache_) return Rows{cur.data<float>(), cur_rows, width};
        const Tensor& past = in[static_cast<size_t>(past_index() + (which == kKey ? 0 : 1))];
        Tensor& full = out[which == kKey ? 1 : 2];
        const int64_t past_rows = past.shape()[past.shape().size() - 2];
        const size_t past_size = static_cast<size_t>(past_rows * width), cur_size = static_cast<size_t>(cur_rows * width);
        float* dst = full.data<float>();
        for (int64_t m = 0; m < shape_numel(batch_axes(past.shape())); ++m) {
            std::copy_n(past.data<float>() + m * past_rows * width, past_size, dst);
            std::copy_n(cur.data<float>() + m * cur_rows * width, cur_size, dst + past_size);
            dst += past_size + cur_size;
        }
        return Rows{full.data<float>(), past_rows + cur_rows, width};
    }

    bool has_mask_ = false;
    bool kv_cache_ = false;
    float scale_ = 0.f;
};

} // namespace

std::unique_ptr<Op> make_sdpa() { return std::make_unique<Sdpa>(); }

} // namespace kestrel
