// Concat (ncnn): joins N inputs along param 0=axis (default 0; counted
// outermost first over the ncnn rank, negative from the end). Inputs share rank,
// dtype and every other dim. Any dtype: the kernel copies bytes.
#include <cstring>

#include "ops/builtin_ops.h"
#include "ops/op_util.h"

namespace kestrel {

namespace {

class Concat : public Op {
public:
    void load_param(const ParamDict& pd) override { axis_ = pd.get_int(0, 0); }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        check(!in.empty(), "expects at least 1 input, got 0");
        expect_output_count(out, 1);
        const Shape& s0 = in[0].shape;
        const int rank = ncnn_dims(s0).dims;
        const int axis = positive_axis(rank);
        Shape result = s0;
        result[axis] = 0;
        for (size_t i = 0; i < in.size(); ++i) {
            const Shape& s = in[i].shape;
            check(in[i].dtype == in[0].dtype, "input ", i, " is ", dtype_name(in[i].dtype), " but input 0 is ",
                  dtype_name(in[0].dtype));
            check(s.size() == s0.size(), "input ", i, " has rank ", s.size(), " ", shape_str(s), " but input 0 has rank ",
                  s0.size(), " ", shape_str(s0));
            for (int k = 0; k < rank; ++k)
                check(k == axis || s[k] == s0[k], "input ", i, " ", shape_str(s), " differs from input 0 ",
                      shape_str(s0), " outside the concat axis ", axis_);
            result[axis] += s[axis];
        }
        out[0] = TensorDesc{};
        out[0].shape = result;
        out[0].dtype = in[0].dtype;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& s0 = in[0].shape();
        const int axis = positive_axis(static_cast<int>(s0.size()));
        const size_t esize = dtype_size(in[0].dtype());
        int64_t outer = 1;
        for (int k = 0; k < axis; ++k) outer *= s0[k];
        // Per input: bytes of one outer slice; the output slice is their sum.
        std::vector<size_t> chunk(in.size());
        size_t out_chunk = 0;
        for (size_t i = 0; i < in.size(); ++i) {
            chunk[i] = static_cast<size_t>(in[i].numel() / std::max<int64_t>(outer, 1)) * esize;
            out_chunk += chunk[i];
        }
        if (outer == 0 || out_chunk == 0) return;
        uint8_t* dst = static_cast<uint8_t*>(out[0].raw());
        ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
                uint8_t* p = dst + static_cast<size_t>(o) * out_chunk;
                for (size_t i = 0; i < in.size(); ++i) {
                    if (chunk[i] == 0) continue;
                    std::memcpy(p, static_cast<const uint8_t*>(in[i].raw()) + static_cast<size_t>(o) * chunk[i], chunk[i]);
                    p += chunk[i];
                }
            }
        });
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
