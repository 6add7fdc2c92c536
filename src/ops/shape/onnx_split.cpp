// SplitND (ONNX Split): cuts input 0 (any rank and dtype) along 0=axis
// (default 0) into as many outputs as the layer has tops. Input 1 (optional)
// gives the sizes (1-D integers summing to the axis size); without it the
// chunks are ceil(dim / outputs) long with a shorter last one (opset 18; equal
// when the dim divides). Param 20=dynamic (see nd_common.cpp). Outputs are copies.
#include <algorithm>
#include <cstring>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class SplitND : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axis_ = pd.get_int(0, 0);
        dynamic_ = pd.get_int(20, 0) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 2);
        check(!out.empty(), "needs at least one output");
        const Shape& d = in[0].shape;
        const int a = nd::normalize_axis(axis_, static_cast<int64_t>(d.size()), "axis (param 0)");
        std::vector<int64_t> sizes;
        if (in.size() == 2 && !in[1].value.defined() && dynamic_) {
            // Placeholder: equal chunks; forward() gives the real sizes.
            sizes = even_sizes(d[static_cast<size_t>(a)], out.size());
        } else {
            sizes = split_sizes(d, a, in.size() == 2 ? &nd::known_value(in[1], "split (input 1)") : nullptr, out.size());
        }
        for (size_t i = 0; i < out.size(); ++i) {
            Shape s = d;
            s[static_cast<size_t>(a)] = sizes[i];
            out[i] = TensorDesc(s, in[0].dtype);
        }
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape& d = in[0].shape();
        const int a = nd::normalize_axis(axis_, in[0].rank(), "axis (param 0)");
        const std::vector<int64_t> sizes = split_sizes(d, a, in.size() == 2 ? &in[1] : nullptr, out.size());
        const int64_t outer = nd::dims_product(d, 0, static_cast<size_t>(a));
        const size_t row = static_cast<size_t>(nd::dims_product(d, static_cast<size_t>(a) + 1, d.size())) *
                           dtype_size(in[0].dtype());
        const size_t in_chunk = static_cast<size_t>(d[static_cast<size_t>(a)]) * row;
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        size_t start = 0;
        for (size_t i = 0; i < out.size(); ++i) {
            Shape s = d;
            s[static_cast<size_t>(a)] = sizes[i];
            if (out[i].shape() != s) out[i] = Tensor(s, in[0].dtype());
            const size_t chunk = static_cast<size_t>(sizes[i]) * row;
            uint8_t* dst = static_cast<uint8_t*>(out[i].raw());
            if (chunk)
                for (int64_t o = 0; o < outer; ++o)
                    std::memcpy(dst + static_cast<size_t>(o) * chunk, src + static_cast<size_t>(o) * in_chunk + start,
                                chunk);
            start += chunk;
        }
    }

private:
    static std::vector<int64_t> even_sizes(int64_t dim, size_t n)
    {
        const int64_t chunk = (dim + static_cast<int64_t>(n) - 1) / static_cast<int64_t>(n);
        std::vector<int64_t> sizes;
        int64_t left = dim;
        for (size_t i = 0; i < n; ++i) {
            sizes.push_back(std::min(chunk, left));
            left -= sizes.back();
        }
        return sizes;
    }
    static std::vector<int64_t> split_sizes(const Shape& d, int a, const Tensor* split, size_t n)
    {
        const int64_t dim = d[static_cast<size_t>(a)];
        if (split == nullptr || split->numel() == 0) return even_sizes(dim, n);
        std::vector<int64_t> sizes = nd::int_values(*split, "split (input 1)");
        check(sizes.size() == n, "split (input 1) has ", sizes.size(), " sizes for ", n, " outputs");
        int64_t total = 0;
        for (int64_t s : sizes) {
            check(s >= 0, "split sizes must be >= 0, got ", shape_str(sizes));
            total += s;
        }
        check(total == dim, "split sizes ", shape_str(sizes), " sum to ", total, " but axis ", a, " of ", shape_str(d),
              " has size ", dim);
        return sizes;
    }
    int axis_ = 0;
    bool dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_nd_split() { return std::make_unique<SplitND>(); }

} // namespace kestrel
