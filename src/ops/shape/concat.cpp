// Concat (ncnn): joins N inputs along param 0=axis (default 0; counted
// outermost first over the ncnn rank, negative from the end). Inputs share rank,
// dtype and every other dim. Any dtype: the kernel copies bytes.
#include "ops/registry.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

// ConcatND (nd_concat.cpp) restricted to ncnn's ranks and axis convention.
class Concat : public Op {
public:
    void load_param(const ParamDict& pd) override { axis_ = pd.get_int(0, 0); }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        check(!in.empty(), "expects at least 1 input, got 0");
        expect_output_count(out, 1);
        out[0] = nd::concat_desc(in, positive_axis(ncnn_dims(in[0].shape).dims));
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        nd::concat_copy(in, positive_axis(static_cast<int>(in[0].rank())), out[0], ctx);
    }

private:
    int positive_axis(int rank) const
    {
        const int a = axis_ < 0 ? axis_ + rank : axis_;
        check(a >= 0 && a < rank, "axis (param 0) ", axis_, " is out of range for rank ", rank, " inputs");
        return a;
    }

    int axis_ = 0;
};

} // namespace

std::unique_ptr<Op> make_concat() { return std::make_unique<Concat>(); }

} // namespace kestrel
