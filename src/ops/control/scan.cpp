// Scan (our layer, ONNX Scan): runs a body sub-network (ops/control/subnet.h)
// once per slice of its scan inputs, carrying state values from one
// iteration to the next and stacking the body's scan outputs.
// Bottoms: [sequence lengths] (batch form only), the N states' initial
// values, the M scan inputs, then the values the body reads from outside,
// in the order of its Input layers after its own.
// Params: 0, 1 = byte lengths of the body's .param text and .bin (weights:
// those two byte strings, as If's); 2 = M; 3 = N; 4 = 1 for ONNX's opset-8
// batch form (a first batch axis on every state, scan input and output, the
// scan axis next; each batch item scanned on its own); 5 = 1 when (batch
// form) the first bottom holds each item's sequence length (int, B values;
// the item's scan outputs past it are zeros); arrays 10, 11 = each scan
// input's axis (negative: from the end) and direction (1: last slice first),
// 12, 13 = each scan output's (the opset-8 form takes axis 0 and its
// directions for inputs, forward outputs).
// The body reads (N states, M slices, outside values) and gives (N states, K
// slices). Tops: the N final states, then the K scan outputs.
#include <algorithm>
#include <cstring>
#include <memory>

#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"
#include "ops/control/subnet.h"

namespace kestrel {

namespace {

class Scan : public subnet::BodyOp {
public:
    void load_param(const ParamDict& pd) override
    {
        load_body_lengths(pd);
        scan_inputs_ = pd.get_int(2, 0);
        states_ = pd.get_int(3, 0);
        check(scan_inputs_ >= 1, "param 2 (the scan inputs) must be >= 1, got ", scan_inputs_);
        check(states_ >= 0, "param 3 (the states) must be >= 0, got ", states_);
        batched_ = pd.get_int(4, 0) != 0;
        has_lengths_ = pd.get_int(5, 0) != 0;
        check(batched_ || !has_lengths_, "sequence lengths (param 5) need the batch form (param 4)");
        in_axes_ = pd.get_ints(10), in_reversed_ = pd.get_ints(11), out_axes_ = pd.get_ints(12),
        out_reversed_ = pd.get_ints(13);
        for (const auto* list : {&in_axes_, &in_reversed_})
            check(list->empty() || list->size() == static_cast<size_t>(scan_inputs_),
                  "params 10 and 11 need one value per scan input (", scan_inputs_, "), got ", list->size());
    }

    void load_model(WeightReader& wr) override
    {
        load_body(wr, "scan body");
        check(body().input_names().size() >= static_cast<size_t>(states_ + scan_inputs_), "the body reads ",
              body().input_names().size(), " values; it needs ", states_, " states and ", scan_inputs_, " slices");
        check(body().output_names().size() >= static_cast<size_t>(states_), "the body gives ",
              body().output_names().size(), " outputs; it needs ", states_, " states");
        for (const auto* list : {&out_axes_, &out_reversed_})
            check(list->empty() || list->size() == static_cast<size_t>(scan_outputs()),
                  "params 12 and 13 need one value per scan output (", scan_outputs(), "), got ", list->size());
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const int inputs = (has_lengths_ ? 1 : 0) + static_cast<int>(body().input_names().size());
        expect_input_count(in, inputs, inputs);
        expect_output_count(out, body().output_names().size());
        const std::vector<TensorDesc> item(in.begin() + (has_lengths_ ? 1 : 0), in.end());
        // One iteration's body inputs: states and scan slices without their batch and scan axes.
        std::vector<TensorDesc> body_in = item;
        int64_t steps = -1;
        for (int j = 0; j < states_ + scan_inputs_; ++j) {
            Shape& s = body_in[j].shape;
            if (batched_) {
                check(!s.empty(), "in the batch form every state and scan input needs a batch axis");
                s.erase(s.begin());
            }
            if (j < states_) continue;
            check(!s.empty(), "scan input ", j - states_, " has no axis to scan");
            const int axis = in_axis(j - states_, static_cast<int>(s.size()));
            steps = s[axis];
            s.erase(s.begin() + axis);
        }
        const std::vector<TensorDesc> body_out = subnet::outputs(body(), body_in);
        for (size_t k = 0; k < out.size(); ++k) {
            out[k] = body_out[k];
            if (k >= static_cast<size_t>(states_)) {
                Shape& s = out[k].shape;
                const int axis = out_axis(static_cast<int>(k) - states_, static_cast<int>(s.size()) + 1);
                s.insert(s.begin() + axis, steps);
            }
            if (batched_) out[k].shape.insert(out[k].shape.begin(), item[0].shape.empty() ? 1 : item[0].shape[0]);
        }
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        Session& session = this->session(ctx);
        const std::vector<Tensor> item(in.begin() + (has_lengths_ ? 1 : 0), in.end());
        if (!batched_) {
            out = scan(session, item, -1);
            return;
        }
        // The batch form: each item on its own, stacked back along the batch axis.
        const int64_t batch = item[0].shape().empty() ? 0 : item[0].dim(0);
        std::vector<std::vector<Tensor>> per_output(out.size());
        for (int64_t b = 0; b < batch; ++b) {
            std::vector<Tensor> one = item;
            for (int j = 0; j < states_ + scan_inputs_; ++j) {
                check(!item[j].shape().empty() && item[j].dim(0) == batch, "every state and scan input needs batch ",
                      batch, ", got ", shape_str(item[j].shape()));
                one[j] = subnet::slice_at(item[j], 0, b);
            }
            const int64_t length = has_lengths_ ? sequence_length(in[0], b) : -1;
            const std::vector<Tensor> results = scan(session, one, length);
            for (size_t k = 0; k < out.size(); ++k) per_output[k].push_back(results[k]);
        }
        for (size_t k = 0; k < out.size(); ++k) out[k] = subnet::stack(per_output[k], 0, false, TensorDesc{{}});
    }

private:
    int scan_outputs() const { return static_cast<int>(body().output_names().size()) - states_; }

    int in_axis(int j, int rank) const
    {
        return batched_ || in_axes_.empty() ? 0 : nd::normalize_axis(in_axes_[j], rank, "scan input axis");
    }
    bool in_reversed(int j) const { return !in_reversed_.empty() && in_reversed_[j] != 0; }
    int out_axis(int k, int rank) const
    {
        return batched_ || out_axes_.empty() ? 0 : nd::normalize_axis(out_axes_[k], rank, "scan output axis");
    }
    bool out_reversed(int k) const { return !batched_ && !out_reversed_.empty() && out_reversed_[k] != 0; }

    int64_t sequence_length(const Tensor& lengths, int64_t b) const
    {
        check(b < lengths.numel(), "sequence_lens holds ", lengths.numel(), " values for batch ", b + 1);
        return lengths.to(DType::I64).data<int64_t>()[b];
    }

    // One scan over `x` (states, scan inputs, outside values) of `steps`
    // slices (-1: the scan inputs' length; fewer: the scan outputs' later
    // slices zeros). Returns the final states, then the scan outputs.
    std::vector<Tensor> scan(Session& session, const std::vector<Tensor>& x, int64_t steps) const
    {
        int64_t length = -1;
        std::vector<int> axes;
        for (int j = 0; j < scan_inputs_; ++j) {
            const Tensor& s = x[states_ + j];
            axes.push_back(in_axis(j, static_cast<int>(s.shape().size())));
            check(!s.shape().empty(), "scan input ", j, " has no axis to scan");
            check(length < 0 || s.dim(axes[j]) == length, "the scan inputs' lengths differ: ", length, " and ",
                  s.dim(axes[j]));
            length = s.dim(axes[j]);
        }
        check(steps <= length, "a sequence length of ", steps, " exceeds the scan inputs' ", length);
        if (steps < 0) steps = length;
        std::vector<Tensor> inputs = x;
        std::vector<std::vector<Tensor>> scanned(static_cast<size_t>(scan_outputs()));
        for (int64_t t = 0; t < steps; ++t) {
            for (int j = 0; j < scan_inputs_; ++j)
                inputs[states_ + j] = subnet::slice_at(x[states_ + j], axes[j], in_reversed(j) ? steps - 1 - t : t);
            const std::vector<Tensor> results = subnet::run(session, body(), inputs);
            for (int v = 0; v < states_; ++v) inputs[v] = results[v];
            for (int k = 0; k < scan_outputs(); ++k) scanned[k].push_back(results[states_ + k]);
        }
        std::vector<Tensor> out(inputs.begin(), inputs.begin() + states_);
        std::vector<TensorDesc> none; // the scan outputs' slices, for a scan of no step
        if (steps == 0 && scan_outputs() > 0) none = slice_descs(x, axes);
        for (int k = 0; k < scan_outputs(); ++k) {
            const TensorDesc slice = none.empty() ? TensorDesc{scanned[k][0].shape(), scanned[k][0].dtype()}
                                                  : none[states_ + k];
            while (static_cast<int64_t>(scanned[k].size()) < length) // past an item's sequence length: zeros
                scanned[k].push_back(zeros(slice));
            const int rank = static_cast<int>(slice.shape.size()) + 1;
            out.push_back(subnet::stack(scanned[k], out_axis(k, rank), out_reversed(k), slice));
        }
        return out;
    }

    std::vector<TensorDesc> slice_descs(const std::vector<Tensor>& x, const std::vector<int>& axes) const
    {
        std::vector<TensorDesc> body_in;
        for (size_t i = 0; i < x.size(); ++i) {
            TensorDesc d{x[i].shape(), x[i].dtype()};
            const int j = static_cast<int>(i) - states_;
            if (j >= 0 && j < scan_inputs_) d.shape.erase(d.shape.begin() + axes[j]);
            body_in.push_back(d);
        }
        return subnet::outputs(body(), body_in);
    }

    static Tensor zeros(const TensorDesc& d)
    {
        Shape shape = d.shape;
        for (int64_t& v : shape) v = std::max<int64_t>(v, 0);
        Tensor z(shape, d.dtype);
        if (z.nbytes()) std::memset(z.raw(), 0, z.nbytes());
        return z;
    }

    int scan_inputs_ = 0, states_ = 0;
    bool batched_ = false, has_lengths_ = false;
    std::vector<int> in_axes_, in_reversed_, out_axes_, out_reversed_;
};

} // namespace

std::unique_ptr<Op> make_scan() { return std::make_unique<Scan>(); }

} // namespace kestrel
