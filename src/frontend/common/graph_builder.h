// What every front-end does while it writes a model into a Net: layers over
// named blobs that keep the file's names, values known while converting
// (weights, constants, what the file computes from them) kept aside and
// emitted as a Constant layer only when a layer reads them, and fresh names
// that never collide with the file's.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kestrel/net.h"

namespace kestrel {

class GraphBuilder {
public:
    // `source` names the file in messages.
    GraphBuilder(Net& net, std::string source) : net_(net), source_(std::move(source)) {}

    Net& net() { return net_; }
    const std::string& source() const { return source_; }

    // The blob of a value the file names: its own name, whatever it holds
    // (spaces, quotes, '=', non-ASCII), since users ask for outputs by it;
    // only the .param writer escapes it. An empty name becomes "_".
    static std::string blob_name(const std::string& file_name);
    // A fresh blob name from `base` (base_0, base_1, ... past any taken).
    std::string unique_blob(const std::string& base);

    void add_layer(const std::string& type, const std::string& name, const std::vector<std::string>& bottoms,
                   const std::vector<std::string>& tops, const ParamDict& params = {},
                   const std::vector<Tensor>& weights = {});
    // Whether a layer writes the blob.
    bool produced(const std::string& blob) const { return produced_.count(blob) != 0; }

    // Values known while converting, by the file's name.
    const Tensor* constant(const std::string& file_name) const;
    void set_constant(const std::string& file_name, const Tensor& value);
    // The blob of a value: the layer output, or the constant emitted now as a
    // Constant layer; fails naming `context` when the value is neither.
    std::string ensure_blob(const std::string& file_name, const std::string& context);

    // Constant folding of what the file computes from constants: when every
    // input is a known constant, runs a layer of `type` on them (the same op
    // the runtime would run) and records its outputs as constants instead of
    // emitting it; false (nothing recorded) when an input is not constant or
    // the outputs are not worth keeping (graph/optimize.h,
    // evaluate_on_constants).
    bool fold(const std::string& type, const ParamDict& params, const std::vector<std::string>& inputs,
              const std::vector<std::string>& outputs);

private:
    Net& net_;
    std::string source_;
    std::map<std::string, Tensor> constants_;
    std::set<std::string> produced_;
    int temp_counter_ = 0;
};

} // namespace kestrel
