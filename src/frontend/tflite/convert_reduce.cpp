// Reductions and normalizations: MEAN, SUM, REDUCE_MAX / MIN / PROD,
// ARG_MAX / ARG_MIN, SOFTMAX, LOG_SOFTMAX, L2_NORMALIZATION, CUMSUM, TOP_K_V2.
// A folded input is reduced over its mapped axes; an output that drops axes
// stays in the engine's order only when the axes it keeps are in the file's
// order there (NHWC reduced over H and W: N, C), else the input goes plain.
#include <algorithm>

#include "frontend/common/axis_order.h"
#include "frontend/tflite/converter.h"

namespace kestrel::tflite_import {

namespace {

std::vector<int> normalized_axes(const OpContext& n, const std::vector<int64_t>& axes, int rank)
{
    std::vector<int> out;
    for (int64_t a : axes) {
        const int64_t b = a < 0 ? a + rank : a;
        n.check(b >= 0 && b < rank, "axis ", a, " is out of range for rank ", rank);
        if (std::find(out.begin(), out.end(), static_cast<int>(b)) == out.end()) out.push_back(static_cast<int>(b));
    }
    std::sort(out.begin(), out.end());
    return out;
}

// How a reduction over `axes` of input 0 computes: folded when the input is
// held folded and the output is folded too (kept dims) or comes out in the
// file's order.
struct ReduceForm {
    bool folded_in = false, folded_out = false;
};
ReduceForm reduce_form(const OpContext& n, const std::vector<int>& axes, bool keepdims)
{
    ReduceForm f;
    if (n.rank(0) != 4 || !n.is_folded(0)) return f;
    if (keepdims) return {true, true};
    const std::vector<int> e = engine_permutation(AxisOrder::ChannelsLast, 4);
    std::vector<int> kept;
    for (int a : e)
        if (std::find(axes.begin(), axes.end(), a) == axes.end()) kept.push_back(a);
    f.folded_in = std::is_sorted(kept.begin(), kept.end());
    return f;
}

std::vector<int> engine_axes(const std::vector<int>& axes, int rank, bool folded)
{
    std::vector<int> out;
    for (int a : axes) out.push_back(OpContext::axis_in(a, rank, folded));
    std::sort(out.begin(), out.end());
    return out;
}

// MEAN / SUM / REDUCE_*: Reduction (0=op, 3=axes, 4=keepdims, 5=1: axes of the N-d tensor).
void convert_reduce(OpContext& n, int op)
{
    const auto* o = n.op().builtin_options_as_ReducerOptions();
    const bool keepdims = o && o->keep_dims();
    const int r = n.rank(0);
    const std::vector<int> axes = normalized_axes(n, n.constant_ints(1, "the axes"), r);
    if (axes.empty()) { // nothing to reduce
        n.emit("Noop", {n.plain(0)}, {n.output(0, false)});
        return;
    }
    const ReduceForm f = reduce_form(n, axes, keepdims);
    const bool all = static_cast<int>(axes.size()) == r;
    ParamDict pd;
    pd.set_int(0, op);
    pd.set_int(1, 0);
    pd.set_ints(3, engine_axes(axes, r, f.folded_in));
    pd.set_int(4, keepdims || all ? 1 : 0);
    pd.set_int(5, 1);
    const std::string x = f.folded_in ? n.folded(0) : n.plain(0);
    if (all && !keepdims) {
        const std::string kept = n.temp("kept");
        n.emit("Reduction", {x}, {kept}, pd);
        ParamDict squeeze;
        squeeze.set_int(21, 1);
        n.emit("Squeeze", {kept}, {n.output(0, false)}, squeeze);
        return;
    }
    n.emit("Reduction", {x}, {n.output(0, f.folded_out)}, pd);
}

// ARG_MAX / ARG_MIN: int64 from the layer, cast to the file's output type.
void convert_arg(OpContext& n, bool max)
{
    const int r = n.rank(0);
    const std::vector<int64_t> axis = n.constant_ints(1, "the axis");
    n.check(axis.size() == 1, "the axis must be one value");
    const std::vector<int> axes = normalized_axes(n, axis, r);
    const ReduceForm f = reduce_form(n, axes, false);
    ParamDict pd;
    const int first = max ? 21 : 0;
    if (max) pd.set_int(20, 1);
    pd.set_int(first, OpContext::axis_in(axes[0], r, f.folded_in));
    pd.set_int(first + 1, 0);
    const std::string x = f.folded_in ? n.folded(0) : n.plain(0);
    const DType out = n.out(0).dtype;
    const std::string y = n.output(0, false);
    const std::string index = out == DType::I64 ? y : n.temp("index");
    n.emit(max ? "ArgMax" : "ArgMin", {x}, {index}, pd);
    if (out == DType::I64) return;
    ParamDict cast;
    cast.set_int(2, static_cast<int>(out));
    n.emit("Cast", {index}, {y}, cast);
}

// SOFTMAX (beta scales the logits) and LOG_SOFTMAX over the last axis.
void convert_softmax(OpContext& n, bool log)
{
    const int r = n.rank(0);
    const bool folded_form = r == 4 && n.is_folded(0);
    std::string x = folded_form ? n.folded(0) : n.plain(0);
    if (!log)
        if (const auto* o = n.op().builtin_options_as_SoftmaxOptions(); o && o->beta() != 1.f) {
            ParamDict scale;
            scale.set_int(0, 2);
            scale.set_int(1, 1);
            scale.set_float(2, o->beta());
            const std::string scaled = n.temp("scaled");
            n.emit("BinaryOp", {x}, {scaled}, scale);
            x = scaled;
        }
    ParamDict pd;
    pd.set_int(0, OpContext::axis_in(-1, r, folded_form));
    if (!log) pd.set_int(1, 1);
    n.emit(log ? "LogSoftmax" : "Softmax", {x}, {n.output(0, folded_form)}, pd);
}

// L2_NORMALIZATION over the last axis: x / max(sqrt(sum x^2), 1e-6).
void convert_l2_normalization(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_L2NormOptions();
    const auto act = o ? o->fused_activation_function() : fb::ActivationFunctionType::NONE;
    const int r = n.rank(0);
    const bool folded_form = r == 4 && n.is_folded(0);
    const std::string x = folded_form ? n.folded(0) : n.plain(0);
    ParamDict norm, floor, div;
    norm.set_int(0, 8); // L2
    norm.set_int(1, 0);
    norm.set_ints(3, {OpContext::axis_in(-1, r, folded_form)});
    norm.set_int(4, 1);
    norm.set_int(5, 1);
    const std::string l2 = n.temp("l2"), floored = n.temp("floored");
    n.emit("Reduction", {x}, {l2}, norm);
    floor.set_int(0, 4);
    floor.set_int(1, 1);
    floor.set_float(2, 1e-6f);
    n.emit("BinaryOp", {l2}, {floored}, floor);
    div.set_int(0, 3);
    div.set_int(20, 1);
    const std::string y = n.output(0, folded_form);
    const std::string pre = act == fb::ActivationFunctionType::NONE ? y : n.temp("pre_activation");
    n.emit("BinaryOp", {x, floored}, {pre}, div);
    n.activation(pre, act, y);
}

void convert_cumsum(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_CumsumOptions();
    const int r = n.rank(0);
    const std::vector<int64_t> axis = n.constant_ints(1, "the axis");
    n.check(axis.size() == 1, "the axis must be one value");
    const bool folded_form = r == 4 && n.is_folded(0);
    const int a = OpContext::axis_in(normalized_axes(n, axis, r)[0], r, folded_form);
    ParamDict pd;
    pd.set_int(0, o && o->exclusive() ? 1 : 0);
    pd.set_int(1, o && o->reverse() ? 1 : 0);
    const std::string x = folded_form ? n.folded(0) : n.plain(0);
    n.emit("CumSum", {x, n.constant_blob(int64_tensor({a}).reshaped({}), "axis")}, {n.output(0, folded_form)}, pd);
}

// TOP_K_V2 over the last axis, sorted, largest first; int32 indices.
void convert_top_k(OpContext& n)
{
    const std::vector<int64_t> k = n.constant_ints(1, "k");
    n.check(k.size() == 1 && k[0] >= 0, "k must be one non-negative value");
    ParamDict pd;
    pd.set_int(0, -1);
    pd.set_int(1, 1);
    pd.set_int(2, 1);
    const std::string index = n.temp("index");
    n.emit("TopK", {n.plain(0), n.constant_blob(int64_tensor(k), "k")}, {n.output(0, false), index}, pd);
    ParamDict cast;
    cast.set_int(2, static_cast<int>(n.out(1).dtype));
    n.emit("Cast", {index}, {n.output(1, false)}, cast);
}

} // namespace

void add_reduce_converters(BuiltinTable& t)
{
    using Op = fb::BuiltinOperator;
    t[Op::SUM] = [](OpContext& n) { convert_reduce(n, 0); };
    t[Op::MEAN] = [](OpContext& n) { convert_reduce(n, 3); };
    t[Op::REDUCE_MAX] = [](OpContext& n) { convert_reduce(n, 4); };
    t[Op::REDUCE_MIN] = [](OpContext& n) { convert_reduce(n, 5); };
    t[Op::REDUCE_PROD] = [](OpContext& n) { convert_reduce(n, 6); };
    t[Op::ARG_MAX] = [](OpContext& n) { convert_arg(n, true); };
    t[Op::ARG_MIN] = [](OpContext& n) { convert_arg(n, false); };
    t[Op::SOFTMAX] = [](OpContext& n) { convert_softmax(n, false); };
    t[Op::LOG_SOFTMAX] = [](OpContext& n) { convert_softmax(n, true); };
    t[Op::L2_NORMALIZATION] = convert_l2_normalization;
    t[Op::CUMSUM] = convert_cumsum;
    t[Op::TOPK_V2] = convert_top_k;
}

} // namespace kestrel::tflite_import
