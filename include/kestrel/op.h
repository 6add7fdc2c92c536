// The operator interface. Every layer, built in or user-registered, is an Op:
//   load_param  -> read and validate parameters        (once, at model load)
//   load_model  -> read weights in ncnn .bin order      (once, at model load)
//   infer       -> output shapes/dtypes from input ones (per input-shape change)
//   prepare     -> per-shape state and scratch needs    (per input-shape change;
//                                                        optional)
//   forward     -> compute                              (per run; const, so many
//                                                        sessions may share one Op)
// Custom ops: derive from Op and call register_op("MyType", factory) before
// loading a model that uses the type name.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kestrel/error.h"
#include "kestrel/options.h"
#include "kestrel/parallel.h"
#include "kestrel/param_dict.h"
#include "kestrel/tensor.h"
#include "kestrel/weights.h"

namespace kestrel {


// How a float activation of shape [..., C, H, W] is stored. Plain: as its
// shape says. ChannelBlocks: the channels in blocks of B (the CPU's vector
// width in floats, channel_block()), a pixel's B channels side by side, as
// ncnn's and ONNX Runtime's packed layouts: [..., ceil(C/B), H, W, B], the
// lanes past C padding that no op reads as data. A session picks it for the
// blobs between layers that all take it (Op::blocked_layouts); the graph's
// inputs and outputs stay plain.
enum class Layout : uint8_t { Plain, ChannelBlocks };

// The channels per block of Layout::ChannelBlocks on this CPU.
int64_t channel_block();
// The shape a blob of `shape` is stored in with `layout`.
Shape stored_shape(const Shape& shape, Layout layout);

struct TensorDesc {
    TensorDesc() = default;
    TensorDesc(Shape s, DType t = DType::F32, Tensor v = Tensor()) : shape(std::move(s)), dtype(t), value(std::move(v)) {}
    Shape shape;
    DType dtype = DType::F32;
    // How the tensor forward() gets is stored (shape stays the logical shape).
    Layout layout = Layout::Plain;
    // The contents, when known while planning (constants and small values
    // computed from shapes, e.g. a Shape -> Gather -> Concat chain feeding a
    // Reshape). Undefined otherwise. Ops whose output shape depends on an
    // input's values read it here in infer().
    Tensor value;
    // An int8 activation the session chose in place of a float one
    // (Op::can_write_int8): its values are the floats' times this scale,
    // rounded as ncnn's float2int8. Unused otherwise.
    float int8_scale = 0.f;
};

// Which of an op's inputs and outputs may be stored in channel blocks, for
// the shapes given; -1 for plain only (the default), else a group number:
// the blobs of one group take the same layout, and the session chooses each
// group's (it blocks a blob only when its producer and all its readers agree).
// `elementwise`: the op does not care, computing each stored value from the
// values stored at the same place (unary maps, same-shape binary ops, views):
// the session then hands it blocked blobs as plain tensors of their stored
// shape, in prepare() and forward(). Otherwise the op reads TensorDesc::layout
// in prepare() and gets tensors of the stored shape in forward().
struct BlockedLayouts {
    std::vector<int> inputs, outputs;
    bool elementwise = false;
};

// What an op computes once per input shapes (TFLite's Prepare, XNNPACK's
// setup): tap tables, a chosen kernel, packed layouts. Ops derive their own.
// A state belongs to one Session (never shared between threads), so forward()
// may update it.
struct OpState {
    virtual ~OpState() = default;
};

// What prepare() gets besides shapes: the thread budget, and a place to ask for
// scratch memory, which the runtime places in the session's arena (live during
// this op's forward only; every step's scratch starts at the same place, so it
// stays in cache).
class PrepareContext {
public:
    explicit PrepareContext(int threads, bool bf16 = false) : threads_(threads), bf16_(bf16) {}
    int threads() const { return threads_; }
    // Whether layers that can should multiply in bfloat16 (Options::precision
    // BF16 on a CPU with bfloat16 dot products).
    bool bf16() const { return bf16_; }
    // `bytes` of scratch (64-byte aligned); returns the index forward() passes
    // to ExecContext::scratch.
    int request_scratch(int64_t bytes);
    const std::vector<int64_t>& scratch_bytes() const { return scratch_bytes_; }

private:
    int threads_;
    bool bf16_;
    std::vector<int64_t> scratch_bytes_;
};

// What forward() gets besides tensors: the thread budget, and what prepare()
// made for these shapes.
class ExecContext : public ParallelContext {
public:
    ExecContext(ThreadPool* pool, int threads) : ParallelContext(pool, threads) {}

    // The state prepare() returned (nullptr when it returned none).
    OpState* state() const { return state_; }
    template <class T> T& state_as() const
    {
        check(state_ != nullptr, "internal: forward() ran without its prepare() state");
        return static_cast<T&>(*state_);
    }
    // Scratch buffer `index` as requested in prepare().
    void* scratch(int index) const;
    template <class T> T* scratch_as(int index) const { return static_cast<T*>(scratch(index)); }

    // The same thread budget with an op's prepared state and scratch.
    ExecContext with(OpState* state, const std::vector<void*>* scratch) const
    {
        ExecContext c = *this;
        c.state_ = state;
        c.scratch_ = scratch;
        return c;
    }

private:
    OpState* state_ = nullptr;
    const std::vector<void*>* scratch_ = nullptr;
};

class Op {
public:
    virtual ~Op() = default;

    // Layer identity, set by the loader before load_param (used in messages).
    std::string type;
    std::string name;

    virtual void load_param(const ParamDict&) {}
    virtual void load_model(WeightReader&) {}

    // Fill `outputs` (already sized to the number of tops) from `inputs`.
    // Throw kestrel::Error on shapes the op cannot handle.
    virtual void infer(const std::vector<TensorDesc>& inputs, std::vector<TensorDesc>& outputs) const = 0;

    // Per-shape work, run when the input shapes of a plan change (not per run),
    // with the shapes infer() gave: returns the state forward() reads through
    // ctx.state_as<T>() (or nullptr) and asks for scratch memory through `ctx`.
    // forward() then allocates nothing and recomputes nothing shape-dependent.
    virtual std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& /*inputs*/,
                                             const std::vector<TensorDesc>& /*outputs*/, PrepareContext& /*ctx*/) const
    {
        return nullptr;
    }

    // Compute outputs (allocated by the runtime with the inferred shapes).
    virtual void forward(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                         const ExecContext& ctx) const = 0;

    // prepare() then forward(), with scratch of its own: runs the op once
    // outside a Session (tests, constant folding). `outputs` are allocated.
    void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, const ExecContext& ctx) const;

    // Output 0 may be written over input 0's buffer when input 0 is dead afterwards.
    virtual bool supports_inplace() const { return false; }
    // When output 0 holds the inputs' stored bytes end to end (a concat whose
    // outer dims are all 1), the byte offset of each input in it; empty
    // otherwise. The session may then have the producers write straight into
    // the output; forward() must leave inputs already in place alone.
    virtual std::vector<int64_t> input_offsets_in_output(const std::vector<TensorDesc>& /*inputs*/,
                                                         const std::vector<TensorDesc>& /*outputs*/) const
    {
        return {};
    }
    // Outputs are views of input 0 (same bytes, maybe another shape): the runtime
    // makes them without calling forward (Split, Reshape, Flatten, Noop, ...).
    virtual bool outputs_alias_input() const { return false; }
    // Whether inputs may be sequences or optionals (DType::Sequence /
    // Optional: tensors, not bytes); the runtime refuses them elsewhere.
    virtual bool takes_sequences() const { return false; }
    // Whether inputs may be strings (DType::String: std::string objects, not
    // bytes); the runtime refuses them elsewhere, views (outputs_alias_input) aside.
    virtual bool takes_strings() const { return false; }
    // With outputs_alias_input: which input output `i` is a view of.
    virtual int alias_input(int /*output*/) const { return 0; }
    // Output shapes depend on input *values* not known while planning (e.g.
    // detections surviving NMS). infer() then gives an upper bound; forward()
    // may replace outputs[i] with a tensor of the true shape, and layers
    // downstream are re-inferred on the fly.
    virtual bool dynamic_output_shape() const { return false; }
    // With dynamic_output_shape(): true when these inputs (values known while
    // planning included) fix the outputs' shapes, so that infer() gave the true
    // ones (e.g. a Reshape whose target shape came from shape arithmetic); the
    // runtime then plans the outputs as any others.
    virtual bool output_shapes_known(const std::vector<TensorDesc>& /*inputs*/) const { return false; }
    // infer() needs only input shapes, never values, to compute the outputs'
    // values (Shape, Size): such ops are evaluated while planning.
    virtual bool outputs_from_shapes_only() const { return false; }
    // A layer without inputs whose output never changes (Constant, MemoryData):
    // the runtime uses this tensor directly instead of running forward().
    virtual Tensor constant_value() const { return Tensor(); }
    // The graph no longer keeps the weights as loaded (Net::release_weights,
    // LoadOptions::keep_loaded_weights): an op keeping a copy of them only to
    // build packed forms later may drop it once it has what it computes with.
    virtual void weights_released() {}
    // Which inputs and outputs may be stored in channel blocks (BlockedLayouts);
    // none by default. bf16: the session multiplies in bfloat16 where layers
    // can (PrepareContext::bf16), whose paths may want other layouts.
    virtual BlockedLayouts blocked_layouts(const std::vector<TensorDesc>& /*inputs*/,
                                           const std::vector<TensorDesc>& /*outputs*/, bool /*bf16*/) const
    {
        return {};
    }
    // Int8 activations between int8 layers, chosen by the session for the
    // blobs where every writer can write int8 and every reader would
    // quantize with one scale (the values are then those the readers would
    // have made; no float pass between):
    // - int8_input_scale: the scale (>= 0) this layer quantizes its float
    //   input 0 with, when it also reads int8 values of that scale; negative
    //   if it does not;
    // - can_write_int8: whether it can write output 0 as int8 with the scale
    //   the session puts in that output's TensorDesc::int8_scale (then given
    //   to prepare() as the output's dtype I8);
    // - int8_passthrough: whether, for these inputs, int8 inputs of one scale
    //   give the int8 output of that scale exactly (a copy, a max of windows
    //   that each hold an input value), so the choice may span it.
    virtual float int8_input_scale() const { return -1.f; }
    virtual bool can_write_int8(const std::vector<TensorDesc>& /*inputs*/) const { return false; }
    virtual bool int8_passthrough(const std::vector<TensorDesc>& /*inputs*/) const { return false; }
    // Multiply-accumulates for `kestrel info`, given inferred shapes.
    virtual int64_t macs(const std::vector<TensorDesc>&, const std::vector<TensorDesc>&) const { return 0; }
    // Bytes of weights held (for `kestrel info`).
    virtual int64_t weight_bytes() const { return 0; }

    // "Convolution conv1" — for error messages.
    std::string where() const { return type + " '" + name + "'"; }
};

using OpFactory = std::function<std::unique_ptr<Op>()>;

// Registers a layer type; a built-in name is overridden, as in ncnn.
void register_op(const std::string& type, OpFactory factory);
// Creates an op or returns nullptr for an unknown type.
std::unique_ptr<Op> create_op(const std::string& type);
std::vector<std::string> registered_op_types();

} // namespace kestrel
