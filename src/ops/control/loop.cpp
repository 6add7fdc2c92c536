// Loop (our layer, ONNX Loop): runs a body sub-network (ops/control/subnet.h)
// while a trip count lasts and its condition holds, carrying values from one
// iteration to the next.
// Bottoms: [trip count M] [condition], then the N loop-carried values'
// initial values, then the values the body reads from outside, in the
// order of its Input layers after its own.
// Params: 0, 1 = byte lengths of the body's .param text and .bin (weights:
// those two byte strings, as If's); 2 = 1 when the first bottom is a trip
// count (one integer; absent: no limit); 3 = 1 when a condition follows (one
// element, non-zero to run; absent: true); 4 = N.
// The body reads (iteration number: int64 scalar, condition: bool scalar,
// the N carried values, the outside values) and gives (condition, the N
// carried values, K scan outputs). Tops: the N carried values after the last
// iteration, then each scan output's values of every iteration stacked along
// a new first axis. Carried values may change shape between iterations, so
// output shapes are data-dependent (infer() gives the initial values' and
// one iteration's as placeholders).
#include <memory>

#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"
#include "ops/control/subnet.h"

namespace kestrel {

namespace {

// A loop no trip count bounds (none, or PyTorch's INT64_MAX beside a
// condition) stops with an error after this many iterations rather than
// run on for good.
constexpr int64_t kMaxOpenIterations = int64_t{1} << 20;

Tensor int64_scalar(int64_t v)
{
    Tensor t({}, DType::I64);
    t.data<int64_t>()[0] = v;
    return t;
}

Tensor bool_scalar(bool v)
{
    Tensor t({}, DType::Bool);
    t.data<uint8_t>()[0] = v ? 1 : 0;
    return t;
}

class Loop : public subnet::BodyOp {
public:
    void load_param(const ParamDict& pd) override
    {
        load_body_lengths(pd);
        has_trip_count_ = pd.get_int(2, 0) != 0;
        has_cond_ = pd.get_int(3, 0) != 0;
        carried_ = pd.get_int(4, 0);
        check(carried_ >= 0, "param 4 (the loop-carried values) must be >= 0, got ", carried_);
    }

    void load_model(WeightReader& wr) override
    {
        load_body(wr, "loop body");
        check(body().input_names().size() >= static_cast<size_t>(2 + carried_), "the body reads ",
              body().input_names().size(), " values; it needs the iteration number, the condition and ", carried_,
              " carried values");
        check(body().output_names().size() >= static_cast<size_t>(1 + carried_), "the body gives ",
              body().output_names().size(), " outputs; it needs the condition and ", carried_, " carried values");
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const int inputs = first_carried() + static_cast<int>(body().input_names().size()) - 2;
        expect_input_count(in, inputs, inputs);
        expect_output_count(out, body().output_names().size() - 1);
        if (has_trip_count_)
            check(shape_numel(in[0].shape) == 1, "the trip count must have one element, got ", shape_str(in[0].shape));
        if (has_cond_)
            check(shape_numel(in[first_carried() - 1].shape) == 1, "the condition must have one element, got ",
                  shape_str(in[first_carried() - 1].shape));
        const std::vector<TensorDesc> body_out = subnet::outputs(body(), body_inputs(in));
        for (int i = 0; i < carried_; ++i) out[i] = in[first_carried() + i]; // placeholders
        for (size_t k = carried_; k < out.size(); ++k) {
            out[k] = body_out[k + 1];
            out[k].shape.insert(out[k].shape.begin(), 1); // a placeholder count of iterations
        }
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t trips = has_trip_count_ ? nd::int_scalar(in[0], "the trip count") : INT64_MAX;
        bool cond = has_cond_ ? subnet::scalar_truth(in[first_carried() - 1], "the condition") : true;
        // The body's inputs: iteration, condition, carried values, outside values.
        std::vector<Tensor> inputs = {Tensor(), Tensor()};
        inputs.insert(inputs.end(), in.begin() + first_carried(), in.end());
        const size_t scans = out.size() - static_cast<size_t>(carried_);
        std::vector<std::vector<Tensor>> scanned(scans);
        Session& session = this->session(ctx);
        for (int64_t i = 0; i < trips && cond; ++i) {
            check(i < kMaxOpenIterations || trips != INT64_MAX, "the loop ran ", kMaxOpenIterations,
                  " iterations and its condition still holds (no trip count bounds it)");
            inputs[0] = int64_scalar(i);
            inputs[1] = bool_scalar(cond);
            std::vector<Tensor> results = subnet::run(session, body(), inputs);
            cond = subnet::scalar_truth(results[0], "the body's condition");
            for (int v = 0; v < carried_; ++v) inputs[2 + v] = results[1 + v];
            for (size_t k = 0; k < scans; ++k) scanned[k].push_back(results[1 + carried_ + k]);
        }
        for (int v = 0; v < carried_; ++v) out[v] = inputs[2 + v];
        std::vector<TensorDesc> none; // the scan outputs' shapes, for a loop that ran no iteration
        if (scans && scanned[0].empty()) none = subnet::outputs(body(), body_inputs(descs(in)));
        for (size_t k = 0; k < scans; ++k) {
            const TensorDesc empty = none.empty() ? TensorDesc{} : none[1 + carried_ + k];
            out[carried_ + k] = subnet::stack(scanned[k], 0, false, empty);
        }
    }

private:
    int first_carried() const { return (has_trip_count_ ? 1 : 0) + (has_cond_ ? 1 : 0); }

    std::vector<TensorDesc> body_inputs(const std::vector<TensorDesc>& in) const
    {
        std::vector<TensorDesc> body_in = {TensorDesc{{}, DType::I64}, TensorDesc{{}, DType::Bool}};
        body_in.insert(body_in.end(), in.begin() + first_carried(), in.end());
        return body_in;
    }

    static std::vector<TensorDesc> descs(const std::vector<Tensor>& in)
    {
        std::vector<TensorDesc> d;
        for (const Tensor& t : in) d.push_back(TensorDesc{t.shape(), t.dtype()});
        return d;
    }

    bool has_trip_count_ = false, has_cond_ = false;
    int carried_ = 0;
};

} // namespace

std::unique_ptr<Op> make_loop() { return std::make_unique<Loop>(); }

} // namespace kestrel
