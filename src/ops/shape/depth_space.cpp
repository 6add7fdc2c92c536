// DepthToSpace and SpaceToDepth (ONNX): blocks of b x b pixels of an (N, C, H,
// W) input (any dtype) move between the channels and the plane. Each is the
// input seen as a 6-D view with its axes permuted, on the one permuted copy.
//   DepthToSpace  0=blocksize b, 1=mode: 0 DCR (depth-column-row: the input
//                 seen as (N, b, b, C', H, W)), 1 CRD (column-row-depth:
//                 (N, C', b, b, H, W)). Output (N, C/(b*b), H*b, W*b).
//   SpaceToDepth  0=blocksize b: the input seen as (N, C, H/b, b, W/b, b) and
//                 permuted to (N, b, b, C, H/b, W/b): (N, C*b*b, H/b, W/b).
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

class BlockMove : public Op {
public:
    explicit BlockMove(bool to_space) : to_space_(to_space) {}

    void load_param(const ParamDict& pd) override
    {
        block_ = positive_param(pd, 0, 0, "blocksize");
        mode_ = to_space_ ? pd.get_int(1, 0) : 0;
        check(mode_ == 0 || mode_ == 1, "mode (param 1) must be 0 (DCR) or 1 (CRD), got ", mode_);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        const Shape& d = in[0].shape;
        const int64_t b = block_;
        check(d.size() == 4, "input must be (N, C, H, W), got ", shape_str(d));
        if (to_space_) {
            check(d[1] % (b * b) == 0, "channels ", d[1], " are not a multiple of blocksize^2 = ", b * b);
            out[0] = TensorDesc({d[0], d[1] / b / b, d[2] * b, d[3] * b}, in[0].dtype);
        } else {
            check(d[2] % b == 0 && d[3] % b == 0, "height and width of ", shape_str(d), " must be multiples of blocksize ",
                  b);
            out[0] = TensorDesc({d[0], d[1] * b * b, d[2] / b, d[3] / b}, in[0].dtype);
        }
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& d = in[0].shape();
        const int64_t b = block_;
        Shape view;
        std::vector<int> perm;
        if (!to_space_) {
            view = {d[0], d[1], d[2] / b, b, d[3] / b, b}, perm = {0, 3, 5, 1, 2, 4};
        } else if (mode_ == 0) {
            view = {d[0], b, b, d[1] / b / b, d[2], d[3]}, perm = {0, 3, 4, 1, 5, 2};
        } else {
            view = {d[0], d[1] / b / b, b, b, d[2], d[3]}, perm = {0, 1, 4, 2, 5, 3};
        }
        nd::permuted_copy(in[0], view, perm, out[0], ctx);
    }

private:
    bool to_space_;
    int block_ = 1;
    int mode_ = 0;
};

} // namespace

std::unique_ptr<Op> make_depth_to_space() { return std::make_unique<BlockMove>(true); }
std::unique_ptr<Op> make_space_to_depth() { return std::make_unique<BlockMove>(false); }

} // namespace kestrel
