// kestrel.calibrate(net, samples, method, percentile, threads) -> {blob: scale}
// kestrel.quantize(net, scales, requantize) -> an int8 Net (kestrel/quantize.h).
#include "bind_quantize.h"

#include <pybind11/stl.h>

#include "arrays.h"
#include "kestrel/quantize.h"

namespace py = pybind11;

namespace kestrel::python {

namespace {

CalibrationMethod method_named(const std::string& name)
{
    if (name == "kl") return CalibrationMethod::KL;
    if (name == "minmax") return CalibrationMethod::MinMax;
    if (name == "percentile") return CalibrationMethod::Percentile;
    throw py::value_error("method must be 'kl', 'minmax' or 'percentile', not '" + name + "'");
}

} // namespace

void bind_quantize(py::module_& m)
{
    m.def(
        "calibrate",
        [](const Net& net, const std::vector<std::map<std::string, py::array>>& samples, const std::string& method,
           double percentile, int threads) {
            std::vector<CalibrationSample> tensors;
            for (const auto& sample : samples) {
                CalibrationSample s;
                for (const auto& input : sample) s[input.first] = tensor_from_array(input.second);
                tensors.push_back(std::move(s));
            }
            CalibrationOptions o;
            o.method = method_named(method);
            o.percentile = percentile;
            o.threads = threads;
            py::gil_scoped_release release;
            return calibrate(net, tensors, o);
        },
        py::arg("net"), py::arg("samples"), py::arg("method") = "kl", py::arg("percentile") = 99.99,
        py::arg("threads") = 1,
        "The int8 scale of the input of every layer quantize() can make int8, by blob name, from the float "
        "model's run on samples ([{input name: array}]); method 'kl' (as ncnn2table), 'minmax' or 'percentile'. "
        "Load the model with Net(fuse_residuals=False) so that residual sums stay layers.");
    m.def(
        "quantize",
        [](const Net& net, const std::map<std::string, float>& scales, bool requantize) {
            py::gil_scoped_release release;
            Net out;
            quantize_net(net, scales, out, requantize);
            return out;
        },
        py::arg("net"), py::arg("scales"), py::arg("requantize") = true,
        "A copy of net with its Convolution, ConvolutionDepthWise and InnerProduct layers int8 in ncnn's "
        "conventions (per-channel weight scales; requantize: a convolution read only by an int8 convolution "
        "writes int8 for it); save_param/save_model write it as an int8 ncnn model");
}

} // namespace kestrel::python
