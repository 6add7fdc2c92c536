// Element-wise op functors for the broadcast engine (kernels/broadcast.h).
//
// Each functor is one templated struct that works for every C++ storage type it
// makes sense for (float, double, the 8..64-bit integers, bool), so an op is
// written once and the executors instantiate it per dtype — no per-dtype switch
// copies. Functors whose float meaning has a SIMD row kernel declare it with
// `static constexpr SimdBinary simd`; Rev<F> computes F(b, a) (ncnn's reverse
// ops) and keeps the SIMD fast path by handing the kernel swapped operands.
//
// Float semantics follow ncnn's reference layer (src/layer/binaryop.cpp,
// unaryop.cpp): MAX/MIN are std::max/std::min(a, b) (so a NaN in b is ignored, a
// NaN in a propagates), FLOOR_DIVIDE is floor(a / b), REMAINDER is IEEE
// remainder(), LOGADDEXP is max + log1p(exp(min - max)).
// Integer semantics never invoke UB: arithmetic wraps (two's complement),
// division/modulo by zero give 0, INT_MIN / -1 wraps to INT_MIN, shifts by the
// bit width or more give 0.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels/broadcast.h"

namespace kestrel {
namespace ew {

// ---------------------------------------------------------------------------
// helpers

template <class T> constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Unsigned type at least as wide as `unsigned` (avoids promotion to signed int).
template <class T>
using wide_unsigned_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T> constexpr T wrap_add(T a, T b)
{
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <class T> constexpr T wrap_sub(T a, T b)
{
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <class T> constexpr T wrap_mul(T a, T b)
{
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}
template <class T> constexpr T wrap_neg(T a) { return wrap_sub<T>(T(0), a); }

// Truncating integer division / remainder without UB.
template <class T> constexpr T int_div(T a, T b)
{
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>)
        if (b == T(-1)) return wrap_neg(a);
    return static_cast<T>(a / b);
}
template <class T> constexpr T int_rem(T a, T b)
{
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>)
        if (b == T(-1)) return T(0);
    return static_cast<T>(a % b);
}

// ---------------------------------------------------------------------------
// binary arithmetic (ncnn BinaryOp 0..18, ONNX Add/Sub/Mul/Div/Max/Min/Pow/Mod)

struct Add {
    static constexpr SimdBinary simd = SimdBinary::Add;
    template <class T> T operator()(T a, T b) const
    {
        if constexpr (is_int_v<T>) return wrap_add(a, b);
        else return a + b;
    }
};

struct Sub {
    static constexpr SimdBinary simd = SimdBinary::Sub;
    template <class T> T operator()(T a, T b) const
    {
        if constexpr (is_int_v<T>) return wrap_sub(a, b);
        else return a - b;
    }
};

struct Mul {
    static constexpr SimdBinary simd = SimdBinary::Mul;
    template <class T> T operator()(T a, T b) const
    {
        if constexpr (is_int_v<T>) return wrap_mul(a, b);
        else return a * b;
    }
};

// Integers truncate toward zero (C, ONNX); x / 0 == 0.
struct Div {
    static constexpr SimdBinary simd = SimdBinary::Div;
    template <class T> T operator()(T a, T b) const
    {
        if constexpr (is_int_v<T>) return int_div(a, b);
        else return a / b;
    }
};

struct Max {
    static constexpr SimdBinary simd = SimdBinary::Max;
    template <class T> T operator()(T a, T b) const { return a < b ? b : a; } // == std::max(a, b)
};

struct Min {
    static constexpr SimdBinary simd = SimdBinary::Min;
    template <class T> T operator()(T a, T b) const { return b < a ? b : a; } // == std::min(a, b)
};

// Floats: std::pow. Integers: exact power with wrap-around; negative exponents
// give 0 except for bases 1 and -1.
struct Pow {
    template <class T> T operator()(T a, T b) const
    {
        if constexpr (std::is_floating_point_v<T>) {
            return std::pow(a, b);
        } else {
            if constexpr (std::is_signed_v<T>) {
                if (b < 0) {
                    if (a == 1) return T(1);
                    if (a == -1) return (b % 2 == 0) ? T(1) : T(-1);
                    return T(0);
                }
            }
            T result = 1;
            T base = a;
            auto e = static_cast<std::make_unsigned_t<T>>(b);
            while (e != 0) {
                if (e & 1u) result = wrap_mul(result, base);
                base = wrap_mul(base, base);
                e >>= 1;
            }
            return result;
        }
    }
};

struct Atan2 {
    template <class T> T operator()(T a, T b) const
    {
        static_assert(std::is_floating_point_v<T>, "Atan2 is a float op");
        return std::atan2(a, b);
    }
};

// C fmod: the result has the sign of a (ONNX Mod fmod=1, ncnn FMOD).
struct Fmod {
    template <class T> T operator()(T a, T b) const
    {
        if constexpr (std::is_floating_point_v<T>) return std::fmod(a, b);
        else return int_rem(a, b);
    }
};

// Python / numpy modulo: the result has the sign of b (ONNX Mod fmod=0).
struct Mod {
    template <class T> T operator()(T a, T b) const
    {
        if constexpr (std::is_floating_point_v<T>) {
            T r = std::fmod(a, b);
            if (r != 0 && ((r < 0) != (b < 0))) r += b;
            return r;
        } else {
            T r = int_rem(a, b);
            if constexpr (std::is_signed_v<T>)
                if (r != 0 && ((r < 0) != (b < 0))) r = wrap_add(r, b);
            return r;
        }
    }
};

struct LogAddExp {
    template <class T> T operator()(T a, T b) const
    {
        static_assert(std::is_floating_point_v<T>, "LogAddExp is a float op");
        const T hi = a < b ? b : a;
        const T lo = b < a ? b : a;
        return hi + std::log1p(std::exp(lo - hi));
    }
};

// floor(a / b); integers floor too (numpy //), x // 0 == 0.
struct FloorDivide {
    template <class T> T operator()(T a, T b) const
    {
        if constexpr (std::is_floating_point_v<T>) {
            return std::floor(a / b);
        } else {
            T q = int_div(a, b);
            if constexpr (std::is_signed_v<T>)
                if (b != 0 && int_rem(a, b) != 0 && ((a < 0) != (b < 0))) q = wrap_sub(q, T(1));
            return q;
        }
    }
};

// IEEE remainder (a - round_half_even(a / b) * b).
struct Remainder {
    template <class T> T operator()(T a, T b) const
    {
        static_assert(std::is_floating_point_v<T>, "Remainder is a float op");
        return std::remainder(a, b);
    }
};

// F with its operands exchanged: Rev<F>()(a, b) == F()(b, a).
template <class F> struct Rev {
    static constexpr SimdBinary simd = detail::SimdOf<F>::value;
    static constexpr bool swapped = !detail::SwappedOf<F>::value;
    template <class T> auto operator()(T a, T b) const { return F()(b, a); }
};

// ---------------------------------------------------------------------------
// comparison, logic, bitwise (ONNX Equal, Less, ..., And, Or, Xor, Bit*, BitShift)

struct Equal {
    template <class T> bool operator()(T a, T b) const { return a == b; }
};
struct NotEqual {
    template <class T> bool operator()(T a, T b) const { return a != b; }
};
struct Less {
    template <class T> bool operator()(T a, T b) const { return a < b; }
};
struct LessOrEqual {
    template <class T> bool operator()(T a, T b) const { return a <= b; }
};
struct Greater {
    template <class T> bool operator()(T a, T b) const { return a > b; }
};
struct GreaterOrEqual {
    template <class T> bool operator()(T a, T b) const { return a >= b; }
};

struct And {
    template <class T> bool operator()(T a, T b) const { return static_cast<bool>(a) && static_cast<bool>(b); }
};
struct Or {
    template <class T> bool operator()(T a, T b) const { return static_cast<bool>(a) || static_cast<bool>(b); }
};
struct Xor {
    template <class T> bool operator()(T a, T b) const { return static_cast<bool>(a) != static_cast<bool>(b); }
};

struct BitwiseAnd {
    template <class T> T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
struct BitwiseOr {
    template <class T> T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
struct BitwiseXor {
    template <class T> T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

// ONNX BitShift (unsigned types); shifts of the bit width or more give 0.
struct ShiftLeft {
    template <class T> T operator()(T a, T b) const
    {
        static_assert(is_int_v<T>, "ShiftLeft is an integer op");
        using U = wide_unsigned_t<T>;
        const auto s = static_cast<std::make_unsigned_t<T>>(b);
        if (s >= sizeof(T) * 8) return T(0);
        return static_cast<T>(static_cast<U>(static_cast<U>(a) << s));
    }
};
struct ShiftRight {
    template <class T> T operator()(T a, T b) const
    {
        static_assert(is_int_v<T>, "ShiftRight is an integer op");
        using U = std::make_unsigned_t<T>;
        const auto s = static_cast<U>(b);
        if (s >= sizeof(T) * 8) return T(0);
        return static_cast<T>(static_cast<U>(a) >> s);
    }
};

// ONNX Where: cond ? x : y (use with broadcast_ternary).
struct Select {
    template <class C, class T> T operator()(C c, T x, T y) const { return static_cast<bool>(c) ? x : y; }
};

// ---------------------------------------------------------------------------
// unary (ncnn UnaryOp 0..27; float types)

// Round half to even, independent of the thread's floating-point rounding mode.
template <class T> T round_half_even(T x)
{
    T r = std::round(x); // half away from zero
    if (std::fabs(x - r) == T(0.5)) r = T(2) * std::round(x * T(0.5));
    return r;
}

#define KESTREL_EW_UNARY(NAME, EXPR)                                                                                   \
    struct NAME {                                                                                                      \
        template <class T> T operator()(T x) const { return EXPR; }                                                    \
    };

KESTREL_EW_UNARY(Abs, std::fabs(x))
KESTREL_EW_UNARY(Neg, -x)
KESTREL_EW_UNARY(Floor, std::floor(x))
KESTREL_EW_UNARY(Ceil, std::ceil(x))
KESTREL_EW_UNARY(Square, x * x)
KESTREL_EW_UNARY(Sqrt, std::sqrt(x))
KESTREL_EW_UNARY(Rsqrt, T(1) / std::sqrt(x))
KESTREL_EW_UNARY(Exp, std::exp(x))
KESTREL_EW_UNARY(Log, std::log(x))
KESTREL_EW_UNARY(Sin, std::sin(x))
KESTREL_EW_UNARY(Cos, std::cos(x))
KESTREL_EW_UNARY(Tan, std::tan(x))
KESTREL_EW_UNARY(Asin, std::asin(x))
KESTREL_EW_UNARY(Acos, std::acos(x))
KESTREL_EW_UNARY(Atan, std::atan(x))
KESTREL_EW_UNARY(Reciprocal, T(1) / x)
KESTREL_EW_UNARY(Tanh, std::tanh(x))
KESTREL_EW_UNARY(Log10, std::log10(x))
KESTREL_EW_UNARY(Round, round_half_even(x))
KESTREL_EW_UNARY(Trunc, std::trunc(x))
KESTREL_EW_UNARY(Sign, x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0)))
KESTREL_EW_UNARY(Expm1, std::expm1(x))
KESTREL_EW_UNARY(Sinh, std::sinh(x))
KESTREL_EW_UNARY(Asinh, std::asinh(x))
KESTREL_EW_UNARY(Cosh, std::cosh(x))
KESTREL_EW_UNARY(Acosh, std::acosh(x))
KESTREL_EW_UNARY(Atanh, std::atanh(x))
KESTREL_EW_UNARY(Log1p, std::log1p(x))

#undef KESTREL_EW_UNARY

struct Not {
    template <class T> bool operator()(T x) const { return !static_cast<bool>(x); }
};

// ---------------------------------------------------------------------------
// ncnn op tables: tuple element i is the functor for op_type i.

using NcnnBinaryOps = std::tuple<Add,                // 0 ADD
                                 Sub,                // 1 SUB
                                 Mul,                // 2 MUL
                                 Div,                // 3 DIV
                                 Max,                // 4 MAX
                                 Min,                // 5 MIN
                                 Pow,                // 6 POW
                                 Rev<Sub>,           // 7 RSUB
                                 Rev<Div>,           // 8 RDIV
                                 Rev<Pow>,           // 9 RPOW
                                 Atan2,              // 10 ATAN2
                                 Rev<Atan2>,         // 11 RATAN2
                                 Fmod,               // 12 FMOD
                                 Rev<Fmod>,          // 13 RFMOD
                                 LogAddExp,          // 14 LOGADDEXP
                                 FloorDivide,        // 15 FLOOR_DIVIDE
                                 Rev<FloorDivide>,   // 16 RFLOOR_DIVIDE
                                 Remainder,          // 17 REMAINDER
                                 Rev<Remainder>>;    // 18 RREMAINDER

using NcnnUnaryOps = std::tuple<Abs, Neg, Floor, Ceil, Square, Sqrt, Rsqrt, Exp, Log, Sin,          // 0..9
                                Cos, Tan, Asin, Acos, Atan, Reciprocal, Tanh, Log10, Round, Trunc, // 10..19
                                Sign, Expm1, Sinh, Asinh, Cosh, Acosh, Atanh, Log1p>;             // 20..27

constexpr int kNcnnBinaryOpCount = static_cast<int>(std::tuple_size_v<NcnnBinaryOps>);
constexpr int kNcnnUnaryOpCount = static_cast<int>(std::tuple_size_v<NcnnUnaryOps>);

// std::array of `Maker::template get<F>()` for every functor F of the tuple, in order
// (the way op layers turn a functor list into a table of kernel pointers).
template <class Tuple, class Maker, size_t... I>
constexpr auto make_table_impl(std::index_sequence<I...>)
{
    using Entry = decltype(Maker::template get<std::tuple_element_t<0, Tuple>>());
    return std::array<Entry, sizeof...(I)>{Maker::template get<std::tuple_element_t<I, Tuple>>()...};
}
template <class Tuple, class Maker> constexpr auto make_table()
{
    return make_table_impl<Tuple, Maker>(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
}

} // namespace ew
} // namespace kestrel
