// MaxUnpool (ONNX): inputs X (N, C, spatial...), I (int64 flat positions in
// the output, as MaxPool's Indices) and optionally output_shape (the full
// output shape, known while planning or, with 20=dynamic=1, at run time).
// Params 0=kernel_shape, 1=strides, 2=pads (all begins, then all ends).
// Default output size per axis: (in-1)*stride + kernel - pads. Positions no
// index names are 0.
#include <cstring>

#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"
#include "ops/pool/onnx_window.h"

namespace kestrel {

namespace {

class MaxUnpool : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        window_.load(pd, 0, false);
        dynamic_ = pd.get_int(20, 0) != 0;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 3);
        expect_output_count(out, 1);
        window_.expect_input(in[0].shape);
        check(in[1].dtype == DType::I64, "indices (input 1) must be int64, got ", dtype_name(in[1].dtype));
        check(in[1].shape == in[0].shape, "indices (input 1) ", shape_str(in[1].shape), " must have the shape of X ",
              shape_str(in[0].shape));
        check(dtype_is_float(in[0].dtype), "X (input 0) must be a float type, got ", dtype_name(in[0].dtype));
        if (in.size() == 3 && !in[2].value.defined() && dynamic_) {
            out[0] = TensorDesc(in[0].shape, in[0].dtype); // placeholder until run time
            return;
        }
        out[0] = TensorDesc(in.size() == 3 ? given_shape(nd::known_value(in[2], "output_shape (input 2)"), in[0].shape)
                                           : default_shape(in[0].shape),
                            in[0].dtype);
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 2); }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape natural = default_shape(in[0].shape());
        const Shape s = in.size() == 3 ? given_shape(in[2], in[0].shape()) : natural;
        if (out[0].shape() != s) out[0] = Tensor(s, in[0].dtype());
        const size_t esize = dtype_size(in[0].dtype());
        auto* dst = static_cast<uint8_t*>(out[0].raw());
        const auto* src = static_cast<const uint8_t*>(in[0].raw());
        std::memset(dst, 0, out[0].nbytes());
        const int64_t* idx = in[1].data<int64_t>();
        for (int64_t i = 0; i < in[0].numel(); ++i)
            std::memcpy(dst + place(idx[i], natural, s) * esize, src + i * esize, esize);
    }

private:
    // Indices count positions of the default output shape (MaxPool's input);
    // a given output_shape keeps each position's coordinates (as onnxruntime).
    static int64_t place(int64_t index, const Shape& natural, const Shape& given)
    {
        const int64_t total = shape_numel(natural);
        check(index >= 0 && index < total, "index ", index, " is outside the ", total, " positions of ",
              shape_str(natural));
        std::vector<int64_t> coord(natural.size());
        for (size_t a = natural.size(); a-- > 0;) {
            coord[a] = index % natural[a];
            index /= natural[a];
        }
        int64_t at = 0;
        for (size_t a = 0; a < given.size(); ++a) {
            check(coord[a] < given[a], "index position ", coord[a], " along axis ", a, " is outside output_shape ",
                  shape_str(given));
            at = at * given[a] + coord[a];
        }
        return at;
    }

    Shape default_shape(const Shape& s) const
    {
        Shape o = {s[0], s[1]};
        for (size_t a = 0; a < window_.kernel.size(); ++a) {
            const int64_t v = (s[a + 2] - 1) * window_.stride[a] + window_.kernel[a] - window_.pads[a].begin -
                              window_.pads[a].end;
            check(v > 0, "the output size along spatial axis ", a, " is ", v);
            o.push_back(v);
        }
        return o;
    }

    Shape given_shape(const Tensor& value, const Shape& s) const
    {
        const Shape o = nd::int_values(value, "output_shape (input 2)");
        check(o.size() == s.size() && o[0] == s[0] && o[1] == s[1], "output_shape (input 2) ", shape_str(o),
              " must be (N, C, spatial...) of X ", shape_str(s));
        for (int64_t d : o) check(d > 0, "output_shape (input 2) ", shape_str(o), " must be positive");
        return o;
    }

    OnnxWindow window_;
    bool dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_max_unpool() { return std::make_unique<MaxUnpool>(); }

} // namespace kestrel
