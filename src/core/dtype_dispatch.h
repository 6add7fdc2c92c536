// Maps DType to C++ storage types, and visits a runtime dtype with a generic
// lambda so one templated kernel serves every dtype (no per-dtype copies).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/half.h"
#include "kestrel/error.h"
#include "kestrel/tensor.h"

namespace kestrel {

struct float16_t {
    uint16_t bits;
};
struct bfloat16_t {
    uint16_t bits;
};

// The float storage types (what dtype_is_float accepts), for `if constexpr`.
template <class T>
constexpr bool is_float_storage_v =
    std::is_floating_point_v<T> || std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>;

template <class T> struct TypeTag {
    using type = T;
};

template <class Fn>
decltype(auto) visit_dtype(DType t, Fn&& fn)
{
    switch (t) {
    case DType::F32: return fn(TypeTag<float>{});
    case DType::F16: return fn(TypeTag<float16_t>{});
    case DType::BF16: return fn(TypeTag<bfloat16_t>{});
    case DType::F64: return fn(TypeTag<double>{});
    case DType::I8: return fn(TypeTag<int8_t>{});
    case DType::U8: return fn(TypeTag<uint8_t>{});
    case DType::I16: return fn(TypeTag<int16_t>{});
    case DType::U16: return fn(TypeTag<uint16_t>{});
    case DType::I32: return fn(TypeTag<int32_t>{});
    case DType::U32: return fn(TypeTag<uint32_t>{});
    case DType::I64: return fn(TypeTag<int64_t>{});
    case DType::U64: return fn(TypeTag<uint64_t>{});
    case DType::Bool: return fn(TypeTag<bool>{});
    case DType::Sequence: fail("a sequence where a tensor is expected");
    case DType::Optional: fail("an optional where a tensor is expected");
    case DType::String: fail("a string tensor where numbers are expected");
    }
    fail("unknown dtype");
}

// Value as double (exact for every type except 64-bit ints beyond 2^53).
template <class S> double to_double(S v)
{
    if constexpr (std::is_same_v<S, float16_t>) return half_to_float(v.bits);
    else if constexpr (std::is_same_v<S, bfloat16_t>) return bf16_to_float(v.bits);
    else return static_cast<double>(v);
}

// Float -> integer without UB: NaN -> 0, out of range saturates.
template <class D> D saturate_cast(double v)
{
    if (std::isnan(v)) return D(0);
    const double lo = static_cast<double>(std::numeric_limits<D>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<D>::max());
    if (v <= lo) return std::numeric_limits<D>::lowest();
    if (v >= hi) return std::numeric_limits<D>::max();
    return static_cast<D>(v);
}

template <class D, class S> D convert_value(S v)
{
    if constexpr (std::is_same_v<D, S>) return v;
    else if constexpr (std::is_same_v<D, bool>) return to_double(v) != 0.0;
    else if constexpr (std::is_integral_v<S> && std::is_integral_v<D>) return static_cast<D>(v);
    else if constexpr (std::is_same_v<D, float16_t>) return float16_t{float_to_half(static_cast<float>(to_double(v)))};
    else if constexpr (std::is_same_v<D, bfloat16_t>) return bfloat16_t{float_to_bf16(static_cast<float>(to_double(v)))};
    else if constexpr (std::is_floating_point_v<D>) return static_cast<D>(to_double(v));
    else return saturate_cast<D>(to_double(v));
}

} // namespace kestrel
