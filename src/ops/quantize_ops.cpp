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
#include <vector>

#include "ops/activation.h"
#include "ops/builtin_ops.h"
#include "ops/int8.h"
#include "ops/op_util.h"

namespace kestrel {

namespace {

// Outer count that per-row/channel vectors index (1 for a 1-D tensor).
int64_t outer_count(const Shape& s) { return s.size() == 1 ? 1 : s[0]; }

void check_vector_size(const Shape& s, int64_t size, const char* what, int id, bool allow_empty)
{
    if (allow_empty && size == 0) return;
    const int64_t outer = outer_count(s);
    if (s.size() == 1) {
        check(size == 1, what, " (param ", id, " = ", size, ") must be 1 for a 1-D input");
        return;
    }
    check(size == 1 || size == outer, what, " (param ", id, " = ", size, ") must be 1 or ", outer, " (the ",
          s.size() == 2 ? "rows" : "channels", " of input ", shape_str(s), ")");
}

void check_rank(const Shape& s) { check(!s.empty() && s.size() <= 4, "expects a rank 1-4 input, got ", shape_str(s)); }

std::vector<float> load_vector(WeightReader& wr, int64_t n)
{
    if (n == 0) return {};
    const Tensor t = wr.load(n, WeightEncoding::Raw);
    return std::vector<float>(t.data<float>(), t.data<float>() + n);
}

float pick(const std::vector<float>& v, int64_t i, float absent = 0.f)
{
    if (v.empty()) return absent;
    return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)];
}

class Quantize : public Op {
public:
    void load_param(const ParamDict& pd) override { scale_size_ = positive_param(pd, 0, 1, "scale_data_size"); }
    void load_model(WeightReader& wr) override { scale_ = load_vector(wr, scale_size_); }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        check_rank(in[0].shape);
        check_vector_size(in[0].shape, scale_size_, "scale_data_size", 0, false);
        out[0] = make_desc(in[0].shape, DType::I8);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t outer = outer_count(in[0].shape()), inner = in[0].numel() / std::max<int64_t>(outer, 1);
        const float* x = in[0].data<float>();
        int8_t* y = out[0].data<int8_t>();
        ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) quantize_span(x + i * inner, y + i * inner, inner, pick(scale_, i));
        });
    }

    int64_t weight_bytes() const override { return static_cast<int64_t>(scale_.size() * sizeof(float)); }

private:
    int scale_size_ = 1;
    std::vector<float> scale_;
};

class Dequantize : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        scale_size_ = positive_param(pd, 0, 1, "scale_data_size");
        bias_size_ = pd.get_int(1, 0);
        check(bias_size_ >= 0, "bias_data_size (param 1) must be >= 0, got ", bias_size_);
    }
    void load_model(WeightReader& wr) override
    {
        scale_ = load_vector(wr, scale_size_);
        bias_ = load_vector(wr, bias_size_);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        check(in[0].dtype == DType::I32, "input must be int32, got ", dtype_name(in[0].dtype));
        check_rank(in[0].shape);
        check_vector_size(in[0].shape, scale_size_, "scale_data_size", 0, false);
        check_vector_size(in[0].shape, bias_size_, "bias_data_size", 1, true);
        out[0] = make_desc(in[0].shape, DType::F32);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t outer = outer_count(in[0].shape()), inner = in[0].numel() / std::max<int64_t>(outer, 1);
        const int32_t* x = in[0].data<int32_t>();
        float* y = out[0].data<float>();
        ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                const float scale = pick(scale_, i), bias = pick(bias_, i);
                for (int64_t j = i * inner; j < (i + 1) * inner; ++j) y[j] = static_cast<float>(x[j]) * scale + bias;
            }
        });
    }

    int64_t weight_bytes() const override { return static_cast<int64_t>((scale_.size() + bias_.size()) * sizeof(float)); }

private:
    int scale_size_ = 1, bias_size_ = 0;
    std::vector<float> scale_, bias_;
};

class Requantize : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        scale_in_size_ = positive_param(pd, 0, 1, "scale_in_data_size");
        scale_out_size_ = positive_param(pd, 1, 1, "scale_out_data_size");
        bias_size_ = pd.get_int(2, 0);
        check(bias_size_ >= 0, "bias_data_size (param 2) must be >= 0, got ", bias_size_);
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
        scale_in_ = load_vector(wr, scale_in_size_);
        scale_out_ = load_vector(wr, scale_out_size_);
        bias_ = load_vector(wr, bias_size_);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        check(in[0].dtype == DType::I32, "input must be int32, got ", dtype_name(in[0].dtype));
        check_rank(in[0].shape);
        check_vector_size(in[0].shape, scale_in_size_, "scale_in_data_size", 0, false);
        check_vector_size(in[0].shape, scale_out_size_, "scale_out_data_size", 1, false);
        check_vector_size(in[0].shape, bias_size_, "bias_data_size", 2, true);
        out[0] = make_desc(in[0].shape, DType::I8);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t outer = outer_count(in[0].shape()), inner = in[0].numel() / std::max<int64_t>(outer, 1);
        const int32_t* x = in[0].data<int32_t>();
        int8_t* y = out[0].data<int8_t>();
        ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                const float si = pick(scale_in_, i), so = pick(scale_out_, i), b = pick(bias_, i);
                for (int64_t j = i * inner; j < (i + 1) * inner; ++j)
                    y[j] = float2int8(activation_(static_cast<float>(x[j]) * si + b) * so);
            }
        });
    }

    int64_t weight_bytes() const override
    {
        return static_cast<int64_t>((scale_in_.size() + scale_out_.size() + bias_.size()) * sizeof(float));
    }

private:
    int scale_in_size_ = 1, scale_out_size_ = 1, bias_size_ = 0;
    std::vector<float> scale_in_, scale_out_, bias_;
    Activation activation_;
};

} // namespace

std::unique_ptr<Op> make_quantize() { return std::make_unique<Quantize>(); }
std::unique_ptr<Op> make_dequantize() { return std::make_unique<Dequantize>(); }
std::unique_ptr<Op> make_requantize() { return std::make_unique<Requantize>(); }

} // namespace kestrel
