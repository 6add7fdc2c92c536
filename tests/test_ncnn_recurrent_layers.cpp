// ncnn's RNN, GRU and LSTM (their params, .bin layouts and gate orders)
// against reference cells written here from ncnn's loops (src/layer/rnn.cpp,
// gru.cpp, lstm.cpp): every direction, with and without initial states.
#include <gtest/gtest.h>

#include <cmath>

#include "layer_test_util.h"

namespace kestrel {
namespace {

using namespace layer_test;

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// ncnn's weights for one layer, in .bin order, as flat vectors.
struct NcnnWeights {
    std::vector<float> wx, bias, wh; // (dirs, gates*H, I), (dirs, blocks*H), (dirs, gates*H, H)
};

NcnnWeights random_weights(int dirs, int gates, int bias_blocks, int hidden, int input, unsigned seed)
{
    auto v = [](const Tensor& t) { return values<float>(t); };
    return {v(random_f32({dirs * gates * hidden * input}, seed, -0.5f, 0.5f)),
            v(random_f32({dirs * bias_blocks * hidden}, seed + 1, -0.5f, 0.5f)),
            v(random_f32({dirs * gates * hidden * hidden}, seed + 2, -0.5f, 0.5f))};
}

// One direction of the reference: runs the cell over x (seq, I) forward or
// backward, updating h (and c); writes each step's h into y at column offset.
void reference_direction(const std::string& type, const NcnnWeights& w, int dir, int hidden, int input,
                         const std::vector<float>& x, int seq, bool reverse, std::vector<double>& h,
                         std::vector<double>& c, std::vector<double>& y, int y_width, int y_offset)
{
    const int gates = type == "LSTM" ? 4 : type == "GRU" ? 3 : 1, blocks = type == "RNN" ? 1 : 4;
    auto wx = [&](int g, int q, int i) { return static_cast<double>(w.wx[((dir * gates + g) * hidden + q) * input + i]); };
    auto wh = [&](int g, int q, int i) { return static_cast<double>(w.wh[((dir * gates + g) * hidden + q) * hidden + i]); };
    auto b = [&](int blk, int q) { return static_cast<double>(w.bias[(dir * blocks + blk) * hidden + q]); };
    for (int step = 0; step < seq; ++step) {
        const int t = reverse ? seq - 1 - step : step;
        const float* xt = x.data() + t * input;
        std::vector<double> nh(static_cast<size_t>(hidden)), nc = c;
        for (int q = 0; q < hidden; ++q) {
            auto pre = [&](int g, double bias) {
                double s = bias;
                for (int i = 0; i < input; ++i) s += wx(g, q, i) * xt[i];
                for (int i = 0; i < hidden; ++i) s += wh(g, q, i) * h[static_cast<size_t>(i)];
                return s;
            };
            if (type == "RNN") {
                nh[q] = std::tanh(pre(0, b(0, q)));
            } else if (type == "GRU") {
                const double r = sigmoid(pre(0, b(0, q))), u = sigmoid(pre(1, b(1, q)));
                double n_h = b(3, q), n_x = b(2, q);
                for (int i = 0; i < hidden; ++i) n_h += wh(2, q, i) * h[static_cast<size_t>(i)];
                for (int i = 0; i < input; ++i) n_x += wx(2, q, i) * xt[i];
                const double n = std::tanh(n_x + r * n_h);
                nh[q] = (1 - u) * n + u * h[static_cast<size_t>(q)];
            } else { // LSTM, gates I F O G
                const double i_g = sigmoid(pre(0, b(0, q))), f = sigmoid(pre(1, b(1, q))), o = sigmoid(pre(2, b(2, q))),
                             g = std::tanh(pre(3, b(3, q)));
                nc[q] = f * c[static_cast<size_t>(q)] + i_g * g;
                nh[q] = o * std::tanh(nc[q]);
            }
        }
        h = nh;
        c = nc;
        for (int q = 0; q < hidden; ++q) y[static_cast<size_t>(t * y_width + y_offset + q)] = h[static_cast<size_t>(q)];
    }
}

TEST(NcnnRecurrent, EveryCellDirectionAndInitialState)
{
    const int hidden = 4, input = 3, seq = 5;
    for (const std::string type : {"RNN", "GRU", "LSTM"}) {
        const int gates = type == "LSTM" ? 4 : type == "GRU" ? 3 : 1, blocks = type == "RNN" ? 1 : 4;
        const int states = type == "LSTM" ? 2 : 1;
        for (int direction : {0, 1, 2}) {
            for (bool with_states : {false, true}) {
                const int dirs = direction == 2 ? 2 : 1;
                const std::string what = type + " direction " + std::to_string(direction) + (with_states ? " states" : "");
                const NcnnWeights w = random_weights(dirs, gates, blocks, hidden, input, 40 + direction);
                const Tensor x = random_f32({seq, input}, 50);
                std::vector<In> ins = {R(x)};
                std::vector<Tensor> h0s;
                for (int s = 0; s < (with_states ? states : 0); ++s) {
                    h0s.push_back(random_f32({dirs, hidden}, 60 + s));
                    ins.push_back(R(h0s.back()));
                }
                ParamDict pd = P({{0, hidden}, {1, dirs * gates * hidden * input}, {2, direction}});
                const std::vector<Tensor> weights = {f32({static_cast<int64_t>(w.wx.size())}, w.wx),
                                                     f32({static_cast<int64_t>(w.bias.size())}, w.bias),
                                                     f32({static_cast<int64_t>(w.wh.size())}, w.wh)};
                const std::vector<Tensor> out = run_layer(type, pd, ins, with_states ? 1 + states : 1, weights);
                std::vector<double> y(static_cast<size_t>(seq * dirs * hidden)), final_h, final_c;
                for (int dir = 0; dir < dirs; ++dir) {
                    std::vector<double> h(hidden, 0.0), c(hidden, 0.0);
                    if (with_states) {
                        for (int q = 0; q < hidden; ++q) h[q] = h0s[0].data<float>()[dir * hidden + q];
                        if (states == 2)
                            for (int q = 0; q < hidden; ++q) c[q] = h0s[1].data<float>()[dir * hidden + q];
                    }
                    reference_direction(type, w, dir, hidden, input, values<float>(x), seq, direction == 1 || dir == 1, h, c, y,
                                        dirs * hidden, dir * hidden);
                    final_h.insert(final_h.end(), h.begin(), h.end());
                    final_c.insert(final_c.end(), c.begin(), c.end());
                }
                EXPECT_EQ(out[0].shape(), Shape({seq, dirs * hidden})) << what;
                expect_near_all(out[0], y, what);
                if (with_states) {
                    EXPECT_EQ(out[1].shape(), Shape({dirs, hidden})) << what;
                    expect_near_all(out[1], final_h, what + " final h");
                    if (states == 2) expect_near_all(out[2], final_c, what + " final c");
                }
            }
        }
    }
}

// A 1-D input is one step (ncnn's blob with h = 1).
TEST(NcnnRecurrent, OneDimensionalInputIsOneStep)
{
    const std::vector<Tensor> weights = {random_f32({36}, 2), random_f32({16}, 3), random_f32({48}, 4)};
    const ParamDict pd = P({{0, 4}, {1, 36}, {2, 0}});
    const Tensor step = random_f32({3}, 5);
    const Tensor one = run1("GRU", pd, {R(step)}, weights);
    const Tensor as_seq = run1("GRU", pd, {R(step.reshaped({1, 3}))}, weights);
    EXPECT_EQ(one.shape(), Shape({1, 4}));
    EXPECT_EQ(values<float>(one), values<float>(as_seq));
}

// LSTM with a projection (PyTorch's proj_size): num_output 3 is h's size,
// hidden_size 5 the cell's; h = weight_hr . (o * tanh(c)). Both directions,
// initial states given, final states out.
TEST(NcnnRecurrent, LstmProjection)
{
    const int proj = 3, hidden = 5, input = 4, seq = 6, dirs = 2;
    const Tensor wx = random_f32({dirs * 4 * hidden * input}, 70, -0.5f, 0.5f), bias = random_f32({dirs * 4 * hidden}, 71);
    const Tensor wh = random_f32({dirs * 4 * hidden * proj}, 72, -0.5f, 0.5f), hr = random_f32({dirs * proj * hidden}, 73);
    const Tensor x = random_f32({seq, input}, 74), h0 = random_f32({dirs, proj}, 75), c0 = random_f32({dirs, hidden}, 76);
    const ParamDict pd = P({{0, proj}, {1, dirs * 4 * hidden * input}, {2, 2}, {3, hidden}});
    const std::vector<Tensor> out = run_layer("LSTM", pd, {R(x), R(h0), R(c0)}, 3, {wx, bias, wh, hr});
    std::vector<double> y(static_cast<size_t>(seq * dirs * proj)), final_h, final_c;
    for (int dir = 0; dir < dirs; ++dir) {
        std::vector<double> h(proj), c(hidden);
        for (int q = 0; q < proj; ++q) h[q] = h0.data<float>()[dir * proj + q];
        for (int q = 0; q < hidden; ++q) c[q] = c0.data<float>()[dir * hidden + q];
        for (int step = 0; step < seq; ++step) {
            const int t = dir == 1 ? seq - 1 - step : step;
            std::vector<double> cell_out(hidden);
            for (int q = 0; q < hidden; ++q) {
                double g[4];
                for (int k = 0; k < 4; ++k) { // I F O G
                    g[k] = bias.data<float>()[(dir * 4 + k) * hidden + q];
                    for (int i = 0; i < input; ++i)
                        g[k] += wx.data<float>()[((dir * 4 + k) * hidden + q) * input + i] * x.data<float>()[t * input + i];
                    for (int i = 0; i < proj; ++i)
                        g[k] += wh.data<float>()[((dir * 4 + k) * hidden + q) * proj + i] * h[i];
                }
                c[q] = sigmoid(g[1]) * c[q] + sigmoid(g[0]) * std::tanh(g[3]);
                cell_out[q] = sigmoid(g[2]) * std::tanh(c[q]);
            }
            for (int p = 0; p < proj; ++p) {
                h[p] = 0;
                for (int q = 0; q < hidden; ++q) h[p] += hr.data<float>()[(dir * proj + p) * hidden + q] * cell_out[q];
                y[static_cast<size_t>((t * dirs + dir) * proj + p)] = h[p];
            }
        }
        final_h.insert(final_h.end(), h.begin(), h.end());
        final_c.insert(final_c.end(), c.begin(), c.end());
    }
    EXPECT_EQ(out[0].shape(), Shape({seq, dirs * proj}));
    expect_near_all(out[0], y, "y");
    EXPECT_EQ(out[1].shape(), Shape({dirs, proj}));
    expect_near_all(out[1], final_h, "final h");
    EXPECT_EQ(out[2].shape(), Shape({dirs, hidden}));
    expect_near_all(out[2], final_c, "final c");
}

TEST(NcnnRecurrent, BadParamsAndShapes)
{
    const Tensor x = random_f32({5, 3}, 1);
    const std::vector<Tensor> weights = {random_f32({48}, 2), random_f32({16}, 3), random_f32({64}, 4)};
    EXPECT_TRUE(contains(error_of([&] { run1("LSTM", P({{0, 4}, {1, 48}, {3, 0}}), {R(x)}, weights); }), "hidden_size"));
    EXPECT_TRUE(contains(error_of([&] { run1("LSTM", P({{0, 4}, {1, 47}}), {R(x)}, weights); }), "weight_data_size"));
    EXPECT_TRUE(contains(error_of([&] { run1("LSTM", P({{0, 4}, {1, 48}, {2, 3}}), {R(x)}, weights); }), "direction"));
    EXPECT_TRUE(contains(error_of([&] { run1("LSTM", P({{0, 4}, {1, 48}}), {R(random_f32({5, 2}, 1))}, weights); }),
                         "X (input 0)"));
}

} // namespace
} // namespace kestrel
