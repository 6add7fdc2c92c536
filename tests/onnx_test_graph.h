// Builds small ONNX models in memory for importer tests: inputs, initializers
// (float, int64, or any dtype as raw bytes), nodes with attributes, outputs
// with symbolic dims; load() converts with or without the optimizer.
#pragma once
#ifdef KESTREL_HAVE_ONNX
#include <string>
#include <vector>

#include "layer_test_util.h"

namespace kestrel::layer_test {

class OnnxGraph {
public:
    explicit OnnxGraph(int opset = 13)
    {
        model_.set_ir_version(8);
        model_.add_opset_import()->set_version(opset);
        graph()->set_name("g");
    }

    void input(const std::string& name, const Shape& shape, int elem_type = onnx::TensorProto::FLOAT)
    {
        onnx::ValueInfoProto* vi = graph()->add_input();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(elem_type);
        tt->mutable_shape(); // rank 0 is a shape too
        for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }

    void init(const std::string& name, const Tensor& t)
    {
        onnx::TensorProto* init = graph()->add_initializer();
        init->set_name(name);
        init->set_data_type(onnx::TensorProto::FLOAT);
        for (int64_t d : t.shape()) init->add_dims(d);
        for (int64_t i = 0; i < t.numel(); ++i) init->add_float_data(t.data<float>()[i]);
    }
    void scalar(const std::string& name, float v) { init(name, layer_test::f32({}, {v})); }
    // An initializer of any dtype, as raw little-endian bytes.
    void raw_init(const std::string& name, const Tensor& t, int elem_type)
    {
        onnx::TensorProto* init = graph()->add_initializer();
        init->set_name(name);
        init->set_data_type(elem_type);
        for (int64_t d : t.shape()) init->add_dims(d);
        init->set_raw_data(std::string(static_cast<const char*>(t.raw()), t.nbytes()));
    }
    void int64s(const std::string& name, const std::vector<int64_t>& v)
    {
        onnx::TensorProto* init = graph()->add_initializer();
        init->set_name(name);
        init->set_data_type(onnx::TensorProto::INT64);
        init->add_dims(static_cast<int64_t>(v.size()));
        for (int64_t x : v) init->add_int64_data(x);
    }

    onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs)
    {
        onnx::NodeProto* n = graph()->add_node();
        n->set_op_type(op);
        n->set_name(op + "_" + std::to_string(graph()->node_size()));
        for (const auto& i : ins) n->add_input(i);
        for (const auto& o : outs) n->add_output(o);
        return n;
    }
    static void attr_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v)
    {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t x : v) a->add_ints(x);
    }
    static void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v)
    {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    }
    static void attr_float(onnx::NodeProto* n, const std::string& name, float v)
    {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(v);
    }

    // An output of `rank` symbolic dims (ONNX shape inference fills them in).
    void output(const std::string& name, int rank, int elem_type = onnx::TensorProto::FLOAT)
    {
        onnx::ValueInfoProto* vi = graph()->add_output();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(elem_type);
        tt->mutable_shape(); // rank 0 is a shape too
        for (int k = 0; k < rank; ++k) tt->mutable_shape()->add_dim()->set_dim_param(name + std::to_string(k));
    }

    // Subgraphs (If branches): a graph built with another OnnxGraph, as an attribute.
    static void attr_graph(onnx::NodeProto* n, const std::string& name, const OnnxGraph& body)
    {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::GRAPH);
        *a->mutable_g() = body.model_.graph();
    }
    // Imports another operator set (ONNX Runtime's com.microsoft, say).
    void import_domain(const std::string& domain, int version)
    {
        onnx::OperatorSetIdProto* op_set = model_.add_opset_import();
        op_set->set_domain(domain);
        op_set->set_version(version);
    }
    const onnx::ModelProto& model() const { return model_; }
    onnx::GraphProto* graph() { return model_.mutable_graph(); } // no cached pointer: copies stay valid

    Net load(bool optimize, OnnxImportOptions options = {}) const
    {
        const std::string bytes = model_.SerializeAsString();
        options.optimize = optimize;
        Net net;
        load_onnx_mem(net, bytes.data(), bytes.size(), "test.onnx", ".", options);
        return net;
    }

private:
    onnx::ModelProto model_;
};

} // namespace kestrel::layer_test
#endif // KESTREL_HAVE_ONNX
