// Graph plumbing: Input (a graph input slot), Split (fan-out), Noop and
// Packing, whose outputs are views of their inputs (the runtime aliases the
// buffers). ncnn's Packing converts between its packed layouts (elempack) and
// storage types; Kestrel's tensors are always plain float32 here, so the
// values pass through: 0=out_elempack (1) 1=use_padding 2=cast_type_from
// 3=cast_type_to 4=storage_type_from 5=storage_type_to are checked only.
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

// Holds the declared shape (params 0=w 1=h 11=d 2=c); the runtime feeds the tensor.
class Input : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        for (int id : {0, 1, 11, 2}) check(pd.get_int(id, 0) >= 0, "declared size (param ", id, ") must be >= 0");
        // Our extension: 20 = dims of any rank (-1 varies), 21 = dtype code.
        for (int d : pd.get_ints(20)) check(d >= -1, "declared dims (param 20) must be >= -1, got ", d);
        const int dtype = pd.get_int(21, 0);
        check(dtype >= 0 && dtype <= static_cast<int>(DType::String), "dtype (param 21) must be 0..15, got ", dtype);
    }
    void infer(const std::vector<TensorDesc>&, std::vector<TensorDesc>&) const override
    {
        fail("Input layers are fed by set_input, not run");
    }
    void forward(const std::vector<Tensor>&, std::vector<Tensor>&, const ExecContext&) const override {}
};

// Every output is the input itself; fan-out needs no copy.
class Split : public Op {
public:
    BlockedLayouts blocked_layouts(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, bool) const override
    {
        return same_shape_elementwise(in, out);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        for (auto& o : out) o = in[0];
    }
    bool outputs_alias_input() const override { return true; }
    bool takes_sequences() const override { return true; }
    bool int8_passthrough(const std::vector<TensorDesc>&) const override { return true; }
    void forward(const std::vector<Tensor>&, std::vector<Tensor>&, const ExecContext&) const override {}
};

// Outputs are the inputs, one to one.
class Noop : public Op {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        // As ncnn: output i is input i.
        check(out.size() <= in.size(), "has ", out.size(), " outputs but only ", in.size(), " inputs");
        for (size_t i = 0; i < out.size(); ++i) out[i] = in[i];
    }
    bool outputs_alias_input() const override { return true; }
    bool takes_sequences() const override { return true; }
    int alias_input(int output) const override { return output; }
    void forward(const std::vector<Tensor>&, std::vector<Tensor>&, const ExecContext&) const override {}
};

class Packing : public Noop {
public:
    void load_param(const ParamDict& pd) override
    {
        const int pack = pd.get_int(0, 1);
        check(pack == 1 || pack == 4 || pack == 8 || pack == 16, "out_elempack (param 0) must be 1, 4, 8 or 16, got ", pack);
        for (int id : {2, 3}) {
            const int cast = pd.get_int(id, 0);
            check(cast >= 0 && cast <= 4, "cast type (param ", id, ") must be 0..4, got ", cast);
        }
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        out[0] = in[0];
    }
};

} // namespace

std::unique_ptr<Op> make_input() { return std::make_unique<Input>(); }
std::unique_ptr<Op> make_split() { return std::make_unique<Split>(); }
std::unique_ptr<Op> make_noop() { return std::make_unique<Noop>(); }
std::unique_ptr<Op> make_packing() { return std::make_unique<Packing>(); }

} // namespace kestrel
