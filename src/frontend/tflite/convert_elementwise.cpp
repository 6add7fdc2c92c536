// Element-wise operators: arithmetic and comparisons with NumPy broadcasting
// (BinaryOp's ONNX and typed forms), activations (ncnn's layers where they
// compute the same: ReLU, Clip, Sigmoid, TanH, HardSwish, ELU, GELU),
// unary maps, SELECT, CAST, and the operators that only make constants
// while converting: DEQUANTIZE of float16 or quantized weights, DENSIFY of
// sparse ones, FILL and ZEROS_LIKE of known shapes.
// Every one computes in its inputs' form: folded when a rank-4 input is.
#include <cstring>

#include "frontend/tflite/converter.h"

namespace kestrel::tflite_import {

namespace {

bool is_float(DType t) { return t == DType::F32; }

// The form of an element-wise operator: folded when its output is an image
// and an input arrives folded.
bool elementwise_form(const OpContext& n) { return n.out(0).shape.size() == 4 && n.prefer_folded(); }

// ncnn BinaryOp codes of the float form (20=1) and the typed table's (21=1).
struct BinaryCodes {
    int ncnn, typed;
};

void emit_binary(OpContext& n, BinaryCodes codes, fb::ActivationFunctionType act = fb::ActivationFunctionType::NONE)
{
    const bool form = elementwise_form(n);
    const std::string a = n.operand(0, form), b = n.operand(1, form);
    const std::string y = n.output(0, form);
    const std::string pre = act == fb::ActivationFunctionType::NONE ? y : n.temp("pre_activation");
    ParamDict pd;
    if (is_float(n.in(0).dtype) && codes.ncnn >= 0) {
        pd.set_int(0, codes.ncnn);
        pd.set_int(20, 1);
    } else {
        n.check(codes.typed >= 0, "is not supported for ", dtype_name(n.in(0).dtype));
        pd.set_int(0, codes.typed);
        pd.set_int(21, 1);
    }
    n.emit("BinaryOp", {a, b}, {pre}, pd);
    n.activation(pre, act, y);
}

template <class Options> fb::ActivationFunctionType fused(const Options* o)
{
    return o ? o->fused_activation_function() : fb::ActivationFunctionType::NONE;
}

// A layer of one input to one output, in the input's form.
void emit_unary(OpContext& n, const std::string& type, const ParamDict& pd = {})
{
    const bool form = elementwise_form(n);
    const std::string x = n.operand(0, form);
    n.emit(type, {x}, {n.output(0, form)}, pd);
}

// UnaryOp: ncnn's float form (0=op) for float32, the typed table (21=1) otherwise.
void emit_unary_op(OpContext& n, int ncnn_op, int typed_op)
{
    ParamDict pd;
    if (is_float(n.in(0).dtype) && ncnn_op >= 0) {
        pd.set_int(0, ncnn_op);
    } else {
        n.check(typed_op >= 0, "is not supported for ", dtype_name(n.in(0).dtype));
        pd.set_int(0, typed_op);
        pd.set_int(21, 1);
    }
    emit_unary(n, "UnaryOp", pd);
}

void emit_clip(OpContext& n, float lo, float hi)
{
    ParamDict pd;
    pd.set_float(0, lo);
    pd.set_float(1, hi);
    emit_unary(n, "Clip", pd);
}

} // namespace

Tensor dequantized(const OpContext& n, const Tensor& q, const Quantization& quant)
{
    n.check(quant.present(), "a ", dtype_name(q.dtype()), " input without quantization parameters");
    const Tensor values = q.to(DType::F32);
    Tensor out(q.shape(), DType::F32);
    const size_t channels = quant.scale.size();
    int64_t inner = 1;
    if (channels > 1)
        for (int a = quant.axis + 1; a < q.rank(); ++a) inner *= q.dim(a);
    for (int64_t i = 0; i < q.numel(); ++i) {
        const size_t c = channels > 1 ? static_cast<size_t>((i / inner) % static_cast<int64_t>(channels)) : 0;
        const float zp = quant.zero_point.empty() ? 0.f : static_cast<float>(quant.zero_point[c]);
        out.data<float>()[i] = quant.scale[c] * (values.data<float>()[i] - zp);
    }
    return out;
}

namespace {

// DEQUANTIZE: a constant (float16 or quantized weights) becomes a float32
// constant while converting; a value arriving at run time is cast (float16)
// or cast, shifted by its zero point and scaled (per tensor).
void convert_dequantize(OpContext& n)
{
    const TensorInfo& x = n.in(0);
    if (const Tensor* c = n.constant(0)) {
        n.set_constant_output(0, x.dtype == DType::F16 ? c->to(DType::F32) : dequantized(n, *c, x.quant));
        return;
    }
    const bool form = elementwise_form(n);
    const std::string in = n.operand(0, form);
    ParamDict cast;
    cast.set_int(2, static_cast<int>(DType::F32));
    if (x.dtype == DType::F16) {
        n.emit("Cast", {in}, {n.output(0, form)}, cast);
        return;
    }
    n.check(x.quant.scale.size() == 1, "a run-time input needs one scale, it has ", x.quant.scale.size());
    const std::string as_float = n.temp("as_float"), shifted = n.temp("shifted");
    n.emit("Cast", {in}, {as_float}, cast);
    ParamDict sub, mul;
    sub.set_int(0, 1);
    sub.set_int(1, 1);
    sub.set_float(2, x.quant.zero_point.empty() ? 0.f : static_cast<float>(x.quant.zero_point[0]));
    n.emit("BinaryOp", {as_float}, {shifted}, sub);
    mul.set_int(0, 2);
    mul.set_int(1, 1);
    mul.set_float(2, x.quant.scale[0]);
    n.emit("BinaryOp", {shifted}, {n.output(0, form)}, mul);
}

// DENSIFY: the sparse constant, dense (the file reader densifies it).
void convert_densify(OpContext& n)
{
    const Tensor* c = n.constant(0);
    n.check(c != nullptr, "the sparse input must be a constant");
    n.set_constant_output(0, *c);
}

// FILL(dims, value) and ZEROS_LIKE(x): known shapes give constants.
void convert_fill(OpContext& n)
{
    const Tensor* value = n.constant(1);
    const std::vector<int64_t> dims = n.constant_ints(0, "the dimensions");
    if (value) {
        n.check(value->numel() == 1, "the value must be a scalar");
        n.check_size(Shape(dims.begin(), dims.end()), value->dtype(), "its result");
        const Tensor one = value->reshaped({1});
        Tensor out = Tensor::zeros(Shape(dims.begin(), dims.end()), value->dtype());
        const size_t size = dtype_size(value->dtype());
        for (int64_t i = 0; i < out.numel(); ++i)
            std::memcpy(static_cast<uint8_t*>(out.raw()) + static_cast<size_t>(i) * size, one.raw(), size);
        n.set_constant_output(0, out);
        return;
    }
    n.emit("Expand", {n.plain(1), n.plain(0)}, {n.output(0, false)});
}

void convert_zeros_like(OpContext& n)
{
    n.check_size(n.in(0).shape, n.in(0).dtype, "its result");
    n.set_constant_output(0, Tensor::zeros(n.in(0).shape, n.in(0).dtype));
}

// SELECT / SELECT_V2: Where(condition, x, y) with broadcasting.
void convert_select(OpContext& n)
{
    const bool form = elementwise_form(n);
    const std::string c = n.operand(0, form), x = n.operand(1, form), y = n.operand(2, form);
    n.emit("Where", {c, x, y}, {n.output(0, form)});
}

void convert_cast(OpContext& n)
{
    ParamDict pd;
    pd.set_int(2, static_cast<int>(n.out(0).dtype));
    emit_unary(n, "Cast", pd);
}

void convert_squared_difference(OpContext& n)
{
    const bool form = elementwise_form(n);
    const std::string a = n.operand(0, form), b = n.operand(1, form);
    const std::string diff = n.temp("difference");
    ParamDict sub, square;
    sub.set_int(0, 1);
    sub.set_int(20, 1);
    n.emit("BinaryOp", {a, b}, {diff}, sub);
    square.set_int(0, 4);
    n.emit("UnaryOp", {diff}, {n.output(0, form)}, square);
}

// PRELU: x where x >= 0, alpha * x elsewhere, alpha broadcast.
void convert_prelu(OpContext& n)
{
    ParamDict pd;
    pd.set_int(0, 22);
    pd.set_int(20, 2);
    pd.set_int(21, 1);
    const bool form = elementwise_form(n);
    const std::string x = n.operand(0, form), alpha = n.operand(1, form);
    n.emit("BinaryOp", {x, alpha}, {n.output(0, form)}, pd);
}

void convert_gelu(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_GeluOptions();
    ParamDict pd;
    pd.set_int(0, o && o->approximate() ? 1 : 0);
    emit_unary(n, "GELU", pd);
}

} // namespace

void add_elementwise_converters(BuiltinTable& t)
{
    using Op = fb::BuiltinOperator;
    t[Op::ADD] = [](OpContext& n) { emit_binary(n, {0, 0}, fused(n.op().builtin_options_as_AddOptions())); };
    t[Op::SUB] = [](OpContext& n) { emit_binary(n, {1, 1}, fused(n.op().builtin_options_as_SubOptions())); };
    t[Op::MUL] = [](OpContext& n) { emit_binary(n, {2, 2}, fused(n.op().builtin_options_as_MulOptions())); };
    t[Op::DIV] = [](OpContext& n) { emit_binary(n, {3, 3}, fused(n.op().builtin_options_as_DivOptions())); };
    t[Op::MAXIMUM] = [](OpContext& n) { emit_binary(n, {4, 7}); };
    t[Op::MINIMUM] = [](OpContext& n) { emit_binary(n, {5, 8}); };
    t[Op::POW] = [](OpContext& n) { emit_binary(n, {6, 4}); };
    t[Op::FLOOR_MOD] = [](OpContext& n) { emit_binary(n, {-1, 5}); };
    t[Op::EQUAL] = [](OpContext& n) { emit_binary(n, {-1, 11}); };
    t[Op::NOT_EQUAL] = [](OpContext& n) { emit_binary(n, {-1, 23}); };
    t[Op::GREATER] = [](OpContext& n) { emit_binary(n, {-1, 12}); };
    t[Op::GREATER_EQUAL] = [](OpContext& n) { emit_binary(n, {-1, 13}); };
    t[Op::LESS] = [](OpContext& n) { emit_binary(n, {-1, 14}); };
    t[Op::LESS_EQUAL] = [](OpContext& n) { emit_binary(n, {-1, 15}); };
    t[Op::LOGICAL_AND] = [](OpContext& n) { emit_binary(n, {-1, 16}); };
    t[Op::LOGICAL_OR] = [](OpContext& n) { emit_binary(n, {-1, 17}); };
    t[Op::SQUARED_DIFFERENCE] = convert_squared_difference;
    t[Op::LOGICAL_NOT] = [](OpContext& n) { emit_unary_op(n, -1, 36); };
    t[Op::ABS] = [](OpContext& n) { emit_unary_op(n, 0, 0); };
    t[Op::NEG] = [](OpContext& n) { emit_unary_op(n, 1, 1); };
    t[Op::FLOOR] = [](OpContext& n) { emit_unary_op(n, 2, 2); };
    t[Op::CEIL] = [](OpContext& n) { emit_unary_op(n, 3, 3); };
    t[Op::SQUARE] = [](OpContext& n) { emit_unary_op(n, 4, -1); };
    t[Op::SQRT] = [](OpContext& n) { emit_unary_op(n, 5, 5); };
    t[Op::RSQRT] = [](OpContext& n) { emit_unary_op(n, 6, -1); };
    t[Op::EXP] = [](OpContext& n) { emit_unary_op(n, 7, 7); };
    t[Op::LOG] = [](OpContext& n) { emit_unary_op(n, 8, 8); };
    t[Op::SIN] = [](OpContext& n) { emit_unary_op(n, 9, 9); };
    t[Op::COS] = [](OpContext& n) { emit_unary_op(n, 10, 10); };
    t[Op::ROUND] = [](OpContext& n) { emit_unary_op(n, -1, 4); }; // half to even, as TFLite
    t[Op::LOGISTIC] = [](OpContext& n) { emit_unary(n, "Sigmoid"); };
    t[Op::TANH] = [](OpContext& n) { emit_unary(n, "TanH"); };
    t[Op::RELU] = [](OpContext& n) { emit_unary(n, "ReLU"); };
    t[Op::RELU6] = [](OpContext& n) { emit_clip(n, 0.f, 6.f); };
    t[Op::RELU_N1_TO_1] = [](OpContext& n) { emit_clip(n, -1.f, 1.f); };
    t[Op::RELU_0_TO_1] = [](OpContext& n) { emit_clip(n, 0.f, 1.f); };
    t[Op::LEAKY_RELU] = [](OpContext& n) {
        const auto* o = n.op().builtin_options_as_LeakyReluOptions();
        ParamDict pd;
        pd.set_float(0, o ? o->alpha() : 0.f);
        emit_unary(n, "ReLU", pd);
    };
    t[Op::HARD_SWISH] = [](OpContext& n) {
        ParamDict pd;
        pd.set_float(0, 1.f / 6.f);
        pd.set_float(1, 0.5f);
        emit_unary(n, "HardSwish", pd);
    };
    t[Op::ELU] = [](OpContext& n) {
        ParamDict pd;
        pd.set_float(0, 1.f);
        emit_unary(n, "ELU", pd);
    };
    t[Op::GELU] = convert_gelu;
    t[Op::PRELU] = convert_prelu;
    t[Op::SELECT] = convert_select;
    t[Op::SELECT_V2] = convert_select;
    t[Op::CAST] = convert_cast;
    t[Op::DEQUANTIZE] = convert_dequantize;
    t[Op::DENSIFY] = convert_densify;
    t[Op::FILL] = convert_fill;
    t[Op::ZEROS_LIKE] = convert_zeros_like;
}

} // namespace kestrel::tflite_import
