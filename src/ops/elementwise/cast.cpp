// CastND (ONNX Cast / CastLike): converts input 0 to another dtype, element by
// element: to param 0=to (kestrel::DType code) with one input, or to input 1's
// dtype with two (CastLike; input 1's values are not read). Float -> integer
// truncates toward zero (out-of-range values saturate, NaN gives 0); anything
// -> bool is "!= 0"; float16/bfloat16 round to nearest even.
#include <algorithm>

#include "core/dtype_dispatch.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class CastND : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        const int code = pd.get_int(0, static_cast<int>(DType::F32));
        check(code >= 0 && code <= static_cast<int>(DType::Bool), "to (param 0) ", code, " is not a dtype code 0..12");
        to_ = static_cast<DType>(code);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 2);
        expect_output_count(out, 1);
        out[0] = TensorDesc(in[0].shape, in.size() == 2 ? in[1].dtype : to_);
    }
    // Same-size element types convert element i into slot i: safe in place.
    bool supports_inplace() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const DType from = in[0].dtype(), to = out[0].dtype();
        const int64_t n = in[0].numel();
        if (from == to) {
            if (out[0].raw() != in[0].raw()) std::copy_n(static_cast<const uint8_t*>(in[0].raw()), in[0].nbytes(),
                                                         static_cast<uint8_t*>(out[0].raw()));
            return;
        }
        visit_dtype(from, [&](auto src_tag) {
            using S = typename decltype(src_tag)::type;
            visit_dtype(to, [&](auto dst_tag) {
                using D = typename decltype(dst_tag)::type;
                const S* s = in[0].data<S>();
                D* d = out[0].data<D>();
                auto body = [&](int64_t b, int64_t e) {
                    for (int64_t i = b; i < e; ++i) d[i] = convert_value<D>(s[i]);
                };
                // In place happens only for equal element sizes, so chunks never overlap.
                if (n >= 65536)
                    ctx.parallel_for(n, body);
                else
                    body(0, n);
            });
        });
    }

private:
    DType to_ = DType::F32;
};

} // namespace

std::unique_ptr<Op> make_nd_cast() { return std::make_unique<CastND>(); }

} // namespace kestrel
