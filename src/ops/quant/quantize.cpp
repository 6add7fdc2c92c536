// Quantize, Dequantize and Requantize (ncnn params, src/layer/{quantize,
// dequantize,requantize}.cpp). Scales and biases are raw fp32 vectors of size 1
// (one value for the whole tensor) or one per row (2-D) / channel (3-D, 4-D);
// a 1-D input takes only size-1 vectors.
//   Quantize   F32 -> I8 : q = float2int8(x * scale)
//              params 0 scale_data_size(1); weights scale[size]
//   Dequantize I32 -> F32: y = x * scale + bias
//              params 0 scale_data_size(1), 1 bias_data_size(0); weights scale, bias
//   Requantize I32 -> I8 : q = float2int8(act(x * scale_in + bias) * scale_out)
//              params 0 scale_in_data_size(1), 1 scale_out_data_size(1),
//              2 bias_data_size(0), 3 activation_type(0), 4 activation_params;
//              weights scale_in, scale_out, bias
// float2int8 rounds half away from zero and clamps to [-127, 127] (ops/int8.h).
#include <algorithm>
#include <initializer_list>
#include <vector>

#include "ops/activation/activation.h"
#include "ops/registry.h"
#include "ops/quant/int8.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

// Outer count that per-row/channel vectors index (1 for a 1-D tensor).
int64_t outer_count(const Shape& s) { return s.size() == 1 ? 1 : s[0]; }

// A scale or bias vector: its size is a param, its values raw fp32 weights;
// one value for the whole tensor or one per row (2-D) / channel (3-D, 4-D).
class RowVector {
public:
    // Required vectors have size >= 1 (default 1), optional ones >= 0 (default 0, absent).
    void read_size(const ParamDict& pd, int id, const char* what, bool optional)
    {
        id_ = id, what_ = what, optional_ = optional;
        if (optional) {
            size_ = pd.get_int(id, 0);
            check(size_ >= 0, what, " (param ", id, ") must be >= 0, got ", size_);
        } else {
            size_ = positive_param(pd, id, 1, what);
        }
    }

    void load(WeightReader& wr)
    {
        values_.clear();
        if (size_ == 0) return;
        const Tensor t = wr.load(size_, WeightEncoding::Raw);
        values_.assign(t.data<float>(), t.data<float>() + size_);
    }

    // The size must suit input shape s: 1, or the count of rows / channels (a 1-D input takes only 1).
    void check_fits(const Shape& s) const
    {
        if (optional_ && size_ == 0) return;
        const int64_t outer = outer_count(s);
        if (s.size() == 1) {
            check(size_ == 1, what_, " (param ", id_, " = ", size_, ") must be 1 for a 1-D input");
            return;
        }
        check(size_ == 1 || size_ == outer, what_, " (param ", id_, " = ", size_, ") must be 1 or ", outer, " (the ",
              s.size() == 2 ? "rows" : "channels", " of input ", shape_str(s), ")");
    }

    // The value for a row (0 when the vector is absent).
    float at(int64_t row) const
    {
        if (values_.empty()) return 0.f;
        return values_.size() == 1 ? values_[0] : values_[static_cast<size_t>(row)];
    }

    int64_t bytes() const { return static_cast<int64_t>(values_.size() * sizeof(float)); }

private:
    int size_ = 0, id_ = 0;
    const char* what_ = "";
    bool optional_ = false;
    std::vector<float> values_;
};

// The layers map a rank 1-4 input of dtype `from` to `to`, element by element.
void infer_rowwise(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out, DType from, DType to,
                   std::initializer_list<const RowVector*> vectors)
{
    expect_input_count(in, 1, 1);
    expect_output_count(out, 1);
    const Shape& s = in[0].shape;
    check(in[0].dtype == from, "input must be ", dtype_name(from), ", got ", dtype_name(in[0].dtype));
    check(!s.empty() && s.size() <= 4, "expects a rank 1-4 input, got ", shape_str(s));
    for (const RowVector* v : vectors) v->check_fits(s);
    out[0] = make_desc(s, to);
}

// fn(row, begin, end) for every row of x (in parallel), [begin, end) its flat element range.
template <class Fn> void for_each_row(const Tensor& x, const ExecContext& ctx, const Fn& fn)
{
    const int64_t outer = outer_count(x.shape()), inner = x.numel() / std::max<int64_t>(outer, 1);
    ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) fn(i, i * inner, (i + 1) * inner);
    });
}

class Quantize : public Op {
public:
    void load_param(const ParamDict& pd) override { scale_.read_size(pd, 0, "scale_data_size", false); }
    void load_model(WeightReader& wr) override { scale_.load(wr); }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        infer_rowwise(in, out, DType::F32, DType::I8, {&scale_});
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const float* x = in[0].data<float>();
        int8_t* y = out[0].data<int8_t>();
        for_each_row(in[0], ctx, [&](int64_t row, int64_t begin, int64_t end) {
            quantize_span(x + begin, y + begin, end - begin, scale_.at(row));
        });
    }

    int64_t weight_bytes() const override { return scale_.bytes(); }

private:
    RowVector scale_;
};

class Dequantize : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        scale_.read_size(pd, 0, "scale_data_size", false);
        bias_.read_size(pd, 1, "bias_data_size", true);
    }
    void load_model(WeightReader& wr) override
    {
        scale_.load(wr);
        bias_.load(wr);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        infer_rowwise(in, out, DType::I32, DType::F32, {&scale_, &bias_});
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int32_t* x = in[0].data<int32_t>();
        float* y = out[0].data<float>();
        for_each_row(in[0], ctx, [&](int64_t row, int64_t begin, int64_t end) {
            const float scale = scale_.at(row), bias = bias_.at(row);
            for (int64_t j = begin; j < end; ++j) y[j] = static_cast<float>(x[j]) * scale + bias;
        });
    }

    int64_t weight_bytes() const override { return scale_.bytes() + bias_.bytes(); }

private:
    RowVector scale_, bias_;
};

class Requantize : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        scale_in_.read_size(pd, 0, "scale_in_data_size", false);
        scale_out_.read_size(pd, 1, "scale_out_data_size", false);
        bias_.read_size(pd, 2, "bias_data_size", true);
        std::vector<float> act_params = pd.get_floats(4);
        const int act_type = pd.get_int(3, 0);
        // Activation::from_ncnn names params 9/10 in its messages; here they are 3/4.
        check(act_type >= 0 && act_type <= 6, "activation_type (param 3) must be 0..6, got ", act_type);
        const size_t need = act_type == 2 ? 1 : (act_type == 3 || act_type == 6) ? 2 : 0;
        check(act_params.size() >= need, "activation type ", act_type, " needs ", need,
              " params (param 4), got ", act_params.size());
        activation_ = Activation::from_ncnn(act_type, act_params);
    }
    void load_model(WeightReader& wr) override
    {
        scale_in_.load(wr);
        scale_out_.load(wr);
        bias_.load(wr);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        infer_rowwise(in, out, DType::I32, DType::I8, {&scale_in_, &scale_out_, &bias_});
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int32_t* x = in[0].data<int32_t>();
        int8_t* y = out[0].data<int8_t>();
        for_each_row(in[0], ctx, [&](int64_t row, int64_t begin, int64_t end) {
            const float si = scale_in_.at(row), so = scale_out_.at(row), b = bias_.at(row);
            for (int64_t j = begin; j < end; ++j)
                y[j] = float2int8(activation_(static_cast<float>(x[j]) * si + b) * so);
        });
    }

    int64_t weight_bytes() const override { return scale_in_.bytes() + scale_out_.bytes() + bias_.bytes(); }

private:
    RowVector scale_in_, scale_out_, bias_;
    Activation activation_;
};

} // namespace

std::unique_ptr<Op> make_quantize() { return std::make_unique<Quantize>(); }
std::unique_ptr<Op> make_dequantize() { return std::make_unique<Dequantize>(); }
std::unique_ptr<Op> make_requantize() { return std::make_unique<Requantize>(); }

} // namespace kestrel
