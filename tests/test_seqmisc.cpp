// Recurrent layers (RNN, GRU, LSTM in their ONNX form), NonMaxSuppression, Quantize/Dequantize in their ONNX form
// (QuantizeLinear/DequantizeLinear), DynamicQuantizeLinear, Einsum, GridSample and RoiAlign (ONNX semantics). Expectations
// come from naive references written here from the ONNX operator spec (in
// double precision, one formula at a time) or from values worked out by hand;
// never from the layers' own code.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kestrel/kestrel.h"
#include "layer_test_util.h"
#ifdef KESTREL_HAVE_ONNX
#include "kestrel/onnx.h"
#include "onnx/onnx_pb.h"
#endif

using namespace kestrel;
using namespace kestrel::layer_test;

namespace {

// ---- helpers ------------------------------------------------------------------

Tensor empty_input() { return Tensor({0}, DType::I64); }

Tensor random_f32(const Shape& s, std::mt19937& rng, float lo = -1.f, float hi = 1.f)
{
    std::uniform_real_distribution<float> d(lo, hi);
    Tensor t(s, DType::F32);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
    return t;
}

::testing::AssertionResult close(const Tensor& got, const std::vector<double>& want, const Shape& shape, double tol = 1e-4)
{
    if (got.dtype() != DType::F32) return ::testing::AssertionFailure() << "dtype " << dtype_name(got.dtype());
    if (got.shape() != shape)
        return ::testing::AssertionFailure() << "shape " << shape_str(got.shape()) << " vs " << shape_str(shape);
    for (int64_t i = 0; i < got.numel(); ++i) {
        const double g = got.data<float>()[i], w = want[static_cast<size_t>(i)];
        if (!(std::fabs(g - w) <= tol * (1 + std::fabs(w))))
            return ::testing::AssertionFailure() << "element " << i << ": " << g << " vs " << w;
    }
    return ::testing::AssertionSuccess();
}

// ---- recurrent layers ------------------------------------------------------------

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// One configuration of a recurrent net and its reference result.
struct RecurrentCase {
    std::string type = "LSTM"; // RNN, GRU, LSTM
    int64_t seq = 3, batch = 2, input = 3, hidden = 4;
    int direction = 0, layout = 0;
    bool bias = false, lens = false, init = false, peep = false, lbr = false;
    float clip = 0.f;
};

int gates_of(const std::string& type) { return type == "RNN" ? 1 : type == "GRU" ? 3 : 4; }

struct RecurrentData {
    Tensor x, w, r, b, seq_lens, h0, c0, p;
};

RecurrentData make_data(const RecurrentCase& c, unsigned seed)
{
    std::mt19937 rng(seed);
    const int64_t dirs = c.direction == 2 ? 2 : 1, g = gates_of(c.type);
    RecurrentData d;
    d.x = random_f32(c.layout == 0 ? Shape{c.seq, c.batch, c.input} : Shape{c.batch, c.seq, c.input}, rng, -2, 2);
    d.w = random_f32({dirs, g * c.hidden, c.input}, rng);
    d.r = random_f32({dirs, g * c.hidden, c.hidden}, rng);
    d.b = random_f32({dirs, 2 * g * c.hidden}, rng);
    std::vector<int64_t> lens;
    for (int64_t b = 0; b < c.batch; ++b) lens.push_back(std::max<int64_t>(0, c.seq - b));
    d.seq_lens = i64({c.batch}, lens);
    const Shape state = c.layout == 0 ? Shape{dirs, c.batch, c.hidden} : Shape{c.batch, dirs, c.hidden};
    d.h0 = random_f32(state, rng);
    d.c0 = random_f32(state, rng);
    d.p = random_f32({dirs, 3 * c.hidden}, rng);
    return d;
}

// The ONNX equations, evaluated in double with (time, dir, batch, hidden)
// indexing; outputs converted to the layout at the end.
struct RecurrentResult {
    std::vector<double> y, yh, yc;
};

RecurrentResult reference(const RecurrentCase& c, const RecurrentData& d)
{
    const int64_t dirs = c.direction == 2 ? 2 : 1, H = c.hidden, S = c.seq, B = c.batch, I = c.input;
    auto X = [&](int64_t t, int64_t b, int64_t k) {
        return d.x.data<float>()[c.layout == 0 ? (t * B + b) * I + k : (b * S + t) * I + k];
    };
    auto state_at = [&](const Tensor& s, int64_t dir, int64_t b, int64_t j) {
        return static_cast<double>(s.data<float>()[(c.layout == 0 ? dir * B + b : b * dirs + dir) * H + j]);
    };
    auto clipv = [&](double v) { return c.clip > 0 ? std::min<double>(c.clip, std::max<double>(-c.clip, v)) : v; };
    std::vector<double> Y(static_cast<size_t>(S * dirs * B * H), 0.0), YH(static_cast<size_t>(dirs * B * H)), YC(YH.size());
    for (int64_t dir = 0; dir < dirs; ++dir) {
        const float* W = d.w.data<float>() + dir * gates_of(c.type) * H * I;
        const float* R = d.r.data<float>() + dir * gates_of(c.type) * H * H;
        const float* Bs = d.b.data<float>() + dir * 2 * gates_of(c.type) * H;
        const float* P = d.p.data<float>() + dir * 3 * H;
        // Row q of gate block `gate`: W x + R v + Wb + Rb (biases only when present).
        auto wx = [&](int gate, int64_t j, int64_t t, int64_t b) {
            double s = c.bias ? Bs[gate * H + j] : 0.0;
            for (int64_t k = 0; k < I; ++k) s += W[(gate * H + j) * I + k] * X(t, b, k);
            return s;
        };
        auto rh = [&](int gate, int64_t j, const std::vector<double>& v) {
            double s = c.bias ? Bs[(gates_of(c.type) + gate) * H + j] : 0.0;
            for (int64_t k = 0; k < H; ++k) s += R[(gate * H + j) * H + k] * v[static_cast<size_t>(k)];
            return s;
        };
        for (int64_t b = 0; b < B; ++b) {
            std::vector<double> h(static_cast<size_t>(H)), cs(static_cast<size_t>(H));
            for (int64_t j = 0; j < H; ++j) {
                h[j] = c.init ? state_at(d.h0, dir, b, j) : 0.0;
                cs[j] = c.init && c.type == "LSTM" ? state_at(d.c0, dir, b, j) : 0.0;
            }
            const int64_t len = c.lens ? d.seq_lens.data<int64_t>()[b] : S;
            const bool reverse = c.direction == 1 || dir == 1;
            for (int64_t step = 0; step < len; ++step) {
                const int64_t t = reverse ? len - 1 - step : step;
                std::vector<double> nh(static_cast<size_t>(H)), nc(static_cast<size_t>(H));
                for (int64_t j = 0; j < H; ++j) {
                    if (c.type == "RNN") {
                        nh[j] = std::tanh(clipv(wx(0, j, t, b) + rh(0, j, h)));
                    } else if (c.type == "GRU") {
                        const double z = sigmoid(clipv(wx(0, j, t, b) + rh(0, j, h)));
                        std::vector<double> rv(static_cast<size_t>(H));
                        for (int64_t k = 0; k < H; ++k) rv[k] = sigmoid(clipv(wx(1, k, t, b) + rh(1, k, h))) * h[k];
                        const double r = sigmoid(clipv(wx(1, j, t, b) + rh(1, j, h)));
                        const double pre = c.lbr ? wx(2, j, t, b) + r * rh(2, j, h) : wx(2, j, t, b) + rh(2, j, rv);
                        nh[j] = (1 - z) * std::tanh(clipv(pre)) + z * h[j];
                    } else {
                        const double pi = c.peep ? P[j] : 0, po = c.peep ? P[H + j] : 0, pf = c.peep ? P[2 * H + j] : 0;
                        const double ig = sigmoid(clipv(wx(0, j, t, b) + rh(0, j, h) + pi * cs[j]));
                        const double fg = sigmoid(clipv(wx(2, j, t, b) + rh(2, j, h) + pf * cs[j]));
                        const double cc = std::tanh(clipv(wx(3, j, t, b) + rh(3, j, h)));
                        nc[j] = fg * cs[j] + ig * cc;
                        const double og = sigmoid(clipv(wx(1, j, t, b) + rh(1, j, h) + po * nc[j]));
                        nh[j] = og * std::tanh(nc[j]);
                    }
                }
                h = nh;
                if (c.type == "LSTM") cs = nc;
                for (int64_t j = 0; j < H; ++j) Y[static_cast<size_t>(((t * dirs + dir) * B + b) * H + j)] = h[j];
            }
            for (int64_t j = 0; j < H; ++j) {
                YH[static_cast<size_t>((dir * B + b) * H + j)] = h[j];
                YC[static_cast<size_t>((dir * B + b) * H + j)] = cs[j];
            }
        }
    }
    if (c.layout == 0) return {Y, YH, YC};
    RecurrentResult out{std::vector<double>(Y.size()), std::vector<double>(YH.size()), std::vector<double>(YC.size())};
    for (int64_t t = 0; t < S; ++t)
        for (int64_t dir = 0; dir < dirs; ++dir)
            for (int64_t b = 0; b < B; ++b)
                for (int64_t j = 0; j < H; ++j) {
                    out.y[static_cast<size_t>(((b * S + t) * dirs + dir) * H + j)] = Y[static_cast<size_t>(((t * dirs + dir) * B + b) * H + j)];
                    if (t == 0) {
                        out.yh[static_cast<size_t>((b * dirs + dir) * H + j)] = YH[static_cast<size_t>((dir * B + b) * H + j)];
                        out.yc[static_cast<size_t>((b * dirs + dir) * H + j)] = YC[static_cast<size_t>((dir * B + b) * H + j)];
                    }
                }
    return out;
}

void check_recurrent(const RecurrentCase& c, unsigned seed, int threads = 1)
{
    const RecurrentData d = make_data(c, seed);
    const bool lstm = c.type == "LSTM";
    // W and R as constants (initializers), the rest fed at run time.
    std::vector<In> ins = {d.x, C(d.w), C(d.r)};
    const bool any_optional = c.bias || c.lens || c.init || c.peep;
    if (any_optional) {
        ins.push_back(c.bias ? d.b : empty_input());
        ins.push_back(c.lens ? d.seq_lens : empty_input());
        ins.push_back(c.init ? d.h0 : empty_input());
        if (lstm) {
            ins.push_back(c.init ? d.c0 : empty_input());
            ins.push_back(c.peep ? d.p : empty_input());
        }
    }
    ParamDict pd = P({{20, 1}, {21, static_cast<int>(c.hidden)}, {22, c.direction}, {23, c.layout}, {25, c.lbr ? 1 : 0}});
    if (c.clip > 0) pd.set_float(24, c.clip);
    const int outs = lstm ? 3 : 2;
    const std::vector<Tensor> got = run_layer(c.type, pd, ins, outs, {}, threads);
    const RecurrentResult want = reference(c, d);
    const int64_t dirs = c.direction == 2 ? 2 : 1;
    const Shape ys = c.layout == 0 ? Shape{c.seq, dirs, c.batch, c.hidden} : Shape{c.batch, c.seq, dirs, c.hidden};
    const Shape hs = c.layout == 0 ? Shape{dirs, c.batch, c.hidden} : Shape{c.batch, dirs, c.hidden};
    const std::string what = c.type + " dir " + std::to_string(c.direction) + " layout " + std::to_string(c.layout);
    EXPECT_TRUE(close(got[0], want.y, ys)) << what;
    EXPECT_TRUE(close(got[1], want.yh, hs)) << what;
    if (lstm) {
        EXPECT_TRUE(close(got[2], want.yc, hs)) << what;
    }
}

TEST(SeqMiscRecurrent, AllCellsDirectionsAndLayoutsMatchTheEquations)
{
    unsigned seed = 1;
    for (const std::string type : {"RNN", "GRU", "LSTM"})
        for (int direction = 0; direction <= 2; ++direction)
            for (int layout = 0; layout <= 1; ++layout) {
                RecurrentCase c;
                c.type = type;
                c.direction = direction;
                c.layout = layout;
                check_recurrent(c, seed++);
                c.bias = c.init = true;
                check_recurrent(c, seed++);
            }
}

TEST(SeqMiscRecurrent, SequenceLengthsPeepholesLinearBeforeResetAndClip)
{
    unsigned seed = 100;
    for (const std::string type : {"RNN", "GRU", "LSTM"})
        for (int direction = 0; direction <= 2; ++direction) {
            RecurrentCase c;
            c.type = type;
            c.direction = direction;
            c.seq = 4;
            c.batch = 5; // lengths 4, 3, 2, 1, 0: the tail of Y is zero, Y_h the last valid step
            c.bias = c.lens = c.init = true;
            c.peep = type == "LSTM";
            c.lbr = type == "GRU";
            check_recurrent(c, seed++, 2);
            c.clip = 0.3f;
            c.lbr = false;
            c.layout = 1;
            check_recurrent(c, seed++);
        }
}

TEST(SeqMiscRecurrent, ActivationParamsApplyPerGate)
{
    // RNN with Affine(alpha 2, beta 0.5): h_t = 2 * (W x + R h) + 0.5, worked by hand.
    ParamDict pd = P({{20, 1}, {21, 1}});
    pd.set_ints(26, {3});
    pd.set_floats(27, {2.f});
    pd.set_floats(28, {0.5f});
    const Tensor x = f32({2, 1, 1}, {1.f, -1.f}), w = f32({1, 1, 1}, {3.f}), r = f32({1, 1, 1}, {0.5f});
    const std::vector<Tensor> out = run_layer("RNN", pd, {x, w, r}, 2);
    // h1 = 2*(3*1 + 0) + 0.5 = 6.5; h2 = 2*(3*-1 + 0.5*6.5) + 0.5 = 1
    EXPECT_EQ(values<float>(out[0]), std::vector<float>({6.5f, 1.f}));
    EXPECT_EQ(values<float>(out[1]), std::vector<float>({1.f}));
}

TEST(SeqMiscRecurrent, BadShapesAndParamsAreErrors)
{
    RecurrentCase c;
    const RecurrentData d = make_data(c, 5);
    EXPECT_TRUE(contains(error_of([&] { run_layer("LSTM", P({{20, 1}}), {d.x, d.r, d.r}, 3); }), "W (input 1) must have shape"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("LSTM", P({{20, 1}, {21, 5}}), {d.x, d.w, d.r}, 3); }), "must have shape"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("LSTM", P({{20, 1}, {22, 3}}), {d.x, d.w, d.r}, 3); }), "direction"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("LSTM", P({{20, 1}}), {d.x, d.w, d.r, d.b.reshaped({2, 16})}, 3); }), "B (input 3)"));
    const Tensor bad_lens = i64({2}, {3, 4});
    EXPECT_TRUE(contains(error_of([&] { run_layer("LSTM", P({{20, 1}}), {d.x, d.w, d.r, empty_input(), bad_lens}, 3); }),
                         "sequence_lens (input 4) value 4"));
    ParamDict acts = P({{20, 1}});
    acts.set_ints(26, {0, 1});
    EXPECT_TRUE(contains(error_of([&] { run_layer("LSTM", acts, {d.x, d.w, d.r}, 3); }), "activations (param 26)"));
    acts.set_ints(26, {0, 1, 99});
    EXPECT_TRUE(contains(error_of([&] { run_layer("LSTM", acts, {d.x, d.w, d.r}, 3); }), "activation code 99"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("RNN", P({{20, 1}}), {d.x, d.w, d.r}, 3); }), "outputs"));
}

// ---- NonMaxSuppression ------------------------------------------------------------------

// Brute force: repeatedly take the best remaining box (highest score, then
// lowest index) and strike every remaining box overlapping it too much.
std::vector<int64_t> nms_reference(const std::vector<std::array<float, 4>>& corners, const std::vector<float>& scores,
                                   int64_t max_out, float iou, bool filter, float min_score)
{
    auto area = [](const std::array<float, 4>& b) { return (b[2] - b[0]) * (b[3] - b[1]); };
    auto overlap = [&](const std::array<float, 4>& a, const std::array<float, 4>& b) {
        const float ih = std::min(a[2], b[2]) - std::max(a[0], b[0]), iw = std::min(a[3], b[3]) - std::max(a[1], b[1]);
        if (ih <= 0 || iw <= 0 || area(a) <= 0 || area(b) <= 0) return 0.f;
        return ih * iw / (area(a) + area(b) - ih * iw);
    };
    std::vector<bool> alive(scores.size());
    for (size_t i = 0; i < scores.size(); ++i) alive[i] = !filter || scores[i] > min_score;
    std::vector<int64_t> picked;
    while (static_cast<int64_t>(picked.size()) < max_out) {
        int best = -1;
        for (size_t i = 0; i < scores.size(); ++i)
            if (alive[i] && (best < 0 || scores[i] > scores[static_cast<size_t>(best)])) best = static_cast<int>(i);
        if (best < 0) break;
        picked.push_back(best);
        alive[static_cast<size_t>(best)] = false;
        for (size_t i = 0; i < scores.size(); ++i)
            if (alive[i] && overlap(corners[i], corners[static_cast<size_t>(best)]) > iou) alive[i] = false;
    }
    return picked;
}

TEST(SeqMiscNms, MatchesBruteForceOverBatchesClassesAndThresholds)
{
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> pos(0.f, 10.f), size(0.5f, 4.f);
    std::uniform_int_distribution<int> level(0, 6); // few distinct scores: ties happen
    const int64_t B = 2, C = 3, N = 12;
    Tensor boxes({B, N, 4}), centers({B, N, 4}), scores({B, C, N});
    std::vector<std::vector<std::array<float, 4>>> corners(B);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < N; ++i) {
            const float y = pos(rng), x = pos(rng), h = size(rng), w = size(rng);
            corners[b].push_back({y, x, y + h, x + w});
            float* p = boxes.data<float>() + (b * N + i) * 4;
            // Corners given in either order: [y2, x1, y1, x2] for odd boxes.
            if (i % 2) p[0] = y + h, p[1] = x, p[2] = y, p[3] = x + w;
            else p[0] = y, p[1] = x, p[2] = y + h, p[3] = x + w;
            float* q = centers.data<float>() + (b * N + i) * 4;
            q[0] = x + w / 2, q[1] = y + h / 2, q[2] = w, q[3] = h;
        }
    for (int64_t i = 0; i < scores.numel(); ++i) scores.data<float>()[i] = static_cast<float>(level(rng)) / 6.f;
    for (const float iou : {0.f, 0.2f, 0.5f})
        for (const int64_t max_out : {1, 3, 100})
            for (const bool filter : {false, true}) {
                const float min_score = 0.4f;
                std::vector<int64_t> want;
                for (int64_t b = 0; b < B; ++b)
                    for (int64_t c = 0; c < C; ++c) {
                        const std::vector<float> s(scores.data<float>() + (b * C + c) * N, scores.data<float>() + (b * C + c + 1) * N);
                        for (int64_t k : nms_reference(corners[b], s, max_out, iou, filter, min_score))
                            want.insert(want.end(), {b, c, k});
                    }
                std::vector<In> ins = {boxes, scores, i64({1}, {max_out}), f32({1}, {iou})};
                if (filter) ins.push_back(f32({1}, {min_score}));
                const Tensor got = run_layer("NonMaxSuppression", {}, ins)[0];
                EXPECT_EQ(got.shape(), Shape({static_cast<int64_t>(want.size() / 3), 3}));
                EXPECT_EQ(values<int64_t>(got), want) << "iou " << iou << " max " << max_out << " filter " << filter;
                ins[0] = centers;
                EXPECT_EQ(values<int64_t>(run_layer("NonMaxSuppression", P({{0, 1}}), ins)[0]), want) << "center format";
            }
}

TEST(SeqMiscNms, DefaultsAndErrors)
{
    const Tensor boxes = f32({1, 2, 4}, {0, 0, 1, 1, 0, 0, 1, 1}), scores = f32({1, 1, 2}, {0.5f, 0.9f});
    // Without max_output_boxes_per_class nothing is selected.
    EXPECT_EQ(run_layer("NonMaxSuppression", {}, {boxes, scores})[0].shape(), Shape({0, 3}));
    // Identical boxes: the higher score survives; with iou_threshold absent (0) too.
    EXPECT_EQ(values<int64_t>(run_layer("NonMaxSuppression", {}, {boxes, scores, i64({1}, {5})})[0]),
              std::vector<int64_t>({0, 0, 1}));
    // A NaN score cannot be ranked: that box is never selected.
    EXPECT_EQ(values<int64_t>(run_layer("NonMaxSuppression", {}, {boxes, f32({1, 1, 2}, {std::nanf(""), 0.1f}), i64({1}, {5})})[0]),
              std::vector<int64_t>({0, 0, 1}));
    EXPECT_TRUE(contains(error_of([&] { run_layer("NonMaxSuppression", {}, {boxes, scores, i64({1}, {5}), f32({1}, {1.5f})}); }),
                         "iou_threshold"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("NonMaxSuppression", {}, {boxes, f32({1, 1, 3}, {0, 0, 0})}); }),
                         "scores (input 1)"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("NonMaxSuppression", P({{0, 2}}), {boxes, scores}); }),
                         "center_point_box"));
}

// ---- Quantize / Dequantize in ONNX's form (20=1), DynamicQuantizeLinear ------------------

// Round half to even, from floor: ties go to the even neighbour.
double round_half_even(double v)
{
    const double f = std::floor(v), frac = v - f;
    if (frac > 0.5) return f + 1;
    if (frac < 0.5) return f;
    return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

TEST(SeqMiscQuantize, PerTensorAndPerAxisWithSaturationAndTies)
{
    const Tensor x = f32({2, 3, 2}, {0.f, 1.f, 2.5f, 3.5f, -2.5f, 300.f, -300.f, 1.5f, 0.5f, -0.5f, 7.f, -7.f});
    const std::vector<float> scale = {1.f, 0.5f, 2.f};
    for (const DType t : {DType::U8, DType::I8}) {
        const bool u = t == DType::U8;
        const std::vector<int> zp = u ? std::vector<int>{0, 10, 128} : std::vector<int>{0, -3, 5};
        Tensor zpt({3}, t);
        for (int i = 0; i < 3; ++i) {
            if (u) zpt.data<uint8_t>()[i] = static_cast<uint8_t>(zp[static_cast<size_t>(i)]);
            else zpt.data<int8_t>()[i] = static_cast<int8_t>(zp[static_cast<size_t>(i)]);
        }
        const Tensor y = run_layer("Quantize", P({{20, 1}, {21, 1}}), {x, f32({3}, scale), zpt})[0];
        ASSERT_EQ(y.dtype(), t);
        const double lo = u ? 0 : -128, hi = u ? 255 : 127;
        for (int64_t i = 0; i < x.numel(); ++i) {
            const size_t c = static_cast<size_t>((i / 2) % 3);
            const double want = std::clamp(round_half_even(x.data<float>()[i] / scale[c]) + zp[c], lo, hi);
            const double got = u ? y.data<uint8_t>()[i] : y.data<int8_t>()[i];
            EXPECT_EQ(got, want) << "element " << i << " " << dtype_name(t);
        }
        // Dequantize back: (q - zp) * scale.
        const Tensor back = run_layer("Dequantize", P({{20, 1}, {21, -2}}), {y, f32({3}, scale), zpt})[0];
        for (int64_t i = 0; i < x.numel(); ++i) {
            const size_t c = static_cast<size_t>((i / 2) % 3);
            const double q = u ? y.data<uint8_t>()[i] : y.data<int8_t>()[i];
            EXPECT_FLOAT_EQ(back.data<float>()[i], static_cast<float>((q - zp[c]) * scale[c]));
        }
    }
    // Per tensor, no zero point: uint8 by default.
    const Tensor y = run_layer("Quantize", P({{20, 1}}), {f32({4}, {0.5f, 1.5f, 2.5f, -1.f}), f32({}, {1.f})})[0];
    EXPECT_EQ(y.dtype(), DType::U8);
    EXPECT_EQ(values<uint8_t>(y), std::vector<uint8_t>({0, 2, 2, 0}));
    const Tensor d = run_layer("Dequantize", P({{20, 1}}), {make<int32_t>({2}, DType::I32, {-7, 9}), f32({}, {0.25f})})[0];
    EXPECT_EQ(values<float>(d), std::vector<float>({-1.75f, 2.25f}));
}

TEST(SeqMiscQuantize, DynamicQuantizeLinearMatchesTheFormula)
{
    for (const std::vector<float>& xv : {std::vector<float>{0.f, 2.f, -3.f, -2.5f, 1.34f, 0.5f},
                                         std::vector<float>{1.f, 2.f, 3.f}, std::vector<float>{-1.f, -2.f, -5.f}}) {
        const Tensor x = f32({static_cast<int64_t>(xv.size())}, xv);
        const std::vector<Tensor> out = run_layer("DynamicQuantizeLinear", {}, {x}, 3);
        const double lo = std::min(0.f, *std::min_element(xv.begin(), xv.end()));
        const double hi = std::max(0.f, *std::max_element(xv.begin(), xv.end()));
        const float scale = static_cast<float>((hi - lo) / 255);
        const double zp = std::clamp(round_half_even(-lo / scale), 0.0, 255.0);
        EXPECT_FLOAT_EQ(out[1].data<float>()[0], scale);
        EXPECT_EQ(out[2].data<uint8_t>()[0], static_cast<uint8_t>(zp));
        for (size_t i = 0; i < xv.size(); ++i)
            EXPECT_EQ(out[0].data<uint8_t>()[i], std::clamp(round_half_even(xv[i] / scale) + zp, 0.0, 255.0)) << i;
    }
    // An all-zero x: scale 1 (ONNX Runtime 1.30's result; the formula would divide by zero).
    const std::vector<Tensor> zeros = run_layer("DynamicQuantizeLinear", {}, {f32({2}, {0.f, 0.f})}, 3);
    EXPECT_EQ(zeros[1].data<float>()[0], 1.f);
    EXPECT_EQ(zeros[2].data<uint8_t>()[0], 0);
    EXPECT_EQ(values<uint8_t>(zeros[0]), std::vector<uint8_t>({0, 0}));
}

TEST(SeqMiscQuantize, Errors)
{
    const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
    EXPECT_TRUE(contains(error_of([&] { run_layer("Quantize", P({{20, 1}}), {x, f32({2}, {1, 1})}); }), "per-axis scale"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("Quantize", P({{20, 1}, {21, 5}}), {x, f32({3}, {1, 1, 1})}); }), "axis"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("Quantize", P({{20, 1}}), {x, f32({3}, {1, 1, 1}), f32({3}, {0, 0, 0})}); }),
                         "zero_point"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("Dequantize", P({{20, 1}}), {x, f32({}, {1})}); }), "integer"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("Quantize", P({{20, 1}, {22, 0}}), {x, f32({}, {1})}); }), "param 22"));
}

// ---- Einsum --------------------------------------------------------------------------------

Tensor f64(const Shape& s, std::mt19937& rng)
{
    std::uniform_real_distribution<double> d(-1, 1);
    Tensor t(s, DType::F64);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<double>()[i] = d(rng);
    return t;
}

ParamDict equation(const std::string& e)
{
    ParamDict pd;
    pd.set_string(0, e);
    return pd;
}

void expect_doubles(const Tensor& got, const Shape& shape, const std::vector<double>& want, const std::string& what)
{
    ASSERT_EQ(got.shape(), shape) << what;
    ASSERT_EQ(got.dtype(), DType::F64) << what;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.data<double>()[i], want[i], 1e-12) << what << " element " << i;
}

TEST(SeqMiscEinsum, ExplicitEquationsMatchLoops)
{
    std::mt19937 rng(11);
    const Tensor a = f64({2, 3, 4}, rng), b = f64({2, 4, 5}, rng), m = f64({3, 3}, rng), v = f64({4}, rng);
    const double* A = a.data<double>();
    const double* Bv = b.data<double>();
    {   // batch matmul
        std::vector<double> want(2 * 3 * 5, 0.0);
        for (int n = 0; n < 2; ++n)
            for (int i = 0; i < 3; ++i)
                for (int k = 0; k < 5; ++k)
                    for (int j = 0; j < 4; ++j) want[(n * 3 + i) * 5 + k] += A[(n * 3 + i) * 4 + j] * Bv[(n * 4 + j) * 5 + k];
        expect_doubles(run_layer("Einsum", equation("bij,bjk->bik"), {a, b})[0], {2, 3, 5}, want, "bmm");
    }
    {   // transpose with a sum: "bij->jb"
        std::vector<double> want(4 * 2, 0.0);
        for (int n = 0; n < 2; ++n)
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 4; ++j) want[j * 2 + n] += A[(n * 3 + i) * 4 + j];
        expect_doubles(run_layer("Einsum", equation("bij->jb"), {a})[0], {4, 2}, want, "bij->jb");
    }
    {   // trace and diagonal (repeated label)
        const double* M = m.data<double>();
        expect_doubles(run_layer("Einsum", equation("ii->"), {m})[0], {}, {M[0] + M[4] + M[8]}, "trace");
        expect_doubles(run_layer("Einsum", equation("ii->i"), {m})[0], {3}, {M[0], M[4], M[8]}, "diagonal");
    }
    {   // three operands, outer product, ellipsis with broadcasting
        std::vector<double> want(2 * 3, 0.0);
        for (int n = 0; n < 2; ++n)
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 4; ++j) want[n * 3 + i] += A[(n * 3 + i) * 4 + j] * v.data<double>()[j] * 2.0;
        const Tensor two = make<double>({1}, DType::F64, {2.0});
        expect_doubles(run_layer("Einsum", equation("...ij,j,...->...i"), {a, v, two})[0], {2, 3}, want, "ellipsis");
    }
}

TEST(SeqMiscEinsum, ImplicitOutputIntegersAndErrors)
{
    // Implicit: letters used once, in ASCII order ("ba,cb" -> "ac").
    const Tensor x = make<int32_t>({2, 3}, DType::I32, {1, 2, 3, 4, 5, 6}); // x[b][a]
    const Tensor y = make<int32_t>({4, 2}, DType::I32, {1, 0, 0, 1, 1, 1, 2, -1}); // y[c][b]
    std::vector<int32_t> want(3 * 4, 0);
    for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 4; ++c)
            for (int b = 0; b < 2; ++b) want[a * 4 + c] += x.data<int32_t>()[b * 3 + a] * y.data<int32_t>()[c * 2 + b];
    const Tensor got = run_layer("Einsum", equation("ba,cb"), {x, y})[0];
    EXPECT_EQ(got.shape(), Shape({3, 4}));
    EXPECT_EQ(values<int32_t>(got), want);
    EXPECT_TRUE(contains(error_of([&] { run_layer("Einsum", equation("ij,jk->ik"), {x, x}); }), "has sizes 3 and 2"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("Einsum", equation("ij->k"), {x}); }), "in no input"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("Einsum", equation("i1->i"), {x}); }), "not a letter"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("Einsum", equation("ijk->i"), {x}); }), "rank 2"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("Einsum", equation("ij,jk->ik"), {x}); }), "2 input terms"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("Einsum", equation("ij->ii"), {x}); }), "repeats"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("Einsum", equation("...i->i"), {x}); }), "no '...'"));
}

// ---- GridSample --------------------------------------------------------------------------

// ONNX's codes (0-based), as ncnn's (1-based) params, in the ONNX form (20=1).
ParamDict grid_params(int mode, int padding, int align) { return P({{0, mode + 1}, {1, padding + 1}, {2, align}, {20, 1}}); }

// X (1, 1, 2, 3) = [[0, 1, 2], [3, 4, 5]] sampled at single grid points.
float sample_at(float gx, float gy, int mode, int padding, int align)
{
    const Tensor x = f32({1, 1, 2, 3}, {0, 1, 2, 3, 4, 5});
    return run_layer("GridSample", grid_params(mode, padding, align), {x, f32({1, 1, 1, 2}, {gx, gy})})[0].data<float>()[0];
}

TEST(SeqMiscGridSample, HandWorkedPoints)
{
    // align_corners=1: -1/1 are pixel centers. x = (gx+1)/2*(W-1), y = (gy+1)/2*(H-1).
    EXPECT_FLOAT_EQ(sample_at(-1, -1, 0, 0, 1), 0.f);
    EXPECT_FLOAT_EQ(sample_at(1, 1, 0, 0, 1), 5.f);
    EXPECT_FLOAT_EQ(sample_at(0, 0, 0, 0, 1), 2.5f);    // x = 1, y = 0.5: (1 + 4) / 2
    EXPECT_FLOAT_EQ(sample_at(-0.5f, 0, 0, 0, 1), 2.f); // x = 0.5, y = 0.5: (0+1+3+4)/4
    // align_corners=0: x = ((gx+1)*W - 1)/2; gx=-1 is x=-0.5, half outside: zeros padding halves the edge.
    EXPECT_FLOAT_EQ(sample_at(-1, -1, 0, 0, 0), 0.f * 0.25f);
    EXPECT_FLOAT_EQ(sample_at(1, 1, 0, 0, 0), 5.f * 0.25f);
    EXPECT_FLOAT_EQ(sample_at(1, 1, 0, 1, 0), 5.f); // border clamps the point to the corner pixel
    // Far outside: zeros 0, border clamps, reflection mirrors.
    EXPECT_FLOAT_EQ(sample_at(5, 0, 0, 0, 1), 0.f);
    EXPECT_FLOAT_EQ(sample_at(5, 0, 0, 1, 1), 3.5f);
    // Reflection, aligned: x = 3 over [0, 2] mirrors to 1; y = 0.5 -> (1 + 4) / 2.
    EXPECT_FLOAT_EQ(sample_at(2, 0, 0, 2, 1), 2.5f);
    // Reflection, not aligned: x = ((2+1)*3-1)/2 = 4 over [-0.5, 2.5] mirrors to 1.
    EXPECT_FLOAT_EQ(sample_at(2, 0, 0, 2, 0), 2.5f);
    // Nearest: ties to even. Aligned gx = -0.5 is x = 0.5 -> 0; gx = 0.5 is x = 1.5 -> 2; y = 0.5 -> 0.
    EXPECT_FLOAT_EQ(sample_at(-0.5f, 0, 1, 0, 1), 0.f);
    EXPECT_FLOAT_EQ(sample_at(0.5f, 0, 1, 0, 1), 2.f);
    EXPECT_FLOAT_EQ(sample_at(0.5f, 1, 1, 0, 1), 5.f);
}

// Keys' cubic convolution kernel, A = -0.75, in its textbook piecewise form.
double keys(double s)
{
    const double a = -0.75;
    s = std::fabs(s);
    if (s <= 1) return (a + 2) * s * s * s - (a + 3) * s * s + 1;
    if (s < 2) return a * s * s * s - 5 * a * s * s + 8 * a * s - 4 * a;
    return 0;
}

TEST(SeqMiscGridSample, BicubicInsideMatchesTheKernel)
{
    std::mt19937 rng(21);
    const Tensor x = random_f32({1, 2, 6, 7}, rng);
    // Aligned: px = (gx+1)*3, py = (gy+1)*2.5; points with all 16 taps inside
    // (px in [1, 5), py in [1, 4)), so padding plays no part.
    const std::vector<std::pair<double, double>> pts = {{2.2, 1.3}, {3.7, 2.9}, {1.05, 1.02}, {4.5, 3.2}};
    Tensor grid({1, 1, 4, 2});
    for (size_t k = 0; k < pts.size(); ++k) {
        grid.data<float>()[2 * k] = static_cast<float>(pts[k].first / 3 - 1);
        grid.data<float>()[2 * k + 1] = static_cast<float>(pts[k].second / 2.5 - 1);
    }
    std::vector<double> want;
    for (int c = 0; c < 2; ++c)
        for (size_t k = 0; k < pts.size(); ++k) {
            const double px = (grid.data<float>()[2 * k] + 1.0) * 3, py = (grid.data<float>()[2 * k + 1] + 1.0) * 2.5;
            double sum = 0;
            for (int yy = static_cast<int>(std::floor(py)) - 1; yy <= static_cast<int>(std::floor(py)) + 2; ++yy)
                for (int xx = static_cast<int>(std::floor(px)) - 1; xx <= static_cast<int>(std::floor(px)) + 2; ++xx)
                    sum += keys(px - xx) * keys(py - yy) * x.data<float>()[(c * 6 + yy) * 7 + xx];
            want.push_back(sum);
        }
    for (const int padding : {0, 1, 2})
        EXPECT_TRUE(close(run_layer("GridSample", grid_params(2, padding, 1), {x, grid})[0], want, {1, 2, 1, 4}))
            << "padding " << padding;
    // At the corner pixel center (aligned -1, -1) taps fall outside: zeros
    // padding drops them, border repeats the edge pixel, so a constant image
    // stays constant only with border.
    const Tensor ones = f32({1, 1, 2, 2}, {1, 1, 1, 1});
    const Tensor corner = f32({1, 1, 1, 2}, {-0.8f, -0.8f});
    EXPECT_NEAR(run_layer("GridSample", grid_params(2, 1, 1), {ones, corner})[0].data<float>()[0], 1.f, 1e-6);
    EXPECT_GT(std::fabs(run_layer("GridSample", grid_params(2, 0, 1), {ones, corner})[0].data<float>()[0] - 1.f), 1e-3);
}

TEST(SeqMiscGridSample, Errors)
{
    const Tensor x = f32({1, 1, 2, 3}, {0, 1, 2, 3, 4, 5});
    EXPECT_TRUE(contains(error_of([&] { run_layer("GridSample", {}, {x, f32({1, 1, 1, 4}, {0, 0, 0, 0})}); }), "grid (input 1)"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("GridSample", {}, {x.reshaped({2, 3}), f32({1, 1, 1, 2}, {0, 0})}); }),
                         "X (input 0)"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("GridSample", grid_params(3, 0, 0), {x, f32({1, 1, 1, 2}, {0, 0})}); }),
                         "sample_type"));
    // A NaN grid point reads no pixel: nearest gives 0, interpolation weights make NaN.
    EXPECT_EQ(sample_at(std::nanf(""), 0, 1, 2, 0), 0.f);
    EXPECT_TRUE(std::isnan(sample_at(std::nanf(""), 0, 0, 0, 1)));
    EXPECT_TRUE(std::isnan(sample_at(std::nanf(""), 0, 2, 2, 0)));
}

// ---- RoiAlign ---------------------------------------------------------------------------------

TEST(SeqMiscRoiAlign, AveragesOfLinearDataAreBinCenters)
{
    // Bilinear samples of linear data average to the value at the bin center
    // while every sample lies inside the image.
    const int64_t H = 10, W = 12;
    Tensor x({2, 2, H, W});
    auto value = [](int64_t n, int64_t c, double y, double xx) { return 0.5 * xx + 2.0 * y + 100.0 * c + 1000.0 * n; };
    for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < 2; ++c)
            for (int64_t y = 0; y < H; ++y)
                for (int64_t xx = 0; xx < W; ++xx)
                    x.data<float>()[((n * 2 + c) * H + y) * W + xx] = static_cast<float>(value(n, c, static_cast<double>(y), static_cast<double>(xx)));
    const Tensor rois = f32({2, 4}, {2.f, 1.f, 8.f, 7.f, 4.f, 4.f, 10.f, 7.f});
    const Tensor batch = i64({2}, {1, 0});
    for (const int half_pixel : {0, 1})
        for (const int ratio : {0, 2}) {
            ParamDict pd = P({{20, 1}, {21, 3}, {22, 2}, {23, ratio}, {26, half_pixel}});
            pd.set_float(24, 0.5f); // spatial_scale
            const Tensor y = run_layer("ROIAlign", pd, {x, rois, batch})[0];
            ASSERT_EQ(y.shape(), Shape({2, 2, 3, 2}));
            std::vector<double> want;
            for (int64_t r = 0; r < 2; ++r)
                for (int64_t c = 0; c < 2; ++c)
                    for (int ph = 0; ph < 3; ++ph)
                        for (int pw = 0; pw < 2; ++pw) {
                            const float* q = rois.data<float>() + r * 4;
                            const double off = half_pixel ? 0.5 : 0.0;
                            const double x1 = q[0] * 0.5 - off, y1 = q[1] * 0.5 - off;
                            const double rw = q[2] * 0.5 - off - x1, rh = q[3] * 0.5 - off - y1;
                            const double cy = y1 + (ph + 0.5) * rh / 3, cx = x1 + (pw + 0.5) * rw / 2;
                            want.push_back(value(batch.data<int64_t>()[r], c, cy, cx));
                        }
            EXPECT_TRUE(close(y, want, {2, 2, 3, 2})) << "half_pixel " << half_pixel << " ratio " << ratio;
        }
}

TEST(SeqMiscRoiAlign, MaxModeAndErrors)
{
    // One sample per bin at pixel centers: max mode gives the pixel itself
    // (weights 1, 0, 0, 0), avg the same.
    const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor rois = f32({1, 4}, {0.f, 0.f, 2.f, 2.f});
    const Tensor batch = i64({1}, {0});
    for (const int mode : {0, 1}) {
        const Tensor y = run_layer("ROIAlign", P({{20, 1}, {21, 2}, {22, 2}, {23, 1}, {25, mode}, {26, 1}}), {x, rois, batch})[0];
        EXPECT_EQ(values<float>(y), std::vector<float>({1, 2, 3, 4})) << "mode " << mode;
    }
    EXPECT_TRUE(contains(error_of([&] { run_layer("ROIAlign", P({{20, 1}}), {x, rois, i64({1}, {1})}); }), "batch index 1"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("ROIAlign", P({{20, 1}}), {x, f32({1, 3}, {0, 0, 1})}, 1); }), "expects 3"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("ROIAlign", P({{20, 1}}), {x, f32({1, 3}, {0, 0, 1}), batch}); }), "rois (input 1)"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("ROIAlign", P({{20, 1}}), {x, f32({1, 4}, {0, 0, std::nanf(""), 1}), batch}); }),
                         "not finite"));
    EXPECT_TRUE(contains(error_of([&] { run_layer("ROIAlign", P({{20, 1}, {21, 0}}), {x, rois, batch}); }), "output_height"));
}

// ---- converters -----------------------------------------------------------------------------

#ifdef KESTREL_HAVE_ONNX
void add_float_input(onnx::GraphProto* g, onnx::NodeProto* node, const std::string& name, const Shape& shape)
{
    node->add_input(name);
    onnx::ValueInfoProto* vi = g->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

void add_initializer(onnx::GraphProto* g, onnx::NodeProto* node, const std::string& name, const Tensor& t)
{
    node->add_input(name);
    onnx::TensorProto* init = g->add_initializer();
    init->set_name(name);
    init->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : t.shape()) init->add_dims(d);
    for (int64_t i = 0; i < t.numel(); ++i) init->add_float_data(t.data<float>()[i]);
}

void add_output(onnx::GraphProto* g, onnx::NodeProto* node, const std::string& name)
{
    node->add_output(name);
    if (name.empty()) return;
    onnx::ValueInfoProto* vi = g->add_output();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int k = 0; k < 3; ++k) tt->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(k)); // rank 3
}

TEST(SeqMiscConverters, LstmWithInitializerWeightsAndAGapInOptionalInputs)
{
    // X and initial_h/initial_c fed at run time; W, R, B initializers;
    // sequence_lens absent before initial_h; Y omitted (only Y_h, Y_c).
    RecurrentCase c;
    c.bias = c.init = true;
    c.direction = 2;
    const RecurrentData d = make_data(c, 77);
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(14);
    onnx::GraphProto* g = m.mutable_graph();
    g->set_name("g");
    onnx::NodeProto* node = g->add_node();
    node->set_op_type("LSTM");
    add_float_input(g, node, "X", d.x.shape());
    add_initializer(g, node, "W", d.w);
    add_initializer(g, node, "R", d.r);
    add_initializer(g, node, "B", d.b);
    node->add_input("");
    add_float_input(g, node, "h0", d.h0.shape());
    add_float_input(g, node, "c0", d.c0.shape());
    add_output(g, node, "");
    add_output(g, node, "Y_h");
    add_output(g, node, "Y_c");
    auto* a = node->add_attribute();
    a->set_name("direction");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("bidirectional");
    a = node->add_attribute();
    a->set_name("hidden_size");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(c.hidden);
    const std::vector<Tensor> out = run_model(m, {d.x, d.h0, d.c0});
    const RecurrentResult want = reference(c, d);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(close(out[0], want.yh, {2, c.batch, c.hidden}));
    EXPECT_TRUE(close(out[1], want.yc, {2, c.batch, c.hidden}));
    // Unknown activation names and input_forget are conversion errors.
    a = node->add_attribute();
    a->set_name("input_forget");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(1);
    EXPECT_TRUE(contains(error_of([&] { run_model(m, {d.x, d.h0, d.c0}); }), "input_forget"));
}
#endif

} // namespace

namespace {

TEST(SeqMiscEinsum, NcnnWritesTheEquationAsCharacterCodes)
{
    std::mt19937 rng(41);
    const Tensor a = random_f32({2, 3}, rng), b = random_f32({3, 4}, rng);
    const std::string text = "ij,jk->ik";
    ParamDict codes;
    codes.set_ints(0, std::vector<int>(text.begin(), text.end()));
    const Tensor want = run_layer("Einsum", equation(text), {a, b})[0];
    const Tensor got = run_layer("Einsum", codes, {a, b})[0];
    EXPECT_EQ(values<float>(got), values<float>(want));
}

TEST(SeqMiscGridSample, NcnnBlobsWithoutBatchAreABatchOfOne)
{
    std::mt19937 rng(43);
    const Tensor x = random_f32({1, 2, 4, 5}, rng), grid = random_f32({1, 3, 3, 2}, rng, -1.1f, 1.1f);
    const Tensor batched = run_layer("GridSample", grid_params(0, 1, 0), {x, grid})[0];
    const Tensor single = run_layer("GridSample", grid_params(0, 1, 0), {x.reshaped({2, 4, 5}), grid.reshaped({3, 3, 2})})[0];
    EXPECT_EQ(single.shape(), Shape({2, 3, 3}));
    EXPECT_EQ(values<float>(single), values<float>(batched));
}

} // namespace
