// NumPy arrays <-> kestrel::Tensor for the Python module.
// Out: an array views the tensor's storage (no copy) and keeps it alive.
// In: an array whose memory Kestrel allocated (a result, or kestrel.empty) is
// used in place; any other array is copied once into aligned storage, because
// kernels may read up to kTensorOverread bytes past a buffer's end.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "kestrel/tensor.h"

namespace kestrel::python {

namespace py = pybind11;

// The Python object that owns a tensor's storage on behalf of arrays viewing it.
struct TensorStorage {
    Tensor tensor;
};

py::dtype numpy_dtype(DType dtype);
// Throws kestrel::Error for a NumPy dtype Kestrel has no counterpart of.
DType kestrel_dtype(const py::dtype& dtype);

// A writable array over the tensor's storage (`read_only`: a view the caller
// must not write, such as a layer's input seen from a callback).
py::array array_from_tensor(const Tensor& tensor, bool read_only = false);
Tensor tensor_from_array(const py::array& array);
// For functions that read exactly their input's elements (the image
// functions): a C-ordered array is viewed in place, anything else copied.
// The array must outlive the view.
Tensor tensor_view_of_array(const py::array& array);
Shape shape_from(const py::handle& sequence);
py::tuple shape_tuple(const Shape& shape);

void bind_arrays(py::module_& m);

} // namespace kestrel::python
