// Conv, ConvTranspose, pools, Gemm, MatMul, normalizations, LRN:
// onto ncnn-format layers. Per-sample ncnn layers get our featmask bit
// (31=65536) so they take ONNX's leading batch axis.
#include <cfloat>

#include "graph/graph.h"
#include "onnx/converter.h"

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

// 2-D spatial attributes shared by Conv, ConvTranspose and the pools.
struct Window {
    int kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
    int top = 0, left = 0, bottom = 0, right = 0;
    std::string auto_pad;
};

Window read_window(NodeContext& n, const std::vector<int64_t>& kernel)
{
    Window w;
    n.check(kernel.size() == 2, "only 2-D kernels are supported, got ", kernel.size(), "-D");
    w.kh = as_int(n, kernel[0], "kernel");
    w.kw = as_int(n, kernel[1], "kernel");
    const auto strides = n.attr_ints("strides"), dil = n.attr_ints("dilations"), pads = n.attr_ints("pads");
    if (!strides.empty()) {
        n.check(strides.size() == 2, "strides must have 2 values");
        w.sh = as_int(n, strides[0], "stride");
        w.sw = as_int(n, strides[1], "stride");
    }
    if (!dil.empty()) {
        n.check(dil.size() == 2, "dilations must have 2 values");
        w.dh = as_int(n, dil[0], "dilation");
        w.dw = as_int(n, dil[1], "dilation");
    }
    if (!pads.empty()) {
        n.check(pads.size() == 4, "pads must have 4 values");
        w.top = as_int(n, pads[0], "pad");
        w.left = as_int(n, pads[1], "pad");
        w.bottom = as_int(n, pads[2], "pad");
        w.right = as_int(n, pads[3], "pad");
    }
    w.auto_pad = n.attr_string("auto_pad", "NOTSET");
    return w;
}

void expect_rank4(NodeContext& n)
{
    const int r = n.input_rank(0);
    n.check(r == -1 || r == 4, "only 4-D (N,C,H,W) inputs are supported, got rank ", r);
}

void convert_conv(NodeContext& n)
{
    expect_rank4(n);
    const Tensor w = constant_weight(n, 1, "W");
    n.check(w.rank() == 4, "W must be 4-D (M, C/group, kH, kW)");
    const Window win = read_window(n, n.has_attr("kernel_shape") ? n.attr_ints("kernel_shape")
                                                                  : std::vector<int64_t>{w.dim(2), w.dim(3)});
    const int group = as_int(n, n.attr_int("group", 1), "group");
    ParamDict pd = batched();
    pd.set_int(0, as_int(n, w.dim(0), "output channels"));
    pd.set_int(1, win.kw);
    pd.set_int(11, win.kh);
    pd.set_int(2, win.dw);
    pd.set_int(12, win.dh);
    pd.set_int(3, win.sw);
    pd.set_int(13, win.sh);
    if (win.auto_pad == "SAME_UPPER" || win.auto_pad == "SAME_LOWER") {
        pd.set_int(4, win.auto_pad == "SAME_UPPER" ? -233 : -234);
    } else if (win.auto_pad == "NOTSET") {
        pd.set_int(4, win.left);
        pd.set_int(15, win.right);
        pd.set_int(14, win.top);
        pd.set_int(16, win.bottom);
    } else {
        n.check(win.auto_pad == "VALID", "unknown auto_pad '", win.auto_pad, "'");
    }
    pd.set_int(6, as_int(n, w.numel(), "weight size"));
    std::vector<Tensor> weights = {w.reshaped({w.numel()})};
    if (n.has_input(2)) {
        pd.set_int(5, 1);
        weights.push_back(constant_weight(n, 2, "B"));
    }
    if (group > 1) pd.set_int(7, group);
    n.emit(group > 1 ? "ConvolutionDepthWise" : "Convolution", {n.input(0)}, {n.output(0)}, pd, weights);
}

// ONNX ConvTranspose weight (C_in, M/group, kH, kW) -> ncnn (group, M/g, C_in/g, kH, kW).
Tensor deconv_weight(const Tensor& w, int group)
{
    const int64_t cin = w.dim(0), mg = w.dim(1), k = w.dim(2) * w.dim(3), cg = cin / group;
    Tensor out(Shape{w.numel()}, DType::F32);
    for (int64_t g = 0; g < group; ++g)
        for (int64_t m = 0; m < mg; ++m)
            for (int64_t c = 0; c < cg; ++c)
                for (int64_t i = 0; i < k; ++i)
                    out.data<float>()[((g * mg + m) * cg + c) * k + i] = w.data<float>()[((g * cg + c) * mg + m) * k + i];
    return out;
}

void convert_conv_transpose(NodeContext& n)
{
    expect_rank4(n);
    const Tensor w = constant_weight(n, 1, "W");
    n.check(w.rank() == 4, "W must be 4-D (C, M/group, kH, kW)");
    const Window win = read_window(n, n.has_attr("kernel_shape") ? n.attr_ints("kernel_shape")
                                                                  : std::vector<int64_t>{w.dim(2), w.dim(3)});
    const int group = as_int(n, n.attr_int("group", 1), "group");
    n.check(w.dim(0) % group == 0, "input channels not divisible by group");
    n.check(n.attr_ints("output_shape").empty(), "output_shape is not supported; use pads");
    n.check(win.auto_pad == "NOTSET" || win.auto_pad == "VALID", "auto_pad '", win.auto_pad, "' is not supported");
    const auto out_pad = n.attr_ints("output_padding");
    ParamDict pd = batched();
    pd.set_int(0, as_int(n, w.dim(1) * group, "output channels"));
    pd.set_int(1, win.kw);
    pd.set_int(11, win.kh);
    pd.set_int(2, win.dw);
    pd.set_int(12, win.dh);
    pd.set_int(3, win.sw);
    pd.set_int(13, win.sh);
    pd.set_int(4, win.left);
    pd.set_int(15, win.right);
    pd.set_int(14, win.top);
    pd.set_int(16, win.bottom);
    if (out_pad.size() == 2) {
        pd.set_int(19, as_int(n, out_pad[0], "output_padding"));
        pd.set_int(18, as_int(n, out_pad[1], "output_padding"));
    }
    pd.set_int(6, as_int(n, w.numel(), "weight size"));
    std::vector<Tensor> weights = {deconv_weight(w, group)};
    if (n.has_input(2)) {
        pd.set_int(5, 1);
        weights.push_back(constant_weight(n, 2, "B"));
    }
    if (group > 1) pd.set_int(7, group);
    n.emit(group > 1 ? "DeconvolutionDepthWise" : "Deconvolution", {n.input(0)}, {n.output(0)}, pd, weights);
}

void convert_pool(NodeContext& n, int type)
{
    expect_rank4(n);
    n.check(!n.has_output(1), "the Indices output is not supported");
    const Window win = read_window(n, n.attr_ints("kernel_shape"));
    n.check(win.dh == 1 && win.dw == 1, "dilated pooling is not supported");
    ParamDict pd = batched();
    pd.set_int(0, type);
    pd.set_int(1, win.kw);
    pd.set_int(11, win.kh);
    pd.set_int(2, win.sw);
    pd.set_int(12, win.sh);
    pd.set_int(3, win.left);
    pd.set_int(14, win.right);
    pd.set_int(13, win.top);
    pd.set_int(15, win.bottom);
    // ncnn pad modes: 1 explicit pads, 0 explicit + ceil tail, 2/3 SAME.
    int mode = n.attr_int("ceil_mode", 0) ? 0 : 1;
    if (win.auto_pad == "SAME_UPPER") mode = 2;
    else if (win.auto_pad == "SAME_LOWER") mode = 3;
    pd.set_int(5, mode);
    pd.set_int(6, static_cast<int>(n.attr_int("count_include_pad", 0)));
    n.emit("Pooling", {n.input(0)}, {n.output(0)}, pd);
}

void convert_max_pool(NodeContext& n) { convert_pool(n, 0); }
void convert_average_pool(NodeContext& n) { convert_pool(n, 1); }

// Global pools keep (N,C,1,1): adaptive pooling to 1x1 per sample.
void convert_global_pool(NodeContext& n, int type)
{
    expect_rank4(n);
    ParamDict pd = batched();
    pd.set_int(0, type);
    pd.set_int(7, 1);
    pd.set_int(8, 1);
    pd.set_int(18, 1);
    n.emit("Pooling", {n.input(0)}, {n.output(0)}, pd);
}

void convert_global_max_pool(NodeContext& n) { convert_global_pool(n, 0); }
void convert_global_average_pool(NodeContext& n) { convert_global_pool(n, 1); }

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

void convert_matmul(NodeContext& n)
{
    const int ra = n.input_rank(0), rb = n.input_rank(1);
    n.check((ra == -1 || ra <= 4) && (rb == -1 || rb <= 4), "inputs of rank over 4 are not supported yet");
    n.emit("MatMul", {n.input(0), n.input(1)}, {n.output(0)});
}

void convert_batch_norm(NodeContext& n)
{
    n.check(n.num_outputs() == 1 || !n.has_output(1), "training-mode outputs are not supported");
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

void convert_lrn(NodeContext& n)
{
    expect_rank4(n);
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
        {"Conv", convert_conv},
        {"ConvTranspose", convert_conv_transpose},
        {"MaxPool", convert_max_pool},
        {"AveragePool", convert_average_pool},
        {"GlobalMaxPool", convert_global_max_pool},
        {"GlobalAveragePool", convert_global_average_pool},
        {"Gemm", convert_gemm},
        {"MatMul", convert_matmul},
        {"BatchNormalization", convert_batch_norm},
        {"LayerNormalization", convert_layer_norm},
        {"LRN", convert_lrn},
    };
}

} // namespace kestrel::onnx_import
