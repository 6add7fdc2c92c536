// UTF-8 <-> code points, for string tensors (case mapping, .npy's UTF-32).
// Bytes that start no valid sequence (overlong forms and surrogates
// included) decode to kRawByte + the byte and encode back to that byte, so
// any byte string survives a round trip.
#pragma once
#include <string>

namespace kestrel::utf8 {

constexpr char32_t kRawByte = 0x110000; // past Unicode

// The code point at s[i], advancing i past it.
inline char32_t next(const std::string& s, size_t& i)
{
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char b = byte(i);
    const int extra = b >= 0xF8 ? 0 : b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC2 ? 1 : 0;
    if (extra > 0 && i + extra < s.size()) {
        char32_t c = b & (0x3F >> extra);
        bool valid = true;
        for (int k = 1; k <= extra && valid; ++k) {
            valid = (byte(i + k) & 0xC0) == 0x80;
            c = (c << 6) | (byte(i + k) & 0x3F);
        }
        const char32_t least = extra == 1 ? 0x80 : extra == 2 ? 0x800 : 0x10000; // shorter forms are overlong
        if (valid && c >= least && c < 0x110000 && (c < 0xD800 || c > 0xDFFF)) {
            i += static_cast<size_t>(extra) + 1;
            return c;
        }
    }
    ++i;
    return b < 0x80 ? b : kRawByte + b;
}

inline void append(std::string& out, char32_t c)
{
    if (c >= kRawByte) return out.push_back(static_cast<char>(c - kRawByte));
    if (c < 0x80) return out.push_back(static_cast<char>(c));
    if (c < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    } else {
        if (c < 0x10000) {
            out.push_back(static_cast<char>(0xE0 | (c >> 12)));
        } else {
            out.push_back(static_cast<char>(0xF0 | (c >> 18)));
            out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        }
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    }
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
}

} // namespace kestrel::utf8
