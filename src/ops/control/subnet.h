// Sub-networks carried by a layer (If's branches, Loop's and Scan's bodies):
// each a Net of its own, stored in the layer's weights as its .param text and
// .bin bytes (raw uint8, Typed), so a layer, its sub-networks and theirs live
// in one .param/.bin pair; run by a Session the layer's state keeps, planned
// once per input shapes. Also the slab copies Loop and Scan stack their
// per-iteration values with.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kestrel/net.h"
#include "kestrel/op.h"

namespace kestrel::subnet {

// Reads one sub-network (its .param text of param_bytes, then its .bin of
// bin_bytes) and loads it; `where` and `which` name it in errors. Nesting
// deeper than 16 levels is refused (each level is a recursive load).
std::shared_ptr<const Net> load(WeightReader& wr, int param_bytes, int bin_bytes, const std::string& where,
                                const std::string& which);

// Shapes and dtypes of the outputs of `net` for `inputs` (in net.input_names() order).
std::vector<TensorDesc> outputs(const Net& net, const std::vector<TensorDesc>& inputs);

// Runs `session` (of `net`) on `inputs` (in net.input_names() order).
std::vector<Tensor> run(Session& session, const Net& net, const std::vector<Tensor>& inputs);

// A Session for `net` with the layer's thread count.
std::unique_ptr<Session> session_for(const Net& net, const PrepareContext& ctx);

// An op that runs one body sub-network (Loop, Scan): params 0 and 1 are
// the byte lengths of its .param text and .bin, the weights those bytes; a
// session for it in the op's state; output shapes data-dependent.
class BodyOp : public Op {
public:
    int64_t weight_bytes() const override { return lengths_[0] + lengths_[1]; }
    bool dynamic_output_shape() const override { return true; }
    bool takes_sequences() const override { return true; } // the body reads any value
    bool takes_strings() const override { return true; }
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>&, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override;

protected:
    void load_body_lengths(const ParamDict& pd);
    void load_body(WeightReader& wr, const std::string& which);
    const Net& body() const;
    Session& session(const ExecContext& ctx) const;

private:
    int lengths_[2] = {0, 0};
    std::shared_ptr<const Net> body_;
};

// Slice `index` of x along `axis`, that axis removed.
Tensor slice_at(const Tensor& x, int axis, int64_t index);
// Writes `slice` (y's shape without `axis`, y's dtype) as slice `index` of y along `axis`.
void put_slice(Tensor& y, int axis, int64_t index, const Tensor& slice);
// The values (one shape and dtype) stacked along a new axis `axis` (from
// the last when `reversed`); none: a 0-long axis in `none`'s shape and dtype
// (unknown dims as 0).
Tensor stack(const std::vector<Tensor>& values, int axis, bool reversed, const TensorDesc& none);

// One element of a tensor of any dtype as a truth value.
bool scalar_truth(const Tensor& t, const char* what);

} // namespace kestrel::subnet
