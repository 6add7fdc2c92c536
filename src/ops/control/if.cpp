// If (our layer, ONNX If): runs one of two sub-networks, chosen by a condition.
// Bottoms: cond (one element of any dtype; non-zero picks then), then the
// values the branches read, in the order of each branch's Input layers (both
// branches take the same list). Tops: the branch outputs, in order.
// Params: 0, 1 = byte lengths of the then branch's .param text and .bin;
// 2, 3 = the same for the else branch. Weights: those four byte strings, as
// raw uint8 (Typed) in that order, so an If layer, its branches and theirs
// live in one .param/.bin pair.
// Output shapes follow the branch taken, so they are data-dependent: when the
// condition is known while planning, infer() gives the taken branch's shapes,
// otherwise the then branch's as a placeholder, and forward() hands over the
// true outputs.
#include <map>
#include <memory>

#include "graph/graph.h"
#include "kestrel/net.h"
#include "ops/common/op_util.h"
#include "runtime/analysis.h"

namespace kestrel {

namespace {

// Branches nested deeper than this are refused (each level is a recursive load).
constexpr int kMaxNesting = 16;

class IfBranch : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        for (int i = 0; i < 4; ++i) {
            lengths_[i] = pd.get_int(i, -1);
            check(lengths_[i] >= 0, "param ", i, " (a branch's byte length) must be given and >= 0");
        }
        check(lengths_[0] > 0 && lengths_[2] > 0, "each branch needs a .param text (params 0 and 2)");
    }

    void load_model(WeightReader& wr) override
    {
        thread_local int depth = 0;
        check(depth < kMaxNesting, "If layers nested deeper than ", kMaxNesting);
        ++depth;
        try {
            then_ = load_branch(wr, lengths_[0], lengths_[1], "then");
            else_ = load_branch(wr, lengths_[2], lengths_[3], "else");
        } catch (...) {
            --depth;
            throw;
        }
        --depth;
        check(then_->input_names().size() == else_->input_names().size(), "the branches read ",
              then_->input_names().size(), " and ", else_->input_names().size(), " values; they must read the same");
        check(then_->output_names().size() == else_->output_names().size(), "the branches give ",
              then_->output_names().size(), " and ", else_->output_names().size(), " outputs");
    }

    int64_t weight_bytes() const override { return lengths_[0] + lengths_[1] + lengths_[2] + lengths_[3]; }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        check(then_ && else_, "the branches come with the weights: load the .bin first");
        expect_input_count(in, inputs(), inputs());
        expect_output_count(out, static_cast<int>(then_->output_names().size()));
        check(shape_numel(in[0].shape) == 1, "cond (input 0) must have one element, got ", shape_str(in[0].shape));
        const std::vector<TensorDesc> captured(in.begin() + 1, in.end());
        if (in[0].value.defined()) {
            out = branch_outputs(taken(in[0].value), captured);
            return;
        }
        out = branch_outputs(*then_, captured); // a placeholder until the condition is known
    }

    bool dynamic_output_shape() const override { return true; }

    // A session per branch, made once: each plans its branch once per input shapes.
    struct Branches : OpState {
        Session then_session, else_session;
        Branches(const Net& then_net, const Net& else_net, const Options& options)
            : then_session(then_net, options), else_session(else_net, options)
        {
        }
    };

    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>&, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        Options options;
        options.threads = ctx.threads();
        return std::make_unique<Branches>(*then_, *else_, options);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Net& branch = taken(in[0]);
        Branches& branches = ctx.state_as<Branches>();
        Session& session = &branch == then_.get() ? branches.then_session : branches.else_session;
        const std::vector<std::string> names = branch.input_names();
        for (size_t i = 0; i < names.size(); ++i) session.set_input(names[i], in[i + 1]);
        const std::vector<Tensor> results = session.run(branch.output_names());
        for (size_t i = 0; i < out.size(); ++i) out[i] = results[i];
    }

private:
    int inputs() const { return 1 + static_cast<int>(then_->input_names().size()); }

    const Net& taken(const Tensor& cond) const
    {
        check(cond.numel() == 1, "cond must have one element, got ", shape_str(cond.shape()));
        return cond.to(DType::F64).data<double>()[0] != 0.0 ? *then_ : *else_;
    }

    std::shared_ptr<const Net> load_branch(WeightReader& wr, int param_bytes, int bin_bytes, const std::string& which)
    {
        const Tensor text = wr.load_typed({param_bytes}, DType::U8);
        const Tensor bin = wr.load_typed({bin_bytes}, DType::U8);
        const std::string param(static_cast<const char*>(text.raw()), static_cast<size_t>(param_bytes));
        check(param.find('\0') == std::string::npos, "the ", which,
              " branch's .param text holds zero bytes (were the weights loaded?)");
        auto net = std::make_shared<Net>();
        net->load_param_mem(param, where() + " " + which + " branch");
        if (net->needs_weights())
            net->load_model_mem(bin.raw(), static_cast<size_t>(bin_bytes), where() + " " + which + " branch");
        return net;
    }

    // Shapes and dtypes of a branch's outputs for these inputs.
    static std::vector<TensorDesc> branch_outputs(const Net& branch, const std::vector<TensorDesc>& captured)
    {
        const std::vector<std::string> names = branch.input_names();
        std::map<std::string, TensorDesc> inputs;
        for (size_t i = 0; i < names.size(); ++i) inputs[names[i]] = captured[i];
        const ModelReport report = analyze_model(branch, inputs);
        const Graph& g = branch.graph();
        std::map<std::string, TensorDesc> by_name = inputs;
        for (const LayerReport& l : report.layers)
            for (size_t t = 0; t < l.outputs.size(); ++t) by_name[g.blobs[g.layers[l.layer].tops[t]].name] = l.outputs[t];
        std::vector<TensorDesc> out;
        for (const std::string& name : branch.output_names()) {
            const auto it = by_name.find(name);
            check(it != by_name.end(), "branch output '", name, "' has no inferred shape");
            out.push_back(it->second);
        }
        return out;
    }

    int lengths_[4] = {0, 0, 0, 0};
    std::shared_ptr<const Net> then_, else_;
};

} // namespace

std::unique_ptr<Op> make_if() { return std::make_unique<IfBranch>(); }

} // namespace kestrel
