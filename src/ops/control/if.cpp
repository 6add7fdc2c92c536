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
#include <memory>

#include "ops/common/op_util.h"
#include "ops/control/subnet.h"

namespace kestrel {

namespace {

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
        then_ = subnet::load(wr, lengths_[0], lengths_[1], where(), "then branch");
        else_ = subnet::load(wr, lengths_[2], lengths_[3], where(), "else branch");
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
            out = subnet::outputs(taken(in[0].value), captured);
            return;
        }
        out = subnet::outputs(*then_, captured); // a placeholder until the condition is known
    }

    bool dynamic_output_shape() const override { return true; }
    bool takes_sequences() const override { return true; } // the branches read any value
    bool takes_strings() const override { return true; }

    // A session per branch, made once: each plans its branch once per input shapes.
    struct Branches : OpState {
        std::unique_ptr<Session> then_session, else_session;
    };

    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>&, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        auto branches = std::make_unique<Branches>();
        branches->then_session = subnet::session_for(*then_, ctx);
        branches->else_session = subnet::session_for(*else_, ctx);
        return branches;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Net& branch = taken(in[0]);
        Branches& branches = ctx.state_as<Branches>();
        Session& session = &branch == then_.get() ? *branches.then_session : *branches.else_session;
        const std::vector<Tensor> results = subnet::run(session, branch, std::vector<Tensor>(in.begin() + 1, in.end()));
        for (size_t i = 0; i < out.size(); ++i) out[i] = results[i];
    }

private:
    int inputs() const { return 1 + static_cast<int>(then_->input_names().size()); }

    const Net& taken(const Tensor& cond) const
    {
        return subnet::scalar_truth(cond, "cond") ? *then_ : *else_;
    }

    int lengths_[4] = {0, 0, 0, 0};
    std::shared_ptr<const Net> then_, else_;
};

} // namespace

std::unique_ptr<Op> make_if() { return std::make_unique<IfBranch>(); }

} // namespace kestrel
