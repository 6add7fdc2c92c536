// The element moves each moving layer describes (ops/common/element_moves.h),
// run by the plain reference apply_element_moves, against the layer's own
// kernel, bit for bit, over tests/element_move_cases.h; every output element
// must be written (outputs start as a byte pattern no case produces).
#include <gtest/gtest.h>

#include <cstring>

#include "element_move_cases.h"
#include "graph/graph.h"
#include "ops/common/element_moves.h"

namespace kestrel {
namespace {

using element_move_cases::MoveCase;

TEST(ElementMoves, ReproduceEveryMovingLayer)
{
    for (const MoveCase& c : element_move_cases::cases()) {
        SCOPED_TRACE(c.type + " " + c.what);
        const Net net = layer_test::layer_net(c.type, c.pd, c.ins, c.outputs, c.weights);
        const std::vector<Tensor> want = layer_test::run_layer_net(net, c.ins, c.outputs, Options{});
        const Layer& layer = net.graph().layers.back();
        std::vector<TensorDesc> in, out(static_cast<size_t>(c.outputs));
        std::vector<Tensor> inputs;
        for (const layer_test::In& i : c.ins) {
            in.push_back(TensorDesc(i.t.shape(), i.t.dtype(), i.constant ? i.t : Tensor()));
            inputs.push_back(i.t);
        }
        layer.op->infer(in, out);
        ElementMoves moves;
        ASSERT_TRUE(element_moves_of(*layer.op, in, out, moves));
        std::vector<Tensor> got;
        for (const TensorDesc& d : out) {
            got.push_back(Tensor(d.shape, d.dtype));
            std::memset(got.back().raw(), 0xA5, got.back().nbytes());
        }
        apply_element_moves(moves, inputs, got);
        ASSERT_EQ(got.size(), want.size());
        for (size_t o = 0; o < got.size(); ++o) {
            ASSERT_EQ(got[o].shape(), want[o].shape()) << "output " << o;
            EXPECT_EQ(std::memcmp(got[o].raw(), want[o].raw(), want[o].nbytes()), 0) << "output " << o;
        }
    }
}

// A layer that computes (not only moves) says it has no moves.
TEST(ElementMoves, OtherLayersHaveNone)
{
    const Net net = layer_test::layer_net("BinaryOp", ParamDict{}, {Tensor({2}, DType::F32), Tensor({2}, DType::F32)});
    ElementMoves moves;
    const std::vector<TensorDesc> in = {TensorDesc({2}), TensorDesc({2})}, out = {TensorDesc({2})};
    EXPECT_FALSE(element_moves_of(*net.graph().layers.back().op, in, out, moves));
}

} // namespace
} // namespace kestrel
