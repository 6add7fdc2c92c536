// NormalizeND (our layer): y = (x - mean) * inv_std * scale + bias, the ONNX
// normalizations in one layer for any rank and float dtype:
//   LayerNormalization      axes = [axis, rank), scale/bias broadcast numpy-style
//   InstanceNormalization   axes = [2, rank), scale/bias per channel
//   MeanVarianceNormalization  axes from the attribute, epsilon outside the root
//   BatchNormalization      statistics given per channel (inference form)
// Inputs: X, [scale], [bias], and with 4=1 also mean and var (per channel).
// Params:
//   0=axes (int array, negative from the end): statistics are taken over them
//   1=epsilon (1e-5)
//   2=epsilon outside the square root (0): 1/(sqrt(var) + eps), else 1/sqrt(var + eps)
//   3=affine layout (0): 0 scale/bias broadcast against X from the end (numpy);
//     1 per channel: 1-D of length X.dim(1)
//   4=statistics (0): 0 computed from X (population variance); 1 given as
//     inputs 3 (mean) and 4 (var), per channel
// Outputs: Y (X's shape and dtype), then optionally Mean and InvStdDev (float32,
// X's shape with the axes set to 1; computed statistics only).
// Statistics and the affine step are computed in double.
#include <algorithm>
#include <cmath>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/strided_walker.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum Layout { kNumpy = 0, kPerChannel = 1 };

class NormalizeND : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axes_ = pd.get_ints(0);
        eps_ = pd.get_float(1, 1e-5f);
        eps_outside_ = pd.get_int(2, 0) != 0;
        layout_ = pd.get_int(3, kNumpy);
        check(layout_ == kNumpy || layout_ == kPerChannel, "affine layout (param 3) must be 0 or 1, got ", layout_);
        const int stats = pd.get_int(4, 0);
        check(stats == 0 || stats == 1, "statistics (param 4) must be 0 or 1, got ", stats);
        given_stats_ = stats == 1;
        check(!given_stats_ || layout_ == kPerChannel, "given statistics (param 4) need the per-channel layout (3=1)");
        check(eps_ >= 0, "epsilon (param 1) must be >= 0, got ", eps_);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        if (given_stats_) expect_input_count(in, 5, 5);
        else expect_input_count(in, 1, 3);
        check(out.size() >= 1 && out.size() <= (given_stats_ ? 1u : 3u), "expects 1 to ", given_stats_ ? 1 : 3,
              " outputs, got ", out.size());
        const Shape& x = in[0].shape;
        check(dtype_is_float(in[0].dtype), "input must be a float tensor, got ", dtype_name(in[0].dtype));
        for (size_t i = 1; i < in.size(); ++i) {
            check(dtype_is_float(in[i].dtype), "input ", i, " must be a float tensor, got ", dtype_name(in[i].dtype));
            operand_strides(x, in[i].shape, layout_); // validates the shape
        }
        out[0] = TensorDesc(x, in[0].dtype);
        const Shape stats = stats_shape(x);
        for (size_t i = 1; i < out.size(); ++i) out[i] = TensorDesc(stats, DType::F32);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Tensor& x = in[0];
        std::vector<double> mean, inv_std;
        Shape stat_strides;
        if (given_stats_) {
            mean = nd::as_doubles(in[3]);
            inv_std = nd::as_doubles(in[4]);
            for (double& v : inv_std) v = inverse_std(v);
            stat_strides = operand_strides(x.shape(), in[3].shape(), kPerChannel);
        } else {
            stat_strides = operand_strides(x.shape(), stats_shape(x.shape()), kNumpy);
            compute_stats(x, mean, inv_std, ctx);
            for (size_t i = 1; i < out.size(); ++i) {
                const std::vector<double>& src = i == 1 ? mean : inv_std;
                std::transform(src.begin(), src.end(), out[i].data<float>(), [](double v) { return static_cast<float>(v); });
            }
        }
        const std::vector<double> scale = in.size() > 1 ? nd::as_doubles(in[1]) : std::vector<double>{1.0};
        const std::vector<double> bias = in.size() > 2 ? nd::as_doubles(in[2]) : std::vector<double>{0.0};
        // An absent scale/bias is the scalar 1 / 0.
        const Shape scale_strides = in.size() > 1 ? operand_strides(x.shape(), in[1].shape(), layout_)
                                                  : operand_strides(x.shape(), {}, kNumpy);
        const Shape bias_strides = in.size() > 2 ? operand_strides(x.shape(), in[2].shape(), layout_)
                                                 : operand_strides(x.shape(), {}, kNumpy);
        visit_dtype(x.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (is_float_storage_v<T>) {
                const T* src = x.data<T>();
                T* dst = out[0].data<T>();
                ctx.parallel_for(x.numel(), [&](int64_t begin, int64_t end) {
                    nd::Walker w(x.shape(), {stat_strides, scale_strides, bias_strides}, begin);
                    for (int64_t i = begin; i < end; ++i, w.next()) {
                        const double normalized = (to_double(src[i]) - mean[w.offset(0)]) * inv_std[w.offset(0)];
                        dst[i] = convert_value<T>(normalized * scale[w.offset(1)] + bias[w.offset(2)]);
                    }
                });
            }
        });
    }

private:
    double inverse_std(double var) const
    {
        return eps_outside_ ? 1.0 / (std::sqrt(var) + eps_) : 1.0 / std::sqrt(var + eps_);
    }

    // Which of X's axes the statistics are taken over.
    std::vector<bool> normalized_axes(const Shape& x) const
    {
        std::vector<bool> normalized(x.size(), false);
        for (int a : axes_) normalized[static_cast<size_t>(nd::normalize_axis(a, static_cast<int64_t>(x.size()), "axis (param 0)"))] = true;
        return normalized;
    }

    // X's shape with the normalized axes set to 1.
    Shape stats_shape(const Shape& x) const
    {
        if (given_stats_) return x;
        const std::vector<bool> normalized = normalized_axes(x);
        Shape s = x;
        for (size_t k = 0; k < s.size(); ++k)
            if (normalized[k]) s[k] = 1;
        return s;
    }

    // Strides (per axis of X) of an operand of shape s: numpy broadcast from the
    // end, or per channel (1-D along axis 1). 0 along broadcast axes.
    static Shape operand_strides(const Shape& x, const Shape& s, int layout)
    {
        const size_t rank = x.size();
        Shape aligned(rank, 1);
        if (layout == kPerChannel) {
            check(rank >= 2, "per-channel scale/bias/statistics need an input of rank >= 2, got ", shape_str(x));
            check(s.size() == 1 && s[0] == x[1], "per-channel operands must have shape (", x[1], "), got ", shape_str(s));
            aligned[1] = s[0];
        } else {
            check(s.size() <= rank, "operand ", shape_str(s), " does not broadcast to ", shape_str(x));
            std::copy(s.begin(), s.end(), aligned.begin() + static_cast<std::ptrdiff_t>(rank - s.size()));
        }
        return nd::broadcast_strides(x, aligned);
    }

    // Per group: the mean, then the mean squared deviation from it (two passes,
    // in double), groups split across threads.
    void compute_stats(const Tensor& x, std::vector<double>& mean, std::vector<double>& inv_std,
                       const ExecContext& ctx) const
    {
        const nd::GroupWalk walk(x.shape(), normalized_axes(x.shape()));
        mean.assign(static_cast<size_t>(walk.groups()), 0.0);
        inv_std.assign(mean.size(), 0.0);
        const double count = static_cast<double>(walk.group_size());
        visit_dtype(x.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (is_float_storage_v<T>) {
                const T* src = x.data<T>();
                ctx.parallel_for(walk.groups(), [&](int64_t begin, int64_t end) {
                    for (int64_t g = begin; g < end; ++g) {
                        double sum = 0.0, squares = 0.0;
                        walk.visit(g, [&](int64_t i) { sum += to_double(src[i]); });
                        const double m = sum / count;
                        walk.visit(g, [&](int64_t i) {
                            const double d = to_double(src[i]) - m;
                            squares += d * d;
                        });
                        mean[static_cast<size_t>(g)] = m;
                        inv_std[static_cast<size_t>(g)] = inverse_std(squares / count);
                    }
                });
            }
        });
    }

    std::vector<int> axes_;
    float eps_ = 1e-5f;
    bool eps_outside_ = false, given_stats_ = false;
    int layout_ = kNumpy;
};

} // namespace

std::unique_ptr<Op> make_nd_normalize() { return std::make_unique<NormalizeND>(); }

} // namespace kestrel
