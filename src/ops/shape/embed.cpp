// Embed (ncnn, nn.Embedding): row x[i] of the table for each index of a
// rank-1 integer input (ncnn reads the blob's words as int32; any integer
// dtype here, or float32 holding whole numbers), clamped into [0,
// input_dim - 1] as ncnn does, plus the bias: output (words, num_output).
// Params 0=num_output 1=input_dim 2=bias_term 3=weight_data_size
// (input_dim * num_output) 18=int8_scale_term. Weights: the table, tagged
// (float32, float16, or int8 with 18 set, then one raw scale the int8 values
// are divided by), then the bias (raw) with bias_term. The table is float32
// once loaded.
#include <algorithm>
#include <cmath>

#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

class Embed : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        num_output_ = positive_param(pd, 0, 0, "num_output");
        input_dim_ = positive_param(pd, 1, 0, "input_dim");
        bias_term_ = pd.get_int(2, 0) != 0;
        const int64_t size = pd.get_int(3, 0);
        check(size == num_output_ * input_dim_, "weight_data_size (param 3) ", size, " is not input_dim x num_output = ",
              num_output_ * input_dim_);
        int8_ = pd.get_int(18, 0) != 0;
    }

    void load_model(WeightReader& wr) override
    {
        Tensor table = wr.load(num_output_ * input_dim_, WeightEncoding::Tagged);
        bias_ = bias_term_ ? wr.load(num_output_, WeightEncoding::Raw) : Tensor();
        if (int8_) {
            const float scale = wr.load(1, WeightEncoding::Raw).data<float>()[0];
            check(table.dtype() == DType::I8, "int8_scale_term (param 18) needs an int8 table");
            check(scale != 0.f && std::isfinite(scale), "the int8 table's scale must be finite and not 0, got ", scale);
            Tensor f({table.numel()}, DType::F32);
            for (int64_t i = 0; i < table.numel(); ++i) f.data<float>()[i] = table.data<int8_t>()[i] * (1.f / scale);
            table = f;
        }
        check(table.dtype() == DType::F32, "the table must be float32 or float16 (or int8 with param 18)");
        table_ = table;
    }

    int64_t weight_bytes() const override
    {
        return static_cast<int64_t>(table_.nbytes() + (bias_.defined() ? bias_.nbytes() : 0));
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        check(in[0].shape.size() == 1, "expects a rank-1 input of word indices, got ", shape_str(in[0].shape));
        check(nd::is_integer_dtype(in[0].dtype) || in[0].dtype == DType::F32, "word indices must be integers, got ",
              dtype_name(in[0].dtype));
        out[0] = TensorDesc(Shape{in[0].shape[0], num_output_});
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Tensor& words = in[0];
        const float* bias = bias_.defined() ? bias_.data<float>() : nullptr;
        float* y = out[0].data<float>();
        ctx.parallel_for(words.numel(), [&](int64_t begin, int64_t end) {
            for (int64_t q = begin; q < end; ++q) {
                const int64_t index = word(words, q, input_dim_ - 1);
                const float* row = table_.data<float>() + index * num_output_;
                float* yq = y + q * num_output_;
                for (int64_t p = 0; p < num_output_; ++p) yq[p] = bias ? row[p] + bias[p] : row[p];
            }
        });
    }

private:
    // Word q clamped into [0, last] (a float one before its conversion: NaN is 0).
    static int64_t word(const Tensor& words, int64_t q, int64_t last)
    {
        if (words.dtype() == DType::F32) {
            const float v = words.data<float>()[q];
            return !(v >= 0.f) ? 0 : v >= static_cast<float>(last) ? last : static_cast<int64_t>(v);
        }
        int64_t v = 0;
        visit_dtype(words.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_integral_v<T>) {
                const T w = words.data<T>()[q];
                v = w <= T(0) ? 0 : static_cast<uint64_t>(w) >= static_cast<uint64_t>(last) ? last : static_cast<int64_t>(w);
            }
        });
        return v;
    }

    int64_t num_output_ = 0, input_dim_ = 0;
    bool bias_term_ = false, int8_ = false;
    Tensor table_, bias_;
};

} // namespace

std::unique_ptr<Op> make_embed() { return std::make_unique<Embed>(); }

} // namespace kestrel
