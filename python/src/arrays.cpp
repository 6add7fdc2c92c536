#include "arrays.h"

#include <cstring>
#include <memory>

#include "kestrel/error.h"

namespace kestrel::python {

namespace {

struct DTypeName {
    DType dtype;
    const char* numpy; // NumPy's name; BF16 has none and travels as float32
};

constexpr DTypeName kDTypes[] = {
    {DType::F32, "float32"}, {DType::F16, "float16"}, {DType::F64, "float64"}, {DType::I8, "int8"},
    {DType::U8, "uint8"},    {DType::I16, "int16"},   {DType::U16, "uint16"},  {DType::I32, "int32"},
    {DType::U32, "uint32"},  {DType::I64, "int64"},   {DType::U64, "uint64"},  {DType::Bool, "bool"},
};

// The tensor whose storage `array` lies in, when Kestrel allocated it.
const Tensor* kestrel_storage_of(const py::array& array)
{
    py::handle base = array.base();
    while (base && py::isinstance<py::array>(base)) base = py::reinterpret_borrow<py::array>(base).base();
    if (!base || !py::isinstance<TensorStorage>(base)) return nullptr;
    const Tensor& t = base.cast<const TensorStorage&>().tensor;
    const auto* begin = static_cast<const uint8_t*>(t.raw());
    const auto* data = static_cast<const uint8_t*>(array.data());
    const bool inside = data >= begin && data + array.nbytes() <= begin + t.nbytes();
    return inside ? &t : nullptr;
}

} // namespace

py::dtype numpy_dtype(DType dtype)
{
    if (dtype == DType::String) return py::dtype("U"); // NumPy's str, of any width
    for (const DTypeName& d : kDTypes)
        if (d.dtype == dtype) return py::dtype(d.numpy);
    fail("dtype ", dtype_name(dtype), " has no NumPy counterpart");
}

DType kestrel_dtype(const py::dtype& dtype)
{
    const char kind = dtype.kind();
    if (kind == 'U' || kind == 'S' || kind == 'O') return DType::String; // str, bytes, or objects that are str
    for (const DTypeName& d : kDTypes)
        if (py::dtype(d.numpy).equal(dtype)) return d.dtype;
    fail("NumPy dtype ", dtype.attr("name").cast<std::string>(), " is not supported (Kestrel has float16/32/64, int8-64, ",
         "uint8-64, bool and strings)");
}

Shape shape_from(const py::handle& sequence)
{
    Shape shape;
    for (const py::handle& d : sequence) shape.push_back(d.cast<int64_t>());
    return shape;
}

py::tuple shape_tuple(const Shape& shape)
{
    py::tuple t(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) t[i] = shape[i];
    return t;
}

namespace {

// A string tensor as NumPy's str array (its text decoded from UTF-8, bytes
// that are not UTF-8 replaced).
py::array string_array(const Tensor& t)
{
    py::list items;
    for (int64_t i = 0; i < t.numel(); ++i) {
        const std::string& s = t.data<std::string>()[i];
        items.append(py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "replace")));
    }
    const py::object numpy = py::module_::import("numpy");
    return numpy.attr("array")(items, py::arg("dtype") = "U").attr("reshape")(shape_tuple(t.shape()));
}

// A NumPy array of str, bytes or str objects as a string tensor (UTF-8).
Tensor string_tensor(const py::array& array)
{
    const Shape shape(array.shape(), array.shape() + array.ndim());
    Tensor t(shape, DType::String);
    const py::list items = array.attr("ravel")().attr("tolist")();
    for (size_t i = 0; i < items.size(); ++i) {
        const py::handle item = items[i];
        if (py::isinstance<py::bytes>(item)) t.data<std::string>()[i] = item.cast<std::string>();
        else if (py::isinstance<py::str>(item)) t.data<std::string>()[i] = item.cast<std::string>();
        else fail("a string array holds a ", py::str(item.get_type().attr("__name__")).cast<std::string>(), ", not a str");
    }
    return t;
}

} // namespace

py::array array_from_tensor(const Tensor& tensor, bool read_only)
{
    if (tensor.dtype() == DType::String) return string_array(tensor);
    const Tensor t = tensor.dtype() == DType::BF16 ? tensor.to(DType::F32) : tensor;
    std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides(shape.size());
    py::ssize_t stride = static_cast<py::ssize_t>(dtype_size(t.dtype()));
    for (size_t i = shape.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= shape[i];
    }
    py::array array(numpy_dtype(t.dtype()), shape, strides, t.raw(), py::cast(TensorStorage{t}));
    if (read_only) array.attr("setflags")(py::arg("write") = false);
    return array;
}

Tensor tensor_from_array(const py::array& array)
{
    const DType dtype = kestrel_dtype(array.dtype());
    if (dtype == DType::String) return string_tensor(array);
    const Shape shape(array.shape(), array.shape() + array.ndim());
    const bool c_order = (array.flags() & py::array::c_style) != 0;
    if (const Tensor* owner = c_order ? kestrel_storage_of(array) : nullptr) {
        // Kestrel's own storage (with its alignment and over-read margin): used in place.
        auto keep = std::make_shared<Tensor>(*owner);
        return Tensor::wrap_shared(std::shared_ptr<void>(keep, keep->raw()), const_cast<void*>(array.data()), shape,
                                   dtype);
    }
    Tensor t(shape, dtype);
    if (c_order) {
        if (t.nbytes() > 0) std::memcpy(t.raw(), array.data(), t.nbytes());
    } else {
        // Any strides: let NumPy write the C-ordered copy straight into our storage.
        py::array dst = array_from_tensor(t);
        py::module_::import("numpy").attr("copyto")(dst, array);
    }
    return t;
}

Tensor tensor_view_of_array(const py::array& array)
{
    if (!(array.flags() & py::array::c_style) || kestrel_dtype(array.dtype()) == DType::String) return tensor_from_array(array);
    const Shape shape(array.shape(), array.shape() + array.ndim());
    return Tensor::wrap(const_cast<void*>(array.data()), shape, kestrel_dtype(array.dtype()));
}

void bind_arrays(py::module_& m)
{
    py::class_<TensorStorage>(m, "_TensorStorage", "Storage that Kestrel allocated, kept alive by the arrays viewing it");
    m.def(
        "empty",
        [](const py::object& shape, const py::object& dtype) {
            const Shape s = py::isinstance<py::int_>(shape) ? Shape{shape.cast<int64_t>()} : shape_from(shape);
            return array_from_tensor(Tensor(s, kestrel_dtype(py::dtype::from_args(dtype))));
        },
        py::arg("shape"), py::arg("dtype") = "float32",
        "An uninitialized array in Kestrel's own storage (aligned, with the margin its kernels read past "
        "the end): inputs made this way are used without a copy.");
}

} // namespace kestrel::python
