// Net, Session, per-layer callbacks and conversion for the Python module.
#pragma once
#include <pybind11/pybind11.h>

namespace kestrel::python {

void bind_net(pybind11::module_& m);

} // namespace kestrel::python
