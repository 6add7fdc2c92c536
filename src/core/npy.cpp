#include "kestrel/npy.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/bool_bytes.h"
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
    if (!known) fail(source, ": unsupported .npy dtype '", descr, "' (big-endian or not a numeric type)");
    if (dict_value(header, "fortran_order", source) != "False")
        fail(source, ": Fortran-ordered .npy arrays are not supported");
    const Shape shape = parse_shape(dict_value(header, "shape", source), source);
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
    std::string header = "{'descr': '" + descr_of(t.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
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
    out.write(static_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.nbytes()));
    if (!out) fail(path, ": write failed");
}

} // namespace kestrel
