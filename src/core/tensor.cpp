#include "kestrel/tensor.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/dtype_dispatch.h"
#include "core/tensor_allocations.h"
#include "kestrel/error.h"

namespace kestrel {

size_t dtype_size(DType t)
{
    switch (t) {
    case DType::F64: case DType::I64: case DType::U64: return 8;
    case DType::F32: case DType::I32: case DType::U32: return 4;
    case DType::F16: case DType::BF16: case DType::I16: case DType::U16: return 2;
    case DType::I8: case DType::U8: case DType::Bool: return 1;
    case DType::Sequence: case DType::Optional: return sizeof(Tensor);
    case DType::String: return sizeof(std::string);
    }
    return 1;
}

const char* dtype_name(DType t)
{
    switch (t) {
    case DType::F32: return "float32";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::F64: return "float64";
    case DType::I8: return "int8";
    case DType::U8: return "uint8";
    case DType::I16: return "int16";
    case DType::U16: return "uint16";
    case DType::I32: return "int32";
    case DType::U32: return "uint32";
    case DType::I64: return "int64";
    case DType::U64: return "uint64";
    case DType::Bool: return "bool";
    case DType::Sequence: return "sequence";
    case DType::Optional: return "optional";
    case DType::String: return "string";
    }
    return "?";
}

bool dtype_is_float(DType t)
{
    return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}

int64_t shape_numel(const Shape& shape)
{
    int64_t n = 1;
    for (int64_t d : shape) {
        check(d >= 0, "negative dimension in shape ", shape_str(shape));
        if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
            fail("shape ", shape_str(shape), " has too many elements (overflow)");
        n *= d;
    }
    return n;
}

std::string shape_str(const Shape& shape)
{
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ",";
        s += std::to_string(shape[i]);
    }
    return s + (shape.size() == 1 ? ",)" : ")");
}

namespace {
std::atomic<int64_t> allocations{0};

std::shared_ptr<void> allocate_aligned(size_t bytes)
{
    allocations.fetch_add(1, std::memory_order_relaxed);
    // Round up and add the over-read margin so vector kernels may load past the end.
    const size_t size = (bytes + kTensorOverread + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    void* p = std::aligned_alloc(kTensorAlignment, size);
    if (p == nullptr) throw TooLargeError(detail::concat("out of memory allocating ", bytes, " bytes"));
    return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}
} // namespace

int64_t tensor_allocations() { return allocations.load(std::memory_order_relaxed); }

Tensor::Tensor(Shape shape, DType dtype) : shape_(std::move(shape)), dtype_(dtype)
{
    numel_ = shape_numel(shape_);
    if (numel_ > static_cast<int64_t>(std::numeric_limits<size_t>::max() / 16))
        throw TooLargeError("tensor " + shape_str(shape_) + " is too large");
    if (dtype_holds_tensors(dtype_)) {
        hold_objects<Tensor>();
        return;
    }
    if (dtype_ == DType::String) {
        hold_objects<std::string>();
        return;
    }
    owner_ = allocate_aligned(nbytes());
    data_ = owner_.get();
}

template <class T> void Tensor::hold_objects()
{
    auto objects = std::make_shared<std::vector<T>>(static_cast<size_t>(numel_));
    objects->reserve(1); // an empty sequence is still a defined value
    data_ = objects->data();
    owner_ = std::move(objects);
}

Tensor Tensor::strings(Shape shape, const std::vector<std::string>& values)
{
    Tensor t(std::move(shape), DType::String);
    check(static_cast<size_t>(t.numel()) == values.size(), "shape ", shape_str(t.shape()), " needs ", t.numel(),
          " strings, got ", values.size());
    std::copy(values.begin(), values.end(), t.data<std::string>());
    return t;
}

Tensor Tensor::sequence(const std::vector<Tensor>& items)
{
    Tensor t({static_cast<int64_t>(items.size())}, DType::Sequence);
    std::copy(items.begin(), items.end(), t.data<Tensor>());
    return t;
}

Tensor Tensor::optional(const Tensor& value)
{
    Tensor t({value.defined() ? 1 : 0}, DType::Optional);
    if (value.defined()) t.data<Tensor>()[0] = value;
    return t;
}

std::vector<Tensor> Tensor::items() const
{
    check(dtype_holds_tensors(dtype_), "a ", dtype_name(dtype_), " tensor is not a sequence or an optional");
    return std::vector<Tensor>(data<Tensor>(), data<Tensor>() + numel_);
}

Tensor Tensor::zeros(Shape shape, DType dtype)
{
    Tensor t(std::move(shape), dtype);
    t.fill_zero();
    return t;
}

Tensor Tensor::wrap(void* data, Shape shape, DType dtype)
{
    return wrap_shared(nullptr, data, std::move(shape), dtype);
}

Tensor Tensor::wrap_shared(std::shared_ptr<void> owner, void* data, Shape shape, DType dtype)
{
    Tensor t;
    t.owner_ = std::move(owner);
    t.data_ = data;
    t.shape_ = std::move(shape);
    t.numel_ = shape_numel(t.shape_);
    t.dtype_ = dtype;
    return t;
}

int64_t Tensor::dim(int axis) const
{
    const int r = rank();
    if (axis < 0) axis += r;
    check(axis >= 0 && axis < r, "axis ", axis, " out of range for shape ", shape_str(shape_));
    return shape_[axis];
}

Tensor Tensor::reshaped(Shape shape) const
{
    check(shape_numel(shape) == numel_, "cannot reshape ", shape_str(shape_), " to ", shape_str(shape));
    Tensor t = *this;
    t.shape_ = std::move(shape);
    return t;
}

Tensor Tensor::view_as(Shape shape, DType dtype) const
{
    check(dtype_holds_objects(dtype) == dtype_holds_objects(dtype_) && (!dtype_holds_objects(dtype) || dtype == dtype_),
          "cannot view a ", dtype_name(dtype_), " as ", dtype_name(dtype));
    const int64_t n = shape_numel(shape);
    check(static_cast<size_t>(n) * dtype_size(dtype) == nbytes(), "cannot view ", shape_str(shape_), " ",
          dtype_name(dtype_), " as ", shape_str(shape), " ", dtype_name(dtype));
    Tensor t = *this;
    t.shape_ = std::move(shape);
    t.numel_ = n;
    t.dtype_ = dtype;
    return t;
}

Tensor Tensor::clone() const
{
    Tensor t(shape_, dtype_);
    if (dtype_holds_tensors(dtype_)) // the elements are values nobody writes: shared
        std::copy(data<Tensor>(), data<Tensor>() + numel_, t.data<Tensor>());
    else if (dtype_ == DType::String)
        std::copy(data<std::string>(), data<std::string>() + numel_, t.data<std::string>());
    else if (nbytes())
        std::memcpy(t.data_, data_, nbytes());
    return t;
}

void Tensor::fill_zero()
{
    if (dtype_holds_tensors(dtype_)) return std::fill(data<Tensor>(), data<Tensor>() + numel_, Tensor());
    if (dtype_ == DType::String) return std::fill(data<std::string>(), data<std::string>() + numel_, std::string());
    if (nbytes()) std::memset(data_, 0, nbytes());
}

Tensor Tensor::to(DType target) const
{
    if (target == dtype_) return clone();
    check(!dtype_holds_objects(dtype_) && !dtype_holds_objects(target), "cannot convert a ", dtype_name(dtype_), " to ",
          dtype_name(target));
    Tensor out(shape_, target);
    const int64_t n = numel_;
    visit_dtype(dtype_, [&](auto src_tag) {
        using S = typename decltype(src_tag)::type;
        visit_dtype(target, [&](auto dst_tag) {
            using D = typename decltype(dst_tag)::type;
            const S* s = data<S>();
            D* d = out.data<D>();
            for (int64_t i = 0; i < n; ++i) d[i] = convert_value<D>(s[i]);
        });
    });
    return out;
}

} // namespace kestrel
