// ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul and ONNX Runtime's
// QGemm (com.microsoft). Their integer sums are exact in int32 on every path,
// as ONNX Runtime's are:
//  - With constant int8 weights of zero zero point and a constant input zero
//    point (MatMulInteger: also one given at run time), as ONNX Runtime's
//    static quantizer writes them, they become our int8 Convolution /
//    InnerProduct in ONNX's form (ops/quant/onnx_form.h): the sums on the int8
//    kernels, ONNX Runtime's requantization.
//  - Other zero points reduce to that form exactly (exact_conv_sums,
//    exact_matmul_sums below): uint8 weights or weights of nonzero zero points
//    through the window sums of the input, an input zero point known only at
//    run time (DynamicQuantizeLinear's) through a constant stand-in and a
//    correction; the QLinear ops then requantize the int32 sums as ONNX Runtime
//    does (float(sum + bias) * (x_scale * w_scale / y_scale), rounded half to
//    even, plus the zero point, saturated).
//  - MatMulInteger with B known only at run time runs on int32 operands.
// The float fallback (each input dequantized, the float op, then a rounding
// cast or QuantizeLinear) remains only for ConvInteger with weights given at
// run time or 1-D / 3-D windows (exact while the sums stay below 2^24), and
// for QLinear ops whose scales are known only at run time.
#include <algorithm>
#include <memory>

#include "graph/graph.h"
#include "frontend/onnx/converter.h"

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

// ---- Exact int32 sums for any zero points ------------------------------------
// With w' = w (int8) or w - 128 (uint8), and wz' likewise (per output),
//   sum_k (x_k - xz)(w_k - wz) = sum_k (x_k - xz) w'_k - wz' * sum_k (x_k - xz),
// both products on the int8 path (the second against all-ones weights: the
// window sums, one per group). An input zero point xz known only at run time
// is replaced by a constant c (the input padded with xz first, so that every
// tap reads the input), and
//   sum_k (x_k - xz) v_k = sum_k (x_k - c) v_k - (xz - c) * sum_k v_k.

// Constant weights as int8 with their per-output zero points (shifted alike).
struct IntegerWeights {
    Tensor w;              // int8, the node's weight shape
    Tensor zero;           // int32, one per output
    bool symmetric = true; // every zero point is 0
};

IntegerWeights integer_weights(NodeContext& n, const Tensor& w, int zp_input, int64_t outputs)
{
    n.check(w.dtype() == DType::U8 || w.dtype() == DType::I8, "weights must be uint8 or int8, got ",
            dtype_name(w.dtype()));
    const int shift = w.dtype() == DType::U8 ? 128 : 0;
    IntegerWeights r;
    r.w = Tensor(w.shape(), DType::I8);
    const std::vector<int64_t> values = tensor_to_int64s(w);
    for (size_t i = 0; i < values.size(); ++i) r.w.data<int8_t>()[i] = static_cast<int8_t>(values[i] - shift);
    std::vector<int64_t> zp = {0};
    if (n.has_input(zp_input)) {
        const Tensor* z = n.constant(zp_input);
        n.check(z != nullptr, "a weight zero point known only at run time is not supported");
        n.check(z->dtype() == w.dtype(), "the weight zero point's type must be the weights' type");
        zp = tensor_to_int64s(*z);
    }
    n.check(zp.size() == 1 || static_cast<int64_t>(zp.size()) == outputs, "the weight zero point has ", zp.size(),
            " values for ", outputs, " outputs");
    r.zero = Tensor({outputs}, DType::I32);
    for (int64_t o = 0; o < outputs; ++o) {
        const int64_t v = zp[zp.size() == 1 ? 0 : static_cast<size_t>(o)] - shift;
        r.zero.data<int32_t>()[o] = static_cast<int32_t>(v);
        r.symmetric = r.symmetric && v == 0;
    }
    return r;
}

// An int32 element-wise step of BinaryOp's typed table (numpy broadcasting).
enum IntOp { kIntAdd = 0, kIntSub = 1, kIntMul = 2 };
std::string int32_step(NodeContext& n, IntOp op, const std::string& a, const std::string& b, std::string out = "")
{
    if (out.empty()) out = n.temp("int32");
    ParamDict pd;
    pd.set_int(21, 1);
    pd.set_int(0, op);
    n.emit("BinaryOp", {a, b}, {out}, pd);
    return out;
}

std::string cast_to(NodeContext& n, const std::string& blob, DType type, std::string out = "")
{
    if (out.empty()) out = n.temp("cast");
    ParamDict pd;
    pd.set_int(2, static_cast<int>(type));
    n.emit("Cast", {blob}, {out}, pd);
    return out;
}

Tensor int32_values(const std::vector<int64_t>& values, const Shape& shape)
{
    Tensor t(shape, DType::I32);
    for (size_t i = 0; i < values.size(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    return t;
}

// The input operand of an integer product: its zero point, constant (or
// absent: 0) or known only at run time, and the constant the product uses.
struct IntegerInput {
    int value, zero_point;
    bool run_time = false;
    Tensor c; // the product's constant zero point, of the input's type
};

IntegerInput integer_input(NodeContext& n, int value, int zero_point)
{
    IntegerInput in{value, zero_point, false, Tensor()};
    const DType* type = n.has_input(zero_point) ? n.input_dtype(zero_point) : n.input_dtype(value);
    n.check(type && (*type == DType::U8 || *type == DType::I8), "the input must be uint8 or int8 (",
            type ? dtype_name(*type) : "of unknown type", ")");
    const Tensor* zp = n.has_input(zero_point) ? n.constant(zero_point) : nullptr;
    n.check(!zp || zp->numel() == 1, "the input's zero point must be one value");
    in.run_time = n.has_input(zero_point) && !zp;
    in.c = zp && !in.run_time ? *zp : Tensor::zeros({}, *type);
    if (in.run_time && *type == DType::U8) in.c.data<uint8_t>()[0] = 128; // read as int8 0
    return in;
}

// sums - (xz - c) * k for an input zero point known only at run time.
std::string less_zero_point_share(NodeContext& n, const std::string& sums, const IntegerInput& in, const Tensor& k,
                                  const std::string& out = "")
{
    const std::string xz = cast_to(n, n.input(in.zero_point), DType::I32);
    const std::string c = constant_blob(n, int32_values(tensor_to_int64s(in.c), {}), "zero_point");
    const std::string share = int32_step(n, kIntMul, int32_step(n, kIntSub, xz, c), constant_blob(n, k, "sums"));
    return int32_step(n, kIntSub, sums, share, out);
}

onnx::AttributeProto int_attribute(const std::string& name, int64_t value)
{
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(value);
    return a;
}

void int8_conv_integer_or_fail(NodeContext& n);
void int8_matmul_integer_or_fail(NodeContext& n);

// A ConvInteger on the int8 path with this node's window: input x, constant
// int8 weights w and zero point c, attributes `attrs` (the node's, pads
// replaced where the input was padded), `group` groups.
std::string int8_conv_step(NodeContext& n, const std::string& x, const Tensor& w, const Tensor& c,
                           std::vector<onnx::AttributeProto> attrs, int64_t group, std::string out = "")
{
    onnx::NodeProto node;
    node.set_op_type("ConvInteger");
    node.add_input(x);
    node.add_input(n.constant_name(w, "weights"));
    node.add_input(n.constant_name(c, "zero_point"));
    if (out.empty()) out = n.temp("sums");
    node.add_output(out);
    attrs.push_back(int_attribute("group", group));
    for (onnx::AttributeProto& a : attrs) *node.add_attribute() = a;
    n.convert_stand_in(node, int8_conv_integer_or_fail);
    return out;
}

// The node's window attributes; `padded`: the input was padded (pads now 0).
std::vector<onnx::AttributeProto> window_attributes(NodeContext& n, bool padded)
{
    std::vector<onnx::AttributeProto> attrs;
    for (const onnx::AttributeProto& a : n.node().attribute())
        if (a.name() == "kernel_shape" || a.name() == "strides" || a.name() == "dilations" ||
            (!padded && (a.name() == "pads" || a.name() == "auto_pad")))
            attrs.push_back(a);
    return attrs;
}

// The node's explicit pads (ONNX's [x1_begin, x2_begin, x1_end, x2_end]);
// false when there are none.
bool node_pads(NodeContext& n, std::vector<int64_t>& pads)
{
    const std::string mode = n.attr_string("auto_pad", "NOTSET");
    n.check(mode == "NOTSET" || mode == "VALID", "auto_pad ", mode,
            " with an input zero point known only at run time is not supported");
    pads = n.has_attr("pads") && mode == "NOTSET" ? n.attr_ints("pads") : std::vector<int64_t>();
    n.check(pads.empty() || pads.size() == 4, "pads must hold 4 values, got ", pads.size());
    return std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
}

// ConvInteger's exact int32 sums (inputs x, w, [x_zero_point], [w_zero_point]
// at x_in, w_in, xz_in, wz_in) for constant 2-D weights, into `out`.
void exact_conv_sums(NodeContext& n, int x_in, int w_in, int xz_in, int wz_in, const std::string& out)
{
    const Tensor* w = n.constant(w_in);
    n.check(w && w->rank() == 4,
            "integer convolutions need 2-D weights known at conversion time (their int32 sums would not be exact "
            "otherwise)");
    const int64_t outputs = w->dim(0), group = std::max<int64_t>(1, n.attr_int("group", 1));
    const IntegerWeights iw = integer_weights(n, *w, wz_in, outputs);
    const IntegerInput in = integer_input(n, x_in, xz_in);
    std::vector<int64_t> pads;
    const bool pad_first = in.run_time && node_pads(n, pads);
    std::string x = n.input(x_in);
    if (pad_first) {
        std::vector<int64_t> all = {0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]};
        x = stand_in_value(n, "Pad", {x, n.constant_name(int64_tensor(all), "pads"), n.input(xz_in)}, "padded");
    }
    const std::vector<onnx::AttributeProto> attrs = window_attributes(n, pad_first);
    const int64_t per = w->numel() / outputs;
    // One group: the window sums ride along as one more output channel of
    // all-ones weights (a product of one output alone runs far below the
    // kernels' speed); several: a product of one output per group.
    const bool ride_along = !iw.symmetric && group == 1;
    Tensor weights = iw.w;
    if (ride_along) {
        weights = Tensor({outputs + 1, w->dim(1), w->dim(2), w->dim(3)}, DType::I8);
        std::copy_n(iw.w.data<int8_t>(), iw.w.numel(), weights.data<int8_t>());
        std::fill_n(weights.data<int8_t>() + iw.w.numel(), per, int8_t{1});
    }
    const bool last = !in.run_time && iw.symmetric;
    std::string sums = int8_conv_step(n, x, weights, in.c, attrs, group, last ? out : "");
    if (last) return;
    if (in.run_time) {
        std::vector<int64_t> row_sums(static_cast<size_t>(weights.dim(0)), 0);
        for (int64_t o = 0; o < weights.dim(0); ++o)
            for (int64_t i = 0; i < per; ++i) row_sums[static_cast<size_t>(o)] += weights.data<int8_t>()[o * per + i];
        sums = less_zero_point_share(n, sums, in, int32_values(row_sums, {weights.dim(0), 1, 1}),
                                     iw.symmetric ? out : "");
    }
    if (iw.symmetric) return;
    const auto channels = [&](const std::string& blob, int64_t begin, int64_t end) {
        return stand_in_value(n, "Slice",
                              {blob, n.constant_name(int64_tensor({begin}), "starts"),
                               n.constant_name(int64_tensor({end}), "ends"), n.constant_name(int64_tensor({1}), "axes")},
                              "channels");
    };
    if (ride_along) {
        const std::string window = channels(sums, outputs, outputs + 1);
        const std::string share = int32_step(n, kIntMul, window, constant_blob(n, iw.zero.reshaped({outputs, 1, 1}), "zp"));
        int32_step(n, kIntSub, channels(sums, 0, outputs), share, out);
        return;
    }
    // The window sums of x - xz, one per group, and their share wz' * sums:
    // sums (N, G, O/G, H*W) less zero (G, O/G, 1) x window (N, G, 1, H*W).
    Tensor ones({group, w->dim(1), w->dim(2), w->dim(3)}, DType::I8);
    std::fill_n(ones.data<int8_t>(), ones.numel(), int8_t{1});
    std::string window = int8_conv_step(n, x, ones, in.c, attrs, group);
    if (in.run_time) window = less_zero_point_share(n, window, in, int32_values({per}, {}));
    const auto reshaped = [&](const std::string& blob, std::vector<int64_t> dims) {
        return stand_in_value(n, "Reshape", {blob, n.constant_name(int64_tensor(dims), "shape")}, "reshaped");
    };
    const std::string share = int32_step(n, kIntMul, reshaped(window, {0, group, 1, -1}),
                                         constant_blob(n, iw.zero.reshaped({group, outputs / group, 1}), "zp"));
    const std::string grouped = int32_step(n, kIntSub, reshaped(sums, {0, group, outputs / group, -1}), share);
    stand_in(n, "Reshape", {grouped, stand_in_value(n, "Shape", {sums}, "shape")}, {out});
}

// MatMulInteger's exact int32 sums (inputs a, b, [a_zero_point],
// [b_zero_point] at a_in, b_in, az_in, bz_in) into `out`.
void exact_matmul_sums(NodeContext& n, int a_in, int b_in, int az_in, int bz_in, const std::string& out)
{
    const Tensor* b = n.constant(b_in);
    const Shape* az_shape = n.has_input(az_in) ? n.input_shape(az_in) : nullptr;
    const bool per_row_az = az_shape && shape_numel(*az_shape) > 1;
    if (!b || b->rank() != 2 || per_row_az) {
        // B known only at run time, or A's zero point per row: (a - az) . (b - bz) on int32 operands.
        const auto centered = [&](int value, int zp, bool per_row) {
            const std::string v = cast_to(n, n.input(value), DType::I32);
            if (!n.has_input(zp)) return v;
            std::string z = cast_to(n, n.input(zp), DType::I32);
            if (per_row) // one value per row of A: along its second-to-last axis
                z = stand_in_value(n, "Reshape", {z, n.constant_name(int64_tensor({-1, 1}), "shape")}, "rows");
            return int32_step(n, kIntSub, v, z);
        };
        stand_in(n, "MatMul", {centered(a_in, az_in, per_row_az), centered(b_in, bz_in, false)}, {out});
        return;
    }
    const int64_t k = b->dim(0), outputs = b->dim(1);
    const IntegerWeights iw = integer_weights(n, *b, bz_in, outputs);
    const auto product = [&](const Tensor& weights, const std::string& to) {
        std::vector<std::string> inputs = {n.input(a_in), n.constant_name(weights, "weights")};
        if (n.has_input(az_in)) inputs.push_back(n.input(az_in));
        onnx::NodeProto node;
        node.set_op_type("MatMulInteger");
        for (const std::string& i : inputs) node.add_input(i);
        node.add_output(to.empty() ? n.temp("sums") : to);
        n.convert_stand_in(node, int8_matmul_integer_or_fail);
        return node.output(0);
    };
    if (iw.symmetric) return static_cast<void>(product(iw.w, out));
    const std::string sums = product(iw.w, "");
    Tensor ones({k, 1}, DType::I8);
    std::fill_n(ones.data<int8_t>(), k, int8_t{1});
    const std::string share = int32_step(n, kIntMul, product(ones, ""), constant_blob(n, iw.zero, "zp"));
    int32_step(n, kIntSub, sums, share, out);
}

bool scales_known(NodeContext& n, int x_scale, int w_scale, int y_scale)
{
    return constant_scalar(n, x_scale) && n.constant(w_scale) && constant_scalar(n, y_scale);
}

// int32 sums (+ an int32 bias of one value per output, shaped per_output_shape)
// requantized as ONNX Runtime does: float(sum + bias) * (x_scale * w_scale[o] /
// y_scale), rounded half to even, plus y's zero point, saturated; the scales
// known at conversion time (scales_known), the bias (at `bias`, -1: none) too.
void requantize_sums(NodeContext& n, const std::string& sums, int x_scale, int w_scale, int y_scale, int y_zp,
                     int bias, const Shape& per_output_shape)
{
    const Tensor* xs = constant_scalar(n, x_scale);
    const Tensor* ws = n.constant(w_scale);
    const Tensor* ys = constant_scalar(n, y_scale);
    const int64_t outputs = shape_numel(per_output_shape);
    const std::vector<float> w = tensor_to_floats(*ws);
    n.check(w.size() == 1 || static_cast<int64_t>(w.size()) == outputs, "w_scale has ", w.size(), " values for ",
            outputs, " outputs");
    Tensor scale(per_output_shape, DType::F32);
    for (int64_t o = 0; o < outputs; ++o)
        scale.data<float>()[o] =
            tensor_to_floats(*xs)[0] * w[w.size() == 1 ? 0 : static_cast<size_t>(o)] / tensor_to_floats(*ys)[0];
    std::string total = sums;
    if (bias >= 0 && n.has_input(bias)) {
        const Tensor* b = n.constant(bias);
        n.check(b && b->dtype() == DType::I32 && b->numel() == outputs, "the bias must be ", outputs,
                " int32 values known at conversion time");
        total = int32_step(n, kIntAdd, sums, constant_blob(n, b->reshaped(per_output_shape), "bias"));
    }
    const std::string scaled =
        stand_in_value(n, "Mul", {cast_to(n, total, DType::F32), n.constant_name(scale, "scale")}, "scaled");
    std::vector<std::string> q = {scaled, constant_blob(n, scalar_tensor(1.f), "unit_scale")};
    if (n.has_input(y_zp)) q.push_back(n.input(y_zp));
    ParamDict onnx_form;
    onnx_form.set_int(20, 1);
    n.emit("Quantize", q, {n.output(0)}, onnx_form);
}

// ConvInteger(x, w, [x_zero_point], [w_zero_point]) -> int32.
void convert_conv_integer(NodeContext& n)
{
    if (int8_conv_integer(n)) return;
    if (const Tensor* w = n.constant(1); w && w->rank() == 4) return exact_conv_sums(n, 0, 1, 2, 3, n.output(0));
    // Weights given at run time, or a 1-D / 3-D window (no quantizer writes
    // these): float32 sums, rounded, exact while they stay below 2^24.
    const std::string x = dequantized(n, {0, -1, 2, 1});
    const std::string w = dequantized(n, {1, -1, 3, 0});
    cast_to(n, stand_in_value(n, "Round", {float_stand_in(n, "Conv", {x, w})}, "rounded"), DType::I32, n.output(0));
}

void int8_conv_integer_or_fail(NodeContext& n)
{
    n.check(int8_conv_integer(n), "the int8 convolution does not take this form");
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
    if (const Tensor* w = n.constant(3); w && w->rank() == 4 && scales_known(n, 1, 4, 6)) {
        const std::string sums = n.temp("sums");
        exact_conv_sums(n, 0, 3, 2, 5, sums);
        return requantize_sums(n, sums, 1, 4, 6, 7, 8, {w->dim(0), 1, 1});
    }
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
    exact_matmul_sums(n, 0, 1, 2, 3, n.output(0));
}

void int8_matmul_integer_or_fail(NodeContext& n)
{
    n.check(int8_matmul_integer(n), "the int8 product does not take this form");
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
    if (const Tensor* b = n.constant(3); b && b->rank() == 2 && scales_known(n, 1, 4, 6)) {
        const std::string sums = n.temp("sums");
        exact_matmul_sums(n, 0, 3, 2, 5, sums);
        return requantize_sums(n, sums, 1, 4, 6, 7, -1, {b->dim(1)});
    }
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
