// The image functions for Python (python/kestrel/image.py gives them ncnn's
// names). Formats and filters travel as their names; arrays are viewed in
// place (these functions read exactly their input) and results are arrays
// over Kestrel's storage. The GIL is released while they run.
#include "bind_image.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "arrays.h"
#include "kestrel/error.h"
#include "kestrel/image.h"

namespace kestrel::python {

namespace py = pybind11;

namespace {

image::ResizeOptions resize_options(const std::string& filter, bool antialias, float cubic_a, bool exclude_outside)
{
    image::ResizeOptions o;
    o.filter = image::parse_filter(filter);
    o.antialias = antialias;
    o.cubic_a = cubic_a;
    o.exclude_outside = exclude_outside;
    return o;
}

// Runs `fn` on a view of `array` without the GIL; the result as an array.
template <class Fn> py::array without_gil(const py::array& array, const Fn& fn)
{
    const Tensor in = tensor_view_of_array(array);
    Tensor out;
    {
        py::gil_scoped_release release;
        out = fn(in);
    }
    return array_from_tensor(out);
}

// A frame given as a uint8 array of at least `bytes` bytes.
py::array frame_array(const py::object& data, int64_t bytes)
{
    const py::array frame = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>::ensure(data);
    check(static_cast<bool>(frame), "a YUV frame must be a uint8 array");
    check(frame.nbytes() >= bytes, "a YUV 4:2:0 frame of this size needs ", bytes, " bytes, got ", frame.nbytes());
    return frame;
}

int64_t yuv420_bytes(int width, int height)
{
    check(width > 0 && height > 0, "YUV frame: width and height must be positive, got ", width, "x", height);
    return int64_t(width) * height * 3 / 2;
}

} // namespace

void bind_image(py::module_& m)
{
    m.def(
        "_convert_pixels",
        [](const py::array& pixels, const std::string& from, const std::string& to) {
            const image::PixelFormat f = image::parse_pixel_format(from), t = image::parse_pixel_format(to);
            return without_gil(pixels, [&](const Tensor& in) { return image::convert_pixels(in, f, t); });
        },
        py::arg("pixels"), py::arg("from_format"), py::arg("to_format"));
    m.def(
        "_yuv420_to_pixels",
        [](const py::object& data, int width, int height, const std::string& layout, const std::string& to) {
            const py::array frame = frame_array(data, yuv420_bytes(width, height));
            const image::PixelFormat t = image::parse_pixel_format(to);
            check(layout == "nv21" || layout == "nv12" || layout == "i420", "unknown YUV layout '", layout, "'");
            const auto* bytes = static_cast<const uint8_t*>(frame.data());
            Tensor out;
            {
                py::gil_scoped_release release;
                out = layout == "i420" ? image::i420_to_pixels(bytes, width, height, t)
                                       : image::yuv420sp_to_pixels(bytes, width, height, layout == "nv21", t);
            }
            return array_from_tensor(out);
        },
        py::arg("data"), py::arg("width"), py::arg("height"), py::arg("layout"), py::arg("to_format"));
    m.def(
        "_resize",
        [](const py::array& image, int width, int height, const std::string& filter, bool antialias, float cubic_a,
           bool exclude_outside) {
            const image::ResizeOptions o = resize_options(filter, antialias, cubic_a, exclude_outside);
            return without_gil(image, [&](const Tensor& in) { return image::resize(in, width, height, o); });
        },
        py::arg("image"), py::arg("width"), py::arg("height"), py::arg("filter"), py::arg("antialias"),
        py::arg("cubic_a"), py::arg("exclude_outside"));
    m.def(
        "_from_pixels",
        [](const py::array& pixels, const std::string& from, const std::string& to, int width, int height,
           const std::string& filter, bool antialias, std::vector<float> mean, std::vector<float> norm) {
            const image::PixelFormat f = image::parse_pixel_format(from), t = image::parse_pixel_format(to);
            image::FromPixelsOptions o;
            o.width = width;
            o.height = height;
            o.resize = resize_options(filter, antialias, -0.5f, false);
            o.mean = std::move(mean);
            o.norm = std::move(norm);
            return without_gil(pixels, [&](const Tensor& in) { return image::from_pixels(in, f, t, o); });
        },
        py::arg("pixels"), py::arg("from_format"), py::arg("to_format"), py::arg("width"), py::arg("height"),
        py::arg("filter"), py::arg("antialias"), py::arg("mean"), py::arg("norm"));
    m.def(
        "_to_pixels",
        [](const py::array& chw, std::vector<float> mean, std::vector<float> norm) {
            return without_gil(chw, [&](const Tensor& in) { return image::to_pixels(in, mean, norm); });
        },
        py::arg("chw"), py::arg("mean"), py::arg("norm"));
    m.def(
        "_crop",
        [](const py::array& image, int x, int y, int width, int height) {
            return without_gil(image, [&](const Tensor& in) { return image::crop(in, x, y, width, height); });
        },
        py::arg("image"), py::arg("x"), py::arg("y"), py::arg("width"), py::arg("height"));
    m.def(
        "_flip",
        [](const py::array& image, bool horizontal, bool vertical) {
            return without_gil(image, [&](const Tensor& in) { return image::flip(in, horizontal, vertical); });
        },
        py::arg("image"), py::arg("horizontal"), py::arg("vertical"));
    m.def(
        "_rotate90",
        [](const py::array& image, int turns) {
            return without_gil(image, [&](const Tensor& in) { return image::rotate90(in, turns); });
        },
        py::arg("image"), py::arg("quarter_turns"));
}

} // namespace kestrel::python
