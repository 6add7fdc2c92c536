// Scatters: a copy of input 0 data (any dtype) with the values of input 2
// updates written, or combined per a reduction (0 none, 1 add, 2 mul, 3 max,
// 4 min), at places input 1 indices (integers) names, in order (with none,
// the last duplicate wins). Both ops reduce to blocks of data (their first
// element's offset) taking one block of updates each, applied by one loop.
//   ScatterElements (ONNX; also opset 9-10 Scatter): 0=axis (default 0),
//       1=reduction. Indices and updates share a shape of data's rank, each
//       dim no larger than data's; the element at an update's own position
//       with the index along the axis takes it (blocks of one).
//   ScatterND (ONNX): 0=reduction. Each index tuple of indices (shape [..., k],
//       k <= r) selects the slice data[i1..ik, :], which updates (shape
//       indices.shape[:-1] + data.shape[k:]) replaces or combines into.
#include <cstring>

#include "core/dtype_dispatch.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

// out = data, then block t (block elements from offsets[t]) combined with
// updates[t * block ...] in order.
void scatter_blocks(const Tensor& data, const std::vector<int64_t>& offsets, int64_t block, const Tensor& updates,
                    int reduction, Tensor& out)
{
    if (out.raw() != data.raw()) std::memcpy(out.raw(), data.raw(), data.nbytes());
    visit_dtype(data.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* upd = updates.data<T>();
        T* o = out.data<T>();
        for (size_t t = 0; t < offsets.size(); ++t)
            for (int64_t e = 0; e < block; ++e)
                o[offsets[t] + e] = nd::combine(o[offsets[t] + e], upd[static_cast<int64_t>(t) * block + e], reduction);
    });
}

enum class Addressing { Elements, Tuples };

class Scatter : public Op {
public:
    explicit Scatter(Addressing addressing) : addressing_(addressing) {}

    void load_param(const ParamDict& pd) override
    {
        if (addressing_ == Addressing::Elements) {
            axis_ = pd.get_int(0, 0);
            reduction_ = nd::read_scatter_reduction(pd, 1);
        } else {
            reduction_ = nd::read_scatter_reduction(pd, 0);
        }
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 3, 3);
        expect_output_count(out, 1);
        nd::check_scatter_dtypes(in[0], in[1], in[2]);
        check_shapes(in[0].shape, in[1].shape, in[2].shape);
        out[0] = TensorDesc(in[0].shape, in[0].dtype);
    }

    bool supports_inplace() const override { return true; }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape& d = in[0].shape();
        const Shape& is = in[1].shape();
        const int axis = check_shapes(d, is, in[2].shape());
        const std::vector<int64_t> idx = nd::int_values(in[1], "indices (input 1)");
        if (addressing_ == Addressing::Elements) {
            scatter_blocks(in[0], nd::element_offsets(d, is, axis, idx), 1, in[2], reduction_, out[0]);
            return;
        }
        const size_t k = static_cast<size_t>(is.back());
        const Shape ds = nd::dense_strides(d);
        std::vector<int64_t> offsets(static_cast<size_t>(nd::dims_product(is, 0, is.size() - 1)));
        for (size_t t = 0; t < offsets.size(); ++t) offsets[t] = nd::tuple_offset(idx.data() + t * k, k, d, ds, 0);
        scatter_blocks(in[0], offsets, nd::dims_product(d, k, d.size()), in[2], reduction_, out[0]);
    }

private:
    // Checks the shapes; returns the normalized axis (ScatterElements) or 0.
    int check_shapes(const Shape& d, const Shape& is, const Shape& us) const
    {
        if (addressing_ == Addressing::Elements) {
            check(is == us, "indices ", shape_str(is), " and updates ", shape_str(us), " must have the same shape");
            return nd::check_element_indices(d, is, axis_);
        }
        check(!d.empty() && !is.empty(), "data ", shape_str(d), " and indices ", shape_str(is), " must have rank >= 1");
        const int64_t k = is.back();
        check(k >= 1 && static_cast<size_t>(k) <= d.size(), "indices' last dim ", k, " must be 1..", d.size());
        Shape want(is.begin(), is.end() - 1);
        want.insert(want.end(), d.begin() + k, d.end());
        check(us == want, "updates ", shape_str(us), " must have shape ", shape_str(want), " for data ", shape_str(d),
              " and indices ", shape_str(is));
        return 0;
    }

    Addressing addressing_;
    int axis_ = 0;
    int reduction_ = 0;
};

} // namespace

std::unique_ptr<Op> make_scatter_elements() { return std::make_unique<Scatter>(Addressing::Elements); }
std::unique_ptr<Op> make_scatter_nd() { return std::make_unique<Scatter>(Addressing::Tuples); }

} // namespace kestrel
