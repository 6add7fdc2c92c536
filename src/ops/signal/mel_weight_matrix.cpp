// MelWeightMatrix (ONNX, opset 17): the (dft_length/2 + 1, num_mel_bins)
// matrix that maps a onesided spectrum's bins onto triangular mel bands.
// Inputs, one value each: num_mel_bins, dft_length, sample_rate (integers
// >= 1), lower_edge_hertz, upper_edge_hertz (floats). num_mel_bins + 2 edges
// evenly spaced on the mel scale (2595 log10(1 + hz / 700)) from the lower
// edge, by (upper - lower) / (num_mel_bins + 2), each at spectrum bin
// floor((dft_length + 1) * hz / sample_rate) (in double, as ONNX Runtime);
// band i rises from edge i to edge i + 1 and falls to edge i + 2 (a 1 where
// the rise is empty), as ONNX's definition builds it. Params 0=output dtype
// (a kestrel::DType code, default F32), 20=dynamic (the sizes known only at
// run time).
#include <cmath>
#include <vector>

#include "core/dtype_dispatch.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

constexpr int64_t kMaxBins = int64_t(1) << 20; // per axis of the matrix
constexpr int64_t kMaxValues = int64_t(1) << 26; // in all

class MelWeightMatrix : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        dtype_ = dtype_param(pd, 0, DType::F32, "output dtype");
        dynamic_ = pd.get_int(20, 0) != 0;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 5, 5);
        expect_output_count(out, 1);
        for (size_t i = 0; i < 5; ++i)
            check(shape_numel(in[i].shape) == 1, "input ", i, " must hold one value, got shape ", shape_str(in[i].shape));
        if (!nd::values_known(in, 0, 2) && dynamic_) {
            out[0] = TensorDesc(Shape{0, 0}, dtype_); // placeholder: forward() gives the real shape
            return;
        }
        out[0] = TensorDesc(shape(nd::known_value(in[0], "num_mel_bins (input 0)"),
                                  nd::known_value(in[1], "dft_length (input 1)")),
                            dtype_);
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 0, 2); }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape want = shape(in[0], in[1]);
        if (out[0].shape() != want) out[0] = Tensor(want, dtype_);
        const int64_t bins = want[0], bands = want[1], dft_length = nd::int_scalar(in[1], "dft_length (input 1)");
        const int64_t rate = nd::int_scalar(in[2], "sample_rate (input 2)");
        check(rate >= 1, "sample_rate (input 2) must be >= 1, got ", rate);
        const double lower = scalar(in[3]), upper = scalar(in[4]);
        const auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
        const double low_mel = to_mel(lower), step = (to_mel(upper) - low_mel) / static_cast<double>(bands + 2);
        std::vector<int64_t> edge(static_cast<size_t>(bands + 2));
        for (int64_t i = 0; i < bands + 2; ++i) {
            const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
            const double at = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(rate));
            check(at >= 0 && at < static_cast<double>(bins), "mel edge ", i, " falls on spectrum bin ", at,
                  ", outside the ", bins, " bins (lower_edge_hertz ", lower, ", upper_edge_hertz ", upper,
                  ", sample_rate ", rate, ")");
            edge[static_cast<size_t>(i)] = static_cast<int64_t>(at);
        }
        std::vector<double> w(static_cast<size_t>(bins * bands), 0.0);
        for (int64_t i = 0; i < bands; ++i) {
            const int64_t lo = edge[static_cast<size_t>(i)], mid = edge[static_cast<size_t>(i + 1)],
                          hi = edge[static_cast<size_t>(i + 2)];
            if (mid == lo) w[static_cast<size_t>(mid * bands + i)] = 1.0;
            for (int64_t j = lo; j <= mid && mid > lo; ++j)
                w[static_cast<size_t>(j * bands + i)] = static_cast<double>(j - lo) / static_cast<double>(mid - lo);
            for (int64_t j = mid; j < hi; ++j)
                w[static_cast<size_t>(j * bands + i)] = static_cast<double>(hi - j) / static_cast<double>(hi - mid);
        }
        visit_dtype(dtype_, [&](auto tag) {
            using T = typename decltype(tag)::type;
            for (size_t k = 0; k < w.size(); ++k) out[0].data<T>()[k] = convert_value<T>(w[k]);
        });
    }

private:
    static double scalar(const Tensor& t)
    {
        double v = 0;
        visit_dtype(t.dtype(), [&](auto tag) { v = to_double(t.data<typename decltype(tag)::type>()[0]); });
        return v;
    }

    static Shape shape(const Tensor& mel_bins, const Tensor& dft)
    {
        const int64_t bands = nd::int_scalar(mel_bins, "num_mel_bins (input 0)");
        const int64_t length = nd::int_scalar(dft, "dft_length (input 1)");
        check(bands >= 1 && bands <= kMaxBins, "num_mel_bins (input 0) must be in [1, ", kMaxBins, "], got ", bands);
        check(length >= 1 && length / 2 < kMaxBins, "dft_length (input 1) must be in [1, ", 2 * kMaxBins, "), got ", length);
        check((length / 2 + 1) * bands <= kMaxValues, "the matrix (", length / 2 + 1, " x ", bands, ") exceeds ",
              kMaxValues, " values");
        return {length / 2 + 1, bands};
    }

    DType dtype_ = DType::F32;
    bool dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_mel_weight_matrix() { return std::make_unique<MelWeightMatrix>(); }

} // namespace kestrel
