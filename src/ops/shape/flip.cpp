// Flip (ncnn): input 0 (rank 1-4, any dtype) reversed along 0=axes (int
// array, outermost first as ncnn counts, negative from the end; empty: the
// input unchanged). A strided copy that walks the flipped axes backwards.
#include <algorithm>

#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

class Flip : public Op {
public:
    void load_param(const ParamDict& pd) override { axes_ = pd.get_ints(0); }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        ncnn_dims(in[0].shape); // rank 1-4
        flipped(in[0].shape);   // axes in range
        out[0] = in[0];
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& d = in[0].shape();
        const std::vector<bool> flip = flipped(d);
        std::vector<int64_t> strides = nd::dense_strides(d);
        int64_t start = 0;
        for (size_t k = 0; k < d.size(); ++k)
            if (flip[k] && d[k] > 0) {
                start += (d[k] - 1) * strides[k];
                strides[k] = -strides[k];
            }
        nd::strided_copy(in[0].raw(), start, d, strides, out[0].raw(), dtype_size(in[0].dtype()), &ctx);
    }

private:
    std::vector<bool> flipped(const Shape& d) const
    {
        std::vector<bool> flip(d.size(), false);
        for (int a : axes_) flip[static_cast<size_t>(nd::normalize_axis(a, static_cast<int64_t>(d.size()), "axis (param 0)"))] = true;
        return flip;
    }

    std::vector<int> axes_;
};

} // namespace

std::unique_ptr<Op> make_flip() { return std::make_unique<Flip>(); }

} // namespace kestrel
