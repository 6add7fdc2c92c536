// String tensors (DType::String): the value itself, layers that take or refuse
// it, Cast to and from strings, StringNormalizer, string constants through
// .param/.bin, and bfloat16 rounding. References: C++'s shortest
// round-trip formatting (std::to_chars), the C library's number parsing and
// case mapping (towupper/towlower in the C.UTF-8 locale).
#include <charconv>
#include <clocale>
#include <cstring>
#include <cwctype>
#include <fstream>
#include <random>

#include "core/utf8.h"
#include "layer_test_util.h"
#include "onnx_test_graph.h"
#include "test_helpers.h"

namespace kestrel {
namespace {

TEST(StringTensor, HoldsStringsNotBytes)
{
    const Tensor s = Tensor::strings({2, 2}, {"a", "", "long enough to live on the heap, not inline", "d"});
    EXPECT_EQ(std::string(dtype_name(s.dtype())), "string");
    Tensor copy = s.clone();
    copy.data<std::string>()[2] += "!";
    EXPECT_EQ(s.data<std::string>()[2], "long enough to live on the heap, not inline") << "a clone's strings are its own";
    copy.fill_zero();
    EXPECT_EQ(copy.data<std::string>()[2], "");
    EXPECT_EQ(s.reshaped({4}).data<std::string>()[3], "d");
    EXPECT_TRUE(Tensor::strings({0}, {}).defined());
    EXPECT_THROW(s.to(DType::F32), Error);
    EXPECT_THROW(s.view_as({static_cast<int64_t>(4 * sizeof(std::string))}, DType::U8), Error);
    EXPECT_THROW(Tensor::strings({3}, {"a"}), Error);
}

// Layers that copy bytes refuse strings before they run; views share them.
TEST(StringTensor, ByteLayersRefuseStringsViewsShareThem)
{
    for (const char* layer : {"Concat c 2 1 s s y", "Permute p 1 1 s y 0=1", "UnaryOp u 1 1 s y 0=1"}) {
        Net net;
        net.load_param_mem(std::string("7767517\n2 2\nInput s 0 1 s 21=15\n") + layer + "\n", "str.param");
        Session session(net);
        session.set_input("s", Tensor::strings({2, 2}, {"a", "b", "c", "d"}));
        const std::string msg = layer_test::error_of([&] { session.get("y"); });
        EXPECT_TRUE(layer_test::contains(msg, "a string input, which this layer does not take")) << layer << ": " << msg;
    }
    Net net;
    net.load_param_mem("7767517\n2 2\nInput s 0 1 s 21=15\nReshape r 1 1 s y 0=4\n", "str.param");
    Session session(net);
    session.set_input("s", Tensor::strings({2, 2}, {"a", "b", "c", "d"}));
    const Tensor y = session.get("y");
    ASSERT_EQ(y.shape(), (Shape{4}));
    EXPECT_EQ(y.data<std::string>()[3], "d");
}

} // namespace
} // namespace kestrel

#ifdef KESTREL_HAVE_ONNX
namespace kestrel {
namespace {

using layer_test::OnnxGraph;
constexpr int kString = onnx::TensorProto::STRING;

// x (of `from`) cast to `to` (ONNX element types).
Tensor cast_with_onnx(const Tensor& x, int from, int to)
{
    OnnxGraph g(13);
    g.input("x", x.shape(), from);
    OnnxGraph::attr_int(g.node("Cast", {"x"}, {"y"}), "to", to);
    g.output("y", x.rank(), to);
    const Net net = g.load(true);
    Session session(net);
    session.set_input("x", x);
    return session.get("y");
}

// The number of significant digits in a decimal text ("0.0390" has 3).
int significant_digits(const std::string& text)
{
    const std::string mantissa = text.substr(0, text.find_first_of("eE"));
    std::string digits;
    for (char c : mantissa)
        if (c >= '0' && c <= '9') digits.push_back(c);
    const size_t first = digits.find_first_not_of('0');
    if (first == std::string::npos) return 1;
    const size_t last = digits.find_last_not_of('0');
    return static_cast<int>(last - first + 1);
}

// Floats (float32 and float64) become the shortest text that reads back as the same
// value: as many significant digits as std::to_chars' shortest scientific form.
TEST(OnnxStrings, CastFloatsToShortestRoundTripText)
{
    std::mt19937 rng(7);
    std::uniform_int_distribution<uint32_t> bits32;
    std::vector<float> f = {0.f, -0.f, 1.f, 0.1f, 1e10f, 1.17549435e-38f, 1e-45f, 3.4028235e38f, 123456789.f, -2.5f};
    for (int i = 0; i < 300; ++i) {
        const uint32_t b = bits32(rng);
        float v;
        std::memcpy(&v, &b, 4);
        if (std::isfinite(v)) f.push_back(v);
    }
    const Tensor y = cast_with_onnx(layer_test::f32({static_cast<int64_t>(f.size())}, f), onnx::TensorProto::FLOAT, kString);
    ASSERT_EQ(y.dtype(), DType::String);
    for (size_t i = 0; i < f.size(); ++i) {
        const std::string& text = y.data<std::string>()[i];
        EXPECT_EQ(std::strtof(text.c_str(), nullptr), f[i]) << text;
        EXPECT_EQ(std::signbit(std::strtof(text.c_str(), nullptr)), std::signbit(f[i])) << text;
        char shortest[64];
        const auto r = std::to_chars(shortest, shortest + sizeof shortest, f[i], std::chars_format::scientific);
        EXPECT_EQ(significant_digits(text), significant_digits(std::string(shortest, r.ptr))) << text << " vs " << shortest;
    }
    std::vector<double> d = {0.1, 1.0 / 3.0, 1e300, 5e-324, -123.456};
    Tensor xd({static_cast<int64_t>(d.size())}, DType::F64);
    std::copy(d.begin(), d.end(), xd.data<double>());
    const Tensor yd = cast_with_onnx(xd, onnx::TensorProto::DOUBLE, kString);
    for (size_t i = 0; i < d.size(); ++i) {
        const std::string& text = yd.data<std::string>()[i];
        char shortest[64];
        const auto r = std::to_chars(shortest, shortest + sizeof shortest, d[i], std::chars_format::scientific);
        EXPECT_EQ(std::strtod(text.c_str(), nullptr), d[i]) << text;
        EXPECT_EQ(significant_digits(text), significant_digits(std::string(shortest, r.ptr))) << text;
    }
    const float special[3] = {NAN, INFINITY, -INFINITY};
    const Tensor ys = cast_with_onnx(layer_test::f32({3}, {special[0], special[1], special[2]}), onnx::TensorProto::FLOAT, kString);
    EXPECT_EQ(ys.data<std::string>()[0], "NaN");
    EXPECT_EQ(ys.data<std::string>()[1], "INF");
    EXPECT_EQ(ys.data<std::string>()[2], "-INF");
}

TEST(OnnxStrings, CastIntegersAndBoolsToText)
{
    const Tensor x = layer_test::i64({4}, {0, -1, INT64_MAX, INT64_MIN});
    const Tensor y = cast_with_onnx(x, onnx::TensorProto::INT64, kString);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y.data<std::string>()[i], std::to_string(x.data<int64_t>()[i]));
    Tensor b({2}, DType::Bool);
    b.data<bool>()[0] = true, b.data<bool>()[1] = false;
    const Tensor yb = cast_with_onnx(b, onnx::TensorProto::BOOL, kString);
    EXPECT_EQ(yb.data<std::string>()[0], "1");
    EXPECT_EQ(yb.data<std::string>()[1], "0");
}

// Text to numbers: the C library's reading of the whole string (strtod /
// strtoll), saturating integers; text that is no number is an error naming it.
TEST(OnnxStrings, CastTextToNumbers)
{
    const std::vector<std::string> floats = {"0.5", "-1e-3", "inf", "-INF", "+INF", "NaN", "0x1p-2", "3.4028236e38"};
    const Tensor yf = cast_with_onnx(Tensor::strings({8}, floats), kString, onnx::TensorProto::FLOAT);
    for (size_t i = 0; i < floats.size(); ++i) {
        const float want = static_cast<float>(std::strtod(floats[i].c_str(), nullptr));
        const float got = yf.data<float>()[i];
        EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << floats[i] << " -> " << got;
    }
    const std::vector<std::string> ints = {"12", "-7", "300", "-300", "+5"};
    const Tensor y8 = cast_with_onnx(Tensor::strings({5}, ints), kString, onnx::TensorProto::INT8);
    const int8_t want8[5] = {12, -7, 127, -128, 5};
    for (int i = 0; i < 5; ++i) EXPECT_EQ(y8.data<int8_t>()[i], want8[i]) << ints[i];
    const Tensor y64 = cast_with_onnx(Tensor::strings({2}, {"9223372036854775807", "-9223372036854775808"}), kString,
                                      onnx::TensorProto::INT64);
    EXPECT_EQ(y64.data<int64_t>()[0], INT64_MAX);
    EXPECT_EQ(y64.data<int64_t>()[1], INT64_MIN);
    const Tensor yb = cast_with_onnx(Tensor::strings({4}, {"true", "FALSE", "0", "2"}), kString, onnx::TensorProto::BOOL);
    const bool want_b[4] = {true, false, false, true};
    for (int i = 0; i < 4; ++i) EXPECT_EQ(yb.data<bool>()[i], want_b[i]);
    for (const char* bad : {"abc", "", "1.5x", " 1"}) {
        const std::string msg = layer_test::error_of(
            [&] { cast_with_onnx(Tensor::strings({1}, {bad}), kString, onnx::TensorProto::FLOAT); });
        EXPECT_TRUE(layer_test::contains(msg, std::string("string '") + bad + "' is not a number")) << msg;
    }
    const std::string msg = layer_test::error_of(
        [&] { cast_with_onnx(Tensor::strings({1}, {"-1"}), kString, onnx::TensorProto::UINT8); });
    EXPECT_TRUE(layer_test::contains(msg, "is negative")) << msg;
}

// Float to bfloat16 rounds to nearest even, as ONNX Runtime and PyTorch do
// (ONNX 1.12's test data truncates: see docs/onnx-conformance-failures.md).
TEST(OnnxStrings, BfloatRoundsToNearestEven)
{
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-4.f, 4.f);
    std::vector<float> x(64);
    for (float& v : x) v = u(rng);
    x[0] = 1.00390625f; // exactly halfway between two bfloat16 values: ties to even (1.0)
    x[1] = 1.01171875f; // halfway, the upper neighbour even
    const Tensor rounded = cast_with_onnx(layer_test::f32({64}, x), onnx::TensorProto::FLOAT, onnx::TensorProto::BFLOAT16);
    const auto value = [](uint16_t h) {
        const uint32_t w = uint32_t{h} << 16;
        float f;
        std::memcpy(&f, &w, 4);
        return double{f};
    };
    for (size_t i = 0; i < x.size(); ++i) {
        uint32_t b;
        std::memcpy(&b, &x[i], 4);
        // The nearer of the two neighbours by exact arithmetic; a tie takes the even one.
        const uint16_t down = static_cast<uint16_t>(b >> 16), up = static_cast<uint16_t>(down + 1);
        const double dd = std::fabs(x[i] - value(down)), du = std::fabs(value(up) - x[i]);
        const uint16_t nearest = dd < du ? down : du < dd ? up : (down % 2 == 0 ? down : up);
        EXPECT_EQ(rounded.data<uint16_t>()[i], nearest) << x[i];
    }
}

// CastLike reads only its second input's dtype: that input's declared shape is not checked.
TEST(OnnxStrings, CastLikeIgnoresTheShapeOfLike)
{
    OnnxGraph g(15);
    g.input("x", {2, 2});
    g.input("like", {3, 4}, kString);
    g.node("CastLike", {"x", "like"}, {"y"});
    g.output("y", 2, kString);
    const Net net = g.load(true);
    Session session(net);
    session.set_input("x", layer_test::f32({2, 2}, {1.f, 2.5f, -3.f, 0.25f}));
    session.set_input("like", Tensor::strings({1}, {"anything"}));
    const Tensor y = session.get("y");
    ASSERT_EQ(y.dtype(), DType::String);
    EXPECT_EQ(y.data<std::string>()[1], "2.5");
}

// A one-node StringNormalizer model.
OnnxGraph normalizer(const Shape& shape, const std::string& action, int case_sensitive,
                     const std::vector<std::string>& stopwords)
{
    OnnxGraph g(10);
    g.input("x", shape, kString);
    onnx::NodeProto* n = g.node("StringNormalizer", {"x"}, {"y"});
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("case_change_action");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(action);
    OnnxGraph::attr_int(n, "is_case_sensitive", case_sensitive);
    if (!stopwords.empty()) {
        onnx::AttributeProto* sw = n->add_attribute();
        sw->set_name("stopwords");
        sw->set_type(onnx::AttributeProto::STRINGS);
        for (const std::string& w : stopwords) sw->add_strings(w);
    }
    g.output("y", static_cast<int>(shape.size()), kString);
    return g;
}

std::vector<std::string> strings_of(const Tensor& t)
{
    return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + t.numel());
}

std::string one_code_point(char32_t c)
{
    std::string s;
    utf8::append(s, c);
    return s;
}

// Every code point of the blocks mapped (Basic Latin to Latin Extended-A,
// Greek and Coptic, Cyrillic's first 96) upper- and lower-cased as the C
// library maps it in the C.UTF-8 locale.
TEST(OnnxStrings, StringNormalizerCaseAsTheCLibrary)
{
    const char* previous = std::setlocale(LC_CTYPE, nullptr);
    const std::string saved = previous ? previous : "C";
    if (!std::setlocale(LC_CTYPE, "C.UTF-8")) GTEST_SKIP() << "no C.UTF-8 locale";
    std::vector<std::string> letters;
    std::vector<char32_t> points;
    for (char32_t c = 1; c <= 0x45F; ++c) {
        if (c >= 0x180 && c < 0x370) continue; // Latin Extended-B, IPA, diacritics: not mapped
        letters.push_back(one_code_point(c));
        points.push_back(c);
    }
    const Shape shape{static_cast<int64_t>(letters.size())};
    for (const std::string action : {"UPPER", "LOWER"}) {
        const Net net = normalizer(shape, action, 1, {}).load(true);
        Session session(net);
        session.set_input("x", Tensor::strings(shape, letters));
        const std::vector<std::string> got = strings_of(session.get("y"));
        ASSERT_EQ(got.size(), letters.size());
        for (size_t i = 0; i < points.size(); ++i) {
            const wint_t want = action == "UPPER" ? std::towupper(static_cast<wint_t>(points[i]))
                                                  : std::towlower(static_cast<wint_t>(points[i]));
            EXPECT_EQ(got[i], one_code_point(static_cast<char32_t>(want)))
                << action << " U+" << std::hex << static_cast<uint32_t>(points[i]);
        }
    }
    std::setlocale(LC_CTYPE, saved.c_str());
}

// Stopwords, compared with or without case, leave the rest in order; [1, C]
// stays two-dimensional; nothing left is one empty string. The expectation is
// filtered here by plain comparison.
TEST(OnnxStrings, StringNormalizerDropsStopwords)
{
    const std::vector<std::string> words = {"Über", "über", "ÜBER", "mit", "MIT", "Straße", "ΜΙΤ"};
    struct Case {
        int case_sensitive;
        std::vector<std::string> want;
    };
    // Stopwords "über" and "mit": case-insensitively the Ü/ü and M/m forms all go ("ΜΙΤ" is Greek, it stays).
    for (const Case& c : {Case{1, {"Über", "ÜBER", "MIT", "Straße", "ΜΙΤ"}}, Case{0, {"Straße", "ΜΙΤ"}}}) {
        for (const Shape& shape : {Shape{7}, Shape{1, 7}}) {
            const Net net = normalizer(shape, "NONE", c.case_sensitive, {"über", "mit"}).load(true);
            Session session(net);
            session.set_input("x", Tensor::strings(shape, words));
            const Tensor y = session.get("y");
            Shape want_shape = shape;
            want_shape.back() = static_cast<int64_t>(c.want.size());
            EXPECT_EQ(y.shape(), want_shape);
            EXPECT_EQ(strings_of(y), c.want);
        }
    }
    const Net net = normalizer({1, 2}, "UPPER", 0, {"a"}).load(true);
    Session session(net);
    session.set_input("x", Tensor::strings({1, 2}, {"A", "a"}));
    const Tensor y = session.get("y");
    EXPECT_EQ(y.shape(), (Shape{1, 1}));
    EXPECT_EQ(strings_of(y), std::vector<std::string>{""});
}

// String weights (stopwords) and string constants survive .param/.bin; a
// string whose stored length runs past the file is an error, not a read.
TEST(OnnxStrings, StringWeightsThroughParamAndBin)
{
    OnnxGraph g = normalizer({3}, "LOWER", 1, {"Drop", "", "two words"});
    onnx::TensorProto* table = g.graph()->add_initializer();
    table->set_name("table");
    table->set_data_type(kString);
    table->add_dims(2);
    table->add_string_data("2.5");
    table->add_string_data("-8");
    OnnxGraph::attr_int(g.node("Cast", {"table"}, {"numbers"}), "to", onnx::TensorProto::FLOAT);
    g.output("numbers", 1);
    const Net net = g.load(false);
    ktest::TempDir tmp;
    net.save_param(tmp.file("m.param"));
    net.save_model(tmp.file("m.bin"));
    Net loaded;
    loaded.load_param(tmp.file("m.param"));
    loaded.load_model(tmp.file("m.bin"));
    Session session(loaded);
    session.set_input("x", Tensor::strings({3}, {"Drop", "KEEP", "two words"}));
    EXPECT_EQ(strings_of(session.get("y")), std::vector<std::string>{"keep"});
    const Tensor numbers = session.get("numbers");
    EXPECT_EQ(numbers.data<float>()[0], 2.5f);
    EXPECT_EQ(numbers.data<float>()[1], -8.f);

    std::ifstream in(tmp.file("m.bin"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = bytes.find("Drop");
    ASSERT_NE(at, std::string::npos);
    const uint32_t huge = 1u << 30;
    std::memcpy(&bytes[at - 4], &huge, 4);
    Net broken;
    broken.load_param(tmp.file("m.param"));
    const std::string msg = layer_test::error_of([&] { broken.load_model_mem(bytes.data(), bytes.size(), "m.bin"); });
    EXPECT_TRUE(layer_test::contains(msg, "m.bin")) << msg;
    EXPECT_TRUE(layer_test::contains(msg, "claims 1073741824 bytes")) << msg;
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_ONNX
