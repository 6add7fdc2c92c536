// Tile and Expand: input 0 (any rank and dtype) copied to a larger shape by
// the one broadcast engine (kernels/broadcast.h), the target given as the
// values of input 1 (1-D integers). 20=dynamic=1 accepts values known only
// at run time (see common/tensor_util.cpp).
//   Tile    21=1 (ONNX's Tile): input 1 repeats, one value >= 0 per axis:
//           (d0, d1, ..) seen as (1, d0, 1, d1, ..) is broadcast to
//           (r0, d0, r1, d1, ..). ncnn's own params (0=axis, 1=tiles,
//           2=repeats) are not read yet: such a layer is refused clearly.
//   Expand  (ONNX's): input 1 a shape, numpy's rules: the output shape is
//           the broadcast of both (a 1 in the shape keeps the input's dim).
#include "core/dtype_dispatch.h"
#include "kernels/broadcast.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

enum class Stretch { Tile, Expand };

class BroadcastCopy : public Op {
public:
    explicit BroadcastCopy(Stretch stretch) : stretch_(stretch) {}

    void load_param(const ParamDict& pd) override
    {
        if (stretch_ == Stretch::Tile)
            check(pd.get_int(21, 0) == 1,
                  "ncnn's Tile params (0=axis, 1=tiles, 2=repeats) are not supported yet; the repeats-input form needs 21=1");
        dynamic_ = pd.get_int(20, 0) != 0;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
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
        const BroadcastPlan p = plan(in[0].shape(), in[1]);
        if (out[0].shape() != p.out_shape) out[0] = Tensor(p.out_shape, in[0].dtype()); // dynamic values only
        nd::broadcast_copy(p, in[0], out[0], ctx);
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

    Stretch stretch_;
    bool dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_tile() { return std::make_unique<BroadcastCopy>(Stretch::Tile); }
std::unique_ptr<Op> make_expand() { return std::make_unique<BroadcastCopy>(Stretch::Expand); }

} // namespace kestrel
