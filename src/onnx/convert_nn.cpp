#include "onnx/converter.h"

namespace kestrel::onnx_import {

std::vector<ConverterEntry> nn_converters()
{
    return {};
}

} // namespace kestrel::onnx_import
