// Identity, Constant and the one-input activations that map onto
// rank-agnostic ncnn layers.
#include <cfloat>
#include <cmath>

#include "frontend/onnx/converter.h"

namespace kestrel::onnx_import {

namespace {

void convert_identity(NodeContext& n)
{
    // Identity of a constant is that constant (exporters wrap shared weights this way).
    if (const Tensor* c = n.constant(0)) {
        n.set_constant_output(0, *c);
        return;
    }
    n.emit("Noop", {n.input(0)}, {n.output(0)});
}

void convert_constant(NodeContext& n)
{
    if (n.has_attr("value")) {
        n.set_constant_output(0, n.attr_tensor("value"));
    } else if (n.has_attr("value_float")) {
        n.set_constant_output(0, scalar_tensor(n.attr_float("value_float", 0.f)));
    } else if (n.has_attr("value_floats")) {
        const std::vector<float> v = n.attr_floats("value_floats");
        Tensor t({static_cast<int64_t>(v.size())}, DType::F32);
        std::copy(v.begin(), v.end(), t.data<float>());
        n.set_constant_output(0, t);
    } else if (n.has_attr("value_int")) {
        Tensor t(Shape{}, DType::I64);
        *t.data<int64_t>() = n.attr_int("value_int", 0);
        n.set_constant_output(0, t);
    } else if (n.has_attr("value_ints")) {
        n.set_constant_output(0, int64_tensor(n.attr_ints("value_ints")));
    } else {
        n.fail("only tensor, float(s) and int(s) values are supported");
    }
}

// One-input layer with fixed params.
template <const char* Type>
void convert_plain(NodeContext& n)
{
    n.emit(Type, {n.input(0)}, {n.output(0)});
}

constexpr char kReLU[] = "ReLU";
constexpr char kSigmoid[] = "Sigmoid";
constexpr char kTanH[] = "TanH";
constexpr char kMish[] = "Mish";

void convert_leaky_relu(NodeContext& n)
{
    ParamDict pd;
    pd.set_float(0, n.attr_float("alpha", 0.01f));
    n.emit("ReLU", {n.input(0)}, {n.output(0)}, pd);
}

void convert_hard_sigmoid(NodeContext& n)
{
    ParamDict pd;
    pd.set_float(0, n.attr_float("alpha", 0.2f));
    pd.set_float(1, n.attr_float("beta", 0.5f));
    n.emit("HardSigmoid", {n.input(0)}, {n.output(0)}, pd);
}

void convert_hard_swish(NodeContext& n)
{
    ParamDict pd;
    pd.set_float(0, 1.f / 6.f);
    pd.set_float(1, 0.5f);
    n.emit("HardSwish", {n.input(0)}, {n.output(0)}, pd);
}

// Clip: bounds are attributes before opset 11, optional constant inputs after.
void convert_clip(NodeContext& n)
{
    float lo = -FLT_MAX, hi = FLT_MAX;
    if (n.opset() < 11) {
        lo = n.attr_float("min", -FLT_MAX);
        hi = n.attr_float("max", FLT_MAX);
    } else {
        for (int i : {1, 2}) {
            if (!n.has_input(i)) continue;
            const Tensor* c = n.constant(i);
            n.check(c != nullptr && c->numel() == 1, "min/max must be constant scalars");
            (i == 1 ? lo : hi) = tensor_to_floats(*c)[0];
        }
    }
    const DType* t = n.input_dtype(0);
    n.check(t == nullptr || *t == DType::F32, "only float32 inputs are supported");
    ParamDict pd;
    pd.set_float(0, lo);
    pd.set_float(1, hi);
    n.emit("Clip", {n.input(0)}, {n.output(0)}, pd);
}

} // namespace

std::vector<ConverterEntry> basic_converters()
{
    return {
        {"Identity", convert_identity},
        {"Constant", convert_constant},
        {"Relu", convert_plain<kReLU>},
        {"Sigmoid", convert_plain<kSigmoid>},
        {"Tanh", convert_plain<kTanH>},
        {"Mish", convert_plain<kMish>},
        {"LeakyRelu", convert_leaky_relu},
        {"HardSigmoid", convert_hard_sigmoid},
        {"HardSwish", convert_hard_swish},
        {"Clip", convert_clip},
    };
}

} // namespace kestrel::onnx_import
