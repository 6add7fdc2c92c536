// GLU (ncnn): the input split in two halves a, b along 0=axis (outermost
// first, negative from the end; rank 1 ignores it, as ncnn): a * sigmoid(b),
// float32. The axis must have an even size.
#include <cmath>

#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

class Glu : public Op {
public:
    void load_param(const ParamDict& pd) override { axis_ = pd.get_int(0, 0); }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        Shape s = in[0].shape;
        ncnn_dims(s); // rank 1-4
        const size_t a = static_cast<size_t>(axis(s));
        check(s[a] % 2 == 0, "axis ", a, " of ", shape_str(s), " must have an even size");
        s[a] /= 2;
        out[0] = TensorDesc(s, DType::F32);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& s = in[0].shape();
        const size_t a = static_cast<size_t>(axis(s));
        const int64_t outer = nd::dims_product(s, 0, a), half = s[a] / 2 * nd::dims_product(s, a + 1, s.size());
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();
        ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
                const float* first = x + o * 2 * half;
                const float* second = first + half;
                float* yo = y + o * half;
                for (int64_t i = 0; i < half; ++i) yo[i] = first[i] / (1.f + std::exp(-second[i]));
            }
        });
    }

private:
    int axis(const Shape& s) const
    {
        return s.size() == 1 ? 0 : nd::normalize_axis(axis_, static_cast<int64_t>(s.size()), "axis (param 0)");
    }

    int axis_ = 0;
};

} // namespace

std::unique_ptr<Op> make_glu() { return std::make_unique<Glu>(); }

} // namespace kestrel
