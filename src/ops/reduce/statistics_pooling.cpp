// StatisticsPooling (ncnn, x-vector speaker embeddings): per channel (ncnn's
// c: the outermost axis of a rank 3-4 input; ranks 1-2 are one channel) the
// mean of its values, then with 0=include_stddev (0) their population
// standard deviation: output (channels) or (2*channels), float32.
#include <cmath>

#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class StatisticsPooling : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        const int v = pd.get_int(0, 0);
        check(v == 0 || v == 1, "include_stddev (param 0) must be 0 or 1, got ", v);
        stddev_ = v == 1;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        ncnn_dims(in[0].shape);
        const int64_t c = channels(in[0].shape);
        out[0] = TensorDesc(Shape{stddev_ ? 2 * c : c}, DType::F32);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t c = channels(in[0].shape());
        if (c == 0) return;
        const int64_t size = in[0].numel() / c;
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();
        ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
            for (int64_t q = begin; q < end; ++q) {
                const float* xq = x + q * size;
                double sum = 0.0;
                for (int64_t i = 0; i < size; ++i) sum += xq[i];
                const double mean = sum / static_cast<double>(size);
                y[q] = static_cast<float>(mean);
                if (!stddev_) continue;
                double squares = 0.0;
                for (int64_t i = 0; i < size; ++i) squares += (xq[i] - mean) * (xq[i] - mean);
                y[c + q] = static_cast<float>(std::sqrt(squares / static_cast<double>(size)));
            }
        });
    }

private:
    static int64_t channels(const Shape& s) { return s.size() >= 3 ? s[0] : 1; }

    bool stddev_ = false;
};

} // namespace

std::unique_ptr<Op> make_statistics_pooling() { return std::make_unique<StatisticsPooling>(); }

} // namespace kestrel
