#include "graph/pattern_match.h"

#include <algorithm>
#include <cmath>

namespace kestrel {

int producer_index(const Graph& g, int blob) { return blob < 0 ? -1 : g.blobs[blob].producer; }

const Layer* producer(const Graph& g, int blob)
{
    const int li = producer_index(g, blob);
    return li < 0 ? nullptr : &g.layers[li];
}

bool read_only_by(const Graph& g, int blob, const std::vector<int>& readers)
{
    if (is_graph_output(g, blob)) return false;
    for (int c : g.blobs[blob].consumers)
        if (std::find(readers.begin(), readers.end(), c) == readers.end()) return false;
    return true;
}

const Tensor* constant_of(const Graph& g, int blob)
{
    const Layer* p = producer(g, blob);
    if (p == nullptr || p->type != "Constant" || p->weights.size() != 1) return nullptr;
    return &p->weights[0].value;
}

bool scalar_binary(const Layer& l, int op, float& scalar)
{
    if (l.type != "BinaryOp" || l.bottoms.size() != 1 || l.tops.size() != 1) return false;
    if (l.params.get_int(0, 0) != op || l.params.get_int(1, 0) != 1) return false;
    scalar = l.params.get_float(2, 0.f);
    return true;
}

bool is_scalar_binary(const Layer& l, int op, float scalar, float tolerance)
{
    float v = 0.f;
    return scalar_binary(l, op, v) && std::fabs(v - scalar) <= tolerance;
}

bool is_two_input_binary(const Layer& l, int op, bool numpy_only)
{
    if (l.type != "BinaryOp" || l.bottoms.size() != 2 || l.tops.size() != 1) return false;
    if (l.params.get_int(0, 0) != op || l.params.get_int(1, 0) != 0) return false;
    return !numpy_only || l.params.get_int(20, 0) == 1;
}

int other_input(const Layer& l, int known)
{
    if (l.bottoms.size() != 2) return -1;
    if (l.bottoms[0] == known) return l.bottoms[1];
    if (l.bottoms[1] == known) return l.bottoms[0];
    return -1;
}

bool is_unary(const Layer& l, int ncnn_op, int our_op)
{
    if (l.bottoms.size() != 1 || l.tops.size() != 1) return false;
    if (l.type != "UnaryOp") return false;
    const bool typed = l.params.get_int(21, 0) == 1; // the typed op table
    const int op = typed ? our_op : ncnn_op;
    return op >= 0 && l.params.get_int(0, 0) == op;
}

int only_reader(const Graph& g, int blob)
{
    const std::vector<int>& c = g.blobs[blob].consumers;
    if (c.empty() || is_graph_output(g, blob)) return -1;
    for (int li : c)
        if (li != c[0]) return -1;
    return c[0];
}

const Shape* hint_of(const Graph& g, const ShapeHints& hints, int blob)
{
    const auto it = hints.find(g.blobs[blob].name);
    return it == hints.end() ? nullptr : &it->second;
}

void replace_layer(Graph& g, int li, const std::string& type, const std::vector<int>& bottoms, const ParamDict& params,
                   const std::vector<Tensor>& weights)
{
    Layer& l = g.layers[li];
    l.type = type;
    l.bottoms = bottoms;
    l.params = params;
    l.line = 0;
    rebuild_layer(g, li, weights);
}

} // namespace kestrel
