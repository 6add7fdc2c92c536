// DepthToSpace (ONNX): moves channel blocks of an (N, C, H, W) input (any
// dtype) into b x b spatial blocks: (N, C/(b*b), H*b, W*b). Params 0=blocksize
// b (> 0), 1=mode: 0 DCR (depth-column-row: the input is seen as
// (N, b, b, C', H, W)), 1 CRD (column-row-depth: (N, C', b, b, H, W)).
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class DepthToSpace : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        block_ = positive_param(pd, 0, 0, "blocksize");
        mode_ = pd.get_int(1, 0);
        check(mode_ == 0 || mode_ == 1, "mode (param 1) must be 0 (DCR) or 1 (CRD), got ", mode_);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        const Shape& d = in[0].shape;
        check(d.size() == 4, "input must be (N, C, H, W), got ", shape_str(d));
        check(d[1] % (int64_t(block_) * block_) == 0, "channels ", d[1], " are not a multiple of blocksize^2 = ",
              int64_t(block_) * block_);
        out[0] = TensorDesc({d[0], d[1] / block_ / block_, d[2] * block_, d[3] * block_}, in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& d = in[0].shape();
        const int64_t b = block_, c = d[1] / b / b;
        const Shape view = mode_ == 0 ? Shape{d[0], b, b, c, d[2], d[3]} : Shape{d[0], c, b, b, d[2], d[3]};
        const std::vector<int> perm = mode_ == 0 ? std::vector<int>{0, 3, 4, 1, 5, 2} : std::vector<int>{0, 1, 4, 2, 5, 3};
        nd::permuted_copy(in[0], view, perm, out[0], ctx);
    }

private:
    int block_ = 1;
    int mode_ = 0;
};

} // namespace

std::unique_ptr<Op> make_nd_depth_to_space() { return std::make_unique<DepthToSpace>(); }

} // namespace kestrel
