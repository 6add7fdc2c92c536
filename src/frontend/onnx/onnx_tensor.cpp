#include "frontend/onnx/onnx_tensor.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "core/bool_bytes.h"
#include "core/dtype_dispatch.h"
#include "kestrel/error.h"
#include "onnx/onnx-data_pb.h"

namespace kestrel {

DType dtype_from_onnx(int t, const std::string& what)
{
    using TP = onnx::TensorProto;
    switch (t) {
    case TP::FLOAT: return DType::F32;
    case TP::UINT8: return DType::U8;
    case TP::INT8: return DType::I8;
    case TP::UINT16: return DType::U16;
    case TP::INT16: return DType::I16;
    case TP::INT32: return DType::I32;
    case TP::INT64: return DType::I64;
    case TP::BOOL: return DType::Bool;
    case TP::FLOAT16: return DType::F16;
    case TP::DOUBLE: return DType::F64;
    case TP::UINT32: return DType::U32;
    case TP::UINT64: return DType::U64;
    case TP::BFLOAT16: return DType::BF16;
    case TP::STRING: return DType::String;
    default: fail(what, ": unsupported ONNX element type ", t, " (complex numbers and 8-bit floats are not supported)");
    }
}

int onnx_type_from_dtype(DType t)
{
    using TP = onnx::TensorProto;
    for (int onnx_type : {TP::FLOAT, TP::UINT8, TP::INT8, TP::UINT16, TP::INT16, TP::INT32, TP::INT64, TP::BOOL,
                          TP::FLOAT16, TP::DOUBLE, TP::UINT32, TP::UINT64, TP::BFLOAT16, TP::STRING})
        if (dtype_from_onnx(onnx_type, "") == t) return onnx_type;
    fail("no ONNX element type for ", dtype_name(t));
}

namespace {

std::string read_external(const onnx::TensorProto& p, const std::string& base_dir, size_t expected)
{
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : p.external_data()) {
        if (kv.key() == "location") location = kv.value();
        else if (kv.key() == "offset") offset = std::stoll(kv.value());
        else if (kv.key() == "length") length = std::stoll(kv.value());
    }
    check(!location.empty(), "tensor '", p.name(), "': external data without a location");
    const std::string path = base_dir + "/" + location;
    std::ifstream in(path, std::ios::binary);
    check(static_cast<bool>(in), "tensor '", p.name(), "': cannot open external data file ", path);
    in.seekg(0, std::ios::end);
    const int64_t size = in.tellg();
    if (length < 0) length = static_cast<int64_t>(expected);
    check(offset >= 0 && length >= 0 && offset <= size && length <= size - offset, "tensor '", p.name(),
          "': external data range [", offset, ", +", length, ") is outside ", path, " (", size, " bytes)");
    std::string bytes(static_cast<size_t>(length), '\0');
    in.seekg(offset);
    in.read(bytes.data(), length);
    return bytes;
}

// Copies a repeated field into the tensor, converting element by element.
template <class Field>
void copy_field(const Field& field, Tensor& t, const std::string& name)
{
    check(field.size() == t.numel(), "tensor '", name, "': has ", field.size(), " values, shape ",
          shape_str(t.shape()), " needs ", t.numel());
    visit_dtype(t.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* dst = t.data<T>();
        for (int64_t i = 0; i < t.numel(); ++i) {
            const auto v = field.Get(static_cast<int>(i));
            if constexpr (std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>)
                dst[i] = T{static_cast<uint16_t>(v)}; // half types travel as their bit patterns
            else
                dst[i] = static_cast<T>(v);
        }
    });
}

// The number of values stored in the proto's first non-empty typed field (the one read below).
int64_t inline_value_count(const onnx::TensorProto& p)
{
    for (const int count : {p.float_data_size(), p.int64_data_size(), p.double_data_size(), p.uint64_data_size(),
                            p.int32_data_size(), p.string_data_size()})
        if (count > 0) return count;
    return 0;
}

} // namespace

Tensor tensor_from_onnx(const onnx::TensorProto& p, const std::string& base_dir)
{
    const std::string name = p.name().empty() ? std::string("<unnamed>") : p.name();
    Shape shape;
    for (int64_t d : p.dims()) {
        check(d >= 0, "tensor '", name, "': negative dimension ", d);
        shape.push_back(d);
    }
    const DType dtype = dtype_from_onnx(p.data_type(), "tensor '" + name + "'");
    const int64_t n = shape_numel(shape);
    check(n <= (int64_t(1) << 40) / static_cast<int64_t>(dtype_size(dtype)), "tensor '", name, "' is too large");
    const size_t bytes = static_cast<size_t>(n) * dtype_size(dtype);
    // A declared shape must not cost memory before the data behind it is known to be there.
    if (p.data_location() != onnx::TensorProto::EXTERNAL) {
        const int64_t have = inline_value_count(p);
        check(p.has_raw_data() ? p.raw_data().size() == bytes : have == n, "tensor '", name, "': holds ",
              p.has_raw_data() ? static_cast<int64_t>(p.raw_data().size()) : have,
              p.has_raw_data() ? " bytes of raw data" : " values", ", shape ", shape_str(shape), " needs ",
              p.has_raw_data() ? static_cast<int64_t>(bytes) : n);
    }
    if (dtype == DType::String) {
        check(p.data_location() != onnx::TensorProto::EXTERNAL && !p.has_raw_data(), "tensor '", name,
              "': strings must be in string_data");
        return Tensor::strings(shape, std::vector<std::string>(p.string_data().begin(), p.string_data().end()));
    }
    Tensor t(shape, dtype);
    if (p.data_location() == onnx::TensorProto::EXTERNAL) {
        const std::string data = read_external(p, base_dir, bytes);
        check(data.size() == bytes, "tensor '", name, "': external data has ", data.size(), " bytes, expected ", bytes);
        std::memcpy(t.raw(), data.data(), bytes);
    } else if (p.has_raw_data()) {
        check(p.raw_data().size() == bytes, "tensor '", name, "': raw data has ", p.raw_data().size(),
              " bytes, shape ", shape_str(shape), " needs ", bytes);
        if (bytes) std::memcpy(t.raw(), p.raw_data().data(), bytes);
    } else if (p.float_data_size() > 0) {
        copy_field(p.float_data(), t, name);
    } else if (p.int64_data_size() > 0) {
        copy_field(p.int64_data(), t, name);
    } else if (p.double_data_size() > 0) {
        copy_field(p.double_data(), t, name);
    } else if (p.uint64_data_size() > 0) {
        copy_field(p.uint64_data(), t, name);
    } else if (p.int32_data_size() > 0) {
        copy_field(p.int32_data(), t, name);
    } else {
        check(n == 0, "tensor '", name, "' has no data");
    }
    normalize_bools(t);
    return t;
}

Tensor read_onnx_tensor_file(const std::string& path, std::string* name)
{
    std::ifstream in(path, std::ios::binary);
    check(static_cast<bool>(in), path, ": cannot open");
    onnx::TensorProto proto;
    check(proto.ParseFromIstream(&in), path, ": not a serialized ONNX TensorProto");
    if (name) *name = proto.name();
    const size_t slash = path.find_last_of('/');
    return tensor_from_onnx(proto, slash == std::string::npos ? "." : path.substr(0, slash));
}

namespace {

std::string folder_of(const std::string& path)
{
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

template <class Proto> Proto parse_file(const std::string& path, const char* what)
{
    std::ifstream in(path, std::ios::binary);
    check(static_cast<bool>(in), path, ": cannot open");
    Proto proto;
    check(proto.ParseFromIstream(&in), path, ": not a serialized ONNX ", what);
    return proto;
}

Tensor sequence_from_onnx(const onnx::SequenceProto& proto, const std::string& path)
{
    check(proto.sequence_values_size() == 0 && proto.map_values_size() == 0 && proto.optional_values_size() == 0, path,
          ": only sequences of tensors are supported");
    std::vector<Tensor> items;
    for (const onnx::TensorProto& t : proto.tensor_values()) items.push_back(tensor_from_onnx(t, folder_of(path)));
    return Tensor::sequence(items);
}

} // namespace

Tensor read_onnx_sequence_file(const std::string& path)
{
    return sequence_from_onnx(parse_file<onnx::SequenceProto>(path, "SequenceProto"), path);
}

Tensor read_onnx_optional_file(const std::string& path)
{
    const onnx::OptionalProto proto = parse_file<onnx::OptionalProto>(path, "OptionalProto");
    switch (proto.elem_type()) {
    case onnx::OptionalProto::UNDEFINED: return Tensor::optional(Tensor());
    case onnx::OptionalProto::TENSOR: return Tensor::optional(tensor_from_onnx(proto.tensor_value(), folder_of(path)));
    case onnx::OptionalProto::SEQUENCE: return Tensor::optional(sequence_from_onnx(proto.sequence_value(), path));
    default: fail(path, ": only optional tensors and sequences are supported");
    }
}

} // namespace kestrel
