#include "frontend/ncnn/model_bin.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/half.h"
#include "core/bool_bytes.h"
#include "kestrel/error.h"

namespace kestrel {

namespace {
constexpr uint32_t kTagFp32 = 0x00000000;
constexpr uint32_t kTagFp16 = 0x01306B47;
constexpr uint32_t kTagInt8 = 0x000D4B38;
constexpr uint32_t kTagFp32Scaled = 0x0002C056;

size_t align4(size_t n) { return (n + 3) / 4 * 4; }

void append(std::vector<uint8_t>& out, const void* p, size_t n)
{
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
}
} // namespace

size_t MemorySource::read(void* dst, size_t n)
{
    const size_t k = std::min(n, size_ - pos_);
    if (k) std::memcpy(dst, data_ + pos_, k);
    pos_ += k;
    offset += k;
    return k;
}

FileSource::FileSource(const std::string& path)
{
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr) fail(path, ": cannot open: ", std::strerror(errno));
    std::fseek(file_, 0, SEEK_END);
    size_ = std::ftell(file_);
    std::fseek(file_, 0, SEEK_SET);
}

FileSource::~FileSource()
{
    if (file_) std::fclose(file_);
}

size_t FileSource::read(void* dst, size_t n)
{
    const size_t k = std::fread(dst, 1, n, file_);
    offset += k;
    return k;
}

size_t CallbackSource::read(void* dst, size_t n)
{
    size_t total = 0;
    while (total < n) {
        const size_t k = fn_(static_cast<uint8_t*>(dst) + total, n - total);
        if (k == 0) break;
        total += std::min(k, n - total);
    }
    offset += total;
    return total;
}

NcnnWeightReader::NcnnWeightReader(ByteSource& source, std::string source_name, int64_t max_bytes)
    : source_(source), source_name_(std::move(source_name)), max_bytes_(max_bytes)
{
}

void NcnnWeightReader::read_exact(void* dst, size_t n, const char* what)
{
    const size_t at = source_.offset;
    const int64_t left = source_.remaining();
    // Check before reading (and before the caller allocates more): truncated files fail fast.
    if (left >= 0 && static_cast<int64_t>(n) > left)
        fail(source_name_, ": truncated: ", what, " needs ", n, " bytes at offset ", at, ", only ", left, " left");
    if (source_.read(dst, n) != n)
        fail(source_name_, ": truncated: ", what, " needs ", n, " bytes at offset ", at);
}

void NcnnWeightReader::skip_padding(size_t payload_bytes)
{
    uint8_t pad[4];
    const size_t n = align4(payload_bytes) - payload_bytes;
    if (n) read_exact(pad, n, "alignment padding");
}

Tensor NcnnWeightReader::load(int64_t count, WeightEncoding encoding)
{
    check(count >= 0, "negative weight size ", count);
    const int64_t left = source_.remaining();
    // Smallest possible encoding is one byte per value: reject impossible sizes before allocating.
    if (left >= 0 && count > left)
        fail(source_name_, ": truncated: a weight of ", count, " values at offset ", source_.offset, " but only ",
             left, " bytes left");
    if (count * 4 > max_bytes_)
        throw TooLargeError(detail::concat(source_name_, ": weight of ", count, " values is too large (limit ",
                                           max_bytes_, " bytes)"));
    StoredWeight w;
    w.encoding = encoding;
    uint32_t tag = kTagFp32;
    if (encoding == WeightEncoding::Tagged) read_exact(&tag, 4, "weight tag");
    const size_t n = static_cast<size_t>(count);
    if (tag == kTagFp32 || tag == kTagFp32Scaled) {
        w.value = Tensor({count}, DType::F32);
        read_exact(w.value.raw(), n * 4, "fp32 weight");
        if (tag == kTagFp32Scaled) {
            append(w.original, &tag, 4);
            append(w.original, w.value.raw(), n * 4);
        }
    } else if (tag == kTagFp16) {
        std::vector<uint16_t> half(n);
        read_exact(half.data(), n * 2, "fp16 weight");
        skip_padding(n * 2);
        w.value = Tensor({count}, DType::F32);
        float* dst = w.value.data<float>();
        for (size_t i = 0; i < n; ++i) dst[i] = half_to_float(half[i]);
        append(w.original, &tag, 4);
        append(w.original, half.data(), n * 2);
        w.original.resize(4 + align4(n * 2), 0);
    } else if (tag == kTagInt8) {
        w.value = Tensor({count}, DType::I8);
        read_exact(w.value.raw(), n, "int8 weight");
        skip_padding(n);
    } else {
        {
            // Any other non-zero tag: a 256-entry float codebook, then one uint8 index per value.
            float table[256];
            read_exact(table, sizeof table, "codebook table");
            std::vector<uint8_t> index(n);
            read_exact(index.data(), n, "codebook indices");
            skip_padding(n);
            w.value = Tensor({count}, DType::F32);
            float* dst = w.value.data<float>();
            for (size_t i = 0; i < n; ++i) dst[i] = table[index[i]];
            append(w.original, &tag, 4);
            append(w.original, table, sizeof table);
            append(w.original, index.data(), n);
            w.original.resize(4 + sizeof table + align4(n), 0);
        }
    }
    recorded_.push_back(w);
    return w.value;
}

Tensor NcnnWeightReader::load_typed(const Shape& shape, DType dtype)
{
    const int64_t count = shape_numel(shape);
    // A string takes at least its 4-byte length in the file.
    const int64_t bytes = count * (dtype == DType::String ? 4 : static_cast<int64_t>(dtype_size(dtype)));
    const int64_t left = source_.remaining();
    if (left >= 0 && bytes > left)
        fail(source_name_, ": truncated: a ", dtype_name(dtype), " constant ", shape_str(shape), " needs ", bytes,
             " bytes at offset ", source_.offset, " but only ", left, " are left");
    if (bytes > max_bytes_)
        throw TooLargeError(detail::concat(source_name_, ": constant ", shape_str(shape), " is too large"));
    if (dtype == DType::String) return load_strings(shape);
    StoredWeight w{Tensor(shape, dtype), WeightEncoding::Typed, {}};
    read_exact(w.value.raw(), static_cast<size_t>(bytes), "typed constant");
    normalize_bools(w.value);
    skip_padding(static_cast<size_t>(bytes));
    recorded_.push_back(w);
    return w.value;
}

// Strings are stored as (uint32 byte length, bytes) each, zero-padded to 4 bytes at the end.
Tensor NcnnWeightReader::load_strings(const Shape& shape)
{
    StoredWeight w{Tensor(shape, DType::String), WeightEncoding::Typed, {}};
    size_t payload = 0;
    for (int64_t i = 0; i < w.value.numel(); ++i) {
        uint32_t length = 0;
        read_exact(&length, 4, "string length");
        const int64_t left = source_.remaining();
        if ((left >= 0 && length > left) || static_cast<int64_t>(payload + length) > max_bytes_)
            fail(source_name_, ": string ", i, " of a constant ", shape_str(shape), " claims ", length,
                 " bytes at offset ", source_.offset, ", more than the file or the weight limit holds");
        std::string& text = w.value.data<std::string>()[i];
        text.resize(length);
        read_exact(text.data(), length, "string");
        payload += 4 + length;
    }
    skip_padding(payload);
    recorded_.push_back(w);
    return w.value;
}

std::vector<StoredWeight> NcnnWeightReader::take_recorded()
{
    std::vector<StoredWeight> out;
    out.swap(recorded_);
    return out;
}

void NcnnWeightReader::expect_end()
{
    const int64_t left = source_.remaining();
    uint8_t probe;
    if (left > 0 || (left < 0 && source_.read(&probe, 1) == 1))
        fail(source_name_, ": ", left > 0 ? std::to_string(left) : std::string("some"),
             " bytes left over after the last weight: the weights do not match the .param");
}

void write_ncnn_weight(const StoredWeight& w, std::vector<uint8_t>& out)
{
    if (!w.original.empty()) {
        append(out, w.original.data(), w.original.size());
        return;
    }
    const size_t n = static_cast<size_t>(w.value.numel());
    if (w.encoding == WeightEncoding::Typed && w.value.dtype() == DType::String) { // as load_strings reads them
        const size_t start = out.size();
        for (int64_t i = 0; i < w.value.numel(); ++i) {
            const std::string& text = w.value.data<std::string>()[i];
            check(text.size() <= UINT32_MAX, "a string of ", text.size(), " bytes is too long to store");
            const auto length = static_cast<uint32_t>(text.size());
            append(out, &length, 4);
            append(out, text.data(), text.size());
        }
        out.resize(start + align4(out.size() - start), 0);
        return;
    }
    if (w.encoding == WeightEncoding::Typed) {
        append(out, w.value.raw(), w.value.nbytes());
        out.resize(out.size() + align4(w.value.nbytes()) - w.value.nbytes(), 0);
        return;
    }
    if (w.value.dtype() == DType::I8) {
        check(w.encoding == WeightEncoding::Tagged, "int8 weights need a tagged slot");
        append(out, &kTagInt8, 4);
        append(out, w.value.raw(), n);
        out.resize(out.size() + align4(n) - n, 0);
        return;
    }
    if (w.encoding == WeightEncoding::Tagged) append(out, &kTagFp32, 4);
    append(out, w.value.raw(), n * 4);
}

} // namespace kestrel
