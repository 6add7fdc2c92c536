// Tile and Expand: input 0 (any rank and dtype) copied to a larger shape by
// the one broadcast engine (kernels/broadcast.h), the target given as the
// values of input 1 (1-D integers). 20=dynamic=1 accepts values known only
// at run time (see common/tensor_util.cpp).
//   Tile    21=1 (ONNX's Tile): input 1 repeats, one value >= 0 per axis:
//           (d0, d1, ..) seen as (1, d0, 1, d1, ..) is broadcast to
//           (r0, d0, r1, d1, ..).
//           ncnn's form (no 21; one input of rank 1-4): 2=repeats (int
//           array, numpy's tile: aligned with the input's last dims, the
//           input lifted to their count), else 0=axis (outermost first) and
//           1=tiles (1). ncnn's quirk: a 3-D (c, h, w) lifted to 4-D is
//           (c, 1, h, w), c staying outermost, where numpy has (1, c, h, w).
//   Expand  (ONNX's): input 1 a shape, numpy's rules: the output shape is
//           the broadcast of both (a 1 in the shape keeps the input's dim).
#include <algorithm>

#include "core/dtype_dispatch.h"
#include "kernels/broadcast.h"
#include "ops/common/element_moves.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

enum class Stretch { Tile, Expand };

class BroadcastCopy : public Op, public MovesElements {
public:
    explicit BroadcastCopy(Stretch stretch) : stretch_(stretch) {}

    void load_param(const ParamDict& pd) override
    {
        dynamic_ = pd.get_int(20, 0) != 0;
        ncnn_ = stretch_ == Stretch::Tile && pd.get_int(21, 0) == 0;
        if (!ncnn_) return;
        check(!dynamic_, "20=1 (dynamic repeats) needs the repeats-input form 21=1");
        ncnn_axis_ = pd.get_int(0, 0);
        ncnn_tiles_ = pd.get_int(1, 1);
        for (int r : pd.get_ints(2)) ncnn_repeats_.push_back(r);
        check(ncnn_repeats_.size() <= 4, "repeats (param 2) has ", ncnn_repeats_.size(), " values; ncnn's blobs have rank 4 at most");
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_output_count(out, 1);
        if (ncnn_) {
            expect_input_count(in, 1, 1);
            const auto [lifted, repeats] = ncnn_repeats(in[0].shape);
            out[0] = TensorDesc(tile_plan(lifted, repeats).out_shape, in[0].dtype);
            return;
        }
        expect_input_count(in, 2, 2);
        check(in[1].shape.size() == 1, value_name(), " must be 1-D, got ", shape_str(in[1].shape));
        if (!in[1].value.defined() && dynamic_) {
            // Placeholder: the input lifted to the target rank; forward() gives the real shape.
            Shape s = in[0].shape;
            if (static_cast<int64_t>(s.size()) < in[1].shape[0])
                s.insert(s.begin(), static_cast<size_t>(in[1].shape[0]) - s.size(), 1);
            out[0] = TensorDesc(s, in[0].dtype);
            return;
        }
        out[0] = TensorDesc(plan(in[0].shape, nd::known_value(in[1], value_name())).out_shape, in[0].dtype);
    }

    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        if (ncnn_) {
            const auto [lifted, repeats] = ncnn_repeats(in[0].shape());
            nd::broadcast_copy(tile_plan(lifted, repeats), in[0].view_as(lifted, in[0].dtype()), out[0], ctx);
            return;
        }
        const BroadcastPlan p = plan(in[0].shape(), in[1]);
        if (out[0].shape() != p.out_shape) out[0] = Tensor(p.out_shape, in[0].dtype()); // dynamic values only
        nd::broadcast_copy(p, in[0], out[0], ctx);
    }

    // One copy over the broadcast's merged axes, the input's strides 0 where it repeats.
    bool element_moves(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                       ElementMoves& moves) const override
    {
        BroadcastPlan p;
        if (ncnn_) {
            const auto [lifted, repeats] = ncnn_repeats(in[0].shape);
            p = tile_plan(lifted, repeats);
        } else {
            if (!in[1].value.defined()) return false;
            p = plan(in[0].shape, in[1].value);
        }
        StridedCopy c = dense_copy(0, 0, p.dims);
        c.in_strides = p.strides[0];
        moves.copies.push_back(std::move(c));
        return true;
    }

private:
    const char* value_name() const { return stretch_ == Stretch::Tile ? "repeats (input 1)" : "shape (input 1)"; }

    // The broadcast that makes the output (for Tile, over the lifted shapes;
    // its out_shape is then the tiled shape's layout, the same elements).
    BroadcastPlan plan(const Shape& d, const Tensor& value) const
    {
        if (stretch_ == Stretch::Expand)
            return broadcast_to(d, broadcast_numpy(d, nd::shape_value(value, value_name())).out_shape);
        const std::vector<int64_t> r = nd::int_values(value, value_name());
        check(r.size() == d.size(), "repeats (input 1) has ", r.size(), " values for a rank ", d.size(), " input");
        return tile_plan(d, r);
    }

    // Tiling d by r (one repeat count per axis).
    static BroadcastPlan tile_plan(const Shape& d, const std::vector<int64_t>& r)
    {
        Shape lifted, stretched, tiled;
        for (size_t k = 0; k < d.size(); ++k) {
            check(r[k] >= 0, "repeats ", shape_str(r), " has a negative value");
            lifted.insert(lifted.end(), {1, d[k]});
            stretched.insert(stretched.end(), {r[k], d[k]});
            tiled.push_back(d[k] * r[k]);
        }
        if (d.empty()) lifted = stretched = Shape{1};
        BroadcastPlan p = broadcast_to(lifted, stretched);
        p.out_shape = tiled;
        return p;
    }

    // ncnn's params as (the input's shape lifted to the output's rank, the repeats per axis).
    std::pair<Shape, std::vector<int64_t>> ncnn_repeats(const Shape& d) const
    {
        const size_t rank = d.size();
        check(rank >= 1 && rank <= 4, "ncnn's Tile takes rank 1-4, got ", shape_str(d));
        if (ncnn_repeats_.empty()) {
            std::vector<int64_t> r(rank, 1);
            r[static_cast<size_t>(nd::normalize_axis(ncnn_axis_, static_cast<int64_t>(rank), "axis (param 0)"))] = ncnn_tiles_;
            return {d, r};
        }
        const size_t out_rank = std::max(rank, ncnn_repeats_.size());
        Shape lifted = d;
        if (rank == 3 && out_rank == 4)
            lifted = {d[0], 1, d[1], d[2]};
        else
            lifted.insert(lifted.begin(), out_rank - rank, 1);
        std::vector<int64_t> r(out_rank - ncnn_repeats_.size(), 1);
        r.insert(r.end(), ncnn_repeats_.begin(), ncnn_repeats_.end());
        return {lifted, r};
    }

    Stretch stretch_;
    bool dynamic_ = false;
    bool ncnn_ = false; // ncnn's params, one input
    int ncnn_axis_ = 0;
    int64_t ncnn_tiles_ = 1;
    std::vector<int64_t> ncnn_repeats_;
};

} // namespace

std::unique_ptr<Op> make_tile() { return std::make_unique<BroadcastCopy>(Stretch::Tile); }
std::unique_ptr<Op> make_expand() { return std::make_unique<BroadcastCopy>(Stretch::Expand); }

} // namespace kestrel
