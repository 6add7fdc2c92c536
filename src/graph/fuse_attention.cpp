// Scaled dot-product attention, as exporters write it:
//   S = MatMul(Q [* or / c], K^T [* or / c])
//   P = Softmax(S [* or / c] [+ mask], last axis)
//   Y = MatMul(P, V)
// becomes one SDPA layer (src/ops/sdpa.cpp): softmax(Q . K^T * scale + mask) . V,
// scale being the product of the scalar factors (PyTorch scales Q, or Q and
// K, or the scores). K^T is MatMul's transB operand, or the output of a
// Transpose that moves the last two axes (PyTorch's MultiheadAttention uses
// perm [1, 2, 0]); that Transpose is rewritten to give K itself.
//
// Exact only where: each intermediate blob is read by the pattern alone and is
// no graph output; the softmax is over the last axis; shape hints show Q and
// V (and K given untransposed) have rank >= 2, so no MatMul treats a vector
// specially; the mask, if any, adds to the scores without widening their last
// two axes. SDPA's batch axes broadcast as MatMul's do (it also accepts
// ncnn's grouped heads, where MatMul would fail), so the outputs match.
#include <cmath>
#include <numeric>

#include "graph/pattern_match.h"

namespace kestrel {

namespace {

struct AttentionMatch {
    std::vector<int> erased; // layers of the pattern that go
    int q = -1, k = -1, v = -1, mask = -1;
    float scale = 1.f;
    int key_transpose = -1; // the Permute giving K^T, rewritten to give K
    std::vector<int> key_perm;
};

// Multiplies `scale` by the factor of a scalar Mul or Div layer; false for other layers.
bool scalar_factor(const Layer& l, float& scale)
{
    float c = 0.f;
    if (scalar_binary(l, kBinMul, c)) {
        scale *= c;
        return true;
    }
    if (scalar_binary(l, kBinDiv, c)) {
        scale /= c;
        return true;
    }
    return false;
}

// Steps back from `blob` over a scalar Mul/Div read only by `reader` (which
// becomes that layer), folding its factor into the scale.
int skip_scalar(const Graph& g, int blob, int& reader, AttentionMatch& m)
{
    const int li = producer_index(g, blob);
    if (li < 0 || only_reader(g, blob) != reader || !scalar_factor(g.layers[li], m.scale)) return blob;
    m.erased.push_back(li);
    reader = li;
    return g.layers[li].bottoms[0];
}

bool is_scores(const Graph& g, int blob)
{
    const Layer* l = producer(g, blob);
    float unused = 1.f;
    return l != nullptr && (l->type == "MatMul" || scalar_factor(*l, unused));
}

// A blob's shape from the hints or, for a constant (a mask), its value.
const Shape* known_shape(const Graph& g, const ShapeHints& hints, int blob)
{
    const Tensor* c = constant_of(g, blob);
    return c != nullptr ? &c->shape() : hint_of(g, hints, blob);
}

int hinted_rank(const Graph& g, const ShapeHints& hints, int blob)
{
    const Shape* s = known_shape(g, hints, blob);
    return s == nullptr ? -1 : static_cast<int>(s->size());
}

// A known size along axis `from_end` (1 = last), or -1.
int64_t hinted_dim(const Graph& g, const ShapeHints& hints, int blob, size_t from_end)
{
    const Shape* s = known_shape(g, hints, blob);
    return s == nullptr || s->size() < from_end ? -1 : (*s)[s->size() - from_end];
}

// K from the MatMul's second operand `kt` (read only by `reader`).
bool match_key(const Graph& g, const ShapeHints& hints, int kt, int reader, bool trans_b, AttentionMatch& m)
{
    if (trans_b) {
        m.k = kt;
        return hinted_rank(g, hints, kt) >= 2;
    }
    const int li = producer_index(g, kt);
    if (li < 0 || only_reader(g, kt) != reader) return false;
    const Layer& t = g.layers[li];
    if (t.type != "Permute" || t.bottoms.size() != 1 || !t.params.has(1)) return false;
    std::vector<int> perm = t.params.get_ints(1); // the explicit permutation
    if (perm.size() < 2) return false;
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    std::vector<int> identity(perm.size());
    std::iota(identity.begin(), identity.end(), 0);
    if (perm == identity) { // K^T was K with its last two axes swapped: use K
        m.erased.push_back(li);
        m.k = t.bottoms[0];
    } else {
        m.key_transpose = li;
        m.key_perm = perm;
        m.k = kt;
    }
    return true;
}

// The mask adds to the scores (rows Lq, columns Lk) without widening them.
bool mask_keeps_scores(const Graph& g, const ShapeHints& hints, const AttentionMatch& m, int64_t lq, int64_t lk)
{
    if (hinted_rank(g, hints, m.mask) < 2) return false;
    const int64_t rows = hinted_dim(g, hints, m.mask, 2), cols = hinted_dim(g, hints, m.mask, 1);
    return (rows == 1 || (rows > 0 && rows == lq)) && (cols == 1 || (cols > 0 && cols == lk));
}

bool match_attention(const Graph& g, const ShapeHints& hints, int sm, AttentionMatch& m, int& last)
{
    const Layer& softmax = g.layers[sm];
    if (softmax.type != "Softmax" || softmax.bottoms.size() != 1 || softmax.tops.size() != 1 ||
        softmax.params.get_int(1, 0) != 1)
        return false;
    last = only_reader(g, softmax.tops[0]);
    if (last < 0) return false;
    const Layer& out = g.layers[last];
    if (out.type != "MatMul" || out.bottoms.size() != 2 || out.params.get_int(0, 0) != 0 ||
        out.bottoms[0] != softmax.tops[0] || out.bottoms[1] == softmax.tops[0])
        return false;
    m.v = out.bottoms[1];
    m.erased.push_back(sm);
    // Back from the softmax: [Add mask] <- [scalar] <- MatMul.
    int reader = sm;
    int s = softmax.bottoms[0];
    const int add = producer_index(g, s);
    if (add >= 0 && only_reader(g, s) == sm && is_two_input_binary(g.layers[add], kBinAdd, true)) {
        const Layer& a = g.layers[add];
        const int side = is_scores(g, a.bottoms[0]) ? 0 : 1;
        s = a.bottoms[static_cast<size_t>(side)];
        m.mask = a.bottoms[static_cast<size_t>(1 - side)];
        if (s == m.mask || !is_scores(g, s)) return false;
        m.erased.push_back(add);
        reader = add;
    }
    s = skip_scalar(g, s, reader, m);
    const int mm = producer_index(g, s);
    if (mm < 0 || only_reader(g, s) != reader) return false;
    const Layer& scores = g.layers[mm];
    if (scores.type != "MatMul" || scores.bottoms.size() != 2 || scores.bottoms[0] == scores.bottoms[1]) return false;
    m.erased.push_back(mm);
    int q_reader = mm, k_reader = mm;
    m.q = skip_scalar(g, scores.bottoms[0], q_reader, m);
    const int kt = skip_scalar(g, scores.bottoms[1], k_reader, m);
    if (!match_key(g, hints, kt, k_reader, scores.params.get_int(0, 0) == 1, m)) return false;
    if (hinted_rank(g, hints, m.q) < 2 || hinted_rank(g, hints, m.v) < 2) return false;
    if (!std::isfinite(m.scale) || m.scale == 0.f) return false; // SDPA reads scale 0 as 1/sqrt(E)
    // The softmax axis is the scores' last one.
    const int axis = softmax.params.get_int(0, 0);
    if (axis != -1) {
        int rank = std::max(hinted_rank(g, hints, m.q), hinted_rank(g, hints, kt));
        if (m.mask >= 0) rank = std::max(rank, hinted_rank(g, hints, m.mask));
        if (hinted_rank(g, hints, kt) < 0 || (m.mask >= 0 && hinted_rank(g, hints, m.mask) < 0) || axis != rank - 1)
            return false;
    }
    const int64_t lk = scores.params.get_int(0, 0) == 1 ? hinted_dim(g, hints, kt, 2) : hinted_dim(g, hints, kt, 1);
    return m.mask < 0 || mask_keeps_scores(g, hints, m, hinted_dim(g, hints, m.q, 2), lk);
}

void apply(Graph& g, const AttentionMatch& m, int last, OptimizeReport& report)
{
    report.applied.push_back("fused attention pattern ending at MatMul '" + g.layers[last].name + "' into SDPA");
    if (m.key_transpose >= 0) {
        g.layers[m.key_transpose].params.set_ints(1, m.key_perm);
        rebuild_layer(g, m.key_transpose, {});
    }
    ParamDict pd;
    pd.set_int(5, m.mask >= 0 ? 1 : 0);
    pd.set_float(6, m.scale);
    std::vector<int> bottoms = {m.q, m.k, m.v};
    if (m.mask >= 0) bottoms.push_back(m.mask);
    replace_layer(g, last, "SDPA", bottoms, pd, {});
    for (int li : m.erased) erase_layer(g.layers[li]);
    compact(g);
}

} // namespace

int fuse_attention_pattern(Graph& g, const ShapeHints& hints, OptimizeReport& report)
{
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        AttentionMatch m;
        int last = -1;
        if (!match_attention(g, hints, static_cast<int>(li), m, last)) continue;
        apply(g, m, last, report);
        ++n;
    }
    return n;
}

} // namespace kestrel
