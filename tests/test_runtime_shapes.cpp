// Values known while planning (shape arithmetic folds away) and data-dependent
// output shapes (re-inferred downstream), through user-registered ops.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "reference_util.h"

namespace kestrel {
namespace {

std::atomic<int> shape_of_runs{0};

// Outputs its input's shape as int64: needs only the shape, so it is evaluated while planning.
class ShapeOf : public Op {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        out[0] = TensorDesc({static_cast<int64_t>(in[0].shape.size())}, DType::I64);
    }
    bool outputs_from_shapes_only() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        ++shape_of_runs;
        for (int i = 0; i < in[0].rank(); ++i) out[0].data<int64_t>()[i] = in[0].shape()[i];
    }
};

// Reverses an int64 vector (plain compute: folded only because its input is known).
class Reverse : public Op {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override { out[0] = in[0]; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const int64_t n = in[0].numel();
        for (int64_t i = 0; i < n; ++i) out[0].data<int64_t>()[i] = in[0].data<int64_t>()[n - 1 - i];
    }
};

// Reshape to the shape held in input 1: its infer needs input 1's value.
class ReshapeTo : public Op {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        check(in[1].value.defined(), "target shape must be known while planning");
        const Tensor& v = in[1].value;
        out[0] = TensorDesc(Shape(v.data<int64_t>(), v.data<int64_t>() + v.numel()), in[0].dtype);
    }
    bool outputs_alias_input() const override { return true; }
    void forward(const std::vector<Tensor>&, std::vector<Tensor>&, const ExecContext&) const override {}
};

// Keeps the positive elements: the output length depends on the data.
class KeepPositive : public Op {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        out[0] = TensorDesc({shape_numel(in[0].shape)}, DType::F32); // upper bound
    }
    bool dynamic_output_shape() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        std::vector<float> kept;
        for (int64_t i = 0; i < in[0].numel(); ++i)
            if (in[0].data<float>()[i] > 0) kept.push_back(in[0].data<float>()[i]);
        Tensor t({static_cast<int64_t>(kept.size())}, DType::F32);
        std::copy(kept.begin(), kept.end(), t.data<float>());
        out[0] = t;
    }
};

void register_test_ops()
{
    register_op("TestShapeOf", [] { return std::make_unique<ShapeOf>(); });
    register_op("TestReverse", [] { return std::make_unique<Reverse>(); });
    register_op("TestReshapeTo", [] { return std::make_unique<ReshapeTo>(); });
    register_op("TestKeepPositive", [] { return std::make_unique<KeepPositive>(); });
}

Tensor ramp(Shape shape, float start)
{
    Tensor t(std::move(shape), DType::F32);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + static_cast<float>(i);
    return t;
}

TEST(RuntimeShapes, ShapeSubgraphIsEvaluatedWhilePlanningNotPerRun)
{
    register_test_ops();
    Net net;
    net.load_param_mem("7767517\n5 6\nInput in 0 1 x\nSplit sp 1 2 x x1 x2\nTestShapeOf s 1 1 x1 shp\n"
                       "TestReverse r 1 1 shp rshp\nTestReshapeTo t 2 1 x2 rshp y\n");
    Session session(net);
    std::vector<std::string> ran;
    session.set_callbacks(nullptr, [&](const OpEvent& e) { ran.push_back(e.layer_name); });
    shape_of_runs = 0;
    for (int run = 0; run < 3; ++run) {
        const Tensor x = ramp({2, 3, 5}, static_cast<float>(run));
        session.set_input("x", x);
        const Tensor y = session.get("y");
        EXPECT_EQ(y.shape(), Shape({5, 3, 2}));
        for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(y.data<float>()[i], x.data<float>()[i]);
    }
    EXPECT_EQ(shape_of_runs.load(), 1); // once, while planning; the plan is reused
    EXPECT_EQ(ran, std::vector<std::string>({"sp", "t", "sp", "t", "sp", "t"}));
    // A new input shape re-plans and re-evaluates.
    session.set_input("x", ramp({4, 1}, 0.f));
    EXPECT_EQ(session.get("y").shape(), Shape({1, 4}));
    EXPECT_EQ(shape_of_runs.load(), 2);
}

TEST(RuntimeShapes, DataDependentShapeIsPropagatedDownstream)
{
    register_test_ops();
    Net net;
    net.load_param_mem("7767517\n4 4\nInput in 0 1 x\nTestKeepPositive k 1 1 x kept\nReLU r 1 1 kept act\n"
                       "Clip c 1 1 act y 0=0.0 1=2.5\n");
    Session session(net);
    for (float start : {-3.f, -10.f, 1.f}) {
        const Tensor x = ramp({2, 4}, start);
        session.set_input("x", x);
        std::vector<float> expected;
        for (int64_t i = 0; i < x.numel(); ++i)
            if (x.data<float>()[i] > 0) expected.push_back(std::min(x.data<float>()[i], 2.5f));
        const Tensor y = session.get("y");
        ASSERT_EQ(y.shape(), Shape({static_cast<int64_t>(expected.size())}));
        for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(y.data<float>()[i], expected[i]);
    }
}

} // namespace
} // namespace kestrel

namespace kestrel {
namespace {

// The same layers, flagged batched (featmask bit 65536), on a (N,C,H,W) input
// equal N independent runs on each (C,H,W) sample.
TEST(RuntimeShapes, BatchedLayersEqualPerSampleRuns)
{
    const char* layers = "Convolution conv 1 1 x c 0=4 1=3 4=1 5=1 6=108 %s\n"
                         "Pooling pool 1 1 c p 0=0 1=2 2=2 %s\n"
                         "ReLU relu 1 1 p y\n";
    char batched[512], plain[512];
    std::snprintf(batched, sizeof batched, layers, "31=65536", "31=65536");
    std::snprintf(plain, sizeof plain, layers, "", "");
    Tensor w({108}), b({4});
    for (int64_t i = 0; i < 108; ++i) w.data<float>()[i] = std::sin(0.37f * static_cast<float>(i));
    for (int64_t i = 0; i < 4; ++i) b.data<float>()[i] = 0.1f * static_cast<float>(i);
    auto make = [&](const char* body) {
        Net net;
        net.load_param_mem(std::string("7767517\n4 4\nInput in 0 1 x\n") + body);
        std::vector<uint8_t> bin(4 + 108 * 4 + 16, 0); // tag 0 (fp32), weights, raw bias
        std::memcpy(bin.data() + 4, w.raw(), 108 * 4);
        std::memcpy(bin.data() + 4 + 108 * 4, b.raw(), 16);
        net.load_model_mem(bin.data(), bin.size());
        return net;
    };
    const Net batched_net = make(batched), plain_net = make(plain);
    const Tensor x = ramp({3, 3, 6, 6}, -20.f);
    Session bs(batched_net);
    bs.set_input("x", x);
    const Tensor y = bs.get("y");
    ASSERT_EQ(y.shape(), Shape({3, 4, 3, 3}));
    for (int64_t n = 0; n < 3; ++n) {
        Session ps(plain_net);
        Tensor sample({3, 6, 6});
        std::memcpy(sample.raw(), x.data<float>() + n * 108, 108 * 4);
        ps.set_input("x", sample);
        const Tensor ref = ps.get("y");
        for (int64_t i = 0; i < ref.numel(); ++i) EXPECT_EQ(y.data<float>()[n * ref.numel() + i], ref.data<float>()[i]);
    }
}

} // namespace
} // namespace kestrel

namespace kestrel {
namespace {

// Shapes read downstream of a data-dependent op are the true ones, not the
// planning upper bound, and a layer that needs a value still gets it.
TEST(RuntimeShapes, ShapeOfDataDependentOutputIsTheTrueShape)
{
    register_test_ops();
    Net net;
    net.load_param_mem("7767517\n5 6\nInput in 0 1 x\nTestKeepPositive k 1 1 x kept\nSplit sp 1 2 kept k1 k2\n"
                       "TestShapeOf s 1 1 k1 shp\nTestReshapeTo t 2 1 k2 shp y\n");
    Session session(net);
    for (float start : {-5.f, -2.f}) {
        const Tensor x = ramp({2, 4}, start);
        session.set_input("x", x);
        int64_t positives = 0;
        for (int64_t i = 0; i < x.numel(); ++i) positives += x.data<float>()[i] > 0;
        const std::vector<Tensor> out = session.run({"shp", "y"});
        ASSERT_EQ(out[0].numel(), 1);
        EXPECT_EQ(out[0].data<int64_t>()[0], positives);
        EXPECT_EQ(out[1].shape(), Shape({positives}));
    }
}

} // namespace
} // namespace kestrel
