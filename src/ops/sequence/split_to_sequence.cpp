// SplitToSequence (ONNX): input 0 split along param 0 (axis, negative from
// the end) into a sequence: input 1 (optional) a scalar piece length (the
// last piece shorter) or the pieces' lengths (summing to the axis); absent,
// pieces of 1, their axis dropped unless param 1 (keepdims, default 1).
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"
#include "ops/sequence/sequence_util.h"

namespace kestrel {

namespace {

class SplitToSequence : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axis_ = pd.get_int(0, 0);
        keepdims_ = pd.get_int(1, 1) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 2);
        expect_output_count(out, 1);
        check(in[0].dtype != DType::Sequence, "input 0 must be a tensor");
        const int a = nd::normalize_axis(axis_, static_cast<int64_t>(in[0].shape.size()), "axis (param 0)");
        if (in.size() > 1 && !in[1].value.defined()) {
            out[0] = sequence::desc_of(0); // a placeholder: the lengths come at run time
            return;
        }
        const Tensor none;
        out[0] = sequence::desc_of(static_cast<int64_t>(lengths(in[0].shape[a], in.size() > 1 ? in[1].value : none).size()));
    }
    bool dynamic_output_shape() const override { return true; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Tensor& x = in[0];
        const int a = nd::normalize_axis(axis_, x.rank(), "axis (param 0)");
        const bool split_given = in.size() > 1;
        Shape dropped = x.shape();
        dropped.erase(dropped.begin() + a);
        std::vector<Tensor> pieces;
        int64_t at = 0;
        for (int64_t length : lengths(x.dim(a), split_given ? in[1] : Tensor())) {
            Tensor piece = nd::axis_range(x, a, at, length);
            pieces.push_back(split_given || keepdims_ ? piece : piece.reshaped(dropped));
            at += length;
        }
        out[0] = Tensor::sequence(pieces);
    }

private:
    // The pieces' lengths along an axis of `dim`, at most kMaxPieces of them.
    static std::vector<int64_t> lengths(int64_t dim, const Tensor& split)
    {
        constexpr int64_t kMaxPieces = int64_t{1} << 20; // each piece is a tensor of its own
        if (!split.defined()) {
            check(dim <= kMaxPieces, "splitting ", dim, " pieces of one exceeds ", kMaxPieces, " pieces");
            return std::vector<int64_t>(static_cast<size_t>(dim), 1);
        }
        const std::vector<int64_t> v = nd::int_values(split, "split (input 1)");
        if (split.rank() == 0) {
            check(v[0] >= 1, "split (input 1) must be >= 1, got ", v[0]);
            check((dim + v[0] - 1) / v[0] <= kMaxPieces, "splitting into ", (dim + v[0] - 1) / v[0], " pieces exceeds ",
                  kMaxPieces);
            std::vector<int64_t> out;
            for (int64_t at = 0; at < dim; at += v[0]) out.push_back(std::min(v[0], dim - at));
            return out;
        }
        check(split.rank() == 1, "split (input 1) must be a scalar or 1-D, got ", shape_str(split.shape()));
        check(static_cast<int64_t>(v.size()) <= kMaxPieces, v.size(), " split lengths exceed ", kMaxPieces, " pieces");
        int64_t total = 0;
        for (int64_t length : v) {
            check(length >= 0, "split lengths must be >= 0, got ", length);
            total += length;
        }
        check(total == dim, "split lengths sum to ", total, ", the axis is ", dim);
        return v;
    }
    int axis_ = 0;
    bool keepdims_ = true;
};

} // namespace

std::unique_ptr<Op> make_split_to_sequence() { return std::make_unique<SplitToSequence>(); }

} // namespace kestrel
