#include "frontend/onnx/qdq_fusion.h"

#include <algorithm>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontend/onnx/onnx_tensor.h"

namespace kestrel::onnx_import {

namespace {

struct GraphIndex {
    std::map<std::string, int> producer;      // tensor -> node index
    std::map<std::string, std::vector<int>> readers; // tensor -> the nodes reading it (once per input)
    std::map<std::string, const onnx::TensorProto*> initializers;
    std::set<std::string> outputs;            // graph outputs

    explicit GraphIndex(const onnx::GraphProto& g)
    {
        for (int i = 0; i < g.node_size(); ++i) {
            for (const std::string& o : g.node(i).output()) producer[o] = i;
            for (const std::string& in : g.node(i).input()) readers[in].push_back(i);
        }
        for (const auto& init : g.initializer()) initializers[init.name()] = &init;
        for (const auto& o : g.output()) outputs.insert(o.name());
    }

    // The node writing `tensor` if it is a `op_type` node of the default domain, else null.
    const onnx::NodeProto* made_by(const onnx::GraphProto& g, const std::string& tensor, const char* op_type) const
    {
        const auto it = producer.find(tensor);
        if (it == producer.end()) return nullptr;
        const onnx::NodeProto& n = g.node(it->second);
        return n.op_type() == op_type && (n.domain().empty() || n.domain() == "ai.onnx") ? &n : nullptr;
    }

    const onnx::TensorProto* initializer(const std::string& name) const
    {
        const auto it = initializers.find(name);
        return it == initializers.end() ? nullptr : it->second;
    }

    // An initializer's element count from its dims; -1 when absent or not a
    // small, sane count (the rewrite only looks at scales and zero points).
    int64_t elements(const std::string& name) const
    {
        const onnx::TensorProto* t = initializer(name);
        if (!t) return -1;
        int64_t n = 1;
        for (int64_t d : t->dims()) {
            if (d < 0 || d > kMaxElements) return -1;
            n *= d;
            if (n > kMaxElements) return -1;
        }
        return n;
    }
    static constexpr int64_t kMaxElements = int64_t(1) << 20;
};

int64_t int_attribute(const onnx::NodeProto& n, const char* name, int64_t def)
{
    for (const auto& a : n.attribute())
        if (a.name() == name) return a.i();
    return def;
}

// A DequantizeLinear with a scalar scale (and zero point, when given) held in initializers.
bool scalar_dequantize(const GraphIndex& ix, const onnx::NodeProto* d)
{
    return d && d->input_size() >= 2 && ix.elements(d->input(1)) == 1 &&
           (d->input_size() < 3 || d->input(2).empty() || ix.elements(d->input(2)) == 1);
}

// The weights' DequantizeLinear: an int8 initializer of rank `rank` (0: any),
// its scale per tensor or along `axis` (the op's output channels).
bool weight_dequantize(const GraphIndex& ix, const onnx::NodeProto* d, int rank, int64_t axis)
{
    if (!d || d->input_size() < 2 || !ix.initializer(d->input(0)) || !ix.initializer(d->input(1))) return false;
    const onnx::TensorProto& w = *ix.initializer(d->input(0));
    if (w.data_type() != onnx::TensorProto::INT8 || (rank > 0 && w.dims_size() != rank)) return false;
    const int64_t scales = ix.elements(d->input(1));
    const bool has_zp = d->input_size() >= 3 && !d->input(2).empty();
    if (scales < 1 || (has_zp && ix.elements(d->input(2)) != scales)) return false;
    int64_t at = int_attribute(*d, "axis", 1);
    if (at < 0) at += w.dims_size();
    return scales == 1 || (at == axis && axis < w.dims_size() && w.dims(static_cast<int>(axis)) == scales);
}

std::vector<float> floats_of(const onnx::TensorProto& t)
{
    const Tensor v = tensor_from_onnx(t, "").to(DType::F32);
    return std::vector<float>(v.data<float>(), v.data<float>() + v.numel());
}

// Whether the bias scale is x_scale * w_scale (float32, per output channel):
// then the int32 bias is QLinearConv's.
bool bias_scale_matches(const GraphIndex& ix, const onnx::NodeProto& dx, const onnx::NodeProto& dw,
                        const onnx::NodeProto& db)
{
    const onnx::TensorProto* bs = ix.initializer(db.input(1));
    if (!bs) return false;
    const std::vector<float> b = floats_of(*bs), x = floats_of(*ix.initializer(dx.input(1))),
                             w = floats_of(*ix.initializer(dw.input(1)));
    if (b.size() != w.size() && b.size() != 1) return false;
    for (size_t c = 0; c < std::max(b.size(), w.size()); ++c)
        if (b[b.size() == 1 ? 0 : c] != x[0] * w[w.size() == 1 ? 0 : c]) return false;
    return true;
}

// How a QDQ op becomes its quantized op: the weights' rank (0: any) and
// per-channel axis, where its bias is (-1: none), and what it becomes.
struct QuantizedForm {
    int weight_rank;
    int64_t weight_axis;
    int bias_input;
    const char* op_type;
    const char* domain;
};

// The quantized form of node n where ONNX Runtime fuses it, else none.
std::optional<QuantizedForm> quantized_form(const onnx::NodeProto& n)
{
    if (!(n.domain().empty() || n.domain() == "ai.onnx") || n.input_size() < 2 || n.output_size() != 1)
        return std::nullopt;
    if (n.op_type() == "Conv") return QuantizedForm{0, 0, 2, "QLinearConv", ""};
    if (n.op_type() == "MatMul") return QuantizedForm{2, 1, -1, "QLinearMatMul", ""};
    if (n.op_type() == "Gemm") {
        // QGemm has no beta and no transposed A.
        const bool bias = n.input_size() >= 3 && !n.input(2).empty();
        if (int_attribute(n, "transA", 0) != 0) return std::nullopt;
        for (const auto& a : n.attribute())
            if (a.name() == "beta" && bias && a.f() != 1.f) return std::nullopt;
        return QuantizedForm{2, int_attribute(n, "transB", 0) != 0 ? 0 : 1, 2, "QGemm", "com.microsoft"};
    }
    return std::nullopt;
}

// Zeros of the weights' type shaped as their scale: the quantized ops need a weight zero point.
onnx::TensorProto zero_point_like(const GraphIndex& ix, const onnx::NodeProto& dw)
{
    onnx::TensorProto zp;
    zp.set_name(dw.input(0) + "_qdq_zero_point");
    zp.set_data_type(onnx::TensorProto::INT8);
    const int64_t count = ix.elements(dw.input(1));
    if (count != 1) zp.add_dims(count);
    zp.set_raw_data(std::string(static_cast<size_t>(count), '\0'));
    return zp;
}

} // namespace

int fuse_qdq_nodes(onnx::GraphProto& g)
{
    const GraphIndex ix(g);
    std::set<int> dropped;
    std::map<int, onnx::NodeProto> fused; // by the index of the node it replaces
    std::vector<onnx::TensorProto> zero_points;
    for (int i = 0; i < g.node_size(); ++i) {
        const onnx::NodeProto& op = g.node(i);
        const std::optional<QuantizedForm> form = quantized_form(op);
        if (!form) continue;
        const std::string& y = op.output(0);
        const auto readers = ix.readers.find(y);
        if (ix.outputs.count(y) || readers == ix.readers.end() || readers->second.size() != 1) continue;
        const onnx::NodeProto* dx = ix.made_by(g, op.input(0), "DequantizeLinear");
        const onnx::NodeProto* dw = ix.made_by(g, op.input(1), "DequantizeLinear");
        if (!scalar_dequantize(ix, dx) || dx->input_size() < 3 || dx->input(2).empty() ||
            !weight_dequantize(ix, dw, form->weight_rank, form->weight_axis))
            continue;
        // The one reader of y: a QuantizeLinear with scalar scale and zero point.
        const int q_index = readers->second[0];
        const onnx::NodeProto& q = g.node(q_index);
        if (q.op_type() != "QuantizeLinear" || !(q.domain().empty() || q.domain() == "ai.onnx") ||
            q.input(0) != y || q.input_size() < 3 || q.input(2).empty() || ix.elements(q.input(1)) != 1 ||
            ix.elements(q.input(2)) != 1 || dropped.count(q_index))
            continue;
        // A bias: int32 values dequantized with zero zero point and scale x_scale * w_scale,
        // which ONNX Runtime's quantizer writes as its own initializer.
        std::string bias;
        if (form->bias_input >= 0 && op.input_size() > form->bias_input && !op.input(form->bias_input).empty()) {
            const onnx::NodeProto* db = ix.made_by(g, op.input(form->bias_input), "DequantizeLinear");
            const onnx::TensorProto* b = db ? ix.initializer(db->input(0)) : nullptr;
            if (!b || b->data_type() != onnx::TensorProto::INT32) continue;
            if (db->input_size() >= 3 && !db->input(2).empty()) continue; // only the implicit zero
            if (!bias_scale_matches(ix, *dx, *dw, *db)) continue;
            bias = db->input(0);
        }
        onnx::NodeProto n;
        n.set_op_type(form->op_type);
        n.set_domain(form->domain);
        n.set_name(op.name().empty() ? "qdq_" + op.op_type() + "_" + std::to_string(i) : op.name());
        for (const std::string& in : {dx->input(0), dx->input(1), dx->input(2), dw->input(0), dw->input(1)})
            n.add_input(in);
        if (dw->input_size() >= 3 && !dw->input(2).empty()) {
            n.add_input(dw->input(2));
        } else {
            zero_points.push_back(zero_point_like(ix, *dw));
            n.add_input(zero_points.back().name());
        }
        const bool gemm = std::string(form->op_type) == "QGemm";
        if (gemm) n.add_input(bias); // QGemm's C comes before y's scale and zero point
        n.add_input(q.input(1));
        n.add_input(q.input(2));
        if (!bias.empty() && !gemm) n.add_input(bias);
        n.add_output(q.output(0));
        for (const auto& a : op.attribute())
            if (a.name() != "beta") *n.add_attribute() = a;
        dropped.insert(i);
        dropped.insert(q_index);
        fused[i] = n;
    }
    if (fused.empty()) return 0;
    // Each fused node where its op was (its inputs come before; the QuantizeLinear's readers after).
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i = 0; i < g.node_size(); ++i) {
        if (!dropped.count(i))
            *nodes.Add() = g.node(i);
        else if (fused.count(i))
            *nodes.Add() = fused[i];
    }
    g.mutable_node()->Swap(&nodes);
    for (onnx::TensorProto& zp : zero_points) *g.add_initializer() = zp;
    return static_cast<int>(fused.size());
}

} // namespace kestrel::onnx_import
