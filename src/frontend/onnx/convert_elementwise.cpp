// Element-wise ONNX ops over every dtype: binary arithmetic, comparisons,
// logic, bitwise, Mod, BitShift, PRelu, Where, variadic Sum/Mean/Max/Min and
// the unary math / activation ops. Layers (ops documented in
// src/ops/elementwise/typed_ops.h):
//   - float32 Add/Sub/Mul/Div/Pow (both inputs known to be float32) become
//     ncnn's BinaryOp with 20=1 (numpy broadcasting), or with_scalar when one
//     side is a constant scalar; float32 unaries with an exact ncnn UnaryOp
//     twin become UnaryOp. Converted files stay ncnn-like.
//   - everything else becomes the typed forms (21=1) of BinaryOp, UnaryOp and
//     Eltwise, or Where, which take every dtype ONNX allows.
// Relu, LeakyRelu, HardSigmoid, HardSwish, Sigmoid, Tanh and Clip have float32
// converters in convert_basic.cpp; the entries here take over only for other
// dtypes (and Clip with non-constant bounds) and call those for float32.
#include <cstring>
#include <map>

#include "frontend/onnx/converter.h"

namespace kestrel::onnx_import {

namespace {

// Op codes of BinaryOp's typed table.
enum EwOp {
    kAdd = 0, kSub = 1, kMul = 2, kDiv = 3, kPow = 4, kMod = 5, kFmod = 6, kMax = 7, kMin = 8,
    kShiftLeft = 9, kShiftRight = 10, kEqual = 11, kGreater = 12, kGreaterOrEqual = 13, kLess = 14,
    kLessOrEqual = 15, kAnd = 16, kOr = 17, kXor = 18, kBitwiseAnd = 19, kBitwiseOr = 20, kBitwiseXor = 21,
    kPRelu = 22,
};
// Op codes of UnaryOp's typed table.
enum UnOp {
    kAbs = 0, kNeg = 1, kFloor = 2, kCeil = 3, kRound = 4, kSqrt = 5, kReciprocal = 6, kExp = 7, kLog = 8,
    kSin = 9, kCos = 10, kTan = 11, kAsin = 12, kAcos = 13, kAtan = 14, kSinh = 15, kCosh = 16, kAsinh = 17,
    kAcosh = 18, kAtanh = 19, kErf = 20, kSign = 21, kIsNaN = 22, kIsInf = 23, kSoftsign = 24, kSoftplus = 25,
    kRelu = 26, kLeakyRelu = 27, kElu = 28, kSelu = 29, kCelu = 30, kThresholdedRelu = 31, kHardSigmoid = 32,
    kHardSwish = 33, kGelu = 34, kShrink = 35, kNot = 36, kBitwiseNot = 37, kSigmoid = 38, kTanh = 39,
};
constexpr int kNone = -1; // no ncnn twin

bool known_f32(NodeContext& n, int i)
{
    const DType* t = n.input_dtype(i);
    return t != nullptr && *t == DType::F32;
}
bool known_not_f32(NodeContext& n, int i)
{
    const DType* t = n.input_dtype(i);
    return t != nullptr && *t != DType::F32;
}

// Opset < 7 `broadcast=1` aligns B at `axis`; numpy alignment covers the
// trailing case (no axis, or axis == rank(A) - rank(B)).
void check_legacy_broadcast(NodeContext& n)
{
    if (n.opset() >= 7 || n.attr_int("broadcast", 0) == 0 || !n.has_attr("axis")) return;
    const int ra = n.input_rank(0), rb = n.input_rank(1);
    int64_t axis = n.attr_int("axis", 0);
    if (ra >= 0 && axis < 0) axis += ra;
    n.check(ra >= 0 && rb >= 0 && axis == ra - rb, "legacy broadcast with axis=", n.attr_int("axis", 0),
            " (not trailing-aligned) is not supported");
}

void emit_elementwise(NodeContext& n, int op, const std::string& a, const std::string& b, const std::string& out,
                      int rule = 1)
{
    ParamDict pd;
    pd.set_int(21, 1); // the typed table
    pd.set_int(0, op);
    if (rule != 1) pd.set_int(20, rule);
    n.emit("BinaryOp", {a, b}, {out}, pd);
}

// A constant input holding one value whose rank does not raise the output's.
bool scalar_constant(NodeContext& n, int i, int other, float& value)
{
    const Tensor* c = n.constant(i);
    if (c == nullptr || c->numel() != 1 || c->dtype() != DType::F32) return false;
    if (c->rank() > 0 && n.input_rank(other) < c->rank()) return false;
    value = tensor_to_floats(*c)[0];
    return true;
}

// Add, Sub, Mul, Div, Pow. NcnnOp / NcnnRev: ncnn BinaryOp op_type of a op b / b op a.
template <int Op, int NcnnOp, int NcnnRev>
void convert_arith(NodeContext& n)
{
    check_legacy_broadcast(n);
    if (!(known_f32(n, 0) && known_f32(n, 1))) {
        emit_elementwise(n, Op, n.input(0), n.input(1), n.output(0));
        return;
    }
    float v = 0.f;
    ParamDict pd;
    if (scalar_constant(n, 1, 0, v)) {
        pd.set_int(0, NcnnOp);
        pd.set_int(1, 1);
        pd.set_float(2, v);
        n.emit("BinaryOp", {n.input(0)}, {n.output(0)}, pd);
    } else if (scalar_constant(n, 0, 1, v)) {
        pd.set_int(0, NcnnRev);
        pd.set_int(1, 1);
        pd.set_float(2, v);
        n.emit("BinaryOp", {n.input(1)}, {n.output(0)}, pd);
    } else {
        pd.set_int(0, NcnnOp);
        pd.set_int(20, 1);
        n.emit("BinaryOp", {n.input(0), n.input(1)}, {n.output(0)}, pd);
    }
}

template <int Op>
void convert_binary(NodeContext& n)
{
    check_legacy_broadcast(n);
    emit_elementwise(n, Op, n.input(0), n.input(1), n.output(0));
}

void convert_mod(NodeContext& n)
{
    const int64_t fmod = n.attr_int("fmod", 0);
    n.check(fmod == 0 || fmod == 1, "fmod must be 0 or 1, got ", fmod);
    emit_elementwise(n, fmod ? kFmod : kMod, n.input(0), n.input(1), n.output(0));
}

void convert_bitshift(NodeContext& n)
{
    const std::string dir = n.attr_string("direction");
    n.check(dir == "LEFT" || dir == "RIGHT", "direction must be LEFT or RIGHT, got '", dir, "'");
    emit_elementwise(n, dir == "LEFT" ? kShiftLeft : kShiftRight, n.input(0), n.input(1), n.output(0));
}

// slope is broadcast to X's shape (unidirectional).
// PRelu broadcasts its slope to x by ONNX's (unidirectional) rule. PyTorch's
// legacy exports give a per-channel slope as (C,) on an (N, C, ...) input,
// which that rule cannot place (the last axis is not C): it is taken as
// PyTorch meant it, (C, 1, ..., 1).
void convert_prelu(NodeContext& n)
{
    std::string slope = n.input(1);
    const Shape x = n.input_shape(0) ? *n.input_shape(0) : Shape{}; // (input_shape's storage is reused)
    const Shape s = n.input_shape(1) ? *n.input_shape(1) : Shape{};
    if (x.size() >= 3 && s.size() == 1 && s[0] > 1 && x[1] == s[0] && x.back() >= 0 && x.back() != s[0]) {
        std::vector<int64_t> per_channel(x.size() - 1, 1);
        per_channel[0] = s[0];
        slope = stand_in_value(n, "Reshape", {slope, n.constant_name(int64_tensor(per_channel), "per_channel")},
                               "channel_slope");
    }
    emit_elementwise(n, kPRelu, n.input(0), slope, n.output(0), 2);
}

void convert_where(NodeContext& n) { n.emit("Where", {n.input(0), n.input(1), n.input(2)}, {n.output(0)}); }

// Sum, Max, Min, Mean: Eltwise's typed form, op 1, 2, 3, 4.
template <int Op>
void convert_variadic(NodeContext& n)
{
    std::vector<std::string> inputs;
    for (int i = 0; i < n.num_inputs(); ++i)
        if (n.has_input(i)) inputs.push_back(n.input(i));
    n.check(!inputs.empty(), "needs at least one input");
    ParamDict pd;
    pd.set_int(21, 1);
    pd.set_int(0, Op);
    n.emit("Eltwise", inputs, {n.output(0)}, pd);
}

// --- unary

struct UnaryAttrs {
    float alpha = 0.f, beta = 0.f;
    int flag_a = 0, flag_b = 0;
    bool floats = false, flags = false; // which params to write
};

void emit_unary(NodeContext& n, int op, const UnaryAttrs& at = {})
{
    ParamDict pd;
    pd.set_int(21, 1); // the typed table
    pd.set_int(0, op);
    if (at.floats) {
        pd.set_float(1, at.alpha);
        pd.set_float(2, at.beta);
    }
    if (at.flags) {
        pd.set_int(3, at.flag_a);
        pd.set_int(4, at.flag_b);
    }
    n.emit("UnaryOp", {n.input(0)}, {n.output(0)}, pd);
}

// A plain unary; float32 goes to ncnn's UnaryOp when it has the op (NcnnOp >= 0).
template <int Op, int NcnnOp>
void convert_unary(NodeContext& n)
{
    if (NcnnOp != kNone && known_f32(n, 0)) {
        ParamDict pd;
        pd.set_int(0, NcnnOp);
        n.emit("UnaryOp", {n.input(0)}, {n.output(0)}, pd);
        return;
    }
    emit_unary(n, Op);
}

UnaryAttrs alpha_beta(float alpha, float beta)
{
    UnaryAttrs at;
    at.alpha = alpha;
    at.beta = beta;
    at.floats = true;
    return at;
}

void convert_elu(NodeContext& n) { emit_unary(n, kElu, alpha_beta(n.attr_float("alpha", 1.f), 0.f)); }
void convert_celu(NodeContext& n)
{
    const float alpha = n.attr_float("alpha", 1.f);
    n.check(alpha != 0.f, "alpha must not be 0");
    emit_unary(n, kCelu, alpha_beta(alpha, 0.f));
}
void convert_selu(NodeContext& n)
{
    emit_unary(n, kSelu, alpha_beta(n.attr_float("alpha", 1.67326319217681884765625f),
                                    n.attr_float("gamma", 1.05070102214813232421875f)));
}
void convert_thresholded_relu(NodeContext& n)
{
    emit_unary(n, kThresholdedRelu, alpha_beta(n.attr_float("alpha", 1.f), 0.f));
}
void convert_shrink(NodeContext& n)
{
    emit_unary(n, kShrink, alpha_beta(n.attr_float("lambd", 0.5f), n.attr_float("bias", 0.f)));
}
void convert_isinf(NodeContext& n)
{
    UnaryAttrs at;
    at.flag_a = static_cast<int>(n.attr_int("detect_negative", 1) != 0);
    at.flag_b = static_cast<int>(n.attr_int("detect_positive", 1) != 0);
    at.flags = true;
    emit_unary(n, kIsInf, at);
}
void convert_gelu(NodeContext& n)
{
    const std::string approx = n.attr_string("approximate", "none");
    n.check(approx == "none" || approx == "tanh", "approximate must be 'none' or 'tanh', got '", approx, "'");
    UnaryAttrs at;
    at.flag_a = approx == "tanh" ? 1 : 0;
    at.flags = true;
    emit_unary(n, kGelu, at);
}

// --- ops with float32 converters in convert_basic.cpp

NodeConverter basic_converter(const std::string& op_type)
{
    static const std::map<std::string, NodeConverter> table = [] {
        std::map<std::string, NodeConverter> m;
        for (const ConverterEntry& e : basic_converters()) m[e.op_type] = e.convert;
        return m;
    }();
    const auto it = table.find(op_type);
    return it == table.end() ? nullptr : it->second;
}

// float32 (or unknown dtype): the basic converter; other dtypes: our Unary.
template <int Op>
void convert_float_activation(NodeContext& n)
{
    if (!known_not_f32(n, 0))
        if (NodeConverter basic = basic_converter(n.op_type())) return basic(n);
    UnaryAttrs at;
    if (Op == kLeakyRelu) at = alpha_beta(n.attr_float("alpha", 0.01f), 0.f);
    if (Op == kHardSigmoid) at = alpha_beta(n.attr_float("alpha", 0.2f), n.attr_float("beta", 0.5f));
    emit_unary(n, Op, at);
}

// Clip = Min(Max(x, min), max) with our layers for non-float32 inputs or
// non-constant bounds; the basic converter (ncnn Clip) otherwise.
void convert_clip(NodeContext& n)
{
    const bool bounds_as_inputs = n.opset() >= 11;
    bool constant_bounds = true;
    if (bounds_as_inputs)
        for (int i : {1, 2})
            if (n.has_input(i) && (n.constant(i) == nullptr || n.constant(i)->numel() != 1)) constant_bounds = false;
    if (!known_not_f32(n, 0) && constant_bounds)
        if (NodeConverter basic = basic_converter("Clip")) return basic(n);

    std::string lo, hi;
    if (bounds_as_inputs) {
        if (n.has_input(1)) lo = n.input(1);
        if (n.has_input(2)) hi = n.input(2);
    } else {
        // Opset 6: float attributes; make constants of X's dtype.
        const DType* t = n.input_dtype(0);
        n.check(t != nullptr, "the input dtype is unknown");
        auto constant = [&](const char* attr, float v) {
            Tensor f(Shape{}, DType::F32);
            *f.data<float>() = v;
            const Tensor c = f.to(*t);
            const std::string blob = n.temp(attr);
            ParamDict pd;
            pd.set_int(0, static_cast<int>(*t));
            n.emit("Constant", {}, {blob}, pd, {c});
            return blob;
        };
        if (n.has_attr("min")) lo = constant("min", n.attr_float("min", 0.f));
        if (n.has_attr("max")) hi = constant("max", n.attr_float("max", 0.f));
    }
    std::string x = n.input(0);
    if (lo.empty() && hi.empty()) {
        n.emit("Noop", {x}, {n.output(0)});
        return;
    }
    if (!lo.empty()) {
        const std::string y = hi.empty() ? n.output(0) : n.temp("clip_min");
        emit_elementwise(n, kMax, x, lo, y);
        x = y;
    }
    if (!hi.empty()) emit_elementwise(n, kMin, x, hi, n.output(0));
}

} // namespace

std::vector<ConverterEntry> elementwise_converters()
{
    return {
        // binary arithmetic (ncnn BinaryOp op_types: 0 add, 1 sub, 2 mul, 3 div, 6 pow, 7 rsub, 8 rdiv, 9 rpow)
        {"Add", convert_arith<kAdd, 0, 0>},
        {"Sub", convert_arith<kSub, 1, 7>},
        {"Mul", convert_arith<kMul, 2, 2>},
        {"Div", convert_arith<kDiv, 3, 8>},
        {"Pow", convert_arith<kPow, 6, 9>},
        {"Mod", convert_mod},
        {"BitShift", convert_bitshift},
        {"Equal", convert_binary<kEqual>},
        {"Greater", convert_binary<kGreater>},
        {"GreaterOrEqual", convert_binary<kGreaterOrEqual>},
        {"Less", convert_binary<kLess>},
        {"LessOrEqual", convert_binary<kLessOrEqual>},
        {"And", convert_binary<kAnd>},
        {"Or", convert_binary<kOr>},
        {"Xor", convert_binary<kXor>},
        {"BitwiseAnd", convert_binary<kBitwiseAnd>},
        {"BitwiseOr", convert_binary<kBitwiseOr>},
        {"BitwiseXor", convert_binary<kBitwiseXor>},
        {"PRelu", convert_prelu},
        {"Where", convert_where},
        {"Sum", convert_variadic<1>},
        {"Mean", convert_variadic<4>},
        {"Max", convert_variadic<2>},
        {"Min", convert_variadic<3>},
        // unary (ncnn UnaryOp op_types for float32 where they match exactly)
        {"Abs", convert_unary<kAbs, 0>},
        {"Neg", convert_unary<kNeg, 1>},
        {"Floor", convert_unary<kFloor, 2>},
        {"Ceil", convert_unary<kCeil, 3>},
        {"Round", convert_unary<kRound, 18>},
        {"Sqrt", convert_unary<kSqrt, 5>},
        {"Reciprocal", convert_unary<kReciprocal, 15>},
        {"Exp", convert_unary<kExp, 7>},
        {"Log", convert_unary<kLog, 8>},
        {"Sin", convert_unary<kSin, 9>},
        {"Cos", convert_unary<kCos, 10>},
        {"Tan", convert_unary<kTan, 11>},
        {"Asin", convert_unary<kAsin, 12>},
        {"Acos", convert_unary<kAcos, 13>},
        {"Atan", convert_unary<kAtan, 14>},
        {"Sinh", convert_unary<kSinh, 22>},
        {"Cosh", convert_unary<kCosh, 24>},
        {"Asinh", convert_unary<kAsinh, 23>},
        {"Acosh", convert_unary<kAcosh, 25>},
        {"Atanh", convert_unary<kAtanh, 26>},
        {"Erf", convert_unary<kErf, kNone>},
        {"Sign", convert_unary<kSign, kNone>}, // ncnn's SIGN maps NaN to 0
        {"IsNaN", convert_unary<kIsNaN, kNone>},
        {"IsInf", convert_isinf},
        {"Softsign", convert_unary<kSoftsign, kNone>},
        {"Softplus", convert_unary<kSoftplus, kNone>},
        {"Elu", convert_elu},
        {"Selu", convert_selu},
        {"Celu", convert_celu},
        {"ThresholdedRelu", convert_thresholded_relu},
        {"Gelu", convert_gelu},
        {"Shrink", convert_shrink},
        {"Not", convert_unary<kNot, kNone>},
        {"BitwiseNot", convert_unary<kBitwiseNot, kNone>},
        // float32 converters live in convert_basic.cpp; these add the other dtypes
        {"Relu", convert_float_activation<kRelu>},
        {"LeakyRelu", convert_float_activation<kLeakyRelu>},
        {"HardSigmoid", convert_float_activation<kHardSigmoid>},
        {"HardSwish", convert_float_activation<kHardSwish>},
        {"Sigmoid", convert_float_activation<kSigmoid>},
        {"Tanh", convert_float_activation<kTanh>},
        {"Clip", convert_clip},
    };
}

} // namespace kestrel::onnx_import
