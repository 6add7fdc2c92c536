// InnerProduct (float32, weights as loaded) on the GPU (shaders/inner_product.comp):
// the input flattened to num_input, or a 2-D (rows, num_input) input row by
// row, as the CPU layer takes it; the fused activation. int8 layers and ONNX's
// quantized form stay on the CPU.
#include "backend/vulkan/gpu_kernel.h"
#include "ops/activation/activation.h"

namespace kestrel::vulkan {

namespace {

struct PushShape {
    int32_t rows, num_input, num_output, has_bias, activation;
    float act_a, act_b;
};

} // namespace

std::unique_ptr<DeviceKernel> make_inner_product_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                        const std::vector<TensorDesc>& in,
                                                        const std::vector<TensorDesc>& out)
{
    const ParamDict& pd = l.params;
    const int num_output = pd.get_int(0, 0), weight_size = pd.get_int(2, 0);
    const bool bias = pd.get_int(1, 0) != 0;
    if (pd.get_int(8, 0) != 0 || pd.get_int(25, 0) != 0 || num_output <= 0 || weight_size % num_output != 0) return nullptr;
    if (in.size() != 1 || out.size() != 1 || in[0].dtype != DType::F32 || out[0].dtype != DType::F32) return nullptr;
    if (l.weights.empty() || l.weights[0].value.dtype() != DType::F32 || l.weights[0].value.numel() != weight_size) return nullptr;
    if (bias && (l.weights.size() < 2 || l.weights[1].value.numel() != num_output)) return nullptr;
    const int64_t num_input = weight_size / num_output;
    const int64_t rows = in[0].shape.size() == 2 ? in[0].shape[0] : 1;
    if (rows * num_input != shape_numel(in[0].shape) || rows * num_output != shape_numel(out[0].shape)) return nullptr;
    if (rows * std::max<int64_t>(num_input, num_output) >= (int64_t{1} << 31)) return nullptr;
    const Activation act = Activation::from_ncnn(pd.get_int(9, 0), pd.get_floats(10));
    const PushShape s{static_cast<int32_t>(rows), static_cast<int32_t>(num_input), num_output, bias ? 1 : 0, act.type,
                      act.a, act.b};
    return std::make_unique<MapKernel<PushShape>>(device, "inner_product", s, rows * num_input, rows * num_output,
                                                  uint64_t(rows * num_output), 64,
                                                  std::vector<Tensor>{l.weights[0].value, bias ? l.weights[1].value : Tensor()});
}

} // namespace kestrel::vulkan
