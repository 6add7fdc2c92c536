// Global pools, Gemm, MatMul, normalizations, LRN onto ncnn-format layers
// (Conv, ConvTranspose and the other pools: convert_convpool.cpp; Softmax:
// convert_losses.cpp). Per-sample ncnn layers get our featmask bit
// (31=65536) so they take ONNX's leading batch axis.
#include <cfloat>

#include "graph/graph.h"
#include "frontend/onnx/converter.h"

namespace kestrel::onnx_import {

namespace {

ParamDict batched()
{
    ParamDict pd;
    pd.set_int(31, kFeatmaskBatched);
    return pd;
}

int as_int(NodeContext& n, int64_t v, const char* what)
{
    n.check(v >= INT32_MIN && v <= INT32_MAX, what, " ", v, " does not fit in 32 bits");
    return static_cast<int>(v);
}

// A constant weight input, as float32.
Tensor constant_weight(NodeContext& n, int i, const char* what)
{
    const Tensor* t = n.constant(i);
    n.check(t != nullptr, what, " must be a constant (initializer); runtime weights are not supported");
    return t->dtype() == DType::F32 ? *t : t->to(DType::F32);
}

// Input 0's spatial axes [2, rank), its rank known and >= 3 (N, C, spatial...).
std::vector<int64_t> spatial_axes(NodeContext& n)
{
    const int r = n.input_rank(0);
    n.check(r >= 3, "the input must be (N, C, D1, ...) of a known rank >= 3, got rank ", r);
    std::vector<int64_t> axes;
    for (int a = 2; a < r; ++a) axes.push_back(a);
    return axes;
}

// Global pools keep (N,C,1,1): at rank 4 adaptive pooling to 1x1 per sample
// (ncnn's layer); at other ranks a mean or a maximum over the spatial axes, kept.
void convert_global_pool(NodeContext& n, int type)
{
    if (n.input_rank(0) != 4 && n.input_rank(0) != -1) {
        const std::vector<int64_t> axes = spatial_axes(n);
        return stand_in(n, type == 0 ? "ReduceMax" : "ReduceMean", {n.input(0)}, {n.output(0)}, &axes);
    }
    ParamDict pd = batched();
    pd.set_int(0, type);
    pd.set_int(7, 1);
    pd.set_int(8, 1);
    pd.set_int(18, 1);
    n.emit("Pooling", {n.input(0)}, {n.output(0)}, pd);
}

void convert_global_max_pool(NodeContext& n) { convert_global_pool(n, 0); }
void convert_global_average_pool(NodeContext& n) { convert_global_pool(n, 1); }

// (sums of |x|^p)^(1/p), the sums taken by sum_of(blob of |x|^p) -> blob.
template <class SumOf> void lp_norm(NodeContext& n, int64_t p, const SumOf& sum_of)
{
    n.check(p >= 1, "p must be >= 1, got ", p);
    const std::string magnitude = stand_in_value(n, "Abs", {n.input(0)}, "magnitude");
    if (p == 1) return stand_in(n, "Identity", {sum_of(magnitude)}, {n.output(0)});
    const std::string power = n.constant_name(scalar_tensor(static_cast<float>(p)), "p");
    const std::string root = n.constant_name(scalar_tensor(1.f / static_cast<float>(p)), "inverse_p");
    const std::string sums = sum_of(stand_in_value(n, "Pow", {magnitude, power}, "powers"));
    stand_in(n, "Pow", {sums, root}, {n.output(0)});
}

// GlobalLpPool at any rank >= 3: over the spatial axes, kept.
void convert_global_lp_pool(NodeContext& n)
{
    const std::vector<int64_t> axes = spatial_axes(n);
    lp_norm(n, n.attr_int("p", 2),
            [&](const std::string& x) { return stand_in_value(n, "ReduceSum", {x}, "sums", &axes); });
}

// LpPool: the windows' sums of |x|^p as AveragePool's (padding counted, so
// the same divisor everywhere) times the window's size, then the p-th root.
void convert_lp_pool(NodeContext& n)
{
    const std::vector<int64_t> kernel = n.attr_ints("kernel_shape");
    n.check(!kernel.empty(), "kernel_shape is required");
    int64_t taps = 1;
    for (int64_t k : kernel) {
        n.check(k >= 1 && k <= 1 << 16, "kernel_shape values must be in [1, 65536], got ", k);
        taps *= k;
    }
    lp_norm(n, n.attr_int("p", 2), [&](const std::string& x) {
        onnx::NodeProto average;
        average.set_op_type("AveragePool");
        average.add_input(x);
        const std::string means = n.temp("window_means");
        average.add_output(means);
        for (const auto& a : n.node().attribute())
            if (a.name() != "p") *average.add_attribute() = a;
        onnx::AttributeProto* counted = average.add_attribute();
        counted->set_name("count_include_pad");
        counted->set_type(onnx::AttributeProto::INT);
        counted->set_i(1);
        n.convert_stand_in(average);
        const std::string size = n.constant_name(scalar_tensor(static_cast<float>(taps)), "window_size");
        return stand_in_value(n, "Mul", {means, size}, "window_sums");
    });
}

// Gemm with constant B (and C) -> InnerProduct over rows; otherwise ncnn Gemm.
void convert_gemm(NodeContext& n)
{
    const float alpha = n.attr_float("alpha", 1.f), beta = n.attr_float("beta", 1.f);
    const bool trans_a = n.attr_int("transA", 0) != 0, trans_b = n.attr_int("transB", 0) != 0;
    const Tensor* b = n.constant(1);
    const Tensor* c = n.has_input(2) ? n.constant(2) : nullptr;
    const bool c_is_bias = !n.has_input(2) || (c && (c->numel() == 1 || (c->shape().back() == c->numel())));
    if (!trans_a && b && c_is_bias && n.input_rank(0) == 2) {
        const Tensor bf = b->to(DType::F32);
        const int64_t k = trans_b ? bf.dim(1) : bf.dim(0), outs = trans_b ? bf.dim(0) : bf.dim(1);
        Tensor w({outs * k});
        for (int64_t o = 0; o < outs; ++o)
            for (int64_t i = 0; i < k; ++i)
                w.data<float>()[o * k + i] = alpha * (trans_b ? bf.data<float>()[o * k + i] : bf.data<float>()[i * outs + o]);
        ParamDict pd;
        pd.set_int(0, as_int(n, outs, "N"));
        pd.set_int(2, as_int(n, outs * k, "weight size"));
        std::vector<Tensor> weights = {w};
        if (c) {
            const Tensor cf = c->to(DType::F32);
            Tensor bias({outs});
            for (int64_t o = 0; o < outs; ++o) bias.data<float>()[o] = beta * cf.data<float>()[cf.numel() == 1 ? 0 : o];
            pd.set_int(1, 1);
            weights.push_back(bias);
        }
        n.emit("InnerProduct", {n.input(0)}, {n.output(0)}, pd, weights);
        return;
    }
    // ncnn's Gemm computes alpha * (AB + beta C), ONNX's alpha AB + beta C.
    n.check(alpha != 0.f || beta == 0.f || !n.has_input(2), "alpha 0 with a C input is not supported");
    ParamDict pd;
    pd.set_float(0, alpha);
    pd.set_float(1, alpha != 0.f ? beta / alpha : beta);
    pd.set_int(2, trans_a);
    pd.set_int(3, trans_b);
    std::vector<std::string> inputs = {n.input(0), n.input(1)};
    if (n.has_input(2)) inputs.push_back(n.input(2));
    else pd.set_int(10, -1);
    n.emit("Gemm", inputs, {n.output(0)}, pd);
}

// MatMul has numpy's semantics for any rank, except that a 1-D . 1-D product
// is [1] (ncnn's shape): reshaped to ONNX's scalar.
void convert_matmul(NodeContext& n)
{
    if (n.input_rank(0) != 1 || n.input_rank(1) != 1) {
        n.emit("MatMul", {n.input(0), n.input(1)}, {n.output(0)});
        return;
    }
    const std::string dot = n.temp("dot");
    n.emit("MatMul", {n.input(0), n.input(1)}, {dot});
    n.emit("Reshape", {dot, constant_blob(n, int64_tensor({}), "scalar shape")}, {n.output(0)});
}

void convert_batch_norm(NodeContext& n)
{
    if (n.attr_int("training_mode", 0) != 0) return convert_batch_norm_training(n);
    n.check(n.num_outputs() == 1 || !n.has_output(1), "the running statistics outputs need training_mode=1");
    for (int i = 1; i <= 4; ++i)
        if (!n.constant(i)) return convert_batch_norm_nd(n); // runtime weights
    const Tensor scale = constant_weight(n, 1, "scale"), bias = constant_weight(n, 2, "B"),
                 mean = constant_weight(n, 3, "mean"), var = constant_weight(n, 4, "var");
    ParamDict pd = batched();
    pd.set_int(0, as_int(n, scale.numel(), "channels"));
    pd.set_float(1, n.attr_float("epsilon", 1e-5f));
    n.emit("BatchNorm", {n.input(0)}, {n.output(0)}, pd, {scale, mean, var, bias});
}

void convert_layer_norm(NodeContext& n)
{
    const int rank = n.input_rank(0);
    int64_t axis = n.attr_int("axis", -1);
    if (axis < 0 && rank > 0) axis += rank;
    const bool weights_known = n.constant(1) && (!n.has_input(2) || n.constant(2));
    // ncnn's LayerNorm: last axis, constant weights, no statistics outputs.
    if (n.has_output(1) || n.has_output(2) || rank <= 0 || axis != rank - 1 || !weights_known)
        return convert_layer_norm_nd(n);
    const Tensor gamma = constant_weight(n, 1, "Scale");
    Tensor beta = n.has_input(2) ? constant_weight(n, 2, "B") : Tensor::zeros({gamma.numel()});
    ParamDict pd = batched();
    pd.set_int(0, as_int(n, gamma.numel(), "normalized size"));
    pd.set_float(1, n.attr_float("epsilon", 1e-5f));
    pd.set_int(2, 1);
    n.emit("LayerNorm", {n.input(0)}, {n.output(0)}, pd, {gamma.reshaped({gamma.numel()}), beta.reshaped({beta.numel()})});
}

// LRN sums across channels at each position: any rank >= 3 runs as (N, C,
// positions, 1) on ncnn's layer and is shaped back.
void convert_lrn(NodeContext& n)
{
    const int r = n.input_rank(0);
    if (r != 4 && r != -1) {
        n.check(r >= 3, "LRN's input must be (N, C, D1, ...), got rank ", r);
        const std::string flat = n.constant_name(int64_tensor({0, 0, -1, 1}), "as_4d");
        onnx::NodeProto lrn = n.node();
        lrn.set_input(0, stand_in_value(n, "Reshape", {n.input(0), flat}, "as_4d"));
        lrn.set_output(0, n.temp("lrn_4d"));
        n.convert_stand_in(lrn);
        const std::string shape = stand_in_value(n, "Shape", {n.input(0)}, "shape");
        return stand_in(n, "Reshape", {lrn.output(0), shape}, {n.output(0)});
    }
    ParamDict pd = batched();
    pd.set_int(0, 0);
    pd.set_int(1, as_int(n, n.attr_int("size", 1), "size"));
    pd.set_float(2, n.attr_float("alpha", 1e-4f));
    pd.set_float(3, n.attr_float("beta", 0.75f));
    pd.set_float(4, n.attr_float("bias", 1.f));
    n.emit("LRN", {n.input(0)}, {n.output(0)}, pd);
}

} // namespace

std::vector<ConverterEntry> nn_converters()
{
    return {
        {"GlobalMaxPool", convert_global_max_pool},
        {"GlobalAveragePool", convert_global_average_pool},
        {"Gemm", convert_gemm},
        {"MatMul", convert_matmul},
        {"BatchNormalization", convert_batch_norm},
        {"LayerNormalization", convert_layer_norm},
        {"LRN", convert_lrn},
        {"GlobalLpPool", convert_global_lp_pool},
        {"LpPool", convert_lp_pool},
    };
}

} // namespace kestrel::onnx_import
