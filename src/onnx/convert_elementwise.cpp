#include "onnx/converter.h"

namespace kestrel::onnx_import {

std::vector<ConverterEntry> elementwise_converters()
{
    return {};
}

} // namespace kestrel::onnx_import
