#include "frontend/onnx/safe_shape_inference.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kestrel/error.h"
#include "onnx/shape_inference/implementation.h"

#if defined(__unix__)
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace kestrel::onnx_import {

namespace {

using Ranks = std::map<std::string, int>;

int64_t attribute_or(const onnx::NodeProto& node, const char* name, int64_t def)
{
    for (const auto& a : node.attribute())
        if (a.name() == name) return a.i();
    return def;
}

std::vector<int64_t> attribute_ints(const onnx::NodeProto& node, const char* name)
{
    for (const auto& a : node.attribute())
        if (a.name() == name) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    return {};
}

// libonnx 1.12's inference functions index dims with attributes and input
// ranks they do not check (found by fuzz_onnx: a LayerNormalization axis far
// outside the rank; a ConvTranspose weight of lower rank than its input).
// Each risky op gets a validator; all of them keep input 0's rank in their
// output, which the first, probing inference pass relies on. Add ops here when
// fuzzing finds more.
using Validator = std::string (*)(const onnx::NodeProto&, const Ranks&);

int rank_of(const onnx::NodeProto& node, int input, const Ranks& ranks)
{
    if (input >= node.input_size()) return -1;
    const auto it = ranks.find(node.input(input));
    return it == ranks.end() ? -1 : it->second;
}

std::string check_axis(const onnx::NodeProto& node, const Ranks& ranks)
{
    const int rank = rank_of(node, 0, ranks);
    const int64_t axis = attribute_or(node, "axis", -1);
    if (rank >= 0 && (axis < -rank || axis >= rank))
        return "axis " + std::to_string(axis) + " is out of range for an input of rank " + std::to_string(rank);
    return "";
}

// Conv/pool family: input 0 is (N, C, spatial...); the weight (if any) has the
// same rank; per-axis attribute lists have one value per spatial axis (pads two).
std::string check_window(const onnx::NodeProto& node, const Ranks& ranks, int weight_input)
{
    const int rank = rank_of(node, 0, ranks);
    if (rank < 0) return "";
    if (rank < 3) return "input rank " + std::to_string(rank) + " has no spatial axis";
    const int spatial = rank - 2;
    if (weight_input >= 0) {
        const int w = rank_of(node, weight_input, ranks);
        if (w >= 0 && w != rank)
            return "weight rank " + std::to_string(w) + " differs from input rank " + std::to_string(rank);
    }
    const struct { const char* name; int count; int64_t min; } lists[] = {
        {"kernel_shape", spatial, 1}, {"strides", spatial, 1},       {"dilations", spatial, 1},
        {"pads", 2 * spatial, 0},     {"output_padding", spatial, 0}, {"output_shape", spatial, 0}};
    for (const auto& l : lists) {
        const std::vector<int64_t> v = attribute_ints(node, l.name);
        if (v.empty()) continue;
        if (static_cast<int>(v.size()) != l.count)
            return std::string(l.name) + " has " + std::to_string(v.size()) + " values, expected " +
                   std::to_string(l.count);
        for (int64_t x : v)
            if (x < l.min) return std::string(l.name) + " value " + std::to_string(x) + " is out of range";
    }
    return "";
}

std::string check_pool(const onnx::NodeProto& n, const Ranks& r) { return check_window(n, r, -1); }
std::string check_conv(const onnx::NodeProto& n, const Ranks& r) { return check_window(n, r, 1); }
std::string check_qlinear_conv(const onnx::NodeProto& n, const Ranks& r) { return check_window(n, r, 3); }

const std::map<std::string, Validator>& risky_ops()
{
    static const std::map<std::string, Validator> ops = {
        {"LayerNormalization", check_axis}, {"Conv", check_conv},       {"ConvTranspose", check_conv},
        {"ConvInteger", check_conv},        {"QLinearConv", check_qlinear_conv}, {"MaxPool", check_pool},
        {"AveragePool", check_pool},        {"LpPool", check_pool},      {"MaxUnpool", check_pool}};
    return ops;
}

Validator validator_of(const onnx::NodeProto& node)
{
    if (!node.domain().empty() && node.domain() != "ai.onnx") return nullptr;
    const auto it = risky_ops().find(node.op_type());
    return it == risky_ops().end() ? nullptr : it->second;
}



// Ranks of every value a first, safe inference pass can type: the model with
// the risky nodes replaced by Identity of input 0 (only the rank of their
// input matters here) and large initializers stripped of their data (their
// type and dims stay; shape-computing constants are small and keep theirs).
Ranks ranks_before_risky_nodes(const onnx::ModelProto& model)
{
    onnx::ModelProto probe;
    *probe.mutable_opset_import() = model.opset_import();
    probe.set_ir_version(model.ir_version());
    onnx::GraphProto* g = probe.mutable_graph();
    const onnx::GraphProto& src = model.graph();
    g->set_name(src.name());
    *g->mutable_input() = src.input();
    *g->mutable_output() = src.output();
    *g->mutable_value_info() = src.value_info();
    for (const auto& init : src.initializer()) {
        onnx::TensorProto* t = g->add_initializer();
        int64_t n = 1;
        for (int64_t d : init.dims()) n *= d < 0 ? 0 : d;
        if (n <= 4096) {
            *t = init;
        } else {
            t->set_name(init.name());
            t->set_data_type(init.data_type());
            *t->mutable_dims() = init.dims();
        }
    }
    for (const auto& node : src.node()) {
        // Nodes with subgraphs (If) stay out of this in-process pass: their
        // bodies are not validated. Their outputs just stay untyped here.
        if (has_subgraphs(node)) continue;
        onnx::NodeProto* n = g->add_node();
        if (validator_of(node) && node.input_size() > 0 && node.output_size() > 0) {
            n->set_op_type("Identity");
            n->add_input(node.input(0));
            n->add_output(node.output(0));
        } else {
            *n = node;
        }
    }
    try {
        onnx::shape_inference::InferShapes(probe);
    } catch (const std::exception&) {
    }
    Ranks ranks;
    const auto note = [&](const onnx::ValueInfoProto& v) {
        if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
            ranks[v.name()] = v.type().tensor_type().shape().dim_size();
    };
    for (const auto& v : g->input()) note(v);
    for (const auto& v : g->value_info()) note(v);
    for (const auto& v : g->output()) note(v);
    for (const auto& t : src.initializer()) ranks[t.name()] = t.dims_size();
    return ranks;
}

void check_risky_nodes(const onnx::ModelProto& model, const std::string& source)
{
    bool any = false;
    for (const auto& node : model.graph().node()) any = any || validator_of(node);
    if (!any) return;
    const Ranks ranks = ranks_before_risky_nodes(model);
    for (const auto& node : model.graph().node()) {
        const Validator validate = validator_of(node);
        if (validate == nullptr) continue;
        const std::string problem = validate(node, ranks); // unknown ranks: libonnx skips the node too
        if (!problem.empty()) fail(source, ": node '", node.name(), "' (", node.op_type(), "): ", problem);
    }
}

// What inference adds to a model: the types of intermediate values and of the
// graph outputs.
onnx::GraphProto inferred_types(onnx::ModelProto& model)
{
    try {
        onnx::shape_inference::InferShapes(model);
    } catch (const std::exception&) {
        // Shape inference only adds hints for converters; a model it cannot type still converts.
    }
    onnx::GraphProto types;
    *types.mutable_value_info() = model.graph().value_info();
    *types.mutable_output() = model.graph().output();
    return types;
}

#if defined(__unix__)
// libonnx's inference functions have more unchecked paths than the validators
// above can know (fuzzing keeps finding them: STFT, ConvTranspose, ...), so it
// runs in a forked child, on the child's copy-on-write view of the model: a
// crash or hang there costs the hints, never the caller's process. The child
// only runs inference, serializes, writes and _exit()s.
std::optional<onnx::GraphProto> inferred_types_isolated(onnx::ModelProto& model)
{
    int fds[2];
    if (pipe(fds) != 0) return std::nullopt;
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return std::nullopt;
    }
    if (pid == 0) {
        close(fds[0]);
        // A crash in here must not print a sanitizer report on the caller's stderr.
        const int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, STDOUT_FILENO);
            dup2(devnull, STDERR_FILENO);
        }
        const std::string bytes = inferred_types(model).SerializeAsString();
        for (size_t done = 0; done < bytes.size();) {
            const ssize_t n = write(fds[1], bytes.data() + done, bytes.size() - done);
            if (n <= 0) _exit(1);
            done += static_cast<size_t>(n);
        }
        _exit(0);
    }
    close(fds[1]);
    std::string bytes;
    char buf[65536];
    bool timed_out = false;
    for (;;) {
        pollfd p{fds[0], POLLIN, 0};
        if (poll(&p, 1, 60'000) <= 0) { // a minute without output: treat as a hang
            timed_out = true;
            break;
        }
        const ssize_t n = read(fds[0], buf, sizeof buf);
        if (n <= 0) break;
        bytes.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
    onnx::GraphProto types;
    if (!types.ParseFromString(bytes)) return std::nullopt;
    return types;
}
#endif

} // namespace

bool has_subgraphs(const onnx::NodeProto& node)
{
    for (const auto& a : node.attribute())
        if (a.has_g() || a.graphs_size() > 0) return true;
    return false;
}

void infer_shapes_safely(onnx::ModelProto& model, const std::string& source)
{
    check_risky_nodes(model, source);
#if defined(__unix__)
    // Subgraph bodies (If) are not validated above; a libonnx crash inside
    // one stays in the child.
    const std::optional<onnx::GraphProto> types = inferred_types_isolated(model);
    if (!types) return; // inference crashed or hung: convert without hints
    *model.mutable_graph()->mutable_value_info() = types->value_info();
    if (types->output_size() == model.graph().output_size()) *model.mutable_graph()->mutable_output() = types->output();
#else
    // In process: only graphs the validators saw whole are inferred.
    const auto& nodes = model.graph().node();
    if (std::any_of(nodes.begin(), nodes.end(), [](const auto& n) { return has_subgraphs(n); })) return;
    inferred_types(model);
#endif
}

} // namespace kestrel::onnx_import
