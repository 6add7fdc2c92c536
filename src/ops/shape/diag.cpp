// Diag (ncnn, torch.diag): 0=diagonal k (0 the main one, > 0 above, < 0
// below). A vector (n) becomes the (n+|k|, n+|k|) matrix with it on diagonal
// k and zeros elsewhere; a matrix (h, w) gives its diagonal k as a vector
// (empty when k lies outside). Any dtype.
#include <algorithm>
#include <cstring>

#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Diag : public Op {
public:
    void load_param(const ParamDict& pd) override { k_ = pd.get_int(0, 0); }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        const Shape& s = in[0].shape;
        check(s.size() == 1 || s.size() == 2, "input must be a vector or a matrix, got ", shape_str(s));
        const int64_t side = s.size() == 1 ? s[0] + std::abs(static_cast<int64_t>(k_)) : 0;
        out[0] = TensorDesc(s.size() == 1 ? Shape{side, side} : Shape{diagonal_length(s)}, in[0].dtype);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const size_t esize = dtype_size(in[0].dtype());
        const int64_t row_start = std::max<int64_t>(-k_, 0), col_start = std::max<int64_t>(k_, 0);
        const uint8_t* x = static_cast<const uint8_t*>(in[0].raw());
        uint8_t* y = static_cast<uint8_t*>(out[0].raw());
        if (in[0].rank() == 1) {
            std::memset(y, 0, out[0].nbytes());
            const int64_t side = out[0].dim(1);
            for (int64_t i = 0; i < in[0].dim(0); ++i)
                std::memcpy(y + ((i + row_start) * side + i + col_start) * esize, x + i * esize, esize);
            return;
        }
        const int64_t w = in[0].dim(1);
        for (int64_t i = 0; i < out[0].dim(0); ++i)
            std::memcpy(y + i * esize, x + ((i + row_start) * w + i + col_start) * esize, esize);
    }

private:
    // Elements on diagonal k of an (h, w) matrix.
    int64_t diagonal_length(const Shape& s) const
    {
        const int64_t h = s[0], w = s[1], k = k_;
        return std::max<int64_t>(0, std::min(h, w - k) - std::max<int64_t>(0, -k));
    }

    int64_t k_ = 0;
};

} // namespace

std::unique_ptr<Op> make_diag() { return std::make_unique<Diag>(); }

} // namespace kestrel
