// Cast: converts input 0 to another dtype, element by element. The target:
//   1=type_to   ncnn's codes: 1 float32, 2 float16, 3 int8, 4 bfloat16, 0
//               (the default) the input's own (0=type_from, the same codes,
//               is checked when not 0);
//   2=to        any dtype, as a kestrel::DType code (ONNX's Cast);
//   input 1     without 1 and 2: its dtype (ONNX's CastLike; its values are
//               not read).
// Float -> integer truncates toward zero (out-of-range values saturate, NaN
// gives 0); anything -> bool is "!= 0"; float16/bfloat16 round to nearest even.
#include <algorithm>

#include "core/dtype_dispatch.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

// ncnn's Cast codes: 0 (type_from only) as it comes, 1 float32, 2 float16, 3 int8, 4 bfloat16.
constexpr DType kNcnnCastTypes[5] = {DType::F32, DType::F32, DType::F16, DType::I8, DType::BF16};

class Cast : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        if (pd.has(2)) {
            to_ncnn_ = -1;
            const int code = pd.get_int(2, 0);
            check(code >= 0 && code <= static_cast<int>(DType::Bool), "to (param 2) ", code, " is not a dtype code 0..12");
            to_ = static_cast<DType>(code);
            return;
        }
        const int from = pd.get_int(0, 0), to = pd.get_int(1, 0);
        check(from >= 0 && from <= 4, "type_from (param 0) must be 0..4, got ", from);
        check(to >= 0 && to <= 4, "type_to (param 1) must be 0..4 (same, float32, float16, int8, bfloat16), got ", to);
        from_ = from;
        to_ncnn_ = to;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 2);
        expect_output_count(out, 1);
        if (from_ != 0)
            check(in[0].dtype == kNcnnCastTypes[from_], "type_from (param 0) says ", dtype_name(kNcnnCastTypes[from_]),
                  " but the input is ", dtype_name(in[0].dtype));
        DType to = to_;
        if (to_ncnn_ >= 0) to = to_ncnn_ > 0 ? kNcnnCastTypes[to_ncnn_] : in.size() == 2 ? in[1].dtype : in[0].dtype;
        out[0] = TensorDesc(in[0].shape, to);
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
    int from_ = 0;
    int to_ncnn_ = -1; // ncnn's type_to code; -1: to_ (param 2)
    DType to_ = DType::F32;
};

} // namespace

std::unique_ptr<Op> make_cast() { return std::make_unique<Cast>(); }

} // namespace kestrel
