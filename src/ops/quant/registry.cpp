// The quant family. Quantization: ncnn's Quantize/Dequantize/Requantize and the int8
// conventions (int8.h) its int8 layers share; ONNX's QuantizeLinear,
// DequantizeLinear and DynamicQuantizeLinear.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_quantize();
std::unique_ptr<Op> make_dequantize();
std::unique_ptr<Op> make_requantize();
std::unique_ptr<Op> make_nd_quantize_linear();
std::unique_ptr<Op> make_nd_dequantize_linear();
std::unique_ptr<Op> make_nd_dynamic_quantize_linear();

std::vector<BuiltinOp> quant_family()
{
    return {
        {"Quantize", make_quantize},
        {"Dequantize", make_dequantize},
        {"Requantize", make_requantize},
        {"QuantizeLinear", make_nd_quantize_linear},
        {"DequantizeLinear", make_nd_dequantize_linear},
        {"DynamicQuantizeLinear", make_nd_dynamic_quantize_linear},
    };
}

} // namespace kestrel
