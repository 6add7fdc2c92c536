// Deconvolution and DeconvolutionDepthWise (2-D, float32, static weights) on
// the GPU (shaders/deconv2d.comp), one output value per invocation gathering
// the input positions that scatter onto it, over the geometry the CPU layer
// computes (ops/conv/conv_params.h: output pads, cuts to a size, SAME), with
// groups, bias and the fused activation. Dynamic weights stay on the CPU.
#include "backend/vulkan/gpu_kernel.h"
#include "ops/conv/conv_params.h"

namespace kestrel::vulkan {

namespace {

struct PushGeometry {
    int32_t in_c, in_h, in_w, out_c, out_h, out_w;
    int32_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
    int32_t group, has_bias, activation;
    float act_a, act_b;
};

int32_t narrow(int64_t v) { return static_cast<int32_t>(v); }

} // namespace

std::unique_ptr<DeviceKernel> make_deconvolution_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                        const std::vector<TensorDesc>& in,
                                                        const std::vector<TensorDesc>& out)
{
    const ParamDict& pd = l.params;
    if (pd.get_int(8, 0) != 0 || pd.get_int(28, 0) != 0 || in.size() != 1 || out.size() != 1) return nullptr;
    if (in[0].dtype != DType::F32 || out[0].dtype != DType::F32 || in[0].shape.size() != 3) return nullptr;
    const ConvParams p = ConvParams::read(pd, 2, l.type == "DeconvolutionDepthWise", 28);
    const DeconvOutputParams o = DeconvOutputParams::read(pd, 2, p.window);
    if (l.weights.empty() || l.weights[0].value.dtype() != DType::F32 || l.weights[0].value.numel() != p.weight_data_size)
        return nullptr;
    if (p.bias_term && (l.weights.size() < 2 || l.weights[1].value.numel() != p.num_output)) return nullptr;
    const ConvKernel k = conv_kernel_for_input(p, in, 2, true);
    const DeconvAxis rows = deconv_axis(p, o, 0, in[0].shape[1], k.kernel[0]);
    const DeconvAxis cols = deconv_axis(p, o, 1, in[0].shape[2], k.kernel[1]);
    const Shape want = {k.outch, rows.axis.out, cols.axis.out};
    if (out[0].shape != want) return nullptr;
    for (int64_t v : {shape_numel(in[0].shape), shape_numel(want), p.weight_data_size})
        if (v >= (int64_t{1} << 31)) return nullptr;
    PushGeometry g{};
    g.in_c = narrow(in[0].shape[0]), g.in_h = narrow(in[0].shape[1]), g.in_w = narrow(in[0].shape[2]);
    g.out_c = narrow(want[0]), g.out_h = narrow(want[1]), g.out_w = narrow(want[2]);
    g.kernel_h = narrow(rows.axis.kernel), g.kernel_w = narrow(cols.axis.kernel);
    g.stride_h = narrow(rows.axis.stride), g.stride_w = narrow(cols.axis.stride);
    g.dilation_h = narrow(rows.axis.dilation), g.dilation_w = narrow(cols.axis.dilation);
    g.pad_top = narrow(rows.axis.pad_begin), g.pad_left = narrow(cols.axis.pad_begin);
    g.group = p.group, g.has_bias = p.bias_term ? 1 : 0;
    g.activation = p.activation.type, g.act_a = p.activation.a, g.act_b = p.activation.b;
    const int64_t outputs = shape_numel(want);
    return std::make_unique<MapKernel<PushGeometry>>(
        device, "deconv2d", g, shape_numel(in[0].shape), outputs, uint64_t(outputs), 256,
        std::vector<Tensor>{l.weights[0].value, p.bias_term ? l.weights[1].value : Tensor()});
}

} // namespace kestrel::vulkan
