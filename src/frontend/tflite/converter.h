// TensorFlow Lite -> Kestrel graph conversion. Each builtin operator (and
// each custom operator Kestrel takes) has an OpConverter that reads the
// operator through an OpContext and writes layers through the GraphBuilder;
// the family tables are in convert_<family>.cpp.
//
// Layout: TFLite images are NHWC; the engine's layers are channels first.
// Each value lives in one of two forms: plain (the file's axis order) or
// folded (a rank-4 value held as NCHW, axis_order.h's ChannelsLast mapping).
// Layers that compute on images (convolutions, pools, resizes) take and give
// folded values; element-wise layers and axis-bearing ones (concat, reduce,
// slice, pad, softmax) follow their input's form with their axes mapped;
// layers that read the element order (reshape, gather, matmul) take plain
// values. A Permute is emitted only where a value crosses between forms (a
// graph input entering a convolution, a reshape after one), once per value.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "frontend/common/graph_builder.h"
#include "frontend/tflite/tflite_file.h"

namespace kestrel::tflite_import {

class ModelConverter;

class OpContext {
public:
    OpContext(ModelConverter& model, const fb::Operator& op, int index);

    const fb::Operator& op() const { return op_; }
    const TfliteFile::OpCode& code() const { return code_; }
    // "operator 12 (CONV_2D v2)" for messages.
    std::string where() const;
    template <class... Args> void check(bool cond, const Args&... args) const
    {
        if (!cond) fail_here(detail::concat(args...));
    }
    [[noreturn]] void fail_here(const std::string& message) const;

    // Inputs (an absent optional input is index -1) and outputs.
    int num_inputs() const;
    bool has_input(int k) const;
    int num_outputs() const;
    int input_index(int k) const;
    int output_index(int k) const;
    const TensorInfo& in(int k) const;
    const TensorInfo& out(int k) const;
    int rank(int k) const { return static_cast<int>(in(k).shape.size()); }

    // The value of input k when it is known while converting (a constant of
    // the file, dequantized or densified by an earlier operator), or null.
    const Tensor* constant(int k) const;
    // Its values as float32 / int64 (fails naming `what` when not constant).
    Tensor constant_f32(int k, const char* what) const;
    std::vector<int64_t> constant_ints(int k, const char* what) const;

    // Input k's blob in the file's axis order, or folded (rank 4: NCHW).
    std::string plain(int k);
    std::string folded(int k);
    // Whether input k is held folded (its producer computed on images).
    bool is_folded(int k) const;
    // The form to compute an element-wise or axis-bearing operator in:
    // folded when any rank-4 input is held folded (so a chain of convolutions
    // and additions never leaves NCHW), plain otherwise.
    bool prefer_folded() const;
    // Input k in that form; a lower-rank operand broadcast against a folded
    // one is first given leading unit axes (NumPy broadcasting), then folded.
    std::string operand(int k, bool folded_form);
    // The engine axis of the file's `axis` of a rank-`rank` value in a form.
    static int axis_in(int axis, int rank, bool folded_form);

    // The blob output k is written to in a form; the layer that writes it is
    // the caller's to emit.
    std::string output(int k, bool folded_form);
    // Whether output k is read only by operators of custom code `custom`
    // (and is no graph output).
    bool output_read_only_by(int k, const std::string& custom) const;
    // Output k holds a value known while converting.
    void set_constant_output(int k, const Tensor& value);

    // Adds a layer named after the operator (later layers get a suffix).
    void emit(const std::string& type, const std::vector<std::string>& bottoms, const std::vector<std::string>& tops,
              const ParamDict& params = {}, const std::vector<Tensor>& weights = {});
    // A fresh blob name for an intermediate value.
    std::string temp(const std::string& what);
    // A value known while converting as a blob (a Constant layer, emitted once).
    std::string constant_blob(const Tensor& value, const std::string& what);
    // `x` through the operator's fused activation (NONE: `x` itself), written
    // to `to` when given.
    std::string activation(const std::string& x, fb::ActivationFunctionType act, const std::string& to);

    GraphBuilder& builder();
    // Refuses (TooLargeError) a value made while converting over the size limit.
    void check_size(const Shape& shape, DType dtype, const std::string& what) const;

private:
    ModelConverter& model_;
    const fb::Operator& op_;
    int index_;
    TfliteFile::OpCode code_;
    std::string name_;
    int layers_ = 0;
};

using OpConverter = std::function<void(OpContext&)>;
// Builtin operators by code; custom operators by their custom code.
using BuiltinTable = std::map<fb::BuiltinOperator, OpConverter>;
using CustomTable = std::map<std::string, OpConverter>;

// The family tables (convert_<family>.cpp).
void add_conv_converters(BuiltinTable& builtins, CustomTable& customs);
void add_elementwise_converters(BuiltinTable& builtins);
void add_shape_converters(BuiltinTable& builtins);
void add_reduce_converters(BuiltinTable& builtins);

class ModelConverter {
public:
    ModelConverter(const TfliteFile& file, Net& net);
    void convert();

private:
    friend class OpContext;
    struct Value {
        std::string plain, folded; // the blobs holding it, in either form (empty: not yet)
    };

    void add_graph_inputs();
    void check_operators_supported() const;
    void check_no_quantized_activations() const;
    void add_graph_outputs();
    std::string fresh_name(const std::string& base);
    const Tensor* constant(int tensor); // known value (read from the file once), or null
    std::string plain_blob(int tensor);
    std::string folded_blob(int tensor);

    const TfliteFile& file_;
    GraphBuilder builder_;
    BuiltinTable builtins_;
    CustomTable customs_;
    std::vector<Value> values_;
    std::map<int, Tensor> constants_; // known values by tensor index
    std::set<std::string> file_names_;
    int fresh_ = 0;
};

// real = scale * (q - zero_point) of a quantized constant, per tensor or per
// channel (convert_elementwise.cpp).
Tensor dequantized(const OpContext& n, const Tensor& q, const Quantization& quant);

// A 1-D int64 tensor of `values` (shapes, begins, axes for the layers' inputs).
Tensor int64_tensor(const std::vector<int64_t>& values);

// An integer parameter of the file checked to be in [lo, hi].
int checked_int(const OpContext& n, int64_t v, int64_t lo, int64_t hi, const char* what);

} // namespace kestrel::tflite_import
