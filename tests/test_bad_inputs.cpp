// Malformed models, weights, inputs and command lines. Every case must give a
// kestrel::Error through the API (checked in a child process, so a crash fails
// one test instead of killing the binary) and, through `kestrel run`, exit
// status 1 with one line on stderr naming the file (line / layer / blob where
// there is one) and the reason. Usage errors exit 2.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "frontend/ncnn/param.h"
#include "kestrel/kestrel.h"
#include "test_helpers.h"

using namespace kestrel;
using ktest::Bytes;

namespace {

using Keys = std::vector<std::string>;

// What `kestrel run` does, through the API.
struct RunSpec {
    std::string model;   // .param or .param.bin
    std::string weights; // "" = do not load weights
    std::vector<std::pair<std::string, std::string>> npy_inputs;
    std::vector<std::pair<std::string, Shape>> zero_inputs;
    std::vector<std::string> outputs; // empty = the model's outputs
};

void api_run(const RunSpec& s)
{
    Net net;
    const bool bin = s.model.size() > 10 && s.model.compare(s.model.size() - 10, 10, ".param.bin") == 0;
    if (bin) net.load_param_bin(s.model);
    else net.load_param(s.model);
    if (!s.weights.empty()) net.load_model(s.weights);
    Session session(net);
    std::vector<Tensor> keep;
    for (const auto& in : s.npy_inputs) {
        keep.push_back(read_npy(in.second));
        session.set_input(in.first, keep.back());
    }
    for (const auto& in : s.zero_inputs) {
        keep.push_back(Tensor::zeros(in.second));
        session.set_input(in.first, keep.back());
    }
    session.run(s.outputs.empty() ? net.output_names() : s.outputs);
}

// A string literal with embedded NUL bytes, all of it.
template <size_t N>
std::string lit(const char (&s)[N])
{
    return std::string(s, N - 1);
}

// Npy bytes around a header dict (version 1.0).
std::string npy_bytes(const std::string& dict, const std::string& data)
{
    std::string header = dict;
    while ((10 + header.size() + 1) % 64) header += ' ';
    header += '\n';
    std::string f = "\x93NUMPY";
    f += '\x01';
    f += '\x00';
    f += static_cast<char>(header.size() & 0xff);
    f += static_cast<char>(header.size() >> 8);
    return f + header + data;
}

std::string f32_npy(const Shape& shape)
{
    Tensor t = Tensor::zeros(shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i % 7) - 3.f;
    std::string shape_text = "(";
    for (size_t i = 0; i < shape.size(); ++i) shape_text += (i ? ", " : "") + std::to_string(shape[i]);
    shape_text += shape.size() == 1 ? ",)" : ")";
    return npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_text + ", }",
                     std::string(static_cast<const char*>(t.raw()), t.nbytes()));
}

// Input (c=3,h=4,w=4) -> ReLU. No weights.
const char* const kReluModel = "7767517\n2 2\nInput in 0 1 in 0=4 1=4 2=3\nReLU relu 1 1 in out\n";
// Same without a declared input shape.
const char* const kReluModelNoShape = "7767517\n2 2\nInput in 0 1 in\nReLU relu 1 1 in out\n";
// Input (3,4,4) -> Convolution 1x1 3->2 with bias -> ReLU; weights: tag, 6 floats, 2 floats.
const char* const kConvModel = "7767517\n3 3\nInput data 0 1 data 0=4 1=4 2=3\n"
                               "Convolution conv 1 1 data c 0=2 1=1 5=1 6=6\nReLU relu 1 1 c out\n";
std::string conv_model_bin()
{
    Bytes b;
    b.u32(0);
    for (int i = 0; i < 6; ++i) b.f32(0.5f * static_cast<float>(i) - 1.f);
    b.f32(0.25f).f32(-0.25f);
    return std::string(b.b.begin(), b.b.end());
}

class BadInput : public ::testing::Test {
protected:
    ktest::TempDir dir;

    std::string write(const std::string& name, const std::string& content)
    {
        const std::string path = dir.file(name);
        ktest::write_file(path, content);
        return path;
    }
    std::string write(const std::string& name, const Bytes& content)
    {
        return write(name, std::string(content.b.begin(), content.b.end()));
    }

    static void expect_api(const std::function<void()>& fn, const Keys& keys)
    {
        EXPECT_TRUE(ktest::api_fails_with(fn, keys));
    }
    static void expect_cli(const std::vector<std::string>& args, const Keys& keys)
    {
        EXPECT_TRUE(ktest::cli_fails_with(ktest::run_cli(args), 1, keys));
    }
    // A broken .param: loading it fails (API) and `kestrel run` on it fails (CLI).
    void expect_param_rejected(const std::string& text, const std::function<Keys(const std::string&)>& keys)
    {
        const std::string path = write("m.param", text);
        SCOPED_TRACE("model text:\n" + text.substr(0, 400));
        expect_api([&] { Net().load_param(path); }, keys(path));
        expect_cli({"run", path}, keys(path));
    }
    // A broken .param.bin, the same way.
    void expect_param_bin_rejected(const Bytes& bytes, const Keys& extra)
    {
        const std::string path = write("m.param.bin", bytes);
        Keys keys = extra;
        keys.push_back(path);
        expect_api([&] { Net().load_param_bin(path); }, keys);
        expect_cli({"run", path}, keys);
    }
};

// ---------------------------------------------------------------------------
// .bin

class BadInputMobilenet : public BadInput {
protected:
    void SetUp() override
    {
        param = write("m.param", ktest::read_file(ktest::shared_path("models/mobilenet_v2/ncnn.param")));
        bin_path = dir.file("m.bin");
    }
    std::string original() const { return ktest::read_file(ktest::shared_path("models/mobilenet_v2/ncnn.bin")); }
    std::string param, bin_path;
};

TEST_F(BadInputMobilenet, TruncatedBin)
{
    const std::string full = original();
    const std::string first = "/features/features.0/features.0.0/Conv", last = "/classifier/classifier.1/Gemm";
    const std::vector<std::pair<size_t, std::string>> cuts = {
        {full.size() - 100, last}, // inside the last layer's bias
        {full.size() - 4, last},
        {full.size() / 2, ""},
        {2, first}, // inside the first tag
        {0, first},
    };
    for (const auto& cut : cuts) {
        SCOPED_TRACE("truncated to " + std::to_string(cut.first) + " bytes");
        ktest::write_file(bin_path, full.substr(0, cut.first));
        Keys keys = {bin_path, "truncated|end of file"};
        if (!cut.second.empty()) keys.push_back(cut.second);
        expect_api([&] { api_run({param, bin_path, {}, {}, {}}); }, keys);
        expect_cli({"run", param, "--input", "input=" + ktest::shared_path("models/mobilenet_v2/ncnn_input.npy")},
                   keys);
    }
}

TEST_F(BadInputMobilenet, OversizedBin)
{
    const std::string full = original();
    for (size_t extra : {size_t(1), size_t(4), size_t(1000)}) {
        SCOPED_TRACE(std::to_string(extra) + " extra bytes");
        ktest::write_file(bin_path, full + std::string(extra, '\0'));
        const Keys keys = {bin_path, std::to_string(extra) + " bytes", "left over|trailing|extra|does not match"};
        expect_api([&] { api_run({param, bin_path, {}, {}, {}}); }, keys);
        expect_cli({"run", param, "--weights", bin_path}, keys);
    }
}

TEST_F(BadInputMobilenet, MissingBinForAModelWithWeights)
{
    // No m.bin next to m.param.
    expect_cli({"run", param, "--input", "input=" + ktest::shared_path("models/mobilenet_v2/ncnn_input.npy")},
               {bin_path, "cannot open|not found|no such|missing", "weights"});
    expect_cli({"run", param, "--weights", dir.file("nope.bin")}, {dir.file("nope.bin"), "cannot open|no such"});
    // API: a session over a net whose weights were never loaded, and loading a missing file.
    expect_api([&] {
        Net net;
        net.load_param(param);
        Session s(net);
    }, {param, "weights"});
    expect_api([&] { api_run({param, bin_path, {}, {}, {}}); }, {bin_path, "cannot open|no such"});
}

TEST_F(BadInputMobilenet, WrongChannelCountInNpy)
{
    ktest::write_file(bin_path, original());
    const std::string npy = write("x.npy", f32_npy({4, 224, 224}));
    const Keys keys = {param, "/features/features.0/features.0.0/Conv", "channels", "4"};
    expect_api([&] { api_run({param, bin_path, {{"input", npy}}, {}, {}}); }, keys);
    expect_cli({"run", param, "--input", "input=" + npy}, keys);
}

TEST_F(BadInput, TinyModelBinTooShortOrTooLong)
{
    const std::string param = write("c.param", kConvModel);
    const std::string good = conv_model_bin();
    const std::string bin = dir.file("c.bin");
    ktest::write_file(bin, good.substr(0, good.size() - 1));
    expect_api([&] { api_run({param, bin, {}, {}, {}}); }, {bin, "truncated|end of file", "conv"});
    expect_cli({"run", param}, {bin, "truncated|end of file", "conv"});
    ktest::write_file(bin, good + "\x01\x02\x03\x04");
    expect_api([&] { api_run({param, bin, {}, {}, {}}); }, {bin, "4 bytes"});
    expect_cli({"run", param}, {bin, "4 bytes"});
}

// ---------------------------------------------------------------------------
// .param text

TEST_F(BadInput, GarbageTokensInParam)
{
    const std::string base = "7767517\n2 2\nInput in 0 1 in 0=4 1=4 2=3\n";
    const std::vector<std::pair<std::string, std::function<Keys(const std::string&)>>> cases = {
        {std::string(kReluModel) + "%%garbage%%\n", [](const std::string& p) { return Keys{p + ":5", "%%garbage%%"}; }},
        {"7767517\nabc 2\nInput in 0 1 in\n", [](const std::string& p) { return Keys{p + ":2", "abc", "layer count"}; }},
        {"7767517\n2 2\nInput in zz 1 in\nReLU relu 1 1 in out\n",
         [](const std::string& p) { return Keys{p + ":3", "zz", "bottom count"}; }},
        {base + "ReLU relu 1 1 in out 0=1.2.3\n", [](const std::string& p) { return Keys{p + ":4", "relu", "1.2.3"}; }},
        {base + "ReLU relu 1 1 in out 0=\n", [](const std::string& p) { return Keys{p + ":4", "relu", "param 0"}; }},
        {base + "ReLU relu 1 1 in out 5=1,,2\n", [](const std::string& p) { return Keys{p + ":4", "relu", "5"}; }},
        {base + "ReLU relu 1 1 in out 32=1\n", [](const std::string& p) { return Keys{p + ":4", "relu", "32"}; }},
        {base + "ReLU relu 1 1 in out -23305=3,1,2\n",
         [](const std::string& p) { return Keys{p + ":4", "relu", "3 elements|length"}; }},
        {base + "ReLU relu 1 1 in out 6=\"abc\n",
         [](const std::string& p) { return Keys{p + ":4", "unterminated|string"}; }},
        {base + "ReLU relu 1 1 in out 0=abc\n", [](const std::string& p) { return Keys{p + ":4", "relu", "param 0"}; }},
        {base + "ReLU " + std::string(300, 'n') + " 1 1 in out\n",
         [](const std::string& p) { return Keys{p + ":4", "255"}; }},
        {base + "ReLU relu 1 1 in out 0=0 =5\n", [](const std::string& p) { return Keys{p + ":4", "=5"}; }},
        {lit("\x01\x02\xff\xfe garbage \x80\x81"), [](const std::string& p) { return Keys{p, "magic"}; }},
        {"", [](const std::string& p) { return Keys{p, "magic|end of file|empty"}; }},
    };
    for (const auto& c : cases) expect_param_rejected(c.first, c.second);
}

TEST_F(BadInput, BadMagic)
{
    expect_param_rejected("7767518\n2 2\nInput in 0 1 in\nReLU relu 1 1 in out\n",
                          [](const std::string& p) { return Keys{p + ":1", "magic", "7767518"}; });
    expect_param_rejected("7767517.0\n2 2\nInput in 0 1 in\nReLU relu 1 1 in out\n",
                          [](const std::string& p) { return Keys{p + ":1", "magic"}; });
    Bytes b;
    b.i32(7767518).i32(1).i32(1).i32(16).i32(0).i32(1).i32(0).i32(-233);
    expect_param_bin_rejected(b, {"magic"});
    // A text .param named .param.bin: Net::load_param_bin reads it as binary
    // (a clean error); the command tells the format from the content and runs it.
    const std::string misnamed = write("text.param.bin", Bytes().str(kReluModel));
    expect_api([&] { Net().load_param_bin(misnamed); }, {misnamed, "magic"});
    const ktest::CliResult run = ktest::run_cli({"run", misnamed});
    EXPECT_EQ(run.exit_code, 0) << run.describe();
}

TEST_F(BadInput, BadCounts)
{
    const std::string layers = "Input in 0 1 in 0=4 1=4 2=3\nReLU relu 1 1 in out\n";
    expect_param_rejected("7767517\n0 2\n" + layers,
                          [](const std::string& p) { return Keys{p + ":2", "layer count", "0"}; });
    expect_param_rejected("7767517\n2 0\n" + layers,
                          [](const std::string& p) { return Keys{p + ":2", "blob count", "0"}; });
    expect_param_rejected("7767517\n-1 2\n" + layers,
                          [](const std::string& p) { return Keys{p + ":2", "layer count", "-1"}; });
    expect_param_rejected("7767517\n2 -3\n" + layers,
                          [](const std::string& p) { return Keys{p + ":2", "blob count", "-3"}; });
    expect_param_rejected("7767517\n2147483648 2\n" + layers,
                          [](const std::string& p) { return Keys{p + ":2", "2147483648"}; });
    // Fewer layers than declared.
    expect_param_rejected("7767517\n3 3\n" + layers, [](const std::string& p) { return Keys{p, "3 layers|declares 3"}; });
    expect_param_rejected("7767517\n1000000 3\n" + layers,
                          [](const std::string& p) { return Keys{p, "1000000"}; });
    // More blobs than declared.
    expect_param_rejected("7767517\n2 1\n" + layers, [](const std::string& p) { return Keys{p + ":4", "blob", "1"}; });
    // More layers than declared: ncnn reads the declared count and ignores well-formed
    // records after it (its own benchmark file nanodet_m.param has one), so we do too;
    // only the declared layers exist.
    {
        Net net;
        ASSERT_NO_THROW(net.load_param_mem("7767517\n1 2\n" + layers));
        EXPECT_EQ(net.graph().layers.size(), 1u);
    }
    // Garbage after the declared layers is still an error naming the token.
    expect_param_rejected("7767517\n1 2\n" + layers + "%%%\n",
                          [](const std::string& p) { return Keys{p + ":5", "%%%"}; });

    // .param.bin: zero / negative counts.
    expect_param_bin_rejected(Bytes().i32(7767517).i32(0).i32(1), {"layer count", "0"});
    expect_param_bin_rejected(Bytes().i32(7767517).i32(1).i32(-4), {"blob count", "-4"});
}

TEST_F(BadInput, UnknownLayerType)
{
    const std::string base = "7767517\n2 2\nInput in 0 1 in 0=4 1=4 2=3\n";
    expect_param_rejected(base + "Frobnicate frob 1 1 in out\n",
                          [](const std::string& p) { return Keys{p + ":4", "Frobnicate", "frob", "unknown"}; });
    // .param.bin: an index past ncnn's registry.
    Bytes head;
    head.i32(7767517).i32(2).i32(2).i32(16).i32(0).i32(1).i32(0).i32(-233);
    expect_param_bin_rejected(Bytes().append(head).i32(4000).i32(1).i32(1).i32(0).i32(1).i32(-233), {"4000"});
}

// Every layer of an unknown type is named in the one error, with its line,
// by the API and by `kestrel info` and `run`: all that a model lacks at once.
TEST_F(BadInput, AllUnknownLayerTypesListedAtOnce)
{
    const std::string text = "7767517\n4 4\nInput in 0 1 in 0=4 1=4 2=3\nFrobnicate frob 1 1 in a\n"
                             "ReLU relu 1 1 a b\nWibble wib 1 1 b out\n";
    const Keys keys{":4: Frobnicate 'frob'", "line 6 Wibble 'wib'", "2 layers of unknown types"};
    expect_param_rejected(text, [&](const std::string&) { return keys; });
    EXPECT_TRUE(ktest::cli_fails_with(ktest::run_cli({"info", dir.file("m.param")}), 1, keys));
}

TEST_F(BadInput, BottomThatNoLayerProduces)
{
    const std::string base = "7767517\n3 3\nInput in 0 1 in 0=4 1=4 2=3\n";
    expect_param_rejected(base + "ReLU relu 1 1 nothere out\nReLU r2 1 1 out o2\n",
                          [](const std::string& p) { return Keys{p + ":4", "relu", "nothere"}; });
    // Produced only later: layers must be in topological order.
    expect_param_rejected(base + "ReLU r2 1 1 mid out\nReLU r1 1 1 in mid\n",
                          [](const std::string& p) { return Keys{p + ":4", "r2", "mid"}; });
    // A blob produced twice.
    expect_param_rejected(base + "ReLU r1 1 1 in a\nReLU r2 1 1 a in\n",
                          [](const std::string& p) { return Keys{p + ":5", "r2", "'in'"}; });
    // .param.bin: ReLU reads blob 1, which nothing produces; and a blob index out of range.
    Bytes head;
    head.i32(7767517).i32(2).i32(3).i32(16).i32(0).i32(1).i32(0).i32(-233);
    expect_param_bin_rejected(Bytes().append(head).i32(26).i32(1).i32(1).i32(1).i32(2).i32(-233),
                              {"not produced|no producer|never produced"});
    expect_param_bin_rejected(Bytes().append(head).i32(26).i32(1).i32(1).i32(7).i32(2).i32(-233),
                              {"7", "blob index|out of range"});
}

TEST_F(BadInput, ParamValuesOf2To31AndBeyond)
{
    const std::string base = "7767517\n2 2\nInput in 0 1 in 0=4 1=4 2=3\n";
    expect_param_rejected(base + "Convolution conv 1 1 in out 0=2147483648 1=1 6=3\n",
                          [](const std::string& p) { return Keys{p + ":4", "conv", "2147483648"}; });
    expect_param_rejected(base + "Convolution conv 1 1 in out 0=1 1=99999999999999999999 6=3\n",
                          [](const std::string& p) { return Keys{p + ":4", "conv", "99999999999999999999"}; });
    expect_param_rejected("7767517\n2 2\nInput in 0 1 in 0=-2147483649\nReLU relu 1 1 in out\n",
                          [](const std::string& p) { return Keys{p + ":3", "'in'", "-2147483649"}; });
    expect_param_rejected(base + "ReLU relu 1 1 in out 5=1,2147483648\n",
                          [](const std::string& p) { return Keys{p + ":4", "relu", "2147483648"}; });
    expect_param_rejected(base + "ReLU relu 1 1 in out -23305=2147483648,1\n",
                          [](const std::string& p) { return Keys{p + ":4", "relu", "2147483648"}; });
    expect_param_rejected(base + "ReLU relu 1 1 in out -2147483649=1\n",
                          [](const std::string& p) { return Keys{p + ":4", "relu", "-2147483649"}; });
}

TEST_F(BadInput, NegativeAndZeroSizes)
{
    const std::string base = "7767517\n2 2\nInput in 0 1 in 0=4 1=4 2=3\n";
    struct Case {
        std::string layer;
        Keys keys;
    };
    const std::vector<Case> cases = {
        {"Convolution conv 1 1 in out 0=-5 1=1 6=15", {"conv", "num_output", "-5"}},
        {"Convolution conv 1 1 in out 0=5 1=0 6=15", {"conv", "kernel"}},
        {"Convolution conv 1 1 in out 0=5 1=1 6=-9", {"conv", "weight_data_size", "-9"}},
        {"Convolution conv 1 1 in out 0=5 1=1 6=0", {"conv", "weight_data_size"}},
        {"Convolution conv 1 1 in out 0=5 1=1 3=0 6=15", {"conv", "stride"}},
        {"Convolution conv 1 1 in out 0=5 1=1 2=-1 6=15", {"conv", "dilation"}},
        {"Convolution conv 1 1 in out 0=5 1=1 4=-7 6=15", {"conv", "pad", "-7"}},
        {"ConvolutionDepthWise dw 1 1 in out 0=3 1=1 6=3 7=0", {"dw", "group"}},
        {"InnerProduct fc 1 1 in out 0=-5 2=10", {"fc", "num_output", "-5"}},
        {"InnerProduct fc 1 1 in out 0=5 2=0", {"fc", "weight_data_size"}},
        {"Pooling pool 1 1 in out 0=0 1=0", {"pool", "kernel"}},
        {"Pooling pool 1 1 in out 0=0 1=2 2=-1", {"pool", "stride"}},
        {"Reshape rs 1 1 in out 0=-5", {"rs", "-5"}},
    };
    for (const Case& c : cases)
        expect_param_rejected(base + c.layer + "\n", [&](const std::string& p) {
            Keys k = c.keys;
            k.push_back(p + ":4");
            return k;
        });
    expect_param_rejected("7767517\n2 2\nInput in 0 1 in 0=4 1=-3 2=3\nReLU relu 1 1 in out\n",
                          [](const std::string& p) { return Keys{p + ":3", "'in'", "param 1|-3"}; });
}

TEST_F(BadInput, ConvolutionSizeProductsOverflow)
{
    // num_output * kernel_w * kernel_h overflows 64 bits while validating weight_data_size.
    expect_param_rejected("7767517\n2 2\nInput in 0 1 in 0=4 1=4 2=3\n"
                          "Convolution conv 1 1 in out 0=2147483647 1=2147483647 11=2147483647 6=2147483647\n",
                          [](const std::string& p) { return Keys{p + ":4", "conv", "weight_data_size|overflow|too large"}; });

    // weight_data_size near 2^31 with an 8-byte .bin: refused before allocating 8 GB.
    {
        const std::string param = write("w.param", "7767517\n2 2\nInput in 0 1 in 0=1 1=1 2=2147483647\n"
                                                   "Convolution conv 1 1 in out 0=1 1=1 6=2147483647\n");
        const std::string bin = write("w.bin", Bytes().u32(0).f32(1.f));
        expect_api([&] { api_run({param, bin, {}, {}, {}}); }, {bin, "conv", "truncated|too large"});
        expect_cli({"run", param}, {bin, "conv", "truncated|too large"});
    }

    // Output shape: pads make the output (1, 2^32-1, 2^30+1): about 2^62 elements,
    // 2^64 bytes. Must be refused as too large, not wrap around.
    {
        const std::string param = write("o.param", "7767517\n2 2\nInput in 0 1 in 0=1 1=1 2=1\n"
                                                   "Convolution conv 1 1 in out 0=1 1=1 6=1 4=536870912 15=536870912 "
                                                   "14=2147483647 16=2147483647\n");
        const std::string bin = write("o.bin", Bytes().u32(0).f32(1.f));
        const Keys keys = {param + ":4", "conv", "too large|overflow"};
        expect_api([&] { api_run({param, bin, {}, {{"in", {1, 1, 1}}}, {}}); }, keys);
        expect_cli({"run", param}, keys);
    }
    // Output shape whose element count itself overflows int64.
    {
        const std::string param = write("p.param", "7767517\n2 2\nInput in 0 1 in 0=1 1=1 2=1\n"
                                                   "Convolution conv 1 1 in out 0=1 1=1 6=1 4=2147483647 "
                                                   "14=2147483647\n");
        const std::string bin = write("p.bin", Bytes().u32(0).f32(1.f));
        const Keys keys = {param + ":4", "conv", "too large|overflow"};
        expect_api([&] { api_run({param, bin, {}, {{"in", {1, 1, 1}}}, {}}); }, keys);
        expect_cli({"run", param}, keys);
    }
}

TEST_F(BadInput, OtherLayerShapeProductsOverflow)
{
    // Reshape target dims whose product overflows.
    {
        const std::string param = write("r.param", "7767517\n2 2\nInput in 0 1 in 0=4 1=4 2=3\n"
                                                   "Reshape rs 1 1 in out 0=2147483647 1=2147483647 11=2147483647 "
                                                   "2=2147483647\n");
        const Keys keys = {param + ":4", "rs", "overflow|too large|cannot reshape"};
        expect_api([&] { api_run({param, "", {}, {{"in", {3, 4, 4}}}, {}}); }, keys);
        expect_cli({"run", param}, keys);
        const std::string param2 = write("r2.param", "7767517\n2 2\nInput in 0 1 in 0=4 1=4 2=3\n"
                                                     "Reshape rs 1 1 in out 0=-1 1=2147483647 11=2147483647 "
                                                     "2=2147483647\n");
        expect_api([&] { api_run({param2, "", {}, {{"in", {3, 4, 4}}}, {}}); },
                   {param2 + ":4", "rs", "overflow|too large|cannot"});
        expect_cli({"run", param2}, {param2 + ":4", "rs", "overflow|too large|cannot"});
    }
    // Adaptive pooling to (1, 2^31-1, 2^31-1): about 2^62 elements, 2^64 bytes.
    {
        const std::string param = write("a.param", "7767517\n2 2\nInput in 0 1 in 0=4 1=4 2=1\n"
                                                   "Pooling pool 1 1 in out 0=0 7=1 8=2147483647 18=2147483647\n");
        const Keys keys = {param + ":4", "pool", "too large|overflow"};
        expect_api([&] { api_run({param, "", {}, {{"in", {1, 4, 4}}}, {}}); }, keys);
        expect_cli({"run", param}, keys);
    }
}

TEST_F(BadInput, InputShapeProductsOverflow)
{
    // Declared dims whose product overflows (the CLI makes a random input of that shape).
    const std::string declared = write("d.param", "7767517\n2 2\nInput in 0 1 in 0=2147483647 1=2147483647 "
                                                  "11=2147483647 2=2147483647\nReLU relu 1 1 in out\n");
    expect_api([&] {
        Net net;
        net.load_param(declared);
        Tensor t(net.input_shape("in"));
    }, {"overflow|too large"});
    expect_cli({"run", declared}, {declared, "'in'", "overflow|too large"});

    // The same through --shape.
    const std::string plain = write("n.param", kReluModelNoShape);
    expect_cli({"run", plain, "--shape", "in=2147483648,2147483648,2147483648"},
               {plain, "'in'", "overflow|too large"});
    // No overflow, but 2^48 floats: refused before allocating.
    expect_cli({"run", plain, "--shape", "in=65536,65536,65536"}, {plain, "'in'", "too large"});
    const std::string big = write("b.param", "7767517\n2 2\nInput in 0 1 in 0=65536 1=65536 2=65536\n"
                                             "ReLU relu 1 1 in out\n");
    expect_cli({"run", big}, {big, "'in'", "too large"});
}

// ---------------------------------------------------------------------------
// .npy inputs

TEST_F(BadInput, NpyWithCorruptHeader)
{
    const std::string param = write("m.param", kReluModel);
    const std::string data(3 * 4 * 4 * 4, '\0');
    const std::vector<std::pair<std::string, Keys>> cases = {
        {lit("\x93NUMPZ\x01\x00\x10\x00{}              \n"), {"magic"}},
        {"tiny", {"magic|truncated"}},
        {npy_bytes("{'descr': '<f4', 'fortran_order': False, }", data), {"shape"}},
        {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3,abc), }", data), {"shape"}},
        {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 4", data), {"header|shape"}},
        {npy_bytes("{'descr': <f4, 'fortran_order': False, 'shape': (3, 4, 4), }", data), {"descr"}},
        {npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4, 4), }", data), {"Fortran"}},
        {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4, 4), }", data), {"shape|-"}},
        {lit("\x93NUMPY\x01\x00\xff\x7f{'descr'"), {"truncated|header"}},
        {lit("\x93NUMPY\x09\x00\x10\x00{}              \n"), {"version"}},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE("case " + std::to_string(i));
        const std::string npy = write("bad" + std::to_string(i) + ".npy", cases[i].first);
        Keys keys = cases[i].second;
        keys.push_back(npy);
        expect_api([&] { read_npy(npy); }, keys);
        expect_cli({"run", param, "--input", "in=" + npy}, keys);
    }
}

TEST_F(BadInput, NpyWithTruncatedOrExtraData)
{
    const std::string param = write("m.param", kReluModel);
    const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 4), }";
    const std::vector<std::pair<std::string, Keys>> cases = {
        {npy_bytes(dict, std::string(100, '\0')), {"truncated", "192"}},
        {npy_bytes(dict, ""), {"truncated"}},
        {npy_bytes(dict, std::string(200, '\0')), {"8 bytes"}},
        // A huge declared shape with no data: refused without allocating.
        {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000, 100000), }", "abcd"),
         {"too large|truncated"}},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE("case " + std::to_string(i));
        const std::string npy = write("t" + std::to_string(i) + ".npy", cases[i].first);
        Keys keys = cases[i].second;
        keys.push_back(npy);
        expect_api([&] { read_npy(npy); }, keys);
        expect_cli({"run", param, "--input", "in=" + npy}, keys);
    }
}

TEST_F(BadInput, NpyWithWrongDtype)
{
    const std::string param = write("c.param", kConvModel);
    write("c.bin", conv_model_bin());
    const std::string bin = dir.file("c.bin");
    const std::string f8 = write("f8.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4, 4), }",
                                                     std::string(3 * 4 * 4 * 8, '\0')));
    expect_api([&] { api_run({param, bin, {{"data", f8}}, {}, {}}); }, {"conv", "float64", "float32"});
    expect_cli({"run", param, "--input", "data=" + f8}, {param, "conv", "float64"});
    const std::string i4 = write("i4.npy", npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4, 4), }",
                                                     std::string(3 * 4 * 4 * 4, '\0')));
    expect_api([&] { api_run({param, bin, {{"data", i4}}, {}, {}}); }, {"conv", "int32", "float32"});
    expect_cli({"run", param, "--input", "data=" + i4}, {param, "conv", "int32"});
    // Big-endian and non-numeric dtypes are refused by the reader.
    const std::string be = write("be.npy", npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (3, 4, 4), }",
                                                     std::string(3 * 4 * 4 * 4, '\0')));
    expect_api([&] { read_npy(be); }, {be, ">f4"});
    expect_cli({"run", param, "--input", "data=" + be}, {be, ">f4"});
    const std::string obj = write("obj.npy", npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (3,), }",
                                                       std::string(24, '\0')));
    expect_cli({"run", param, "--input", "data=" + obj}, {obj, "|O"});
}

TEST_F(BadInput, NpyWithWrongShape)
{
    const std::string param = write("c.param", kConvModel);
    write("c.bin", conv_model_bin());
    const std::string bin = dir.file("c.bin");
    const std::string c4 = write("c4.npy", f32_npy({4, 4, 4}));
    expect_api([&] { api_run({param, bin, {{"data", c4}}, {}, {}}); }, {param + ":4", "conv", "channels", "4"});
    expect_cli({"run", param, "--input", "data=" + c4}, {param + ":4", "conv", "channels", "4"});
    const std::string r2 = write("r2.npy", f32_npy({4, 4}));
    expect_api([&] { api_run({param, bin, {{"data", r2}}, {}, {}}); }, {param + ":4", "conv", "(4,4)"});
    expect_cli({"run", param, "--input", "data=" + r2}, {param + ":4", "conv", "(4,4)"});
}

// ---------------------------------------------------------------------------
// Names

TEST_F(BadInput, InputNameTheModelLacks)
{
    const std::string param = write("m.param", kReluModel);
    const std::string npy = write("x.npy", f32_npy({3, 4, 4}));
    expect_cli({"run", param, "--input", "nosuch=" + npy}, {param, "'nosuch'", "input"});
    expect_cli({"run", param, "--input", "out=" + npy}, {param, "'out'", "input"});
    expect_api([&] {
        Net net;
        net.load_param(param);
        Session s(net);
        Tensor t = read_npy(npy);
        s.set_input("nosuch", t);
    }, {param, "'nosuch'"});
    expect_api([&] {
        Net net;
        net.load_param(param);
        (void)net.input_shape("nosuch");
    }, {"'nosuch'"});
}

TEST_F(BadInput, OutputBlobTheModelLacks)
{
    const std::string param = write("m.param", kReluModel);
    expect_cli({"run", param, "--output", "nosuch=" + dir.file("o.npy")}, {param, "'nosuch'"});
    expect_api([&] { api_run({param, "", {}, {{"in", {3, 4, 4}}}, {"nosuch"}}); }, {param, "'nosuch'"});
}

TEST_F(BadInput, MissingOrUnreadableModelFile)
{
    const std::string missing = dir.file("nope.param");
    expect_cli({"run", missing}, {missing, "cannot open|no such|not found"});
    expect_cli({"info", missing}, {missing, "cannot open|no such|not found"});
    expect_api([&] { Net().load_param(missing); }, {missing, "cannot open|no such|not found"});
    expect_api([&] { Net().load_param_bin(dir.file("nope.param.bin")); }, {dir.file("nope.param.bin")});
    // A directory where the model should be.
    const std::string sub = dir.file("sub.param");
    ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
    expect_cli({"run", sub}, {sub});
    expect_api([&] { Net().load_param(sub); }, {sub});
}

TEST_F(BadInput, ApiCallsOnAnEmptyNet)
{
    const std::string bin = write("c.bin", conv_model_bin());
    const std::string data = conv_model_bin();
    expect_api([&] { Net().load_model(bin); }, {"param"});
    expect_api([&] { Net().load_model_mem(data.data(), data.size()); }, {"param"});
    expect_api([&] { Net().load_model([](void*, size_t) -> size_t { return 0; }); }, {"param"});
    expect_api([&] { Net().load_model_zeros(); }, {"param"});
    expect_api([&] { Session s{Net()}; }, {"model|net"});
    expect_api([&] { (void)Net().input_names(); }, {"model|net"});
}

// ---------------------------------------------------------------------------
// .param.bin structure

TEST_F(BadInput, ParamBinStructure)
{
    Bytes good;
    good.i32(7767517).i32(2).i32(2);
    good.i32(16).i32(0).i32(1).i32(0).i32(0).i32(4).i32(1).i32(4).i32(2).i32(3).i32(-233);
    good.i32(26).i32(1).i32(1).i32(0).i32(1).i32(-233);
    {
        // Sanity: the intact file loads.
        Net net;
        ASSERT_NO_THROW(net.load_param_bin_mem(good.b.data(), good.size()));
    }
    Bytes cut = good;
    cut.b.resize(cut.size() - 6);
    expect_param_bin_rejected(cut, {"end of file|truncated"});
    expect_param_bin_rejected(Bytes().append(good).i32(0), {"4", "bytes"});
    // Negative bottom count; string longer than 255; huge array length with no data.
    Bytes head;
    head.i32(7767517).i32(2).i32(2).i32(16).i32(0).i32(1).i32(0).i32(-233);
    expect_param_bin_rejected(Bytes().append(head).i32(26).i32(-1).i32(1).i32(0).i32(1).i32(-233),
                              {"bottom count", "-1"});
    expect_param_bin_rejected(Bytes().append(head).i32(26).i32(1).i32(1).i32(0).i32(1).i32(-23406).i32(300),
                              {"string", "300"});
    expect_param_bin_rejected(Bytes().append(head).i32(26).i32(1).i32(1).i32(0).i32(1).i32(-23305).i32(1 << 30),
                              {"array", "1073741824|end of file"});
    expect_param_bin_rejected(Bytes().append(head).i32(26).i32(1).i32(1).i32(0).i32(1).i32(40).i32(1).i32(-233),
                              {"40", "param id|out of range"});
}

// ---------------------------------------------------------------------------
// Usage errors

TEST_F(BadInput, UsageErrorsExitWithStatus2)
{
    const std::string param = write("m.param", kReluModel);
    EXPECT_TRUE(ktest::cli_usage_error(ktest::run_cli({"run", param, "--bogus"}), {"--bogus"}));
    EXPECT_TRUE(ktest::cli_usage_error(ktest::run_cli({"run"}), {"MODEL"}));
    EXPECT_TRUE(ktest::cli_usage_error(ktest::run_cli({"info"}), {"MODEL"}));
    EXPECT_TRUE(ktest::cli_usage_error(ktest::run_cli({"run", param, param}), {"MODEL"}));
    EXPECT_TRUE(ktest::cli_usage_error(ktest::run_cli({}), {"usage"}));
    EXPECT_TRUE(ktest::cli_usage_error(ktest::run_cli({"frobnicate", param}), {"frobnicate"}));
    EXPECT_TRUE(ktest::cli_usage_error(ktest::run_cli({"run", param, "--threads", "0"}), {"--threads"}));
    EXPECT_TRUE(ktest::cli_usage_error(ktest::run_cli({"run", param, "--threads", "two"}), {"--threads"}));
    EXPECT_TRUE(ktest::cli_usage_error(ktest::run_cli({"run", param, "--input", "in"}), {"--input"}));
    EXPECT_TRUE(ktest::cli_usage_error(ktest::run_cli({"run", param, "--shape", "in=0,3"}), {"shape"}));
    EXPECT_TRUE(ktest::cli_usage_error(ktest::run_cli({"run", param, "--shape", "in=3,-4"}), {"shape"}));
    EXPECT_TRUE(ktest::cli_usage_error(ktest::run_cli({"run", param, "--weights"}), {"--weights"}));
    // Sanity: the same model runs with good arguments.
    const ktest::CliResult ok = ktest::run_cli({"run", param, "--threads", "2"});
    EXPECT_EQ(ok.exit_code, 0) << ok.describe();
}

} // namespace
