// The moves of a layer that only moves elements (Concat, Slice, Crop, Permute,
// ShuffleChannel, Padding, Tile, Expand, gathers at known indices) as data,
// at its planned shapes: constant fills, then strided copies from inputs to
// outputs. A backend that moves elements itself (the Vulkan backend) runs any
// such layer from its moves alone. Offsets and strides count elements.
#pragma once
#include <cstdint>
#include <vector>

#include "kestrel/op.h"

namespace kestrel {

// Output `output`'s elements at out_offset + sum(i_k * out_strides[k]) take
// input `input`'s at in_offset + sum(i_k * in_strides[k]), for every index i
// within dims. Strides may be 0 (repeats) or negative (reversals).
struct StridedCopy {
    size_t input = 0, output = 0;
    int64_t in_offset = 0, out_offset = 0;
    Shape dims;
    std::vector<int64_t> in_strides, out_strides;
};

// Output `output`'s elements at offset + sum(i_k * strides[k]) take `value`
// (one element's bytes).
struct ConstantFill {
    size_t output = 0;
    int64_t offset = 0;
    Shape dims;
    std::vector<int64_t> strides;
    std::vector<uint8_t> value;
};

// Fills first, then copies; together they write every output element.
struct ElementMoves {
    std::vector<ConstantFill> fills;
    std::vector<StridedCopy> copies;
};

// Implemented by the layers that only move elements.
class MovesElements {
public:
    virtual ~MovesElements() = default;
    // False when the moves are not known from these shapes (values known
    // only at run time) or the layer takes another form here.
    virtual bool element_moves(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                               ElementMoves& moves) const = 0;
};

// `op`'s moves; false when it is no such layer or cannot say.
bool element_moves_of(const Op& op, const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                      ElementMoves& moves);

// A copy of all of `dims`, both sides dense, from and to the given offsets.
StridedCopy dense_copy(size_t input, size_t output, const Shape& dims, int64_t in_offset = 0, int64_t out_offset = 0);

// Runs the moves on host tensors (outputs allocated): the reference the
// layers' own kernels are tested against.
void apply_element_moves(const ElementMoves& moves, const std::vector<Tensor>& in, std::vector<Tensor>& out);

} // namespace kestrel
