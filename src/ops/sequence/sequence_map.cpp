// SequenceMap (ONNX): runs a body sub-network (ops/control/subnet.h) once per
// element of input 0, a sequence; the other inputs are sequences of as many
// elements, taken in step, or tensors, given whole each time. Bottoms: the
// node's inputs (param 2 of them), then the values the body reads from
// outside. Params 0, 1: the body's byte lengths (weights: its bytes, as
// If's). Tops: one sequence per body output, an element per iteration.
#include "ops/common/op_util.h"
#include "ops/control/subnet.h"
#include "ops/sequence/sequence_util.h"

namespace kestrel {

namespace {

class SequenceMap : public subnet::BodyOp {
public:
    void load_param(const ParamDict& pd) override
    {
        load_body_lengths(pd);
        mapped_ = pd.get_int(2, 1);
        check(mapped_ >= 1, "param 2 (the node's inputs) must be >= 1, got ", mapped_);
    }
    void load_model(WeightReader& wr) override
    {
        load_body(wr, "sequence map body");
        check(body().input_names().size() >= static_cast<size_t>(mapped_), "the body reads ",
              body().input_names().size(), " values; the node maps ", mapped_);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const size_t inputs = body().input_names().size(); // the mapped inputs, then the outside values
        expect_input_count(in, inputs, inputs);
        expect_output_count(out, body().output_names().size());
        const int64_t n = sequence::length(in[0], "input 0");
        for (TensorDesc& d : out) d = sequence::desc_of(n);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t n = in[0].numel();
        std::vector<std::vector<Tensor>> items(static_cast<size_t>(mapped_)), results(out.size());
        for (int k = 0; k < mapped_; ++k) {
            if (!in[k].is_sequence()) continue;
            items[k] = in[k].items();
            check(static_cast<int64_t>(items[k].size()) == n, "sequence input ", k, " has ", items[k].size(),
                  " elements, input 0 ", n);
        }
        std::vector<Tensor> inputs(in.begin(), in.end());
        for (int64_t j = 0; j < n; ++j) {
            for (int k = 0; k < mapped_; ++k)
                if (in[k].is_sequence()) inputs[k] = items[k][static_cast<size_t>(j)];
            const std::vector<Tensor> r = subnet::run(session(ctx), body(), inputs);
            for (size_t o = 0; o < out.size(); ++o) results[o].push_back(r[o]);
        }
        for (size_t o = 0; o < out.size(); ++o) out[o] = Tensor::sequence(results[o]);
    }

private:
    int mapped_ = 1;
};

} // namespace

std::unique_ptr<Op> make_sequence_map() { return std::make_unique<SequenceMap>(); }

} // namespace kestrel
