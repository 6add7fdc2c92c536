// Cast: converts input 0 to another dtype, element by element. The target:
//   1=type_to   ncnn's codes: 1 float32, 2 float16, 3 int8, 4 bfloat16, 0
//               (the default) the input's own (0=type_from, the same codes,
//               is checked when not 0);
//   2=to        any dtype, as a kestrel::DType code (ONNX's Cast), strings too;
//   input 1     without 1 and 2: its dtype (ONNX's CastLike; its values are
//               not read).
// Float -> integer truncates toward zero (out-of-range values saturate, NaN
// gives 0); anything -> bool is "!= 0"; float16/bfloat16 round to nearest even.
// To strings: integers in decimal, floats in the fewest significant digits
// that read back as the same value ("NaN", "INF", "-INF"), bools "1" / "0".
// From strings: the number the whole string spells (C's strtod/strtoll
// syntax: "inf", "NaN", "+INF", hex floats; "true" / "false" for bools);
// anything else is an error naming the string.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include "core/dtype_dispatch.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

// ncnn's Cast codes: 0 (type_from only) as it comes, 1 float32, 2 float16, 3 int8, 4 bfloat16.
constexpr DType kNcnnCastTypes[5] = {DType::F32, DType::F32, DType::F16, DType::I8, DType::BF16};

// The shortest "%.*g" text of `v` that reads back as `v` (as T).
template <class T> std::string shortest_text(T v)
{
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
    char text[40];
    for (int digits = 1; digits <= std::numeric_limits<T>::max_digits10; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(v));
        if (static_cast<T>(std::strtod(text, nullptr)) == v) break;
    }
    return text;
}

template <class S> std::string to_text(S v)
{
    if constexpr (std::is_same_v<S, bool>) return v ? "1" : "0";
    else if constexpr (std::is_same_v<S, double>) return shortest_text(v);
    else if constexpr (is_float_storage_v<S>) return shortest_text(static_cast<float>(to_double(v)));
    else return std::to_string(v);
}

// `text` read as a D; throws when the whole of it is no number.
template <class D> D from_text(const std::string& text)
{
    const char* s = text.c_str();
    char* end = nullptr;
    if constexpr (std::is_same_v<D, bool>) {
        if (strcasecmp(s, "true") == 0) return true;
        if (strcasecmp(s, "false") == 0) return false;
    }
    D value{};
    if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool>) {
        if constexpr (std::is_signed_v<D>) {
            const long long v = std::strtoll(s, &end, 10);
            value = saturate_cast<D>(static_cast<double>(v));
            if (v >= std::numeric_limits<D>::lowest() && v <= std::numeric_limits<D>::max()) value = static_cast<D>(v);
        } else {
            const unsigned long long v = std::strtoull(s, &end, 10);
            value = v > std::numeric_limits<D>::max() ? std::numeric_limits<D>::max() : static_cast<D>(v);
            check(text.find('-') == std::string::npos, "string '", text, "' is negative, the target unsigned");
        }
    } else {
        value = convert_value<D>(std::strtod(s, &end));
    }
    check(end != s && *end == '\0' && !std::strchr(" \t\n", *s), "string '", text, "' is not a number");
    return value;
}

class Cast : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        if (pd.has(2)) {
            to_ncnn_ = -1;
            const int code = pd.get_int(2, 0);
            check((code >= 0 && code <= static_cast<int>(DType::Bool)) || code == static_cast<int>(DType::String),
                  "to (param 2) ", code, " is not a dtype code 0..12 or 15 (string)");
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
    bool takes_strings() const override { return true; }
    // Same-size element types convert element i into slot i: safe in place.
    bool supports_inplace() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const DType from = in[0].dtype(), to = out[0].dtype();
        const int64_t n = in[0].numel();
        if (from == DType::String || to == DType::String) return convert_strings(in[0], out[0]);
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
    static void convert_strings(const Tensor& x, Tensor& y)
    {
        const int64_t n = x.numel();
        if (x.dtype() == y.dtype()) {
            std::copy_n(x.data<std::string>(), n, y.data<std::string>());
            return;
        }
        if (y.dtype() == DType::String) {
            visit_dtype(x.dtype(), [&](auto tag) {
                using S = typename decltype(tag)::type;
                for (int64_t i = 0; i < n; ++i) y.data<std::string>()[i] = to_text(x.data<S>()[i]);
            });
            return;
        }
        visit_dtype(y.dtype(), [&](auto tag) {
            using D = typename decltype(tag)::type;
            for (int64_t i = 0; i < n; ++i) y.data<D>()[i] = from_text<D>(x.data<std::string>()[i]);
        });
    }

    int from_ = 0;
    int to_ncnn_ = -1; // ncnn's type_to code; -1: to_ (param 2)
    DType to_ = DType::F32;
};

} // namespace

std::unique_ptr<Op> make_cast() { return std::make_unique<Cast>(); }

} // namespace kestrel
