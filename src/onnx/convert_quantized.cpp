// ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul and ONNX Runtime's
// QGemm (com.microsoft). With constant int8 weights of zero zero point and
// constant scales and zero points, as ONNX Runtime's quantizer writes them,
// they become our int8 Convolution / InnerProduct in ONNX's form
// (ops/quant/onnx_form.h): the integer sums on the int8 kernels, ONNX
// Runtime's requantization. Otherwise they are lowered to the float
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
// attributes over `inputs`, writing `out` (a fresh blob when empty; returned).
std::string float_stand_in(NodeContext& n, const std::string& op_type, const std::vector<std::string>& inputs,
                           std::string out = "")
{
    onnx::NodeProto stand_in = n.node();
    stand_in.set_op_type(op_type);
    stand_in.clear_input();
    stand_in.clear_output();
    for (const std::string& in : inputs) stand_in.add_input(in);
    if (out.empty()) out = n.temp("float");
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

// An int32 bias (input `bias`) in units of x_scale * w_scale (inputs
// `x_scale`, `w_scale`, per output channel) as floats: QLinearConv's, QGemm's.
std::string int32_bias(NodeContext& n, int bias, int x_scale_input, int w_scale_input)
{
    const Tensor* b = n.constant(bias);
    const Tensor* x_scale = n.constant(x_scale_input);
    const Tensor* w_scale = n.constant(w_scale_input);
    n.check(b && x_scale && w_scale, "a bias (input ", bias, ") needs it, x_scale and w_scale known at conversion time");
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

// Int8 weights of rank `rank` with zero zero points (absent, or all zeros).
bool symmetric_int8_weights(NodeContext& n, const Tensor* w, int zero_point_input, int64_t rank)
{
    if (!w || w->dtype() != DType::I8 || w->rank() != rank) return false;
    if (!n.has_input(zero_point_input)) return true;
    const Tensor* zp = n.constant(zero_point_input);
    if (!zp) return false;
    for (int64_t v : tensor_to_int64s(*zp))
        if (v != 0) return false;
    return true;
}

// The output params of ONNX's form (28-30) for a quantized output with zero point y_zp.
ParamDict quantized_output(const Tensor& y_zp, bool bias)
{
    ParamDict output;
    output.set_int(28, static_cast<int>(tensor_to_int64s(y_zp)[0]));
    output.set_int(29, y_zp.dtype() == DType::U8 ? 1 : 0);
    if (bias) output.set_int(30, 1);
    return output;
}

// The weights after the int8 ones in ONNX's form, for `outputs` outputs:
// per-output w_scales (from one or `outputs` values), x_scale, y_scale, and
// the int32 bias b when given. False when the counts do not fit.
bool requantization_weights(const Tensor& x_scale, const Tensor& w_scale, const Tensor& y_scale, const Tensor* b,
                            int64_t outputs, std::vector<Tensor>& weights)
{
    const std::vector<float> ws = tensor_to_floats(w_scale);
    if (ws.size() != 1 && static_cast<int64_t>(ws.size()) != outputs) return false;
    if (b && (b->dtype() != DType::I32 || b->numel() != outputs)) return false;
    Tensor scales({outputs}, DType::F32);
    for (int64_t c = 0; c < outputs; ++c) scales.data<float>()[c] = ws[ws.size() == 1 ? 0 : static_cast<size_t>(c)];
    weights = {scales, x_scale.to(DType::F32).reshaped({1}), y_scale.to(DType::F32).reshaped({1})};
    if (b) weights.push_back(b->reshaped({outputs}));
    return true;
}

// The output params and weights of an int32 output (the *Integer ops): scales unused.
std::vector<Tensor> unit_scales(int64_t outputs)
{
    Tensor ones({outputs}, DType::F32);
    std::fill(ones.data<float>(), ones.data<float>() + outputs, 1.f);
    return {ones, scalar_tensor(1.f).reshaped({1}), scalar_tensor(1.f).reshaped({1})};
}

ParamDict int32_output()
{
    ParamDict output;
    output.set_int(29, 2);
    return output;
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
    if (!quantized_type(x_zp) || !symmetric_int8_weights(n, w, 3, 4)) return false;
    emit_int8_onnx_conv(n, 1, *w, *x_zp, int32_output(), unit_scales(w->dim(0)));
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
    if (!x_scale || !quantized_type(x_zp) || !symmetric_int8_weights(n, w, 5, 4) || !w_scale || !y_scale ||
        !quantized_type(y_zp) || (n.has_input(8) && !b))
        return false;
    const int64_t outch = w->dim(0);
    std::vector<Tensor> weights;
    if (!requantization_weights(*x_scale, *w_scale, *y_scale, b, outch, weights)) return false;
    emit_int8_onnx_conv(n, 3, *w, *x_zp, quantized_output(*y_zp, b != nullptr), weights);
    return true;
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B]).
void convert_qlinear_conv(NodeContext& n)
{
    if (int8_qlinear_conv(n)) return;
    std::vector<std::string> inputs = {dequantized(n, {0, 1, 2, 1}), dequantized(n, {3, 4, 5, 0})};
    if (n.has_input(8)) inputs.push_back(int32_bias(n, 8, 1, 4));
    quantize_output(n, float_stand_in(n, "Conv", inputs), 6, 7);
}

// Emits the int8 InnerProduct in ONNX's form (inner_product.cpp) for this
// node: input 0's rows (its last axis) times the int8 weights b, (K, N), or
// (N, K) with trans_b; a's zero point (or, run_time_zp, input 2 read at run
// time), the output params (28-30) and the weights after the int8 ones.
void emit_int8_onnx_inner_product(NodeContext& n, const Tensor& b, bool trans_b, const Tensor& a_zp,
                                  const ParamDict& output, std::vector<Tensor> weights, bool run_time_zp = false)
{
    const int64_t k = trans_b ? b.dim(1) : b.dim(0), outputs = trans_b ? b.dim(0) : b.dim(1);
    Tensor w({outputs * k}, DType::I8); // [N][K]
    for (int64_t o = 0; o < outputs; ++o)
        for (int64_t i = 0; i < k; ++i)
            w.data<int8_t>()[o * k + i] = trans_b ? b.data<int8_t>()[o * k + i] : b.data<int8_t>()[i * outputs + o];
    ParamDict pd;
    pd.set_int(0, static_cast<int>(outputs));
    pd.set_int(2, static_cast<int>(outputs * k));
    pd.set_int(8, 2);
    pd.set_int(25, 1);
    pd.set_int(26, static_cast<int>(tensor_to_int64s(a_zp)[0]));
    pd.set_int(27, a_zp.dtype() == DType::U8 ? 1 : 0);
    for (int id : output.ids()) pd.set_int(id, output.get_int(id, 0));
    weights.insert(weights.begin(), w);
    std::vector<std::string> bottoms = {n.input(0)};
    if (run_time_zp) bottoms.push_back(n.input(2));
    n.emit("InnerProduct", bottoms, {n.output(0)}, pd, weights);
}

// B of a quantized matrix product on the int8 kernels: constant 2-D int8 of
// zero zero point, of at most INT32_MAX values (ncnn's param 2).
const Tensor* int8_matmul_weights(NodeContext& n, int input, int zero_point_input)
{
    const Tensor* b = n.constant(input);
    return symmetric_int8_weights(n, b, zero_point_input, 2) && b->numel() <= INT32_MAX ? b : nullptr;
}

// MatMulInteger with constant int8 B of zero zero point as our int8
// InnerProduct in ONNX's form, int32 output; A's zero point constant,
// absent, or one value given at run time (DynamicQuantizeLinear's: the
// layer's second input).
bool int8_matmul_integer(NodeContext& n)
{
    const Tensor* b = int8_matmul_weights(n, 1, 3);
    const DType* a_type = n.input_dtype(0);
    if (!b || !a_type) return false;
    const Tensor zero = Tensor::zeros({1}, *a_type);
    const Tensor* a_zp = n.has_input(2) ? constant_scalar(n, 2) : &zero;
    const Shape* zp_shape = n.has_input(2) ? n.input_shape(2) : nullptr;
    const bool run_time_zp = n.has_input(2) && !n.constant(2) && zp_shape && shape_numel(*zp_shape) == 1;
    if (!quantized_type(run_time_zp ? &zero : a_zp)) return false;
    emit_int8_onnx_inner_product(n, *b, false, run_time_zp ? zero : *a_zp, int32_output(), unit_scales(b->dim(1)),
                                 run_time_zp);
    return true;
}

// MatMulInteger(A, B, [a_zero_point], [b_zero_point]) -> int32.
void convert_matmul_integer(NodeContext& n)
{
    if (int8_matmul_integer(n)) return;
    const std::string a = dequantized(n, {0, -1, 2, matmul_axis(n, 0, 2, 2)});
    const std::string b = dequantized(n, {1, -1, 3, matmul_axis(n, 1, 3, 1)});
    cast_to_int32(n, float_stand_in(n, "MatMul", {a, b}));
}

// A quantized product's inputs where our int8 InnerProduct in ONNX's form
// takes it: (a, a_scale, a_zp, b, b_scale, b_zp) at `first`, y_scale and
// y_zp at `y`, all constant but a, scalars but b_scale (one or N values).
struct Int8Product {
    const Tensor *a_scale = nullptr, *a_zp = nullptr, *b = nullptr, *b_scale = nullptr, *y_scale = nullptr,
                 *y_zp = nullptr;
};

bool int8_product(NodeContext& n, int y, Int8Product& p)
{
    p.a_scale = constant_scalar(n, 1);
    p.a_zp = constant_scalar(n, 2);
    p.b = int8_matmul_weights(n, 3, 5);
    p.b_scale = n.constant(4);
    p.y_scale = constant_scalar(n, y);
    p.y_zp = constant_scalar(n, y + 1);
    return p.a_scale && quantized_type(p.a_zp) && p.b && p.b_scale && p.y_scale && quantized_type(p.y_zp);
}

// QLinearMatMul as our int8 InnerProduct in ONNX's form (see int8_product).
bool int8_qlinear_matmul(NodeContext& n)
{
    Int8Product p;
    std::vector<Tensor> weights;
    if (!int8_product(n, 6, p) ||
        !requantization_weights(*p.a_scale, *p.b_scale, *p.y_scale, nullptr, p.b->dim(1), weights))
        return false;
    emit_int8_onnx_inner_product(n, *p.b, false, *p.a_zp, quantized_output(*p.y_zp, false), weights);
    return true;
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp).
void convert_qlinear_matmul(NodeContext& n)
{
    if (int8_qlinear_matmul(n)) return;
    const std::string a = dequantized(n, {0, 1, 2, matmul_axis(n, 0, 1, 2)});
    const std::string b = dequantized(n, {3, 4, 5, matmul_axis(n, 3, 4, 1)});
    quantize_output(n, float_stand_in(n, "MatMul", {a, b}), 6, 7);
}

// QGemm with alpha 1, transA 0, a quantized output and an int32 bias C of N
// values (or none) as our int8 InnerProduct in ONNX's form (see int8_product).
bool int8_qgemm(NodeContext& n)
{
    Int8Product p;
    if (n.attr_float("alpha", 1.f) != 1.f || n.attr_int("transA", 0) != 0 || !int8_product(n, 7, p))
        return false;
    const bool trans_b = n.attr_int("transB", 0) != 0;
    const int64_t outputs = p.b->dim(trans_b ? 0 : 1);
    const Tensor* c = n.has_input(6) ? n.constant(6) : nullptr;
    if (n.has_input(6) && (!c || c->numel() != outputs || c->rank() == 0 || c->shape().back() != outputs)) return false;
    std::vector<Tensor> weights;
    if (!requantization_weights(*p.a_scale, *p.b_scale, *p.y_scale, c, outputs, weights)) return false;
    emit_int8_onnx_inner_product(n, *p.b, trans_b, *p.a_zp, quantized_output(*p.y_zp, c != nullptr), weights);
    return true;
}

// ONNX Runtime's QGemm (com.microsoft; what it runs a QDQ Gemm as):
// (A, a_scale, a_zp, B, b_scale, b_zp, [C int32 in units of a_scale *
// b_scale], [y_scale, y_zp]) with alpha, transA, transB; a float output
// without y_scale.
void convert_qgemm(NodeContext& n)
{
    if (int8_qgemm(n)) return;
    const bool trans_b = n.attr_int("transB", 0) != 0;
    std::vector<std::string> inputs = {dequantized(n, {0, 1, 2, 0}), dequantized(n, {3, 4, 5, trans_b ? 0 : 1})};
    if (n.has_input(6)) inputs.push_back(int32_bias(n, 6, 1, 4));
    if (!n.has_input(7)) return static_cast<void>(float_stand_in(n, "Gemm", inputs, n.output(0)));
    quantize_output(n, float_stand_in(n, "Gemm", inputs), 7, 8);
}

} // namespace

std::vector<ConverterEntry> quantized_converters()
{
    return {
        {"ConvInteger", convert_conv_integer},
        {"QLinearConv", convert_qlinear_conv},
        {"MatMulInteger", convert_matmul_integer},
        {"QLinearMatMul", convert_qlinear_matmul},
        {"com.microsoft.QGemm", convert_qgemm},
    };
}

} // namespace kestrel::onnx_import
