#include "kestrel/npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/bool_bytes.h"
#include "core/utf8.h"
#include "kestrel/error.h"

namespace kestrel {

namespace {

struct DescrEntry {
    const char* descr;
    DType dtype;
};
const DescrEntry kDescrs[] = {
    {"<f4", DType::F32}, {"<f2", DType::F16}, {"<f8", DType::F64}, {"|i1", DType::I8},  {"|u1", DType::U8},
    {"<i2", DType::I16}, {"<u2", DType::U16}, {"<i4", DType::I32}, {"<u4", DType::U32}, {"<i8", DType::I64},
    {"<u8", DType::U64}, {"|b1", DType::Bool}, {"<V2", DType::BF16}, // numpy has no bf16: raw 2-byte records
};

std::string descr_of(DType t)
{
    for (const auto& e : kDescrs)
        if (e.dtype == t) return e.descr;
    fail("no .npy descr for dtype ", dtype_name(t));
}

// Value of 'key' in the header dict, as the raw text up to the next top-level ',' or '}'.
std::string dict_value(const std::string& header, const std::string& key, const std::string& source)
{
    const size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) fail(source, ": .npy header has no '", key, "'");
    size_t p = header.find(':', k);
    if (p == std::string::npos) fail(source, ": malformed .npy header");
    ++p;
    while (p < header.size() && header[p] == ' ') ++p;
    size_t end = p;
    int depth = 0;
    while (end < header.size()) {
        const char c = header[end];
        if (c == '(') ++depth;
        if (c == ')') --depth;
        if ((c == ',' || c == '}') && depth == 0) break;
        ++end;
    }
    if (depth != 0 || end >= header.size()) fail(source, ": malformed .npy header near '", key, "'");
    return header.substr(p, end - p);
}

Shape parse_shape(const std::string& text, const std::string& source)
{
    if (text.size() < 2 || text.front() != '(' || text.back() != ')') fail(source, ": bad .npy shape ", text);
    Shape shape;
    std::string num;
    for (size_t i = 1; i < text.size(); ++i) {
        const char c = text[i];
        if (std::isdigit(static_cast<unsigned char>(c))) {
            num += c;
            if (num.size() > 15) fail(source, ": .npy dimension too large in ", text);
        } else if (c == ',' || c == ')') {
            if (!num.empty()) shape.push_back(std::stoll(num));
            else if (c == ',') fail(source, ": bad .npy shape ", text);
            num.clear();
        } else if (c != ' ') {
            fail(source, ": bad character '", c, "' in .npy shape ", text);
        }
    }
    if (shape.size() > 32) fail(source, ": .npy rank ", shape.size(), " is too large");
    return shape;
}

// The width of a numpy string dtype: code points of '<U<n>' (UTF-32), bytes
// of '|S<n>'; -1 for other dtypes.
int64_t string_width(const std::string& descr, const std::string& source)
{
    if (descr.size() < 3 || !((descr[0] == '<' && descr[1] == 'U') || (descr[0] == '|' && descr[1] == 'S'))) return -1;
    for (size_t i = 2; i < descr.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(descr[i])) || i > 10) fail(source, ": bad .npy string dtype '", descr, "'");
    return std::stoll(descr.substr(2));
}

// numpy's fixed-width strings (NUL-padded) as a string tensor, in UTF-8.
Tensor parse_strings(const uint8_t* body, size_t size, const Shape& shape, const std::string& descr,
                     const std::string& source, int64_t max_bytes)
{
    const bool utf32 = descr[1] == 'U';
    const int64_t width = string_width(descr, source), unit = utf32 ? 4 : 1, n = shape_numel(shape);
    // Each element costs its record or, empty ('<U0'), at least its string object.
    if (n > max_bytes / std::max<int64_t>(width * unit, static_cast<int64_t>(sizeof(std::string))))
        throw TooLargeError(detail::concat(source, ": .npy array ", shape_str(shape), " is too large"));
    if (static_cast<int64_t>(size) != n * width * unit)
        fail(source, ": .npy string data has ", size, " bytes, shape ", shape_str(shape), " of ", descr, " needs ", n * width * unit);
    Tensor t(shape, DType::String);
    for (int64_t i = 0; i < n; ++i) {
        std::string& text = t.data<std::string>()[i];
        const uint8_t* item = body + i * width * unit;
        for (int64_t k = 0; k < width; ++k) {
            uint32_t c = item[k * unit];
            if (utf32) std::memcpy(&c, item + k * 4, 4);
            if (utf32 && (c >= 0x110000 || (c >= 0xD800 && c <= 0xDFFF)))
                fail(source, ": string ", i, " holds code point ", c, ", not a Unicode character");
            if (utf32) utf8::append(text, c);
            else text.push_back(static_cast<char>(c));
        }
        text.erase(text.find_last_not_of('\0') + 1); // numpy's padding (and trailing NULs with it)
    }
    return t;
}

// A string tensor as numpy's '<U<n>' (UTF-32, n the longest string's code
// points); strings that are not UTF-8 cannot be written so.
std::string utf32_records(const Tensor& t, int64_t& width)
{
    std::vector<std::u32string> texts;
    width = 1; // numpy's narrowest
    for (int64_t i = 0; i < t.numel(); ++i) {
        const std::string& s = t.data<std::string>()[i];
        std::u32string u;
        for (size_t k = 0; k < s.size();) {
            const char32_t c = utf8::next(s, k);
            check(c < utf8::kRawByte, "string ", i, " is not UTF-8: a .npy file cannot hold it");
            u.push_back(c);
        }
        width = std::max<int64_t>(width, static_cast<int64_t>(u.size()));
        texts.push_back(std::move(u));
    }
    std::string bytes(static_cast<size_t>(t.numel() * width * 4), '\0');
    for (size_t i = 0; i < texts.size(); ++i)
        for (size_t k = 0; k < texts[i].size(); ++k) {
            const uint32_t c = texts[i][k];
            std::memcpy(&bytes[(i * width + k) * 4], &c, 4);
        }
    return bytes;
}

} // namespace

Tensor parse_npy(const void* data, size_t size, const std::string& source, int64_t max_bytes)
{
    const auto* p = static_cast<const uint8_t*>(data);
    if (size < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0) fail(source, ": not a .npy file (bad magic)");
    const int major = p[6];
    size_t header_len, offset;
    if (major == 1) {
        header_len = p[8] | (p[9] << 8);
        offset = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12) fail(source, ": truncated .npy header");
        header_len = static_cast<size_t>(p[8]) | (static_cast<size_t>(p[9]) << 8) | (static_cast<size_t>(p[10]) << 16) |
                     (static_cast<size_t>(p[11]) << 24);
        offset = 12;
    } else {
        fail(source, ": unsupported .npy version ", major);
    }
    if (header_len > size - offset) fail(source, ": truncated .npy header");
    const std::string header(reinterpret_cast<const char*>(p + offset), header_len);
    std::string descr = dict_value(header, "descr", source);
    if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"')) fail(source, ": bad .npy descr ", descr);
    descr = descr.substr(1, descr.size() - 2);
    if (descr == "=f4") descr = "<f4";
    if (descr == "|V2") descr = "<V2"; // numpy writes its 2-byte records (bfloat16 here) without a byte order
    DType dtype = DType::F32;
    bool known = false;
    for (const auto& e : kDescrs) {
        // '<' and '|' are interchangeable for 1-byte types.
        if (descr == e.descr || (descr.size() == 3 && descr[0] == '<' && e.descr[0] == '|' && descr.substr(1) == e.descr + 1)) {
            dtype = e.dtype;
            known = true;
        }
    }
    const int64_t text_width = string_width(descr, source); // numpy's strings: '<U<n>' or '|S<n>'
    if (!known && text_width < 0) fail(source, ": unsupported .npy dtype '", descr, "' (big-endian or not a numeric type)");
    if (dict_value(header, "fortran_order", source) != "False")
        fail(source, ": Fortran-ordered .npy arrays are not supported");
    const Shape shape = parse_shape(dict_value(header, "shape", source), source);
    if (text_width >= 0) return parse_strings(p + offset + header_len, size - offset - header_len, shape, descr, source, max_bytes);
    const int64_t n = shape_numel(shape);
    if (n > max_bytes / static_cast<int64_t>(dtype_size(dtype)))
        throw TooLargeError(detail::concat(source, ": .npy array ", shape_str(shape), " is too large"));
    const size_t bytes = static_cast<size_t>(n) * dtype_size(dtype);
    const size_t body = offset + header_len;
    if (size - body < bytes)
        fail(source, ": truncated .npy data: shape ", shape_str(shape), " needs ", bytes, " bytes, file has ", size - body);
    if (size - body > bytes) fail(source, ": .npy file has ", size - body - bytes, " bytes beyond its ", shape_str(shape), " data");
    Tensor t(shape, dtype);
    if (bytes) std::memcpy(t.raw(), p + body, bytes);
    normalize_bools(t);
    return t;
}

Tensor read_npy(const std::string& path, int64_t max_bytes)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, ": cannot open");
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    return parse_npy(bytes.data(), bytes.size(), path, max_bytes);
}

void write_npy(const std::string& path, const Tensor& t)
{
    std::string shape = "(";
    for (size_t i = 0; i < t.shape().size(); ++i) shape += std::to_string(t.shape()[i]) + (t.shape().size() == 1 ? "," : (i + 1 < t.shape().size() ? ", " : ""));
    shape += ")";
    int64_t width = 0;
    const std::string records = t.dtype() == DType::String ? utf32_records(t, width) : std::string();
    const std::string descr = t.dtype() == DType::String ? "<U" + std::to_string(width) : descr_of(t.dtype());
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    // Pad so the data starts on a 64-byte boundary, newline-terminated.
    const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
    header.append(total - 10 - header.size() - 1, ' ');
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    if (!out) fail(path, ": cannot write");
    const uint8_t preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(header.size() & 0xff),
                                  static_cast<uint8_t>(header.size() >> 8)};
    out.write(reinterpret_cast<const char*>(preamble), 10);
    out << header;
    if (t.dtype() == DType::String)
        out.write(records.data(), static_cast<std::streamsize>(records.size()));
    else
        out.write(static_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.nbytes()));
    if (!out) fail(path, ": write failed");
}

} // namespace kestrel
