// Copies of whole tensors (any dtype):
//   CopyTo    (ncnn) input 0 with input 1 (same rank, fitting) written over it
//             at an offset: 0=woffset 1=hoffset 13=doffset 2=coffset, or
//             numpy style 9=starts with 11=axes (outermost first, negative
//             from the end, -233 = 0). As ncnn, an input 1 of input 0's shape
//             is the output as it is.
//   DeepCopy  (ncnn) the input, copied into a buffer of its own (so that a
//             layer working in place downstream cannot change the original).
#include <cstring>

#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

class CopyTo : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        woffset_ = pd.get_int(0, 0), hoffset_ = pd.get_int(1, 0), doffset_ = pd.get_int(13, 0), coffset_ = pd.get_int(2, 0);
        starts_ = pd.get_ints(9);
        axes_ = pd.get_ints(11);
        check(axes_.empty() || axes_.size() == starts_.size(), "axes (param 11) must have one entry per start (param 9)");
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        const Shape& self = in[0].shape;
        const Shape& src = in[1].shape;
        ncnn_dims(self);
        check(in[1].dtype == in[0].dtype, "input 1 is ", dtype_name(in[1].dtype), ", input 0 ", dtype_name(in[0].dtype));
        check(src.size() == self.size(), "input 1 ", shape_str(src), " must have the rank of input 0 ", shape_str(self));
        const Shape at = offsets(self);
        for (size_t k = 0; k < self.size(); ++k)
            check(at[k] >= 0 && at[k] + src[k] <= self[k], "input 1 ", shape_str(src), " at offset ", shape_str(at),
                  " does not fit in input 0 ", shape_str(self));
        out[0] = in[0];
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& self = in[0].shape();
        const size_t esize = dtype_size(in[0].dtype());
        if (in[1].shape() == self) {
            std::memcpy(out[0].raw(), in[1].raw(), in[1].nbytes());
            return;
        }
        std::memcpy(out[0].raw(), in[0].raw(), in[0].nbytes());
        // Written through the output's strides: walk input 1 densely, scatter into y.
        const Shape at = offsets(self);
        const Shape y_strides = nd::dense_strides(self);
        int64_t start = 0;
        for (size_t k = 0; k < self.size(); ++k) start += at[k] * y_strides[k];
        const Shape& src = in[1].shape();
        // Row by row of input 1 (its innermost axis), each to where it lands in y.
        uint8_t* y = static_cast<uint8_t*>(out[0].raw());
        const uint8_t* s = static_cast<const uint8_t*>(in[1].raw());
        const int64_t rows = src.empty() ? 1 : shape_numel(src) / src.back();
        const int64_t row = src.empty() ? 1 : src.back();
        ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                int64_t rest = r, dst = start;
                for (size_t k = src.size() - 1; k-- > 0;) {
                    dst += rest % src[k] * y_strides[k];
                    rest /= src[k];
                }
                std::memcpy(y + dst * static_cast<int64_t>(esize), s + r * row * static_cast<int64_t>(esize),
                            static_cast<size_t>(row) * esize);
            }
        });
    }

private:
    // Where input 1 goes, per axis of input 0.
    Shape offsets(const Shape& self) const
    {
        const int64_t rank = static_cast<int64_t>(self.size());
        Shape at(self.size(), 0);
        if (starts_.empty()) {
            at[self.size() - 1] = woffset_;
            if (rank >= 2) at[self.size() - 2] = hoffset_;
            if (rank == 4) at[1] = doffset_;
            if (rank >= 3) at[0] = coffset_;
            return at;
        }
        for (size_t i = 0; i < starts_.size(); ++i) {
            const size_t k = static_cast<size_t>(
                axes_.empty() ? static_cast<int>(i) : nd::normalize_axis(axes_[i], rank, "axis (param 11)"));
            check(k < self.size(), "starts (param 9) has more values than input 0 ", shape_str(self), " has axes");
            const int64_t v = starts_[i] == -233 ? 0 : starts_[i];
            at[k] = v >= 0 ? v : self[k] + v;
        }
        return at;
    }

    int woffset_ = 0, hoffset_ = 0, doffset_ = 0, coffset_ = 0;
    std::vector<int> starts_, axes_;
};

class DeepCopy : public Op {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        out[0] = in[0];
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        std::memcpy(out[0].raw(), in[0].raw(), in[0].nbytes());
    }
};

} // namespace

std::unique_ptr<Op> make_copy_to() { return std::make_unique<CopyTo>(); }
std::unique_ptr<Op> make_deep_copy() { return std::make_unique<DeepCopy>(); }

} // namespace kestrel
