// The quant family. Quantization: Quantize and Dequantize (ncnn's form, or
// ONNX's QuantizeLinear / DequantizeLinear with 20=1), ncnn's Requantize,
// ONNX's DynamicQuantizeLinear; their per-channel values and blocks
// (channel_values.h) and the int8 conventions ncnn's int8 layers share (int8.h).
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_quantize();
std::unique_ptr<Op> make_dequantize();
std::unique_ptr<Op> make_requantize();
std::unique_ptr<Op> make_dynamic_quantize_linear();

std::vector<BuiltinOp> quant_family()
{
    return {
        {"Quantize", make_quantize},
        {"Dequantize", make_dequantize},
        {"Requantize", make_requantize},
        {"DynamicQuantizeLinear", make_dynamic_quantize_linear},
    };
}

} // namespace kestrel
