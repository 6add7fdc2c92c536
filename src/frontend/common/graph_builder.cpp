#include "frontend/common/graph_builder.h"

#include <climits>

#include "graph/optimize.h"
#include "graph/weight_lists.h"
#include "kestrel/op.h"

namespace kestrel {

std::string GraphBuilder::blob_name(const std::string& file_name) { return file_name.empty() ? std::string("_") : file_name; }

std::string GraphBuilder::unique_blob(const std::string& base)
{
    std::string name;
    do name = blob_name(base) + "_" + std::to_string(temp_counter_++);
    while (net_.has_blob(name));
    return name;
}

void GraphBuilder::add_layer(const std::string& type, const std::string& name, const std::vector<std::string>& bottoms,
                             const std::vector<std::string>& tops, const ParamDict& params,
                             const std::vector<Tensor>& weights)
{
    net_.add_layer(type, name, bottoms, tops, params, weights);
    for (const auto& t : tops) produced_.insert(t);
}

const Tensor* GraphBuilder::constant(const std::string& file_name) const
{
    auto it = constants_.find(file_name);
    return it == constants_.end() ? nullptr : &it->second;
}

void GraphBuilder::set_constant(const std::string& file_name, const Tensor& value) { constants_[file_name] = value; }

std::string GraphBuilder::ensure_blob(const std::string& file_name, const std::string& context)
{
    const std::string name = blob_name(file_name);
    if (produced(name)) return name;
    const Tensor* c = constant(file_name);
    check(c != nullptr, source_, ": ", context, ": input '", file_name, "' is not produced by any earlier node");
    ParamDict pd;
    pd.set_int(0, static_cast<int>(c->dtype()));
    std::vector<int> dims;
    for (int64_t d : c->shape()) {
        check(d <= INT32_MAX, source_, ": constant '", file_name, "' has a dimension over 2^31");
        dims.push_back(static_cast<int>(d));
    }
    if (!dims.empty()) pd.set_ints(1, dims);
    add_layer("Constant", name, {}, {name}, pd, {*c});
    return name;
}

bool GraphBuilder::fold(const std::string& type, const ParamDict& params, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs)
{
    std::vector<Tensor> values;
    for (const std::string& in : inputs) {
        const Tensor* c = constant(in);
        if (!c) return false;
        values.push_back(*c);
    }
    const std::unique_ptr<Op> op = create_op(type);
    check(op != nullptr, source_, ": unknown layer type '", type, "'");
    op->type = type;
    op->name = outputs.empty() ? type : outputs[0];
    op->load_param(params);
    TensorListReader no_weights({});
    no_weights.options = net_.load_options();
    op->load_model(no_weights);
    std::vector<Tensor> results;
    if (!evaluate_on_constants(*op, values, outputs.size(), results)) return false;
    for (size_t i = 0; i < outputs.size(); ++i) set_constant(outputs[i], results[i]);
    return true;
}

} // namespace kestrel
