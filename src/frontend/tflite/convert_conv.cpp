// CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV (and MediaPipe's custom
// Convolution2DTransposeBias), MAX_POOL_2D, AVERAGE_POOL_2D (and MediaPipe's
// MaxPoolingWithArgmax2D and MaxUnpooling2D),
// FULLY_CONNECTED and BATCH_MATMUL.
//  * Convolutions and pools take and give folded (NCHW) values, onto ncnn's
//    Convolution / ConvolutionDepthWise / Deconvolution / Pooling with the
//    weights reordered once: TFLite's filters are [O][H][W][I] (depthwise
//    [1][H][W][I*M], the M outputs of input i next to each other, as ncnn's
//    groups). SAME padding becomes explicit pads (the larger half at the end),
//    from the file's static image sizes.
//  * FULLY_CONNECTED flattens its input to rows of the filter's width, as
//    TFLite does, onto InnerProduct ([N][K] weights, TFLite's own order).
#include <algorithm>
#include <cstring>

#include "frontend/common/axis_order.h"
#include "frontend/tflite/converter.h"
#include "ops/common/sliding_window.h"

namespace kestrel::tflite_import {

namespace {

constexpr int kBatched = 65536; // param 31: the layer runs per sample of an N-d batch

struct Window {
    int kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
    int top = 0, bottom = 0, left = 0, right = 0;
};

// TFLite's SAME: the output is ceil(in / stride) and the padding that needs,
// the larger half after; VALID: none.
void pad_window(const OpContext& n, Window& w, fb::Padding padding, int64_t in_h, int64_t in_w)
{
    if (padding == fb::Padding::VALID) return;
    n.check(in_h > 0 && in_w > 0, "SAME padding needs the input's height and width, the file declares ",
            shape_str(n.in(0).shape));
    auto same = [](int64_t in, int k, int s, int d, int& before, int& after) {
        const int64_t out = (in + s - 1) / s;
        const int64_t total = std::max<int64_t>(0, (out - 1) * s + static_cast<int64_t>(d) * (k - 1) + 1 - in);
        before = static_cast<int>(total / 2);
        after = static_cast<int>(total - total / 2);
    };
    same(in_h, w.kh, w.sh, w.dh, w.top, w.bottom);
    same(in_w, w.kw, w.sw, w.dw, w.left, w.right);
}

void check_window(const OpContext& n, const Window& w)
{
    for (int v : {w.kh, w.kw, w.sh, w.sw, w.dh, w.dw})
        n.check(v >= 1 && v <= 65536, "kernel sizes, strides and dilations must be in [1, 65536], got ", v);
}

// ncnn's window params: kernel 1/11, dilation 2/12, stride 3/13, pads 4/14 (begin) 15/16 (end).
void set_conv_window(ParamDict& pd, const Window& w)
{
    pd.set_int(1, w.kw);
    pd.set_int(11, w.kh);
    pd.set_int(2, w.dw);
    pd.set_int(12, w.dh);
    pd.set_int(3, w.sw);
    pd.set_int(13, w.sh);
    pd.set_int(4, w.left);
    pd.set_int(14, w.top);
    pd.set_int(15, w.right);
    pd.set_int(16, w.bottom);
    pd.set_int(31, kBatched);
}

// The bias as float32 (a float model's; quantized models go elsewhere).
void add_bias(OpContext& n, int k, int64_t channels, ParamDict& pd, std::vector<Tensor>& weights)
{
    if (!n.has_input(k)) return;
    Tensor b = n.constant_f32(k, "the bias");
    n.check(b.numel() == channels, "the bias has ", b.numel(), " values for ", channels, " output channels");
    pd.set_int(5, 1);
    weights.push_back(b.reshaped({channels}));
}

// The layer's output through the fused activation into output 0 (folded or plain).
struct Result {
    std::string pre, out;
};
Result result_with_activation(OpContext& n, fb::ActivationFunctionType act, bool folded_form)
{
    Result r;
    r.out = n.output(0, folded_form);
    r.pre = act == fb::ActivationFunctionType::NONE ? r.out : n.temp("pre_activation");
    return r;
}

Tensor filter_f32(OpContext& n, int k)
{
    const Tensor w = n.constant_f32(k, "the filter");
    n.check(w.rank() == 4, "the filter must have rank 4, it has shape ", shape_str(w.shape()));
    return w;
}

// A convolution of `groups` groups over the folded input 0: the filter
// (input 1) reordered to ncnn's [O][I/groups][KH][KW] (both TFLite filter
// forms, [O][H][W][I] and depthwise [1][H][W][I*M], become that by moving
// their last axis second), the bias (input 2), the fused activation.
template <class Options>
void emit_convolution(OpContext& n, const Options& o, const Tensor& w, int64_t out_c, int64_t groups)
{
    const Shape& in = n.in(0).shape;
    Window win{static_cast<int>(w.dim(1)), static_cast<int>(w.dim(2)), o.stride_h(), o.stride_w(),
               o.dilation_h_factor(), o.dilation_w_factor()};
    check_window(n, win);
    pad_window(n, win, o.padding(), in[1], in[2]);
    ParamDict pd;
    set_conv_window(pd, win);
    pd.set_int(0, checked_int(n, out_c, 1, INT32_MAX, "output channels"));
    pd.set_int(6, checked_int(n, w.numel(), 1, INT32_MAX, "weight size"));
    if (groups > 1) pd.set_int(7, checked_int(n, groups, 1, INT32_MAX, "groups"));
    std::vector<Tensor> weights = {to_engine_order(AxisOrder::ChannelsLast, w).reshaped({w.numel()})};
    add_bias(n, 2, out_c, pd, weights);
    const std::string x = n.folded(0);
    const Result r = result_with_activation(n, o.fused_activation_function(), true);
    n.emit(groups > 1 ? "ConvolutionDepthWise" : "Convolution", {x}, {r.pre}, pd, weights);
    n.activation(r.pre, o.fused_activation_function(), r.out);
}

void convert_conv2d(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_Conv2DOptions();
    n.check(o != nullptr, "has no Conv2DOptions");
    const Tensor w = filter_f32(n, 1); // [O][KH][KW][I / groups]
    const Shape& in = n.in(0).shape;
    n.check(in.size() == 4, "the input must be NHWC (rank 4), it has shape ", shape_str(in));
    const int64_t out_c = w.dim(0), in_per_group = w.dim(3);
    n.check(in[3] > 0 && out_c > 0 && in_per_group > 0 && in[3] % in_per_group == 0, "input channels ", in[3],
            " are not a multiple of the filter's ", in_per_group);
    const int64_t groups = in[3] / in_per_group;
    n.check(out_c % groups == 0, "output channels ", out_c, " are not a multiple of the ", groups, " groups");
    emit_convolution(n, *o, w, out_c, groups);
}

// Output channel i*M+m reads input channel i: ncnn's groups of M outputs.
void convert_depthwise_conv2d(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_DepthwiseConv2DOptions();
    n.check(o != nullptr, "has no DepthwiseConv2DOptions");
    const Tensor w = filter_f32(n, 1); // [1][KH][KW][I*M]
    const Shape& in = n.in(0).shape;
    n.check(in.size() == 4 && in[3] > 0, "the input must be NHWC (rank 4), it has shape ", shape_str(in));
    n.check(w.dim(0) == 1 && w.dim(3) % in[3] == 0, "the filter ", shape_str(w.shape()),
            " is not [1, KH, KW, input channels x multiplier] for ", in[3], " input channels");
    emit_convolution(n, *o, w, w.dim(3), in[3]);
}

// A transposed convolution to the output size `out_h` x `out_w`, TFLite's
// padding: the forward convolution's from that size (the larger half after),
// an output larger than the full one extended at the end.
void emit_transpose_conv(OpContext& n, int input, int filter, int bias, fb::Padding padding, int sh, int sw,
                         fb::ActivationFunctionType act)
{
    const Tensor w = filter_f32(n, filter); // [O][KH][KW][I]
    const Shape& in = n.in(input).shape;
    const Shape& out = n.out(0).shape;
    n.check(in.size() == 4 && out.size() == 4 && in[1] > 0 && in[2] > 0,
            "input and output must be NHWC with known sizes, got ", shape_str(in), " and ", shape_str(out));
    n.check(w.dim(3) == in[3], "the filter ", shape_str(w.shape()), " does not take ", in[3], " input channels");
    n.check(out[3] == w.dim(0), "the output has ", out[3], " channels, the filter ", w.dim(0));
    Window win{static_cast<int>(w.dim(1)), static_cast<int>(w.dim(2)), sh, sw};
    check_window(n, win);
    ParamDict pd;
    auto pads = [&](int64_t in_size, int64_t out_size, int k, int s, int& before, int& after, int out_pad_id) {
        const int64_t full = (in_size - 1) * s + k;
        const int64_t total = padding == fb::Padding::VALID ? 0 : std::max<int64_t>(0, full - out_size);
        before = static_cast<int>(total / 2);
        const int64_t cut_end = full - before - out_size; // what the end loses (negative: extended)
        after = static_cast<int>(std::max<int64_t>(0, cut_end));
        pd.set_int(out_pad_id, static_cast<int>(std::max<int64_t>(0, -cut_end)));
    };
    pads(in[1], out[1], win.kh, win.sh, win.top, win.bottom, 19);
    pads(in[2], out[2], win.kw, win.sw, win.left, win.right, 18);
    // The layer computes the whole plane before cutting it to the output.
    n.check_size({in[0], w.dim(0), (in[1] - 1) * win.sh + win.kh, (in[2] - 1) * win.sw + win.kw}, DType::F32,
                 "the transposed convolution's full output");
    set_conv_window(pd, win);
    pd.set_int(0, checked_int(n, w.dim(0), 1, INT32_MAX, "output channels"));
    pd.set_int(6, checked_int(n, w.numel(), 1, INT32_MAX, "weight size"));
    // [O][KH][KW][I] -> ONNX's [I][O][KH][KW] -> ours.
    Tensor onnx_order = to_engine_order(AxisOrder::ChannelsLast, w); // [O][I][KH][KW]
    Tensor io(Shape{w.dim(3), w.dim(0), w.dim(1), w.dim(2)}, DType::F32);
    const int64_t plane = w.dim(1) * w.dim(2);
    for (int64_t o = 0; o < w.dim(0); ++o)
        for (int64_t i = 0; i < w.dim(3); ++i)
            std::memcpy(io.data<float>() + (i * w.dim(0) + o) * plane, onnx_order.data<float>() + (o * w.dim(3) + i) * plane,
                        static_cast<size_t>(plane) * sizeof(float));
    Tensor packed(Shape{w.numel()}, DType::F32);
    window::deconv_weight_from_onnx(io.data<float>(), w.dim(3), w.dim(0), 1, plane, packed.data<float>());
    std::vector<Tensor> weights = {packed};
    if (bias >= 0) add_bias(n, bias, w.dim(0), pd, weights);
    const std::string x = n.folded(input);
    const Result r = result_with_activation(n, act, true);
    n.emit("Deconvolution", {x}, {r.pre}, pd, weights);
    n.activation(r.pre, act, r.out);
}

void convert_transpose_conv(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_TransposeConvOptions();
    n.check(o != nullptr, "has no TransposeConvOptions");
    // Inputs: output_shape, filter, input, bias (version 3+).
    emit_transpose_conv(n, 2, 1, n.has_input(3) ? 3 : -1, o->padding(), o->stride_h(), o->stride_w(),
                        o->fused_activation_function());
}

// MediaPipe's Convolution2DTransposeBias: inputs (input, filter, bias), the
// options a C struct {padding (1 SAME, 2 VALID), stride_width, stride_height}
// of 32-bit integers; the output size is the output tensor's.
void convert_conv2d_transpose_bias(OpContext& n)
{
    const auto* raw = n.op().custom_options();
    n.check(raw && raw->size() >= 12, "needs 12 bytes of options (padding, stride width, stride height), has ",
            raw ? raw->size() : 0);
    int32_t v[3];
    std::memcpy(v, raw->data(), sizeof(v));
    n.check(v[0] == 1 || v[0] == 2, "padding ", v[0], " is neither SAME (1) nor VALID (2)");
    emit_transpose_conv(n, 0, 1, n.has_input(2) ? 2 : -1, v[0] == 1 ? fb::Padding::SAME : fb::Padding::VALID, v[2],
                        v[1], fb::ActivationFunctionType::NONE);
}

// MAX_POOL_2D / AVERAGE_POOL_2D: the average counts only the taps inside the
// image (TFLite's SAME).
void convert_pool(OpContext& n, bool max)
{
    const auto* o = n.op().builtin_options_as_Pool2DOptions();
    n.check(o != nullptr, "has no Pool2DOptions");
    const Shape& in = n.in(0).shape;
    n.check(in.size() == 4, "the input must be NHWC (rank 4), it has shape ", shape_str(in));
    Window win{o->filter_height(), o->filter_width(), o->stride_h(), o->stride_w()};
    check_window(n, win);
    pad_window(n, win, o->padding(), in[1], in[2]);
    ParamDict pd;
    pd.set_int(0, max ? 0 : 1);
    pd.set_int(1, win.kw);
    pd.set_int(11, win.kh);
    pd.set_int(2, win.sw);
    pd.set_int(12, win.sh);
    pd.set_int(3, win.left);
    pd.set_int(13, win.top);
    pd.set_int(14, win.right);
    pd.set_int(15, win.bottom);
    pd.set_int(5, 1); // the pads as given
    pd.set_int(6, 0); // averages over the taps inside
    pd.set_int(31, kBatched);
    const std::string x = n.folded(0);
    const Result r = result_with_activation(n, o->fused_activation_function(), true);
    n.emit("Pooling", {x}, {r.pre}, pd);
    n.activation(r.pre, o->fused_activation_function(), r.out);
}

// MediaPipe's pooling custom operators keep TFLite's TfLitePoolParams as
// their options: padding (1 SAME, 2 VALID), stride width, stride height,
// filter width, filter height, activation (int32 each).
Window mediapipe_pool_window(OpContext& n)
{
    const auto* raw = n.op().custom_options();
    n.check(raw && raw->size() >= 24, "needs 24 bytes of options (TFLite's pool parameters), has ",
            raw ? raw->size() : 0);
    int32_t v[6];
    std::memcpy(v, raw->data(), sizeof(v));
    n.check(v[0] == 1 || v[0] == 2, "padding ", v[0], " is neither SAME (1) nor VALID (2)");
    n.check(v[5] == 0, "a fused activation (", v[5], ") is not supported");
    Window win{v[4], v[3], v[2], v[1]};
    check_window(n, win);
    return win;
}

std::vector<int> window_ints(const Window& w, bool pads)
{
    return pads ? std::vector<int>{w.top, w.left, w.bottom, w.right} : std::vector<int>{w.kh, w.kw, w.sh, w.sw};
}

// MaxPoolingWithArgmax2D: the maximum of each window and where it was.
// TFLite counts that position in NHWC order; Kestrel's indices count it in
// its own NCHW order, so they may only go to MaxUnpooling2D, which reads them
// back the same way.
void convert_max_pool_with_argmax(OpContext& n)
{
    Window win = mediapipe_pool_window(n);
    const Shape& in = n.in(0).shape;
    n.check(in.size() == 4, "the input must be NHWC (rank 4)");
    const auto* raw = n.op().custom_options();
    int32_t padding = 0;
    std::memcpy(&padding, raw->data(), sizeof(padding));
    pad_window(n, win, padding == 1 ? fb::Padding::SAME : fb::Padding::VALID, in[1], in[2]);
    n.check(n.num_outputs() == 2 && n.output_read_only_by(1, "MaxUnpooling2D"),
            "its indices (output 1) may only be read by MaxUnpooling2D");
    const std::vector<int> kernel_strides = window_ints(win, false);
    ParamDict pd;
    pd.set_int(0, 0);
    pd.set_int(20, 1); // Pooling's ONNX form: indices as a second output
    pd.set_ints(21, {kernel_strides[0], kernel_strides[1]});
    pd.set_ints(22, {kernel_strides[2], kernel_strides[3]});
    pd.set_ints(23, window_ints(win, true));
    pd.set_ints(24, {1, 1});
    const std::string x = n.folded(0);
    n.emit("Pooling", {x}, {n.output(0, true), n.output(1, true)}, pd);
}

// MaxUnpooling2D(values, indices): each value put back where its maximum was,
// zeros elsewhere, at the output tensor's size.
void convert_max_unpooling(OpContext& n)
{
    const Window win = mediapipe_pool_window(n);
    const Shape& out = n.out(0).shape;
    n.check(out.size() == 4 && out[1] > 0 && out[2] > 0, "the output must be NHWC with a known size");
    ParamDict pd;
    const std::vector<int> kernel_strides = window_ints(win, false);
    pd.set_ints(0, {kernel_strides[0], kernel_strides[1]});
    pd.set_ints(1, {kernel_strides[2], kernel_strides[3]});
    pd.set_ints(2, {0, 0, 0, 0});
    const std::string x = n.folded(0), indices = n.folded(1);
    const std::string shape = n.constant_blob(int64_tensor({out[0], out[3], out[1], out[2]}), "output_shape");
    n.emit("MaxUnpool", {x, indices, shape}, {n.output(0, true)}, pd);
}

// FULLY_CONNECTED: rows of K = the filter's width; keep_num_dims keeps the
// input's leading axes, otherwise the output is [rows, N] (the file's shape).
void convert_fully_connected(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_FullyConnectedOptions();
    const auto act = o ? o->fused_activation_function() : fb::ActivationFunctionType::NONE;
    n.check(!o || o->weights_format() == fb::FullyConnectedOptionsWeightsFormat::DEFAULT,
            "shuffled int8 weights are not supported");
    const Tensor w = n.constant_f32(1, "the weights");
    n.check(w.rank() == 2, "the weights must be [N, K], got ", shape_str(w.shape()));
    const int64_t units = w.dim(0), k = w.dim(1);
    const Shape& in = n.in(0).shape;
    std::string x = n.plain(0);
    if (in.size() != 2 || in[1] != k) {
        const int64_t numel = shape_numel(in);
        n.check(k > 0 && numel % k == 0, "the input ", shape_str(in), " is not rows of ", k);
        const std::string flat = n.temp("rows");
        n.emit("Reshape", {x, n.constant_blob(int64_tensor({-1, k}), "rows_shape")}, {flat});
        x = flat;
    }
    ParamDict pd;
    pd.set_int(0, checked_int(n, units, 1, INT32_MAX, "units"));
    pd.set_int(2, checked_int(n, w.numel(), 1, INT32_MAX, "weight size"));
    std::vector<Tensor> weights = {w.reshaped({w.numel()})};
    add_bias(n, 2, units, pd, weights);
    pd.set_int(1, weights.size() > 1 ? 1 : 0);
    pd.erase(5);
    const Shape& out = n.out(0).shape;
    n.check(!out.empty() && out.back() == units, "the output ", shape_str(out), " does not end in the ", units, " units");
    const bool reshape_out = out.size() != 2;
    const std::string y = n.output(0, false);
    const std::string product = act == fb::ActivationFunctionType::NONE && !reshape_out ? y : n.temp("product");
    n.emit("InnerProduct", {x}, {product}, pd, weights);
    if (!reshape_out) {
        n.activation(product, act, y);
        return;
    }
    const std::string activated = n.activation(product, act, "");
    Shape shape = out;
    shape[0] = -1; // the rows follow the batch
    n.emit("Reshape", {activated, n.constant_blob(int64_tensor(shape), "out_shape")}, {y});
}

// BATCH_MATMUL: adj_x / adj_y swap the last two axes of an operand first.
void convert_batch_matmul(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_BatchMatMulOptions();
    std::string operands[2];
    for (int k = 0; k < 2; ++k) {
        operands[k] = n.plain(k);
        const bool adj = o && (k == 0 ? o->adj_x() : o->adj_y());
        if (!adj) continue;
        const int r = n.rank(k);
        n.check(r >= 2, "an adjoint operand needs rank 2 or more");
        std::vector<int> perm(static_cast<size_t>(r));
        for (int a = 0; a < r; ++a) perm[static_cast<size_t>(a)] = a;
        std::swap(perm[static_cast<size_t>(r - 1)], perm[static_cast<size_t>(r - 2)]);
        ParamDict pd;
        pd.set_ints(1, perm);
        const std::string t = n.temp(k == 0 ? "x_adjoint" : "y_adjoint");
        n.emit("Permute", {operands[k]}, {t}, pd);
        operands[k] = t;
    }
    n.emit("MatMul", {operands[0], operands[1]}, {n.output(0, false)});
}

} // namespace

void add_conv_converters(BuiltinTable& builtins, CustomTable& customs)
{
    builtins[fb::BuiltinOperator::CONV_2D] = convert_conv2d;
    builtins[fb::BuiltinOperator::DEPTHWISE_CONV_2D] = convert_depthwise_conv2d;
    builtins[fb::BuiltinOperator::TRANSPOSE_CONV] = convert_transpose_conv;
    builtins[fb::BuiltinOperator::MAX_POOL_2D] = [](OpContext& n) { convert_pool(n, true); };
    builtins[fb::BuiltinOperator::AVERAGE_POOL_2D] = [](OpContext& n) { convert_pool(n, false); };
    builtins[fb::BuiltinOperator::FULLY_CONNECTED] = convert_fully_connected;
    builtins[fb::BuiltinOperator::BATCH_MATMUL] = convert_batch_matmul;
    customs["Convolution2DTransposeBias"] = convert_conv2d_transpose_bias;
    customs["MaxPoolingWithArgmax2D"] = convert_max_pool_with_argmax;
    customs["MaxUnpooling2D"] = convert_max_unpooling;
}

} // namespace kestrel::tflite_import
