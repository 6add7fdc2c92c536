// The `kestrel._kestrel` extension module; the `kestrel` package (python/kestrel)
// builds its ONNX Runtime-shaped InferenceSession on top of it.
#include <pybind11/pybind11.h>

#include "arrays.h"
#include "bind_image.h"
#include "bind_net.h"
#include "bind_quantize.h"
#include "kestrel/error.h"
#ifdef KESTREL_HAVE_ONNX
#include "kestrel/onnx.h"
#endif
#include "python_op.h"

PYBIND11_MODULE(_kestrel, m)
{
    namespace py = pybind11;
    m.doc() = "Kestrel, a neural-network inference engine: the C++ bindings";
    // kestrel.Error for every failure the engine reports (file, line, layer and reason in the message).
    py::register_exception<kestrel::Error>(m, "Error", PyExc_RuntimeError);
#ifdef KESTREL_HAVE_ONNX
    m.attr("has_onnx") = true;
    kestrel::register_onnx_loader(); // Net.load and InferenceSession read ONNX files

#else
    m.attr("has_onnx") = false;
#endif
    kestrel::python::bind_arrays(m);
    kestrel::python::bind_python_ops(m);
    kestrel::python::bind_net(m);
    kestrel::python::bind_image(m);
    kestrel::python::bind_quantize(m);
}
