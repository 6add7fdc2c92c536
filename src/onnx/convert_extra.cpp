#include "onnx/converter.h"

namespace kestrel::onnx_import {

std::vector<ConverterEntry> extra_converters()
{
    return {};
}

} // namespace kestrel::onnx_import
