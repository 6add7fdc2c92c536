// ncnn's .bin stream as a weight source for Op::load_model (every ModelBin
// tag; it records what it hands out so the Net can write the .bin back), and
// the .bin writer. Weights from lists and zeros: graph/weight_lists.h.
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kestrel/weights.h"

namespace kestrel {

// A forward-only byte stream with a known or unknown (-1) remaining size.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    virtual size_t read(void* dst, size_t n) = 0;
    virtual int64_t remaining() const { return -1; }
    size_t offset = 0;
};

class MemorySource : public ByteSource {
public:
    MemorySource(const void* data, size_t size) : data_(static_cast<const uint8_t*>(data)), size_(size) {}
    size_t read(void* dst, size_t n) override;
    int64_t remaining() const override { return static_cast<int64_t>(size_ - pos_); }

private:
    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
};

class FileSource : public ByteSource {
public:
    explicit FileSource(const std::string& path); // throws when it cannot be opened
    ~FileSource() override;
    size_t read(void* dst, size_t n) override;
    int64_t remaining() const override { return size_ - static_cast<int64_t>(offset); }

private:
    std::FILE* file_ = nullptr;
    int64_t size_ = 0;
};

class CallbackSource : public ByteSource {
public:
    explicit CallbackSource(std::function<size_t(void*, size_t)> fn) : fn_(std::move(fn)) {}
    size_t read(void* dst, size_t n) override;

private:
    std::function<size_t(void*, size_t)> fn_;
};

// Reads ncnn ModelBin buffers: raw fp32 ("type 1") or tagged ("type 0").
class NcnnWeightReader : public WeightReader {
public:
    NcnnWeightReader(ByteSource& source, std::string source_name, int64_t max_bytes);
    Tensor load(int64_t count, WeightEncoding encoding) override;
    Tensor load_typed(const Shape& shape, DType dtype) override;
    // Weights handed out since the last call (moved out).
    std::vector<StoredWeight> take_recorded();
    // Throws when the stream still holds data: the .bin does not belong to the .param.
    void expect_end();

private:
    Tensor load_strings(const Shape& shape);
    void read_exact(void* dst, size_t n, const char* what);
    void skip_padding(size_t payload_bytes);
    ByteSource& source_;
    std::string source_name_;
    int64_t max_bytes_;
    std::vector<StoredWeight> recorded_;
};

// Appends one weight in ncnn .bin encoding (the original bytes when it had some).
void write_ncnn_weight(const StoredWeight& weight, std::vector<uint8_t>& out);

} // namespace kestrel
