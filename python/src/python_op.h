// Layer types written in Python: kestrel.register_op(type, cls).
#pragma once
#include <pybind11/pybind11.h>

namespace kestrel::python {

void bind_python_ops(pybind11::module_& m);

} // namespace kestrel::python
