// Reading the IR while matching rewrite patterns (fuse_matmul.cpp,
// fuse_patterns.cpp): who produces a blob, who else reads it, constant values,
// and the BinaryOp / UnaryOp forms the importers emit.
#pragma once
#include <vector>

#include "graph/optimize.h"

namespace kestrel {

// ncnn BinaryOp op_type codes used by the patterns.
enum BinaryOpType { kBinAdd = 0, kBinSub = 1, kBinMul = 2, kBinDiv = 3, kBinPow = 6 };

// The layer producing `blob`, or nullptr (graph input blobs have an Input layer).
const Layer* producer(const Graph& g, int blob);
int producer_index(const Graph& g, int blob);

// `blob` is no graph output and every layer reading it is in `readers`
// (a layer may read it more than once). Intermediates of a pattern must be.
bool read_only_by(const Graph& g, int blob, const std::vector<int>& readers);

// The one layer reading `blob` (which is no graph output), or -1.
int only_reader(const Graph& g, int blob);

// The value of a Constant layer's output, or nullptr.
const Tensor* constant_of(const Graph& g, int blob);

// BinaryOp `op` of a blob and a scalar param (with_scalar=1): gives the scalar;
// is_scalar_binary also asks for its value.
bool scalar_binary(const Layer& l, int op, float& scalar);
bool is_scalar_binary(const Layer& l, int op, float scalar, float tolerance = 0.f);
// BinaryOp `op` of two blobs; `numpy_only` also asks for numpy broadcasting
// (20=1), needed when the operands may differ in shape.
bool is_two_input_binary(const Layer& l, int op, bool numpy_only);
// For a two-input layer with `known` as one bottom: the other bottom, or -1.
int other_input(const Layer& l, int known);

// One-input element-wise op: ncnn's UnaryOp with op_type `ncnn_op`, or our
// Unary layer with op `our_op` (-1: that layer has no such op).
bool is_unary(const Layer& l, int ncnn_op, int our_op);

// The shape hint of a blob, or nullptr.
const Shape* hint_of(const Graph& g, const ShapeHints& hints, int blob);

// Rewrites layer `li` in place as a new layer reading `bottoms` (tops kept).
void replace_layer(Graph& g, int li, const std::string& type, const std::vector<int>& bottoms, const ParamDict& params,
                   const std::vector<Tensor>& weights);

} // namespace kestrel
