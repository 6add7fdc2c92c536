#include "ops/elementwise/typed_ops.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <tuple>

#include "core/dtype_dispatch.h"
#include "kernels/elementwise_ops.h"
#include "kestrel/error.h"

namespace kestrel::typed_ops {

namespace {

// ---------------------------------------------------------------------------
// dtype categories

enum : unsigned {
    kF = 1, // float16, bfloat16, float32, float64
    kS = 2, // signed integers
    kU = 4, // unsigned integers
    kB = 8, // bool
    kI = kS | kU,
    kN = kF | kI,
    kAny = kN | kB,
};

template <class T> constexpr bool is_half_v = std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>;

template <class T> constexpr unsigned category()
{
    if constexpr (is_half_v<T> || std::is_floating_point_v<T>) return kF;
    else if constexpr (std::is_same_v<T, bool>) return kB;
    else if constexpr (std::is_signed_v<T>) return kS;
    else return kU;
}

unsigned category_of(DType t)
{
    return visit_dtype(t, [](auto tag) { return category<typename decltype(tag)::type>(); });
}

const char* category_text(unsigned mask)
{
    switch (mask) {
    case kF: return "float types";
    case kB: return "bool";
    case kU: return "unsigned integers";
    case kI: return "integers";
    case kN: return "numeric types";
    case kF | kS: return "float and signed integer types";
    default: return "any type";
    }
}

// An op entry: functor, accepted input categories, whether the output is bool,
// and whether it gives the same bits for signed and unsigned integers of one
// width (then unsigned and bool inputs run the signed kernel: fewer instances).
template <class F, unsigned Mask, bool BoolOut = false, bool SignAgnostic = false> struct Def {
    using Fn = F;
    static constexpr unsigned mask = Mask;
    static constexpr bool bool_out = BoolOut;
    static constexpr bool sign_agnostic = SignAgnostic;
};
constexpr bool kBoolOut = true;
constexpr bool kAgnostic = true;


template <class F> F make_functor(const OpParams& p)
{
    if constexpr (std::is_constructible_v<F, const OpParams&>) return F(p);
    else return F{};
}

// ---------------------------------------------------------------------------
// ONNX functors the shared header does not have

// numpy maximum / minimum: a NaN in either operand gives NaN.
struct NanMax {
    template <class T> T operator()(T a, T b) const
    {
        if constexpr (std::is_floating_point_v<T>)
            if (std::isnan(b)) return b;
        return a < b ? b : a;
    }
};
struct NanMin {
    template <class T> T operator()(T a, T b) const
    {
        if constexpr (std::is_floating_point_v<T>)
            if (std::isnan(b)) return b;
        return b < a ? b : a;
    }
};

// PRelu: x < 0 ? slope * x : x.
struct PRelu {
    template <class T> T operator()(T x, T slope) const
    {
        if constexpr (std::is_floating_point_v<T>) return x < T(0) ? x * slope : x;
        else if constexpr (std::is_signed_v<T>) return x < T(0) ? ew::wrap_mul(x, slope) : x;
        else return x;
    }
};

// Pow with an exponent of another dtype (converted to int64 when both are
// integers, else to double); the result has the base's dtype.
struct PowMixed {
    template <class A, class B> A operator()(A a, B b) const
    {
        if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
            static_assert(std::is_same_v<B, int64_t>, "integer exponents are widened to int64");
            if (b < 0) {
                if (a == A(1)) return A(1);
                if constexpr (std::is_signed_v<A>)
                    if (a == A(-1)) return (b % 2 == 0) ? A(1) : A(-1);
                return A(0);
            }
            A result = 1, base = a;
            for (auto e = static_cast<uint64_t>(b); e != 0; e >>= 1) {
                if (e & 1u) result = ew::wrap_mul(result, base);
                base = ew::wrap_mul(base, base);
            }
            return result;
        } else {
            return convert_value<A>(std::pow(to_double(a), to_double(b)));
        }
    }
};

// Mean's last step: (accumulated + x) / count.
struct AddDiv {
    double n = 1;
    explicit AddDiv(const OpParams& p) : n(p.alpha) {}
    template <class T> T operator()(T a, T b) const { return (a + b) / static_cast<T>(n); }
};

// Table placeholder: op(a, b) runs as op Target(b, a) (Greater as Less, ...),
// one kernel fewer per dtype.
template <int Target> struct SwappedOp {
};
template <class F> struct SwapTarget {
    static constexpr int value = -1;
};
template <int Target> struct SwapTarget<SwappedOp<Target>> {
    static constexpr int value = Target;
};

// --- unary

struct Abs {
    template <class T> T operator()(T x) const
    {
        if constexpr (std::is_floating_point_v<T>) return std::fabs(x);
        else if constexpr (std::is_signed_v<T>) return x < T(0) ? ew::wrap_neg(x) : x;
        else return x;
    }
};
struct Neg {
    template <class T> T operator()(T x) const
    {
        if constexpr (std::is_floating_point_v<T>) return -x;
        else return ew::wrap_neg(x);
    }
};
// numpy sign: NaN stays NaN.
struct Sign {
    template <class T> T operator()(T x) const
    {
        if constexpr (std::is_floating_point_v<T>) return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);
        else if constexpr (std::is_signed_v<T>) return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
        else return x > T(0) ? T(1) : T(0);
    }
};
struct Erf {
    template <class T> T operator()(T x) const { return std::erf(x); }
};
struct IsNaN {
    template <class T> bool operator()(T x) const { return std::isnan(x); }
};
struct IsInf {
    bool negative = true, positive = true;
    explicit IsInf(const OpParams& p) : negative(p.flag_a != 0), positive(p.flag_b != 0) {}
    template <class T> bool operator()(T x) const
    {
        return std::isinf(x) && (x < T(0) ? negative : positive);
    }
};
struct Softsign {
    template <class T> T operator()(T x) const { return x / (T(1) + std::fabs(x)); }
};
// log(1 + exp(x)) without overflow.
struct Softplus {
    template <class T> T operator()(T x) const
    {
        return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    }
};
struct Relu {
    template <class T> T operator()(T x) const { return x < T(0) ? T(0) : x; } // keeps NaN
};
struct LeakyRelu {
    double alpha;
    explicit LeakyRelu(const OpParams& p) : alpha(p.alpha) {}
    template <class T> T operator()(T x) const { return x < T(0) ? static_cast<T>(alpha) * x : x; }
};
struct Elu {
    double alpha;
    explicit Elu(const OpParams& p) : alpha(p.alpha) {}
    template <class T> T operator()(T x) const { return x < T(0) ? static_cast<T>(alpha) * std::expm1(x) : x; }
};
struct Selu {
    double alpha, gamma;
    explicit Selu(const OpParams& p) : alpha(p.alpha), gamma(p.beta) {}
    template <class T> T operator()(T x) const
    {
        const T g = static_cast<T>(gamma);
        return x > T(0) ? g * x : g * static_cast<T>(alpha) * std::expm1(x);
    }
};
// max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
struct Celu {
    double alpha;
    explicit Celu(const OpParams& p) : alpha(p.alpha) {}
    template <class T> T operator()(T x) const
    {
        const T a = static_cast<T>(alpha);
        return x > T(0) ? x : a * std::expm1(x / a);
    }
};
struct ThresholdedRelu {
    double alpha;
    explicit ThresholdedRelu(const OpParams& p) : alpha(p.alpha) {}
    template <class T> T operator()(T x) const { return x > static_cast<T>(alpha) ? x : T(0); }
};
struct HardSigmoid {
    double alpha, beta;
    explicit HardSigmoid(const OpParams& p) : alpha(p.alpha), beta(p.beta) {}
    template <class T> T operator()(T x) const
    {
        const T y = static_cast<T>(alpha) * x + static_cast<T>(beta);
        return y < T(0) ? T(0) : (y > T(1) ? T(1) : y);
    }
};
// x * max(0, min(1, x / 6 + 1/2))
struct HardSwish {
    template <class T> T operator()(T x) const
    {
        const T y = x / T(6) + T(0.5);
        return x * (y < T(0) ? T(0) : (y > T(1) ? T(1) : y));
    }
};
struct Gelu {
    bool tanh_approx = false;
    explicit Gelu(const OpParams& p) : tanh_approx(p.flag_a != 0) {}
    template <class T> T operator()(T x) const
    {
        if (tanh_approx) {
            const T k = static_cast<T>(0.79788456080286535588); // sqrt(2 / pi)
            return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
        }
        return T(0.5) * x * (T(1) + std::erf(x * static_cast<T>(0.70710678118654752440)));
    }
};
// x < -lambd: x + bias; x > lambd: x - bias; else 0 (integers computed in double).
struct Shrink {
    double lambd, bias;
    explicit Shrink(const OpParams& p) : lambd(p.alpha), bias(p.beta) {}
    template <class T> T operator()(T x) const
    {
        if constexpr (std::is_floating_point_v<T>) {
            const T l = static_cast<T>(lambd), b = static_cast<T>(bias);
            return x < -l ? x + b : (x > l ? x - b : T(0));
        } else {
            const double v = static_cast<double>(x);
            return convert_value<T>(v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0));
        }
    }
};
struct BitwiseNot {
    template <class T> T operator()(T x) const { return static_cast<T>(~x); }
};
struct Sigmoid {
    template <class T> T operator()(T x) const { return T(1) / (T(1) + std::exp(-x)); }
};

// ---------------------------------------------------------------------------
// Op tables (tuple index == op code)

using BinaryOps = std::tuple<Def<ew::Add, kN, false, kAgnostic>,    // 0
                             Def<ew::Sub, kN, false, kAgnostic>,    // 1
                             Def<ew::Mul, kN, false, kAgnostic>,    // 2
                             Def<ew::Div, kN>,                       // 3
                             Def<ew::Pow, kN>,                       // 4
                             Def<ew::Mod, kN>,                       // 5
                             Def<ew::Fmod, kN>,                      // 6
                             Def<NanMax, kN>,                        // 7
                             Def<NanMin, kN>,                        // 8
                             Def<ew::ShiftLeft, kU>,                 // 9
                             Def<ew::ShiftRight, kU>,                // 10
                             Def<ew::Equal, kAny, kBoolOut, kAgnostic>,    // 11
                             Def<SwappedOp<14>, kN, kBoolOut>,             // 12 Greater: b < a
                             Def<SwappedOp<15>, kN, kBoolOut>,             // 13 GreaterOrEqual: b <= a
                             Def<ew::Less, kN, kBoolOut>,                  // 14
                             Def<ew::LessOrEqual, kN, kBoolOut>,           // 15
                             Def<ew::And, kB, kBoolOut>,                   // 16
                             Def<ew::Or, kB, kBoolOut>,                    // 17
                             Def<ew::Xor, kB, kBoolOut>,                   // 18
                             Def<ew::BitwiseAnd, kI, false, kAgnostic>,    // 19
                             Def<ew::BitwiseOr, kI, false, kAgnostic>,     // 20
                             Def<ew::BitwiseXor, kI, false, kAgnostic>,    // 21
                             Def<PRelu, kN>,                               // 22
                             Def<ew::NotEqual, kAny, kBoolOut, kAgnostic>>; // 23
constexpr const char* kBinaryNames[] = {"Add",        "Sub",        "Mul",        "Div",           "Pow",
                                        "Mod",        "Fmod",       "Max",        "Min",           "BitShiftLeft",
                                        "BitShiftRight", "Equal",   "Greater",    "GreaterOrEqual", "Less",
                                        "LessOrEqual", "And",       "Or",         "Xor",           "BitwiseAnd",
                                        "BitwiseOr",  "BitwiseXor", "PRelu",      "NotEqual"};
constexpr int kBinaryCount = static_cast<int>(std::tuple_size_v<BinaryOps>);
static_assert(kBinaryCount == sizeof(kBinaryNames) / sizeof(kBinaryNames[0]));
constexpr int kPowOp = 4;

enum UnaryCode {
    kLeakyRelu = 27, kElu = 28, kSelu = 29, kCelu = 30, kThresholdedRelu = 31, kHardSigmoid = 32,
    kGelu = 34, kShrink = 35, kIsInf = 23,
};
using UnaryOps = std::tuple<Def<Abs, kN>,                   // 0
                            Def<Neg, kF | kS>,              // 1
                            Def<ew::Floor, kF>,             // 2
                            Def<ew::Ceil, kF>,              // 3
                            Def<ew::Round, kF>,             // 4
                            Def<ew::Sqrt, kF>,              // 5
                            Def<ew::Reciprocal, kF>,        // 6
                            Def<ew::Exp, kF>,               // 7
                            Def<ew::Log, kF>,               // 8
                            Def<ew::Sin, kF>,               // 9
                            Def<ew::Cos, kF>,               // 10
                            Def<ew::Tan, kF>,               // 11
                            Def<ew::Asin, kF>,              // 12
                            Def<ew::Acos, kF>,              // 13
                            Def<ew::Atan, kF>,              // 14
                            Def<ew::Sinh, kF>,              // 15
                            Def<ew::Cosh, kF>,              // 16
                            Def<ew::Asinh, kF>,             // 17
                            Def<ew::Acosh, kF>,             // 18
                            Def<ew::Atanh, kF>,             // 19
                            Def<Erf, kF>,                   // 20
                            Def<Sign, kN>,                  // 21
                            Def<IsNaN, kF, kBoolOut>,       // 22
                            Def<IsInf, kF, kBoolOut>,       // 23
                            Def<Softsign, kF>,              // 24
                            Def<Softplus, kF>,              // 25
                            Def<Relu, kF | kS>,             // 26
                            Def<LeakyRelu, kF>,             // 27
                            Def<Elu, kF>,                   // 28
                            Def<Selu, kF>,                  // 29
                            Def<Celu, kF>,                  // 30
                            Def<ThresholdedRelu, kF>,       // 31
                            Def<HardSigmoid, kF>,           // 32
                            Def<HardSwish, kF>,             // 33
                            Def<Gelu, kF>,                  // 34
                            Def<Shrink, kN>,                // 35
                            Def<ew::Not, kB, kBoolOut>,     // 36
                            Def<BitwiseNot, kI, false, kAgnostic>, // 37
                            Def<Sigmoid, kF>,               // 38
                            Def<ew::Tanh, kF>>;             // 39
constexpr const char* kUnaryNames[] = {
    "Abs",   "Neg",   "Floor", "Ceil",     "Round",    "Sqrt",  "Reciprocal", "Exp",       "Log",
    "Sin",   "Cos",   "Tan",   "Asin",     "Acos",     "Atan",  "Sinh",       "Cosh",      "Asinh",
    "Acosh", "Atanh", "Erf",   "Sign",     "IsNaN",    "IsInf", "Softsign",   "Softplus",  "Relu",
    "LeakyRelu", "Elu", "Selu", "Celu", "ThresholdedRelu", "HardSigmoid", "HardSwish", "Gelu", "Shrink",
    "Not",   "BitwiseNot", "Sigmoid", "Tanh"};
constexpr int kUnaryCount = static_cast<int>(std::tuple_size_v<UnaryOps>);
static_assert(kUnaryCount == sizeof(kUnaryNames) / sizeof(kUnaryNames[0]));

// Variadic Sum / Mean / Max / Min: the pairwise step of each (Mean's last step divides).
using VariadicSteps = std::tuple<Def<ew::Add, kN, false, kAgnostic>, Def<AddDiv, kF>, Def<NanMax, kN>, Def<NanMin, kN>>;

// ---------------------------------------------------------------------------
// Kernel tables: per storage type T, one pointer per op (nullptr where T is not allowed).

using BinaryKernel = void (*)(const BroadcastPlan&, const void*, const void*, void*, const OpParams&,
                              const ParallelRunner&);
using UnaryKernel = void (*)(const BroadcastPlan&, const void*, void*, const OpParams&, const ParallelRunner&);

// Storage type whose kernel runs op D on T: the signed twin for sign-agnostic ops.
template <class T, bool Agnostic> struct KernelType {
    using type = T;
};
template <> struct KernelType<bool, true> {
    using type = int8_t;
};
template <> struct KernelType<uint8_t, true> {
    using type = int8_t;
};
template <> struct KernelType<uint16_t, true> {
    using type = int16_t;
};
template <> struct KernelType<uint32_t, true> {
    using type = int32_t;
};
template <> struct KernelType<uint64_t, true> {
    using type = int64_t;
};
template <class T, class D> using kernel_t = typename KernelType<T, D::sign_agnostic>::type;

template <class T, class D> constexpr BinaryKernel binary_kernel_of()
{
    return [](const BroadcastPlan& plan, const void* a, const void* b, void* out, const OpParams& p,
              const ParallelRunner& run) {
        using TO = std::conditional_t<D::bool_out, bool, T>;
        broadcast_binary(plan, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<TO*>(out),
                         make_functor<typename D::Fn>(p), run);
    };
}
template <class T, class D> constexpr UnaryKernel unary_kernel_of()
{
    return [](const BroadcastPlan& plan, const void* in, void* out, const OpParams& p, const ParallelRunner& run) {
        using TO = std::conditional_t<D::bool_out, bool, T>;
        broadcast_unary(plan, static_cast<const T*>(in), static_cast<TO*>(out), make_functor<typename D::Fn>(p), run);
    };
}

// Half types have no kernels (they run widened to float32).
template <class T> struct MakeBinary {
    template <class D> static constexpr BinaryKernel get()
    {
        if constexpr ((category<T>() & D::mask) == 0 || is_half_v<T> || SwapTarget<typename D::Fn>::value >= 0)
            return nullptr;
        else
            return binary_kernel_of<kernel_t<T, D>, D>();
    }
};
template <class T> struct MakeUnary {
    template <class D> static constexpr UnaryKernel get()
    {
        if constexpr ((category<T>() & D::mask) == 0 || is_half_v<T>) return nullptr;
        else return unary_kernel_of<kernel_t<T, D>, D>();
    }
};

struct MaskOf {
    template <class D> static constexpr unsigned get() { return D::mask; }
};
struct BoolOutOf {
    template <class D> static constexpr bool get() { return D::bool_out; }
};
struct SwapTargetOf {
    template <class D> static constexpr int get() { return SwapTarget<typename D::Fn>::value; }
};

template <class T> constexpr auto kBinaryTable = ew::make_table<BinaryOps, MakeBinary<T>>();
template <class T> constexpr auto kUnaryTable = ew::make_table<UnaryOps, MakeUnary<T>>();
template <class T> constexpr auto kVariadicTable = ew::make_table<VariadicSteps, MakeBinary<T>>();
constexpr auto kBinaryMasks = ew::make_table<BinaryOps, MaskOf>();
constexpr auto kBinaryBoolOut = ew::make_table<BinaryOps, BoolOutOf>();
constexpr auto kBinarySwapTarget = ew::make_table<BinaryOps, SwapTargetOf>();
constexpr auto kUnaryMasks = ew::make_table<UnaryOps, MaskOf>();
constexpr auto kUnaryBoolOut = ew::make_table<UnaryOps, BoolOutOf>();
constexpr auto kVariadicMasks = ew::make_table<VariadicSteps, MaskOf>();

BinaryKernel binary_kernel(DType t, int op)
{
    return visit_dtype(t, [op](auto tag) { return kBinaryTable<typename decltype(tag)::type>[static_cast<size_t>(op)]; });
}
UnaryKernel unary_kernel(DType t, int op)
{
    return visit_dtype(t, [op](auto tag) { return kUnaryTable<typename decltype(tag)::type>[static_cast<size_t>(op)]; });
}
BinaryKernel variadic_kernel_impl(DType t, int step)
{
    return visit_dtype(t,
                       [step](auto tag) { return kVariadicTable<typename decltype(tag)::type>[static_cast<size_t>(step)]; });
}

void check_dtype(const char* op, unsigned mask, DType t, const char* what)
{
    check((category_of(t) & mask) != 0, op, " does not support ", what, " dtype ", dtype_name(t), " (it takes ",
          category_text(mask), ")");
}

bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }

bool any_half_impl(const std::vector<Tensor>& inputs)
{
    for (const Tensor& t : inputs)
        if (is_half(t.dtype())) return true;
    return false;
}

// Pow with an exponent of another dtype.
void pow_mixed(const BroadcastPlan& plan, const Tensor& a, const Tensor& b, Tensor& out, const ParallelRunner& run)
{
    visit_dtype(a.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr ((category<T>() & kN) == 0 || is_half_v<T>) { // halves arrive widened
            fail("Pow does not support base dtype ", dtype_name(a.dtype()));
        } else {
            if constexpr (std::is_integral_v<T>) {
                if (!dtype_is_float(b.dtype())) {
                    const Tensor e = b.to(DType::I64);
                    broadcast_binary(plan, a.data<T>(), e.data<int64_t>(), out.data<T>(), PowMixed(), run);
                    return;
                }
            }
            const Tensor e = b.to(DType::F64);
            broadcast_binary(plan, a.data<T>(), e.data<double>(), out.data<T>(), PowMixed(), run);
        }
    });
}


} // namespace

bool any_half(const std::vector<Tensor>& inputs) { return any_half_impl(inputs); }
BinaryKernel variadic_kernel(DType t, int step) { return variadic_kernel_impl(t, step); }

int binary_count() { return kBinaryCount; }
const char* binary_name(int op) { return kBinaryNames[op]; }
bool binary_bool_out(int op) { return kBinaryBoolOut[static_cast<size_t>(op)]; }

void check_binary_dtypes(int op, DType ta, DType tb)
{
    const char* name = kBinaryNames[op];
    check_dtype(name, kBinaryMasks[static_cast<size_t>(op)], ta, "input A");
    if (op == kPowOp) check_dtype(name, kN, tb, "exponent");
    else
        check(ta == tb, name, " inputs must have one dtype, got ", dtype_name(ta), " and ", dtype_name(tb));
}

void run_binary(int op, const BroadcastPlan& plan, const Tensor& a, const Tensor& b, Tensor& out,
                const ParallelRunner& run)
{
    if (op == kPowOp && a.dtype() != b.dtype()) {
        pow_mixed(plan, a, b, out, run);
        return;
    }
    check(a.dtype() == b.dtype(), kBinaryNames[op], " inputs must have one dtype, got ", dtype_name(a.dtype()), " and ",
          dtype_name(b.dtype()));
    const int swap_to = kBinarySwapTarget[static_cast<size_t>(op)];
    const BinaryKernel k = binary_kernel(a.dtype(), swap_to >= 0 ? swap_to : op);
    check(k != nullptr, kBinaryNames[op], " does not support dtype ", dtype_name(a.dtype()));
    if (swap_to >= 0)
        k(plan.swapped(0, 1), b.raw(), a.raw(), out.raw(), OpParams{}, run);
    else
        k(plan, a.raw(), b.raw(), out.raw(), OpParams{}, run);
}

int unary_count() { return kUnaryCount; }
const char* unary_name(int op) { return kUnaryNames[op]; }
int unary_index(const std::string& name)
{
    for (int op = 0; op < kUnaryCount; ++op)
        if (name == kUnaryNames[op]) return op;
    fail("no typed unary op named ", name);
}
bool unary_bool_out(int op) { return kUnaryBoolOut[static_cast<size_t>(op)]; }
void check_unary_dtype(int op, DType t) { check_dtype(kUnaryNames[op], kUnaryMasks[static_cast<size_t>(op)], t, "input"); }

OpParams unary_defaults(int op)
{
    OpParams p;
    switch (op) {
    case kLeakyRelu: p.alpha = 0.01f; break;
    case kElu: case kCelu: case kThresholdedRelu: p.alpha = 1.f; break;
    case kSelu: p.alpha = 1.67326319217681884765625f, p.beta = 1.05070102214813232421875f; break;
    case kHardSigmoid: p.alpha = 0.2f, p.beta = 0.5f; break;
    case kShrink: p.alpha = 0.5f; break;
    case kIsInf: p.flag_a = p.flag_b = 1; break;
    default: break;
    }
    return p;
}

void run_unary(int op, const Tensor& in, Tensor& out, const OpParams& p, const ParallelRunner& run)
{
    check(out.shape() == in.shape(), "output shape ", shape_str(out.shape()), " != input ", shape_str(in.shape()));
    const UnaryKernel k = unary_kernel(in.dtype(), op);
    check(k != nullptr, kUnaryNames[op], " does not support dtype ", dtype_name(in.dtype()));
    k(elementwise_plan(in.shape()), in.raw(), out.raw(), p, run);
}

void check_variadic_dtype(const char* name, int step, DType t)
{
    check_dtype(name, kVariadicMasks[static_cast<size_t>(step)], t, "input");
}

} // namespace kestrel::typed_ops
