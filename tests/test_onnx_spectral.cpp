// ONNX's DFT and STFT against their definitions written out here with
// std::complex. DFT: real and complex inputs, the axis first, in the middle
// and from the back, dft_length padding and cutting (constant and given at
// run time), onesided bins, the inverse, and the inverse of the transform
// giving the signal back. STFT: windows, frame lengths, steps, complex
// signals. MelWeightMatrix: its triangles from ONNX's definition.
#include <complex>
#include <random>

#include "layer_test_util.h"
#include "onnx_test_graph.h"

#ifdef KESTREL_HAVE_ONNX
namespace kestrel {
namespace {

using layer_test::OnnxGraph;
using cd = std::complex<double>;

// The transform of x (shape s, last axis 1 or 2) along `axis` with n points.
std::vector<cd> reference_dft(const Tensor& x, int axis, int64_t n, bool inverse, bool onesided, Shape& out)
{
    const Shape& s = x.shape();
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= s[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis) + 1; d + 1 < s.size(); ++d) inner *= s[d];
    const int64_t len = s[static_cast<size_t>(axis)], lanes = s.back(), bins = onesided ? n / 2 + 1 : n;
    out = s;
    out[static_cast<size_t>(axis)] = bins;
    out.back() = 2;
    std::vector<cd> y(static_cast<size_t>(outer * bins * inner));
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < bins; ++k)
            for (int64_t m = 0; m < inner; ++m) {
                cd sum = 0;
                for (int64_t j = 0; j < std::min(len, n); ++j) {
                    const float* v = x.data<float>() + ((o * len + j) * inner + m) * lanes;
                    const cd value(v[0], lanes == 2 ? v[1] : 0.f);
                    const double angle = (inverse ? 2 : -2) * M_PI * static_cast<double>(k * j) / static_cast<double>(n);
                    sum += value * std::polar(1.0, angle);
                }
                y[static_cast<size_t>((o * bins + k) * inner + m)] = inverse ? sum / static_cast<double>(n) : sum;
            }
    return y;
}

Tensor random_signal(const Shape& s, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-2.f, 2.f);
    Tensor x(s);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = d(rng);
    return x;
}

struct DftCase {
    Shape shape;
    int axis; // as the node gives it
    int64_t dft_length; // 0: none
    bool inverse, onesided, run_time_length;
};

TEST(OnnxDft, MatchesTheDefinition)
{
    const DftCase cases[] = {{{2, 8, 1}, 1, 0, false, false, false},  {{2, 7, 2}, 1, 0, false, false, false},
                             {{3, 6, 1}, 1, 0, false, true, false},   {{2, 5, 2}, 1, 0, true, false, false},
                             {{2, 4, 3, 1}, -2, 0, false, false, false}, {{5, 2, 3, 2}, 0, 7, false, false, false},
                             {{2, 9, 1}, 1, 4, false, true, false},   {{2, 6, 2}, 1, 10, true, false, true}};
    uint32_t seed = 1;
    for (const DftCase& c : cases) {
        SCOPED_TRACE("input " + shape_str(c.shape) + " axis " + std::to_string(c.axis) + " length " +
                     std::to_string(c.dft_length) + (c.inverse ? " inverse" : "") + (c.onesided ? " onesided" : "") +
                     (c.run_time_length ? " (length at run time)" : ""));
        const Tensor x = random_signal(c.shape, seed++);
        OnnxGraph g(17);
        g.input("x", c.shape);
        std::vector<std::string> inputs = {"x"};
        if (c.dft_length > 0) {
            inputs.push_back("n");
            if (c.run_time_length) g.input("n", {}, onnx::TensorProto::INT64);
            else g.raw_init("n", layer_test::i64({}, {c.dft_length}), onnx::TensorProto::INT64);
        }
        onnx::NodeProto* node = g.node("DFT", inputs, {"y"});
        OnnxGraph::attr_int(node, "axis", c.axis);
        OnnxGraph::attr_int(node, "inverse", c.inverse);
        OnnxGraph::attr_int(node, "onesided", c.onesided);
        g.output("y", static_cast<int>(c.shape.size()));
        const Net net = g.load(true);
        Session session(net);
        session.set_input("x", x);
        if (c.run_time_length) session.set_input("n", layer_test::i64({}, {c.dft_length}));
        const Tensor y = session.get("y");
        const int axis = c.axis < 0 ? c.axis + static_cast<int>(c.shape.size()) : c.axis;
        const int64_t n = c.dft_length > 0 ? c.dft_length : c.shape[static_cast<size_t>(axis)];
        Shape want_shape;
        const std::vector<cd> want = reference_dft(x, axis, n, c.inverse, c.onesided, want_shape);
        ASSERT_EQ(y.shape(), want_shape);
        for (size_t i = 0; i < want.size(); ++i) {
            EXPECT_NEAR(y.data<float>()[2 * i], want[i].real(), 1e-4) << "bin " << i << " (real)";
            EXPECT_NEAR(y.data<float>()[2 * i + 1], want[i].imag(), 1e-4) << "bin " << i << " (imaginary)";
        }
    }
}

// The inverse of the transform gives the signal back.
TEST(OnnxDft, InverseOfTheTransformIsTheSignal)
{
    const Tensor x = random_signal({3, 12, 2}, 9);
    OnnxGraph g(17);
    g.input("x", x.shape());
    g.node("DFT", {"x"}, {"f"});
    OnnxGraph::attr_int(g.node("DFT", {"f"}, {"y"}), "inverse", 1);
    g.output("y", 3);
    const Net net = g.load(true); // the session reads the net it runs
    Session session(net);
    session.set_input("x", x);
    const Tensor y = session.get("y");
    ASSERT_EQ(y.shape(), x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) EXPECT_NEAR(y.data<float>()[i], x.data<float>()[i], 1e-5) << i;
}

TEST(OnnxDft, BadAxisLengthOrOnesidedComplexIsAClearError)
{
    const auto error_with = [](int axis, int64_t length, bool onesided, int lanes) {
        OnnxGraph g(17);
        g.input("x", {2, 4, lanes});
        g.raw_init("n", layer_test::i64({}, {length}), onnx::TensorProto::INT64);
        onnx::NodeProto* node = g.node("DFT", {"x", "n"}, {"y"});
        OnnxGraph::attr_int(node, "axis", axis);
        OnnxGraph::attr_int(node, "onesided", onesided);
        g.output("y", 3);
        return layer_test::error_of([&] {
            const Net net = g.load(true);
            Session session(net);
            session.set_input("x", random_signal({2, 4, lanes}, 3));
            session.get("y");
        });
    };
    EXPECT_TRUE(layer_test::contains(error_with(2, 4, false, 1), "out of range")) << error_with(2, 4, false, 1);
    EXPECT_TRUE(layer_test::contains(error_with(1, 0, false, 1), "dft_length")) << error_with(1, 0, false, 1);
    EXPECT_TRUE(layer_test::contains(error_with(1, 4, true, 2), "onesided")) << error_with(1, 4, true, 2);
    OnnxGraph big(17); // 2 lines x 65536 bins x 40000 samples: past the direct sums' bound
    big.input("x", {2, 40000, 1});
    big.raw_init("n", layer_test::i64({}, {65536}), onnx::TensorProto::INT64);
    big.node("DFT", {"x", "n"}, {"y"});
    big.output("y", 3);
    const std::string msg = layer_test::error_of([&] {
        const Net net = big.load(true);
        Session session(net);
        session.set_input("x", Tensor::zeros({2, 40000, 1}));
        session.get("y");
    });
    EXPECT_TRUE(layer_test::contains(msg, "direct DFT sums would take")) << msg;
}

// STFT: frame f of signal b is samples [f * step, + n) times the window; its n-point DFT.
TEST(OnnxStft, MatchesTheDefinition)
{
    struct Case {
        int64_t batch, length, lanes, step, frame_length;
        bool window, onesided, run_time;
    };
    const Case cases[] = {{2, 40, 1, 5, 16, true, true, false}, {1, 33, 1, 4, 9, false, true, true},
                          {2, 21, 2, 3, 8, true, false, true}, {1, 10, 1, 1, 10, false, false, false}};
    uint32_t seed = 20;
    for (const Case& c : cases) {
        SCOPED_TRACE("length " + std::to_string(c.length) + " lanes " + std::to_string(c.lanes) + " step " +
                     std::to_string(c.step) + " frame " + std::to_string(c.frame_length) + (c.window ? " window" : "") +
                     (c.onesided ? " onesided" : "") + (c.run_time ? " (step at run time)" : ""));
        const Tensor x = random_signal({c.batch, c.length, c.lanes}, seed++);
        const Tensor window = random_signal({c.frame_length}, seed++);
        OnnxGraph g(17);
        g.input("x", x.shape());
        if (c.run_time) g.input("step", {}, onnx::TensorProto::INT64);
        else g.raw_init("step", layer_test::i64({}, {c.step}), onnx::TensorProto::INT64);
        std::vector<std::string> inputs = {"x", "step", c.window ? "w" : ""};
        if (c.window) g.raw_init("w", window, onnx::TensorProto::FLOAT);
        if (!c.window) {
            g.raw_init("n", layer_test::i64({}, {c.frame_length}), onnx::TensorProto::INT64);
            inputs.push_back("n");
        }
        OnnxGraph::attr_int(g.node("STFT", inputs, {"y"}), "onesided", c.onesided);
        g.output("y", 4);
        const Net net = g.load(true);
        Session session(net);
        session.set_input("x", x);
        if (c.run_time) session.set_input("step", layer_test::i64({}, {c.step}));
        const Tensor y = session.get("y");
        const int64_t frames = (c.length - c.frame_length) / c.step + 1;
        const int64_t bins = c.onesided ? c.frame_length / 2 + 1 : c.frame_length;
        ASSERT_EQ(y.shape(), (Shape{c.batch, frames, bins, 2}));
        for (int64_t b = 0; b < c.batch; ++b)
            for (int64_t f = 0; f < frames; ++f)
                for (int64_t k = 0; k < bins; ++k) {
                    cd sum = 0;
                    for (int64_t j = 0; j < c.frame_length; ++j) {
                        const float* v = x.data<float>() + (b * c.length + f * c.step + j) * c.lanes;
                        const double w = c.window ? window.data<float>()[j] : 1.0;
                        sum += cd(v[0], c.lanes == 2 ? v[1] : 0.f) * w *
                               std::polar(1.0, -2 * M_PI * static_cast<double>(k * j) / static_cast<double>(c.frame_length));
                    }
                    const float* got = y.data<float>() + ((b * frames + f) * bins + k) * 2;
                    EXPECT_NEAR(got[0], sum.real(), 1e-4) << b << "," << f << "," << k;
                    EXPECT_NEAR(got[1], sum.imag(), 1e-4) << b << "," << f << "," << k;
                }
    }
}

// MelWeightMatrix against ONNX's definition: edges evenly spaced on the mel
// scale, each on spectrum bin floor((n + 1) * hz / rate), band i rising from
// edge i to i + 1 and falling to i + 2; sizes as constants and at run time,
// a double output; edges past the spectrum are an error.
TEST(OnnxMelWeightMatrix, MatchesTheDefinition)
{
    struct Case {
        int64_t bands, dft_length, rate;
        float lower, upper;
        bool run_time;
    };
    for (const Case& c : {Case{10, 64, 16000, 20.f, 8000.f, false}, Case{6, 100, 8000, 0.f, 3900.f, true},
                          Case{3, 512, 22050, 300.f, 2000.f, false}}) {
        SCOPED_TRACE(std::to_string(c.bands) + " bands, n " + std::to_string(c.dft_length));
        OnnxGraph g(17);
        const auto int_input = [&](const char* name, int64_t v) {
            if (c.run_time) g.input(name, {}, onnx::TensorProto::INT64);
            else g.raw_init(name, layer_test::i64({}, {v}), onnx::TensorProto::INT64);
        };
        int_input("bands", c.bands);
        int_input("n", c.dft_length);
        g.raw_init("rate", layer_test::i64({}, {c.rate}), onnx::TensorProto::INT64);
        g.raw_init("lo", layer_test::f32({}, {c.lower}), onnx::TensorProto::FLOAT);
        g.raw_init("hi", layer_test::f32({}, {c.upper}), onnx::TensorProto::FLOAT);
        OnnxGraph::attr_int(g.node("MelWeightMatrix", {"bands", "n", "rate", "lo", "hi"}, {"y"}), "output_datatype",
                            onnx::TensorProto::DOUBLE);
        g.output("y", 2, onnx::TensorProto::DOUBLE);
        const Net net = g.load(true);
        Session session(net);
        if (c.run_time) {
            session.set_input("bands", layer_test::i64({}, {c.bands}));
            session.set_input("n", layer_test::i64({}, {c.dft_length}));
        }
        const Tensor y = session.get("y");
        const int64_t bins = c.dft_length / 2 + 1;
        ASSERT_EQ(y.shape(), (Shape{bins, c.bands}));
        ASSERT_EQ(y.dtype(), DType::F64);
        const auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
        const double step = (mel(c.upper) - mel(c.lower)) / static_cast<double>(c.bands + 2);
        std::vector<int64_t> edge;
        for (int64_t i = 0; i < c.bands + 2; ++i) {
            const double hz = 700.0 * (std::pow(10.0, (mel(c.lower) + static_cast<double>(i) * step) / 2595.0) - 1.0);
            edge.push_back(static_cast<int64_t>(std::floor(static_cast<double>(c.dft_length + 1) * hz / static_cast<double>(c.rate))));
        }
        int rising = 0;
        for (int64_t i = 0; i < c.bands; ++i) {
            const int64_t lo = edge[static_cast<size_t>(i)], mid = edge[static_cast<size_t>(i + 1)], hi = edge[static_cast<size_t>(i + 2)];
            rising += mid - lo > 1;
            for (int64_t j = 0; j < bins; ++j) {
                double want = 0;
                if (j >= mid && j < hi) want = static_cast<double>(hi - j) / static_cast<double>(hi - mid);
                else if (mid > lo && j >= lo && j <= mid) want = static_cast<double>(j - lo) / static_cast<double>(mid - lo);
                else if (mid == lo && j == mid) want = 1.0;
                EXPECT_DOUBLE_EQ(y.data<double>()[j * c.bands + i], want) << "bin " << j << " band " << i;
            }
        }
        EXPECT_GT(rising, 0) << "a band whose rise spans bins";
    }
    OnnxGraph bad(17); // an upper edge past the sample rate's half: edges past the spectrum
    for (const auto& [name, v] : {std::pair<const char*, int64_t>{"bands", 4}, {"n", 16}, {"rate", 1000}})
        bad.raw_init(name, layer_test::i64({}, {v}), onnx::TensorProto::INT64);
    bad.raw_init("lo", layer_test::f32({}, {0.f}), onnx::TensorProto::FLOAT);
    bad.raw_init("hi", layer_test::f32({}, {5000.f}), onnx::TensorProto::FLOAT);
    bad.node("MelWeightMatrix", {"bands", "n", "rate", "lo", "hi"}, {"y"});
    bad.output("y", 2);
    const std::string msg = layer_test::error_of([&] {
        const Net net = bad.load(true);
        Session session(net);
        session.get("y");
    });
    EXPECT_TRUE(layer_test::contains(msg, "outside the 9 bins")) << msg;
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_ONNX
