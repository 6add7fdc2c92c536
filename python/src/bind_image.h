// kestrel.image's C++ side: pixel formats, camera frames, resizing, geometry.
#pragma once
#include <pybind11/pybind11.h>

namespace kestrel::python {

void bind_image(pybind11::module_& m);

} // namespace kestrel::python
