// Convolution and ConvolutionDepthWise (2-D, float32, static weights) on the
// GPU (shaders/conv2d.comp): the params as the CPU layer reads them
// (ops/conv/conv_params.h: explicit or SAME pads, dilation, groups, the fused
// activation and residual), the weights from the layer as loaded. int8
// layers, dynamic weights, and weights the graph has released stay on the CPU.
#include "backend/vulkan/gpu_kernel.h"
#include "ops/conv/conv_params.h"

namespace kestrel::vulkan {

namespace {

struct PushGeometry {
    int32_t in_c, in_h, in_w, out_c, out_h, out_w;
    int32_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
    int32_t group, has_bias, has_residual, activation;
    float act_a, act_b, pad_value;
};
static_assert(sizeof(PushGeometry) <= 128, "push constants stay within Vulkan's guaranteed 128 bytes");

// Weights (out_c, in_per_group, taps) as vec4 over blocks of 4 output
// channels (shaders/conv2d_tiled.comp), zeros past out_c.
Tensor packed_in_blocks(const Tensor& weight, int64_t out_c, int64_t in_per_group, int64_t taps)
{
    const int64_t blocks = (out_c + 3) / 4, rows = in_per_group * taps;
    Tensor packed({blocks * rows * 4}, DType::F32);
    float* dst = packed.data<float>();
    const float* src = weight.data<float>();
    for (int64_t b = 0; b < blocks; ++b)
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < 4; ++j) {
                const int64_t oc = b * 4 + j;
                dst[(b * rows + r) * 4 + j] = oc < out_c ? src[oc * rows + r] : 0.f;
            }
    return packed;
}

class ConvKernel2d final : public GpuKernel {
public:
    ConvKernel2d(std::shared_ptr<Device> device, const PushGeometry& g, const Tensor& weight, const Tensor& bias)
        : device_(std::move(device)), g_(g)
    {
        x_ = device_->buffer(int64_t{g.in_c} * g.in_h * g.in_w * 4);
        y_ = device_->buffer(int64_t{g.out_c} * g.out_h * g.out_w * 4);
        residual_ = device_->buffer(g.has_residual ? y_->bytes() : 4);
        // Tiles of 4 output channels when each block of 4 stays within a group.
        const int64_t out_per_group = g.out_c / g.group;
        tiled_ = g.group == 1 || out_per_group % 4 == 0;
        const Tensor w = tiled_ ? packed_in_blocks(weight, g.out_c, g.in_c / g.group, int64_t{g.kernel_h} * g.kernel_w)
                                : weight;
        w_ = device_->buffer(w.nbytes());
        upload(w, *w_);
        bias_ = device_->buffer(bias.defined() ? bias.nbytes() : 4);
        if (bias.defined()) upload(bias, *bias_);
        input_buffer(0, x_.get());
        if (g.has_residual) input_buffer(1, residual_.get());
        output_buffer(0, y_.get());
    }
    void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) override
    {
        upload_inputs(in);
        const std::vector<const Buffer*> buffers = {x_.get(), w_.get(), bias_.get(), residual_.get(), y_.get()};
        if (tiled_)
            last_ms_ = device_->dispatch_items(std::string("conv2d_tiled") + variant_, buffers, &g_, sizeof g_,
                                    uint64_t((g_.out_c + 3) / 4) * g_.out_h * ((g_.out_w + 3) / 4), 64);
        else
            last_ms_ = device_->dispatch_items(std::string("conv2d") + variant_, buffers, &g_, sizeof g_,
                                               uint64_t(g_.out_c) * g_.out_h * g_.out_w);
        download_outputs(out);
    }
    bool store_fp16() override
    {
        variant_ = "_fp16";
        return fp16_ = true;
    }

private:
    std::shared_ptr<Device> device_;
    PushGeometry g_;
    const char* variant_ = ""; // or "_fp16": the shaders' float16-storage variants
    bool tiled_ = false;
    std::unique_ptr<Buffer> x_, w_, bias_, residual_, y_;
};

bool fits_int32(int64_t v) { return v >= 0 && v < (int64_t{1} << 31); }

} // namespace

std::unique_ptr<DeviceKernel> make_convolution_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                      const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    const ParamDict& pd = l.params;
    const bool depthwise = l.type == "ConvolutionDepthWise";
    const bool residual = pd.get_int(kResidualParam, 0) == 1;
    if (pd.get_int(8, 0) != 0 || pd.get_int(19, 0) != 0 || pd.get_int(25, 0) != 0 || in.empty() || out.size() != 1)
        return nullptr;
    const ConvParams p = ConvParams::read(pd, 2, depthwise, 19);
    if (in.size() != 1u + (residual ? 1u : 0u) || in[0].shape.size() != 3 || out[0].shape.size() != 3) return nullptr;
    for (const TensorDesc& d : in)
        if (d.dtype != DType::F32) return nullptr;
    if (out[0].dtype != DType::F32) return nullptr;
    // The weights as loaded: released ones (lightmode) leave the layer on the CPU.
    if (l.weights.empty() || l.weights[0].value.dtype() != DType::F32 || l.weights[0].value.numel() != p.weight_data_size)
        return nullptr;
    if (p.bias_term && (l.weights.size() < 2 || l.weights[1].value.numel() != p.num_output)) return nullptr;
    const ConvKernel k = conv_kernel_for_input(p, in, 2, false);
    const ConvAxis rows = conv_axis(p, 0, in[0].shape[1], k.kernel[0]), cols = conv_axis(p, 1, in[0].shape[2], k.kernel[1]);
    for (int64_t v : {shape_numel(in[0].shape), shape_numel(out[0].shape), p.weight_data_size})
        if (!fits_int32(v)) return nullptr;
    PushGeometry g{};
    g.in_c = static_cast<int32_t>(in[0].shape[0]);
    g.in_h = static_cast<int32_t>(in[0].shape[1]);
    g.in_w = static_cast<int32_t>(in[0].shape[2]);
    g.out_c = static_cast<int32_t>(out[0].shape[0]);
    g.out_h = static_cast<int32_t>(out[0].shape[1]);
    g.out_w = static_cast<int32_t>(out[0].shape[2]);
    g.kernel_h = static_cast<int32_t>(rows.axis.kernel), g.kernel_w = static_cast<int32_t>(cols.axis.kernel);
    g.stride_h = static_cast<int32_t>(rows.axis.stride), g.stride_w = static_cast<int32_t>(cols.axis.stride);
    g.dilation_h = static_cast<int32_t>(rows.axis.dilation), g.dilation_w = static_cast<int32_t>(cols.axis.dilation);
    g.pad_top = static_cast<int32_t>(rows.axis.pad_begin), g.pad_left = static_cast<int32_t>(cols.axis.pad_begin);
    g.group = p.group;
    g.has_bias = p.bias_term ? 1 : 0;
    g.has_residual = residual ? 1 : 0;
    g.activation = p.activation.type;
    g.act_a = p.activation.a, g.act_b = p.activation.b;
    g.pad_value = pd.get_float(18, 0.f);
    if (g.out_h != rows.axis.out || g.out_w != cols.axis.out || g.out_c != p.num_output) return nullptr;
    return std::make_unique<ConvKernel2d>(device, g, l.weights[0].value, p.bias_term ? l.weights[1].value : Tensor());
}

} // namespace kestrel::vulkan
