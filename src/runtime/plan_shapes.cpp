// Planning: which layers run for the blobs asked for, the shapes and dtypes of
// every blob, and the values known while planning (constants, shape arithmetic).
#include "runtime/session_impl.h"

namespace kestrel {

std::vector<int> Session::Impl::layers_needed(const std::vector<int>& targets) const
{
    std::vector<bool> need(graph->layers.size(), false);
    std::vector<int> stack;
    for (int b : targets) stack.push_back(graph->blobs[b].producer);
    while (!stack.empty()) {
        const int li = stack.back();
        stack.pop_back();
        if (li < 0 || need[li]) continue;
        need[li] = true;
        for (int b : graph->layers[li].bottoms) stack.push_back(graph->blobs[b].producer);
    }
    std::vector<int> steps;
    for (int li = 0; li < static_cast<int>(need.size()); ++li)
        if (need[li] && graph->layers[li].type != "Input") steps.push_back(li);
    return steps;
}

int64_t split_batch(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& per_sample, bool input0_only)
{
    check(!in.empty(), "a batched layer needs inputs");
    const int64_t n = in[0].shape.empty() ? -1 : in[0].shape[0];
    for (const TensorDesc& d : in) {
        if (input0_only && &d != &in[0]) {
            per_sample.push_back(d);
            continue;
        }
        check(!d.shape.empty() && d.shape[0] == n, "batched inputs must share the leading batch axis, got ",
              shapes_str(in));
        per_sample.push_back(TensorDesc(Shape(d.shape.begin() + 1, d.shape.end()), d.dtype));
        per_sample.back().layout = d.layout;
    }
    return n;
}

Tensor sample_view(const Tensor& t, int64_t i)
{
    const Shape shape(t.shape().begin() + 1, t.shape().end());
    const size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(t.dtype());
    return Tensor::wrap(static_cast<uint8_t*>(const_cast<void*>(t.raw())) + i * bytes, shape, t.dtype());
}

// op->infer with size limits, and errors naming the layer and its input shapes.
void Session::Impl::infer_layer(int li, std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const
{
    try {
        const Layer& l = graph->layers[li];
        for (const TensorDesc& d : in) {
            check(!dtype_holds_tensors(d.dtype) || l.op->takes_sequences(), "a ", dtype_name(d.dtype),
                  " input, which this layer does not take");
            // Views (Reshape, Squeeze, ...) share the strings; other layers must say they copy them as objects.
            check(d.dtype != DType::String || l.op->takes_strings() || l.op->outputs_alias_input(),
                  "a string input, which this layer does not take");
        }
        if (l.batched()) {
            check(!l.op->dynamic_output_shape(), "a layer with data-dependent output shapes cannot be batched");
            std::vector<TensorDesc> per_sample;
            const int64_t n = split_batch(in, per_sample, l.batch_input0_only());
            l.op->infer(per_sample, out);
            for (TensorDesc& d : out) {
                d.shape.insert(d.shape.begin(), n);
                d.value = Tensor();
            }
        } else {
            l.op->infer(in, out);
        }
        for (const TensorDesc& d : out) {
            // Compare element counts, so that bytes = count * size cannot overflow.
            const int64_t count = shape_numel(d.shape);
            if (count > options.max_tensor_bytes / static_cast<int64_t>(dtype_size(d.dtype)))
                throw TooLargeError(detail::concat("output ", shape_str(d.shape), " is too large (", count,
                                                   " elements, limit ", options.max_tensor_bytes, " bytes)"));
        }
    } catch (const TooLargeError& e) {
        throw TooLargeError(graph->where(li) + ": " + e.what());
    } catch (const Error& e) {
        throw Error(graph->where(li) + ": " + e.what() + " (input shapes: " + shapes_str(in) + ")");
    }
}

// Runs a layer now when its outputs follow from what is already known (constant
// or shape-derived inputs) and are small: shape subgraphs fold away this way.
bool Session::Impl::evaluate_while_planning(int li, Plan& p) const
{
    const Layer& l = graph->layers[li];
    if (l.op->dynamic_output_shape() || l.tops.empty() || l.batched()) return false;
    // A planned shape downstream of a data-dependent op is only an upper bound: nothing to fold.
    for (int b : l.bottoms)
        if (p.data_dependent[b]) return false;
    if (l.bottoms.empty() && l.tops.size() == 1) {
        const Tensor c = l.op->constant_value();
        if (c.defined()) {
            const TensorDesc& d = p.blobs[l.tops[0]].desc;
            p.blobs[l.tops[0]].desc.value = c.view_as(d.shape, d.dtype);
            p.blobs[l.tops[0]].home = Home::Known;
            return true;
        }
    }
    const bool shapes_only = l.op->outputs_from_shapes_only();
    std::vector<Tensor> in;
    for (int b : l.bottoms) {
        const TensorDesc& d = p.blobs[b].desc;
        if (d.value.defined()) in.push_back(d.value);
        else if (shapes_only) in.push_back(Tensor::wrap(nullptr, d.shape, d.dtype));
        else return false;
    }
    // Outputs from shapes alone (PriorBox's anchors) would be recomputed by every
    // run otherwise: they are held whatever their size.
    int64_t elements = 0;
    for (int t : l.tops) elements += shape_numel(p.blobs[t].desc.shape);
    if (elements > kMaxPlanTimeElements && !shapes_only) return false;
    std::vector<Tensor> out;
    for (size_t i = 0; i < l.tops.size(); ++i) {
        const TensorDesc& d = p.blobs[l.tops[i]].desc;
        out.push_back(l.op->outputs_alias_input() ? in[l.op->alias_input(static_cast<int>(i))].clone().view_as(d.shape, d.dtype)
                                                  : Tensor(d.shape, d.dtype));
    }
    if (!l.op->outputs_alias_input()) {
        try {
            l.op->run(in, out, ExecContext(nullptr, 1));
        } catch (const Error& e) {
            throw Error(graph->where(li) + ": " + e.what());
        }
    }
    for (size_t i = 0; i < l.tops.size(); ++i) {
        p.blobs[l.tops[i]].desc.value = out[i];
        p.blobs[l.tops[i]].home = Home::Known;
    }
    return true;
}

void Session::Impl::infer_shapes(Plan& p) const
{
    std::vector<int> executed;
    p.data_dependent.assign(graph->blobs.size(), false);
    p.shapes_vary.assign(graph->layers.size(), false);
    for (int li : p.all_layers) {
        const Layer& l = graph->layers[li];
        std::vector<TensorDesc> in, out(l.tops.size());
        for (int b : l.bottoms) in.push_back(p.blobs[b].desc);
        bool downstream = false;
        for (int b : l.bottoms) downstream = downstream || p.data_dependent[b];
        p.shapes_vary[li] = l.op->dynamic_output_shape() && (downstream || !l.op->output_shapes_known(in));
        for (int t : l.tops) p.data_dependent[t] = downstream || p.shapes_vary[li];
        try {
            infer_layer(li, in, out);
        } catch (const TooLargeError&) {
            if (!downstream) throw;
            out.assign(l.tops.size(), TensorDesc(Shape{0})); // provisional: inferred again at run time
        } catch (const Error&) {
            if (!downstream) throw;
            out.assign(l.tops.size(), TensorDesc(Shape{0}));
        }
        for (size_t i = 0; i < l.tops.size(); ++i) {
            out[i].value = Tensor(); // values come only from evaluation below
            p.blobs[l.tops[i]].desc = out[i];
        }
        if (!evaluate_while_planning(li, p)) executed.push_back(li);
    }
    p.steps = executed;
}

} // namespace kestrel
