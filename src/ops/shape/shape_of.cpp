// Shape (ONNX): the input's shape as a 1-D int64 tensor, dims [start, end)
// (params 0=start, default 0; 1=end, default: the rank; negative counts from
// the end; both clamped to [0, rank] as in opset 15). Needs only the input's
// shape, so the runtime evaluates it while planning.
#include <algorithm>
#include <climits>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class ShapeOp : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        start_ = pd.get_int(0, 0);
        end_ = pd.get_int(1, INT_MAX);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        const auto [b, e] = range(static_cast<int64_t>(in[0].shape.size()));
        out[0] = TensorDesc({e - b}, DType::I64);
    }
    bool outputs_from_shapes_only() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape& s = in[0].shape();
        const auto [b, e] = range(static_cast<int64_t>(s.size()));
        int64_t* o = out[0].data<int64_t>();
        for (int64_t k = b; k < e; ++k) o[k - b] = s[static_cast<size_t>(k)];
    }

private:
    std::pair<int64_t, int64_t> range(int64_t rank) const
    {
        auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t(0), rank); };
        const int64_t b = clamp(start_), e = clamp(end_);
        return {b, std::max(b, e)};
    }
    int64_t start_ = 0, end_ = INT_MAX;
};

} // namespace

std::unique_ptr<Op> make_shape() { return std::make_unique<ShapeOp>(); }

} // namespace kestrel
