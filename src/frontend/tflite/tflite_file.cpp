#include "frontend/tflite/tflite_file.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "kestrel/error.h"

namespace kestrel::tflite_import {

namespace {

// Flatbuffers hold offsets of 32 bits: a file's verified part stays under 2 GB.
constexpr size_t kMaxFlatbufferSize = size_t(1) << 31;

std::vector<int64_t> int_vector(const flatbuffers::Vector<int32_t>* v)
{
    std::vector<int64_t> out;
    if (v) out.assign(v->begin(), v->end());
    return out;
}

// The values of a sparse index vector (int32, uint16 or uint8) of one dimension.
std::vector<int64_t> index_values(fb::SparseIndexVector type, const void* table, const std::string& context)
{
    std::vector<int64_t> out;
    if (type == fb::SparseIndexVector::Int32Vector && table) {
        if (auto* v = static_cast<const fb::Int32Vector*>(table)->values()) out.assign(v->begin(), v->end());
    } else if (type == fb::SparseIndexVector::Uint16Vector && table) {
        if (auto* v = static_cast<const fb::Uint16Vector*>(table)->values()) out.assign(v->begin(), v->end());
    } else if (type == fb::SparseIndexVector::Uint8Vector && table) {
        if (auto* v = static_cast<const fb::Uint8Vector*>(table)->values()) out.assign(v->begin(), v->end());
    } else {
        fail(context, ": a sparse dimension without its index vector");
    }
    return out;
}

// Sparse storage (TFLite's compressed dimensions, as DENSIFY reads them):
// the stored values are the nonzero blocks walked in `traversal_order` over
// the dims and then the block dims; a dense level has dense_size entries, a
// CSR level lists, for each entry of the level above, its indices between
// two segment offsets.
class Densifier {
public:
    Densifier(const fb::SparsityParameters& sp, const Shape& shape, const std::string& context)
        : shape_(shape), context_(context)
    {
        const auto* order = sp.traversal_order();
        const auto* meta = sp.dim_metadata();
        check(order && meta && order->size() == meta->size() && order->size() >= shape.size(), context,
              ": sparsity parameters with mismatched traversal order and dimension metadata");
        const size_t rank = shape.size(), levels = order->size();
        check(levels <= 2 * rank, context, ": ", levels, " sparse levels for rank ", rank, " (at most one block per dimension)");
        std::vector<int> block_map;
        if (sp.block_map()) block_map.assign(sp.block_map()->begin(), sp.block_map()->end());
        check(block_map.size() == levels - rank, context, ": block map has ", block_map.size(), " entries for ",
              levels - rank, " block dimensions");
        block_size_.assign(rank, 1);
        levels_.resize(levels);
        std::vector<bool> seen(levels, false);
        for (size_t l = 0; l < levels; ++l) {
            const int d = order->Get(static_cast<flatbuffers::uoffset_t>(l));
            check(d >= 0 && static_cast<size_t>(d) < levels && !seen[static_cast<size_t>(d)], context,
                  ": traversal order is not a permutation");
            seen[static_cast<size_t>(d)] = true;
            Level& lv = levels_[l];
            const fb::DimensionMetadata* m = meta->Get(static_cast<flatbuffers::uoffset_t>(l));
            check(m != nullptr, context, ": missing dimension metadata");
            lv.dense = m->format() == fb::DimensionType::DENSE;
            lv.dense_size = m->dense_size();
            if (!lv.dense) {
                lv.segments = index_values(m->array_segments_type(), m->array_segments(), context);
                lv.indices = index_values(m->array_indices_type(), m->array_indices(), context);
            }
            if (static_cast<size_t>(d) < rank) {
                lv.dim = d;
            } else {
                const int of = block_map[static_cast<size_t>(d) - rank];
                check(of >= 0 && static_cast<size_t>(of) < rank && lv.dense && lv.dense_size > 0, context,
                      ": a block dimension must be dense and map to a tensor dimension");
                lv.dim = of;
                lv.block = true;
                block_size_[static_cast<size_t>(of)] = lv.dense_size;
            }
        }
        for (size_t k = 0; k < rank; ++k)
            check(block_size_[k] > 0 && shape[k] % block_size_[k] == 0, context, ": dimension ", k, " (", shape[k],
                  ") is not a multiple of its block size ", block_size_[k]);
    }

    // Values are read byte-wise: a buffer of a malformed file need not be aligned.
    template <class T> void fill(const uint8_t* values, size_t count, T* dense)
    {
        values_ = values;
        count_ = count;
        coords_.assign(shape_.size(), 0);
        block_coords_.assign(shape_.size(), 0);
        walk(0, 0, dense);
    }

private:
    struct Level {
        bool dense = true;
        int64_t dense_size = 0;
        std::vector<int64_t> segments, indices;
        int dim = 0;
        bool block = false;
    };

    template <class T> void walk(size_t level, int64_t prev, T* dense)
    {
        if (level == levels_.size()) {
            check(prev >= 0 && static_cast<size_t>(prev) < count_, context_, ": sparse data holds fewer values than its indices");
            int64_t offset = 0;
            for (size_t k = 0; k < shape_.size(); ++k) {
                const int64_t c = coords_[k] * block_size_[k] + block_coords_[k];
                check(c >= 0 && c < shape_[k], context_, ": sparse index ", c, " past dimension ", k, " (", shape_[k], ")");
                offset = offset * shape_[k] + c;
            }
            std::memcpy(dense + offset, values_ + static_cast<size_t>(prev) * sizeof(T), sizeof(T));
            return;
        }
        const Level& lv = levels_[level];
        std::vector<int64_t>& coord = lv.block ? block_coords_ : coords_;
        if (lv.dense) {
            check(lv.dense_size >= 0 && lv.dense_size <= shape_[static_cast<size_t>(lv.dim)], context_,
                  ": dense size ", lv.dense_size, " past its dimension");
            for (int64_t i = 0; i < lv.dense_size; ++i) {
                coord[static_cast<size_t>(lv.dim)] = i;
                walk(level + 1, prev * lv.dense_size + i, dense);
            }
            return;
        }
        check(prev >= 0 && static_cast<size_t>(prev) + 1 < lv.segments.size(), context_, ": sparse segment ", prev,
              " past the segment list");
        const int64_t begin = lv.segments[static_cast<size_t>(prev)], end = lv.segments[static_cast<size_t>(prev) + 1];
        check(begin >= 0 && begin <= end && static_cast<size_t>(end) <= lv.indices.size(), context_,
              ": sparse segments out of order or past the index list");
        for (int64_t j = begin; j < end; ++j) {
            coord[static_cast<size_t>(lv.dim)] = lv.indices[static_cast<size_t>(j)];
            walk(level + 1, j, dense);
        }
    }

    Shape shape_;
    std::string context_;
    std::vector<int64_t> block_size_;
    std::vector<Level> levels_;
    const uint8_t* values_ = nullptr;
    size_t count_ = 0;
    std::vector<int64_t> coords_, block_coords_;
};

} // namespace

DType dtype_of(fb::TensorType type, const std::string& context)
{
    switch (type) {
    case fb::TensorType::FLOAT32: return DType::F32;
    case fb::TensorType::FLOAT16: return DType::F16;
    case fb::TensorType::FLOAT64: return DType::F64;
    case fb::TensorType::INT32: return DType::I32;
    case fb::TensorType::UINT32: return DType::U32;
    case fb::TensorType::INT64: return DType::I64;
    case fb::TensorType::UINT64: return DType::U64;
    case fb::TensorType::INT16: return DType::I16;
    case fb::TensorType::UINT16: return DType::U16;
    case fb::TensorType::INT8: return DType::I8;
    case fb::TensorType::UINT8: return DType::U8;
    case fb::TensorType::BOOL: return DType::Bool;
    case fb::TensorType::STRING: return DType::String;
    default: break;
    }
    fail(context, ": tensor type ", fb::EnumNameTensorType(type), " (", static_cast<int>(type), ") is not supported");
}

TfliteFile::TfliteFile(const uint8_t* bytes, size_t size, std::string source, int64_t max_tensor_bytes)
    : bytes_(bytes), size_(size), source_(std::move(source)), max_tensor_bytes_(max_tensor_bytes)
{
    check(size >= 8, source_, ": too short for a TensorFlow Lite file (", size, " bytes)");
    check(fb::ModelBufferHasIdentifier(bytes), source_, ": not a TensorFlow Lite file (no \"TFL3\" identifier)");
    // Files over 2 GB keep their buffers after the flatbuffer (Buffer.offset): verify its part.
    flatbuffers::Verifier verifier(bytes, std::min(size, kMaxFlatbufferSize - 1));
    check(fb::VerifyModelBuffer(verifier), source_, ": malformed TensorFlow Lite file (the flatbuffer verifier rejects it)");
    model_ = fb::GetModel(bytes);
    const auto* subgraphs = model_->subgraphs();
    check(subgraphs && subgraphs->size() > 0 && subgraphs->Get(0), source_, ": the model has no subgraph");
    graph_ = subgraphs->Get(0);
    check(graph_->tensors() != nullptr, source_, ": the main subgraph has no tensors");
    read_tensors();
}

void TfliteFile::check_size(const Shape& shape, DType dtype, const std::string& what) const
{
    const int64_t n = shape_numel(shape), size = static_cast<int64_t>(dtype_size(dtype));
    if (n > max_tensor_bytes_ / std::max<int64_t>(size, 1))
        throw TooLargeError(detail::concat(source_, ": ", what, " of shape ", shape_str(shape), " would take over ",
                                           max_tensor_bytes_, " bytes (the limit)"));
}

const TensorInfo& TfliteFile::tensor(int index, const std::string& context) const
{
    check(index >= 0 && static_cast<size_t>(index) < tensors_.size(), source_, ": ", context, ": tensor index ", index,
          " past the subgraph's ", tensors_.size(), " tensors");
    return tensors_[static_cast<size_t>(index)];
}

void TfliteFile::read_tensors()
{
    const auto* buffers = model_->buffers();
    std::map<std::string, int> seen;
    const auto& list = *graph_->tensors();
    tensors_.resize(list.size());
    for (flatbuffers::uoffset_t i = 0; i < list.size(); ++i) {
        const fb::Tensor* t = list.Get(i);
        TensorInfo& info = tensors_[i];
        const std::string where = "tensor " + std::to_string(i);
        check(t != nullptr, source_, ": ", where, " is missing");
        info.name = t->name() ? t->name()->str() : std::string();
        if (info.name.empty() || seen.count(info.name)) info.name += "#" + std::to_string(i);
        seen[info.name] = static_cast<int>(i);
        const std::string context = source_ + ": tensor " + std::to_string(i) + " '" + info.name + "'";
        info.shape = int_vector(t->shape());
        info.signature = int_vector(t->shape_signature());
        for (int64_t d : info.shape) check(d >= 0, context, ": negative dimension ", d, " in its shape");
        check(info.signature.empty() || info.signature.size() == info.shape.size(), context,
              ": shape_signature has rank ", info.signature.size(), ", shape ", info.shape.size());
        info.file_type = t->type();
        info.dtype = dtype_of(t->type(), context);
        info.sparsity = t->sparsity();
        if (const fb::QuantizationParameters* q = t->quantization()) {
            if (q->scale()) info.quant.scale.assign(q->scale()->begin(), q->scale()->end());
            if (q->zero_point()) info.quant.zero_point.assign(q->zero_point()->begin(), q->zero_point()->end());
            info.quant.axis = q->quantized_dimension();
            check(info.quant.zero_point.empty() || info.quant.zero_point.size() == info.quant.scale.size(), context,
                  ": ", info.quant.scale.size(), " scales but ", info.quant.zero_point.size(), " zero points");
            if (info.quant.scale.size() > 1)
                check(info.quant.axis >= 0 && static_cast<size_t>(info.quant.axis) < info.shape.size() &&
                          info.shape[static_cast<size_t>(info.quant.axis)] == static_cast<int64_t>(info.quant.scale.size()),
                      context, ": ", info.quant.scale.size(), " scales do not match the size of its quantized dimension ",
                      info.quant.axis);
        }
        const uint32_t b = t->buffer();
        check(b == 0 || (buffers && b < buffers->size()), context, ": buffer index ", b, " past the file's ",
              buffers ? buffers->size() : 0, " buffers");
        const fb::Buffer* buf = b == 0 ? nullptr : buffers->Get(b);
        if (!buf) continue;
        if (buf->data() && buf->data()->size() > 0) {
            info.data = buf->data()->data();
            info.data_size = buf->data()->size();
        } else if (buf->offset() > 1) {
            // Large models: the data lies after the flatbuffer, at offset from the file's start.
            check(buf->offset() <= size_ && buf->size() <= size_ - buf->offset(), context, ": its buffer (offset ",
                  buf->offset(), ", ", buf->size(), " bytes) lies outside the file (", size_, " bytes)");
            info.data = bytes_ + buf->offset();
            info.data_size = buf->size();
        }
        if (!info.data || info.dtype == DType::String) continue;
        // A dense constant holds exactly its shape's elements; a sparse one its nonzero values.
        const size_t elem = dtype_size(info.dtype);
        if (info.sparsity) {
            check(info.data_size % elem == 0, context, ": sparse data of ", info.data_size, " bytes is not whole elements");
        } else {
            const int64_t n = shape_numel(info.shape);
            check(static_cast<uint64_t>(n) <= info.data_size / elem && info.data_size == static_cast<size_t>(n) * elem,
                  context, ": shape ", shape_str(info.shape), " of ", dtype_name(info.dtype), " needs ",
                  static_cast<uint64_t>(n) * elem, " bytes, its buffer holds ", info.data_size);
        }
    }
}

std::string TfliteFile::OpCode::name() const { return custom.empty() ? fb::EnumNameBuiltinOperator(builtin) : custom; }

TfliteFile::OpCode TfliteFile::opcode(const fb::Operator& op, int op_index) const
{
    const auto* codes = model_->operator_codes();
    check(codes && op.opcode_index() < codes->size(), source_, ": operator ", op_index, ": opcode index ",
          op.opcode_index(), " past the file's ", codes ? codes->size() : 0, " operator codes");
    const fb::OperatorCode* code = codes->Get(op.opcode_index());
    check(code != nullptr, source_, ": operator ", op_index, ": missing operator code");
    OpCode out;
    // Codes up to 127 sit in the deprecated byte too; newer ones only in builtin_code.
    const int builtin = std::max<int>(code->deprecated_builtin_code(), static_cast<int>(code->builtin_code()));
    out.builtin = static_cast<fb::BuiltinOperator>(builtin);
    out.version = code->version();
    if (out.builtin == fb::BuiltinOperator::CUSTOM)
        out.custom = code->custom_code() ? code->custom_code()->str() : std::string("CUSTOM");
    return out;
}

Tensor TfliteFile::constant_values(int index) const
{
    const TensorInfo& info = tensor(index, "constant");
    check(info.data != nullptr, source_, ": tensor ", index, " '", info.name, "' holds no data");
    check(info.dtype != DType::String, source_, ": tensor ", index, " '", info.name, "': string constants are not supported");
    check_size(info.shape, info.dtype, "tensor " + std::to_string(index) + " '" + info.name + "'");
    Tensor out = Tensor::zeros(info.shape, info.dtype);
    if (!info.sparsity) {
        std::memcpy(out.raw(), info.data, info.data_size);
        return out;
    }
    const std::string context = source_ + ": tensor " + std::to_string(index) + " '" + info.name + "'";
    Densifier densify(*info.sparsity, info.shape, context);
    const size_t count = info.data_size / dtype_size(info.dtype);
    switch (dtype_size(info.dtype)) {
    case 1: densify.fill(info.data, count, static_cast<uint8_t*>(out.raw())); break;
    case 2: densify.fill(info.data, count, static_cast<uint16_t*>(out.raw())); break;
    case 4: densify.fill(info.data, count, static_cast<uint32_t*>(out.raw())); break;
    case 8: densify.fill(info.data, count, static_cast<uint64_t*>(out.raw())); break;
    default: fail(context, ": sparse ", dtype_name(info.dtype), " data is not supported");
    }
    return out;
}

} // namespace kestrel::tflite_import
