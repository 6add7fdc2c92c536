// kestrel.calibrate and kestrel.quantize: post-training int8 quantization
// (kestrel/quantize.h) from Python.
#pragma once
#include <pybind11/pybind11.h>

namespace kestrel::python {

void bind_quantize(pybind11::module_& m);

} // namespace kestrel::python
