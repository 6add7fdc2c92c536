// Session behaviour: any blob on demand, custom ops, callbacks, memory reuse,
// re-planning on new shapes, concurrent sessions, and the planner and pool.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <random>
#include <thread>

#include "core/thread_pool.h"
#include "reference_util.h"
#include "runtime/memory_planner.h"

namespace kestrel {
namespace {

Tensor iota_tensor(Shape shape, float start, float step)
{
    Tensor t(std::move(shape), DType::F32);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i);
    return t;
}

// input -> ReLU(r1) -> Clip[0,2](c1) -> Eltwise sum with r1 (e1); also r1 -> Flatten (f1)
const char* kSmallGraph = R"(7767517
5 5
Input    in   0 1 data 0=4 1=3 2=2
ReLU     r1   1 1 data relu
Clip     c1   1 1 relu clip 0=0.0 1=2.0
Eltwise  e1   2 1 clip relu sum 0=1
Flatten  f1   1 1 relu flat
)";

float relu(float x) { return x > 0 ? x : 0; }
float clip02(float x) { return std::min(std::max(x, 0.f), 2.f); }

TEST(Session, ComputesAnyBlobAndOnlyTheLayersItNeeds)
{
    Net net;
    net.load_param_mem(kSmallGraph);
    Session s(net);
    const Tensor x = iota_tensor({2, 3, 4}, -3.f, 0.37f);
    s.set_input("data", x);
    std::vector<std::string> ran;
    s.set_callbacks(nullptr, [&](const OpEvent& e) { ran.push_back(e.layer_name); });
    const Tensor relu_out = s.get("relu");
    EXPECT_EQ(ran, std::vector<std::string>({"r1"}));
    for (int64_t i = 0; i < x.numel(); ++i) EXPECT_FLOAT_EQ(relu_out.data<float>()[i], relu(x.data<float>()[i]));
    ran.clear();
    const Tensor sum = s.get("sum");
    EXPECT_EQ(ran, std::vector<std::string>({"r1", "c1", "e1"}));
    for (int64_t i = 0; i < x.numel(); ++i) {
        const float v = x.data<float>()[i];
        EXPECT_FLOAT_EQ(sum.data<float>()[i], clip02(relu(v)) + relu(v));
    }
    // Results already computed for these inputs are not recomputed.
    ran.clear();
    s.get("sum");
    EXPECT_TRUE(ran.empty());
}

TEST(Session, ResultsStayValidAcrossRuns)
{
    Net net;
    net.load_param_mem(kSmallGraph);
    Session s(net);
    s.set_input("data", iota_tensor({2, 3, 4}, -1.f, 0.1f));
    const Tensor first = s.get("sum").clone();
    const Tensor kept = s.get("sum");
    s.set_input("data", iota_tensor({2, 3, 4}, 5.f, 1.f));
    const Tensor second = s.get("sum");
    EXPECT_TRUE(testing::bit_identical(first, kept));
    EXPECT_FALSE(testing::bit_identical(first, second));
}

TEST(Session, MemoryReuseOnAndOffGiveSameOutputsAndReuseSavesMemory)
{
    Net net;
    net.load_param(testing::shared_path("models/mobilenet_v2/ncnn.param"));
    net.load_model(testing::shared_path("models/mobilenet_v2/ncnn.bin"));
    const Tensor input = read_npy(testing::shared_path("models/mobilenet_v2/ncnn_input.npy"));
    Options no_reuse;
    no_reuse.reuse_memory = false;
    Session a(net), b(net, no_reuse);
    a.set_input("input", input);
    b.set_input("input", input);
    EXPECT_TRUE(testing::bit_identical(a.get("output"), b.get("output")));
    EXPECT_LT(a.peak_bytes() * 4, b.peak_bytes()) << a.peak_bytes() << " vs " << b.peak_bytes();
}

// release_weights (and LoadOptions::keep_loaded_weights off): the layers keep
// what they compute with (the same outputs, at a new input size too, which
// may choose other packed forms), and what needs the weights as loaded
// refuses with a clear error.
TEST(Session, ReleasedWeightsKeepOutputsAndRefuseSaving)
{
    Net full, light, never_kept;
    LoadOptions drop;
    drop.keep_loaded_weights = false; // dropped layer by layer while loading
    never_kept.set_load_options(drop);
    for (Net* net : {&full, &light, &never_kept}) {
        net->load_param(testing::shared_path("models/mobilenet_v2/ncnn.param"));
        net->load_model(testing::shared_path("models/mobilenet_v2/ncnn.bin"));
    }
    light.release_weights();
    Session c(never_kept);
    c.set_input("input", read_npy(testing::shared_path("models/mobilenet_v2/ncnn_input.npy")));
    EXPECT_THROW(never_kept.model_bytes(), Error);
    const Tensor input = read_npy(testing::shared_path("models/mobilenet_v2/ncnn_input.npy"));
    Session a(full), b(light);
    a.set_input("input", input);
    b.set_input("input", input);
    EXPECT_TRUE(testing::bit_identical(a.get("output"), b.get("output")));
    EXPECT_TRUE(testing::bit_identical(a.get("output"), c.get("output")));
    const Tensor smaller = Tensor::zeros({input.dim(0), 96, 96});
    a.set_input("input", smaller);
    b.set_input("input", smaller);
    EXPECT_TRUE(testing::bit_identical(a.get("output"), b.get("output")));
    EXPECT_THROW(light.model_bytes(), Error);
    EXPECT_THROW(light.optimize(), Error);
    EXPECT_NO_THROW(full.model_bytes());
}

// A layer that may take Winograd keeps its loaded weights only until it has
// built a form once the graph released them; a later input size whose
// preferred form was never built runs on the form there is. resnet18 at
// 224 x 224, then at 64 x 64 (other forms preferred): within 1e-4 of the
// output scale of a net that kept everything.
TEST(Session, ReleasedWeightsServeOtherInputSizesWithTheFormsBuilt)
{
    Net full, light;
    LoadOptions drop;
    drop.keep_loaded_weights = false;
    light.set_load_options(drop);
    for (Net* net : {&full, &light}) {
        net->load_param(testing::shared_path("models/resnet18/ncnn.param"));
        net->load_model(testing::shared_path("models/resnet18/ncnn.bin"));
    }
    const Tensor input = read_npy(testing::shared_path("models/resnet18/ncnn_input.npy"));
    Session a(full), b(light);
    for (int side : {int(input.dim(1)), 64}) {
        SCOPED_TRACE(side);
        Tensor x = Tensor::zeros({input.dim(0), side, side});
        for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = input.data<float>()[i % input.numel()];
        a.set_input(full.input_names().at(0), x);
        b.set_input(light.input_names().at(0), x);
        const Tensor ya = a.get(full.output_names().at(0)), yb = b.get(light.output_names().at(0));
        ASSERT_EQ(ya.shape(), yb.shape());
        float scale = 0;
        for (int64_t i = 0; i < ya.numel(); ++i) scale = std::max(scale, std::fabs(ya.data<float>()[i]));
        for (int64_t i = 0; i < ya.numel(); ++i)
            ASSERT_NEAR(yb.data<float>()[i], ya.data<float>()[i], 1e-4f * scale) << i;
    }
}

TEST(Session, ReplansWhenInputShapeChanges)
{
    Net net;
    net.load_param_mem(kSmallGraph);
    Session s(net);
    for (int64_t w : {4, 7, 1}) {
        const Tensor x = iota_tensor({2, 3, w}, -2.f, 0.25f);
        s.set_input("data", x);
        const Tensor flat = s.get("flat");
        ASSERT_EQ(flat.shape(), Shape({2 * 3 * w}));
        for (int64_t i = 0; i < x.numel(); ++i) EXPECT_FLOAT_EQ(flat.data<float>()[i], relu(x.data<float>()[i]));
    }
}

TEST(Session, MissingInputAndUnknownBlobAreErrors)
{
    Net net;
    net.load_param_mem(kSmallGraph);
    Session s(net);
    EXPECT_THROW(s.get("sum"), Error);
    EXPECT_THROW(s.set_input("nope", iota_tensor({1}, 0, 1)), Error);
    s.set_input("data", iota_tensor({2, 3, 4}, 0, 1));
    EXPECT_THROW(s.get("nope"), Error);
}

// A user op that computes a*x+b with a,b from params 0 and 1, and counts its runs.
class AffineOp : public Op {
public:
    static std::atomic<int> runs;
    void load_param(const ParamDict& pd) override
    {
        a_ = pd.get_float(0, 1.f);
        b_ = pd.get_float(1, 0.f);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        check(in.size() == 1, "one input");
        out[0] = in[0];
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        ++runs;
        for (int64_t i = 0; i < in[0].numel(); ++i) out[0].data<float>()[i] = a_ * in[0].data<float>()[i] + b_;
    }

private:
    float a_ = 1, b_ = 0;
};
std::atomic<int> AffineOp::runs{0};

TEST(Session, CustomOpRegisteredByNameRunsFromParamFile)
{
    register_op("MyAffine", [] { return std::make_unique<AffineOp>(); });
    Net net;
    net.load_param_mem("7767517\n3 3\nInput in 0 1 x\nMyAffine aff 1 1 x y 0=3.0 1=-1.5\nReLU r 1 1 y z\n");
    Session s(net);
    const Tensor x = iota_tensor({5}, -1.f, 0.5f);
    s.set_input("x", x);
    AffineOp::runs = 0;
    const Tensor z = s.get("z");
    EXPECT_EQ(AffineOp::runs.load(), 1);
    for (int64_t i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(z.data<float>()[i], relu(3.f * x.data<float>()[i] - 1.5f));
}

TEST(Session, GraphBuiltInCodeWithWeights)
{
    Net net;
    ParamDict conv;
    conv.set_int(0, 2);  // num_output
    conv.set_int(1, 1);  // 1x1 kernel
    conv.set_int(5, 1);  // bias
    conv.set_int(6, 6);  // 2 out x 3 in
    Tensor w = iota_tensor({6}, 0.5f, -0.25f), b = iota_tensor({2}, 1.f, 1.f);
    net.add_layer("Input", "in", {}, {"x"});
    net.add_layer("Convolution", "conv", {"x"}, {"y"}, conv, {w, b});
    net.finish_graph();
    Session s(net);
    const Tensor x = iota_tensor({3, 2, 2}, -1.f, 0.3f);
    s.set_input("x", x);
    const Tensor y = s.get("y");
    ASSERT_EQ(y.shape(), Shape({2, 2, 2}));
    for (int oc = 0; oc < 2; ++oc)
        for (int p = 0; p < 4; ++p) {
            float ref = b.data<float>()[oc];
            for (int ic = 0; ic < 3; ++ic) ref += w.data<float>()[oc * 3 + ic] * x.data<float>()[ic * 4 + p];
            EXPECT_FLOAT_EQ(y.data<float>()[oc * 4 + p], ref);
        }
}

TEST(Session, ConcurrentSessionsOfOneNetMatchSingleThreadedResults)
{
    Net net;
    net.load_param(testing::shared_path("models/mobilenet_v2/ncnn.param"));
    net.load_model(testing::shared_path("models/mobilenet_v2/ncnn.bin"));
    const Tensor base = read_npy(testing::shared_path("models/mobilenet_v2/ncnn_input.npy"));
    constexpr int kThreads = 3;
    std::vector<Tensor> inputs, expected;
    for (int t = 0; t < kThreads; ++t) {
        Tensor x = base.clone();
        for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 1.f + 0.25f * static_cast<float>(t);
        Session s(net);
        s.set_input("input", x);
        expected.push_back(s.get("output"));
        inputs.push_back(x);
    }
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            Options o;
            o.threads = 2;
            Session s(net, o);
            for (int run = 0; run < 2; ++run) {
                s.set_input("input", inputs[t]);
                if (!testing::bit_identical(s.get("output"), expected[t])) ++mismatches;
            }
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(mismatches.load(), 0);
}

// Concats in place: layers whose output dies at a channel concat write it
// straight into the concat's output, nested concats included; an input read
// again later (sig, through a Split view) is copied, then placed in the
// second concat. The output's bytes stay reserved from the first input on
// (tmp, dead before the concats, must not share them).
TEST(Session, ConcatInputsAreWrittenInPlace)
{
    Net net;
    net.load_param_mem(R"(7767517
10 12
Input    in   0 1 data
ReLU     r1   1 1 data relu
Sigmoid  s0   1 1 data tmp
Eltwise  e0   2 1 tmp tmp tmp2 0=1
Clip     c1   1 1 tmp2 clip 0=0.0 1=0.5
Sigmoid  s1   1 1 data sig
Split    sp   1 2 sig sig1 sig2
Concat   cat  3 1 relu clip sig1 joined
Concat   cat2 2 1 joined sig2 out
Eltwise  e    2 1 out out final 0=1
)");
    Session s(net);
    const Tensor x = iota_tensor({2, 4, 4}, -2.f, 0.13f); // 128 bytes: inputs at aligned offsets
    s.set_input("data", x);
    std::map<std::string, const uint8_t*> at;
    s.set_callbacks(nullptr, [&](const OpEvent& e) { at[e.layer_name] = static_cast<const uint8_t*>(e.outputs[0].raw()); });
    const Tensor y = s.get("final");
    ASSERT_EQ(y.shape(), Shape({8, 4, 4}));
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float v = x.data<float>()[i], sig = 1.f / (1.f + std::exp(-v));
        EXPECT_FLOAT_EQ(y.data<float>()[i], 2 * relu(v)) << i;
        EXPECT_FLOAT_EQ(y.data<float>()[n + i], 2 * std::min(2 * sig, 0.5f)) << i;
        EXPECT_NEAR(y.data<float>()[2 * n + i], 2 * sig, 1e-6f) << i;
        EXPECT_NEAR(y.data<float>()[3 * n + i], 2 * sig, 1e-6f) << i;
    }
    const size_t bytes = sizeof(float) * static_cast<size_t>(n);
    EXPECT_EQ(at["r1"], at["cat2"]);
    EXPECT_EQ(at["cat"], at["cat2"]);
    EXPECT_EQ(at["c1"], at["cat2"] + bytes);
    EXPECT_EQ(at["s1"], at["cat2"] + 3 * bytes);
}

TEST(MemoryPlanner, LiveBuffersNeverOverlapAndDeadOnesShare)
{
    std::mt19937 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<BufferRequest> reqs;
        const int n = 1 + static_cast<int>(rng() % 30);
        for (int i = 0; i < n; ++i) {
            const int first = static_cast<int>(rng() % 20);
            reqs.push_back({static_cast<int64_t>(1 + rng() % 5000), first, first + static_cast<int>(rng() % 6)});
        }
        const MemoryPlan plan = plan_memory(reqs, true);
        int64_t sum = 0;
        for (int i = 0; i < n; ++i) {
            sum += (reqs[i].bytes + 63) / 64 * 64;
            EXPECT_EQ(plan.offsets[i] % 64, 0);
            EXPECT_LE(plan.offsets[i] + reqs[i].bytes, plan.arena_bytes);
            for (int j = 0; j < i; ++j) {
                const bool live_together = reqs[i].first_step <= reqs[j].last_step && reqs[j].first_step <= reqs[i].last_step;
                const bool disjoint = plan.offsets[i] + reqs[i].bytes <= plan.offsets[j] ||
                                      plan.offsets[j] + reqs[j].bytes <= plan.offsets[i];
                if (live_together) {
                    EXPECT_TRUE(disjoint) << "trial " << trial << " buffers " << i << "," << j;
                }
            }
        }
        EXPECT_LE(plan.arena_bytes, sum);
    }
    // Two buffers never alive together share one range.
    const MemoryPlan plan = plan_memory({{1000, 0, 1}, {1000, 2, 3}}, true);
    EXPECT_EQ(plan.arena_bytes, 1024);
}

TEST(ThreadPool, CoversEveryIndexOnceAndPropagatesErrors)
{
    ThreadPool pool(3);
    for (int64_t n : {1, 2, 7, 1000}) {
        std::vector<std::atomic<int>> hits(n);
        pool.parallel_for(n, 4, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) ++hits[i];
        });
        for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    }
    EXPECT_THROW(pool.parallel_for(8, 4, [](int64_t b, int64_t) { check(b != 0, "boom"); }), Error);
    // Several callers at once.
    std::atomic<int64_t> total{0};
    std::vector<std::thread> callers;
    for (int c = 0; c < 4; ++c)
        callers.emplace_back([&] {
            for (int r = 0; r < 50; ++r)
                pool.parallel_for(100, 3, [&](int64_t b, int64_t e) { total += e - b; });
        });
    for (auto& t : callers) t.join();
    EXPECT_EQ(total.load(), 4 * 50 * 100);
}

// Chunks per unit: the minimum asked for (within 1..items), then more until
// the tasks divide evenly among the threads or are plenty (8 per thread).
TEST(ThreadPool, EvenChunksGiveEveryThreadAnEqualShare)
{
    EXPECT_EQ(even_chunks(3, 100, 1, 2), 2);   // 3 tasks would go 2 and 1; 6 go 3 and 3
    EXPECT_EQ(even_chunks(5, 7, 1, 2), 2);     // 10 tasks
    EXPECT_EQ(even_chunks(3, 100, 1, 1), 1);   // one thread: the minimum
    EXPECT_EQ(even_chunks(3, 100, 4, 2), 4);   // 12 tasks already even
    EXPECT_EQ(even_chunks(3, 100, 3, 2), 4);   // 9 -> 12
    EXPECT_EQ(even_chunks(20, 100, 1, 2), 1);  // 20 tasks, even
    EXPECT_EQ(even_chunks(17, 100, 1, 2), 1);  // 17 tasks: plenty (more than 8 per thread)
    EXPECT_EQ(even_chunks(3, 5, 10, 2), 5);    // never more chunks than items
    EXPECT_EQ(even_chunks(3, 1, 1, 2), 1);     // one item: one chunk, even if uneven
    EXPECT_EQ(even_chunks(1, 50, 0, 3), 3);    // at least one; 3 tasks on 3 threads
}

} // namespace
} // namespace kestrel
