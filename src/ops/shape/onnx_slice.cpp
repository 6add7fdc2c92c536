// SliceND (ONNX Slice, opset 10+ form): input 0 data (any rank and dtype),
// inputs 1 starts, 2 ends, 3 axes (optional: 0..n-1), 4 steps (optional: 1s),
// all 1-D integer tensors of one length. Per ONNX: negative starts/ends count
// from the end, then are clamped ([0, dim] for positive steps, [-1, dim-1] for
// negative ones); steps may be negative but not 0; axes must not repeat.
// Param 20=dynamic (see nd_common.cpp). Older attribute forms are converted to
// constant inputs.
#include <algorithm>
#include <cstdint>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

struct SliceSpec {
    Shape shape;                  // output shape
    int64_t offset = 0;           // element offset of the first output element
    std::vector<int64_t> strides; // source element stride per output axis
};

class SliceND : public Op {
public:
    void load_param(const ParamDict& pd) override { dynamic_ = pd.get_int(20, 0) != 0; }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 3, 5);
        expect_output_count(out, 1);
        bool known = true;
        for (size_t i = 1; i < in.size(); ++i) known = known && in[i].value.defined();
        if (!known && dynamic_) {
            out[0] = TensorDesc(in[0].shape, in[0].dtype); // placeholder: forward() gives the real shape
            return;
        }
        std::vector<Tensor> values;
        static const char* const names[] = {"", "starts (input 1)", "ends (input 2)", "axes (input 3)", "steps (input 4)"};
        for (size_t i = 1; i < in.size(); ++i) values.push_back(nd::known_value(in[i], names[i]));
        out[0] = TensorDesc(spec(in[0].shape, values).shape, in[0].dtype);
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const SliceSpec s = spec(in[0].shape(), std::vector<Tensor>(in.begin() + 1, in.end()));
        if (out[0].shape() != s.shape) out[0] = Tensor(s.shape, in[0].dtype());
        nd::strided_copy(in[0].raw(), s.offset, s.shape, s.strides, out[0].raw(), dtype_size(in[0].dtype()), &ctx);
    }

private:
    static SliceSpec spec(const Shape& d, const std::vector<Tensor>& v)
    {
        const int64_t rank = static_cast<int64_t>(d.size());
        const std::vector<int64_t> starts = nd::int_values(v[0], "starts (input 1)");
        const std::vector<int64_t> ends = nd::int_values(v[1], "ends (input 2)");
        const size_t n = starts.size();
        check(ends.size() == n, "starts has ", n, " values but ends has ", ends.size());
        std::vector<int64_t> axes, steps(n, 1);
        if (v.size() > 2 && v[2].defined() && v[2].numel() > 0) {
            axes = nd::int_values(v[2], "axes (input 3)");
            check(axes.size() == n, "axes has ", axes.size(), " values but starts has ", n);
        } else {
            check(static_cast<int64_t>(n) <= rank, n, " starts for a rank ", rank, " input");
            for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
        }
        if (v.size() > 3 && v[3].defined()) {
            steps = nd::int_values(v[3], "steps (input 4)");
            check(steps.size() == n, "steps has ", steps.size(), " values but starts has ", n);
        }
        SliceSpec s;
        s.shape = d;
        s.strides = nd::dense_strides(d);
        std::vector<bool> seen(d.size(), false);
        for (size_t i = 0; i < n; ++i) {
            const int a = nd::normalize_axis(axes[i], rank, "axis");
            check(!seen[static_cast<size_t>(a)], "axes repeat axis ", a);
            seen[static_cast<size_t>(a)] = true;
            const int64_t dim = d[static_cast<size_t>(a)], step = steps[i];
            check(step != 0, "step for axis ", a, " is 0");
            int64_t b = starts[i], e = ends[i];
            if (b < 0) b += dim;
            if (e < 0) e += dim;
            int64_t len;
            if (step > 0) {
                b = std::clamp<int64_t>(b, 0, dim);
                e = std::clamp<int64_t>(e, 0, dim);
                len = e > b ? (e - b - 1) / step + 1 : 0;
            } else {
                b = std::clamp<int64_t>(b, -1, dim - 1);
                e = std::clamp<int64_t>(e, -1, dim - 1);
                const int64_t mag = step == INT64_MIN ? INT64_MAX : -step;
                len = b > e ? (b - e - 1) / mag + 1 : 0;
            }
            s.shape[static_cast<size_t>(a)] = len;
            if (len > 0) s.offset += b * s.strides[static_cast<size_t>(a)];
            s.strides[static_cast<size_t>(a)] *= step;
        }
        return s;
    }
    bool dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_nd_slice() { return std::make_unique<SliceND>(); }

} // namespace kestrel
