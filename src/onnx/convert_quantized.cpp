// ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul, lowered to the float
// ops: each quantized input is dequantized ((q - zero_point) * scale, exact in
// float32; at conversion time for constant weights), the float Conv / MatMul
// converter does the rest, and the result is cast to int32 (the *Integer ops)
// or quantized with y's scale and zero point (the QLinear ops: QuantizeLinear's
// round half to even and saturation).
// The sums are float32 sums: the *Integer results are exact while partial sums
// stay below 2^24 in magnitude; the QLinear ones equal integer accumulation
// followed by the float requantization except, rarely, one step off where the
// rescaled sum lands on a rounding tie.
#include <algorithm>
#include <memory>

#include "graph/graph.h"
#include "onnx/converter.h"

namespace kestrel::onnx_import {

namespace {

// One op evaluated on known inputs, while converting.
Tensor evaluate_now(const std::string& type, const ParamDict& pd, const std::vector<Tensor>& inputs)
{
    std::unique_ptr<Op> op = create_op(type);
    check(op != nullptr, "no layer type ", type);
    op->type = type;
    op->load_param(pd);
    std::vector<TensorDesc> in, out(1);
    for (const Tensor& t : inputs) in.push_back(TensorDesc(t.shape(), t.dtype(), t));
    op->infer(in, out);
    std::vector<Tensor> result = {Tensor(out[0].shape, out[0].dtype)};
    op->run(inputs, result, ExecContext(nullptr, 1));
    return result[0];
}

// Where a quantized operand's scale and zero point are: input indices (-1: the
// scale is 1, the zero point 0), and the axis a 1-D scale runs along.
struct Quantized {
    int value, scale, zero_point;
    int axis;
};

// The scale 1 of the *Integer ops, shaped like the zero point it pairs with
// (DequantizeLinear takes a per-axis zero point with a per-axis scale).
Tensor unit_scale(NodeContext& n, const Quantized& q)
{
    const Shape* s = q.zero_point >= 0 && n.has_input(q.zero_point) ? n.input_shape(q.zero_point) : nullptr;
    if (!s || s->size() != 1 || (*s)[0] <= 1) return scalar_tensor(1.f);
    Tensor ones(*s, DType::F32);
    std::fill(ones.data<float>(), ones.data<float>() + ones.numel(), 1.f);
    return ones;
}

// The ONNX name of operand q dequantized to float32: a constant when q, its
// scale and zero point are known, else a DequantizeLinear layer's blob.
std::string dequantized(NodeContext& n, const Quantized& q)
{
    ParamDict pd;
    pd.set_int(20, 1);
    pd.set_int(21, q.axis);
    const bool has_zp = q.zero_point >= 0 && n.has_input(q.zero_point);
    const Tensor one = q.scale >= 0 ? Tensor() : unit_scale(n, q);
    const Tensor* value = n.constant(q.value);
    const Tensor* scale = q.scale >= 0 ? n.constant(q.scale) : &one;
    const Tensor* zp = has_zp ? n.constant(q.zero_point) : nullptr;
    if (value && scale && (zp || !has_zp)) {
        std::vector<Tensor> in = {*value, *scale};
        if (zp) in.push_back(*zp);
        return n.constant_name(evaluate_now("Dequantize", pd, in), "dequantized");
    }
    std::vector<std::string> bottoms = {n.input(q.value),
                                        q.scale >= 0 ? n.input(q.scale) : constant_blob(n, one, "unit scale")};
    if (has_zp) bottoms.push_back(n.input(q.zero_point));
    const std::string blob = n.temp("dequantized");
    n.emit("Dequantize", bottoms, {blob}, pd);
    n.share_input_type(q.value, blob);
    return blob;
}

// The float op standing in for this node: `op_type` with this node's
// attributes over `inputs`, writing a fresh blob (returned).
std::string float_stand_in(NodeContext& n, const std::string& op_type, const std::vector<std::string>& inputs)
{
    onnx::NodeProto stand_in = n.node();
    stand_in.set_op_type(op_type);
    stand_in.clear_input();
    stand_in.clear_output();
    for (const std::string& in : inputs) stand_in.add_input(in);
    const std::string out = n.temp("float");
    stand_in.add_output(out);
    n.convert_stand_in(stand_in);
    return out;
}

void cast_to_int32(NodeContext& n, const std::string& blob)
{
    ParamDict pd;
    pd.set_int(2, static_cast<int>(DType::I32));
    n.emit("Cast", {blob}, {n.output(0)}, pd);
}

// y = QuantizeLinear(blob, y_scale, y_zero_point): y's dtype is the zero point's.
void quantize_output(NodeContext& n, const std::string& blob, int y_scale, int y_zero_point)
{
    std::vector<std::string> bottoms = {blob, n.input(y_scale)};
    if (n.has_input(y_zero_point)) bottoms.push_back(n.input(y_zero_point));
    ParamDict onnx_form;
    onnx_form.set_int(20, 1);
    n.emit("Quantize", bottoms, {n.output(0)}, onnx_form);
}

// A 1-D scale / zero point of a MatMul operand runs along its rows (A) or
// columns (B): an axis counted from the end, which needs the operand's rank.
int matmul_axis(NodeContext& n, int operand, int scale, int from_end)
{
    const Shape* s = n.has_input(scale) ? n.input_shape(scale) : nullptr;
    if (!s || shape_numel(*s) <= 1) return 0; // per tensor: the axis is unused
    const int rank = n.input_rank(operand);
    n.check(rank >= 2, "a per-", from_end == 2 ? "row" : "column", " scale or zero point of input ", operand,
            " needs its rank (>= 2) known");
    return rank - from_end;
}

// QLinearConv's int32 bias: float bias = B * x_scale * w_scale (per output channel).
std::string conv_bias(NodeContext& n)
{
    const Tensor* b = n.constant(8);
    const Tensor* x_scale = n.constant(1);
    const Tensor* w_scale = n.constant(4);
    n.check(b && x_scale && w_scale, "a bias (input 8) needs B, x_scale and w_scale known at conversion time");
    n.check(b->dtype() == DType::I32 && b->shape().size() == 1, "the bias must be 1-D int32");
    const std::vector<float> xs = tensor_to_floats(*x_scale), ws = tensor_to_floats(*w_scale);
    n.check(xs.size() == 1, "x_scale must be one value");
    n.check(ws.size() == 1 || static_cast<int64_t>(ws.size()) == b->dim(0), "w_scale has ", ws.size(),
            " values for a bias of ", b->dim(0));
    Tensor f(b->shape(), DType::F32);
    for (int64_t c = 0; c < b->dim(0); ++c)
        f.data<float>()[c] = static_cast<float>(static_cast<double>(b->data<int32_t>()[c]) * xs[0] *
                                                ws[ws.size() == 1 ? 0 : static_cast<size_t>(c)]);
    return n.constant_name(f, "bias");
}

// One value of a constant scalar (or one-element) input, or null.
const Tensor* constant_scalar(NodeContext& n, int input)
{
    const Tensor* t = n.has_input(input) ? n.constant(input) : nullptr;
    return t && t->numel() == 1 ? t : nullptr;
}

bool quantized_type(const Tensor* zero_point) { return zero_point && (zero_point->dtype() == DType::U8 || zero_point->dtype() == DType::I8); }

// Int8 weights with zero zero points (absent, or all zeros).
bool symmetric_int8_weights(NodeContext& n, const Tensor* w, int zero_point_input)
{
    if (!w || w->dtype() != DType::I8 || w->rank() != 4) return false;
    if (!n.has_input(zero_point_input)) return true;
    const Tensor* zp = n.constant(zero_point_input);
    if (!zp) return false;
    for (int64_t v : tensor_to_int64s(*zp))
        if (v != 0) return false;
    return true;
}

// Emits the int8 Convolution in ONNX's form (convolution.cpp, params 25-30)
// for this node: its window, the weights `w` (input `weight_input`), the
// input zero point, `output` (28-30), and `weights` after w.
void emit_int8_onnx_conv(NodeContext& n, int weight_input, const Tensor& w, const Tensor& x_zp,
                         const ParamDict& output, std::vector<Tensor> weights)
{
    int group = 1;
    ParamDict pd = conv_node_params(n, 2, weight_input, group);
    pd.set_int(6, static_cast<int>(w.numel()));
    pd.set_int(8, 2);
    pd.set_int(25, 1);
    pd.set_int(26, static_cast<int>(tensor_to_int64s(x_zp)[0]));
    pd.set_int(27, x_zp.dtype() == DType::U8 ? 1 : 0);
    for (int id : output.ids()) pd.set_int(id, output.get_int(id, 0));
    pd.set_int(31, kFeatmaskBatched);
    weights.insert(weights.begin(), w.reshaped({w.numel()}));
    n.emit(group > 1 ? "ConvolutionDepthWise" : "Convolution", {n.input(0)}, {n.output(0)}, pd, weights);
}

// ConvInteger as our int8 Convolution in ONNX's form with an int32 output
// (param 29 = 2) when it is 2-D with constant int8 weights of zero zero point
// and a constant input zero point. False (nothing emitted) otherwise.
bool int8_conv_integer(NodeContext& n)
{
    const Tensor* x_zp = constant_scalar(n, 2);
    const Tensor* w = n.constant(1);
    if (!quantized_type(x_zp) || !symmetric_int8_weights(n, w, 3)) return false;
    const int64_t outch = w->dim(0);
    Tensor ones({outch}, DType::F32); // the scales, unused with an int32 output
    std::fill(ones.data<float>(), ones.data<float>() + outch, 1.f);
    ParamDict output;
    output.set_int(29, 2);
    emit_int8_onnx_conv(n, 1, *w, *x_zp, output,
                        {ones, scalar_tensor(1.f).reshaped({1}), scalar_tensor(1.f).reshaped({1})});
    return true;
}

// ConvInteger(x, w, [x_zero_point], [w_zero_point]) -> int32.
void convert_conv_integer(NodeContext& n)
{
    if (int8_conv_integer(n)) return;
    const std::string x = dequantized(n, {0, -1, 2, 1});
    const std::string w = dequantized(n, {1, -1, 3, 0});
    cast_to_int32(n, float_stand_in(n, "Conv", {x, w}));
}

// QLinearConv as our int8 Convolution in ONNX's form (convolution.cpp,
// params 25-30) when it is 2-D with constant int8 weights of zero zero point
// and constant scales and zero points: the integer sums on the int8 kernels.
// False (nothing emitted) otherwise.
bool int8_qlinear_conv(NodeContext& n)
{
    const Tensor* x_scale = constant_scalar(n, 1);
    const Tensor* x_zp = constant_scalar(n, 2);
    const Tensor* w = n.constant(3);
    const Tensor* w_scale = n.constant(4);
    const Tensor* y_scale = constant_scalar(n, 6);
    const Tensor* y_zp = constant_scalar(n, 7);
    const Tensor* b = n.has_input(8) ? n.constant(8) : nullptr;
    if (!x_scale || !quantized_type(x_zp) || !symmetric_int8_weights(n, w, 5) || !w_scale || !y_scale ||
        !quantized_type(y_zp) || (n.has_input(8) && !b))
        return false;
    const int64_t outch = w->dim(0);
    const std::vector<float> ws = tensor_to_floats(*w_scale);
    if (ws.size() != 1 && static_cast<int64_t>(ws.size()) != outch) return false;
    if (b && (b->dtype() != DType::I32 || b->numel() != outch)) return false;
    Tensor scales({outch}, DType::F32);
    for (int64_t c = 0; c < outch; ++c) scales.data<float>()[c] = ws[ws.size() == 1 ? 0 : static_cast<size_t>(c)];
    ParamDict output;
    output.set_int(28, static_cast<int>(tensor_to_int64s(*y_zp)[0]));
    output.set_int(29, y_zp->dtype() == DType::U8 ? 1 : 0);
    if (b) output.set_int(30, 1);
    std::vector<Tensor> weights = {scales, x_scale->to(DType::F32).reshaped({1}), y_scale->to(DType::F32).reshaped({1})};
    if (b) weights.push_back(b->reshaped({outch}));
    emit_int8_onnx_conv(n, 3, *w, *x_zp, output, weights);
    return true;
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B]).
void convert_qlinear_conv(NodeContext& n)
{
    if (int8_qlinear_conv(n)) return;
    std::vector<std::string> inputs = {dequantized(n, {0, 1, 2, 1}), dequantized(n, {3, 4, 5, 0})};
    if (n.has_input(8)) inputs.push_back(conv_bias(n));
    quantize_output(n, float_stand_in(n, "Conv", inputs), 6, 7);
}

// MatMulInteger(A, B, [a_zero_point], [b_zero_point]) -> int32.
void convert_matmul_integer(NodeContext& n)
{
    const std::string a = dequantized(n, {0, -1, 2, matmul_axis(n, 0, 2, 2)});
    const std::string b = dequantized(n, {1, -1, 3, matmul_axis(n, 1, 3, 1)});
    cast_to_int32(n, float_stand_in(n, "MatMul", {a, b}));
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp).
void convert_qlinear_matmul(NodeContext& n)
{
    const std::string a = dequantized(n, {0, 1, 2, matmul_axis(n, 0, 1, 2)});
    const std::string b = dequantized(n, {3, 4, 5, matmul_axis(n, 3, 4, 1)});
    quantize_output(n, float_stand_in(n, "MatMul", {a, b}), 6, 7);
}

} // namespace

std::vector<ConverterEntry> quantized_converters()
{
    return {
        {"ConvInteger", convert_conv_integer},
        {"QLinearConv", convert_qlinear_conv},
        {"MatMulInteger", convert_matmul_integer},
        {"QLinearMatMul", convert_qlinear_matmul},
    };
}

} // namespace kestrel::onnx_import
