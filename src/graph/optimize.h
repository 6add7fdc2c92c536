// Graph optimizer: passes over the IR that keep outputs equal (up to float
// rounding for the folding and fusing passes). Front-ends run them after
// conversion; Net::optimize() runs them on any loaded model.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace kestrel {

struct OptimizeReport {
    std::vector<std::string> applied; // one line per rewrite, for `kestrel convert -v` and tests
};

// Blob name -> shape known before running (-1 for a dim that may vary), e.g.
// from ONNX shape inference. Rewrites that are exact only for some ranks or
// sizes fire only where a hint proves them.
using ShapeHints = std::map<std::string, Shape>;

// Each pass returns how many rewrites it made.
int remove_identity_layers(Graph& g, OptimizeReport& report);   // Noop, Dropout with scale 1
int fold_constant_layers(Graph& g, OptimizeReport& report);     // layers whose inputs are all Constant
int fold_affine_into_conv(Graph& g, OptimizeReport& report); // Conv/ConvDW/InnerProduct -> BatchNorm or x*c, x+c, x-c
// Conv/ConvDW/InnerProduct -> ReLU/Clip/Mish/HardSwish/Swish, the same bits as the two
// layers. Without ops (with_ops false: a parsed graph whose ops are not made yet) it
// edits params only.
int fuse_activation_into_conv(Graph& g, OptimizeReport& report, bool with_ops = true);
// Conv/ConvDW (float, no activation) -> Eltwise SUM of it and another blob ready before it
// (or an Add of two blobs `hints` prove the same shape): the other blob becomes
// the convolution's residual input (param 20), added before its activation, the
// same bits; an activation after the sum can then be fused as well.
int fuse_residual_into_conv(Graph& g, OptimizeReport& report, bool with_ops = true,
                            const ShapeHints* hints = nullptr);
// Padding (constant, rows and columns only) -> Convolution/ConvDW that alone reads it:
// the pads added to the convolution's, the same bits (with_ops as above).
int fuse_padding_into_conv(Graph& g, OptimizeReport& report, bool with_ops = true);
int remove_dead_layers(Graph& g, OptimizeReport& report);       // nothing reaches a graph output
// MatMul (constant 2-D B) [+ Add of a bias along the last axis] -> InnerProduct (fuse_matmul.cpp).
int fuse_matmul_into_inner_product(Graph& g, const ShapeHints& hints, OptimizeReport& report);
// Exported op sequences -> one layer (fuse_patterns.cpp).
int fuse_layer_norm_pattern(Graph& g, const ShapeHints& hints, OptimizeReport& report); // ReduceMean..Add(beta)
int fuse_gelu_pattern(Graph& g, OptimizeReport& report);       // x * 0.5 * (1 + erf(x / sqrt 2))
int fuse_swish_pattern(Graph& g, OptimizeReport& report);      // x * Sigmoid(x)
int fuse_hard_swish_pattern(Graph& g, OptimizeReport& report); // x * HardSigmoid(x), x * Clip(x + 3, 0, 6) / 6
// Softmax(Q . K^T * scale [+ mask]) . V -> SDPA (fuse_attention.cpp).
int fuse_attention_pattern(Graph& g, const ShapeHints& hints, OptimizeReport& report);

// The outputs of `op` (params and weights loaded) on constant inputs, or
// false when they are not worth keeping as constants: a value-dependent
// output shape, outputs far larger than the inputs, sequences or optionals,
// or an error (the runtime reports it with context). Folding passes and the
// front-ends' GraphBuilder share it.
bool evaluate_on_constants(const Op& op, const std::vector<Tensor>& inputs, size_t output_count,
                           std::vector<Tensor>& outputs);

// All passes, to a fixed point.
OptimizeReport optimize_graph(Graph& g, const ShapeHints& hints = {});

// Re-creates a layer's op from its params and stored weights (after a pass edits them).
void rebuild_layer(Graph& g, int layer, const std::vector<Tensor>& weights);

// Rewriting helpers shared by the passes.
bool is_graph_output(const Graph& g, int blob);
// Marks a layer deleted (type emptied); compact() then drops it and re-links the graph.
void erase_layer(Layer& l);
void compact(Graph& g);
// The single consumer of a layer's only output (which is no graph output), or -1.
int sole_consumer(const Graph& g, int layer);
// The layer after `layer` takes over: `layer` writes the follower's top, the follower goes (compacts).
void absorb_follower(Graph& g, int layer, int follower);

} // namespace kestrel
