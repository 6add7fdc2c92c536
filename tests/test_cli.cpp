// The `kestrel` command's surface: help and version, bench shapes in each
// model's own order, the summary table, --json (checked by Python's json
// parser), info without input shapes, and info --dot (checked by Graphviz).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "kernels/bf16_gemm.h"
#include "kestrel/npy.h"
#include "kestrel/op.h"
#include "test_helpers.h"
#ifdef KESTREL_HAVE_ONNX
#include "onnx_test_graph.h"
#endif

namespace kestrel {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Runs `command < file` through the shell; true when it exits 0.
bool accepts(const std::string& command, const std::string& file)
{
    return std::system((command + " < '" + file + "' > /dev/null 2>&1").c_str()) == 0;
}

bool have_program(const std::string& name)
{
    return std::system(("command -v " + name + " > /dev/null 2>&1").c_str()) == 0;
}

// A checker program CI installs: missing there is a failure, elsewhere a skip.
#define REQUIRE_PROGRAM(name)                                                                    \
    if (!have_program(name)) {                                                                   \
        if (std::getenv("CI")) FAIL() << name << " is missing (CI installs it)";                 \
        GTEST_SKIP() << name << " is not installed";                                             \
    }

TEST(Cli, HelpAndVersion)
{
    for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"}, {"-h"}, {"help"}}) {
        const ktest::CliResult r = ktest::run_cli(args);
        EXPECT_EQ(r.exit_code, 0) << r.describe();
        EXPECT_TRUE(has(r.out, "usage: kestrel <command>")) << r.describe();
        for (const char* c : {"run", "info", "bench", "convert"}) EXPECT_TRUE(has(r.out, std::string("  ") + c)) << c;
        EXPECT_TRUE(r.err.empty()) << r.describe();
    }
    for (const char* c : {"run", "info", "bench", "convert"}) {
        for (const std::vector<std::string>& args : {std::vector<std::string>{"help", c}, {c, "--help"}}) {
            const ktest::CliResult r = ktest::run_cli(args);
            EXPECT_EQ(r.exit_code, 0) << r.describe();
            EXPECT_TRUE(has(r.out, std::string("usage: kestrel ") + c)) << r.describe();
            EXPECT_FALSE(has(r.out, "<command>")) << r.describe(); // that command only
        }
    }
    const ktest::CliResult v = ktest::run_cli({"--version"});
    EXPECT_EQ(v.exit_code, 0) << v.describe();
    EXPECT_TRUE(has(v.out, "kestrel 0.")) << v.describe();
    // Still usage errors: nothing, an unknown command, help of one.
    EXPECT_EQ(ktest::run_cli({}).exit_code, 2);
    EXPECT_EQ(ktest::run_cli({"frobnicate"}).exit_code, 2);
    EXPECT_EQ(ktest::run_cli({"help", "frobnicate"}).exit_code, 2);
}

std::string tiny_param(const std::string& input_shape)
{
    return "7767517\n3 3\nInput in 0 1 in " + input_shape +
           "\nConvolution conv 1 1 in c 0=4 1=3 5=1 6=72 9=1\nReLU relu 1 1 c out\n";
}

TEST(Cli, BenchDirSummaryAndJson)
{
    ktest::TempDir dir;
    ktest::write_file(dir.file("a.param"), tiny_param("0=16 1=12 2=2"));
    ktest::write_file(dir.file("b.param"), tiny_param(""));
    ktest::write_file(dir.file("shapes.txt"), std::string("b 10,8,2\n"));
    const ktest::CliResult r = ktest::run_cli({"bench", dir.path(), "--loops", "2", "--warmup", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const size_t summary = r.out.find("summary (1 thread, ms)");
    ASSERT_NE(summary, std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\na ", summary), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nb ", summary), std::string::npos) << r.out;

    const std::string json = dir.file("bench.json");
    const ktest::CliResult j = ktest::run_cli({"bench", dir.path(), "--loops", "2", "--warmup", "0", "--json", "--profile"});
    ASSERT_EQ(j.exit_code, 0) << j.describe();
    ktest::write_file(json, j.out);
    REQUIRE_PROGRAM("python3");
    EXPECT_TRUE(accepts("python3 -c 'import json,sys; d=json.load(sys.stdin); "
                        "assert [m[\"name\"] for m in d[\"models\"]] == [\"a\", \"b\"]; "
                        "assert all(m[\"min_ms\"] <= m[\"median_ms\"] <= m[\"max_ms\"] for m in d[\"models\"]); "
                        "assert d[\"models\"][1][\"layers\"][0][\"output\"] in ([4,6,8], [2,8,10])'",
                        json))
        << j.out;
}

// .onnx shapes are in the model's own order, as `run` takes them; the same
// dims in ncnn's reversed order name another shape and fail.
TEST(Cli, BenchOnnxShapeInModelOrder)
{
    const std::string model = std::string(KESTREL_SHARED_DIR) + "/models/tiny_vit/model.onnx";
    if (!std::ifstream(model).good()) GTEST_SKIP() << model << " is missing";
    const ktest::CliResult r = ktest::run_cli({"bench", model, "--shape", "1,3,64,64", "--loops", "1", "--warmup", "0"});
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_TRUE(has(r.out, "median =")) << r.describe();
    const ktest::CliResult bad = ktest::run_cli({"bench", model, "--shape", "64,64,3,1", "--loops", "1", "--warmup", "0"});
    EXPECT_EQ(bad.exit_code, 1) << bad.describe();
}

// --precision bf16 reaches the session: the output moves off fp32's (on a CPU
// with bfloat16 dot products) but stays within 2e-2 of PyTorch's; a precision
// it does not know is a usage error.
TEST(Cli, RunWithBf16Precision)
{
    const std::string dir = std::string(KESTREL_SHARED_DIR) + "/models/tiny_vit/";
    if (!std::ifstream(dir + "model.onnx").good()) GTEST_SKIP() << dir << " is missing";
    ktest::TempDir tmp;
    Tensor outs[2];
    for (int bf16 = 0; bf16 < 2; ++bf16) {
        const std::string out = tmp.file("out" + std::to_string(bf16) + ".npy");
        const ktest::CliResult r = ktest::run_cli({"run", dir + "model.onnx", "--input", "input=" + dir + "input.npy",
                                                   "--output", "output=" + out, "--precision", bf16 ? "bf16" : "fp32"});
        ASSERT_EQ(r.exit_code, 0) << r.describe();
        outs[bf16] = read_npy(out);
    }
    const Tensor ref = read_npy(dir + "output.npy");
    ASSERT_EQ(outs[1].numel(), ref.numel());
    double largest = 0, worst = 0, moved = 0;
    for (int64_t i = 0; i < ref.numel(); ++i) {
        largest = std::max(largest, std::fabs(double(ref.data<float>()[i])));
        worst = std::max(worst, std::fabs(double(outs[1].data<float>()[i]) - ref.data<float>()[i]));
        moved = std::max(moved, std::fabs(double(outs[1].data<float>()[i]) - outs[0].data<float>()[i]));
    }
    EXPECT_LE(worst, 2e-2 * largest);
    if (bf16_gemm_has_dot_instructions()) {
        EXPECT_GT(moved, 0.0) << "--precision bf16 gave the fp32 output";
    }
    const ktest::CliResult bad = ktest::run_cli({"bench", dir + "model.onnx", "--precision", "fp8"});
    EXPECT_EQ(bad.exit_code, 2) << bad.describe();
    EXPECT_TRUE(has(bad.err, "--precision expects fp32 or bf16")) << bad.describe();
}

#ifdef KESTREL_HAVE_ONNX
// bfloat16 through .npy files: numpy has no bfloat16, so an input comes as
// its uint16 bits (ONNX's test data) or as 2-byte records ('<V2', or '|V2' as
// numpy writes them), and an output is written as 2-byte records.
TEST(Cli, RunReadsAndWritesBfloat16Npy)
{
    using layer_test::OnnxGraph;
    constexpr int kBf16 = onnx::TensorProto::BFLOAT16, kFloat = onnx::TensorProto::FLOAT;
    OnnxGraph g(13);
    g.input("b", {3}, kBf16);
    g.input("x", {2});
    OnnxGraph::attr_int(g.node("Cast", {"b"}, {"z"}), "to", kFloat);
    OnnxGraph::attr_int(g.node("Cast", {"x"}, {"y"}), "to", kBf16);
    g.output("z", 1);
    g.output("y", 1, kBf16);
    ktest::TempDir tmp;
    const std::string model = tmp.file("cast.onnx");
    std::ofstream(model, std::ios::binary) << g.model().SerializeAsString();
    const std::string x = tmp.file("x.npy");
    write_npy(x, layer_test::f32({2}, {1.f, 0.48033667f}));
    Tensor bits({3}, DType::U16);
    const uint16_t b[3] = {0x3f80, 0x4040, 0xc000}; // 1, 3, -2
    std::copy(b, b + 3, bits.data<uint16_t>());
    const std::string as_u16 = tmp.file("b_u16.npy"), as_v2 = tmp.file("b_v2.npy"), as_numpy = tmp.file("b_np.npy");
    write_npy(as_u16, bits);
    write_npy(as_v2, bits.view_as({3}, DType::BF16));
    { // numpy's own header for 2-byte records
        std::ifstream in(as_v2, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const size_t at = bytes.find("'<V2'");
        ASSERT_NE(at, std::string::npos);
        bytes[at + 1] = '|';
        std::ofstream(as_numpy, std::ios::binary) << bytes;
    }
    for (const std::string& input : {as_u16, as_v2, as_numpy}) {
        const std::string z = tmp.file("z.npy"), y = tmp.file("y.npy");
        const ktest::CliResult r = ktest::run_cli({"run", model, "--input", "b=" + input, "--input", "x=" + x,
                                                   "--output", "z=" + z, "--output", "y=" + y});
        ASSERT_EQ(r.exit_code, 0) << r.describe();
        const Tensor zt = read_npy(z), yt = read_npy(y);
        ASSERT_EQ(zt.dtype(), DType::F32);
        EXPECT_EQ(zt.data<float>()[0], 1.f);
        EXPECT_EQ(zt.data<float>()[1], 3.f);
        EXPECT_EQ(zt.data<float>()[2], -2.f);
        ASSERT_EQ(yt.dtype(), DType::BF16) << input;
        EXPECT_EQ(yt.data<uint16_t>()[0], 0x3f80);
        EXPECT_EQ(yt.data<uint16_t>()[1], 0x3ef6); // 0.48033667 rounded to nearest even: 0.48046875
    }
}

// A .npy file as numpy writes one: a 1.0 header padded to 64 bytes, then `body`.
void write_raw_npy(const std::string& path, const std::string& descr, const std::string& shape, const std::string& body)
{
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    header.append((10 + header.size() + 1 + 63) / 64 * 64 - 10 - header.size() - 1, ' ');
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    out << std::string("\x93NUMPY\x01\x00", 8) << static_cast<char>(header.size() & 0xff)
        << static_cast<char>(header.size() >> 8) << header << body;
}

// numpy's UTF-32 string arrays ('<U<n>') and bytes ('|S<n>') in, UTF-32 out.
TEST(Cli, RunReadsAndWritesStringNpy)
{
    using layer_test::OnnxGraph;
    OnnxGraph g(10);
    g.input("x", {2}, onnx::TensorProto::STRING);
    onnx::NodeProto* n = g.node("StringNormalizer", {"x"}, {"y"});
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("case_change_action");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("UPPER");
    g.output("y", 1, onnx::TensorProto::STRING);
    ktest::TempDir tmp;
    const std::string model = tmp.file("upper.onnx");
    std::ofstream(model, std::ios::binary) << g.model().SerializeAsString();
    const auto utf32 = [](const std::u32string& s, size_t width) {
        std::string bytes(width * 4, '\0');
        for (size_t k = 0; k < s.size(); ++k)
            for (int b = 0; b < 4; ++b) bytes[k * 4 + b] = static_cast<char>((s[k] >> (8 * b)) & 0xff);
        return bytes;
    };
    const std::string as_u = tmp.file("x_u.npy"), as_s = tmp.file("x_s.npy");
    write_raw_npy(as_u, "<U5", "(2,)", utf32(U"\u00c4rger", 5) + utf32(U"ab", 5));
    write_raw_npy(as_s, "|S3", "(2,)", std::string("abc", 3) + std::string("d\0\0", 3));
    const std::string y = tmp.file("y.npy");
    for (const auto& c : {std::make_pair(as_u, std::u32string(U"\u00c4RGER")), std::make_pair(as_s, std::u32string(U"ABC"))}) {
        const ktest::CliResult r = ktest::run_cli({"run", model, "--input", "x=" + c.first, "--output", "y=" + y});
        ASSERT_EQ(r.exit_code, 0) << r.describe();
        std::ifstream in(y, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::string descr = "'<U" + std::to_string(c.second.size()) + "'";
        EXPECT_NE(bytes.find(descr), std::string::npos) << bytes.substr(0, 80);
        const size_t body = bytes.size() - 2 * c.second.size() * 4; // two records of the widest's width
        EXPECT_EQ(body % 64, 0u);
        EXPECT_EQ(bytes.substr(body, c.second.size() * 4), utf32(c.second, c.second.size()));
        const Tensor yt = read_npy(y);
        ASSERT_EQ(yt.dtype(), DType::String);
        EXPECT_EQ(yt.data<std::string>()[1], c.first == as_u ? "AB" : "D");
    }
}

// Sequences through .npy files: NAME=FILE.npy is FILE_0.npy, FILE_1.npy, ...
// one per element, read for an input (as many as there are) and written for an output.
TEST(Cli, RunReadsAndWritesSequencesAsNumberedNpy)
{
    using layer_test::OnnxGraph;
    OnnxGraph g(13);
    onnx::ValueInfoProto* seq = g.graph()->add_input();
    seq->set_name("seq");
    seq->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
    g.input("m", {3, 2});
    g.node("SequenceLength", {"seq"}, {"n"});
    g.node("SplitToSequence", {"m"}, {"rows"});
    g.output("n", 0, onnx::TensorProto::INT64);
    onnx::ValueInfoProto* rows = g.graph()->add_output();
    rows->set_name("rows");
    *rows->mutable_type() = seq->type();
    ktest::TempDir tmp;
    const std::string model = tmp.file("seq.onnx");
    std::ofstream(model, std::ios::binary) << g.model().SerializeAsString();
    write_npy(tmp.file("s_0.npy"), layer_test::f32({2}, {1.f, 2.f}));
    write_npy(tmp.file("s_1.npy"), layer_test::f32({1}, {3.f}));
    write_npy(tmp.file("m.npy"), layer_test::f32({3, 2}, {0, 1, 2, 3, 4, 5}));
    const ktest::CliResult r = ktest::run_cli({"run", model, "--input", "seq=" + tmp.file("s.npy"), "--input",
                                               "m=" + tmp.file("m.npy"), "--output", "n=" + tmp.file("n.npy"),
                                               "--output", "rows=" + tmp.file("r.npy")});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_EQ(read_npy(tmp.file("n.npy")).data<int64_t>()[0], 2);
    for (int k = 0; k < 3; ++k) {
        const Tensor row = read_npy(tmp.file("r_" + std::to_string(k) + ".npy"));
        ASSERT_EQ(row.shape(), (Shape{1, 2})) << k;
        EXPECT_EQ(row.data<float>()[0], 2.f * k);
        EXPECT_EQ(row.data<float>()[1], 2.f * k + 1);
    }
    EXPECT_FALSE(std::ifstream(tmp.file("r_3.npy")).good());
    const ktest::CliResult printed = ktest::run_cli({"run", model, "--input", "seq=" + tmp.file("s.npy"), "--input",
                                                     "m=" + tmp.file("m.npy")});
    ASSERT_EQ(printed.exit_code, 0) << printed.describe();
    EXPECT_TRUE(has(printed.out, "rows: sequence of 3")) << printed.out;
    EXPECT_TRUE(has(printed.out, "rows[2]: shape (1,2)")) << printed.out;
}
#endif

// --backend vulkan: run gives the CPU's numbers, info says where each layer
// runs and counts the CPU fallbacks, bench --profile names each layer's
// device (with --fp16-storage too); a bad backend, or --fp16-storage without
// it, is a usage error, a device past the last a clear one.
TEST(Cli, BackendVulkanRunInfoAndBench)
{
    ktest::TempDir dir;
    ktest::write_file(dir.file("m.param"), "7767517\n3 3\nInput in 0 1 in 0=8 1=4 2=3\n"
                                           "BinaryOp mul 1 1 in m 0=2 1=1 2=1.5\nCumulativeSum sum 1 1 m out 0=2\n");
    write_npy(dir.file("x.npy"), Tensor::zeros({3, 4, 8}));
    const ktest::CliResult bad = ktest::run_cli({"run", dir.file("m.param"), "--backend", "gpu"});
    EXPECT_EQ(bad.exit_code, 2) << bad.describe();
    EXPECT_TRUE(has(bad.err, "--backend expects cpu or vulkan")) << bad.err;
    const ktest::CliResult half_on_cpu = ktest::run_cli({"run", dir.file("m.param"), "--fp16-storage"});
    EXPECT_EQ(half_on_cpu.exit_code, 2) << half_on_cpu.describe();
    EXPECT_TRUE(has(half_on_cpu.err, "--fp16-storage needs --backend vulkan")) << half_on_cpu.err;
#ifdef KESTREL_HAVE_VULKAN
    const ktest::CliResult info = ktest::run_cli({"info", dir.file("m.param"), "--backend", "vulkan"});
    if (info.exit_code != 0 && has(info.err, "no Vulkan device")) GTEST_SKIP() << info.err;
    ASSERT_EQ(info.exit_code, 0) << info.describe();
    EXPECT_TRUE(has(info.out, "layers on cpu: 1 (CPU fallback)")) << info.out;
    EXPECT_TRUE(has(info.out, "runs on: cpu")) << info.out;
    std::vector<Tensor> outs;
    for (const char* backend : {"cpu", "vulkan"}) {
        const std::string y = dir.file(std::string("y_") + backend + ".npy");
        const ktest::CliResult r = ktest::run_cli({"run", dir.file("m.param"), "--input", "in=" + dir.file("x.npy"),
                                                   "--output", "out=" + y, "--backend", backend});
        ASSERT_EQ(r.exit_code, 0) << r.describe();
        outs.push_back(read_npy(y));
    }
    for (int64_t i = 0; i < outs[0].numel(); ++i) EXPECT_EQ(outs[1].data<float>()[i], outs[0].data<float>()[i]);
    const ktest::CliResult bench = ktest::run_cli({"bench", dir.file("m.param"), "--backend", "vulkan", "--profile",
                                                   "--loops", "2", "--warmup", "1", "--fp16-storage"});
    ASSERT_EQ(bench.exit_code, 0) << bench.describe();
    EXPECT_TRUE(has(bench.out, "device")) << bench.out;
    EXPECT_TRUE(has(bench.out, "gpu ms")) << bench.out; // the device's timestamps per layer
    const ktest::CliResult missing = ktest::run_cli({"run", dir.file("m.param"), "--backend", "vulkan", "--device", "64"});
    EXPECT_NE(missing.exit_code, 0);
    EXPECT_TRUE(has(missing.err, "Vulkan device 64 does not exist")) << missing.err;
#else
    const ktest::CliResult r = ktest::run_cli({"run", dir.file("m.param"), "--backend", "vulkan"});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(has(r.err, "built without the Vulkan backend")) << r.err;
#endif
}

TEST(Cli, InfoWithoutInputShapeListsLayersAndWeights)
{
    ktest::TempDir dir;
    ktest::write_file(dir.file("m.param"), tiny_param(""));
    const ktest::CliResult r = ktest::run_cli({"info", dir.file("m.param")});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_TRUE(has(r.out, "input in ? (declares no shape; pass --shape in=")) << r.out;
    EXPECT_TRUE(has(r.out, "conv")) << r.out;
    EXPECT_TRUE(has(r.out, "total MACs: unknown")) << r.out;
    // --shape fills the rest in: (2, 8, 10) -> conv (4, 6, 8), 4*6*8*2*3*3 MACs.
    // Weights: the loaded ones (4*2*9 + 4 floats) without shapes; with them,
    // what the shape's plan packed (a one-group layer keeps its weights as
    // loaded until a shape picks its form, the GEMM's here).
    const ktest::CliResult s = ktest::run_cli({"info", dir.file("m.param"), "--shape", "in=2,8,10"});
    ASSERT_EQ(s.exit_code, 0) << s.describe();
    EXPECT_TRUE(has(s.out, "total MACs: 3.456 KMAC (3456)")) << s.out;
    auto weights_line = [](const std::string& out) {
        const size_t at = out.find("total weights: ");
        return at == std::string::npos ? std::string("none") : out.substr(at, out.find('\n', at) - at);
    };
    EXPECT_EQ(weights_line(r.out), "total weights: 304 B");
    EXPECT_NE(weights_line(s.out), "none");
    EXPECT_NE(weights_line(s.out), weights_line(r.out));
}

TEST(Cli, InfoJsonAndDot)
{
    ktest::TempDir dir;
    ktest::write_file(dir.file("m.param"), tiny_param("0=10 1=8 2=2"));
    const ktest::CliResult j = ktest::run_cli({"info", dir.file("m.param"), "--json"});
    ASSERT_EQ(j.exit_code, 0) << j.describe();
    ktest::write_file(dir.file("info.json"), j.out);
    const ktest::CliResult d = ktest::run_cli({"info", dir.file("m.param"), "--dot"});
    ASSERT_EQ(d.exit_code, 0) << d.describe();
    ktest::write_file(dir.file("m.dot"), d.out);
    EXPECT_TRUE(has(d.out, "+ ReLU (fused)")) << d.out;
    EXPECT_TRUE(has(d.out, "(4,6,8)")) << d.out;
    EXPECT_EQ(ktest::run_cli({"info", dir.file("m.param"), "--json", "--dot"}).exit_code, 2);
    REQUIRE_PROGRAM("python3");
    EXPECT_TRUE(accepts("python3 -c 'import json,sys; d=json.load(sys.stdin); "
                        "assert d[\"total_macs\"] == 3456 and d[\"layers\"][0][\"outputs\"] == [[4,6,8]]'",
                        dir.file("info.json")))
        << j.out;
    REQUIRE_PROGRAM("dot");
    EXPECT_TRUE(accepts("dot -Tsvg", dir.file("m.dot"))) << d.out;
}

// A blob between a 1x1 and a depthwise convolution is stored in channel
// blocks: info marks it with the block; the graph's output stays plain.
TEST(Cli, InfoMarksChannelBlockedBlobs)
{
    ktest::TempDir dir;
    ktest::write_file(dir.file("m.param"), "7767517\n3 3\nInput in 0 1 x\n"
                                           "Convolution pw 1 1 x a 0=24 1=1 5=1 6=192\n"
                                           "ConvolutionDepthWise dw 1 1 a y 0=24 1=3 4=1 5=1 6=216 7=24\n");
    const ktest::CliResult r = ktest::run_cli({"info", dir.file("m.param"), "--shape", "x=8,10,12"});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const std::string blocked = "(24,10,12):" + std::to_string(channel_block()) + "c";
    size_t marks = 0;
    for (size_t at = r.out.find(blocked); at != std::string::npos; at = r.out.find(blocked, at + 1)) ++marks;
    EXPECT_EQ(marks, 2u) << r.out; // the 1x1 layer's output and the depthwise layer's input
    EXPECT_TRUE(has(r.out, "(24,10,12) ") || has(r.out, "(24,10,12)\n")) << r.out;
}

// --plan: the session's plan as a value. The 1x1 convolution's output lives in
// the arena in channel blocks (its bytes padded to whole blocks), the graph's
// input is the caller's tensor, the output asked for has its own buffer.
TEST(Cli, InfoPlanShowsWhereEachBlobLives)
{
    ktest::TempDir dir;
    ktest::write_file(dir.file("m.param"), "7767517\n3 3\nInput in 0 1 x\n"
                                           "Convolution pw 1 1 x a 0=24 1=1 5=1 6=192\n"
                                           "ConvolutionDepthWise dw 1 1 a y 0=24 1=3 4=1 5=1 6=216 7=24\n");
    const ktest::CliResult r = ktest::run_cli({"info", dir.file("m.param"), "--shape", "x=8,10,12", "--plan"});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const int64_t block = channel_block(), blocked_bytes = (24 + block - 1) / block * block * 10 * 12 * 4;
    EXPECT_TRUE(has(r.out, "0  Convolution 'pw' on cpu, float")) << r.out;
    EXPECT_TRUE(has(r.out, "1  ConvolutionDepthWise 'dw' on cpu, float")) << r.out;
    EXPECT_TRUE(has(r.out, "in  x (8,10,12) input")) << r.out;
    EXPECT_TRUE(has(r.out, "out a (24,10,12):" + std::to_string(block) + "c @")) << r.out;
    EXPECT_TRUE(has(r.out, "+" + std::to_string(blocked_bytes) + "\n")) << r.out;
    EXPECT_TRUE(has(r.out, "out y (24,10,12) owned")) << r.out;
    EXPECT_EQ(ktest::run_cli({"info", dir.file("m.param"), "--plan", "--dot"}).exit_code, 2);
    // Without the input's shape there is no plan to show.
    const ktest::CliResult no_shape = ktest::run_cli({"info", dir.file("m.param"), "--plan"});
    EXPECT_NE(no_shape.exit_code, 0);
    EXPECT_TRUE(has(no_shape.err, "--plan needs every input's shape")) << no_shape.err;

    const ktest::CliResult j =
        ktest::run_cli({"info", dir.file("m.param"), "--shape", "x=8,10,12", "--plan", "--json"});
    ASSERT_EQ(j.exit_code, 0) << j.describe();
    ktest::write_file(dir.file("plan.json"), j.out);
    REQUIRE_PROGRAM("python3");
    EXPECT_TRUE(accepts("python3 -c 'import json,sys; d=json.load(sys.stdin); p=d[\"layers\"][0][\"plan\"]; "
                        "a=p[\"outputs\"][0]; "
                        "assert a[\"blob\"] == \"a\" and a[\"home\"] == \"arena\" and a[\"bytes\"] == " +
                            std::to_string(blocked_bytes) + " and a[\"offset\"] >= 0, p; "
                        "assert d[\"layers\"][1][\"plan\"][\"inputs\"][0] == a, d[\"layers\"][1]; "
                        "assert d[\"peak_bytes\"] >= a[\"offset\"] + a[\"bytes\"]'",
                        dir.file("plan.json")))
        << j.out;
}

} // namespace
} // namespace kestrel
