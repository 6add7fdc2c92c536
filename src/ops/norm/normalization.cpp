// Normalization: y = (x - mean) * inv_std * scale + bias, the statistics
// taken over some axes (mean, then the population variance from it, two
// passes in double, the elements of each group in row-major order). One op
// with two forms, under ncnn's name LayerNorm:
//   ncnn's       0=affine_size, 1=eps (0.001), 2=affine (1); weights (raw fp32,
//                only with affine) gamma[affine_size], beta[affine_size];
//                float32. The group is, as in ncnn: rank 1 the whole vector;
//                rank 2 each row (w); rank 3 each row when affine_size == w,
//                else each whole channel (h*w); rank 4 each row when
//                affine_size == w, each (h,w) plane when affine_size == h*w,
//                else each whole channel (d*h*w). With affine, the group size
//                must equal affine_size (ncnn only asserts it). The last step
//                is ncnn's, in float: a = 1/sqrt(var + eps), b = -mean * a,
//                y = (x * a + b) * gamma + beta.
//   ONNX's       20=1; any rank and float dtype; every step in double:
//                  LayerNormalization      axes [axis, rank), scale/bias numpy-style
//                  InstanceNormalization   axes [2, rank), scale/bias per channel
//                  MeanVarianceNormalization  epsilon outside the root
//                  BatchNormalization      statistics given per channel
//                Inputs: X, [scale], [bias], and with 25=1 also mean and var.
//                21=axes (int array, negative from the end), 22=epsilon (1e-5),
//                23=epsilon outside the square root (0): 1/(sqrt(var) + eps),
//                else 1/sqrt(var + eps); 24=affine layout (0): 0 scale/bias
//                broadcast against X from the end (numpy), 1 per channel (1-D
//                of length X.dim(1)); 25=statistics (0): 0 computed from X, 1
//                given as inputs 3 (mean) and 4 (var), per channel. Outputs:
//                Y, then optionally Mean and InvStdDev (float32, X's shape with
//                the axes set to 1; computed statistics only).
#include <algorithm>
#include <cmath>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/strided_walker.h"
#include "ops/common/op_util.h"
#include "ops/norm/layer_norm_plan.h"

namespace kestrel {

namespace {

enum Layout { kNumpy = 0, kPerChannel = 1 };

class Normalization : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        onnx_ = onnx_form(pd, "LayerNormalization");
        if (!onnx_) {
            affine_size_ = pd.get_int(0, 0);
            eps_ = pd.get_float(1, 0.001f);
            const int affine = pd.get_int(2, 1);
            check(affine == 0 || affine == 1, "affine (param 2) must be 0 or 1, got ", affine);
            affine_ = affine == 1;
            check(affine_size_ >= 0, "affine_size (param 0) must be >= 0, got ", affine_size_);
            check(!affine_ || affine_size_ > 0, "affine_size (param 0) must be > 0 when affine (param 2) is 1");
            check(std::isfinite(eps_) && eps_ >= 0.f, "eps (param 1) must be finite and >= 0, got ", eps_);
            return;
        }
        axes_ = pd.get_ints(21);
        eps_ = pd.get_float(22, 1e-5f);
        eps_outside_ = pd.get_int(23, 0) != 0;
        layout_ = pd.get_int(24, kNumpy);
        check(layout_ == kNumpy || layout_ == kPerChannel, "affine layout (param 24) must be 0 or 1, got ", layout_);
        const int stats = pd.get_int(25, 0);
        check(stats == 0 || stats == 1, "statistics (param 25) must be 0 or 1, got ", stats);
        given_stats_ = stats == 1;
        check(!given_stats_ || layout_ == kPerChannel, "given statistics (param 25) need the per-channel layout (24=1)");
        check(eps_ >= 0, "epsilon (param 22) must be >= 0, got ", eps_);
    }

    void load_model(WeightReader& wr) override
    {
        if (onnx_ || !affine_) return;
        gamma_ = wr.load(affine_size_, WeightEncoding::Raw);
        beta_ = wr.load(affine_size_, WeightEncoding::Raw);
        check(gamma_.dtype() == DType::F32 && beta_.dtype() == DType::F32, "gamma/beta must be float32");
    }

    int64_t weight_bytes() const override
    {
        return affine_ ? static_cast<int64_t>(gamma_.nbytes() + beta_.nbytes()) : 0;
    }

    bool supports_inplace() const override { return !onnx_; }

    // ONNX's form, scratch 0 and 1: each group's mean and inverse standard
    // deviation (double). ncnn's groups are contiguous and normalized where
    // their statistics are taken, needing none.
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        if (!onnx_ || given_stats_) return nullptr;
        const int64_t groups = nd::GroupWalk(in[0].shape, normalized_axes(in[0].shape)).groups();
        ctx.request_scratch(groups * 8);
        ctx.request_scratch(groups * 8);
        return nullptr;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        if (!onnx_) {
            expect_input_count(in, 1, 1);
            expect_output_count(out, 1);
            expect_f32(in[0]);
            ncnn_group_axes(in[0].shape);
            out[0] = TensorDesc(in[0].shape, DType::F32);
            return;
        }
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
        if (!onnx_) {
            forward_ncnn(x, out[0], ctx);
            return;
        }
        std::vector<double> given_mean, given_inv_std;
        const double* mean = nullptr;
        const double* inv_std = nullptr;
        Shape stat_strides;
        if (given_stats_) {
            given_mean = nd::as_doubles(in[3]);
            given_inv_std = nd::as_doubles(in[4]);
            for (double& v : given_inv_std) v = inverse_std(v);
            mean = given_mean.data(), inv_std = given_inv_std.data();
            stat_strides = operand_strides(x.shape(), in[3].shape(), kPerChannel);
        } else {
            stat_strides = operand_strides(x.shape(), stats_shape(x.shape()), kNumpy);
            const int64_t groups = compute_stats(x, ctx);
            mean = ctx.scratch_as<double>(0), inv_std = ctx.scratch_as<double>(1);
            for (size_t i = 1; i < out.size(); ++i)
                std::transform(i == 1 ? mean : inv_std, (i == 1 ? mean : inv_std) + groups, out[i].data<float>(),
                               [](double v) { return static_cast<float>(v); });
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

    bool plan(const Shape& x, LayerNormPlan& p) const
    {
        if (onnx_) return false;
        p.group_size = 1;
        for (int a : ncnn_group_axes(x)) p.group_size *= x[static_cast<size_t>(a)];
        p.eps = eps_;
        p.gamma = affine_ ? gamma_ : Tensor();
        p.beta = affine_ ? beta_ : Tensor();
        return true;
    }

private:
    // ncnn's LayerNorm, group by group (each contiguous: trailing axes): its
    // statistics as group_stats takes them, then ncnn's float affine step.
    void forward_ncnn(const Tensor& x, Tensor& y, const ExecContext& ctx) const
    {
        const nd::GroupWalk walk(x.shape(), normalized_axes(x.shape()));
        const int64_t size = walk.group_size();
        const float* src = x.data<float>();
        float* dst = y.data<float>();
        const float* gamma = affine_ ? gamma_.data<float>() : nullptr;
        const float* beta = affine_ ? beta_.data<float>() : nullptr;
        ctx.parallel_for(walk.groups(), [&](int64_t begin, int64_t end) {
            for (int64_t g = begin; g < end; ++g) {
                const float* xg = src + g * size;
                const GroupStats st = group_stats(size, [&](auto visit) {
                    for (int64_t i = 0; i < size; ++i) visit(static_cast<double>(xg[i]));
                });
                const float a = static_cast<float>(st.inv_std);
                const float b = static_cast<float>(-st.mean) * a;
                float* yg = dst + g * size;
                // y may alias x: each value is read right before it is overwritten.
                if (gamma)
                    for (int64_t i = 0; i < size; ++i) yg[i] = (xg[i] * a + b) * gamma[i] + beta[i];
                else
                    for (int64_t i = 0; i < size; ++i) yg[i] = xg[i] * a + b;
            }
        });
    }

    // ncnn's groups as trailing axes (see the header), checked against affine_size.
    std::vector<int> ncnn_group_axes(const Shape& s) const
    {
        const NcnnDims n = ncnn_dims(s);
        int trailing = 1;
        if (n.dims == 3 && affine_size_ != n.w) trailing = 2;
        if (n.dims == 4) trailing = affine_size_ == n.w ? 1 : affine_size_ == n.w * n.h ? 2 : 3;
        int64_t size = 1;
        std::vector<int> axes;
        for (int k = n.dims - trailing; k < n.dims; ++k) {
            axes.push_back(k);
            size *= s[static_cast<size_t>(k)];
        }
        check(!affine_ || size == affine_size_, "affine_size (param 0) ", affine_size_,
              " does not match the normalized size ", size, " of input ", shape_str(s));
        return axes;
    }

    double inverse_std(double var) const
    {
        return eps_outside_ ? 1.0 / (std::sqrt(var) + eps_) : 1.0 / std::sqrt(var + eps_);
    }

    // Which of X's axes the statistics are taken over.
    std::vector<bool> normalized_axes(const Shape& x) const
    {
        std::vector<bool> normalized(x.size(), false);
        for (int a : onnx_ ? axes_ : ncnn_group_axes(x))
            normalized[static_cast<size_t>(nd::normalize_axis(a, static_cast<int64_t>(x.size()), "axis (param 21)"))] = true;
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

    struct GroupStats {
        double mean, inv_std;
    };
    // One group's mean, then the mean squared deviation from it (two passes
    // in double over the values for_each(visit) gives, in their order).
    template <class ForEach> GroupStats group_stats(int64_t count, const ForEach& for_each) const
    {
        double sum = 0.0, squares = 0.0;
        for_each([&](double v) { sum += v; });
        const double m = sum / static_cast<double>(count);
        for_each([&](double v) {
            const double d = v - m;
            squares += d * d;
        });
        return GroupStats{m, inverse_std(squares / static_cast<double>(count))};
    }

    // Every group's statistics into scratch 0 and 1, groups split across
    // threads. Returns the number of groups.
    int64_t compute_stats(const Tensor& x, const ExecContext& ctx) const
    {
        const nd::GroupWalk walk(x.shape(), normalized_axes(x.shape()));
        double* mean = ctx.scratch_as<double>(0);
        double* inv_std = ctx.scratch_as<double>(1);
        visit_dtype(x.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (is_float_storage_v<T>) {
                const T* src = x.data<T>();
                ctx.parallel_for(walk.groups(), [&](int64_t begin, int64_t end) {
                    for (int64_t g = begin; g < end; ++g) {
                        const GroupStats st = group_stats(walk.group_size(), [&](auto visit) {
                            walk.visit(g, [&](int64_t i) { visit(to_double(src[i])); });
                        });
                        mean[g] = st.mean;
                        inv_std[g] = st.inv_std;
                    }
                });
            }
        });
        return walk.groups();
    }

    bool onnx_ = false;
    float eps_ = 1e-5f;
    // ncnn's form
    int affine_size_ = 0;
    bool affine_ = false;
    Tensor gamma_, beta_;
    // ONNX's form
    std::vector<int> axes_;
    bool eps_outside_ = false, given_stats_ = false;
    int layout_ = kNumpy;
};

// ncnn's other normalization layers, on the same statistics engine (groups of
// a view of X, statistics in double, two passes; the affine step from weights):
//   InstanceNorm  0=channels 1=eps (0.001) 2=affine (1); weights raw gamma,
//                 beta [channels]. Each channel (ranks 3-4; ranks 1-2 are one
//                 channel, ncnn's c = 1): (x - mean) / sqrt(var + eps) * gamma[c] + beta[c].
//   GroupNorm     0=group (1) 1=channels 2=eps (0.001) 3=affine (1); weights
//                 raw gamma, beta [channels]. The outermost axis (rank 1: each
//                 element; 2: rows; 3-4: channels) in `group` blocks, each
//                 normalized as one; gamma/beta per channel.
//   RMSNorm       0=affine_size 1=eps (0.001) 2=affine (1); weights raw gamma
//                 [affine_size]. LayerNorm's groups: x / sqrt(mean(x^2) + eps) * gamma[i].
//   MVN           0=normalize_variance (0) 1=across_channels (0) 2=eps (0.0001).
//                 Per channel, or the whole tensor: x - mean, then with
//                 normalize_variance / (sqrt(var) + eps). As ncnn, the output
//                 of a rank 1 or 2 input is rank 3, (1, h, w).
//   Normalize     0=across_spatial (0) 4=across_channel (1) 1=channel_shared (0)
//                 2=eps (0.0001) 9=eps_mode (0) 3=scale_data_size; weights raw
//                 scale [scale_data_size]. L2: x * scale[c] / norm, the sum of
//                 squares s over the whole tensor (both), each channel
//                 (across_spatial), or across channels at each position
//                 (across_channel); norm = sqrt(s + eps) (eps_mode 0, Caffe),
//                 max(sqrt(s), eps) (1, PyTorch), sqrt(max(s, eps)) (2,
//                 TensorFlow). Neither: the input unchanged.
enum class NcnnNorm { Instance, Group, Rms, Mvn, L2 };

class NcnnNormalization : public Op {
public:
    explicit NcnnNormalization(NcnnNorm kind) : kind_(kind) {}

    void load_param(const ParamDict& pd) override
    {
        switch (kind_) {
        case NcnnNorm::Instance: read_affine(pd, 0, 1, 2, 0.001f); break;
        case NcnnNorm::Group:
            group_ = positive_param(pd, 0, 1, "group");
            read_affine(pd, 1, 2, 3, 0.001f);
            check(channels_ % group_ == 0, "channels (param 1) ", channels_, " is not a multiple of group (param 0) ", group_);
            break;
        case NcnnNorm::Rms: read_affine(pd, 0, 1, 2, 0.001f); break;
        case NcnnNorm::Mvn:
            normalize_variance_ = flag(pd, 0, 0, "normalize_variance");
            across_channels_ = flag(pd, 1, 0, "across_channels");
            eps_ = pd.get_float(2, 0.0001f);
            break;
        case NcnnNorm::L2:
            across_spatial_ = flag(pd, 0, 0, "across_spatial");
            across_channels_ = flag(pd, 4, 1, "across_channel");
            channel_shared_ = flag(pd, 1, 0, "channel_shared");
            eps_ = pd.get_float(2, 0.0001f);
            eps_mode_ = pd.get_int(9, 0);
            check(eps_mode_ >= 0 && eps_mode_ <= 2, "eps_mode (param 9) must be 0, 1 or 2, got ", eps_mode_);
            channels_ = positive_param(pd, 3, 0, "scale_data_size");
            affine_ = true;
            break;
        }
        check(std::isfinite(eps_) && eps_ >= 0.f, "eps must be finite and >= 0, got ", eps_);
    }

    void load_model(WeightReader& wr) override
    {
        if (!affine_) return;
        gamma_ = wr.load(channels_, WeightEncoding::Raw);
        if (kind_ == NcnnNorm::Instance || kind_ == NcnnNorm::Group) beta_ = wr.load(channels_, WeightEncoding::Raw);
    }

    int64_t weight_bytes() const override
    {
        return static_cast<int64_t>((gamma_.defined() ? gamma_.nbytes() : 0) + (beta_.defined() ? beta_.nbytes() : 0));
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        view(in[0].shape); // checks the shape against the params
        Shape y = in[0].shape;
        if (kind_ == NcnnNorm::Mvn && y.size() < 3) y.insert(y.begin(), 3 - y.size(), 1);
        out[0] = TensorDesc(y, DType::F32);
    }

    bool supports_inplace() const override { return true; }

    // Scratch 0 and 1: each group's mean and scaling (double).
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        const View v = view(in[0].shape);
        const int64_t groups = nd::GroupWalk(v.shape, v.normalized).groups();
        ctx.request_scratch(groups * 8);
        ctx.request_scratch(groups * 8);
        return nullptr;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const View v = view(in[0].shape());
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();
        if (kind_ == NcnnNorm::L2 && !across_spatial_ && !across_channels_) {
            std::copy_n(x, in[0].numel(), y);
            return;
        }
        const nd::GroupWalk walk(v.shape, v.normalized);
        double* mean = ctx.scratch_as<double>(0);
        double* scaling = ctx.scratch_as<double>(1);
        ctx.parallel_for(walk.groups(), [&](int64_t begin, int64_t end) {
            for (int64_t g = begin; g < end; ++g) group_statistics(walk, g, x, mean[g], scaling[g]);
        });
        Shape stats = v.shape;
        for (size_t k = 0; k < stats.size(); ++k)
            if (v.normalized[k]) stats[k] = 1;
        const Shape stat_strides = nd::broadcast_strides(v.shape, stats);
        const float* gamma = gamma_.defined() ? gamma_.data<float>() : nullptr;
        const float* beta = beta_.defined() ? beta_.data<float>() : nullptr;
        ctx.parallel_for(in[0].numel(), [&](int64_t begin, int64_t end) {
            nd::Walker w(v.shape, {stat_strides, v.affine_strides}, begin);
            for (int64_t i = begin; i < end; ++i, w.next()) {
                double value = (static_cast<double>(x[i]) - mean[w.offset(0)]) * scaling[w.offset(0)];
                if (gamma) value *= gamma[w.offset(1)];
                if (beta) value += beta[w.offset(1)];
                y[i] = static_cast<float>(value);
            }
        });
    }

private:
    // X seen as ncnn's layer sees it: the groups' axes, and the strides of
    // the weight each element takes.
    struct View {
        Shape shape;
        std::vector<bool> normalized;
        Shape affine_strides;
    };

    View view(const Shape& x) const
    {
        const NcnnDims n = ncnn_dims(x);
        const int64_t total = shape_numel(x);
        // ncnn's channel count: c for ranks 3-4, one below.
        const int64_t c = n.dims >= 3 ? x[0] : 1;
        switch (kind_) {
        case NcnnNorm::Instance:
            expect_channels(c, "channels (param 0)");
            return {{c, total / std::max<int64_t>(c, 1)}, {false, true}, {affine_ ? 1 : 0, 0}};
        case NcnnNorm::Group: {
            const int64_t outer = x[0]; // rank 1: elements, 2: rows, 3-4: channels
            expect_channels(outer, "channels (param 1)");
            check(outer % group_ == 0, "the input's ", outer, " channels do not split into group (param 0) ", group_);
            const int64_t per_group = outer / group_;
            return {{group_, per_group, total / std::max<int64_t>(outer, 1)}, {false, true, true}, {per_group, 1, 0}};
        }
        case NcnnNorm::Rms: {
            const int64_t size = layer_norm_group(x, n);
            check(!affine_ || size == channels_, "affine_size (param 0) ", channels_,
                  " does not match the normalized size ", size, " of input ", shape_str(x));
            return {{total / std::max<int64_t>(size, 1), size}, {false, true}, {0, 1}};
        }
        case NcnnNorm::Mvn:
            return {{c, total / std::max<int64_t>(c, 1)}, {across_channels_, true}, {0, 0}};
        case NcnnNorm::L2:
            expect_channels(c, "scale_data_size (param 3)");
            return {{c, total / std::max<int64_t>(c, 1)}, {across_channels_, across_spatial_}, {channel_shared_ ? 0 : 1, 0}};
        }
        fail("unknown normalization");
    }

    // The size of LayerNorm's groups (its rules, on affine_size).
    int64_t layer_norm_group(const Shape& x, const NcnnDims& n) const
    {
        if (n.dims <= 2) return n.w;
        if (channels_ == n.w) return n.w;
        if (n.dims == 4 && channels_ == n.w * n.h) return n.w * n.h;
        return shape_numel(x) / x[0];
    }

    void expect_channels(int64_t c, const char* param) const
    {
        if (!affine_ || channel_shared_) return;
        check(channels_ == c, param, " is ", channels_, ", the input has ", c, " channels");
    }

    // One group's mean (0 when not centred) and the factor that scales it.
    void group_statistics(const nd::GroupWalk& walk, int64_t g, const float* x, double& mean, double& scaling) const
    {
        const bool center = kind_ != NcnnNorm::Rms && kind_ != NcnnNorm::L2;
        const double count = static_cast<double>(walk.group_size());
        double sum = 0.0, squares = 0.0;
        if (center) walk.visit(g, [&](int64_t i) { sum += x[i]; });
        mean = center ? sum / count : 0.0;
        walk.visit(g, [&](int64_t i) {
            const double d = x[i] - mean;
            squares += d * d;
        });
        const double e = eps_;
        switch (kind_) {
        case NcnnNorm::Mvn: scaling = normalize_variance_ ? 1.0 / (std::sqrt(squares / count) + e) : 1.0; break;
        case NcnnNorm::L2:
            scaling = eps_mode_ == 0 ? 1.0 / std::sqrt(squares + e)
                    : eps_mode_ == 1 ? 1.0 / std::max(std::sqrt(squares), e)
                                     : 1.0 / std::sqrt(std::max(squares, e));
            break;
        default: scaling = 1.0 / std::sqrt(squares / count + e); break;
        }
    }

    void read_affine(const ParamDict& pd, int channels_id, int eps_id, int affine_id, float eps_default)
    {
        channels_ = pd.get_int(channels_id, 0);
        eps_ = pd.get_float(eps_id, eps_default);
        affine_ = flag(pd, affine_id, 1, "affine");
        check(channels_ > 0 || !affine_, "param ", channels_id, " must be > 0 with affine, got ", channels_);
    }

    static bool flag(const ParamDict& pd, int id, int def, const char* name)
    {
        const int v = pd.get_int(id, def);
        check(v == 0 || v == 1, name, " (param ", id, ") must be 0 or 1, got ", v);
        return v == 1;
    }

    NcnnNorm kind_;
    int64_t channels_ = 0, group_ = 1;
    float eps_ = 0.001f;
    int eps_mode_ = 0;
    bool affine_ = false, normalize_variance_ = false, across_channels_ = false, across_spatial_ = false,
         channel_shared_ = false;
    Tensor gamma_, beta_;
};

} // namespace

bool layer_norm_plan(const Op& op, const Shape& in, LayerNormPlan& plan)
{
    const auto* norm = dynamic_cast<const Normalization*>(&op);
    return norm != nullptr && norm->plan(in, plan);
}

std::unique_ptr<Op> make_layer_norm() { return std::make_unique<Normalization>(); }
std::unique_ptr<Op> make_instance_norm() { return std::make_unique<NcnnNormalization>(NcnnNorm::Instance); }
std::unique_ptr<Op> make_group_norm() { return std::make_unique<NcnnNormalization>(NcnnNorm::Group); }
std::unique_ptr<Op> make_rms_norm() { return std::make_unique<NcnnNormalization>(NcnnNorm::Rms); }
std::unique_ptr<Op> make_mvn() { return std::make_unique<NcnnNormalization>(NcnnNorm::Mvn); }
std::unique_ptr<Op> make_normalize() { return std::make_unique<NcnnNormalization>(NcnnNorm::L2); }

} // namespace kestrel
