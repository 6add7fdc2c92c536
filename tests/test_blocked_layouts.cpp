// Activations in channel blocks (Layout::ChannelBlocks, Session's
// choose_layouts): a chain of 1x1 and depthwise convolutions with a ReLU, a
// Split, a same-shape add and a sigmoid between them gives the plain plan's
// outputs; the blobs between those layers are stored blocked, the graph's
// input and output and any blob asked for stay plain. A chain of KxK
// convolutions (strides, dilations, padding and its value, non-square
// kernels, a first layer reading 3 input planes) does too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>

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

// A squeeze-and-excitation block: global average pooling of a blocked blob,
// a fully connected layer and a sigmoid give per-channel scales that
// multiply the blocked blob (ncnn's broadcast of a (c) operand); a global
// maximum of the same blob is an output.
const char* kSqueeze = "7767517\n9 11\n"
                       "Input in 0 1 x\n"
                       "Convolution c1 1 1 x a 0=20 1=1 5=1 6=100 9=1\n"
                       "Split sp 1 3 a a1 a2 a3\n"
                       "Pooling gp 1 1 a1 p 0=1 4=1\n"
                       "InnerProduct fc 1 1 p q 0=20 1=1 2=400\n"
                       "Sigmoid sg 1 1 q s\n"
                       "BinaryOp mul 2 1 a2 s m 0=2\n"
                       "Pooling gm 1 1 a3 mx 0=0 4=1\n"
                       "Convolution c2 1 1 m y 0=7 1=1 5=1 6=140\n";

// How many weights and biases a layer reads from the .bin.
struct LayerWeights {
    int64_t weights, biases;
};

// ncnn's .bin for such layers: each weight array tagged as float32, then its bias.
std::vector<uint8_t> tagged_weights(std::initializer_list<LayerWeights> layers)
{
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> value(-0.5f, 0.5f);
    std::vector<uint8_t> bytes;
    auto put = [&](float f) {
        const uint8_t* b = reinterpret_cast<const uint8_t*>(&f);
        bytes.insert(bytes.end(), b, b + 4);
    };
    for (const LayerWeights& layer : layers) {
        bytes.insert(bytes.end(), 4, 0); // tag 0: float32 values
        for (int64_t i = 0; i < layer.weights; ++i) put(value(rng));
        for (int64_t i = 0; i < layer.biases; ++i) put(value(rng));
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

// Runs `n` on `x` with plain and with blocked layouts (2 threads): the
// `blobs` asked for, per run, and each layer's stored output shape in the
// blocked run.
struct PlainAndBlocked {
    std::map<bool, std::map<std::string, Tensor>> blobs;
    std::map<std::string, Shape> stored;
};

PlainAndBlocked run_plain_and_blocked(const Net& n, const Tensor& x, std::initializer_list<const char*> blobs)
{
    PlainAndBlocked r;
    for (bool blocked : {false, true}) {
        Options options;
        options.blocked_layouts = blocked;
        options.threads = 2;
        Session s(n, options);
        if (blocked)
            s.set_callbacks(nullptr, [&](const OpEvent& e) { r.stored[e.layer_name] = e.outputs.at(0).shape(); }, true);
        s.set_input("x", x);
        for (const char* b : blobs) r.blobs[blocked][b] = s.get(b);
    }
    return r;
}

class BlockedLayouts : public ::testing::Test {
protected:
    void SetUp() override { load(net, kChain, {{100, 20}, {180, 20}, {400, 20}, {140, 7}}); }
    static void load(Net& n, const char* param, std::initializer_list<LayerWeights> layers)
    {
        n.load_param_mem(param);
        const std::vector<uint8_t> bin = tagged_weights(layers);
        n.load_model_mem(bin.data(), bin.size());
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

// One block of channels (or `channels`): with two threads the depthwise
// layers split their output rows (a stride-2 one with padding, one reading
// plain input).
std::string rows_param(int64_t c)
{
    const std::string n = std::to_string(c);
    return "7767517\n5 5\nInput in 0 1 x\n"
           "ConvolutionDepthWise dw1 1 1 x a 0=" + n + " 1=3 4=1 5=1 6=" + std::to_string(9 * c) + " 7=" + n + "\n"
           "Convolution c1 1 1 a b 0=" + n + " 1=1 5=1 6=" + std::to_string(c * c) + " 9=1\n"
           "ConvolutionDepthWise dw2 1 1 b c 0=" + n + " 1=3 3=2 4=1 5=1 6=" + std::to_string(9 * c) + " 7=" + n + "\n"
           "Convolution c2 1 1 c y 0=4 1=1 5=1 6=" + std::to_string(4 * c) + "\n";
}

// The rows net run plain and blocked (run_plain_and_blocked).
PlainAndBlocked run_rows(int64_t c)
{
    Net rows;
    const std::string param = rows_param(c);
    rows.load_param_mem(param);
    const std::vector<uint8_t> bin = tagged_weights({{9 * c, c}, {c * c, c}, {9 * c, c}, {4 * c, 4}});
    rows.load_model_mem(bin.data(), bin.size());
    Tensor x({c, 9, 7});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.37f * static_cast<float>(i));
    return run_plain_and_blocked(rows, x, {"y"});
}

TEST_F(BlockedLayouts, DepthwiseRowsSplitAcrossThreads)
{
    const int64_t b = channel_block();
    PlainAndBlocked r = run_rows(b);
    EXPECT_EQ(r.stored["dw1"], Shape({1, 9, 7, b}));
    EXPECT_EQ(r.stored["dw2"], Shape({1, 5, 4, b}));
    ASSERT_EQ(r.blobs[true]["y"].shape(), Shape({4, 5, 4}));
    expect_close(r.blobs[true]["y"], r.blobs[false]["y"]);
}

// Blobs with fewer channels than a block stay plain (most lanes would be padding).
TEST_F(BlockedLayouts, FewChannelsStayPlain)
{
    if (channel_block() <= 3) GTEST_SKIP() << "blocks of " << channel_block() << " channels";
    PlainAndBlocked r = run_rows(3);
    EXPECT_EQ(r.stored["dw2"], Shape({3, 5, 4})); // between two layers that take blocks
    expect_close(r.blobs[true]["y"], r.blobs[false]["y"]);
}

TEST_F(BlockedLayouts, SqueezeAndExcitationTakesBlocks)
{
    Net se;
    load(se, kSqueeze, {{100, 20}, {400, 20}, {140, 7}});
    std::map<bool, std::vector<Tensor>> outputs;
    std::map<std::string, Shape> stored;
    for (bool blocked : {false, true}) {
        Options options;
        options.blocked_layouts = blocked;
        Session s(se, options);
        if (blocked) s.set_callbacks(nullptr, [&](const OpEvent& e) { stored[e.layer_name] = e.outputs.at(0).shape(); }, true);
        s.set_input("x", chain_input());
        outputs[blocked] = s.run({"y", "mx"});
    }
    const int64_t b = channel_block(), blocks = (20 + b - 1) / b;
    EXPECT_EQ(stored["c1"], Shape({blocks, 8, 9, b}));
    EXPECT_EQ(stored["mul"], Shape({blocks, 8, 9, b}));
    EXPECT_EQ(stored["gp"], Shape({20}));
    expect_close(outputs[true][0], outputs[false][0]);
    // The pooling and the product take the same values in the same order: the same bits.
    ASSERT_EQ(outputs[true][1].shape(), Shape({20}));
    EXPECT_EQ(std::memcmp(outputs[true][1].raw(), outputs[false][1].raw(), 20 * sizeof(float)), 0);
}

// KxK convolutions on blocks: 7x7 stride 2 on the 3 input planes, 3x3
// dilated, 3x3 stride 2 padding with 0.5, 1x1 padded (a larger output), 5x3,
// 1x1 stride 2, 3x3 on a 6x6 plane (Winograd's shape, small enough for the
// direct tile), then a 1x1 to the plain output.
const char* kWindows = "7767517\n9 9\n"
                       "Input in 0 1 x\n"
                       "Convolution k7 1 1 x a 0=20 1=7 3=2 4=3 5=1 6=2940 9=1\n"
                       "Convolution d2 1 1 a b 0=24 1=3 2=2 4=2 5=1 6=4320\n"
                       "Convolution s2 1 1 b c 0=20 1=3 3=2 4=1 5=1 6=4320 18=0.5\n"
                       "Convolution p1 1 1 c d 0=16 1=1 4=1 5=1 6=320\n"
                       "Convolution k53 1 1 d e 0=20 1=3 11=5 4=1 14=2 5=1 6=4800\n"
                       "Convolution o2 1 1 e f 0=24 1=1 3=2 5=1 6=480\n"
                       "Convolution w3 1 1 f g 0=20 1=3 4=1 5=1 6=4320 9=1\n"
                       "Convolution c3 1 1 g y 0=7 1=1 5=1 6=140\n";

TEST_F(BlockedLayouts, WindowedConvolutionsTakeBlocks)
{
    Net windows;
    load(windows, kWindows,
         {{2940, 20}, {4320, 24}, {4320, 20}, {320, 16}, {4800, 20}, {480, 24}, {4320, 20}, {140, 7}});
    Tensor x({3, 40, 37});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.37f * static_cast<float>(i));
    std::map<std::string, Shape> stored;
    std::map<bool, Tensor> y;
    for (bool blocked : {false, true})
        for (int threads : {1, 2}) {
            Options options;
            options.blocked_layouts = blocked;
            options.threads = threads;
            Session s(windows, options);
            if (blocked)
                s.set_callbacks(nullptr, [&](const OpEvent& e) { stored[e.layer_name] = e.outputs.at(0).shape(); },
                                true);
            s.set_input("x", x);
            const Tensor out = s.get("y");
            ASSERT_EQ(out.shape(), Shape({7, 6, 6}));
            if (y.count(blocked))
                expect_close(out, y[blocked]);
            else
                y[blocked] = out;
        }
    const int64_t b = channel_block();
    const auto blocks = [b](int64_t c) { return (c + b - 1) / b; };
    EXPECT_EQ(stored["k7"], Shape({blocks(20), 20, 19, b}));
    EXPECT_EQ(stored["d2"], Shape({blocks(24), 20, 19, b}));
    EXPECT_EQ(stored["s2"], Shape({blocks(20), 10, 10, b}));
    EXPECT_EQ(stored["p1"], Shape({blocks(16), 12, 12, b}));
    EXPECT_EQ(stored["k53"], Shape({blocks(20), 12, 12, b}));
    EXPECT_EQ(stored["o2"], Shape({blocks(24), 6, 6, b}));
    EXPECT_EQ(stored["w3"], Shape({blocks(20), 6, 6, b}));
    expect_close(y[true], y[false]);
}

// 3x3 stride-1 layers on planes over 8x8 between blocked layers: Winograd
// on blocks (padding of 0.5 read in place, a ReLU clamped by the output
// transform, a sigmoid after it, a layer without padding whose last tiles
// overhang the plane).
const char* kWinograd = "7767517\n6 6\n"
                        "Input in 0 1 x\n"
                        "Convolution c1 1 1 x a 0=20 1=1 5=1 6=100 9=1\n"
                        "Convolution w1 1 1 a b 0=24 1=3 4=1 5=1 6=4320 9=1 18=0.5\n"
                        "Convolution w2 1 1 b c 0=20 1=3 4=1 5=1 6=4320 9=4\n"
                        "Convolution w3 1 1 c d 0=20 1=3 5=1 6=3600\n"
                        "Convolution c3 1 1 d y 0=7 1=1 5=1 6=140\n";

TEST_F(BlockedLayouts, LargerPlanesTakeWinogradOnBlocks)
{
    Net winograd;
    load(winograd, kWinograd, {{100, 20}, {4320, 24}, {4320, 20}, {3600, 20}, {140, 7}});
    Tensor x({5, 20, 19});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.29f * static_cast<float>(i));
    PlainAndBlocked r = run_plain_and_blocked(winograd, x, {"y"});
    const int64_t b = channel_block();
    EXPECT_EQ(r.stored["w1"], Shape({(24 + b - 1) / b, 20, 19, b}));
    EXPECT_EQ(r.stored["w3"], Shape({(20 + b - 1) / b, 18, 17, b}));
    ASSERT_EQ(r.blobs[true]["y"].shape(), Shape({7, 18, 17}));
    expect_close(r.blobs[true]["y"], r.blobs[false]["y"]);
}

// Channel crops on blocks: channels 32..63 of 64 (whole blocks) and 32..51
// of 52 (ending with the input's partial block); 6..21 (off the blocks) on
// planes.
const char* kCrops = "7767517\n10 11\n"
                     "Input in 0 1 x\n"
                     "Convolution c1 1 1 x a 0=64 1=1 5=1 6=320\n"
                     "Crop cr1 1 1 a b 2=32 3=-233 4=-233 5=32\n"
                     "Convolution c2 1 1 b y 0=7 1=1 5=1 6=224\n"
                     "Convolution c3 1 1 x c 0=52 1=1 5=1 6=260\n"
                     "Crop cr2 1 1 c d 9=32 10=-233 11=0\n"
                     "Convolution c4 1 1 d z 0=7 1=1 5=1 6=140\n"
                     "Convolution c6 1 1 x f 0=64 1=1 5=1 6=320\n"
                     "Crop cr3 1 1 f e 2=6 3=-233 4=-233 5=16\n"
                     "Convolution c5 1 1 e w 0=7 1=1 5=1 6=112\n";

TEST_F(BlockedLayouts, ChannelCropsOfWholeBlocksTakeBlocks)
{
    Net crops;
    load(crops, kCrops, {{320, 64}, {224, 7}, {260, 52}, {140, 7}, {320, 64}, {112, 7}});
    PlainAndBlocked r = run_plain_and_blocked(crops, chain_input(), {"y", "z", "w"});
    const int64_t b = channel_block();
    EXPECT_EQ(r.stored["cr1"], Shape({32 / b, 8, 9, b}));
    EXPECT_EQ(r.stored["cr2"], Shape({(20 + b - 1) / b, 8, 9, b}));
    EXPECT_EQ(r.stored["cr3"], Shape({16, 8, 9}));
    for (const char* blob : {"y", "z", "w"}) expect_close(r.blobs[true][blob], r.blobs[false][blob]);
}

// Grouped layers whose groups are whole blocks take the direct tile group
// by group: reading the plain input, between blocked layers (a 1x1 stride 2),
// writing the plain output.
const char* kGroups = "7767517\n4 4\n"
                      "Input in 0 1 x\n"
                      "ConvolutionDepthWise g0 1 1 x a 0=32 1=3 4=1 5=1 6=4608 7=2 9=1\n"
                      "ConvolutionDepthWise g1 1 1 a b 0=64 1=1 3=2 5=1 6=1024 7=2\n"
                      "ConvolutionDepthWise g2 1 1 b y 0=32 1=3 4=1 5=1 6=9216 7=2\n";

TEST_F(BlockedLayouts, GroupsOfWholeBlocksTakeTheDirectTile)
{
    Net groups;
    load(groups, kGroups, {{4608, 32}, {1024, 64}, {9216, 32}});
    Tensor x({32, 10, 11});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.41f * static_cast<float>(i));
    PlainAndBlocked r = run_plain_and_blocked(groups, x, {"y"});
    const int64_t b = channel_block();
    EXPECT_EQ(r.stored["g0"], Shape({32 / b, 10, 11, b}));
    EXPECT_EQ(r.stored["g1"], Shape({64 / b, 5, 6, b}));
    ASSERT_EQ(r.blobs[true]["y"].shape(), Shape({32, 5, 6}));
    expect_close(r.blobs[true]["y"], r.blobs[false]["y"]);
}

// Max pooling on blocks: Caffe's ceil tail (pad_mode 0) and explicit pads,
// between blocked convolutions, and at the graph's end (plain output).
const char* kPools = "7767517\n6 6\n"
                     "Input in 0 1 x\n"
                     "Convolution c1 1 1 x a 0=20 1=3 4=1 5=1 6=180 9=1\n"
                     "Pooling p1 1 1 a b 0=0 1=3 2=2\n"
                     "Convolution c2 1 1 b c 0=24 1=1 5=1 6=480\n"
                     "Pooling p2 1 1 c d 0=0 1=2 2=2 3=1 5=1\n"
                     "Pooling p3 1 1 d y 0=0 1=3 2=1 3=1 5=1\n";

TEST_F(BlockedLayouts, MaxPoolingTakesBlocks)
{
    Net pools;
    load(pools, kPools, {{180, 20}, {480, 24}});
    Tensor x({1, 21, 18});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.23f * static_cast<float>(i));
    PlainAndBlocked r = run_plain_and_blocked(pools, x, {"y"});
    const int64_t b = channel_block();
    // 21x18 -> ceil tails: 10x9 (Caffe's (21-3)/2+1 = 10, (18-3+1)/2+1 = 9), then 6x5 with pads of 1, then 6x5.
    EXPECT_EQ(r.stored["p1"], Shape({(20 + b - 1) / b, 10, 9, b}));
    EXPECT_EQ(r.stored["p2"], Shape({(24 + b - 1) / b, 6, 5, b}));
    ASSERT_EQ(r.blobs[true]["y"].shape(), Shape({24, 6, 5}));
    expect_close(r.blobs[true]["y"], r.blobs[false]["y"]);
}

// Channel concats: of 32 and 20 channels (whole blocks, then a partial one)
// on blocks; of 20 and 32 (a partial block first) on planes.
const char* kConcats = "7767517\n9 10\n"
                       "Input in 0 1 x\n"
                       "Convolution c1 1 1 x a 0=32 1=1 5=1 6=160\n"
                       "Convolution c2 1 1 x b 0=20 1=3 4=1 5=1 6=900\n"
                       "Split sp 1 2 b b1 b2\n"
                       "Concat cat1 2 1 a b1 c\n"
                       "Convolution c4 1 1 x e 0=32 1=1 5=1 6=160\n"
                       "Concat cat2 2 1 b2 e d 0=-3\n"
                       "Convolution c3 1 1 c y 0=7 1=1 5=1 6=364\n"
                       "Convolution c5 1 1 d z 0=7 1=1 5=1 6=364\n";

TEST_F(BlockedLayouts, ChannelConcatOfWholeBlocksTakesBlocks)
{
    Net concats;
    load(concats, kConcats, {{160, 32}, {900, 20}, {160, 32}, {364, 7}, {364, 7}});
    PlainAndBlocked r = run_plain_and_blocked(concats, chain_input(), {"y", "z"});
    const int64_t b = channel_block();
    EXPECT_EQ(r.stored["cat1"], Shape({(52 + b - 1) / b, 8, 9, b}));
    EXPECT_EQ(r.stored["cat2"], Shape({52, 8, 9}));
    ASSERT_EQ(r.blobs[true]["y"].shape(), Shape({7, 8, 9}));
    for (const char* blob : {"y", "z"}) expect_close(r.blobs[true][blob], r.blobs[false][blob]);
}

} // namespace
} // namespace kestrel
