// Op sequences exporters write for one operation, replaced by that layer:
//   LayerNorm  ReduceMean(x) -> Sub -> Pow 2 (or Mul by itself) -> ReduceMean
//              -> Add eps -> Sqrt -> Div [-> Mul gamma [-> Add beta]], over
//              the last axis (PyTorch's LayerNorm below opset 17)
//   GELU       x * 0.5 * (1 + erf(x / sqrt 2)) in its three multiplication orders
//   Swish      x * Sigmoid(x)
//   HardSwish  x * HardSigmoid(x), x * Clip(x + 3, 0, 6) / 6 (or * 1/6, either side)
// A pattern is rewritten only when it is exact: the constants match, each
// intermediate blob is read by the pattern alone and is no graph output, and
// (LayerNorm) the shape hints show the normalized axis is the last one and has
// gamma's size. The fused layer takes the place of the pattern's last layer,
// keeping its output blob.
#include <cmath>

#include "graph/pattern_match.h"

namespace kestrel {

namespace {

constexpr float kSqrt2 = 1.41421356f;
constexpr float kConstTolerance = 1e-6f; // exporters write the float nearest to the constant

// The layers of a matched pattern: all but `last` go, `last` becomes the fused layer.
struct Match {
    std::vector<int> erased;
    int last = -1;
};

void apply(Graph& g, const Match& m, const std::string& type, int input, const ParamDict& pd,
           const std::vector<Tensor>& weights, OptimizeReport& report)
{
    report.applied.push_back("fused " + type + " pattern ending at " + g.layers[m.last].type + " '" +
                             g.layers[m.last].name + "'");
    replace_layer(g, m.last, type, {input}, pd, weights);
    for (int li : m.erased) erase_layer(g.layers[li]);
    compact(g);
}

// A two-input Mul of `blob` and `x` (any broadcast rule: both have x's shape).
bool is_product_with(const Layer& l, int blob, int x)
{
    return is_two_input_binary(l, kBinMul, false) && other_input(l, blob) == x && blob != x;
}

// Scalar multiplication by 1/d, written as Div d or Mul 1/d.
bool is_scale_by_inverse(const Layer& l, float d)
{
    return is_scalar_binary(l, kBinDiv, d, kConstTolerance * d) || is_scalar_binary(l, kBinMul, 1.f / d, kConstTolerance);
}

// --- LayerNorm

// A ReduceMean over the last axis of a rank `rank` input, keeping dims.
bool is_mean_over_last_axis(const Layer& l, size_t rank)
{
    if (l.type != "Reduction" || l.bottoms.size() != 1 || l.tops.size() != 1) return false;
    const ParamDict& p = l.params;
    if (p.get_int(0, 0) != 3 || p.get_int(1, 1) != 0 || p.get_float(2, 1.f) != 1.f || p.get_int(4, 0) != 1) return false;
    if (p.get_int(5, 0) != 1) return false;
    const std::vector<int> axes = p.get_ints(3);
    return axes.size() == 1 && (axes[0] == -1 || axes[0] == static_cast<int>(rank) - 1);
}

// A constant of `size` values along the last axis (other dims 1, rank <= rank).
const Tensor* last_axis_vector(const Graph& g, int blob, int64_t size, size_t rank)
{
    const Tensor* c = constant_of(g, blob);
    if (c == nullptr || c->dtype() != DType::F32 || c->numel() != size || static_cast<size_t>(c->rank()) > rank || c->rank() == 0) return nullptr;
    return c->shape().back() == size ? c : nullptr;
}

// The affine tail after the normalized blob `n`: Mul gamma [-> Add beta].
void match_affine(const Graph& g, int n, int64_t size, size_t rank, Match& m, Tensor& gamma, Tensor& beta)
{
    const int mul = only_reader(g, n);
    if (mul < 0 || !is_two_input_binary(g.layers[mul], kBinMul, true)) return;
    const Tensor* gm = last_axis_vector(g, other_input(g.layers[mul], n), size, rank);
    if (gm == nullptr) return;
    gamma = gm->reshaped({size});
    beta = Tensor::zeros({size});
    m.erased.push_back(m.last);
    m.last = mul;
    const int add = only_reader(g, g.layers[mul].tops[0]);
    if (add < 0 || !is_two_input_binary(g.layers[add], kBinAdd, true)) return;
    const Tensor* bt = last_axis_vector(g, other_input(g.layers[add], g.layers[mul].tops[0]), size, rank);
    if (bt == nullptr) return;
    beta = bt->reshaped({size});
    m.erased.push_back(m.last);
    m.last = add;
}

// Matches from the first ReduceMean (layer `r1`); fills the match, epsilon and input.
bool match_layer_norm(const Graph& g, const ShapeHints& hints, int r1, Match& m, float& eps, int& x, Shape& shape)
{
    const Layer& mean = g.layers[r1];
    if (mean.type != "Reduction" || mean.bottoms.size() != 1) return false;
    x = mean.bottoms[0];
    const Shape* hint = hint_of(g, hints, x);
    if (hint == nullptr || hint->empty() || hint->size() > 5 || hint->back() <= 0) return false;
    shape = *hint;
    if (!is_mean_over_last_axis(mean, shape.size())) return false;
    const int sub = only_reader(g, mean.tops[0]);
    if (sub < 0 || !is_two_input_binary(g.layers[sub], kBinSub, true) || g.layers[sub].bottoms[0] != x) return false;
    const int d = g.layers[sub].tops[0];
    // d feeds the square and the division, nothing else.
    int square = -1, div = -1;
    for (int c : g.blobs[d].consumers) {
        const Layer& l = g.layers[c];
        if (is_scalar_binary(l, kBinPow, 2.f) || (is_two_input_binary(l, kBinMul, false) && l.bottoms[0] == d && l.bottoms[1] == d))
            square = c;
        else if (is_two_input_binary(l, kBinDiv, true) && l.bottoms[0] == d)
            div = c;
    }
    if (square < 0 || div < 0 || !read_only_by(g, d, {square, div})) return false;
    const int var = only_reader(g, g.layers[square].tops[0]);
    if (var < 0 || !is_mean_over_last_axis(g.layers[var], shape.size())) return false;
    const int add_eps = only_reader(g, g.layers[var].tops[0]);
    if (add_eps < 0 || !scalar_binary(g.layers[add_eps], kBinAdd, eps) || !std::isfinite(eps) || eps < 0.f) return false;
    const int sqrt = only_reader(g, g.layers[add_eps].tops[0]);
    if (sqrt < 0 || !is_unary(g.layers[sqrt], 5, 5)) return false;
    if (only_reader(g, g.layers[sqrt].tops[0]) != div || g.layers[div].bottoms[1] != g.layers[sqrt].tops[0]) return false;
    m.erased = {r1, sub, square, var, add_eps, sqrt};
    m.last = div;
    return true;
}

// --- GELU

// c = 1 + erf(x / sqrt 2), from the Erf layer `erf`; fills x and the layers.
bool match_one_plus_erf(const Graph& g, int erf, Match& m, int& x)
{
    if (!is_unary(g.layers[erf], -1, 20)) return false; // our Unary: 20 = Erf
    const int scale = producer_index(g, g.layers[erf].bottoms[0]);
    if (scale < 0 || !is_scale_by_inverse(g.layers[scale], kSqrt2) || only_reader(g, g.layers[scale].tops[0]) != erf)
        return false;
    x = g.layers[scale].bottoms[0];
    const int plus_one = only_reader(g, g.layers[erf].tops[0]);
    if (plus_one < 0 || !is_scalar_binary(g.layers[plus_one], kBinAdd, 1.f)) return false;
    m.erased = {scale, erf};
    m.last = plus_one;
    return true;
}

// The rest: (x * c) * 0.5, (x * 0.5) * c or x * (c * 0.5).
bool match_gelu_product(const Graph& g, Match& m, int x)
{
    const int c = g.layers[m.last].tops[0];
    const int next = only_reader(g, c);
    if (next < 0) return false;
    const Layer& l = g.layers[next];
    if (is_product_with(l, c, x)) { // (x * c) * 0.5
        const int half = only_reader(g, l.tops[0]);
        if (half < 0 || !is_scalar_binary(g.layers[half], kBinMul, 0.5f)) return false;
        m.erased.insert(m.erased.end(), {m.last, next});
        m.last = half;
        return true;
    }
    if (is_two_input_binary(l, kBinMul, false)) { // (x * 0.5) * c
        const int h = other_input(l, c);
        const int half = producer_index(g, h);
        if (h == c || half < 0 || !is_scalar_binary(g.layers[half], kBinMul, 0.5f) || g.layers[half].bottoms[0] != x ||
            only_reader(g, h) != next)
            return false;
        m.erased.insert(m.erased.end(), {m.last, half});
        m.last = next;
        return true;
    }
    if (is_scalar_binary(l, kBinMul, 0.5f)) { // x * (c * 0.5)
        const int product = only_reader(g, l.tops[0]);
        if (product < 0 || !is_product_with(g.layers[product], l.tops[0], x)) return false;
        m.erased.insert(m.erased.end(), {m.last, next});
        m.last = product;
        return true;
    }
    return false;
}

// --- HardSwish

// k = Clip(x + 3, 0, 6) from the Clip layer `clip`.
bool match_relu6_of_x_plus_3(const Graph& g, int clip, Match& m, int& x)
{
    const Layer& l = g.layers[clip];
    if (l.type != "Clip" || l.bottoms.size() != 1 || l.params.get_float(0, 0.f) != 0.f || l.params.get_float(1, 0.f) != 6.f)
        return false;
    const int plus3 = producer_index(g, l.bottoms[0]);
    if (plus3 < 0 || !is_scalar_binary(g.layers[plus3], kBinAdd, 3.f) || only_reader(g, l.bottoms[0]) != clip) return false;
    x = g.layers[plus3].bottoms[0];
    m.erased = {plus3};
    m.last = clip;
    return true;
}

// The rest: (x * k) / 6 or x * (k / 6).
bool match_hard_swish_product(const Graph& g, Match& m, int x)
{
    const int k = g.layers[m.last].tops[0];
    const int next = only_reader(g, k);
    if (next < 0) return false;
    const Layer& l = g.layers[next];
    int final_layer = -1;
    if (is_product_with(l, k, x)) {
        final_layer = only_reader(g, l.tops[0]);
        if (final_layer < 0 || !is_scale_by_inverse(g.layers[final_layer], 6.f)) return false;
    } else if (is_scale_by_inverse(l, 6.f)) {
        final_layer = only_reader(g, l.tops[0]);
        if (final_layer < 0 || !is_product_with(g.layers[final_layer], l.tops[0], x)) return false;
    } else {
        return false;
    }
    m.erased.insert(m.erased.end(), {m.last, next});
    m.last = final_layer;
    return true;
}

ParamDict hard_swish_params(float alpha, float beta)
{
    ParamDict pd;
    pd.set_float(0, alpha);
    pd.set_float(1, beta);
    return pd;
}

} // namespace

int fuse_layer_norm_pattern(Graph& g, const ShapeHints& hints, OptimizeReport& report)
{
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        Match m;
        float eps = 0.f;
        int x = -1;
        Shape shape;
        if (!match_layer_norm(g, hints, static_cast<int>(li), m, eps, x, shape)) continue;
        const int64_t size = shape.back();
        Tensor gamma, beta;
        match_affine(g, g.layers[m.last].tops[0], size, shape.size(), m, gamma, beta);
        ParamDict pd;
        pd.set_int(0, static_cast<int>(size));
        pd.set_float(1, eps);
        pd.set_int(2, gamma.defined() ? 1 : 0);
        if (shape.size() >= 2) pd.set_int(31, kFeatmaskBatched); // per sample: rows (or the vector) of `size`
        std::vector<Tensor> weights;
        if (gamma.defined()) weights = {gamma, beta};
        apply(g, m, "LayerNorm", x, pd, weights, report);
        ++n;
    }
    return n;
}

int fuse_gelu_pattern(Graph& g, OptimizeReport& report)
{
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        Match m;
        int x = -1;
        if (!match_one_plus_erf(g, static_cast<int>(li), m, x) || !match_gelu_product(g, m, x)) continue;
        apply(g, m, "GELU", x, ParamDict(), {}, report);
        ++n;
    }
    return n;
}

int fuse_swish_pattern(Graph& g, OptimizeReport& report)
{
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        const Layer& sigmoid = g.layers[li];
        if (sigmoid.type != "Sigmoid" || sigmoid.bottoms.size() != 1 || sigmoid.tops.size() != 1) continue;
        const int x = sigmoid.bottoms[0];
        const int mul = only_reader(g, sigmoid.tops[0]);
        if (mul < 0 || !is_product_with(g.layers[mul], sigmoid.tops[0], x)) continue;
        apply(g, Match{{static_cast<int>(li)}, mul}, "Swish", x, ParamDict(), {}, report);
        ++n;
    }
    return n;
}

int fuse_hard_swish_pattern(Graph& g, OptimizeReport& report)
{
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        const Layer& l = g.layers[li];
        Match m;
        int x = -1;
        if (l.type == "HardSigmoid" && l.bottoms.size() == 1 && l.tops.size() == 1) {
            // x * clamp(alpha x + beta, 0, 1) is HardSwish for any alpha > 0.
            const float alpha = l.params.get_float(0, 0.2f), beta = l.params.get_float(1, 0.5f);
            x = l.bottoms[0];
            const int mul = only_reader(g, l.tops[0]);
            if (!(alpha > 0.f) || mul < 0 || !is_product_with(g.layers[mul], l.tops[0], x)) continue;
            apply(g, Match{{static_cast<int>(li)}, mul}, "HardSwish", x, hard_swish_params(alpha, beta), {}, report);
            ++n;
        } else if (match_relu6_of_x_plus_3(g, static_cast<int>(li), m, x) && match_hard_swish_product(g, m, x)) {
            apply(g, m, "HardSwish", x, hard_swish_params(1.f / 6.f, 0.5f), {}, report);
            ++n;
        }
    }
    return n;
}

} // namespace kestrel
