// Net's ncnn files (include/kestrel/net.h): the .param text and binary forms
// read through this front-end's parsers, weights through its .bin reader, and
// both written back in ncnn's format.
#include <fstream>
#include <set>
#include <sstream>

#include "frontend/common/unsupported_ops.h"
#include "frontend/ncnn/model_bin.h"
#include "frontend/ncnn/param.h"
#include "graph/graph.h"
#include "kestrel/net.h"
#include "kestrel/op.h"

namespace kestrel {

namespace {

std::string read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, ": cannot open");
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Every layer whose type is not registered, in one error.
Graph with_known_layer_types(Graph g)
{
    const std::vector<std::string> types = registered_op_types();
    const std::set<std::string> known(types.begin(), types.end());
    UnsupportedOperators unknown;
    for (int li = 0; li < static_cast<int>(g.layers.size()); ++li) {
        const Layer& l = g.layers[li];
        if (known.count(l.type)) continue;
        unknown.add(l.line > 0 ? "line " + std::to_string(l.line) : "layer " + std::to_string(li), l.type, l.name,
                    g.where(li) + ": unknown layer type '" + l.type + "'");
    }
    unknown.raise_if_any("layers of unknown types");
    return g;
}

} // namespace

void Net::load_param(const std::string& path) { load_param_mem(read_file(path), path); }

void Net::load_param_mem(const std::string& text, const std::string& source_name)
{
    adopt_graph(with_known_layer_types(parse_ncnn_param_text(text, source_name)));
}

void Net::load_param_bin(const std::string& path)
{
    const std::string bytes = read_file(path);
    load_param_bin_mem(bytes.data(), bytes.size(), path);
}

void Net::load_param_bin_mem(const void* data, size_t size, const std::string& source_name)
{
    adopt_graph(with_known_layer_types(parse_ncnn_param_bin(data, size, source_name)));
}

// Every layer's weights from one ncnn .bin stream, which must end with the last.
void Net::load_ncnn_bin(ByteSource& source, const std::string& source_name)
{
    check(graph_ != nullptr, "load_model: load the .param first");
    NcnnWeightReader reader(source, source_name, max_weight_bytes_);
    load_weights(reader, [&] { return reader.take_recorded(); });
    reader.expect_end();
}

void Net::load_model(const std::string& path)
{
    check(graph_ != nullptr, "load_model: load the .param first");
    FileSource source(path);
    load_ncnn_bin(source, path);
}

void Net::load_model_mem(const void* data, size_t size, const std::string& source_name)
{
    MemorySource source(data, size);
    load_ncnn_bin(source, source_name);
}

void Net::load_model(const std::function<size_t(void*, size_t)>& fn, const std::string& source_name)
{
    CallbackSource source(fn);
    load_ncnn_bin(source, source_name);
}

std::string Net::param_text() const { return write_ncnn_param_text(graph()); }

void Net::save_param(const std::string& path) const
{
    std::ofstream out(path, std::ios::binary);
    out << param_text();
    check(static_cast<bool>(out), path, ": cannot write");
}

std::vector<uint8_t> Net::model_bytes() const
{
    check(!weights_released_, "model_bytes: the weights were released (release_weights)");
    std::vector<uint8_t> bytes;
    for (const Layer& l : graph().layers)
        for (const StoredWeight& w : l.weights) write_ncnn_weight(w, bytes);
    return bytes;
}

void Net::save_model(const std::string& path) const
{
    const std::vector<uint8_t> bytes = model_bytes();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    check(static_cast<bool>(out), path, ": cannot write");
}

} // namespace kestrel
