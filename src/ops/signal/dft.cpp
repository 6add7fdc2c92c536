// DFT (ONNX, opset 17): the discrete Fourier transform along one axis of a
// float32 tensor whose last axis holds a real value (1) or a complex one (2:
// real, imaginary); the output is complex (last axis 2).
// Params 0=axis (of the input, not its last; negative from the back),
// 1=inverse (exp(+2 pi i k m / n), divided by n), 2=onesided (bins 0..n/2
// only), 20=dynamic (dft_length known only at run time). Input 1, optional:
// dft_length n, one integer >= 1: the signal along the axis zero-padded or cut
// to n samples (default: the axis' length). Output: the input's shape with
// the axis n (n/2 + 1 onesided) long and the last axis 2.
// Direct sums in double (dft_sums.h).
#include <cmath>
#include <optional>
#include <vector>

#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"
#include "ops/signal/dft_sums.h"

namespace kestrel {

namespace {

// Transform lengths up to this: the sums are direct, n^2 products a line.
constexpr int64_t kMaxDftLength = int64_t(1) << 16;

class Dft : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axis_ = pd.get_int(0, 1);
        inverse_ = pd.get_int(1, 0) != 0;
        onesided_ = pd.get_int(2, 0) != 0;
        dynamic_ = pd.get_int(20, 0) != 0;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 2);
        expect_output_count(out, 1);
        expect_f32(in[0], "input (input 0)");
        const Shape& s = in[0].shape;
        check(s.size() >= 2 && (s.back() == 1 || s.back() == 2),
              "input must end in an axis of 1 (real) or 2 (complex) values, got ", shape_str(s));
        const size_t a = axis_of(s);
        if (in.size() > 1 && !in[1].value.defined() && dynamic_) {
            out[0] = TensorDesc(Shape{0}); // placeholder: forward() gives the real shape
            return;
        }
        out[0] = TensorDesc(output_shape(s, length(in, s[a])));
        products(s, out[0].shape, length(in, s[a]));
    }
    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out) const override
    {
        if (shape_numel(out[0].shape) == 0) return 0; // a placeholder: the length comes at run time
        return products(in[0].shape, out[0].shape, length(in, in[0].shape[axis_of(in[0].shape)]));
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }

    // The twiddle table, made once per shape where the length is known while planning.
    struct Table : OpState {
        signal::Twiddles twiddles;
        explicit Table(int64_t n) : twiddles(n) {}
    };

    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext&) const override
    {
        if (in.size() > 1 && !in[1].value.defined()) return nullptr;
        return std::make_unique<Table>(length(in, in[0].shape[axis_of(in[0].shape)]));
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& s = in[0].shape();
        const size_t a = axis_of(s);
        const int64_t n = in.size() > 1 ? dft_length(in[1]) : s[a];
        const Shape want = output_shape(s, n);
        if (out[0].shape() != want) out[0] = Tensor(want);
        int64_t outer = 1, inner = 1;
        for (size_t d = 0; d < a; ++d) outer *= s[d];
        for (size_t d = a + 1; d + 1 < s.size(); ++d) inner *= s[d];
        const int64_t len = s[a], lanes = s.back(), bins = want[a];
        products(s, want, n);
        const auto* table = dynamic_cast<const Table*>(ctx.state());
        std::optional<signal::Twiddles> own; // the length came at run time
        const signal::Twiddles& twiddles = table && table->twiddles.n() == n ? table->twiddles : own.emplace(n);
        const double sign = inverse_ ? 1.0 : -1.0, scale = inverse_ ? 1.0 / static_cast<double>(n) : 1.0;
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();
        const int64_t used = std::min(len, n); // samples past them are the padding's zeros
        ctx.parallel_for(outer * inner * bins, [&](int64_t begin, int64_t end) {
            for (int64_t t = begin; t < end; ++t) {
                const int64_t k = t % bins, line = t / bins, o = line / inner, m = line % inner;
                double re, im;
                signal::dft_bin(twiddles, k, used, sign, [&](int64_t j, double& xr, double& xi) {
                    const float* v = x + ((o * len + j) * inner + m) * lanes;
                    xr = v[0];
                    xi = lanes == 2 ? v[1] : 0.0;
                }, re, im);
                float* dst = y + ((o * bins + k) * inner + m) * 2;
                dst[0] = static_cast<float>(re * scale);
                dst[1] = static_cast<float>(im * scale);
            }
        });
    }

private:
    size_t axis_of(const Shape& s) const
    {
        const int64_t r = static_cast<int64_t>(s.size());
        const int64_t a = axis_ < 0 ? axis_ + r : axis_;
        check(a >= 0 && a <= r - 2, "axis (param 0) ", axis_, " is out of range for rank ", r,
              " (the last axis holds the real and imaginary parts)");
        return static_cast<size_t>(a);
    }

    // Products of the direct sums: each output bin of each line over min(n, length) samples.
    int64_t products(const Shape& s, const Shape& o, int64_t n) const
    {
        const size_t a = axis_of(s);
        return signal::checked_dft_products(shape_numel(o) / 2 / o[a], o[a], std::min(n, s[a]));
    }

    int64_t length(const std::vector<TensorDesc>& in, int64_t axis_length) const
    {
        if (in.size() < 2) return axis_length;
        return dft_length(nd::known_value(in[1], "dft_length (input 1)"));
    }

    static int64_t dft_length(const Tensor& t)
    {
        const int64_t n = nd::int_scalar(t, "dft_length (input 1)");
        check(n >= 1 && n <= kMaxDftLength, "dft_length (input 1) must be in [1, ", kMaxDftLength, "], got ", n);
        return n;
    }

    Shape output_shape(const Shape& s, int64_t n) const
    {
        check(n >= 1 && n <= kMaxDftLength, "the transform's length must be in [1, ", kMaxDftLength, "], got ", n);
        check(!onesided_ || s.back() == 1, "onesided (param 2) takes a real input (last axis 1)");
        Shape o = s;
        o[axis_of(s)] = onesided_ ? n / 2 + 1 : n;
        o.back() = 2;
        return o;
    }

    int axis_ = 1;
    bool inverse_ = false, onesided_ = false, dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_dft() { return std::make_unique<Dft>(); }

} // namespace kestrel
