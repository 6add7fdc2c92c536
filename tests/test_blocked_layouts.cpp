// Activations in channel blocks (Layout::ChannelBlocks, Session's
// choose_layouts): a chain of 1x1 and depthwise convolutions with a ReLU, a
// Split, a same-shape add and a sigmoid between them gives the plain plan's
// outputs; the blobs between those layers are stored blocked, the graph's
// input and output and any blob asked for stay plain.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "kestrel/net.h"

namespace kestrel {
namespace {

// 5 -> 20 channels (not a whole number of blocks), depthwise 3x3, 20 -> 20
// plus the depthwise output, 20 -> 7 out.
const char* kChain = "7767517\n8 9\n"
                     "Input in 0 1 x\n"
                     "Convolution c1 1 1 x a 0=20 1=1 5=1 6=100 9=1\n"
                     "ConvolutionDepthWise dw 1 1 a b 0=20 1=3 4=1 5=1 6=180 7=20\n"
                     "Split sp 1 2 b b1 b2\n"
                     "Convolution c2 1 1 b1 c 0=20 1=1 5=1 6=400\n"
                     "BinaryOp add 2 1 c b2 d 0=0\n"
                     "Sigmoid sg 1 1 d e\n"
                     "Convolution c3 1 1 e y 0=7 1=1 5=1 6=140\n";

// ncnn's .bin for the layers above: each weight array tagged as float32, then its bias.
std::vector<uint8_t> chain_weights()
{
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> value(-0.5f, 0.5f);
    std::vector<uint8_t> bytes;
    auto put = [&](float f) {
        const uint8_t* b = reinterpret_cast<const uint8_t*>(&f);
        bytes.insert(bytes.end(), b, b + 4);
    };
    for (int64_t weights : {100, 180, 400, 140}) {
        bytes.insert(bytes.end(), 4, 0); // tag 0: float32 values
        for (int64_t i = 0; i < weights; ++i) put(value(rng));
        for (int64_t i = 0; i < (weights == 140 ? 7 : 20); ++i) put(value(rng));
    }
    return bytes;
}

Tensor chain_input()
{
    Tensor x({5, 8, 9});
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> value(-1.f, 1.f);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = value(rng);
    return x;
}

void expect_close(const Tensor& got, const Tensor& want)
{
    ASSERT_EQ(got.shape(), want.shape());
    float scale = 0;
    for (int64_t i = 0; i < want.numel(); ++i) scale = std::max(scale, std::fabs(want.data<float>()[i]));
    ASSERT_GT(scale, 0.f);
    for (int64_t i = 0; i < want.numel(); ++i)
        ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-5f * scale) << i;
}

class BlockedLayouts : public ::testing::Test {
protected:
    void SetUp() override
    {
        net.load_param_mem(kChain);
        const std::vector<uint8_t> bin = chain_weights();
        net.load_model_mem(bin.data(), bin.size());
    }
    Tensor run(bool blocked, const std::string& blob, int threads = 1)
    {
        Options options;
        options.blocked_layouts = blocked;
        options.threads = threads;
        Session s(net, options);
        s.set_input("x", chain_input());
        return s.get(blob);
    }
    Net net;
};

TEST_F(BlockedLayouts, ChainGivesThePlainOutputs)
{
    const Tensor plain = run(false, "y");
    for (int threads : {1, 2}) expect_close(run(true, "y", threads), plain);
}

TEST_F(BlockedLayouts, BlobsBetweenBlockedLayersAreStoredInBlocks)
{
    Session s(net);
    std::map<std::string, Shape> stored; // each layer's first output, as the callbacks see it
    s.set_callbacks(nullptr, [&](const OpEvent& e) { stored[e.layer_name] = e.outputs.at(0).shape(); }, true);
    s.set_input("x", chain_input());
    const Tensor y = s.get("y");
    const int64_t b = channel_block(), blocks = (20 + b - 1) / b;
    for (const char* layer : {"c1", "dw", "sp", "c2", "add", "sg"})
        EXPECT_EQ(stored[layer], Shape({blocks, 8, 9, b})) << layer;
    EXPECT_EQ(stored["c3"], Shape({7, 8, 9}));
    EXPECT_EQ(y.shape(), Shape({7, 8, 9}));
    expect_close(y, run(false, "y"));
}

TEST_F(BlockedLayouts, CallbacksAndRequestedBlobsSeePlainTensors)
{
    // A blob asked for stays plain (and its group with it: the Split's and the add's).
    expect_close(run(true, "b"), run(false, "b"));
    expect_close(run(true, "a"), run(false, "a"));
    // Callbacks set without stored layouts: every blob plain, with its logical shape.
    Session s(net);
    std::map<std::string, Shape> seen;
    s.set_callbacks(nullptr, [&](const OpEvent& e) { seen[e.layer_name] = e.outputs.at(0).shape(); });
    s.set_input("x", chain_input());
    expect_close(s.get("y"), run(false, "y"));
    EXPECT_EQ(seen["dw"], Shape({20, 8, 9}));
    EXPECT_EQ(seen["add"], Shape({20, 8, 9}));
}

} // namespace
} // namespace kestrel
