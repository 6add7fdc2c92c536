#include "graph/weight_lists.h"

#include "kestrel/error.h"

namespace kestrel {

Tensor TensorListReader::load(int64_t count, WeightEncoding encoding)
{
    check(next_ < tensors_.size(), "layer asks for weight #", next_ + 1, " but only ", tensors_.size(), " were given");
    Tensor t = tensors_[next_++];
    check(t.numel() == count, "weight #", next_, " has ", t.numel(), " values, the layer needs ", count);
    if (t.dtype() != DType::F32 && t.dtype() != DType::I8) t = t.to(DType::F32);
    t = t.reshaped({count});
    recorded.push_back(StoredWeight{t, encoding, {}});
    return t;
}

Tensor TensorListReader::load_typed(const Shape& shape, DType dtype)
{
    check(next_ < tensors_.size(), "layer asks for weight #", next_ + 1, " but only ", tensors_.size(), " were given");
    Tensor t = tensors_[next_++];
    check(t.shape() == shape && t.dtype() == dtype, "weight #", next_, " is ", shape_str(t.shape()), " ",
          dtype_name(t.dtype()), ", the layer needs ", shape_str(shape), " ", dtype_name(dtype));
    recorded.push_back(StoredWeight{t, WeightEncoding::Typed, {}});
    return t;
}

Tensor ZeroWeightReader::load_typed(const Shape& shape, DType dtype)
{
    const int64_t bytes = shape_numel(shape) * static_cast<int64_t>(dtype_size(dtype));
    if (bytes > max_bytes_) throw TooLargeError(detail::concat("constant ", shape_str(shape), " is too large"));
    Tensor t = Tensor::zeros(shape, dtype);
    recorded.push_back(StoredWeight{t, WeightEncoding::Typed, {}});
    return t;
}

Tensor ZeroWeightReader::load(int64_t count, WeightEncoding encoding)
{
    check(count >= 0, "negative weight size ", count);
    if (count * 4 > max_bytes_)
        throw TooLargeError(detail::concat("weight of ", count, " values is too large (limit ", max_bytes_, " bytes)"));
    Tensor t = Tensor::zeros({count}, DType::F32);
    recorded.push_back(StoredWeight{t, encoding, {}});
    return t;
}

} // namespace kestrel
