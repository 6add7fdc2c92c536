// Conv, ConvTranspose (1-D/2-D/3-D; W and B constant or graph values),
// MaxPool, AveragePool (any rank) and MaxUnpool.
//  * Conv -> Convolution / ConvolutionDepthWise (2-D) or their 1D/3D
//    variants; ConvTranspose -> Deconvolution likewise. A W or B that is not
//    constant goes in as an input (ncnn's dynamic weight mode); the layer is
//    batched with only its first input split per sample (31 = 65536|131072).
//  * Pools that ncnn's 2-D Pooling computes exactly stay Pooling; the rest
//    (1-D/3-D, dilations, Indices, integer types, AveragePool with SAME pads
//    not counted) use our MaxPool/AveragePool layers with ONNX semantics.
#include <algorithm>

#include "graph/graph.h"
#include "frontend/onnx/converter.h"
#include "ops/common/sliding_window.h"

namespace kestrel::onnx_import {

namespace {

int as_int(NodeContext& n, int64_t v, const char* what)
{
    n.check(v >= INT32_MIN && v <= INT32_MAX, what, " ", v, " does not fit in 32 bits");
    return static_cast<int>(v);
}

std::vector<int> as_ints(NodeContext& n, const std::vector<int64_t>& values, const char* what)
{
    std::vector<int> out;
    for (int64_t v : values) out.push_back(as_int(n, v, what));
    return out;
}

// An attribute with one value per spatial axis (`def` each when absent).
std::vector<int64_t> per_axis(NodeContext& n, const char* name, size_t rank, int64_t def)
{
    std::vector<int64_t> v = n.attr_ints(name);
    if (v.empty()) return std::vector<int64_t>(rank, def);
    n.check(v.size() == rank, name, " must have ", rank, " values, got ", v.size());
    return v;
}

// Spatial rank from the weight (Conv, ConvTranspose), known at conversion.
size_t weight_spatial_rank(NodeContext& n)
{
    const Tensor* w = n.constant(1);
    const int r = w ? w->rank() : n.input_rank(1);
    n.check(r >= 3 && r <= 5, "W must have 1-3 spatial axes (rank 3-5), got rank ", r);
    return static_cast<size_t>(r - 2);
}

// ncnn layer type for a spatial rank: "Convolution" -> Convolution1D / Convolution / Convolution3D.
std::string ranked_type(const std::string& base, size_t rank)
{
    return rank == 2 ? base : base + std::to_string(rank) + "D";
}

// Param ids of ncnn's axis i (w, h, d) for our axis a (outermost first).
int ncnn_axis(size_t rank, size_t a) { return static_cast<int>(rank - 1 - a); }

// Kernel, dilation, stride and pads in ncnn's convolution ids (1/11/21,
// 2/12/22, 3/13/23, pads 4/14/24 then 15/16/17); same (-233/-234) replaces every pad.
void set_conv_window(NodeContext& n, ParamDict& pd, const std::vector<int64_t>& kernel,
                     const std::vector<window::Span>& pads, int same)
{
    const size_t rank = kernel.size();
    const auto dil = per_axis(n, "dilations", rank, 1), strides = per_axis(n, "strides", rank, 1);
    for (size_t a = 0; a < rank; ++a) {
        const int i = ncnn_axis(rank, a);
        pd.set_int(1 + 10 * i, as_int(n, kernel[a], "kernel"));
        pd.set_int(2 + 10 * i, as_int(n, dil[a], "dilation"));
        pd.set_int(3 + 10 * i, as_int(n, strides[a], "stride"));
        pd.set_int(4 + 10 * i, same != 0 ? same : as_int(n, pads[a].begin, "pad"));
        pd.set_int(15 + i, same != 0 ? same : as_int(n, pads[a].end, "pad"));
    }
}

// ONNX pads (all begins, then all ends); zeros when absent.
std::vector<window::Span> explicit_pads(NodeContext& n, size_t rank)
{
    const auto p = n.attr_ints("pads");
    n.check(p.empty() || p.size() == 2 * rank, "pads must have ", 2 * rank, " values, got ", p.size());
    std::vector<window::Span> out(rank);
    for (size_t a = 0; a < p.size() / 2; ++a) {
        n.check(p[a] >= 0 && p[a + rank] >= 0, "negative pads are not supported");
        out[a] = {p[a], p[a + rank]};
    }
    return out;
}

std::string auto_pad(NodeContext& n)
{
    const std::string s = n.attr_string("auto_pad", "NOTSET");
    n.check(s == "NOTSET" || s == "VALID" || s == "SAME_UPPER" || s == "SAME_LOWER", "unknown auto_pad '", s, "'");
    return s;
}

// Kernel from kernel_shape or the weight's spatial dims (0 = taken from the weight input at run time).
std::vector<int64_t> conv_kernel(NodeContext& n, size_t rank, int weight_input = 1)
{
    if (n.has_attr("kernel_shape")) return per_axis(n, "kernel_shape", rank, 1);
    const Tensor* w = n.constant(weight_input);
    const Shape* ws = w ? &w->shape() : n.input_shape(weight_input);
    std::vector<int64_t> k(rank, 0);
    if (ws)
        for (size_t a = 0; a < rank; ++a) k[a] = std::max<int64_t>(0, (*ws)[a + 2]);
    return k;
}

// Weight (reordered by `reorder` when constant) and bias: as layer weights when
// both are constant, otherwise as inputs after x. Returns the bottoms.
template <class Reorder>
std::vector<std::string> conv_weights(NodeContext& n, ParamDict& pd, int dynamic_id, std::vector<Tensor>& weights,
                                      Reorder reorder)
{
    const bool has_bias = n.has_input(2);
    const bool dynamic = !n.constant(1) || (has_bias && !n.constant(2));
    pd.set_int(31, kFeatmaskBatched | (dynamic ? kFeatmaskSharedInputs : 0));
    if (has_bias) pd.set_int(5, 1);
    std::vector<std::string> bottoms = {n.input(0)};
    if (dynamic) {
        pd.set_int(dynamic_id, 1);
        bottoms.push_back(n.input(1));
        if (has_bias) bottoms.push_back(n.input(2));
        return bottoms;
    }
    const Tensor w = n.constant(1)->to(DType::F32);
    pd.set_int(6, as_int(n, w.numel(), "weight size"));
    weights.push_back(reorder(w));
    if (has_bias) weights.push_back(n.constant(2)->to(DType::F32));
    return bottoms;
}

} // namespace

ParamDict conv_node_params(NodeContext& n, size_t rank, int weight_input, int& group)
{
    group = as_int(n, n.attr_int("group", 1), "group");
    n.check(group >= 1, "group must be >= 1, got ", group);
    const std::string pad_mode = auto_pad(n);
    ParamDict pd;
    std::vector<window::Span> pads = explicit_pads(n, rank);
    if (pad_mode == "VALID") pads.assign(rank, window::Span{});
    const int same = pad_mode == "SAME_UPPER" ? window::kSameUpper : pad_mode == "SAME_LOWER" ? window::kSameLower : 0;
    set_conv_window(n, pd, conv_kernel(n, rank, weight_input), pads, same);
    if (const Tensor* w = n.constant(weight_input)) pd.set_int(0, as_int(n, w->dim(0), "output channels"));
    if (group > 1) pd.set_int(7, group);
    return pd;
}

namespace {

void convert_conv(NodeContext& n)
{
    const size_t rank = weight_spatial_rank(n);
    int group = 1;
    ParamDict pd = conv_node_params(n, rank, 1, group);
    std::vector<Tensor> weights;
    const auto bottoms = conv_weights(n, pd, 19, weights, [](const Tensor& w) { return w.reshaped({w.numel()}); });
    n.emit(ranked_type(group > 1 ? "ConvolutionDepthWise" : "Convolution", rank), bottoms, {n.output(0)}, pd,
           weights);
}

// ConvTranspose output_shape with a known input size: ONNX's total padding
// full - output_shape as explicit pads (the larger half at the start unless
// SAME_UPPER); a negative total enlarges the output at the end, as
// onnxruntime does, through output_padding. False when the size is unknown.
bool output_shape_as_pads(NodeContext& n, const std::vector<int64_t>& kernel, const std::vector<int64_t>& dil,
                          const std::vector<int64_t>& strides, const std::vector<int64_t>& out_shape,
                          const std::string& pad_mode, std::vector<window::Span>& pads, std::vector<int64_t>& out_pad)
{
    const Shape* in = n.input_shape(0);
    const size_t rank = kernel.size();
    if (!in || in->size() != rank + 2) return false;
    for (size_t a = 0; a < rank; ++a)
        if ((*in)[a + 2] <= 0 || kernel[a] <= 0) return false;
    for (size_t a = 0; a < rank; ++a) {
        const int64_t full = ((*in)[a + 2] - 1) * strides[a] + dil[a] * (kernel[a] - 1) + 1 + out_pad[a];
        const int64_t total = full - out_shape[a];
        if (total < 0) {
            out_pad[a] -= total;
            pads[a] = {};
            continue;
        }
        const int64_t begin = pad_mode == "SAME_UPPER" ? total / 2 : total - total / 2;
        pads[a] = {begin, total - begin};
    }
    return true;
}

// ConvTranspose: output_shape -> ncnn's output size with SAME pads (the cut
// split as ONNX: the larger half at the start unless SAME_UPPER); auto_pad SAME
// -> explicit pads, since out = in*stride makes the total padding
// extent + output_padding - stride whatever the input size.
void convert_conv_transpose(NodeContext& n)
{
    const size_t rank = weight_spatial_rank(n);
    const int group = as_int(n, n.attr_int("group", 1), "group");
    n.check(group >= 1, "group must be >= 1, got ", group);
    const std::string pad_mode = auto_pad(n);
    const std::vector<int64_t> kernel = conv_kernel(n, rank);
    const auto dil = per_axis(n, "dilations", rank, 1), strides = per_axis(n, "strides", rank, 1);
    auto out_pad = per_axis(n, "output_padding", rank, 0);
    std::vector<int64_t> out_shape = n.attr_ints("output_shape");
    if (out_shape.size() == rank + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    n.check(out_shape.empty() || out_shape.size() == rank, "output_shape must have ", rank, " values, got ",
            out_shape.size());
    std::vector<window::Span> pads = explicit_pads(n, rank);
    if (pad_mode == "VALID" || !out_shape.empty()) pads.assign(rank, window::Span{});
    if (!out_shape.empty() && output_shape_as_pads(n, kernel, dil, strides, out_shape, pad_mode, pads, out_pad))
        out_shape.clear();
    if ((pad_mode == "SAME_UPPER" || pad_mode == "SAME_LOWER") && out_shape.empty()) {
        for (size_t a = 0; a < rank; ++a) {
            n.check(kernel[a] > 0, "auto_pad SAME needs kernel_shape or a W of known shape");
            const int64_t total = dil[a] * (kernel[a] - 1) + 1 + out_pad[a] - strides[a];
            n.check(total >= 0, "auto_pad SAME would need a negative padding (", total, ")");
            const int64_t begin = pad_mode == "SAME_UPPER" ? total / 2 : total - total / 2;
            pads[a] = {begin, total - begin};
        }
    }
    ParamDict pd;
    // With output_shape, ncnn's SAME pads select cutting the full output to that size.
    const int same = out_shape.empty() ? 0 : pad_mode == "SAME_UPPER" ? window::kSameUpper : window::kSameLower;
    set_conv_window(n, pd, kernel, pads, same);
    for (size_t a = 0; a < rank; ++a) {
        const int i = ncnn_axis(rank, a);
        pd.set_int(18 + i, as_int(n, out_pad[a], "output_padding"));
        if (!out_shape.empty()) pd.set_int((rank == 3 ? 25 : 20) + i, as_int(n, out_shape[a], "output_shape"));
    }
    if (const Tensor* w = n.constant(1)) {
        n.check(w->dim(0) % group == 0, "input channels not divisible by group");
        pd.set_int(0, as_int(n, w->dim(1) * group, "output channels"));
    }
    if (group > 1) pd.set_int(7, group);
    std::vector<Tensor> weights;
    const auto bottoms = conv_weights(n, pd, 28, weights, [&](const Tensor& w) {
        Tensor out(Shape{w.numel()}, DType::F32);
        const int64_t ksize = w.numel() / (w.dim(0) * w.dim(1));
        window::deconv_weight_from_onnx(w.data<float>(), w.dim(0), w.dim(1), group, ksize, out.data<float>());
        return out;
    });
    n.emit(ranked_type(group > 1 ? "DeconvolutionDepthWise" : "Deconvolution", rank), bottoms, {n.output(0)}, pd,
           weights);
}

// ncnn's 2-D Pooling, when it computes exactly what ONNX asks.
bool fits_ncnn_pooling(NodeContext& n, bool max, const std::vector<int64_t>& kernel, const std::string& pad_mode)
{
    const DType* dt = n.input_dtype(0);
    const auto dil = per_axis(n, "dilations", kernel.size(), 1);
    const bool same = pad_mode == "SAME_UPPER" || pad_mode == "SAME_LOWER";
    return kernel.size() == 2 && !n.has_output(1) && dil[0] == 1 && dil[1] == 1 &&
           (dt == nullptr || *dt == DType::F32) && pad_mode != "VALID" &&
           // ncnn counts SAME padding in the average's divisor.
           (max || !same || n.attr_int("count_include_pad", 0) != 0);
}

void emit_ncnn_pooling(NodeContext& n, bool max, const std::vector<int64_t>& kernel, const std::string& pad_mode)
{
    const auto strides = per_axis(n, "strides", 2, 1);
    const std::vector<window::Span> pads = explicit_pads(n, 2);
    ParamDict pd;
    pd.set_int(31, kFeatmaskBatched);
    pd.set_int(0, max ? 0 : 1);
    pd.set_int(1, as_int(n, kernel[1], "kernel"));
    pd.set_int(11, as_int(n, kernel[0], "kernel"));
    pd.set_int(2, as_int(n, strides[1], "stride"));
    pd.set_int(12, as_int(n, strides[0], "stride"));
    pd.set_int(3, as_int(n, pads[1].begin, "pad"));
    pd.set_int(14, as_int(n, pads[1].end, "pad"));
    pd.set_int(13, as_int(n, pads[0].begin, "pad"));
    pd.set_int(15, as_int(n, pads[0].end, "pad"));
    // ncnn pad modes: 1 explicit pads, 0 explicit + ceil tail, 2/3 SAME.
    int mode = n.attr_int("ceil_mode", 0) ? 0 : 1;
    if (pad_mode == "SAME_UPPER") mode = 2;
    else if (pad_mode == "SAME_LOWER") mode = 3;
    pd.set_int(5, mode);
    pd.set_int(6, static_cast<int>(n.attr_int("count_include_pad", 0)));
    n.emit("Pooling", {n.input(0)}, {n.output(0)}, pd);
}

// ONNX's window as params from id `first` on: kernel_shape, strides, pads,
// dilations (Pooling's ONNX form from 21, MaxUnpool from 0).
ParamDict onnx_window_params(NodeContext& n, const std::vector<int64_t>& kernel, int first, bool with_dilations)
{
    const size_t rank = kernel.size();
    ParamDict pd;
    pd.set_ints(first, as_ints(n, kernel, "kernel_shape"));
    pd.set_ints(first + 1, as_ints(n, per_axis(n, "strides", rank, 1), "strides"));
    std::vector<int64_t> pads(2 * rank, 0);
    const std::vector<window::Span> p = explicit_pads(n, rank);
    for (size_t a = 0; a < rank; ++a) pads[a] = p[a].begin, pads[a + rank] = p[a].end;
    pd.set_ints(first + 2, as_ints(n, pads, "pads"));
    if (with_dilations) pd.set_ints(first + 3, as_ints(n, per_axis(n, "dilations", rank, 1), "dilations"));
    return pd;
}

void convert_pool(NodeContext& n, bool max)
{
    const std::vector<int64_t> kernel = n.attr_ints("kernel_shape");
    n.check(!kernel.empty(), "kernel_shape is required");
    const int r = n.input_rank(0);
    n.check(r == -1 || r == static_cast<int>(kernel.size()) + 2, "kernel_shape has ", kernel.size(),
            " values for an input of rank ", r);
    const std::string pad_mode = auto_pad(n);
    if (fits_ncnn_pooling(n, max, kernel, pad_mode)) {
        emit_ncnn_pooling(n, max, kernel, pad_mode);
        return;
    }
    ParamDict pd = onnx_window_params(n, kernel, 21, true);
    pd.set_int(0, max ? 0 : 1);
    pd.set_int(20, 1); // Pooling's ONNX form
    pd.set_int(25, static_cast<int>(n.attr_int("ceil_mode", 0) != 0));
    pd.set_int(26, pad_mode == "SAME_UPPER" ? 1 : pad_mode == "SAME_LOWER" ? 2 : pad_mode == "VALID" ? 3 : 0);
    pd.set_int(6, static_cast<int>(n.attr_int("count_include_pad", 0) != 0));
    pd.set_int(27, static_cast<int>(n.attr_int("storage_order", 0) != 0));
    std::vector<std::string> tops = {n.output(0)};
    if (n.has_output(1)) tops.push_back(n.output(1));
    n.emit("Pooling", {n.input(0)}, tops, pd);
}

void convert_max_pool(NodeContext& n) { convert_pool(n, true); }
void convert_average_pool(NodeContext& n) { convert_pool(n, false); }

void convert_max_unpool(NodeContext& n)
{
    const std::vector<int64_t> kernel = n.attr_ints("kernel_shape");
    n.check(!kernel.empty(), "kernel_shape is required");
    ParamDict pd = onnx_window_params(n, kernel, 0, false);
    std::vector<std::string> bottoms = {n.input(0), n.input(1)};
    if (n.has_input(2)) {
        if (!n.constant(2)) pd.set_int(20, 1);
        bottoms.push_back(n.input(2));
    }
    n.emit("MaxUnpool", bottoms, {n.output(0)}, pd);
}

} // namespace

std::vector<ConverterEntry> convpool_converters()
{
    return {
        {"Conv", convert_conv},
        {"ConvTranspose", convert_conv_transpose},
        {"MaxPool", convert_max_pool},
        {"AveragePool", convert_average_pool},
        {"MaxUnpool", convert_max_unpool},
    };
}

} // namespace kestrel::onnx_import
