// Weight sources for Op::load_model that need no file: a list of tensors
// (graphs built in code, layers the optimizer rebuilds) and all-zero weights
// (benchmarks of a structure without weights). Each records what it hands out
// so that the Net can write the weights back.
#pragma once
#include <vector>

#include "graph/graph.h"
#include "kestrel/weights.h"

namespace kestrel {

class TensorListReader : public WeightReader {
public:
    explicit TensorListReader(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {}
    Tensor load(int64_t count, WeightEncoding encoding) override;
    Tensor load_typed(const Shape& shape, DType dtype) override;
    std::vector<StoredWeight> recorded;
    size_t unused() const { return tensors_.size() - next_; }

private:
    std::vector<Tensor> tensors_;
    size_t next_ = 0;
};

class ZeroWeightReader : public WeightReader {
public:
    explicit ZeroWeightReader(int64_t max_bytes) : max_bytes_(max_bytes) {}
    Tensor load(int64_t count, WeightEncoding encoding) override;
    Tensor load_typed(const Shape& shape, DType dtype) override;
    std::vector<StoredWeight> recorded;

private:
    int64_t max_bytes_;
};

} // namespace kestrel
