// ConcatND (ONNX Concat): joins the inputs (rank >= 1, one dtype, any rank)
// along 0=axis (negative from the end); other dims must match. Empty inputs
// are allowed. (ncnn's Concat is limited to ranks 1-4.)
#include <cstring>

#include "ops/nd_common.h"
#include "ops/op_util.h"

namespace kestrel {

namespace {

class ConcatND : public Op {
public:
    void load_param(const ParamDict& pd) override { axis_ = pd.get_int(0, 0); }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        check(!in.empty(), "expects at least 1 input, got 0");
        expect_output_count(out, 1);
        const Shape& s0 = in[0].shape;
        const int a = nd::normalize_axis(axis_, static_cast<int64_t>(s0.size()), "axis (param 0)");
        Shape s = s0;
        s[static_cast<size_t>(a)] = 0;
        for (size_t i = 0; i < in.size(); ++i) {
            check(in[i].dtype == in[0].dtype, "input ", i, " is ", dtype_name(in[i].dtype), " but input 0 is ",
                  dtype_name(in[0].dtype));
            check(in[i].shape.size() == s0.size(), "input ", i, " ", shape_str(in[i].shape),
                  " has another rank than input 0 ", shape_str(s0));
            for (size_t k = 0; k < s0.size(); ++k)
                check(static_cast<int>(k) == a || in[i].shape[k] == s0[k], "input ", i, " ", shape_str(in[i].shape),
                      " differs from input 0 ", shape_str(s0), " outside the concat axis ", a);
            s[static_cast<size_t>(a)] += in[i].shape[static_cast<size_t>(a)];
        }
        out[0] = TensorDesc(s, in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& s0 = in[0].shape();
        const int a = nd::normalize_axis(axis_, in[0].rank(), "axis (param 0)");
        const int64_t outer = nd::dims_product(s0, 0, static_cast<size_t>(a));
        const size_t es = dtype_size(in[0].dtype());
        std::vector<size_t> chunk(in.size());
        size_t out_chunk = 0;
        for (size_t i = 0; i < in.size(); ++i) {
            chunk[i] = static_cast<size_t>(nd::dims_product(in[i].shape(), static_cast<size_t>(a), s0.size())) * es;
            out_chunk += chunk[i];
        }
        if (outer == 0 || out_chunk == 0) return;
        uint8_t* dst = static_cast<uint8_t*>(out[0].raw());
        auto body = [&](int64_t o0, int64_t o1) {
            for (int64_t o = o0; o < o1; ++o) {
                uint8_t* p = dst + static_cast<size_t>(o) * out_chunk;
                for (size_t i = 0; i < in.size(); ++i) {
                    if (chunk[i] == 0) continue;
                    std::memcpy(p, static_cast<const uint8_t*>(in[i].raw()) + static_cast<size_t>(o) * chunk[i], chunk[i]);
                    p += chunk[i];
                }
            }
        };
        if (outer > 1 && static_cast<int64_t>(out_chunk) * outer >= 65536)
            ctx.parallel_for(outer, body);
        else
            body(0, outer);
    }

private:
    int axis_ = 0;
};

} // namespace

std::unique_ptr<Op> make_nd_concat() { return std::make_unique<ConcatND>(); }

} // namespace kestrel
