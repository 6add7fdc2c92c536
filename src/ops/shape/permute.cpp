// Permute: reorders the axes of a tensor of any dtype; out.shape[k] =
// in.shape[perm[k]], both outermost first. The permutation comes as
//   0=order_type  ncnn's form, ranks 2-4: ncnn names each order by the input
//                 axis landing at output w,h,[d],c (the spec's table: 2-D 0-1,
//                 3-D 0-5, 4-D 0-23). Read outermost first in our (c,[d],h,w)
//                 order, order type k is exactly the k-th permutation of the
//                 axes in lexicographic order. A 1-D input passes through.
//   1=perm        any rank (ONNX's Transpose): the permutation itself.
//   2=1           any rank: the axes reversed (ONNX's Transpose without perm).
// One strided copy (common/tensor_util.h) moves the elements as bytes.
#include <algorithm>
#include <numeric>

#include "ops/common/element_moves.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

int order_count(int rank) { return rank == 2 ? 2 : rank == 3 ? 6 : 24; }

class Permute : public Op, public MovesElements {
public:
    void load_param(const ParamDict& pd) override
    {
        order_type_ = pd.get_int(0, 0);
        check(order_type_ >= 0 && order_type_ < 24, "order_type (param 0) must be 0..23, got ", order_type_);
        perm_ = pd.get_ints(1);
        has_perm_ = pd.has(1);
        reversed_ = pd.get_int(2, 0) != 0;
        std::vector<int> sorted = perm_;
        std::sort(sorted.begin(), sorted.end());
        for (size_t i = 0; i < sorted.size(); ++i)
            check(sorted[i] == static_cast<int>(i), "perm (param 1) is not a permutation of 0..", perm_.size() - 1);
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

    // ncnn's order 0 keeps every axis in place for every rank.
    bool outputs_alias_input() const override { return !has_perm_ && !reversed_ && order_type_ == 0; }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        nd::permuted_copy(in[0], in[0].shape(), perm(static_cast<size_t>(in[0].rank())), out[0], ctx);
    }

    // One copy reading the input's axes in the output's order.
    bool element_moves(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                       ElementMoves& moves) const override
    {
        const std::vector<int> p = perm(in[0].shape.size());
        const std::vector<int64_t> dense = nd::dense_strides(in[0].shape);
        StridedCopy c = dense_copy(0, 0, out[0].shape);
        for (size_t k = 0; k < p.size(); ++k) c.in_strides[k] = dense[static_cast<size_t>(p[k])];
        moves.copies.push_back(std::move(c));
        return true;
    }

private:
    // out axis k = input axis perm[k].
    std::vector<int> perm(size_t rank) const
    {
        if (has_perm_) {
            check(perm_.size() == rank, "perm (param 1) has ", perm_.size(), " axes but the input has rank ", rank);
            return perm_;
        }
        std::vector<int> p(rank);
        std::iota(p.begin(), p.end(), 0);
        if (reversed_) {
            std::reverse(p.begin(), p.end());
            return p;
        }
        check(rank >= 1 && rank <= 4, "order_type (param 0) permutes ranks 1-4, got rank ", rank);
        if (rank == 1) return p;
        check(order_type_ < order_count(static_cast<int>(rank)), "order_type ", order_type_,
              " does not exist for a rank ", rank, " input (0..", order_count(static_cast<int>(rank)) - 1, ")");
        for (int i = 0; i < order_type_; ++i) std::next_permutation(p.begin(), p.end());
        return p;
    }

    int order_type_ = 0;
    std::vector<int> perm_;
    bool has_perm_ = false, reversed_ = false;
};

} // namespace

std::unique_ptr<Op> make_permute() { return std::make_unique<Permute>(); }

} // namespace kestrel
