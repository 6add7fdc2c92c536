// ONNX -> Kestrel graph conversion. Each ONNX op type has a NodeConverter that
// reads the node through a NodeContext and emits one or more Kestrel layers.
// Converters are grouped in family tables (src/frontend/onnx/convert_<family>.cpp).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "frontend/common/graph_builder.h"
#include "kestrel/error.h"
#include "kestrel/net.h"
#include "onnx/onnx_pb.h"

namespace kestrel::onnx_import {

class ModelConverter;

class NodeContext {
public:
    NodeContext(ModelConverter& model, const onnx::NodeProto& node, int index, int opset);

    const onnx::NodeProto& node() const { return node_; }
    const std::string& op_type() const { return node_.op_type(); }
    int opset() const { return opset_; }
    // Layer name for the first emitted layer (node name, or OpType_index).
    const std::string& name() const { return name_; }

    int num_inputs() const { return node_.input_size(); }
    // Present and not the empty "optional" name.
    bool has_input(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }
    // Blob name of input i; a constant input is emitted as a Constant layer on first use.
    std::string input(int i);
    // Value of input i when it is known at conversion time (initializer, Constant, folded).
    const Tensor* constant(int i) const;
    // Rank and dtype from ONNX shape inference (-1 / nullptr when unknown).
    int input_rank(int i) const;
    const DType* input_dtype(int i) const;
    const Shape* input_shape(int i) const; // dims with -1 for unknown; nullptr when rank unknown
    // The ONNX type of a value (from the model or shape inference), or nullptr.
    const onnx::TypeProto* type_of(const std::string& onnx_name) const;

    int num_outputs() const { return node_.output_size(); }
    bool has_output(int i) const { return i < node_.output_size() && !node_.output(i).empty(); }
    std::string output(int i) const;

    bool has_attr(const std::string& name) const;
    int64_t attr_int(const std::string& name, int64_t def) const;
    float attr_float(const std::string& name, float def) const;
    std::vector<int64_t> attr_ints(const std::string& name) const;
    std::vector<float> attr_floats(const std::string& name) const;
    std::string attr_string(const std::string& name, const std::string& def = "") const;
    Tensor attr_tensor(const std::string& name) const;

    // Adds a layer (named after the node; later layers get a suffix).
    void emit(const std::string& type, const std::vector<std::string>& bottoms, const std::vector<std::string>& tops,
              const ParamDict& params = {}, const std::vector<Tensor>& weights = {});
    // Output i is this known value (emitted as a Constant only if something uses it).
    void set_constant_output(int i, const Tensor& value);
    // A fresh intermediate blob name.
    std::string temp(const std::string& suffix);
    // A value known at conversion time under a fresh name (emitted as a
    // Constant only if a layer reads it as a blob).
    std::string constant_name(const Tensor& value, const std::string& suffix);
    // Input i's ONNX type (shape hints) also describes blob `name`.
    void share_input_type(int i, const std::string& name);

    // Lowering: converts `stand_in`, a node built by this node's converter
    // (e.g. the float op an integer op becomes), in this node's place. Its
    // inputs are this node's inputs, blobs emitted here, or constant_name()s;
    // its layers are named after this node.
    void convert_stand_in(onnx::NodeProto stand_in);
    // The same with a converter of the caller's choosing (one path of an op's converter).
    void convert_stand_in(onnx::NodeProto stand_in, void (*convert)(NodeContext&));

    // Control flow: the blob of an ONNX name of the enclosing scope, and a
    // subgraph converted (and optimized) into a Net of its own whose inputs
    // are the `captured` outer values, in that order.
    std::string outer_blob(const std::string& onnx_name);
    Net convert_subgraph(const onnx::GraphProto& graph, const std::vector<std::string>& captured,
                         const std::string& what);

    template <class... Args> [[noreturn]] void fail(const Args&... args) const
    {
        kestrel::fail(where(), ": ", args...);
    }
    template <class... Args> void check(bool ok, const Args&... args) const
    {
        if (!ok) fail(args...);
    }
    // "node 'name' (OpType, opset 13)"
    std::string where() const;

private:
    ModelConverter& model_;
    const onnx::NodeProto& node_;
    std::string name_;
    int opset_;
    int emitted_ = 0;
    int stand_ins_ = 0;
};

using NodeConverter = void (*)(NodeContext&);

struct ConverterEntry {
    const char* op_type;
    NodeConverter convert;
};

// Family tables; the converter uses their union.
std::vector<ConverterEntry> basic_converters();        // Identity, Constant, activations, element-wise math
std::vector<ConverterEntry> nn_converters();           // Conv, pools, Gemm, MatMul, norms, LRN, ...
std::vector<ConverterEntry> tensor_converters();       // Reshape, Transpose, Concat, Slice, Gather, Shape, ...
std::vector<ConverterEntry> extra_converters();        // Resize, reductions, detection, RNNs, ...
std::vector<ConverterEntry> elementwise_converters();  // Add, Equal, And, Where, Mod, Erf, Sum, ... over all dtypes
std::vector<ConverterEntry> norms_converters();        // InstanceNormalization, MeanVarianceNormalization
std::vector<ConverterEntry> seqmisc_converters();      // RNN/GRU/LSTM, NonMaxSuppression, Quantize/DequantizeLinear, Einsum, GridSample, RoiAlign
std::vector<ConverterEntry> losses_converters();       // Softmax family, NLL/SCE losses, Dropout, windows, DFT, Det, ...
std::vector<ConverterEntry> convpool_converters();     // Conv, ConvTranspose (1-3-D), MaxPool, AveragePool, MaxUnpool
std::vector<ConverterEntry> quantized_converters();    // ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul
std::vector<ConverterEntry> control_converters();      // If, Loop, Scan
std::vector<ConverterEntry> sequence_converters();     // SequenceConstruct, SequenceAt, SplitToSequence, ...
std::vector<ConverterEntry> training_converters();     // Adagrad, Momentum, Adam (ai.onnx.preview.training)
const std::map<std::string, NodeConverter>& converter_table();

// Helpers shared by converters.
ParamDict params_with_ints(int id, const std::vector<int64_t>& values, const std::string& what);
// Blobs of inputs [0, count): absent optional ones become empty int64
// placeholders, trailing absent ones are dropped.
std::vector<std::string> inputs_upto(NodeContext& n, int count);
// The blobs of all of the node's outputs.
std::vector<std::string> all_outputs(const NodeContext& n);
std::vector<int64_t> tensor_to_int64s(const Tensor& t);
std::vector<float> tensor_to_floats(const Tensor& t);
Tensor scalar_tensor(float v);
Tensor int64_tensor(const std::vector<int64_t>& values);
// An ONNX node of `op` over inputs writing outputs, converted in n's place;
// `axes`, when given, its axes (an attribute, or an input where the opset has
// moved them there: ReduceSum from 13, the other reductions from 18).
void stand_in(NodeContext& n, const std::string& op, std::vector<std::string> inputs,
              const std::vector<std::string>& outputs, const std::vector<int64_t>* axes = nullptr);
// The blob of op(inputs), a fresh name (`what`).
std::string stand_in_value(NodeContext& n, const std::string& op, const std::vector<std::string>& inputs,
                           const char* what, const std::vector<int64_t>* axes = nullptr);
// Emits a Constant layer holding `t`; returns its blob.
std::string constant_blob(NodeContext& n, const Tensor& t, const std::string& what);
// Forms the ncnn-layer converters hand over to the ONNX forms of LayerNorm / Reduction (convert_norms.cpp):
// runtime weights, the Mean/InvStdDev outputs, run-time axes, non-float32 inputs.
void convert_layer_norm_nd(NodeContext& n);
void convert_batch_norm_nd(NodeContext& n);
void convert_batch_norm_training(NodeContext& n);
void convert_reduce_nd(NodeContext& n, int operation, bool axes_as_input);
// A Conv-family node's ncnn convolution params (window from its attributes
// and its weight input's shape, output channels when the weight is constant,
// 7 = group when above 1); `group` gets the group (convert_convpool.cpp).
ParamDict conv_node_params(NodeContext& n, size_t rank, int weight_input, int& group);

class ModelConverter {
public:
    ModelConverter(const onnx::ModelProto& model, std::string base_dir, std::string source, Net& net);
    void convert();
    // Blob name -> shape from ONNX shape inference (-1 for unknown dims), for the optimizer.
    std::map<std::string, Shape> shape_hints() const;

    // For NodeContext: the blobs, constants and names of the Net being
    // written (frontend/common/graph_builder.h), and ONNX's types.
    GraphBuilder& builder() { return builder_; }
    std::string ensure_blob(const std::string& onnx_name, const std::string& context)
    {
        return builder_.ensure_blob(onnx_name, context);
    }
    const Tensor* constant(const std::string& onnx_name) const { return builder_.constant(onnx_name); }
    const onnx::TypeProto* type_of(const std::string& onnx_name) const;
    void set_type(const std::string& onnx_name, const onnx::TypeProto& type) { types_[onnx_name] = type; }
    Net convert_subgraph(const onnx::GraphProto& graph, const std::vector<std::string>& captured,
                         const std::string& what, const std::string& where);
    static std::string blob_name(const std::string& onnx_name) { return GraphBuilder::blob_name(onnx_name); }
    const std::string& base_dir() const { return base_dir_; }

private:
    void add_graph_inputs();
    static std::string table_key(const onnx::NodeProto& node);
    void check_operators_supported();
    const onnx::ModelProto& model_;
    std::string base_dir_, source_;
    GraphBuilder builder_;
    int opset_ = 0;
    std::map<std::string, onnx::TypeProto> types_;
};

} // namespace kestrel::onnx_import
