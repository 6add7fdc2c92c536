// RNN, GRU, LSTM: one recurrent layer whose cell is chosen by the registered
// type, in ncnn's form or the ONNX form (20=1, params from 21).
//
// ncnn's form: 0=num_output (the hidden size) 1=weight_data_size 2=direction
// (0 forward, 1 reverse, 2 both); LSTM's 3=hidden_size (num_output): the cell
// size, with num_output then the size of h, which a projection weight_hr
// (num_output, hidden_size) makes from the cell's output (PyTorch's
// proj_size). Int8 weights (8) are refused.
// Weights, tagged, per direction: weight_xc (gates*hidden, input), bias
// (RNN: hidden; LSTM: 4*hidden, the two biases summed; GRU: 4*hidden: r, u,
// the input part of n, the hidden part of n), weight_hc (gates*hidden,
// h size), then with a projection weight_hr. ncnn's gate orders (LSTM i, f, o, g; GRU r, u, n with the reset
// gate applied after the hidden matmul, ONNX's linear_before_reset) are
// reordered once at load into the ONNX form's. Input X (seq, input), then the
// optional initial states (dirs, hidden) (GRU/RNN: h; LSTM: h and c); output
// (seq, dirs*hidden), the directions side by side, then with initial states
// given the final ones.
//
// Inputs, float32, in ONNX order; an optional input that is absent is an empty
// tensor (or left off at the end):
//   0 X              (seq, batch, input)     layout 1: (batch, seq, input)
//   1 W              (dirs, gates*hidden, input)
//   2 R              (dirs, gates*hidden, hidden)
//   3 B              (dirs, 2*gates*hidden): W biases then R biases
//   4 sequence_lens  (batch), any integer dtype
//   5 initial_h      (dirs, batch, hidden)   layout 1: (batch, dirs, hidden)
//   6 initial_c      LSTM only, like initial_h
//   7 P              LSTM only, (dirs, 3*hidden) peepholes i, o, f
// Outputs: Y (seq, dirs, batch, hidden) [layout 1: (batch, seq, dirs, hidden)],
// Y_h and (LSTM) Y_c shaped like initial_h. Steps past a batch entry's
// sequence length are zero in Y.
// Gates: RNN i; GRU z, r, h; LSTM i, o, f, c.
// Params: 21=hidden_size (0: from R), 22=direction (0 forward, 1 reverse,
// 2 bidirectional), 23=layout, 24=clip (0: none; gate inputs are clipped to
// [-clip, clip] before their activation), 25=linear_before_reset (GRU),
// 26=activation codes (RNN 1, GRU 2, LSTM 3 per direction, forward first;
// empty: the ONNX defaults) with 27=alpha and 28=beta, one per activation.
#include <algorithm>
#include <cmath>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum class Cell { Rnn, Gru, Lstm };

// Activation codes of param 5 (the converter maps ONNX's names onto them).
enum Activation { Sigmoid, Tanh, Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign,
                  Softplus, kActivationCount };

struct ActivationFn {
    int code = Sigmoid;
    float alpha = 0.f, beta = 0.f;
    float operator()(float x) const
    {
        switch (code) {
        case Sigmoid: return 1.f / (1.f + std::exp(-x));
        case Tanh: return std::tanh(x);
        case Relu: return std::max(x, 0.f);
        case Affine: return alpha * x + beta;
        case LeakyRelu: return x >= 0.f ? x : alpha * x;
        case ThresholdedRelu: return x > alpha ? x : 0.f;
        case ScaledTanh: return alpha * std::tanh(beta * x);
        case HardSigmoid: return std::clamp(alpha * x + beta, 0.f, 1.f);
        case Elu: return x >= 0.f ? x : alpha * (std::exp(x) - 1.f);
        case Softsign: return x / (1.f + std::fabs(x));
        default: return std::log1p(std::exp(x)); // Softplus
        }
    }
};

int gate_count(Cell c) { return c == Cell::Rnn ? 1 : c == Cell::Gru ? 3 : 4; }
int activations_per_direction(Cell c) { return c == Cell::Rnn ? 1 : c == Cell::Gru ? 2 : 3; }
size_t max_inputs(Cell c) { return c == Cell::Lstm ? 8 : 6; }
size_t max_outputs(Cell c) { return c == Cell::Lstm ? 3 : 2; }

// Sizes of one run, from X and R.
struct Dims {
    int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
    int64_t proj = 0; // the size of h: hidden, or an LSTM projection's
};

// y[r] += sum_k m[r][k] * v[k] for rows [0, rows).
void add_matvec(const float* m, int64_t rows, int64_t cols, const float* v, float* y)
{
    for (int64_t r = 0; r < rows; ++r) {
        const float* row = m + r * cols;
        float acc = 0.f;
        for (int64_t k = 0; k < cols; ++k) acc += row[k] * v[k];
        y[r] += acc;
    }
}

// Weights and state of one direction for one batch entry.
struct Step {
    const float* w = nullptr;  // (gates*hidden, input)
    const float* r = nullptr;  // (gates*hidden, hidden)
    const float* wb = nullptr; // gates*hidden, or null
    const float* rb = nullptr;
    const float* p = nullptr;  // LSTM peepholes (3*hidden), or null
    const float* hr = nullptr; // LSTM projection (proj, hidden), or null
    const ActivationFn* act = nullptr;
    std::vector<float> h, c, gx, gh, scratch; // h: proj values; c, scratch: hidden
};

// The ONNX form's params start here, clear of ncnn's RNN/GRU/LSTM ids.
constexpr int kFirst = 21;

class Recurrent : public Op {
public:
    explicit Recurrent(Cell cell) : cell_(cell) {}

    void load_param(const ParamDict& pd) override
    {
        ncnn_ = pd.get_int(20, 0) != 1;
        if (ncnn_) {
            load_ncnn_param(pd);
            return;
        }
        hidden_ = pd.get_int(kFirst, 0);
        check(hidden_ >= 0, "hidden_size (param 21) must be >= 0, got ", hidden_);
        direction_ = pd.get_int(kFirst + 1, 0);
        check(direction_ >= 0 && direction_ <= 2, "direction (param 22) must be 0, 1 or 2, got ", direction_);
        layout_ = pd.get_int(kFirst + 2, 0);
        check(layout_ == 0 || layout_ == 1, "layout (param 23) must be 0 or 1, got ", layout_);
        clip_ = pd.get_float(kFirst + 3, 0.f);
        check(clip_ >= 0.f, "clip (param 24) must be >= 0, got ", clip_);
        linear_before_reset_ = pd.get_int(kFirst + 4, 0) != 0;
        load_activations(pd);
    }

    void load_model(WeightReader& wr) override
    {
        if (!ncnn_) return;
        const int64_t dirs = direction_ == 2 ? 2 : 1, gates = gate_count(cell_), h = hidden_, o = h_size();
        input_size_ = weight_data_size_ / dirs / gates / h;
        check(input_size_ > 0 && input_size_ * dirs * gates * h == weight_data_size_, "weight_data_size (param 1) ",
              weight_data_size_, " is not directions x ", gates, " gates x hidden size x input size");
        const Tensor wx = ncnn_weight(wr, dirs * gates * h * input_size_, "weight_xc");
        const Tensor bias = ncnn_weight(wr, dirs * (cell_ == Cell::Rnn ? 1 : 4) * h, "bias_c");
        const Tensor wh = ncnn_weight(wr, dirs * gates * h * o, "weight_hc");
        if (proj_ > 0) hr_ = ncnn_weight(wr, dirs * proj_ * h, "weight_hr").reshaped({dirs, proj_, h});
        w_ = Tensor({dirs, gates * h, input_size_}, DType::F32);
        r_ = Tensor({dirs, gates * h, o}, DType::F32);
        b_ = Tensor({dirs, 2 * gates * h}, DType::F32);
        std::fill_n(b_.data<float>(), b_.numel(), 0.f);
        for (int64_t dir = 0; dir < dirs; ++dir) reorder_ncnn_direction(wx, bias, wh, dir);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        if (ncnn_) {
            infer_ncnn(in, out);
            return;
        }
        expect_input_count(in, 3, max_inputs(cell_));
        check(!out.empty() && out.size() <= max_outputs(cell_), "expects 1 to ", max_outputs(cell_), " outputs, got ",
              out.size());
        for (size_t i = 0; i < in.size(); ++i) {
            if (i >= 3 && shape_numel(in[i].shape) == 0) continue; // absent optional input
            if (i == 4)
                check(nd::is_integer_dtype(in[i].dtype), "sequence_lens (input 4) must be an integer tensor, got ",
                      dtype_name(in[i].dtype));
            else
                check(in[i].dtype == DType::F32, "input ", i, " must be float32, got ", dtype_name(in[i].dtype));
        }
        const Dims d = dims_of(in[0].shape, in[1].shape, in[2].shape);
        expect_optional(in, 3, {d.dirs, 2 * d.gates * d.hidden}, "B (input 3)");
        expect_optional(in, 4, {d.batch}, "sequence_lens (input 4)");
        expect_optional(in, 5, state_shape(d, d.proj), "initial_h (input 5)");
        expect_optional(in, 6, state_shape(d, d.hidden), "initial_c (input 6)");
        expect_optional(in, 7, {d.dirs, 3 * d.hidden}, "P (input 7)");
        out[0] = TensorDesc(layout_ == 0 ? Shape{d.seq, d.dirs, d.batch, d.proj} : Shape{d.batch, d.seq, d.dirs, d.proj});
        for (size_t i = 1; i < out.size(); ++i) out[i] = TensorDesc(state_shape(d, i == 1 ? d.proj : d.hidden));
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        if (ncnn_) {
            forward_ncnn(in, out, ctx);
            return;
        }
        run(in, out, ctx);
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&) const override
    {
        if (ncnn_) return w_.numel() == 0 ? 0 : in[0].shape[0] * (w_.numel() + r_.numel());
        const Dims d = dims_of(in[0].shape, in[1].shape, in[2].shape);
        return d.dirs * d.seq * d.batch * d.gates * d.hidden * (d.input + d.hidden);
    }

    int64_t weight_bytes() const override
    {
        return static_cast<int64_t>((w_.defined() ? w_.nbytes() : 0) + (r_.defined() ? r_.nbytes() : 0) +
                                    (b_.defined() ? b_.nbytes() : 0) + (hr_.defined() ? hr_.nbytes() : 0));
    }

private:
    // The ONNX form's computation on its inputs (X, W, R, [B, lens, h0, c0, P]).
    void run(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const
    {
        const Dims d = dims_of(in[0].shape(), in[1].shape(), in[2].shape());
        const std::vector<int64_t> lens = sequence_lengths(in, d);
        ctx.parallel_for(d.dirs * d.batch, [&](int64_t begin, int64_t end) {
            for (int64_t job = begin; job < end; ++job) run_sequence(in, out, d, job / d.batch, job % d.batch, lens);
        });
    }

    void load_ncnn_param(const ParamDict& pd)
    {
        const int num_output = positive_param(pd, 0, 0, "num_output");
        weight_data_size_ = positive_param(pd, 1, 0, "weight_data_size");
        direction_ = pd.get_int(2, 0);
        check(direction_ >= 0 && direction_ <= 2, "direction (param 2) must be 0, 1 or 2, got ", direction_);
        hidden_ = cell_ == Cell::Lstm ? positive_param(pd, 3, num_output, "hidden_size") : num_output;
        proj_ = hidden_ != num_output ? num_output : 0;
        check(pd.get_int(8, 0) == 0, "int8 weights (int8_scale_term, param 8) are not supported");
        layout_ = 0;
        clip_ = 0.f;
        linear_before_reset_ = cell_ == Cell::Gru; // ncnn applies the reset gate after the hidden matmul
        acts_.clear();
        load_activations(ParamDict());
    }

    Tensor ncnn_weight(WeightReader& wr, int64_t count, const char* what) const
    {
        Tensor t = wr.load(count, WeightEncoding::Tagged);
        check(t.dtype() == DType::F32, what, " must be float32 or float16, got ", dtype_name(t.dtype()));
        return t;
    }

    // The size of h: the projection's, or the hidden size.
    int64_t h_size() const { return proj_ > 0 ? proj_ : hidden_; }

    // ncnn's gate blocks of one direction into W, R, B (ONNX's orders: RNN
    // i; GRU z, r, h; LSTM i, o, f, c).
    void reorder_ncnn_direction(const Tensor& wx, const Tensor& bias, const Tensor& wh, int64_t dir)
    {
        const int64_t h = hidden_, gates = gate_count(cell_), in = input_size_, o = h_size();
        // Our gate k comes from ncnn's gate source[k].
        static const int kLstm[] = {0, 2, 1, 3}, kGru[] = {1, 0, 2}, kRnn[] = {0};
        const int* source = cell_ == Cell::Lstm ? kLstm : cell_ == Cell::Gru ? kGru : kRnn;
        const int64_t bias_blocks = cell_ == Cell::Rnn ? 1 : 4;
        float* w = w_.data<float>() + dir * gates * h * in;
        float* r = r_.data<float>() + dir * gates * h * o;
        float* wb = b_.data<float>() + dir * 2 * gates * h;
        float* rb = wb + gates * h;
        for (int64_t k = 0; k < gates; ++k) {
            const int64_t g = source[k];
            std::copy_n(wx.data<float>() + (dir * gates + g) * h * in, h * in, w + k * h * in);
            std::copy_n(wh.data<float>() + (dir * gates + g) * h * o, h * o, r + k * h * o);
            std::copy_n(bias.data<float>() + (dir * bias_blocks + g) * h, h, wb + k * h);
        }
        // GRU: ncnn's fourth bias block is the hidden part of n, inside the reset gate.
        if (cell_ == Cell::Gru) std::copy_n(bias.data<float>() + (dir * 4 + 3) * h, h, rb + 2 * h);
    }

    size_t ncnn_state_count() const { return cell_ == Cell::Lstm ? 2 : 1; }

    void infer_ncnn(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const
    {
        const size_t states = ncnn_state_count();
        check(in.size() == 1 || in.size() == 1 + states, "expects 1 or ", 1 + states, " inputs (X",
              states == 2 ? ", h, c" : ", h", "), got ", in.size());
        check(out.size() == 1 || out.size() == 1 + states, "expects 1 or ", 1 + states, " outputs, got ", out.size());
        for (const TensorDesc& d : in) expect_f32(d);
        const Shape& x = in[0].shape;
        check((x.size() == 2 && x[1] == input_size_) || x == Shape{input_size_}, "X (input 0) must be (seq, ",
              input_size_, ") or one step (", input_size_, "), got ", shape_str(x));
        const int64_t dirs = direction_ == 2 ? 2 : 1;
        // Initial and final states: h (directions, h size), then LSTM's c (directions, hidden size).
        for (size_t i = 1; i < in.size(); ++i) {
            const int64_t size = i == 1 ? h_size() : hidden_;
            check(shape_numel(in[i].shape) == dirs * size, "initial state (input ", i, ") must hold directions x ", size,
                  " values, got ", shape_str(in[i].shape));
        }
        out[0] = TensorDesc(Shape{x.size() == 1 ? 1 : x[0], dirs * h_size()}); // a 1-D input is one step, as ncnn
        for (size_t i = 1; i < out.size(); ++i) out[i] = TensorDesc(Shape{dirs, i == 1 ? h_size() : int64_t{hidden_}});
    }

    // X (seq, input) as the batch of one (seq, 1, input); the states (dirs,
    // hidden) as (dirs, 1, hidden); Y (seq, dirs, 1, hidden) is ncnn's (seq,
    // dirs*hidden) as it lies.
    void forward_ncnn(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const
    {
        const int64_t seq = in[0].rank() == 1 ? 1 : in[0].dim(0), dirs = direction_ == 2 ? 2 : 1;
        auto state = [&](size_t i) { return Shape{dirs, 1, i == 1 ? h_size() : int64_t{hidden_}}; };
        std::vector<Tensor> onnx_in = {in[0].view_as({seq, 1, input_size_}, DType::F32), w_, r_, b_, Tensor()};
        for (size_t i = 1; i < in.size(); ++i) onnx_in.push_back(in[i].view_as(state(i), DType::F32));
        std::vector<Tensor> onnx_out = {out[0].view_as({seq, dirs, 1, h_size()}, DType::F32)};
        for (size_t i = 1; i < out.size(); ++i) onnx_out.push_back(out[i].view_as(state(i), DType::F32));
        run(onnx_in, onnx_out, ctx);
    }

    void load_activations(const ParamDict& pd)
    {
        const std::vector<int> codes = pd.get_ints(kFirst + 5);
        const std::vector<float> alphas = pd.get_floats(kFirst + 6), betas = pd.get_floats(kFirst + 7);
        const size_t per_dir = static_cast<size_t>(activations_per_direction(cell_));
        const size_t dirs = direction_ == 2 ? 2 : 1;
        check(codes.empty() || codes.size() == per_dir * dirs, "activations (param 26) must list ", per_dir * dirs,
              " codes, got ", codes.size());
        check(alphas.size() <= codes.size() && betas.size() <= codes.size(),
              "alpha/beta (params 6, 7) have more values than activations");
        acts_.clear();
        for (size_t i = 0; i < per_dir * dirs; ++i) {
            ActivationFn f;
            // Defaults: f = Sigmoid, g = Tanh, h = Tanh (RNN: Tanh).
            f.code = codes.empty() ? ((i % per_dir == 0 && cell_ != Cell::Rnn) ? Sigmoid : Tanh) : codes[i];
            check(f.code >= 0 && f.code < kActivationCount, "activation code ", f.code, " (param 26) is unknown");
            if (i < alphas.size()) f.alpha = alphas[i];
            if (i < betas.size()) f.beta = betas[i];
            acts_.push_back(f);
        }
    }

    Dims dims_of(const Shape& x, const Shape& w, const Shape& r) const
    {
        check(x.size() == 3, "X (input 0) must be rank 3, got ", shape_str(x));
        check(w.size() == 3 && r.size() == 3, "W and R (inputs 1, 2) must be rank 3, got ", shape_str(w), " and ",
              shape_str(r));
        Dims d;
        d.seq = x[layout_ == 0 ? 0 : 1];
        d.batch = x[layout_ == 0 ? 1 : 0];
        d.input = x[2];
        d.gates = gate_count(cell_);
        d.dirs = direction_ == 2 ? 2 : 1;
        d.hidden = hidden_ > 0 ? hidden_ : r[2];
        d.proj = proj_ > 0 ? proj_ : d.hidden;
        check(w == Shape({d.dirs, d.gates * d.hidden, d.input}), "W (input 1) must have shape ",
              shape_str({d.dirs, d.gates * d.hidden, d.input}), ", got ", shape_str(w));
        check(r == Shape({d.dirs, d.gates * d.hidden, d.proj}), "R (input 2) must have shape ",
              shape_str({d.dirs, d.gates * d.hidden, d.proj}), ", got ", shape_str(r));
        return d;
    }

    // A state of `size` values per direction and batch entry (h: d.proj, c: d.hidden).
    Shape state_shape(const Dims& d, int64_t size) const
    {
        return layout_ == 0 ? Shape{d.dirs, d.batch, size} : Shape{d.batch, d.dirs, size};
    }

    static bool present(const std::vector<Tensor>& in, size_t i) { return i < in.size() && in[i].numel() > 0; }

    static void expect_optional(const std::vector<TensorDesc>& in, size_t i, const Shape& want, const char* what)
    {
        if (i >= in.size() || shape_numel(in[i].shape) == 0) return;
        check(in[i].shape == want, what, " must have shape ", shape_str(want), ", got ", shape_str(in[i].shape));
    }

    static std::vector<int64_t> sequence_lengths(const std::vector<Tensor>& in, const Dims& d)
    {
        if (!present(in, 4)) return std::vector<int64_t>(static_cast<size_t>(d.batch), d.seq);
        std::vector<int64_t> lens = nd::int_values(in[4], "sequence_lens (input 4)");
        for (int64_t len : lens)
            check(len >= 0 && len <= d.seq, "sequence_lens (input 4) value ", len, " is outside [0, ", d.seq, "]");
        return lens;
    }

    // Offset of (step t, direction, batch entry) rows of Y, and of (direction,
    // batch entry) rows of the states, in units of hidden vectors.
    int64_t y_row(const Dims& d, int64_t t, int64_t dir, int64_t b) const
    {
        return layout_ == 0 ? (t * d.dirs + dir) * d.batch + b : (b * d.seq + t) * d.dirs + dir;
    }
    int64_t state_row(const Dims& d, int64_t dir, int64_t b) const
    {
        return layout_ == 0 ? dir * d.batch + b : b * d.dirs + dir;
    }

    Step make_step(const std::vector<Tensor>& in, const Dims& d, int64_t dir, int64_t b) const
    {
        const int64_t gh = d.gates * d.hidden;
        Step s;
        s.w = in[1].data<float>() + dir * gh * d.input;
        s.r = in[2].data<float>() + dir * gh * d.proj;
        if (present(in, 3)) {
            s.wb = in[3].data<float>() + dir * 2 * gh;
            s.rb = s.wb + gh;
        }
        if (present(in, 7)) s.p = in[7].data<float>() + dir * 3 * d.hidden;
        if (hr_.defined()) s.hr = hr_.data<float>() + dir * d.proj * d.hidden;
        s.act = acts_.data() + dir * activations_per_direction(cell_);
        const size_t hn = static_cast<size_t>(d.hidden), pn = static_cast<size_t>(d.proj);
        s.h.assign(pn, 0.f);
        s.c.assign(hn, 0.f);
        const int64_t row = state_row(d, dir, b);
        if (present(in, 5)) std::copy_n(in[5].data<float>() + row * d.proj, pn, s.h.begin());
        if (present(in, 6)) std::copy_n(in[6].data<float>() + row * d.hidden, hn, s.c.begin());
        s.gx.resize(static_cast<size_t>(gh));
        s.gh.resize(static_cast<size_t>(gh));
        s.scratch.resize(hn);
        return s;
    }

    void run_sequence(const std::vector<Tensor>& in, std::vector<Tensor>& out, const Dims& d, int64_t dir, int64_t b,
                      const std::vector<int64_t>& lens) const
    {
        Step s = make_step(in, d, dir, b);
        const bool reverse = direction_ == 1 || dir == 1;
        const int64_t len = lens[static_cast<size_t>(b)];
        float* y = out[0].data<float>();
        for (int64_t i = 0; i < len; ++i) {
            const int64_t t = reverse ? len - 1 - i : i;
            const int64_t x_row = layout_ == 0 ? t * d.batch + b : b * d.seq + t;
            step(s, d, in[0].data<float>() + x_row * d.input);
            std::copy(s.h.begin(), s.h.end(), y + y_row(d, t, dir, b) * d.proj);
        }
        for (int64_t t = len; t < d.seq; ++t) std::fill_n(y + y_row(d, t, dir, b) * d.proj, d.proj, 0.f);
        const int64_t row = state_row(d, dir, b);
        if (out.size() > 1) std::copy(s.h.begin(), s.h.end(), out[1].data<float>() + row * d.proj);
        if (out.size() > 2) std::copy(s.c.begin(), s.c.end(), out[2].data<float>() + row * d.hidden);
    }

    // Gate pre-activations: gx = W x + Wb, gh = R h + Rb; then the cell update.
    void step(Step& s, const Dims& d, const float* x) const
    {
        const int64_t gh = d.gates * d.hidden;
        for (int64_t g = 0; g < gh; ++g) {
            s.gx[g] = s.wb ? s.wb[g] : 0.f;
            s.gh[g] = s.rb ? s.rb[g] : 0.f;
        }
        add_matvec(s.w, gh, d.input, x, s.gx.data());
        // GRU without linear_before_reset applies R to (r * h) for the h gate: done in gru_step.
        const bool defer_h_gate = cell_ == Cell::Gru && !linear_before_reset_;
        add_matvec(s.r, defer_h_gate ? 2 * d.hidden : gh, d.proj, s.h.data(), s.gh.data());
        if (cell_ == Cell::Rnn) rnn_step(s, d.hidden);
        else if (cell_ == Cell::Gru) gru_step(s, d.hidden);
        else lstm_step(s, d);
    }

    float clipped(float v) const { return clip_ > 0.f ? std::clamp(v, -clip_, clip_) : v; }

    void rnn_step(Step& s, int64_t n) const
    {
        for (int64_t j = 0; j < n; ++j) s.h[j] = s.act[0](clipped(s.gx[j] + s.gh[j]));
    }

    void gru_step(Step& s, int64_t n) const
    {
        const ActivationFn &f = s.act[0], &g = s.act[1];
        std::vector<float>& reset_h = s.scratch;
        if (!linear_before_reset_) {
            // gh's h part is R_h (r * h) + Rb_h.
            for (int64_t j = 0; j < n; ++j) reset_h[j] = f(clipped(s.gx[n + j] + s.gh[n + j])) * s.h[j];
            add_matvec(s.r + 2 * n * n, n, n, reset_h.data(), s.gh.data() + 2 * n);
        }
        for (int64_t j = 0; j < n; ++j) {
            const float z = f(clipped(s.gx[j] + s.gh[j]));
            const float r = f(clipped(s.gx[n + j] + s.gh[n + j]));
            const float hh = linear_before_reset_ ? s.gx[2 * n + j] + r * s.gh[2 * n + j] : s.gx[2 * n + j] + s.gh[2 * n + j];
            const float candidate = g(clipped(hh));
            s.h[j] = (1.f - z) * candidate + z * s.h[j];
        }
    }

    void lstm_step(Step& s, const Dims& d) const
    {
        const int64_t n = d.hidden;
        const ActivationFn &f = s.act[0], &g = s.act[1], &h = s.act[2];
        // With a projection the cell's output goes to scratch, then h = hr . output.
        float* out = s.hr ? s.scratch.data() : s.h.data();
        for (int64_t j = 0; j < n; ++j) {
            const float c_prev = s.c[j];
            const float pi = s.p ? s.p[j] : 0.f, po = s.p ? s.p[n + j] : 0.f, pf = s.p ? s.p[2 * n + j] : 0.f;
            const float i = f(clipped(s.gx[j] + s.gh[j] + pi * c_prev));
            const float fg = f(clipped(s.gx[2 * n + j] + s.gh[2 * n + j] + pf * c_prev));
            const float c_in = g(clipped(s.gx[3 * n + j] + s.gh[3 * n + j]));
            const float c = fg * c_prev + i * c_in;
            const float o = f(clipped(s.gx[n + j] + s.gh[n + j] + po * c));
            s.c[j] = c;
            out[j] = o * h(c);
        }
        if (s.hr) {
            std::fill(s.h.begin(), s.h.end(), 0.f);
            add_matvec(s.hr, d.proj, n, out, s.h.data());
        }
    }

    Cell cell_;
    bool ncnn_ = false;
    int hidden_ = 0, direction_ = 0, layout_ = 0;
    // ncnn's form: its params, and its weights in the ONNX form's layout.
    int64_t weight_data_size_ = 0, input_size_ = 0;
    int64_t proj_ = 0; // LSTM's projected h size (ncnn's num_output when it differs from hidden_size); 0: none
    Tensor w_, r_, b_, hr_;
    float clip_ = 0.f;
    bool linear_before_reset_ = false;
    std::vector<ActivationFn> acts_;
};

} // namespace

std::unique_ptr<Op> make_rnn() { return std::make_unique<Recurrent>(Cell::Rnn); }
std::unique_ptr<Op> make_gru() { return std::make_unique<Recurrent>(Cell::Gru); }
std::unique_ptr<Op> make_lstm() { return std::make_unique<Recurrent>(Cell::Lstm); }

} // namespace kestrel
