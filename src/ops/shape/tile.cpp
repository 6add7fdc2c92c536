// TileND (ONNX Tile): repeats input 0 (any rank and dtype) repeats[k] times
// along axis k; input 1 repeats is a 1-D integer tensor with one value >= 0 per
// axis. Param 20=dynamic (see nd_common.cpp). Runs on the broadcast engine:
// (d0, d1, ..) seen as (1, d0, 1, d1, ..) is broadcast to (r0, d0, r1, d1, ..).
#include "core/dtype_dispatch.h"
#include "kernels/broadcast.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class TileND : public Op {
public:
    void load_param(const ParamDict& pd) override { dynamic_ = pd.get_int(20, 0) != 0; }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        if (!in[1].value.defined() && dynamic_) {
            out[0] = TensorDesc(in[0].shape, in[0].dtype); // placeholder: forward() gives the real shape
            return;
        }
        out[0] = TensorDesc(target(in[0].shape, nd::known_value(in[1], "repeats (input 1)")), in[0].dtype);
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& d = in[0].shape();
        const Shape s = target(d, in[1]);
        if (out[0].shape() != s) out[0] = Tensor(s, in[0].dtype());
        Shape lifted, stretched;
        for (size_t k = 0; k < d.size(); ++k) {
            lifted.insert(lifted.end(), {1, d[k]});
            stretched.insert(stretched.end(), {d[k] == 0 ? 0 : s[k] / d[k], d[k]});
        }
        if (d.empty()) lifted = stretched = Shape{1};
        const BroadcastPlan plan = broadcast_to(lifted, stretched);
        nd::broadcast_copy(plan, in[0], out[0], ctx);
    }

private:
    static Shape target(const Shape& d, const Tensor& repeats)
    {
        const std::vector<int64_t> r = nd::int_values(repeats, "repeats (input 1)");
        check(r.size() == d.size(), "repeats (input 1) has ", r.size(), " values for a rank ", d.size(), " input");
        Shape s(d.size());
        for (size_t k = 0; k < d.size(); ++k) {
            check(r[k] >= 0, "repeats ", shape_str(r), " has a negative value");
            s[k] = d[k] * r[k];
        }
        return s;
    }
    bool dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_nd_tile() { return std::make_unique<TileND>(); }

} // namespace kestrel
