// EyeLike (ONNX): a 2-D tensor shaped like input 0 with ones on the diagonal
// j = i + k (1=k, default 0) and zeros elsewhere. Param 0=dtype (kestrel::DType
// code; default -1: input 0's dtype).
#include <cstring>

#include "core/dtype_dispatch.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class EyeLike : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        dtype_ = pd.get_int(0, -1);
        check(dtype_ >= -1 && dtype_ <= static_cast<int>(DType::Bool), "dtype (param 0) ", dtype_,
              " is not -1 or a dtype code 0..12");
        k_ = pd.get_int(1, 0);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        check(in[0].shape.size() == 2, "input must be 2-D, got ", shape_str(in[0].shape));
        out[0] = TensorDesc(in[0].shape, dtype_ < 0 ? in[0].dtype : static_cast<DType>(dtype_));
    }
    void forward(const std::vector<Tensor>&, std::vector<Tensor>& out, const ExecContext&) const override
    {
        out[0].fill_zero();
        const int64_t rows = out[0].shape()[0], cols = out[0].shape()[1];
        visit_dtype(out[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T one = convert_value<T>(1.0);
            T* o = out[0].data<T>();
            for (int64_t i = 0; i < rows; ++i) {
                const int64_t j = i + k_;
                if (j >= 0 && j < cols) o[i * cols + j] = one;
            }
        });
    }

private:
    int dtype_ = -1;
    int64_t k_ = 0;
};

} // namespace

std::unique_ptr<Op> make_eye_like() { return std::make_unique<EyeLike>(); }

} // namespace kestrel
