// Inputs the fuzzers (fuzz/, scripts/fuzz.sh) once crashed on, kept as files in
// tests/fuzz_regressions/ and replayed here through the same entry points, with
// the behaviour the fix gives. Under the ASan/UBSan build these also re-check
// that the original report is gone.
#include <fstream>
#include <iterator>

#include "graph/graph.h"
#include "kestrel/npy.h"
#ifdef KESTREL_HAVE_ONNX
#include "kestrel/onnx.h"
#endif
#include "reference_util.h"

namespace kestrel {
namespace {

std::string regression_file(const std::string& name)
{
    const std::string path = testing::source_path("tests/fuzz_regressions/" + name);
    std::ifstream f(path, std::ios::binary);
    EXPECT_TRUE(f.good()) << path;
    return std::string(std::istreambuf_iterator<char>(f), {});
}

// fuzz_npy: a '|b1' array whose bytes are not 0/1 ("<" = 60 here) was loaded
// as-is, and converting it read an invalid bool (UBSan: load of value 60).
// numpy reads any non-zero byte as True; so do we.
TEST(FuzzRegression, NpyBoolBytesOtherThanZeroOrOne)
{
    const std::string found = regression_file("npy-bool-byte-60.npy");
    const std::string header = found.substr(0, found.size() - 4);  // shape (2, 2): the data is the last 4 bytes
    // The fuzzer's data bytes, then the same header with a zero among odd values.
    for (const std::string& bytes : {found, header + std::string("\0\x02\xff\x01", 4)}) {
        const Tensor t = parse_npy(bytes.data(), bytes.size(), "npy-bool-byte-60.npy");
        ASSERT_EQ(t.dtype(), DType::Bool);
        ASSERT_EQ(t.shape(), (Shape{2, 2}));
        const Tensor f = t.to(DType::F32);
        for (int i = 0; i < 4; ++i) {
            const int expected = bytes[header.size() + i] != 0;
            EXPECT_EQ(t.data<uint8_t>()[i], expected) << i;
            EXPECT_EQ(f.data<float>()[i], static_cast<float>(expected)) << i;
        }
    }
}

// fuzz_param_bin (slow unit, ~0.5 s under ASan): a 38-byte .param.bin declaring
// 271875 blobs made the parser allocate and name every blob before reading a
// layer. The counts are now checked against the bytes left first.
TEST(FuzzRegression, ParamBinCountsLargerThanTheFile)
{
    const auto expect_refused = [](const std::string& bytes, const std::string& reason) {
        Net net;
        try {
            net.load_param_bin_mem(bytes.data(), bytes.size());
            ADD_FAILURE() << "expected an error: " << reason;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
        }
    };
    // The fuzzer's file: 4 layers need at least 64 bytes, 24 are left.
    expect_refused(regression_file("param-bin-huge-blob-count.param.bin"), "layer count 4 cannot fit in the 24 bytes");
    // One well-formed Input layer, but 1000 declared blobs for 5 words left.
    const std::vector<int32_t> words = {7767517, 1, 1000, 16 /* Input */, 0, 1, 0, -233};
    expect_refused(std::string(reinterpret_cast<const char*>(words.data()), words.size() * 4),
                   "blob count 1000 cannot fit in the 20 bytes");
}

// fuzz_param_bin (first session, ASan heap-buffer-overflow): the "blob is
// already produced" check built its message, reading layers[producer] with
// producer -1, for every top blob even when the check passed. A .param.bin
// goes through that check with index-named blobs; both the valid graph and the
// double-produced blob must load cleanly (ASan build: no report).
TEST(FuzzRegression, ParamBinTopBlobChecks)
{
    // Input -> blob 0; ReLU 0 -> 1.
    const std::vector<int32_t> ok = {7767517, 2, 2, 16 /* Input */, 0, 1, 0, -233, 26 /* ReLU */, 1, 1, 0, 1, -233};
    Net net;
    net.load_param_bin_mem(ok.data(), ok.size() * 4);
    EXPECT_EQ(net.output_names(), std::vector<std::string>{"1"});
    // ReLU writes blob 0 again.
    const std::vector<int32_t> twice = {7767517, 2, 2, 16, 0, 1, 0, -233, 26, 1, 1, 0, 0, -233};
    Net bad;
    try {
        bad.load_param_bin_mem(twice.data(), twice.size() * 4);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("already produced by Input"), std::string::npos) << e.what();
    }
}

// fuzz_param_bin (UBSan, CI's bounded run): a param key of INT32_MIN was
// negated in 32 bits to find a string/array param id.
TEST(FuzzRegression, ParamBinParamKeyInt32Min)
{
    const std::string bytes = regression_file("param-bin-int-min-param-key.param.bin");
    Net net;
    try {
        net.load_param_bin_mem(bytes.data(), bytes.size());
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("string param id 2147460248 out of range"), std::string::npos) << e.what();
    }
}

// fuzz_param_bin (UBSan): a YoloDetectionOutput with num_box 1953384705; the
// biases-count message computed 2 * num_box in 32 bits.
TEST(FuzzRegression, ParamBinYoloNumBoxOverflow)
{
    const std::string bytes = regression_file("param-bin-yolo-num-box-overflow.param.bin");
    Net net;
    try {
        net.load_param_bin_mem(bytes.data(), bytes.size());
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("need a (w, h) pair per box: 3906769410 values"), std::string::npos)
            << e.what();
    }
}

#ifdef KESTREL_HAVE_ONNX
// fuzz_onnx (ASan SEGV inside libonnx 1.12, CI's bounded run): a
// LayerNormalization axis of -131075 on a rank-4 input made libonnx's shape
// inference read far out of bounds. The axis is now checked against the rank
// before libonnx's inference runs (src/frontend/onnx/safe_shape_inference.cpp).
TEST(FuzzRegression, OnnxLayerNormAxisFarOutOfRange)
{
    const std::string bytes = regression_file("onnx-layernorm-axis-out-of-range.onnx");
    Net net;
    try {
        load_onnx_mem(net, bytes.data(), bytes.size(), "layernorm.onnx");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("axis -131075 is out of range for an input of rank 4"), std::string::npos)
            << e.what();
    }
}

// fuzz_onnx (ASan SEGV in libonnx's convTransposeShapeInference, local bounded
// run): a ConvTranspose weight of rank 2 for an input of rank 3.
TEST(FuzzRegression, OnnxConvTransposeWeightRankBelowInputRank)
{
    const std::string bytes = regression_file("onnx-convtranspose-weight-rank.onnx");
    Net net;
    try {
        load_onnx_mem(net, bytes.data(), bytes.size(), "convtranspose.onnx");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("weight rank 2 differs from input rank 3"), std::string::npos) << e.what();
    }
}

// fuzz_onnx (ASan SEGV inside libonnx's STFT shape inference): no validator
// knows this one; libonnx's inference now runs in a forked child, so the
// crash costs only the hints and the import goes on (to the STFT layer,
// since STFT is converted).
TEST(FuzzRegression, OnnxInferenceCrashInLibonnxIsContained)
{
    const std::string bytes = regression_file("onnx-stft-inference-crash.onnx");
    Net net;
    load_onnx_mem(net, bytes.data(), bytes.size(), "stft.onnx");
    bool stft = false;
    for (const Layer& l : net.graph().layers) stft = stft || l.type == "STFT";
    EXPECT_TRUE(stft);
}

// fuzz_onnx (UBSan signed overflow in the ONNX Reshape's shape check): the
// target [0, 120, 144115188075855871] multiplied its known dims in plain int64.
// The product is now checked, and the model fails with an overflow error when
// its shapes are inferred (on load or when a session is prepared).
TEST(FuzzRegression, OnnxReshapeTargetDimsOverflow)
{
    const std::string bytes = regression_file("onnx-reshape-dims-overflow.onnx");
    try {
        Net net;
        load_onnx_mem(net, bytes.data(), bytes.size(), "reshape.onnx");
        Session session(net);
        session.set_input("x", Tensor::zeros({3, 5, 2}, DType::F32));
        session.set_input("y", Tensor::zeros({3, 2}, DType::I64));
        session.set_input("w", Tensor::zeros({5}, DType::F32));
        session.run(net.output_names());
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("overflow"), std::string::npos) << e.what();
    }
}

// fuzz_onnx (campaign, 8b9ae62): ConstantOfShape's `value` attribute declared
// 58 GB of dims with one stored value; the tensor was allocated before its data
// was counted (ASan: allocator out of memory).
TEST(FuzzRegression, OnnxAttributeTensorDimsLargerThanItsData)
{
    const std::string bytes = regression_file("onnx-constantofshape-huge-value-dims.onnx");
    try {
        Net net;
        load_onnx_mem(net, bytes.data(), bytes.size(), "constant_of_shape.onnx");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("needs"), std::string::npos) << e.what();
    }
}
#endif

} // namespace
} // namespace kestrel
