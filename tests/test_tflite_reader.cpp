// The TFLite reader on files that are not what they claim: truncated, past
// their size, buffers outside the file, tensors whose shape disagrees with
// their data, indices past their tables, operators Kestrel lacks. Each must
// be one clear error (kestrel::Error naming the file and what is wrong),
// never a crash. The files are written here with the schema's object API.
#include <gtest/gtest.h>

#include <cstring>

#include "kestrel/model_file.h"
#include "kestrel/net.h"
#include "kestrel/tflite.h"
#include "tflite_schema_generated.h"

using namespace kestrel;
namespace fb = kestrel::tflite_fb;

namespace {

// x [1, 4, 4, 2] -> ADD(x, c) -> RELU -> y; c a constant [2].
struct SmallModel {
    fb::ModelT model;

    SmallModel()
    {
        model.version = 3;
        for (auto code : {fb::BuiltinOperator::ADD, fb::BuiltinOperator::RELU}) {
            auto c = std::make_unique<fb::OperatorCodeT>();
            c->builtin_code = code;
            c->deprecated_builtin_code = static_cast<int8_t>(code);
            c->version = 1;
            model.operator_codes.push_back(std::move(c));
        }
        model.buffers.push_back(std::make_unique<fb::BufferT>());
        auto constant = std::make_unique<fb::BufferT>();
        const float values[2] = {0.5f, -0.25f};
        constant->data.resize(sizeof(values));
        std::memcpy(constant->data.data(), values, sizeof(values));
        model.buffers.push_back(std::move(constant));
        auto g = std::make_unique<fb::SubGraphT>();
        add_tensor(*g, "x", {1, 4, 4, 2}, 0);
        add_tensor(*g, "c", {2}, 1);
        add_tensor(*g, "sum", {1, 4, 4, 2}, 0);
        add_tensor(*g, "y", {1, 4, 4, 2}, 0);
        g->inputs = {0};
        g->outputs = {3};
        add_op(*g, 0, {0, 1}, {2});
        add_op(*g, 1, {2}, {3});
        model.subgraphs.push_back(std::move(g));
    }

    static void add_tensor(fb::SubGraphT& g, const char* name, std::vector<int32_t> shape, uint32_t buffer)
    {
        auto t = std::make_unique<fb::TensorT>();
        t->name = name;
        t->shape = std::move(shape);
        t->type = fb::TensorType::FLOAT32;
        t->buffer = buffer;
        g.tensors.push_back(std::move(t));
    }
    static void add_op(fb::SubGraphT& g, uint32_t code, std::vector<int32_t> in, std::vector<int32_t> out)
    {
        auto op = std::make_unique<fb::OperatorT>();
        op->opcode_index = code;
        op->inputs = std::move(in);
        op->outputs = std::move(out);
        g.operators.push_back(std::move(op));
    }
    fb::SubGraphT& graph() { return *model.subgraphs[0]; }
    // Operator code k becomes `code` (both of the file's code fields).
    void set_code(size_t k, fb::BuiltinOperator code)
    {
        model.operator_codes[k]->builtin_code = code;
        model.operator_codes[k]->deprecated_builtin_code = static_cast<int8_t>(code);
    }

    std::vector<uint8_t> bytes() const
    {
        flatbuffers::FlatBufferBuilder b;
        fb::FinishModelBuffer(b, fb::Model::Pack(b, &model));
        return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
    }
};

std::string load_error(const std::vector<uint8_t>& bytes)
{
    try {
        Net net;
        load_tflite_mem(net, bytes.data(), bytes.size(), "test.tflite");
        Session s(net);
        s.set_input(net.input_names()[0], Tensor::zeros({1, 4, 4, 2}));
        s.run(net.output_names());
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

#define EXPECT_ERROR(bytes, text)                                                                                   \
    do {                                                                                                            \
        const std::string msg = load_error(bytes);                                                                  \
        EXPECT_NE(msg.find("test.tflite"), std::string::npos) << msg;                                               \
        EXPECT_NE(msg.find(text), std::string::npos) << msg;                                                        \
    } while (0)

TEST(TfliteReader, TheSmallModelRuns)
{
    const std::vector<uint8_t> bytes = SmallModel().bytes();
    Net net;
    load_tflite_mem(net, bytes.data(), bytes.size(), "small.tflite");
    Session s(net);
    Tensor x({1, 4, 4, 2});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 7) - 3.f;
    s.set_input("x", x);
    const Tensor y = s.get("y");
    ASSERT_EQ(shape_str(y.shape()), "(1,4,4,2)");
    const float c[2] = {0.5f, -0.25f};
    for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(y.data<float>()[i], std::max(0.f, x.data<float>()[i] + c[i % 2]));
}

TEST(TfliteReader, TruncatedAndWrongFilesAreRefused)
{
    const std::vector<uint8_t> good = SmallModel().bytes();
    for (size_t keep : {size_t(0), size_t(4), size_t(7), good.size() / 3, good.size() / 2, good.size() - 8}) {
        SCOPED_TRACE(keep);
        const std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<long>(keep));
        const std::string msg = load_error(cut);
        EXPECT_NE(msg.find("test.tflite"), std::string::npos) << msg;
    }
    std::vector<uint8_t> other = good;
    std::memcpy(other.data() + 4, "ABCD", 4);
    EXPECT_ERROR(other, "not a TensorFlow Lite file");
    // Every single byte changed: an error or a model that runs, never a crash.
    for (size_t i = 0; i < good.size(); i += 3) {
        std::vector<uint8_t> flipped = good;
        flipped[i] ^= 0x5a;
        load_error(flipped);
    }
}

TEST(TfliteReader, ShapesThatDisagreeWithTheirData)
{
    SmallModel m;
    m.graph().tensors[1]->shape = {3};
    EXPECT_ERROR(m.bytes(), "needs 12 bytes, its buffer holds 8");
    m.graph().tensors[1]->shape = {-2};
    EXPECT_ERROR(m.bytes(), "negative dimension");
}

TEST(TfliteReader, IndicesPastTheirTables)
{
    {
        SmallModel m;
        m.graph().tensors[1]->buffer = 9;
        EXPECT_ERROR(m.bytes(), "buffer index 9 past the file's 2 buffers");
    }
    {
        SmallModel m;
        m.graph().operators[0]->opcode_index = 5;
        EXPECT_ERROR(m.bytes(), "opcode index 5 past the file's 2 operator codes");
    }
    {
        SmallModel m;
        m.graph().operators[1]->inputs = {40};
        EXPECT_ERROR(m.bytes(), "tensor index 40 past the subgraph's 4 tensors");
    }
    {
        SmallModel m;
        m.graph().outputs = {17};
        EXPECT_ERROR(m.bytes(), "tensor index 17");
    }
}

TEST(TfliteReader, BuffersOutsideTheFile)
{
    SmallModel m;
    m.model.buffers[1]->data.clear();
    m.model.buffers[1]->offset = 1u << 30;
    m.model.buffers[1]->size = 8;
    EXPECT_ERROR(m.bytes(), "lies outside the file");
    m.model.buffers[1]->offset = 16;
    m.model.buffers[1]->size = uint64_t(1) << 62;
    EXPECT_ERROR(m.bytes(), "lies outside the file");
}

TEST(TfliteReader, EveryUnknownOperatorInOneError)
{
    SmallModel m;
    m.set_code(0, fb::BuiltinOperator::LSTM);
    m.model.operator_codes[0]->version = 4;
    m.set_code(1, fb::BuiltinOperator::CUSTOM);
    m.model.operator_codes[1]->custom_code = "MyFancyOp";
    const std::string msg = load_error(m.bytes());
    EXPECT_NE(msg.find("operator 0: builtin operator LSTM (version 4) is not supported"), std::string::npos) << msg;
    EXPECT_NE(msg.find("operator 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("MyFancyOp"), std::string::npos) << msg;
}

TEST(TfliteReader, WrongOperandsNameTheOperator)
{
    SmallModel m;
    m.graph().operators[1]->inputs = {};
    EXPECT_ERROR(m.bytes(), "operator 1 (RELU v1)");
    SmallModel conv;
    conv.set_code(0, fb::BuiltinOperator::CONV_2D);
    EXPECT_ERROR(conv.bytes(), "operator 0 (CONV_2D v1): has no Conv2DOptions");
}

TEST(TfliteReader, FormatToldByContent)
{
    const std::vector<uint8_t> bytes = SmallModel().bytes();
    EXPECT_EQ(detect_model_format(bytes.data(), bytes.size()), ModelFormat::Tflite);
    const std::string path = ::testing::TempDir() + "/tflite_no_extension.model";
    FILE* f = fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    fwrite(bytes.data(), 1, bytes.size(), f);
    fclose(f);
    Net net;
    EXPECT_EQ(load_model_file(net, path).format, ModelFormat::Tflite);
    EXPECT_EQ(net.output_names(), std::vector<std::string>{"y"});
    // Bytes at an odd address load as well (the reader copies them to an aligned buffer).
    std::vector<uint8_t> shifted(bytes.size() + 1);
    std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
    Net odd;
    load_tflite_mem(odd, shifted.data() + 1, bytes.size(), "odd.tflite");
    EXPECT_EQ(odd.output_names(), std::vector<std::string>{"y"});
}

} // namespace

#include "kestrel/c_api.h"

namespace {

// The C API takes the same bytes from memory (freed right after the call).
TEST(TfliteReader, CApiLoadsFromMemory)
{
    kestrel_net* net = nullptr;
    ASSERT_EQ(kestrel_net_create(&net), KESTREL_OK);
    {
        std::vector<uint8_t> bytes = SmallModel().bytes();
        ASSERT_EQ(kestrel_net_load_tflite_mem(net, bytes.data(), bytes.size()), KESTREL_OK) << kestrel_last_error();
    }
    ASSERT_EQ(kestrel_net_input_count(net), 1);
    EXPECT_STREQ(kestrel_net_output_name(net, 0), "y");
    kestrel_session* s = nullptr;
    ASSERT_EQ(kestrel_session_create(net, nullptr, &s), KESTREL_OK);
    std::vector<float> x(32, -1.f);
    x[1] = 2.f;
    const int64_t shape[4] = {1, 4, 4, 2};
    ASSERT_EQ(kestrel_session_set_input(s, "x", KESTREL_FLOAT32, shape, 4, x.data()), KESTREL_OK);
    kestrel_tensor* y = nullptr;
    ASSERT_EQ(kestrel_session_get(s, "y", &y), KESTREL_OK) << kestrel_last_error();
    const float* v = static_cast<const float*>(kestrel_tensor_data(y));
    EXPECT_EQ(v[0], 0.f);      // relu(-1 + 0.5)
    EXPECT_EQ(v[1], 1.75f);    // relu(2 - 0.25)
    kestrel_tensor_destroy(y);
    kestrel_session_destroy(s);
    const uint8_t junk[16] = {1, 2, 3};
    EXPECT_NE(kestrel_net_load_tflite_mem(net, junk, sizeof(junk)), KESTREL_OK);
    EXPECT_NE(std::string(kestrel_last_error()).find("not a TensorFlow Lite file"), std::string::npos)
        << kestrel_last_error();
    kestrel_net_destroy(net);
}


// MediaPipe's MaxPoolingWithArgmax2D then MaxUnpooling2D (custom operators
// TFLite's interpreter does not have) against a naive loop: every window's
// maximum back at its place, zeros elsewhere; the pooled maxima as an output.
TEST(TfliteReader, MediaPipeArgmaxPoolingAndUnpooling)
{
    const int64_t H = 4, W = 6, C = 3;
    fb::ModelT model;
    model.version = 3;
    for (const char* custom : {"MaxPoolingWithArgmax2D", "MaxUnpooling2D"}) {
        auto c = std::make_unique<fb::OperatorCodeT>();
        c->builtin_code = fb::BuiltinOperator::CUSTOM;
        c->deprecated_builtin_code = static_cast<int8_t>(fb::BuiltinOperator::CUSTOM);
        c->custom_code = custom;
        model.operator_codes.push_back(std::move(c));
    }
    model.buffers.push_back(std::make_unique<fb::BufferT>());
    auto g = std::make_unique<fb::SubGraphT>();
    SmallModel::add_tensor(*g, "x", {1, 4, 6, 3}, 0);
    SmallModel::add_tensor(*g, "maxima", {1, 2, 3, 3}, 0);
    SmallModel::add_tensor(*g, "argmax", {1, 2, 3, 3}, 0);
    g->tensors.back()->type = fb::TensorType::INT64;
    SmallModel::add_tensor(*g, "y", {1, 4, 6, 3}, 0);
    g->inputs = {0};
    g->outputs = {3, 1};
    const int32_t params[6] = {2 /* VALID */, 2, 2, 2, 2, 0}; // stride w, h; filter w, h; no activation
    std::vector<uint8_t> options(sizeof(params));
    std::memcpy(options.data(), params, sizeof(params));
    SmallModel::add_op(*g, 0, {0}, {1, 2});
    g->operators.back()->custom_options = options;
    SmallModel::add_op(*g, 1, {1, 2}, {3});
    g->operators.back()->custom_options = options;
    model.subgraphs.push_back(std::move(g));
    flatbuffers::FlatBufferBuilder b;
    fb::FinishModelBuffer(b, fb::Model::Pack(b, &model));

    Net net;
    load_tflite_mem(net, b.GetBufferPointer(), b.GetSize(), "argmax.tflite");
    Tensor x({1, H, W, C});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 37) % 72) - 30.f; // distinct
    Session s(net);
    s.set_input("x", x);
    const std::vector<Tensor> got = s.run({"y", "maxima"});
    ASSERT_EQ(shape_str(got[0].shape()), "(1,4,6,3)");
    ASSERT_EQ(shape_str(got[1].shape()), "(1,2,3,3)");
    auto at = [&](int64_t h, int64_t w, int64_t c) { return (h * W + w) * C + c; };
    std::vector<float> want_y(static_cast<size_t>(x.numel()), 0.f);
    for (int64_t oh = 0; oh < H / 2; ++oh)
        for (int64_t ow = 0; ow < W / 2; ++ow)
            for (int64_t c = 0; c < C; ++c) {
                int64_t best = at(2 * oh, 2 * ow, c);
                for (int64_t dh = 0; dh < 2; ++dh)
                    for (int64_t dw = 0; dw < 2; ++dw)
                        if (x.data<float>()[at(2 * oh + dh, 2 * ow + dw, c)] > x.data<float>()[best])
                            best = at(2 * oh + dh, 2 * ow + dw, c);
                want_y[static_cast<size_t>(best)] = x.data<float>()[best];
                EXPECT_EQ(got[1].data<float>()[(oh * (W / 2) + ow) * C + c], x.data<float>()[best]);
            }
    for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(got[0].data<float>()[i], want_y[static_cast<size_t>(i)]) << i;
}

// The argmax indices are Kestrel's own (NCHW positions): anything but
// MaxUnpooling2D reading them, or a graph output, is refused.
TEST(TfliteReader, ArgmaxIndicesOnlyForUnpooling)
{
    fb::ModelT model;
    model.version = 3;
    auto c = std::make_unique<fb::OperatorCodeT>();
    c->builtin_code = fb::BuiltinOperator::CUSTOM;
    c->deprecated_builtin_code = static_cast<int8_t>(fb::BuiltinOperator::CUSTOM);
    c->custom_code = "MaxPoolingWithArgmax2D";
    model.operator_codes.push_back(std::move(c));
    model.buffers.push_back(std::make_unique<fb::BufferT>());
    auto g = std::make_unique<fb::SubGraphT>();
    SmallModel::add_tensor(*g, "x", {1, 4, 6, 3}, 0);
    SmallModel::add_tensor(*g, "maxima", {1, 2, 3, 3}, 0);
    SmallModel::add_tensor(*g, "argmax", {1, 2, 3, 3}, 0);
    g->inputs = {0};
    g->outputs = {1, 2};
    const int32_t params[6] = {2, 2, 2, 2, 2, 0};
    SmallModel::add_op(*g, 0, {0}, {1, 2});
    g->operators.back()->custom_options.resize(sizeof(params));
    std::memcpy(g->operators.back()->custom_options.data(), params, sizeof(params));
    model.subgraphs.push_back(std::move(g));
    flatbuffers::FlatBufferBuilder b;
    fb::FinishModelBuffer(b, fb::Model::Pack(b, &model));
    const std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
    EXPECT_ERROR(bytes, "may only be read by MaxUnpooling2D");
}


// fuzz_tflite's finding: a convolution over an input that declares no
// channels divided by its group count of zero.
TEST(FuzzRegression, TfliteConvolutionOverZeroChannels)
{
    SmallModel m;
    m.set_code(0, fb::BuiltinOperator::CONV_2D);
    m.graph().tensors[0]->shape = {1, 4, 4, 0};
    m.graph().tensors[1]->shape = {2, 1, 1, 1}; // the 8-byte constant as a filter [O=2][1][1][I=1]
    auto options = std::make_unique<fb::Conv2DOptionsT>();
    options->stride_w = options->stride_h = 1;
    m.graph().operators[0]->builtin_options.Set(std::move(*options));
    EXPECT_ERROR(m.bytes(), "input channels 0");
}


// fuzz_tflite's finding: a FULLY_CONNECTED whose output declares no axes.
TEST(FuzzRegression, TfliteFullyConnectedWithoutOutputAxes)
{
    SmallModel m;
    m.set_code(0, fb::BuiltinOperator::FULLY_CONNECTED);
    m.graph().tensors[1]->shape = {1, 2}; // weights [N=1][K=2] over rows of x's 2 channels
    m.graph().tensors[2]->shape = {};
    EXPECT_ERROR(m.bytes(), "does not end in the 1 units");
}


// fuzz_tflite's finding: ZEROS_LIKE of an input declaring 10^12 elements made
// its constant before any limit was asked; now over the limit is refused.
TEST(FuzzRegression, TfliteConstantsOverTheSizeLimit)
{
    SmallModel m;
    m.set_code(1, fb::BuiltinOperator::ZEROS_LIKE);
    m.graph().tensors[2]->shape = {1000, 1000, 1000, 1000};
    const std::vector<uint8_t> bytes = m.bytes();
    Net net;
    TfliteImportOptions options;
    options.max_tensor_bytes = 1 << 20;
    EXPECT_THROW(load_tflite_mem(net, bytes.data(), bytes.size(), "big.tflite", options), TooLargeError);
}

} // namespace
