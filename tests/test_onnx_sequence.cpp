// ONNX sequences (DType::Sequence tensors, src/ops/sequence/): building,
// editing, reading and joining lists of tensors, sequence graph inputs and
// outputs. Expectations are the tensors themselves, cut and joined here by
// index arithmetic.
#include "layer_test_util.h"
#include "onnx_test_graph.h"

namespace kestrel {
namespace {

// The value itself: a list of tensors of their own dtypes and shapes; no
// bytes to convert or view.
TEST(SequenceTensor, HoldsTensorsNotBytes)
{
    const Tensor a = layer_test::f32({2}, {1.f, 2.f}), b = layer_test::i64({1}, {7});
    const Tensor s = Tensor::sequence({a, b});
    EXPECT_TRUE(s.is_sequence());
    EXPECT_EQ(std::string(dtype_name(s.dtype())), "sequence");
    ASSERT_EQ(s.shape(), (Shape{2}));
    const Tensor copy = s.clone();
    std::vector<Tensor> items = copy.items();
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].data<float>()[1], 2.f);
    EXPECT_EQ(items[1].dtype(), DType::I64);
    Tensor cleared = s.clone();
    cleared.fill_zero();
    EXPECT_FALSE(cleared.items()[0].defined());
    EXPECT_TRUE(s.items()[0].defined()) << "a clone's elements are its own list";
    EXPECT_TRUE(Tensor::sequence({}).defined()) << "an empty sequence is a value";
    EXPECT_THROW(s.to(DType::F32), Error);
    EXPECT_THROW(s.view_as({static_cast<int64_t>(2 * sizeof(Tensor))}, DType::U8), Error);
    EXPECT_THROW(a.items(), Error);
    const Tensor none = Tensor::optional(Tensor()), some = Tensor::optional(s);
    EXPECT_TRUE(none.is_optional());
    EXPECT_TRUE(none.defined());
    EXPECT_EQ(none.numel(), 0);
    ASSERT_EQ(some.numel(), 1);
    EXPECT_TRUE(some.items()[0].is_sequence());
    EXPECT_THROW(some.view_as({1}, DType::Sequence), Error);
}

// Layers that work on bytes refuse sequences and optionals before they run
// (a byte copy of tensor objects would corrupt them).
TEST(SequenceTensor, ByteLayersRefuseSequences)
{
    for (const char* layer : {"Reshape r 1 1 s y 0=2", "Concat c 2 1 s s y", "Permute p 1 1 s y 0=1",
                              "UnaryOp u 1 1 s y 0=1"}) {
        Net net;
        net.load_param_mem(std::string("7767517\n2 2\nInput s 0 1 s 21=13\n") + layer + "\n", "seq.param");
        Session s(net);
        s.set_input("s", Tensor::sequence({layer_test::f32({2}, {1.f, 2.f}), layer_test::f32({2}, {3.f, 4.f})}));
        const std::string msg = layer_test::error_of([&] { s.get("y"); });
        EXPECT_TRUE(layer_test::contains(msg, "a sequence input, which this layer does not take")) << layer << ": " << msg;
    }
}

} // namespace
} // namespace kestrel

#ifdef KESTREL_HAVE_ONNX
namespace kestrel {
namespace {

using layer_test::OnnxGraph;

constexpr int kFloat = onnx::TensorProto::FLOAT, kInt64 = onnx::TensorProto::INT64;

// A graph value of type sequence(float tensor) as input or output.
void sequence_value(onnx::ValueInfoProto* vi, const std::string& name)
{
    vi->set_name(name);
    vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kFloat);
}

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

// Rows [r0, r1) of a row-major matrix of `cols` columns.
std::vector<float> rows_of(const std::vector<float>& m, int64_t cols, int64_t r0, int64_t r1)
{
    return std::vector<float>(m.begin() + r0 * cols, m.begin() + r1 * cols);
}

TEST(OnnxSequence, ConstructInsertEraseAtLengthAndConcat)
{
    // s = [x, y]; s2 = insert z at position 1: [x, z, y]; s3 = erase position -1: [x, z];
    // n = length(s2); a = s2[-2] (z); c = concat(s2) along 0; st = concat(s3) stacked (new axis 0).
    OnnxGraph g(13);
    g.input("x", {2, 3});
    g.input("y", {1, 3});
    g.input("z", {2, 3});
    g.int64s("one", {1});
    g.int64s("minus_one", {-1});
    g.int64s("minus_two", {-2});
    g.node("SequenceConstruct", {"x", "y"}, {"s"});
    g.node("SequenceInsert", {"s", "z", "one"}, {"s2"});
    g.node("SequenceErase", {"s2", "minus_one"}, {"s3"});
    g.node("SequenceLength", {"s2"}, {"n"});
    g.node("SequenceAt", {"s2", "minus_two"}, {"a"});
    OnnxGraph::attr_int(g.node("ConcatFromSequence", {"s2"}, {"c"}), "axis", 0);
    onnx::NodeProto* stack = g.node("ConcatFromSequence", {"s3"}, {"st"});
    OnnxGraph::attr_int(stack, "axis", 0);
    OnnxGraph::attr_int(stack, "new_axis", 1);
    g.output("n", 0, kInt64);
    g.output("a", 2);
    g.output("c", 2);
    g.output("st", 3);
    const std::vector<float> x = {1, 2, 3, 4, 5, 6}, y = {7, 8, 9}, z = {-1, -2, -3, -4, -5, -6};
    for (bool optimize : {true, false}) {
        const Net net = g.load(optimize);
        Session s(net);
        s.set_input("x", layer_test::f32({2, 3}, x));
        s.set_input("y", layer_test::f32({1, 3}, y));
        s.set_input("z", layer_test::f32({2, 3}, z));
        const std::vector<Tensor> out = s.run({"n", "a", "c", "st"});
        ASSERT_EQ(out[0].dtype(), DType::I64);
        EXPECT_EQ(out[0].data<int64_t>()[0], 3);
        ASSERT_EQ(out[1].shape(), (Shape{2, 3}));
        EXPECT_EQ(values(out[1]), z);
        ASSERT_EQ(out[2].shape(), (Shape{5, 3}));
        std::vector<float> c = x;
        c.insert(c.end(), z.begin(), z.end());
        c.insert(c.end(), y.begin(), y.end());
        EXPECT_EQ(values(out[2]), c);
        ASSERT_EQ(out[3].shape(), (Shape{2, 2, 3}));
        std::vector<float> st = x;
        st.insert(st.end(), z.begin(), z.end());
        EXPECT_EQ(values(out[3]), st);
    }
}

// SplitToSequence: a scalar length (the last piece shorter), lengths, and
// pieces of one with the axis dropped (keepdims 0); the sequence as the
// graph's output.
TEST(OnnxSequence, SplitToSequenceThreeWaysAsGraphOutputs)
{
    OnnxGraph g(13);
    g.input("m", {5, 2});
    g.raw_init("two", layer_test::i64({}, {2}), kInt64);
    g.int64s("lengths", {1, 4});
    g.node("SplitToSequence", {"m", "two"}, {"by_two"});
    g.node("SplitToSequence", {"m", "lengths"}, {"by_lengths"});
    OnnxGraph::attr_int(g.node("SplitToSequence", {"m"}, {"rows"}), "keepdims", 0);
    for (const char* name : {"by_two", "by_lengths", "rows"}) sequence_value(g.graph()->add_output(), name);
    const std::vector<float> m = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    const Net net = g.load(true);
    Session s(net);
    s.set_input("m", layer_test::f32({5, 2}, m));
    const std::vector<Tensor> out = s.run({"by_two", "by_lengths", "rows"});
    const std::vector<std::vector<std::pair<int64_t, int64_t>>> want = {{{0, 2}, {2, 4}, {4, 5}}, {{0, 1}, {1, 5}}, {}};
    for (int k = 0; k < 2; ++k) {
        ASSERT_TRUE(out[k].is_sequence());
        const std::vector<Tensor> items = out[k].items();
        ASSERT_EQ(items.size(), want[k].size()) << k;
        for (size_t i = 0; i < items.size(); ++i) {
            const auto [r0, r1] = want[k][i];
            ASSERT_EQ(items[i].shape(), (Shape{r1 - r0, 2})) << k << "," << i;
            EXPECT_EQ(values(items[i]), rows_of(m, 2, r0, r1)) << k << "," << i;
        }
    }
    const std::vector<Tensor> rows = out[2].items();
    ASSERT_EQ(rows.size(), 5u);
    for (int64_t r = 0; r < 5; ++r) {
        ASSERT_EQ(rows[r].shape(), (Shape{2}));
        EXPECT_EQ(values(rows[r]), rows_of(m, 2, r, r + 1));
    }
}

// A sequence as a graph input: its elements read at run-time positions.
TEST(OnnxSequence, SequenceInputReadAtRunTimePositions)
{
    OnnxGraph g(13);
    sequence_value(g.graph()->add_input(), "seq");
    g.input("pos", {}, kInt64);
    g.node("SequenceAt", {"seq", "pos"}, {"item"});
    g.node("Neg", {"item"}, {"neg"});
    g.output("neg", 1);
    const Net net = g.load(true);
    Session s(net);
    const Tensor a = layer_test::f32({2}, {1.f, 2.f}), b = layer_test::f32({3}, {3.f, 4.f, 5.f});
    s.set_input("seq", Tensor::sequence({a, b}));
    for (int64_t pos : {0, 1, -1, -2}) {
        s.set_input("pos", layer_test::i64({}, {pos}));
        const Tensor neg = s.get("neg");
        const Tensor& item = (pos == 0 || pos == -2) ? a : b;
        ASSERT_EQ(neg.shape(), item.shape()) << pos;
        for (int64_t i = 0; i < item.numel(); ++i) EXPECT_EQ(neg.data<float>()[i], -item.data<float>()[i]) << pos;
    }
    s.set_input("pos", layer_test::i64({}, {2}));
    std::string msg = layer_test::error_of([&] { s.get("neg"); });
    EXPECT_TRUE(layer_test::contains(msg, "position (input 1) 2 is out of range for a sequence of 2")) << msg;
    s.set_input("seq", Tensor::sequence({}));
    s.set_input("pos", layer_test::i64({}, {0}));
    msg = layer_test::error_of([&] { s.get("neg"); });
    EXPECT_TRUE(layer_test::contains(msg, "out of range for a sequence of 0")) << msg;
}

// SequenceMap: the body per element; a second sequence taken in step, a
// tensor given whole, an outside value read by the body; two output sequences.
TEST(OnnxSequence, SequenceMapRunsTheBodyPerElement)
{
    OnnxGraph body(17);
    body.input("a", {-1});
    body.input("b", {-1});
    body.input("t", {1});
    body.node("Add", {"a", "b"}, {"ab"});
    body.node("Mul", {"ab", "t"}, {"abt"});
    body.node("Sub", {"abt", "k"}, {"out"}); // k: the enclosing graph's
    body.node("Shape", {"a"}, {"shape"});
    body.output("out", 1);
    body.output("shape", 1, kInt64);
    OnnxGraph g(17);
    sequence_value(g.graph()->add_input(), "as");
    sequence_value(g.graph()->add_input(), "bs");
    g.input("t", {1});
    g.init("k", layer_test::f32({1}, {0.5f}));
    OnnxGraph::attr_graph(g.node("SequenceMap", {"as", "bs", "t"}, {"outs", "shapes"}), "body", body);
    sequence_value(g.graph()->add_output(), "outs");
    onnx::ValueInfoProto* shapes = g.graph()->add_output();
    shapes->set_name("shapes");
    shapes->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kInt64);
    const Net net = g.load(true);
    Session s(net);
    const std::vector<std::vector<float>> a = {{1, 2, 3}, {4}, {5, 6}}, b = {{10, 20, 30}, {40}, {50, 60}};
    std::vector<Tensor> as, bs;
    for (size_t i = 0; i < a.size(); ++i) {
        as.push_back(layer_test::f32({static_cast<int64_t>(a[i].size())}, a[i]));
        bs.push_back(layer_test::f32({static_cast<int64_t>(b[i].size())}, b[i]));
    }
    s.set_input("as", Tensor::sequence(as));
    s.set_input("bs", Tensor::sequence(bs));
    s.set_input("t", layer_test::f32({1}, {2.f}));
    const std::vector<Tensor> out = s.run({"outs", "shapes"});
    const std::vector<Tensor> outs = out[0].items(), sizes = out[1].items();
    ASSERT_EQ(outs.size(), 3u);
    ASSERT_EQ(sizes.size(), 3u);
    for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(outs[i].numel(), static_cast<int64_t>(a[i].size()));
        for (size_t j = 0; j < a[i].size(); ++j) EXPECT_EQ(outs[i].data<float>()[j], (a[i][j] + b[i][j]) * 2.f - 0.5f);
        EXPECT_EQ(sizes[i].data<int64_t>()[0], static_cast<int64_t>(a[i].size()));
    }
    s.set_input("bs", Tensor::sequence({bs[0]}));
    const std::string msg = layer_test::error_of([&] { s.run({"outs"}); });
    EXPECT_TRUE(layer_test::contains(msg, "sequence input 1 has 1 elements, input 0 3")) << msg;
}

// Optionals: wrapping a value or none, asking, unwrapping; an optional graph
// input holding a sequence; a plain value given for an optional input is taken as held.
TEST(OnnxSequence, OptionalsWrapAskAndUnwrap)
{
    OnnxGraph g(18);
    g.input("x", {2});
    onnx::ValueInfoProto* opt = g.graph()->add_input();
    opt->set_name("opt");
    opt->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_sequence_type()->mutable_elem_type()
        ->mutable_tensor_type()->set_elem_type(kFloat);
    g.node("Optional", {"x"}, {"some"});
    onnx::NodeProto* none = g.node("Optional", {}, {"none"});
    onnx::AttributeProto* type = none->add_attribute();
    type->set_name("type");
    type->set_type(onnx::AttributeProto::TYPE_PROTO);
    type->mutable_tp()->mutable_tensor_type()->set_elem_type(kFloat);
    g.node("OptionalHasElement", {"some"}, {"has_some"});
    g.node("OptionalHasElement", {"none"}, {"has_none"});
    g.node("OptionalHasElement", {"opt"}, {"has_opt"});
    g.node("OptionalGetElement", {"some"}, {"x_again"});
    g.node("OptionalGetElement", {"opt"}, {"seq"});
    g.node("SequenceLength", {"seq"}, {"n"});
    g.node("OptionalGetElement", {"none"}, {"nothing"});
    for (const char* b : {"has_some", "has_none", "has_opt"}) g.output(b, 0, onnx::TensorProto::BOOL);
    g.output("x_again", 1);
    g.output("n", 0, kInt64);
    g.output("nothing", 1);
    const Net net = g.load(true);
    Session s(net);
    const Tensor x = layer_test::f32({2}, {3.f, -4.f});
    s.set_input("x", x);
    s.set_input("opt", Tensor::optional(Tensor::sequence({x, x, x})));
    const std::vector<Tensor> out = s.run({"has_some", "has_none", "has_opt", "x_again", "n"});
    EXPECT_EQ(out[0].data<uint8_t>()[0], 1);
    EXPECT_EQ(out[1].data<uint8_t>()[0], 0);
    EXPECT_EQ(out[2].data<uint8_t>()[0], 1);
    EXPECT_EQ(values(out[3]), values(x));
    EXPECT_EQ(out[4].data<int64_t>()[0], 3);
    const std::string msg = layer_test::error_of([&] { s.get("nothing"); });
    EXPECT_TRUE(layer_test::contains(msg, "the optional holds no value")) << msg;
    s.set_input("opt", Tensor::optional(Tensor()));
    EXPECT_EQ(s.get("has_opt").data<uint8_t>()[0], 0);
    s.set_input("opt", Tensor::sequence({x})); // a plain sequence: held
    EXPECT_EQ(s.get("n").data<int64_t>()[0], 1);
}

TEST(OnnxSequence, MismatchedElementsAreRefused)
{
    OnnxGraph g(13);
    g.input("x", {2, 3});
    g.input("y", {2, 4});
    g.node("SequenceConstruct", {"x", "y"}, {"s"});
    OnnxGraph::attr_int(g.node("ConcatFromSequence", {"s"}, {"c"}), "axis", 0);
    g.output("c", 2);
    const Net net = g.load(true);
    Session s(net);
    s.set_input("x", layer_test::f32({2, 3}, std::vector<float>(6, 1.f)));
    s.set_input("y", layer_test::f32({2, 4}, std::vector<float>(8, 1.f)));
    const std::string msg = layer_test::error_of([&] { s.get("c"); });
    EXPECT_TRUE(layer_test::contains(msg, "the elements must match but along axis 0")) << msg;
}

} // namespace
} // namespace kestrel
#endif
