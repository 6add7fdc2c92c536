// A layer type written in Python is a class:
//   cls(params)              -> the layer (params: kestrel.ParamDict, ncnn's id=value pairs)
//   layer.load_model(reader) -> optional: reader.load(count) gives its weights in .bin order
//   layer.infer(inputs)      -> one output shape, or (shape, dtype), per output;
//                               inputs: a list of (shape, dtype) pairs
//   layer.forward(inputs)    -> the outputs as arrays (one array for one output);
//                               inputs: read-only arrays valid during the call
// PythonOp adapts it to kestrel::Op. Every call into Python holds the GIL, so
// sessions on several threads may share the layer.
#include "python_op.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <exception>

#include "arrays.h"
#include "kestrel/op.h"

namespace kestrel::python {

namespace py = pybind11;

namespace {

// Runs `call` with the GIL held; a Python exception becomes a kestrel::Error
// (so the runtime adds the layer's name and the file) with Python's message.
template <class Call> auto call_python(const Op& op, const char* method, const Call& call)
{
    py::gil_scoped_acquire gil;
    try {
        return call();
    } catch (py::error_already_set& e) {
        // "ValueError: message", without pybind11's copy of the Python stack.
        const std::string kind = py::str(e.type().attr("__name__"));
        fail(method, " (Python layer type '", op.type, "'): ", kind, ": ", std::string(py::str(e.value())));
    } catch (const py::cast_error& e) {
        fail(method, " (Python layer type '", op.type, "'): ", e.what());
    }
}

class PythonWeightReader {
public:
    explicit PythonWeightReader(WeightReader& reader) : reader_(reader) {}
    // ncnn's tagged encoding by default (a 4-byte tag says fp32/fp16/int8), as
    // ncnn's own layers store most weights; raw=True for untagged fp32.
    py::array load(int64_t count, bool raw)
    {
        try {
            return array_from_tensor(reader_.load(count, raw ? WeightEncoding::Raw : WeightEncoding::Tagged));
        } catch (...) {
            // The reader's own exception (a bad .bin, or the runtime probing
            // which layers take weights) must reach the runtime unchanged, not as
            // a Python exception: kept here, rethrown once Python has returned.
            pending_ = std::current_exception();
            throw py::value_error("the weights could not be read");
        }
    }
    void rethrow_pending() const
    {
        if (pending_) std::rethrow_exception(pending_);
    }

private:
    WeightReader& reader_;
    std::exception_ptr pending_;
};

// One output's (shape, dtype) from what infer() returned: a shape, or a (shape, dtype) pair.
TensorDesc output_desc(const py::handle& item)
{
    const py::sequence seq = py::reinterpret_borrow<py::sequence>(item);
    const bool pair = seq.size() == 2 && py::isinstance<py::sequence>(seq[0]) && !py::isinstance<py::str>(seq[0]);
    if (pair) return TensorDesc(shape_from(seq[0]), kestrel_dtype(py::dtype::from_args(seq[1])));
    return TensorDesc(shape_from(seq), DType::F32);
}

class PythonOp : public Op {
public:
    explicit PythonOp(py::object cls) : cls_(std::move(cls)) {}
    ~PythonOp() override
    {
        py::gil_scoped_acquire gil;
        layer_ = py::object();
        cls_ = py::object();
    }

    void load_param(const ParamDict& params) override
    {
        call_python(*this, "load_param", [&] { layer_ = cls_(params); });
    }

    void load_model(WeightReader& reader) override
    {
        PythonWeightReader python_reader(reader);
        try {
            call_python(*this, "load_model", [&] {
                if (py::hasattr(layer_, "load_model"))
                    layer_.attr("load_model")(py::cast(&python_reader, py::return_value_policy::reference));
            });
        } catch (...) {
            python_reader.rethrow_pending();
            throw;
        }
        python_reader.rethrow_pending();
    }

    void infer(const std::vector<TensorDesc>& inputs, std::vector<TensorDesc>& outputs) const override
    {
        call_python(*this, "infer", [&] {
            py::list descs;
            for (const TensorDesc& d : inputs) descs.append(py::make_tuple(shape_tuple(d.shape), numpy_dtype(d.dtype)));
            const py::sequence result = layer_.attr("infer")(descs);
            check(result.size() == outputs.size(), "infer returned ", result.size(), " outputs, the layer has ",
                  outputs.size());
            for (size_t i = 0; i < outputs.size(); ++i) outputs[i] = output_desc(result[i]);
        });
    }

    void forward(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, const ExecContext&) const override
    {
        call_python(*this, "forward", [&] {
            py::list arrays;
            for (const Tensor& t : inputs) arrays.append(array_from_tensor(t, /*read_only=*/true));
            py::object result = layer_.attr("forward")(arrays);
            if (py::isinstance<py::array>(result)) result = py::make_tuple(result);
            const py::sequence seq = result;
            check(seq.size() == outputs.size(), "forward returned ", seq.size(), " arrays, the layer has ",
                  outputs.size(), " outputs");
            for (size_t i = 0; i < outputs.size(); ++i) copy_output(seq[i], outputs[i], i);
        });
    }

private:
    void copy_output(const py::handle& value, Tensor& out, size_t index) const
    {
        const py::array array = py::array::ensure(value);
        check(static_cast<bool>(array), "forward's output ", index, " is not an array");
        const Shape shape(array.shape(), array.shape() + array.ndim());
        check(shape == out.shape(), "forward's output ", index, " has shape ", shape_str(shape), ", infer said ",
              shape_str(out.shape()));
        // Cast to the dtype infer() promised, C-ordered, then one copy into the runtime's buffer.
        const py::array typed = py::module_::import("numpy").attr("ascontiguousarray")(array, numpy_dtype(out.dtype()));
        if (out.nbytes() > 0) std::memcpy(out.raw(), typed.data(), out.nbytes());
    }

    py::object cls_;
    py::object layer_;
};

} // namespace

void bind_python_ops(py::module_& m)
{
    py::class_<ParamDict>(m, "ParamDict", "A layer's params: ncnn's id=value pairs, ids 0..31")
        .def(py::init<>())
        .def("has", &ParamDict::has, py::arg("id"))
        .def("get_int", &ParamDict::get_int, py::arg("id"), py::arg("default") = 0)
        .def("get_float", &ParamDict::get_float, py::arg("id"), py::arg("default") = 0.0f)
        .def("get_ints", &ParamDict::get_ints, py::arg("id"))
        .def("get_floats", &ParamDict::get_floats, py::arg("id"))
        .def("get_string", &ParamDict::get_string, py::arg("id"), py::arg("default") = "")
        .def("set_int", &ParamDict::set_int, py::arg("id"), py::arg("value"))
        .def("set_float", &ParamDict::set_float, py::arg("id"), py::arg("value"))
        .def("set_ints", &ParamDict::set_ints, py::arg("id"), py::arg("values"))
        .def("set_floats", &ParamDict::set_floats, py::arg("id"), py::arg("values"))
        .def("set_string", &ParamDict::set_string, py::arg("id"), py::arg("value"))
        .def("ids", &ParamDict::ids)
        .def("__repr__", [](const ParamDict& p) { return "ParamDict(" + p.to_text() + ")"; });

    py::class_<PythonWeightReader>(m, "WeightReader", "A Python layer's weights, in the .bin's order")
        .def("load", &PythonWeightReader::load, py::arg("count"), py::arg("raw") = false,
             "The next `count` weights as float32 (int8 when the .bin stores them so): ncnn's tagged "
             "encoding, or raw=True for untagged float32");

    m.def(
        "register_op",
        [](const std::string& type, const py::object& cls) {
            check(!type.empty(), "register_op: the layer type is empty");
            check(PyCallable_Check(cls.ptr()), "register_op('", type, "'): expected a class (a callable)");
            // The registry outlives the interpreter: it holds the class by a
            // reference that is never released, so that no Python object is
            // touched after Python has shut down.
            PyObject* raw = cls.inc_ref().ptr();
            register_op(type, [raw] {
                py::gil_scoped_acquire gil;
                return std::make_unique<PythonOp>(py::reinterpret_borrow<py::object>(raw));
            });
        },
        py::arg("type"), py::arg("cls"),
        "Makes layer type `type` (a class: cls(params), infer(inputs), forward(inputs), optionally "
        "load_model(reader)) available to nets loaded afterwards; a built-in type of that name is replaced.");
}

} // namespace kestrel::python
