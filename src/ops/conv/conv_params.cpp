#include "ops/conv/conv_params.h"

#include <algorithm>

#include "ops/common/op_util.h"

namespace kestrel {

namespace {

// Input channels implied by weight_data_size = num_output * kernel size * inch/group.
// Multiplies only while the product stays <= weight_data_size, so nothing overflows.
int64_t channels_from_weight_size(const ConvParams& p)
{
    check(p.weight_data_size > 0, "weight_data_size (param 6) must be > 0, got ", p.weight_data_size);
    int64_t per_input = p.num_output;
    for (int64_t k : p.window.kernel) {
        check(per_input <= p.weight_data_size / k, "weight_data_size (param 6) ", p.weight_data_size,
              " is smaller than num_output * kernel size");
        per_input *= k;
    }
    check(p.weight_data_size % per_input == 0, "weight_data_size (param 6) ", p.weight_data_size,
          " is not a multiple of num_output * kernel size = ", per_input);
    return p.weight_data_size / per_input * p.group;
}

bool any_explicit_pad(const window::NcnnWindow& w)
{
    return std::any_of(w.pads.begin(), w.pads.end(), [](const window::Span& s) { return s.begin > 0 || s.end > 0; });
}

} // namespace

ConvParams ConvParams::read(const ParamDict& pd, int rank, bool depthwise, int dynamic_id)
{
    ConvParams p;
    const int dyn = pd.get_int(dynamic_id, 0);
    check(dyn == 0 || dyn == 1, "dynamic_weight (param ", dynamic_id, ") must be 0 or 1, got ", dyn);
    p.dynamic = dyn == 1;
    p.num_output = pd.get_int(0, 0);
    // With dynamic weights the weight input gives the output channels (and the kernel).
    if (p.dynamic)
        check(p.num_output >= 0, "num_output (param 0) must be >= 0, got ", p.num_output);
    else
        check(p.num_output > 0, "num_output (param 0) must be > 0, got ", p.num_output);
    p.window = window::read_ncnn_window(pd, rank, {1, 3, 2, 4, 15}, !p.dynamic);
    p.bias_term = pd.get_int(5, 0) != 0;
    p.weight_data_size = pd.get_int(6, 0);
    p.group = depthwise ? positive_param(pd, 7, 1, "group") : 1;
    check(p.num_output % p.group == 0, "num_output ", p.num_output, " is not divisible by group ", p.group);
    p.activation = Activation::from_ncnn(pd.get_int(9, 0), pd.get_floats(10));
    if (!p.dynamic) p.in_channels = channels_from_weight_size(p);
    return p;
}

DeconvOutputParams DeconvOutputParams::read(const ParamDict& pd, int rank, const window::NcnnWindow& w)
{
    DeconvOutputParams o;
    const int size_id = rank <= 2 ? 20 : 25; // ncnn's ids for axis w; h and d follow
    const int pad_w = pd.get_int(18, 0);
    const int size_w = pd.get_int(size_id, 0);
    for (int i = rank - 1; i >= 0; --i) { // ncnn axis i (w, h, d)
        const int pad = i == 0 ? pad_w : pd.get_int(18 + i, pad_w);
        const int size = i == 0 ? size_w : pd.get_int(size_id + i, size_w);
        check(pad >= 0, "output_pad (param ", 18 + i, ") must be >= 0, got ", pad);
        check(size >= 0, "output size (param ", size_id + i, ") must be >= 0, got ", size);
        o.pad.push_back(pad);
        o.size.push_back(size);
    }
    const bool sized = std::all_of(o.size.begin(), o.size.end(), [](int64_t v) { return v > 0; });
    // ncnn cuts to the output size only with SAME pads; with zero pads it produces no output at all.
    check(!sized || w.same != 0 || any_explicit_pad(w),
          "an output size (params 20/21 or 25/26/27) needs pads -233 or -234");
    o.cut_to_size = sized && !any_explicit_pad(w);
    return o;
}

int64_t ConvWeights::bytes() const
{
    return static_cast<int64_t>((weight.defined() ? weight.nbytes() : 0) + (bias.defined() ? bias.nbytes() : 0));
}

const float* ConvWeights::weight_data(const ConvParams& p, const std::vector<Tensor>& in) const
{
    return p.dynamic ? in[1].data<float>() : weight.data<float>();
}

const float* ConvWeights::bias_data(const ConvParams& p, const std::vector<Tensor>& in) const
{
    if (p.dynamic) return p.bias_term ? in[2].data<float>() : nullptr;
    return bias.defined() ? bias.data<float>() : nullptr;
}

ConvWeights load_conv_weights(WeightReader& wr, const ConvParams& p)
{
    ConvWeights w;
    if (p.dynamic) return w;
    w.weight = wr.load(p.weight_data_size, WeightEncoding::Tagged);
    if (p.bias_term) w.bias = wr.load(p.num_output, WeightEncoding::Raw);
    return w;
}

ConvWeights load_f32_conv_weights(WeightReader& wr, const ConvParams& p, const std::string& layer_type)
{
    ConvWeights w = load_conv_weights(wr, p);
    check(p.dynamic || w.weight.dtype() == DType::F32, "int8 weights are not supported by ", layer_type);
    return w;
}

ConvKernel conv_kernel_for_input(const ConvParams& p, const std::vector<TensorDesc>& in, int rank, bool transposed)
{
    const Shape& s = in[0].shape;
    if (rank == 2)
        check(s.size() == 3, "expects a (c,h,w) input, got ", shape_str(s));
    else
        check(static_cast<int>(s.size()) == rank + 1, "expects a (channels, ", rank, " spatial dims) input, got ",
              shape_str(s));
    const ConvKernel k = conv_kernel(p, in, rank, transposed);
    check(s[0] == k.inch, "expects ", k.inch, " input channels (",
          p.dynamic ? "from the weight input" : "from weight_data_size", "), got ", s[0]);
    return k;
}

ConvKernel conv_kernel(const ConvParams& p, const std::vector<Tensor>& in, int rank, bool transposed)
{
    std::vector<TensorDesc> descs;
    for (const Tensor& t : in) descs.emplace_back(t.shape(), t.dtype());
    return conv_kernel(p, descs, rank, transposed);
}

ConvKernel conv_kernel(const ConvParams& p, const std::vector<TensorDesc>& in, int rank, bool transposed)
{
    ConvKernel k;
    if (!p.dynamic) {
        k.outch = p.num_output, k.inch = p.in_channels, k.kernel = p.window.kernel;
        return k;
    }
    const TensorDesc& w = in[1];
    check(w.dtype == DType::F32, "the weight input must be float32, got ", dtype_name(w.dtype));
    const size_t want = static_cast<size_t>(rank) + 2;
    Shape ws = w.shape;
    if (rank == 2 && ws.size() == 3) ws.insert(ws.begin() + 1, 1); // ncnn's (outch, kh, kw)
    check(ws.size() == want, "the weight input must have rank ", want, rank == 2 ? " (or 3)" : "", ", got ",
          shape_str(w.shape));
    for (int64_t d : ws) check(d > 0, "the weight input ", shape_str(w.shape), " must not be empty");
    k.kernel.assign(ws.begin() + 2, ws.end());
    k.outch = transposed ? ws[1] * p.group : ws[0];
    k.inch = transposed ? ws[0] : ws[1] * p.group;
    check(k.outch % p.group == 0 && k.inch % p.group == 0, "the weight input's channels ", shape_str(w.shape),
          " do not fit group ", p.group);
    for (size_t i = 0; i < k.kernel.size(); ++i)
        check(p.window.kernel[i] == 0 || p.window.kernel[i] == k.kernel[i], "the weight input's kernel ",
              shape_str(w.shape), " differs from the kernel params");
    if (p.bias_term) {
        const TensorDesc& b = in[2];
        check(b.dtype == DType::F32, "the bias input must be float32, got ", dtype_name(b.dtype));
        check(shape_numel(b.shape) == k.outch, "the bias input has ", shape_numel(b.shape), " values, expected ",
              k.outch, " (output channels)");
    }
    return k;
}

ConvAxis conv_axis(const ConvParams& p, size_t i, int64_t in, int64_t kernel)
{
    ConvAxis c;
    window::Axis& a = c.axis;
    a.kernel = kernel, a.stride = p.window.stride[i], a.dilation = p.window.dilation[i];
    const window::Span pads = p.window.same != 0
                                  ? window::same_pads(in, a.stride, a.extent(), p.window.same == window::kSameUpper)
                                  : p.window.pads[i];
    a.pad_begin = pads.begin;
    c.pad_end = pads.end;
    const int64_t padded = in + pads.begin + pads.end;
    a.out = window::window_count(padded, a.extent(), a.stride);
    check(a.out > 0, "kernel extent ", a.extent(), " (kernel ", kernel, ", dilation ", a.dilation,
          ") does not fit the padded input size ", padded);
    return c;
}

DeconvAxis deconv_axis(const ConvParams& p, const DeconvOutputParams& o, size_t i, int64_t in, int64_t kernel)
{
    DeconvAxis d;
    window::Axis& a = d.axis;
    a.kernel = kernel, a.stride = p.window.stride[i], a.dilation = p.window.dilation[i];
    d.full = (in - 1) * a.stride + a.extent() + o.pad[i];
    if (o.cut_to_size) {
        const int64_t cut = d.full - o.size[i];
        check(cut >= 0, "output size ", o.size[i], " exceeds the full deconvolution output ", d.full);
        a.pad_begin = p.window.same == window::kSameUpper ? cut / 2 : cut - cut / 2;
        a.out = o.size[i];
        return d;
    }
    // SAME pads without an output size keep the full output.
    const window::Span pads = p.window.same != 0 ? window::Span{} : p.window.pads[i];
    a.pad_begin = pads.begin;
    a.out = d.full - pads.begin - pads.end;
    check(a.out > 0, "the output is empty: full size ", d.full, " minus pads ", pads.begin, "+", pads.end);
    return d;
}

} // namespace kestrel
