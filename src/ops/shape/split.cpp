// Slice (ncnn): splits one input into N outputs along param 1=axis (default 0,
// outermost first over the ncnn rank, negative from the end).
//   0=slices   sizes per output; -233 = (what remains) / (outputs remaining)
//   2=indices  end positions of outputs 0..N-2 (negative from the end); the last
//              output takes the rest. Used instead of slices when present.
// Entries beyond the number of outputs are ignored, as in ncnn; a piece of size
// <= 0 or one running past the end is an error (ncnn fails or reads garbage).
// Any dtype: the kernel copies bytes.
#include <cstring>

#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

constexpr int kRemainder = -233;

class Slice : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        slices_ = pd.get_ints(0);
        axis_ = pd.get_int(1, 0);
        indices_ = pd.get_ints(2);
        check(!slices_.empty() || !indices_.empty(), "needs param 0 (slices) or param 2 (indices)");
        if (indices_.empty())
            for (int s : slices_)
                check(s > 0 || s == kRemainder, "slices (param 0) must be > 0 or -233, got ", s);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        check(!out.empty(), "expects at least 1 output");
        const Shape& s = in[0].shape;
        const int axis = positive_axis(ncnn_dims(s).dims);
        const std::vector<int64_t> sizes = piece_sizes(s[axis], out.size());
        for (size_t i = 0; i < out.size(); ++i) {
            out[i] = TensorDesc{};
            out[i].shape = s;
            out[i].shape[axis] = sizes[i];
            out[i].dtype = in[0].dtype;
        }
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& s = in[0].shape();
        const int axis = positive_axis(static_cast<int>(s.size()));
        const size_t esize = dtype_size(in[0].dtype());
        int64_t outer = 1, inner = 1;
        for (int k = 0; k < axis; ++k) outer *= s[k];
        for (size_t k = axis + 1; k < s.size(); ++k) inner *= s[k];
        const size_t in_chunk = static_cast<size_t>(s[axis] * inner) * esize;
        std::vector<size_t> chunk(out.size()), start(out.size());
        size_t at = 0;
        for (size_t i = 0; i < out.size(); ++i) {
            chunk[i] = static_cast<size_t>(out[i].shape()[axis] * inner) * esize;
            start[i] = at;
            at += chunk[i];
        }
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o)
                for (size_t i = 0; i < out.size(); ++i)
                    std::memcpy(static_cast<uint8_t*>(out[i].raw()) + static_cast<size_t>(o) * chunk[i],
                                src + static_cast<size_t>(o) * in_chunk + start[i], chunk[i]);
        });
    }

private:
    int positive_axis(int rank) const
    {
        const int a = axis_ < 0 ? axis_ + rank : axis_;
        check(a >= 0 && a < rank, "axis (param 1) ", axis_, " is out of range for a rank ", rank, " input");
        return a;
    }

    // Sizes of the n pieces of an axis of length `size`, by ncnn's rules.
    std::vector<int64_t> piece_sizes(int64_t size, size_t n) const
    {
        std::vector<int64_t> sizes(n);
        int64_t q = 0;
        if (!indices_.empty()) {
            check(indices_.size() >= n - 1, "indices (param 2) has ", indices_.size(), " entries, ", n,
                  " outputs need ", n - 1);
        } else {
            check(slices_.size() >= n, "slices (param 0) has ", slices_.size(), " entries for ", n, " outputs");
        }
        for (size_t i = 0; i < n; ++i) {
            int64_t piece;
            if (!indices_.empty()) {
                if (i == n - 1) {
                    piece = size - q;
                } else {
                    const int64_t end = indices_[i] < 0 ? size + indices_[i] : indices_[i];
                    check(end <= size, "index ", indices_[i], " (param 2) is past the end of an axis of size ", size);
                    piece = end - q;
                }
            } else {
                piece = slices_[i] == kRemainder ? (size - q) / static_cast<int64_t>(n - i) : slices_[i];
            }
            check(piece > 0, "output ", i, " would be empty or negative (", piece, ") slicing an axis of size ", size);
            check(q + piece <= size, "slices run past the end of an axis of size ", size, " at output ", i);
            sizes[i] = piece;
            q += piece;
        }
        return sizes;
    }

    std::vector<int> slices_, indices_;
    int axis_ = 0;
};

} // namespace

std::unique_ptr<Op> make_slice() { return std::make_unique<Slice>(); }

} // namespace kestrel
