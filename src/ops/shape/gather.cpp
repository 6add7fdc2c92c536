// Gathers: copies of blocks of input 0 data (any dtype) that input 1 indices
// (integers; negative count from the end) name, output block t from data's
// block at offsets[t], by one copy loop (threads for large outputs).
//   Gather (ONNX): slices along 0=axis (default 0) at indices of any rank.
//       Output shape: data[:axis] + indices.shape + data[axis+1:].
//   GatherElements (ONNX): out[i0..ik..] = data[i0..indices[i0..ik..]..] along
//       0=axis (default 0); indices have data's rank, each dim no larger than
//       data's (except along the axis); the output has indices' shape.
//   GatherND (ONNX): indices of rank q, last dim m <= r - b, 0=batch_dims b
//       (default 0): each index tuple picks the slice data[batch.., i1..im, :].
//       Output shape: indices.shape[:-1] + data.shape[b+m:].
#include <cstring>

#include "ops/common/element_moves.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

// Output block t (block_elems elements) = data's block at element offsets[t].
void gather_blocks(const Tensor& data, const std::vector<int64_t>& offsets, int64_t block_elems, Tensor& out,
                   const ExecContext& ctx)
{
    const size_t block = static_cast<size_t>(block_elems) * dtype_size(data.dtype());
    const int64_t n = static_cast<int64_t>(offsets.size());
    if (block == 0 || n == 0) return;
    const uint8_t* src = static_cast<const uint8_t*>(data.raw());
    uint8_t* dst = static_cast<uint8_t*>(out.raw());
    auto body = [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t)
            std::memcpy(dst + static_cast<size_t>(t) * block, src + static_cast<size_t>(offsets[static_cast<size_t>(t)]) *
                                                                       dtype_size(data.dtype()),
                        block);
    };
    if (n * static_cast<int64_t>(block) >= 65536)
        ctx.parallel_for(n, body);
    else
        body(0, n);
}

enum class Addressing { Slices, Elements, Tuples };

class Gather : public Op, public MovesElements {
public:
    explicit Gather(Addressing addressing) : addressing_(addressing) {}

    void load_param(const ParamDict& pd) override
    {
        param_ = pd.get_int(0, 0); // the axis, or GatherND's batch_dims
        if (addressing_ == Addressing::Tuples) check(param_ >= 0, "batch_dims (param 0) must be >= 0, got ", param_);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        check(nd::is_integer_dtype(in[1].dtype), "indices (input 1) must be integers, got ", dtype_name(in[1].dtype));
        out[0] = TensorDesc(out_shape(in[0].shape, in[1].shape), in[0].dtype);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& d = in[0].shape();
        const Shape& is = in[1].shape();
        out_shape(d, is); // checks
        std::vector<int64_t> offsets;
        int64_t block = 1;
        blocks(d, is, nd::int_values(in[1], "indices (input 1)"), offsets, block);
        gather_blocks(in[0], offsets, block, out[0], ctx);
    }

    // With indices known while planning: one copy per block (at most kMaxCopies).
    bool element_moves(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                       ElementMoves& moves) const override
    {
        if (!in[1].value.defined()) return false;
        std::vector<int64_t> offsets;
        int64_t block = 1;
        blocks(in[0].shape, in[1].shape, nd::int_values(in[1].value, "indices (input 1)"), offsets, block);
        if (offsets.size() > kMaxCopies) return false;
        for (size_t t = 0; t < offsets.size(); ++t)
            moves.copies.push_back(dense_copy(0, 0, {block}, offsets[t], static_cast<int64_t>(t) * block));
        return true;
    }

private:
    static constexpr size_t kMaxCopies = 4096;

    // Output block t (`block` elements) is data's block at element offsets[t].
    void blocks(const Shape& d, const Shape& is, const std::vector<int64_t>& idx, std::vector<int64_t>& offsets,
                int64_t& block) const
    {
        switch (addressing_) {
        case Addressing::Slices: {
            const size_t a = static_cast<size_t>(nd::normalize_axis(param_, static_cast<int64_t>(d.size()), "axis (param 0)"));
            const int64_t outer = nd::dims_product(d, 0, a), dim = d[a];
            block = nd::dims_product(d, a + 1, d.size());
            for (int64_t o = 0; o < outer; ++o)
                for (int64_t i : idx) offsets.push_back((o * dim + nd::resolve_index(i, dim, a)) * block);
            break;
        }
        case Addressing::Elements:
            offsets = nd::element_offsets(d, is, nd::check_element_indices(d, is, param_), idx);
            break;
        case Addressing::Tuples: {
            const size_t b = static_cast<size_t>(param_), m = static_cast<size_t>(is.back());
            const int64_t tuples = nd::dims_product(is, b, is.size() - 1); // per batch
            const int64_t batch_elems = nd::dims_product(d, b, d.size());
            const Shape ds = nd::dense_strides(d);
            block = nd::dims_product(d, b + m, d.size());
            for (int64_t bi = 0; bi < nd::dims_product(d, 0, b); ++bi)
                for (int64_t t = 0; t < tuples; ++t)
                    offsets.push_back(bi * batch_elems +
                                      nd::tuple_offset(idx.data() + (bi * tuples + t) * static_cast<int64_t>(m), m, d, ds, b));
            break;
        }
        }
    }

    Shape out_shape(const Shape& d, const Shape& is) const
    {
        switch (addressing_) {
        case Addressing::Slices: {
            check(!d.empty(), "data (input 0) must have rank >= 1");
            const int a = nd::normalize_axis(param_, static_cast<int64_t>(d.size()), "axis (param 0)");
            Shape s(d.begin(), d.begin() + a);
            s.insert(s.end(), is.begin(), is.end());
            s.insert(s.end(), d.begin() + a + 1, d.end());
            return s;
        }
        case Addressing::Elements: nd::check_element_indices(d, is, param_); return is;
        case Addressing::Tuples: break;
        }
        const size_t b = static_cast<size_t>(param_);
        check(!d.empty() && !is.empty(), "data ", shape_str(d), " and indices ", shape_str(is), " must have rank >= 1");
        check(b < is.size() && b < d.size(), "batch_dims (param 0) ", b, " must be less than both ranks (data ",
              shape_str(d), ", indices ", shape_str(is), ")");
        for (size_t k = 0; k < b; ++k)
            check(d[k] == is[k], "batch dim ", k, " differs: data ", shape_str(d), ", indices ", shape_str(is));
        const int64_t m = is.back();
        check(m >= 1 && static_cast<size_t>(m) <= d.size() - b, "indices' last dim ", m, " must be 1..",
              d.size() - b, " for data ", shape_str(d), " with batch_dims ", b);
        Shape s(is.begin(), is.end() - 1);
        s.insert(s.end(), d.begin() + static_cast<int64_t>(b) + m, d.end());
        return s;
    }

    Addressing addressing_;
    int param_ = 0;
};

} // namespace

std::unique_ptr<Op> make_gather() { return std::make_unique<Gather>(Addressing::Slices); }
std::unique_ptr<Op> make_gather_elements() { return std::make_unique<Gather>(Addressing::Elements); }
std::unique_ptr<Op> make_gather_nd() { return std::make_unique<Gather>(Addressing::Tuples); }

} // namespace kestrel
