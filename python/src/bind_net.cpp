// ncnn's shape for Python: a Net loads a model, a Session (ncnn's Extractor)
// sets inputs and gets any blob. Runs release the GIL; callbacks and Python
// layers take it back.
#include "bind_net.h"

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <map>
#include <memory>

#include "arrays.h"
#include "graph/graph.h"
#include "kestrel/model_file.h"
#include "kestrel/net.h"
#include "kestrel/tflite.h"
#include "runtime/analysis.h"
#ifdef KESTREL_HAVE_ONNX
#include "kestrel/onnx.h"
#endif

namespace kestrel::python {

namespace py = pybind11;

namespace {

// What a per-layer callback sees. Its tensors are the session's own buffers:
// valid only during the callback, so `inputs`/`outputs` hand out copies and
// refuse to once the callback has returned.
struct LayerEvent {
    std::string layer_name, layer_type;
    const std::vector<Tensor>* inputs = nullptr;
    const std::vector<Tensor>* outputs = nullptr;

    py::list copies(const std::vector<Tensor>* tensors) const
    {
        check(tensors != nullptr, "a LayerEvent's tensors are readable only during its callback");
        py::list arrays;
        for (const Tensor& t : *tensors) arrays.append(array_from_tensor(t.clone()));
        return arrays;
    }
};

OpCallback python_callback(const py::object& fn)
{
    if (fn.is_none()) return nullptr;
    return [fn](const OpEvent& e) {
        py::gil_scoped_acquire gil;
        auto event = std::make_shared<LayerEvent>(LayerEvent{e.layer_name, e.layer_type, &e.inputs, &e.outputs});
        py::object handle = py::cast(event);
        // Invalidate even when the callback raises (the exception ends the run).
        struct Expire {
            LayerEvent& event;
            ~Expire() { event.inputs = event.outputs = nullptr; }
        } expire{*event};
        fn(handle);
    };
}

// A Session keeps its Net (and the arrays it was given) alive.
class PySession {
public:
    PySession(py::object net, const Options& options)
        : net_(std::move(net)), session_(net_.cast<const Net&>(), options)
    {
    }

    void set_input(const std::string& name, const py::array& array)
    {
        Tensor t = tensor_from_array(array);
        session_.set_input(name, t);
    }

    py::array get(const std::string& name)
    {
        Tensor t;
        {
            py::gil_scoped_release release;
            t = session_.get(name);
        }
        return array_from_tensor(t);
    }

    py::list run(const std::vector<std::string>& names)
    {
        std::vector<Tensor> results;
        {
            py::gil_scoped_release release;
            results = session_.run(names);
        }
        py::list arrays;
        for (const Tensor& t : results) arrays.append(array_from_tensor(t));
        return arrays;
    }

    void set_callbacks(const py::object& before, const py::object& after)
    {
        session_.set_callbacks(python_callback(before), python_callback(after));
    }

    int64_t peak_bytes() const { return session_.peak_bytes(); }

private:
    py::object net_;
    Session session_;
};

Options make_options(int threads, bool reuse_memory, bool blocked_layouts, const std::string& precision)
{
    Options options;
    options.threads = threads;
    options.reuse_memory = reuse_memory;
    options.blocked_layouts = blocked_layouts;
    if (precision == "bf16")
        options.precision = Options::Precision::BF16;
    else if (precision != "fp32")
        throw py::value_error("precision must be 'fp32' or 'bf16', got '" + precision + "'");
    return options;
}

py::object optional_shape(const Shape& shape)
{
    if (shape.empty()) return py::none();
    py::list dims;
    for (int64_t d : shape) dims.append(d < 0 ? py::object(py::none()) : py::object(py::int_(d)));
    return py::tuple(dims);
}

// The graph outputs' (shape, dtype) for inputs of these shapes (and their
// declared dtypes), by shape inference alone.
py::dict infer_outputs(const Net& net, const std::map<std::string, std::vector<int64_t>>& shapes)
{
    std::map<std::string, TensorDesc> inputs;
    for (const auto& kv : shapes) inputs[kv.first] = TensorDesc(kv.second, net.input_dtype(kv.first));
    const ModelReport report = analyze_model(net, inputs);
    const Graph& g = net.graph();
    const std::vector<std::string> outputs = net.output_names();
    py::dict result;
    for (const LayerReport& l : report.layers) {
        const std::vector<int>& tops = g.layers[l.layer].tops;
        for (size_t i = 0; i < tops.size() && i < l.outputs.size(); ++i) {
            const std::string& name = g.blobs[tops[i]].name;
            if (std::find(outputs.begin(), outputs.end(), name) != outputs.end())
                result[py::str(name)] = py::make_tuple(shape_tuple(l.outputs[i].shape), numpy_dtype(l.outputs[i].dtype));
        }
    }
    return result;
}

// Net methods that read files or weights release the GIL (a Python layer's
// load_param takes it back).
template <class... Args> auto unlocked(void (Net::*method)(Args...))
{
    return [method](Net& net, Args... args) {
        py::gil_scoped_release release;
        (net.*method)(args...);
    };
}

} // namespace

void bind_net(py::module_& m)
{
    py::class_<LayerEvent, std::shared_ptr<LayerEvent>>(m, "LayerEvent", "What a per-layer callback sees")
        .def_readonly("layer_name", &LayerEvent::layer_name)
        .def_readonly("layer_type", &LayerEvent::layer_type)
        .def_property_readonly("inputs", [](const LayerEvent& e) { return e.copies(e.inputs); })
        .def_property_readonly("outputs", [](const LayerEvent& e) { return e.copies(e.outputs); },
                               "The layer's outputs (in the 'before' callback: not yet computed)");

    py::class_<Net>(m, "Net", "A loaded model: ncnn .param/.bin or ONNX; shareable by sessions on any threads")
        .def(py::init<>())
        .def(py::init([](bool fuse_layers, bool winograd, bool fp16_weights, bool fuse_residuals) {
                 auto net = std::make_unique<Net>();
                 LoadOptions o;
                 o.fuse_layers = fuse_layers;
                 o.winograd = winograd;
                 o.fp16_weights = fp16_weights;
                 o.fuse_residuals = fuse_residuals;
                 net->set_load_options(o);
                 return net;
             }),
             py::kw_only(), py::arg("fuse_layers") = false, py::arg("winograd") = true, py::arg("fp16_weights") = false,
             py::arg("fuse_residuals") = true,
             "fuse_layers: activations, paddings and residual sums into convolutions (same bits); "
             "winograd: 3x3 stride-1 convolutions by Winograd (results within ~1e-6 of the direct sums); "
             "fp16_weights: InnerProduct weights as half floats (as ncnn's use_fp16_storage); "
             "fuse_residuals: with fuse_layers and in ONNX imports, residual sums into convolutions (off: they "
             "stay layers, as ncnn's format and its int8 layers have them; for kestrel.quantize)")
        .def(
            "load",
            [](Net& net, const std::string& path, std::optional<std::string> weights, bool optimize,
               bool zero_weights_if_missing) {
                ModelFileOptions o;
                if (weights) o.weights = *weights;
                o.optimize = optimize;
                o.zero_weights_if_missing = zero_weights_if_missing;
                py::gil_scoped_release release;
                return load_model_file(net, path, o).weights;
            },
            py::arg("path"), py::arg("weights") = py::none(), py::arg("optimize") = true,
            py::arg("zero_weights_if_missing") = false,
            "A model of any format Kestrel reads (told from the file's content: ncnn .param/.param.bin with its "
            "weights beside it or named, ONNX, TensorFlow Lite); returns the weights file read")
        .def("load_param", unlocked<const std::string&>(&Net::load_param), py::arg("path"))
        .def("load_param_bin", unlocked<const std::string&>(&Net::load_param_bin), py::arg("path"))
        .def(
            "load_param_mem", [](Net& net, const std::string& text) { net.load_param_mem(text); }, py::arg("text"))
        .def("load_model", unlocked<const std::string&>(&Net::load_model), py::arg("path"))
        .def(
            "load_model_mem",
            [](Net& net, const py::bytes& data) {
                const std::string bytes = data;
                py::gil_scoped_release release;
                net.load_model_mem(bytes.data(), bytes.size());
            },
            py::arg("data"))
        .def("load_model_zeros", &Net::load_model_zeros, "Every weight zero (timing a structure without weights)")
        .def(
            "load_tflite_bytes",
            [](Net& net, const py::bytes& data, bool optimize) {
                const std::string bytes = data;
                py::gil_scoped_release release;
                TfliteImportOptions o;
                o.optimize = optimize;
                load_tflite_mem(net, bytes.data(), bytes.size(), "<bytes>", o);
            },
            py::arg("data"), py::arg("optimize") = true,
            "A TensorFlow Lite model (.tflite flatbuffer) from memory; files load through load()")
#ifdef KESTREL_HAVE_ONNX
        .def(
            "load_onnx",
            [](Net& net, const std::string& path, bool optimize) {
                py::gil_scoped_release release;
                OnnxImportOptions o;
                o.optimize = optimize;
                load_onnx(net, path, o);
            },
            py::arg("path"), py::arg("optimize") = true)
#endif
        .def(
            "optimize", [](Net& net) { return net.optimize(); },
            "Graph rewrites (folding, fusions); returns one line per rewrite")
        .def("input_names", &Net::input_names)
        .def("output_names", &Net::output_names)
        .def(
            "input_shape", [](const Net& net, const std::string& name) { return optional_shape(net.input_shape(name)); },
            py::arg("name"), "The declared shape (None for a dimension that may vary), or None when not declared")
        .def(
            "input_dtype", [](const Net& net, const std::string& name) { return numpy_dtype(net.input_dtype(name)); },
            py::arg("name"))
        .def("has_blob", &Net::has_blob, py::arg("name"))
        .def("infer", &infer_outputs, py::arg("shapes"),
             "{output name: (shape, dtype)} for inputs of these shapes ({name: shape}), without running")
        .def("save_param", &Net::save_param, py::arg("path"))
        .def("save_model", &Net::save_model, py::arg("path"))
        .def("param_text", &Net::param_text)
        .def(
            "create_session",
            [](py::object self, int threads, bool reuse_memory, bool blocked_layouts, const std::string& precision) {
                return std::make_unique<PySession>(self,
                                                   make_options(threads, reuse_memory, blocked_layouts, precision));
            },
            py::arg("threads") = 1, py::arg("reuse_memory") = true, py::arg("blocked_layouts") = true,
            py::arg("precision") = "fp32",
            "A Session (ncnn's Extractor): set inputs, get any blob. blocked_layouts: activations kept in "
            "channel blocks between the layers that take them (False: every blob plain NCHW). precision 'bf16': "
            "convolutions, InnerProduct/Gemm and attention projections in bfloat16 where the CPU can");

    py::class_<PySession>(m, "Session", "One inference context of a Net: not for several threads at once")
        .def(py::init([](py::object net, int threads, bool reuse_memory, bool blocked_layouts,
                         const std::string& precision) {
                 return std::make_unique<PySession>(net,
                                                    make_options(threads, reuse_memory, blocked_layouts, precision));
             }),
             py::arg("net"), py::arg("threads") = 1, py::arg("reuse_memory") = true, py::arg("blocked_layouts") = true,
             py::arg("precision") = "fp32")
        .def("set_input", &PySession::set_input, py::arg("name"), py::arg("array"),
             "Arrays Kestrel allocated (results, kestrel.empty) are used in place, others copied once")
        .def("get", &PySession::get, py::arg("name"),
             "Computes what the blob needs (once per set of inputs) and returns it, without a copy")
        .def("run", &PySession::run, py::arg("names"), "Several blobs in one pass")
        .def("set_callbacks", &PySession::set_callbacks, py::arg("before") = py::none(), py::arg("after") = py::none(),
             "fn(event) before and after each layer runs (a kestrel.LayerEvent; None: no callback)")
        .def_property_readonly("peak_bytes", &PySession::peak_bytes);

#ifdef KESTREL_HAVE_ONNX
    m.def(
        "convert",
        [](const std::string& onnx_path, const std::string& param_path, const std::string& bin_path, bool optimize) {
            py::gil_scoped_release release;
            Net net;
            OnnxImportOptions o;
            o.optimize = optimize;
            load_onnx(net, onnx_path, o);
            net.save_param(param_path);
            net.save_model(bin_path);
        },
        py::arg("onnx_path"), py::arg("param_path"), py::arg("bin_path"), py::arg("optimize") = true,
        "Converts an ONNX model to ncnn's .param/.bin (as `kestrel convert`)");
#endif
}

} // namespace kestrel::python
