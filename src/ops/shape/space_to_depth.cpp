// SpaceToDepth (ONNX): moves b x b spatial blocks of an (N, C, H, W) input (any
// dtype) into channels: (N, C*b*b, H/b, W/b); the input is seen as
// (N, C, H/b, b, W/b, b) and permuted to (N, b, b, C, H/b, W/b).
// Param 0=blocksize b (> 0).
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class SpaceToDepth : public Op {
public:
    void load_param(const ParamDict& pd) override { block_ = positive_param(pd, 0, 0, "blocksize"); }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        const Shape& d = in[0].shape;
        check(d.size() == 4, "input must be (N, C, H, W), got ", shape_str(d));
        check(d[2] % block_ == 0 && d[3] % block_ == 0, "height and width of ", shape_str(d),
              " must be multiples of blocksize ", block_);
        out[0] = TensorDesc({d[0], d[1] * block_ * block_, d[2] / block_, d[3] / block_}, in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& d = in[0].shape();
        const int64_t b = block_;
        const Shape view{d[0], d[1], d[2] / b, b, d[3] / b, b};
        const std::vector<int> perm = {0, 3, 5, 1, 2, 4};
        nd::permuted_copy(in[0], view, perm, out[0], ctx);
    }

private:
    int block_ = 1;
};

} // namespace

std::unique_ptr<Op> make_nd_space_to_depth() { return std::make_unique<SpaceToDepth>(); }

} // namespace kestrel
