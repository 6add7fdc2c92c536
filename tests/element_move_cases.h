// Layers that only move elements (ops/common/element_moves.h), in the forms
// their moves must cover: Concat, Slice, Crop, Permute, ShuffleChannel,
// Padding, Tile, Expand and the gathers over ranks, axes, ncnn's and ONNX's
// parameter forms, 4- and 8-byte elements. Shared by the moves' own test (test_element_moves.cpp) and the
// Vulkan backend's (test_vulkan_element_moves.cpp).
#pragma once
#include <string>
#include <vector>

#include "layer_test_util.h"

namespace kestrel::element_move_cases {

using layer_test::C;
using layer_test::In;

struct MoveCase {
    std::string type, what;
    ParamDict pd;
    std::vector<In> ins;
    int outputs = 1;
    std::vector<Tensor> weights;
};

inline ParamDict params(std::initializer_list<std::pair<int, int>> ints,
                        std::initializer_list<std::pair<int, std::vector<int>>> arrays = {})
{
    ParamDict pd = layer_test::P(ints);
    for (const auto& [id, v] : arrays) pd.set_ints(id, v);
    return pd;
}

// Distinct values, so a misplaced element shows.
inline Tensor counting(const Shape& s, DType t = DType::F32)
{
    Tensor x(s, t);
    for (int64_t i = 0; i < x.numel(); ++i) {
        if (t == DType::F32) x.data<float>()[i] = 0.5f * static_cast<float>(i) - 7.f;
        if (t == DType::I32) x.data<int32_t>()[i] = static_cast<int32_t>(3 * i - 11);
        if (t == DType::I64) x.data<int64_t>()[i] = (int64_t{1} << 40) + i;
    }
    return x;
}

inline std::vector<MoveCase> cases()
{
    using layer_test::i64v;
    std::vector<MoveCase> v;
    const auto add = [&](const std::string& type, const std::string& what, ParamDict pd, std::vector<In> ins,
                         int outputs = 1, std::vector<Tensor> weights = {}) {
        v.push_back(MoveCase{type, what, std::move(pd), std::move(ins), outputs, std::move(weights)});
    };
    // Concat
    add("Concat", "axis 0", params({{0, 0}}), {counting({2, 3, 4}), counting({1, 3, 4}), counting({3, 3, 4})});
    add("Concat", "axis 1", params({{0, 1}}), {counting({2, 3, 4}), counting({2, 1, 4})});
    add("Concat", "axis -1 rank 4", params({{0, -1}}), {counting({2, 3, 4, 5}), counting({2, 3, 4, 2})});
    add("Concat", "rank 5 axis 2", params({{0, 2}}),
        {counting({2, 1, 3, 2, 2}), counting({2, 1, 1, 2, 2}), counting({2, 1, 2, 2, 2})});
    add("Concat", "int32", params({{0, 1}}), {counting({2, 3}, DType::I32), counting({2, 2}, DType::I32)});
    add("Concat", "int64", params({{0, 0}}), {counting({2, 3}, DType::I64), counting({1, 3}, DType::I64)});
    // Slice
    add("Slice", "thirds", params({{1, 0}}, {{0, {-233, -233, -233}}}), {counting({6, 4, 5})}, 3);
    add("Slice", "sizes and rest", params({{1, 1}}, {{0, {2, -233}}}), {counting({3, 5, 4})}, 2);
    add("Slice", "indices", params({{1, -1}}, {{2, {1, -1}}}), {counting({3, 4, 7})}, 3);
    add("Slice", "onnx sizes", params({{1, 2}}), {counting({2, 3, 6, 2}), C(i64v({2, 3, 1}))}, 3);
    // Crop
    add("Crop", "offsets and sizes", params({{0, 1}, {1, 2}, {2, 1}, {3, 3}, {4, 2}, {5, 2}}), {counting({4, 6, 5})});
    add("Crop", "numpy starts ends axes", params({}, {{9, {1, 0}}, {10, {-1, 3}}, {11, {1, 2}}}), {counting({3, 5, 6})});
    add("Crop", "reference blob", params({{0, 1}, {1, 1}}), {counting({3, 4, 5}), counting({3, 2, 3})});
    add("Crop", "onnx slice with steps", params({{22, 1}}),
        {counting({2, 5, 7}), C(i64v({4, 1})), C(i64v({0, -1})), C(i64v({2, 1})), C(i64v({-2, 2}))});
    add("Crop", "int64 onnx slice", params({{22, 1}}),
        {counting({4, 6}, DType::I64), C(i64v({1})), C(i64v({5})), C(i64v({1})), C(i64v({2}))});
    // Permute (order 0 is a view, not a move)
    for (int order = 1; order < 6; ++order)
        add("Permute", "rank 3 order " + std::to_string(order), params({{0, order}}), {counting({2, 3, 4})});
    for (int order : {1, 7, 13, 23})
        add("Permute", "rank 4 order " + std::to_string(order), params({{0, order}}), {counting({2, 3, 4, 5})});
    add("Permute", "rank 5 perm", params({}, {{1, {4, 2, 0, 3, 1}}}), {counting({2, 1, 3, 4, 2})});
    add("Permute", "reversed", params({{2, 1}}), {counting({2, 3, 4})});
    // ShuffleChannel
    add("ShuffleChannel", "group 2", params({{0, 2}}), {counting({6, 3, 4})});
    add("ShuffleChannel", "group 3 reversed", params({{0, 3}, {1, 1}}), {counting({6, 5, 2})});
    add("ShuffleChannel", "rank 4", params({{0, 2}}), {counting({4, 2, 3, 3})});
    // Padding: ncnn's form
    ParamDict constant = params({{0, 1}, {1, 2}, {2, 3}, {3, 0}});
    constant.set_float(5, 1.5f);
    add("Padding", "constant", constant, {counting({2, 4, 5})});
    add("Padding", "replicate", params({{0, 2}, {1, 1}, {2, 1}, {3, 2}, {4, 1}}), {counting({3, 4, 4})});
    add("Padding", "reflect", params({{0, 2}, {1, 1}, {2, 3}, {3, 1}, {4, 2}}), {counting({2, 4, 5})});
    ParamDict channels = params({{7, 1}, {8, 2}});
    channels.set_float(5, -2.f);
    add("Padding", "channels", channels, {counting({3, 4, 5})});
    add("Padding", "rank 4 depth reflect", params({{7, 1}, {8, 1}, {2, 1}, {4, 2}}), {counting({2, 3, 4, 5})});
    add("Padding", "per-channel values", params({{7, 1}, {8, 1}, {0, 1}, {6, 5}}), {counting({3, 2, 2})}, 1,
        {layer_test::f32({5}, {9.f, -8.f, 7.f, -6.f, 5.f})});
    // Padding: ONNX's form (pads as inputs; negative pads crop)
    add("Padding", "onnx constant", params({{21, 1}, {4, 0}}),
        {counting({3, 4, 5}), C(i64v({1, -1, 2, 0, 2, -1})), C(layer_test::f32({1}, {0.5f}))});
    add("Padding", "onnx edge on axes", params({{21, 1}, {4, 1}}),
        {counting({2, 3, 4}), C(i64v({2, 3})), C(layer_test::f32({1}, {0.f})), C(i64v({1}))});
    add("Padding", "onnx reflect past the size", params({{21, 1}, {4, 2}}),
        {counting({2, 3, 3}), C(i64v({0, 0, 5, 0, 0, 4}))});
    add("Padding", "onnx wrap", params({{21, 1}, {4, 3}}), {counting({4, 3}), C(i64v({1, 2, 0, 3}))});
    add("Padding", "int64 onnx constant", params({{21, 1}, {4, 0}}),
        {counting({2, 3}, DType::I64), C(i64v({1, 1, 0, 2}))});
    // Tile, Expand
    add("Tile", "ncnn axis", params({{0, 1}, {1, 3}}), {counting({2, 3, 4})});
    add("Tile", "ncnn repeats", params({}, {{2, {2, 1, 3}}}), {counting({3, 2, 2})});
    add("Tile", "onnx repeats", params({{21, 1}}), {counting({2, 3}), C(i64v({3, 2}))});
    add("Expand", "numpy", params({}), {counting({3, 1, 4}), C(i64v({2, 1, 5, 1}))});
    // Gathers with indices known while planning
    add("Gather", "axis 1", params({{0, 1}}), {counting({3, 5, 4}), C(i64v({4, -1, 0, 2}))});
    add("Gather", "scalar index", params({{0, 0}}), {counting({4, 6}), C(layer_test::i64({}, {2}))});
    add("GatherElements", "axis 1", params({{0, 1}}),
        {counting({3, 4}), C(layer_test::i64({3, 2}, {0, 3, 1, 1, -1, 2}))});
    add("GatherND", "pairs", params({}), {counting({3, 4, 2}), C(layer_test::i64({2, 2}, {1, 3, 2, 0}))});
    return v;
}

} // namespace kestrel::element_move_cases
