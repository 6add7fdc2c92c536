// Permute (ncnn): param 0=order_type reorders the axes of a rank 2-4 input.
// ncnn names each order by the input axis landing at output w,h,[d],c (see the
// spec's table: 2-D 0-1, 3-D 0-5, 4-D 0-23). Read outermost first in our
// (c,[d],h,w) order, order type k is exactly the k-th permutation of the axes
// in lexicographic order, which is how the kernel derives it. 1-D input passes
// through unchanged whatever the order type. Any dtype: elements are moved as
// bytes.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

int order_count(int rank) { return rank == 2 ? 2 : rank == 3 ? 6 : 24; }

// out axis k = input axis perm[k], both outermost first.
std::vector<int> permutation(int rank, int order_type)
{
    std::vector<int> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    for (int i = 0; i < order_type; ++i) std::next_permutation(perm.begin(), perm.end());
    return perm;
}

// dst[i0..i3] = src at the permuted position; shapes padded to 4 axes.
template <class T>
void permute_rows(const uint8_t* src, uint8_t* dst, const int64_t out_dims[4], const int64_t src_stride[4],
                  int64_t row_begin, int64_t row_end)
{
    const int64_t w = out_dims[3];
    for (int64_t r = row_begin; r < row_end; ++r) {
        const int64_t i2 = r % out_dims[2], i1 = (r / out_dims[2]) % out_dims[1], i0 = r / (out_dims[2] * out_dims[1]);
        const T* s = reinterpret_cast<const T*>(src) + i0 * src_stride[0] + i1 * src_stride[1] + i2 * src_stride[2];
        T* d = reinterpret_cast<T*>(dst) + r * w;
        const int64_t step = src_stride[3];
        for (int64_t x = 0; x < w; ++x) std::memcpy(d + x, s + x * step, sizeof(T));
    }
}

class Permute : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        order_type_ = pd.get_int(0, 0);
        check(order_type_ >= 0 && order_type_ < 24, "order_type (param 0) must be 0..23, got ", order_type_);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        const Shape& s = in[0].shape;
        const int rank = ncnn_dims(s).dims;
        out[0] = TensorDesc{};
        out[0].dtype = in[0].dtype;
        out[0].shape = s;
        if (rank == 1) return;
        check(order_type_ < order_count(rank), "order_type ", order_type_, " does not exist for a rank ", rank,
              " input (0..", order_count(rank) - 1, ")");
        const std::vector<int> perm = permutation(rank, order_type_);
        for (int k = 0; k < rank; ++k) out[0].shape[k] = s[perm[k]];
    }

    // Order 0 keeps every axis in place for every rank.
    bool outputs_alias_input() const override { return order_type_ == 0; }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& s = in[0].shape();
        const int rank = in[0].rank();
        const size_t esize = dtype_size(in[0].dtype());
        if (rank == 1 || order_type_ == 0) {
            if (in[0].nbytes()) std::memcpy(out[0].raw(), in[0].raw(), in[0].nbytes());
            return;
        }
        const std::vector<int> perm = permutation(rank, order_type_);
        // Input strides in elements, then padded to 4 output axes (leading 1s).
        std::vector<int64_t> stride(static_cast<size_t>(rank), 1);
        for (int k = rank - 2; k >= 0; --k) stride[k] = stride[k + 1] * s[k + 1];
        int64_t out_dims[4] = {1, 1, 1, 1}, src_stride[4] = {0, 0, 0, 0};
        for (int k = 0; k < rank; ++k) {
            out_dims[4 - rank + k] = s[perm[k]];
            src_stride[4 - rank + k] = stride[perm[k]];
        }
        const int64_t rows = out_dims[0] * out_dims[1] * out_dims[2];
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        uint8_t* dst = static_cast<uint8_t*>(out[0].raw());
        ctx.parallel_for(rows, [&](int64_t b, int64_t e) {
            switch (esize) {
            case 1: permute_rows<uint8_t>(src, dst, out_dims, src_stride, b, e); break;
            case 2: permute_rows<uint16_t>(src, dst, out_dims, src_stride, b, e); break;
            case 4: permute_rows<uint32_t>(src, dst, out_dims, src_stride, b, e); break;
            case 8: permute_rows<uint64_t>(src, dst, out_dims, src_stride, b, e); break;
            default: fail("unsupported element size ", esize);
            }
        });
    }

private:
    int order_type_ = 0;
};

} // namespace

std::unique_ptr<Op> make_permute() { return std::make_unique<Permute>(); }

} // namespace kestrel
