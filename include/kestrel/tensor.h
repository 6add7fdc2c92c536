// Tensor: an N-d dense row-major array of one dtype. Storage is 64-byte aligned
// and shared between tensors that view it (reshape, slices of a planner arena).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kestrel {

// Sequence: a list of tensors (ONNX's sequence type), see Tensor::sequence;
// Optional: none or one value (ONNX's optional type), see Tensor::optional;
// String: an N-d tensor whose elements are std::string (ONNX's strings).
enum class DType : uint8_t { F32, F16, BF16, F64, I8, U8, I16, U16, I32, U32, I64, U64, Bool, Sequence, Optional, String };

// Whether values of this dtype are tensors (a sequence's, an optional's), not bytes.
inline bool dtype_holds_tensors(DType t) { return t == DType::Sequence || t == DType::Optional; }
// Whether elements are C++ objects (tensors, strings), not bytes: they are
// copied as objects, never byte for byte, nor placed in a planner's arena.
inline bool dtype_holds_objects(DType t) { return dtype_holds_tensors(t) || t == DType::String; }

size_t dtype_size(DType t);
const char* dtype_name(DType t);
bool dtype_is_float(DType t);

using Shape = std::vector<int64_t>;

// Number of elements; throws kestrel::Error on negative dims or int64 overflow.
int64_t shape_numel(const Shape& shape);
std::string shape_str(const Shape& shape);

constexpr size_t kTensorAlignment = 64;
// Kernels may read (never write) this many bytes past the end of a buffer.
constexpr size_t kTensorOverread = 64;

class Tensor {
public:
    Tensor() = default;
    // Allocates uninitialized, aligned storage.
    explicit Tensor(Shape shape, DType dtype = DType::F32);

    static Tensor zeros(Shape shape, DType dtype = DType::F32);
    // Non-owning view of caller memory; the caller keeps it alive.
    static Tensor wrap(void* data, Shape shape, DType dtype = DType::F32);
    // View that keeps `owner` alive.
    static Tensor wrap_shared(std::shared_ptr<void> owner, void* data, Shape shape, DType dtype);
    // A sequence: DType::Sequence of shape (n,) whose elements are the n
    // tensors, each of its own dtype and shape (ONNX's sequence values).
    // Tensor(Shape{n}, DType::Sequence) holds n undefined tensors.
    static Tensor sequence(const std::vector<Tensor>& items);
    bool is_sequence() const { return dtype_ == DType::Sequence; }
    // An optional: DType::Optional of shape (0,) (none) or (1,) holding
    // `value` (a tensor or a sequence); an undefined `value` gives none.
    static Tensor optional(const Tensor& value);
    bool is_optional() const { return dtype_ == DType::Optional; }
    std::vector<Tensor> items() const; // a sequence's tensors, an optional's value (or none)
    // A DType::String tensor of `shape` holding `values` in row-major order
    // (elements are std::string: data<std::string>()).
    static Tensor strings(Shape shape, const std::vector<std::string>& values);

    const Shape& shape() const { return shape_; }
    int rank() const { return static_cast<int>(shape_.size()); }
    // Negative axes count from the end.
    int64_t dim(int axis) const;
    int64_t numel() const { return numel_; }
    size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }
    DType dtype() const { return dtype_; }
    // False for a default-constructed tensor. Zero-element tensors still have storage.
    bool defined() const { return data_ != nullptr; }
    // True when this tensor alone holds its storage (no other tensor or view
    // shares it), so the storage may be reused for something else.
    bool sole_owner() const { return owner_ != nullptr && owner_.use_count() == 1; }

    void* raw() { return data_; }
    const void* raw() const { return data_; }
    template <class T> T* data() { return static_cast<T*>(data_); }
    template <class T> const T* data() const { return static_cast<const T*>(data_); }

    // Same storage, new shape with the same number of elements.
    Tensor reshaped(Shape shape) const;
    // Same storage seen as another shape and dtype of the same byte size.
    Tensor view_as(Shape shape, DType dtype) const;
    Tensor clone() const;
    // Element-wise conversion to another dtype (a copy).
    Tensor to(DType dtype) const;
    void fill_zero();

private:
    // Storage of numel_ default-constructed T (tensors, strings).
    template <class T> void hold_objects();
    std::shared_ptr<void> owner_;
    void* data_ = nullptr;
    Shape shape_;
    int64_t numel_ = 0;
    DType dtype_ = DType::F32;
};

} // namespace kestrel
