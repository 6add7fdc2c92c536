// MaxPool, AveragePool and MaxUnpool (ONNX) for any number of spatial axes,
// on the N-d window kernels (window_nd). Input (N, C, spatial...).
//
// MaxPool / AveragePool params: 0=kernel_shape (one per spatial axis),
// 1=strides, 2=pads (all begins, then all ends), 3=dilations, 4=ceil_mode,
// 5=auto_pad (0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID), 6=count_include_pad,
// 7=storage_order (MaxPool Indices: 1 counts the spatial axes column-major).
// MaxPool takes any real-number dtype except float16/bfloat16 and may have a
// second output, Indices (int64): the flat position of each maximum in the
// input, batch and channel included. AveragePool takes float types; the
// divisor counts the window's taps inside the input, or with
// count_include_pad those inside the padded input (not ceil_mode's extra end).
//
// MaxUnpool params 0=kernel_shape, 1=strides, 2=pads; inputs X, I (int64 flat
// positions in the output, as MaxPool's Indices) and optionally output_shape
// (the full output shape, known while planning or, with 20=dynamic=1, at run
// time). Default output size per axis: (in-1)*stride + kernel - pads.
// Positions no index names are 0.
#include <algorithm>
#include <cstring>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"
#include "ops/common/sliding_window.h"

namespace kestrel {

namespace {

using window::Axis;
using window::Span;

enum AutoPad { kNotSet = 0, kSameUpper = 1, kSameLower = 2, kValid = 3 };

// ONNX window attributes, one value per spatial axis.
struct OnnxWindow {
    std::vector<int64_t> kernel, stride, dilation;
    std::vector<Span> pads;

    void load(const ParamDict& pd, bool with_dilation)
    {
        for (int k : pd.get_ints(0)) kernel.push_back(k);
        const size_t rank = kernel.size();
        check(rank > 0, "kernel_shape (param 0) must have at least one value");
        for (int64_t k : kernel) check(k > 0, "kernel_shape (param 0) values must be > 0, got ", k);
        stride = per_axis(pd, 1, "strides");
        dilation = with_dilation ? per_axis(pd, 3, "dilations") : std::vector<int64_t>(rank, 1);
        const std::vector<int> p = pd.get_ints(2);
        check(p.empty() || p.size() == 2 * rank, "pads (param 2) must have ", 2 * rank, " values, got ", p.size());
        pads.assign(rank, Span{});
        for (size_t a = 0; a < p.size() / 2; ++a) {
            pads[a] = Span{p[a], p[a + rank]};
            check(p[a] >= 0 && p[a + rank] >= 0, "pads (param 2) must be >= 0");
        }
    }

    std::vector<int64_t> per_axis(const ParamDict& pd, int id, const char* what) const
    {
        const std::vector<int> v = pd.get_ints(id);
        check(v.empty() || v.size() == kernel.size(), what, " (param ", id, ") must have ", kernel.size(),
              " values, got ", v.size());
        std::vector<int64_t> out(kernel.size(), 1);
        for (size_t a = 0; a < v.size(); ++a) {
            check(v[a] > 0, what, " (param ", id, ") values must be > 0, got ", v[a]);
            out[a] = v[a];
        }
        return out;
    }

    // The (N, C, spatial...) input shape this window expects.
    void expect_input(const Shape& s) const
    {
        check(s.size() == kernel.size() + 2, "expects an (N, C, ", kernel.size(), " spatial dims) input, got ",
              shape_str(s));
        for (size_t a = 2; a < s.size(); ++a) check(s[a] > 0, "expects a non-empty spatial size, got ", shape_str(s));
    }
};

class Pool : public Op {
public:
    explicit Pool(bool max) : max_(max) {}

    void load_param(const ParamDict& pd) override
    {
        window_.load(pd, true);
        ceil_mode_ = pd.get_int(4, 0) != 0;
        auto_pad_ = pd.get_int(5, kNotSet);
        check(auto_pad_ >= kNotSet && auto_pad_ <= kValid, "auto_pad (param 5) must be 0..3, got ", auto_pad_);
        count_include_pad_ = pd.get_int(6, 0) != 0;
        column_major_ = pd.get_int(7, 0) != 0;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        check(out.size() == 1 || (max_ && out.size() == 2), "expects ", max_ ? "1 or 2 outputs" : "1 output", ", got ",
              out.size());
        const DType dt = in[0].dtype;
        if (max_)
            check(dt == DType::F32 || dt == DType::F64 || dt == DType::I8 || dt == DType::U8 || dt == DType::I16 ||
                      dt == DType::U16 || dt == DType::I32 || dt == DType::U32 || dt == DType::I64 || dt == DType::U64,
                  "input must be a real-number type other than float16, got ", dtype_name(dt));
        else
            check(dtype_is_float(dt), "input must be a float type, got ", dtype_name(dt));
        const Shape& s = in[0].shape;
        window_.expect_input(s);
        Shape o = {s[0], s[1]};
        for (const Axis& a : geometry(s)) o.push_back(a.out);
        out[0] = TensorDesc(o, dt);
        if (out.size() == 2) out[1] = TensorDesc(o, DType::I64);
    }

    int64_t macs(const std::vector<TensorDesc>&, const std::vector<TensorDesc>& out) const override
    {
        int64_t taps = 1;
        for (int64_t k : window_.kernel) taps *= k;
        return shape_numel(out[0].shape) * taps;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& s = in[0].shape();
        const std::vector<Axis> axes = geometry(s);
        // Every (sample, channel) is one plane of the kernels.
        Shape planes = window::spatial_dims(s);
        planes[0] = s[0] * s[1];
        const Tensor x = in[0].reshaped(planes);
        Shape out_planes = window::output_dims(axes);
        out_planes.insert(out_planes.begin(), planes[0]);
        Tensor y = out[0].reshaped(out_planes);
        if (max_) {
            Tensor indices = out.size() == 2 ? out[1].reshaped(out_planes) : Tensor();
            window::max_pool(x, axes, y, out.size() == 2 ? &indices : nullptr, 0, column_major_, ctx);
            return;
        }
        std::vector<Span> counted;
        for (size_t a = 0; a < axes.size(); ++a) {
            const int64_t in_size = s[a + 2];
            const Span p = pads(a, in_size, axes[a]);
            counted.push_back(count_include_pad_ ? Span{-p.begin, in_size + p.end} : Span{0, in_size});
        }
        window::average_pool(x, axes, counted, y, ctx);
    }

private:
    std::vector<Axis> geometry(const Shape& s) const
    {
        std::vector<Axis> axes(window_.kernel.size());
        for (size_t i = 0; i < axes.size(); ++i) {
            Axis& a = axes[i];
            const int64_t in = s[i + 2];
            a.kernel = window_.kernel[i], a.stride = window_.stride[i], a.dilation = window_.dilation[i];
            Span p = pads(i, in, a);
            a.pad_begin = p.begin;
            const int64_t span = in + p.begin + p.end - a.extent();
            check(span >= 0, "kernel extent ", a.extent(), " does not fit the padded input size ", in + p.begin + p.end);
            if (ceil_mode_ && auto_pad_ == kNotSet) {
                a.out = (span + a.stride - 1) / a.stride + 1;
                // The last window must start inside the input or its leading padding.
                if ((a.out - 1) * a.stride >= in + p.begin) --a.out;
            } else {
                a.out = span / a.stride + 1;
            }
        }
        return axes;
    }

    Span pads(size_t i, int64_t in, const Axis& a) const
    {
        if (auto_pad_ == kSameUpper || auto_pad_ == kSameLower)
            return window::same_pads(in, a.stride, a.extent(), auto_pad_ == kSameUpper);
        return auto_pad_ == kValid ? Span{} : window_.pads[i];
    }

    bool max_;
    OnnxWindow window_;
    bool ceil_mode_ = false, count_include_pad_ = false, column_major_ = false;
    int auto_pad_ = kNotSet;
};

class MaxUnpool : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        window_.load(pd, false);
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

std::unique_ptr<Op> make_nd_max_pool() { return std::make_unique<Pool>(true); }
std::unique_ptr<Op> make_nd_average_pool() { return std::make_unique<Pool>(false); }
std::unique_ptr<Op> make_nd_max_unpool() { return std::make_unique<MaxUnpool>(); }

} // namespace kestrel
