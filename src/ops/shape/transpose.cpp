// Transpose (ONNX): permutes the axes of a tensor of any rank and dtype.
// Param 0=perm (int array; default: reversed axes). out.shape[k] = in.shape[perm[k]].
#include <algorithm>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Transpose : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        perm_ = pd.get_ints(0);
        has_perm_ = pd.has(0);
        std::vector<int> sorted = perm_;
        std::sort(sorted.begin(), sorted.end());
        for (size_t i = 0; i < sorted.size(); ++i)
            check(sorted[i] == static_cast<int>(i), "perm (param 0) is not a permutation of 0..", perm_.size() - 1);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        const std::vector<int> p = perm(in[0].shape.size());
        Shape s(p.size());
        for (size_t k = 0; k < p.size(); ++k) s[k] = in[0].shape[static_cast<size_t>(p[k])];
        out[0] = TensorDesc(s, in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        nd::permuted_copy(in[0], in[0].shape(), perm(static_cast<size_t>(in[0].rank())), out[0], ctx);
    }

private:
    std::vector<int> perm(size_t rank) const
    {
        if (!has_perm_) {
            std::vector<int> p(rank);
            for (size_t k = 0; k < rank; ++k) p[k] = static_cast<int>(rank - 1 - k);
            return p;
        }
        check(perm_.size() == rank, "perm (param 0) has ", perm_.size(), " axes but the input has rank ", rank);
        return perm_;
    }
    std::vector<int> perm_;
    bool has_perm_ = false;
};

} // namespace

std::unique_ptr<Op> make_nd_transpose() { return std::make_unique<Transpose>(); }

} // namespace kestrel
