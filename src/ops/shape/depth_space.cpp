// Blocks of b x b pixels moving between the channels and the plane (any
// dtype). Each is the input seen through a view with its axes permuted or
// strided, on the one N-d copy:
//   DepthToSpace  (ONNX) 0=blocksize b, 1=mode: 0 DCR (depth-column-row: the
//                 input (N, C, H, W) seen as (N, b, b, C', H, W)), 1 CRD
//                 (column-row-depth: (N, C', b, b, H, W)). Output
//                 (N, C/(b*b), H*b, W*b).
//   SpaceToDepth  (ONNX) 0=blocksize b: the input seen as (N, C, H/b, b, W/b,
//                 b) and permuted to (N, b, b, C, H/b, W/b): (N, C*b*b, H/b, W/b).
//   PixelShuffle  (ncnn) 0=upscale_factor b, 1=mode: 0 PyTorch's
//                 pixel_shuffle (CRD), 1 DCR; input (C, H, W), no batch.
//   Reorg         (ncnn, YOLOv2's) 0=stride b, 1=mode; input (C, H, W) ->
//                 (C*b*b, H/b, W/b): output channel q*b*b + sh*b + sw (mode 0,
//                 PyTorch's pixel_unshuffle) or (sh*b + sw)*C + q (mode 1, as
//                 SpaceToDepth) holds pixel (sh, sw) of each b x b block of
//                 channel q. As ncnn, H/b and W/b round down: a remainder is
//                 dropped.
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

enum class Move { DepthToSpace, SpaceToDepth, PixelShuffle, Reorg };

class BlockMove : public Op {
public:
    explicit BlockMove(Move move) : move_(move) {}

    void load_param(const ParamDict& pd) override
    {
        const bool ncnn = move_ == Move::PixelShuffle || move_ == Move::Reorg;
        block_ = positive_param(pd, 0, ncnn ? 1 : 0, move_ == Move::PixelShuffle ? "upscale_factor"
                                                   : move_ == Move::Reorg        ? "stride"
                                                                                 : "blocksize");
        mode_ = move_ == Move::SpaceToDepth ? 0 : pd.get_int(1, 0);
        check(mode_ == 0 || mode_ == 1, "mode (param 1) must be 0 or 1, got ", mode_);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        const Shape& d = in[0].shape;
        const int64_t b = block_;
        if (move_ == Move::PixelShuffle || move_ == Move::Reorg) {
            check(d.size() == 3, "input must be (C, H, W), got ", shape_str(d));
            if (move_ == Move::PixelShuffle) {
                check(d[0] % (b * b) == 0, "channels ", d[0], " are not a multiple of upscale_factor^2 = ", b * b);
                out[0] = TensorDesc({d[0] / b / b, d[1] * b, d[2] * b}, in[0].dtype);
            } else {
                out[0] = TensorDesc({d[0] * b * b, d[1] / b, d[2] / b}, in[0].dtype);
            }
            return;
        }
        check(d.size() == 4, "input must be (N, C, H, W), got ", shape_str(d));
        if (move_ == Move::DepthToSpace) {
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
        Shape d = in[0].shape();
        const int64_t b = block_;
        if (move_ == Move::Reorg) {
            reorg(in[0], out[0], ctx);
            return;
        }
        if (move_ == Move::PixelShuffle) d.insert(d.begin(), 1);
        Shape view;
        std::vector<int> perm;
        // DepthToSpace's mode 0 is DCR, PixelShuffle's is CRD.
        const bool crd = move_ == Move::PixelShuffle ? mode_ == 0 : mode_ == 1;
        if (move_ == Move::SpaceToDepth) {
            view = {d[0], d[1], d[2] / b, b, d[3] / b, b}, perm = {0, 3, 5, 1, 2, 4};
        } else if (!crd) {
            view = {d[0], b, b, d[1] / b / b, d[2], d[3]}, perm = {0, 3, 4, 1, 5, 2};
        } else {
            view = {d[0], d[1] / b / b, b, b, d[2], d[3]}, perm = {0, 1, 4, 2, 5, 3};
        }
        nd::permuted_copy(in[0], view, perm, out[0], ctx);
    }

private:
    // Each output element read through strides over the input: the output
    // (C, b, b, H/b, W/b) (mode 0) or (b, b, C, H/b, W/b) (mode 1).
    void reorg(const Tensor& x, Tensor& y, const ExecContext& ctx) const
    {
        const int64_t c = x.dim(0), h = x.dim(1), w = x.dim(2), b = block_;
        const Shape dims = mode_ == 0 ? Shape{c, b, b, h / b, w / b} : Shape{b, b, c, h / b, w / b};
        const std::vector<int64_t> strides = mode_ == 0 ? std::vector<int64_t>{h * w, w, 1, b * w, b}
                                                        : std::vector<int64_t>{w, 1, h * w, b * w, b};
        nd::strided_copy(x.raw(), 0, dims, strides, y.raw(), dtype_size(x.dtype()), &ctx);
    }

    Move move_;
    int block_ = 1;
    int mode_ = 0;
};

} // namespace

std::unique_ptr<Op> make_depth_to_space() { return std::make_unique<BlockMove>(Move::DepthToSpace); }
std::unique_ptr<Op> make_space_to_depth() { return std::make_unique<BlockMove>(Move::SpaceToDepth); }
std::unique_ptr<Op> make_pixel_shuffle() { return std::make_unique<BlockMove>(Move::PixelShuffle); }
std::unique_ptr<Op> make_reorg() { return std::make_unique<BlockMove>(Move::Reorg); }

} // namespace kestrel
