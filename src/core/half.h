// IEEE half and bfloat16 <-> float conversions (portable scalar code; used for
// weights at load time and for dtype casts, not in hot loops).
#pragma once
#include <cstdint>
#include <cstring>

namespace kestrel {

inline float half_to_float(uint16_t h)
{
    const uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1f;
    uint32_t mantissa = h & 0x3ffu;
    uint32_t bits;
    if (exponent == 0x1f) { // inf / nan
        bits = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) { // normal
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) { // zero
        bits = sign;
    } else { // subnormal: renormalize
        exponent = 113;
        while ((mantissa & 0x400u) == 0) {
            mantissa <<= 1;
            --exponent;
        }
        bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// Round to nearest even, with overflow to inf and gradual underflow.
inline uint16_t float_to_half(float f)
{
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t abs = bits & 0x7fffffffu;
    if (abs >= 0x7f800000u) // inf or nan
        return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
    if (abs >= 0x477ff000u) // rounds to >= 65520: overflow
        return sign | 0x7c00u;
    if (abs < 0x38800000u) { // below the smallest normal half: subnormal or zero
        if (abs < 0x33000000u) return sign;
        const uint32_t exponent = abs >> 23;
        const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126 - exponent; // 14..24
        uint32_t half_mant = mantissa >> shift;
        const uint32_t rest = mantissa & ((1u << shift) - 1);
        const uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (half_mant & 1u))) ++half_mant;
        return sign | static_cast<uint16_t>(half_mant);
    }
    uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u); // round to nearest even
    return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);
}

inline float bf16_to_float(uint16_t b)
{
    const uint32_t bits = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// f's bfloat16 bits (in the low half of the result): rounded to nearest even,
// a NaN kept a (quiet) NaN. One 32-bit expression, so that loops over it
// vectorize well (the bfloat16 convolution converts its input every run: a
// 16-bit result measured 3% slower on ResNet-50).
inline uint32_t bf16_bits(float f)
{
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return (bits & 0x7fffffffu) > 0x7f800000u ? (bits >> 16) | 0x40u : (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
}

inline uint16_t float_to_bf16(float f) { return static_cast<uint16_t>(bf16_bits(f)); }

} // namespace kestrel
