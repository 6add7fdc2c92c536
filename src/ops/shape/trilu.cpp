// Trilu (ONNX): keeps the upper (0=upper=1, default) or lower (0) triangle of
// each matrix in the last two dims of input 0 (rank >= 2, any dtype) and zeroes
// the rest. Input 1 (optional) k: the diagonal offset (one integer, default 0):
// upper keeps j - i >= k, lower keeps j - i <= k.
#include <algorithm>
#include <cstring>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Trilu : public Op {
public:
    void load_param(const ParamDict& pd) override { upper_ = pd.get_int(0, 1) != 0; }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 2);
        expect_output_count(out, 1);
        check(in[0].shape.size() >= 2, "input must have rank >= 2, got ", shape_str(in[0].shape));
        if (in.size() == 2) check(shape_numel(in[1].shape) == 1, "k (input 1) must hold one value, got shape ",
                                  shape_str(in[1].shape));
        out[0] = TensorDesc(in[0].shape, in[0].dtype);
    }
    bool supports_inplace() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const int64_t k = in.size() == 2 && in[1].defined() ? nd::int_scalar(in[1], "k (input 1)") : 0;
        const Shape& d = in[0].shape();
        const int64_t rows = d[d.size() - 2], cols = d[d.size() - 1];
        const int64_t mats = rows * cols == 0 ? 0 : in[0].numel() / (rows * cols);
        const size_t es = dtype_size(in[0].dtype());
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        uint8_t* dst = static_cast<uint8_t*>(out[0].raw());
        if (dst != src) std::memcpy(dst, src, in[0].nbytes());
        for (int64_t m = 0; m < mats; ++m) {
            for (int64_t i = 0; i < rows; ++i) {
                uint8_t* row = dst + static_cast<size_t>((m * rows + i) * cols) * es;
                // Zero the columns outside the kept triangle: upper keeps j >= i + k, lower keeps j <= i + k.
                const int64_t edge = std::clamp<int64_t>(upper_ ? i + k : i + k + 1, 0, cols);
                if (upper_)
                    std::memset(row, 0, static_cast<size_t>(edge) * es);
                else
                    std::memset(row + static_cast<size_t>(edge) * es, 0, static_cast<size_t>(cols - edge) * es);
            }
        }
    }

private:
    bool upper_ = true;
};

} // namespace

std::unique_ptr<Op> make_trilu() { return std::make_unique<Trilu>(); }

} // namespace kestrel
