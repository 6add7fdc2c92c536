// Convolution of every rank: Convolution1D, Convolution, Convolution3D and
// their DepthWise types (ncnn params; one class, the depthwise types add param
// 7 = group, the rank comes from the type). Input (c, spatial...) -> output
// (num_output, spatial...): (c,w), (c,h,w), (c,d,h,w).
// 2-D layers take the paths below; 1-D and 3-D ones the N-d reference kernel
// (common/sliding_window.h: sums in bias, channel, tap order), float32 only.
//
// Paths:
//  * fp32: pad with pad_value (18), accumulate per output channel.
//  * int8 (8 = int8_scale_term != 0): the input is quantized with the bottom
//    scale (unless it already is I8), padded with (int8)pad_value, accumulated
//    in int32, dequantized per output channel, bias, activation, and with
//    int8_scale_term > 100 requantized to an I8 output with the top scale.
//  * ONNX's quantized form (25 = 1, Kestrel's, for QLinearConv and
//    ConvInteger: ops/quant/onnx_form.h, params 25-30; 8 = 2): uint8 or int8
//    input and output with zero points, or int32 sums. (Ids 21-24 are
//    Convolution3D's.) The input's padding is its zero point.
//  * dynamic weight (19 = 1): inputs [x, W, (bias)], W our shape
//    (outch, inch/group, kh, kw) = ncnn [w=kw, h=kh, d=inch/group, c=outch].
//  * Convolution with a 1-D input and a 1x1 kernel: ncnn's deprecated path,
//    computed as InnerProduct (output (num_output,)).
//  * residual (20 = 1, Kestrel's, set by the optimizer when it fuses a sum
//    into the layer): the last input, shaped as the output, is added to the
//    sums before the activation; 2-D layers with static weights and a float
//    output (int8 ones add it to the dequantized values).
// Params: ConvParams (conv_params.h) with dynamic weight id 19, and 8
// int8_scale_term, 18 pad_value, 20 residual.
// Layers with several output channels per group run as GEMMs
// (kernels/conv2d_gemm.h) or, 3x3 stride-1 ones, Winograd; depthwise ones (a
// channel per group) through kernels/depthwise_conv2d.h. Depthwise and
// one-group layers also read and write activations in channel blocks
// (channel_block_conv.h), the one-group ones then as the direct tile's
// pixels x output blocks (all kernel sizes, strides and dilations; where
// Winograd on planes is faster, prefers_blocked keeps them plain). A
// one-group layer keeps its weights as loaded until the first prepare packs
// the form its shape and layouts want (GEMM, Winograd or the direct tile's);
// once the graph releases them, only forms built by then are left. Other
// grouped forms keep the plain kernels here: pad, then accumulate per output
// channel. Int8 layers with several output channels per group run on the
// CPU's int8 dot-product instructions where it has them
// (kernels/conv2d_int8_dot.h), else on the float GEMM, which gives the int32
// sums exactly (kernels/conv2d_int8_gemm.h); depthwise ones on the float
// depthwise kernels (exact too); the plain int32 loop is the fallback. Their
// sums are dequantized or requantized by kernels/int8_output.h. With
// Options::precision BF16 (PrepareContext::bf16), one-group layers of 16
// input and output channels or more and 128+ products a sum multiply in
// bfloat16 (kernels/conv2d_bf16.h: AMX tiles or vdpbf16ps, fp32 sums), on
// planes (takes_bf16).
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "kernels/conv2d_bf16.h"
#include "kernels/conv2d_gemm.h"
#include "kernels/conv2d_int8_dot.h"
#include "kernels/conv2d_int8_gemm.h"
#include "kernels/conv2d_winograd.h"
#include "kernels/depthwise_conv2d.h"
#include "kernels/depthwise_int8.h"
#include "kernels/int8_output.h"
#include "ops/activation/activation.h"
#include "ops/registry.h"
#include "ops/common/sliding_window.h"
#include "ops/conv/channel_block_conv.h"
#include "ops/conv/pad_planes.h"
#include "ops/conv/conv_params.h"
#include "ops/quant/int8.h"
#include "ops/quant/onnx_form.h"
#include "ops/common/op_util.h"
#include "ops/common/packed_weights.h"

namespace kestrel {

namespace {

// The window along the rows and the columns (pad_begin: padding before the
// input), and the padding after the input.
struct ConvGeometry {
    window::Axis rows, cols;
    int64_t pad_bottom = 0, pad_right = 0;
};

// The kernel actually used: from params and weights, or from the dynamic weight input.
struct KernelDims {
    int64_t kw = 0, kh = 0;
    int64_t outch = 0;  // output channels
    int64_t inch_g = 0; // input channels per group
};

class Convolution : public Op {
public:
    Convolution(int rank, bool depthwise) : rank_(rank), depthwise_(depthwise) {}

    void load_param(const ParamDict& pd) override
    {
        p_ = ConvParams::read(pd, rank_, depthwise_, 19);
        pad_value_ = pd.get_float(18, 0.f);
        int8_scale_term_ = pd.get_int(8, 0);
        check(rank_ == 2 || int8_scale_term_ == 0, "int8 (param 8) is not supported by ", type);
        check(int8_scale_term_ >= 0, "int8_scale_term (param 8) must be >= 0, got ", int8_scale_term_);
        if (depthwise_)
            check(int8_scale_term_ == 0 || int8_scale_term_ == 1 || int8_scale_term_ == 2 || int8_scale_term_ == 101 ||
                      int8_scale_term_ == 102,
                  "int8_scale_term (param 8) must be 0, 1, 2, 101 or 102, got ", int8_scale_term_);
        check(!(p_.dynamic && int8_scale_term_ != 0),
              "int8 (param 8) cannot be combined with dynamic weights (param 19)");
        const int residual = pd.get_int(kResidualParam, 0);
        check(residual == 0 || residual == 1, "residual (param 20) must be 0 or 1, got ", residual);
        residual_ = residual == 1;
        check(!residual_ || (rank_ == 2 && !p_.dynamic && int8_scale_term_ < 100),
              "residual (param 20) needs a 2-D layer with static weights and a float output");
        load_onnx_form(pd);
    }

    // ONNX's quantized form (params 25-30, see the top of this file).
    void load_onnx_form(const ParamDict& pd)
    {
        onnx_.load_param(pd);
        if (!onnx_.on) return;
        check(rank_ == 2 && int8_scale_term_ == 2 && !residual_ && !p_.bias_term &&
                  p_.activation.type == Activation::None,
              "ONNX's quantized form (param 25) needs 8=2 and no bias term, residual or activation");
        pad_value_ = static_cast<float>(onnx_.x_zero); // ONNX pads with the zero point
    }

    void load_model(WeightReader& wr) override
    {
        if (p_.dynamic) return;
        if (rank_ != 2) {
            weights_ = load_f32_conv_weights(wr, p_, type);
            return;
        }
        weights_ = load_conv_weights(wr, p_);
        Tensor& weight = weights_.weight;
        check(weight.dtype() == DType::F32 || int8_scale_term_ != 0, "int8 weights need int8_scale_term (param 8)");
        if (int8_scale_term_ != 0) {
            // ConvolutionDepthWise: 1/101 one weight scale per group, 2/102 a single one.
            const int64_t n = !depthwise_ || onnx_.on ? p_.num_output : (int8_scale_term_ % 100 == 1 ? p_.group : 1);
            const Int8Scales scales = Int8Scales::load(wr, n, int8_scale_term_ > 100 || onnx_.on);
            if (onnx_.on) {
                check(weight.dtype() == DType::I8, "ONNX's quantized form (param 25) takes int8 weights");
                onnx_.load_requantization(wr, scales, weight.data<int8_t>(), p_.num_output,
                                          weight.numel() / p_.num_output);
            }
            weight = int8_weights(weight, scales.weight);
            bottom_scale_ = scales.bottom;
            top_scale_ = scales.top;
            dequant_ = scales.dequant_factors(p_.num_output);
            clamp_ = p_.activation.as_clamp(clamp_bounds_) != nullptr;
        }
        if (int8_scale_term_ != 0) prepare_int8_kernels();
        const KernelDims k{p_.window.kernel[1], p_.window.kernel[0], p_.num_output, p_.in_channels / p_.group};
        gemm_weights_.reset();
        for (PackedWeights& w : winograd_weights_) w.reset();
        for (PackedWeights& w : winograd_block_weights_) w.reset();
        winograd_ok_ = false;
        source_ = Tensor();
        drop_source_ = false;
        direct_weights_.reset();
        bf16_weights_.reset();
        direct_ok_ = int8_scale_term_ == 0 && takes_direct() && uses_gemm(p_.num_output / p_.group);
        winograd_ok_ = int8_scale_term_ == 0 && wr.options.winograd && takes_winograd(k);
        if (winograd_ok_ || direct_ok_) {
            // Which form is fastest depends on the plane's size and the blobs'
            // layouts: kept as they are, packed by prepare() for the first
            // shape that wants each form.
            source_ = weight;
            weight = Tensor();
        } else if (int8_scale_term_ == 0 && uses_gemm(p_.num_output / p_.group)) {
            gemm_weights_.get([&] { return conv2d_gemm_pack_weights(gemm_kernel(), weight.data<float>(), gemm_geometry(k, {})); });
            // The packed copy replaces the weights (a 1x1 kernel's 1-D input
            // path, forward_flat, reads the packed copy too), except with
            // groups and a 1x1 kernel, whose 1-D input path reads them as they are.
            if (p_.group == 1 || p_.window.kernel[0] != 1 || p_.window.kernel[1] != 1) weight = Tensor();
        }
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const size_t inputs = p_.input_count() + (residual_ ? 1 : 0);
        expect_input_count(in, inputs, inputs);
        expect_output_count(out, 1);
        out[0] = output_desc(in);
        if (residual_)
            check(in.back().shape == out[0].shape && in.back().dtype == DType::F32, "the residual input (",
                  shape_str(in.back().shape), " ", dtype_name(in.back().dtype), ") must match the output (",
                  shape_str(out[0].shape), " float32)");
    }

    TensorDesc output_desc(const std::vector<TensorDesc>& in) const
    {
        const TensorDesc& x = in[0];
        if (onnx_.on) {
            const DType want = onnx_.input_dtype();
            check(x.dtype == want && !is_flat_path(x.shape), "ONNX's quantized form takes a ", dtype_name(want),
                  " (c,h,w) input, got ", dtype_name(x.dtype), " ", shape_str(x.shape));
        } else {
            check(x.dtype == DType::F32 || x.dtype == DType::I8, "input must be float32 or int8, got ",
                  dtype_name(x.dtype));
        }
        check(x.dtype == DType::F32 || int8_scale_term_ != 0,
              "an int8 input needs an int8 layer (int8_scale_term, param 8)");
        if (is_flat_path(x.shape)) {
            check(x.shape[0] == num_flat_inputs(), "expects ", num_flat_inputs(),
                  " input values (from weight_data_size), got ", x.shape[0]);
            return make_desc({p_.num_output}, DType::F32);
        }
        if (rank_ != 2) {
            const ConvKernel k = conv_kernel_for_input(p_, in, rank_, false);
            Shape o = {k.outch};
            for (const window::Axis& a : window_axes(x.shape, k)) o.push_back(a.out);
            return make_desc(o, DType::F32);
        }
        const Shape& s = x.shape;
        const KernelDims k = dims_of(conv_kernel_for_input(p_, in, 2, false));
        const ConvGeometry g = geometry(s[1], s[2], k);
        const DType y = onnx_.on ? onnx_.output_dtype()
                              : int8_scale_term_ > 100 ? DType::I8 : DType::F32;
        return make_desc({k.outch, g.rows.out, g.cols.out}, y);
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out) const override
    {
        if (is_flat_path(in[0].shape)) return static_cast<int64_t>(p_.num_output) * num_flat_inputs();
        const ConvKernel k = conv_kernel(p_, in, rank_, false);
        int64_t taps = 1;
        for (int64_t v : k.kernel) taps *= v;
        return shape_numel(out[0].shape) * (k.inch / p_.group) * taps;
    }

    int64_t weight_bytes() const override
    {
        size_t floats = dequant_.size() + gemm_weights_.floats() + direct_weights_.floats() +
                        int8_depthwise_weights_.size() + int8_depthwise_block_weights_.size();
        for (const PackedWeights& w : winograd_weights_) floats += w.floats();
        for (const PackedWeights& w : winograd_block_weights_) floats += w.floats();
        for (const std::vector<float>& chunk : int8_gemm_.packed) floats += chunk.size();
        std::lock_guard<std::mutex> lock(source_mutex_);
        const size_t int8_dot_bytes = int8_dot_.packed.size() + int8_dot_.start.size() * sizeof(int32_t);
        const size_t bf16_bytes =
            bf16_weights_ ? bf16_weights_->packed.size() * sizeof(uint16_t) + bf16_weights_->bias.size() * sizeof(float)
                          : 0;
        return weights_.bytes() + (source_.defined() ? static_cast<int64_t>(source_.nbytes()) : 0) +
               static_cast<int64_t>(floats * sizeof(float) + int8_dot_bytes + bf16_bytes);
    }

    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                                     PrepareContext& ctx) const override
    {
        auto st = std::make_unique<ConvState>();
        const TensorDesc& x = in[0];
        if (rank_ != 2) {
            st->path = Path::Reference;
            st->axes = window_axes(x.shape, conv_kernel(p_, in, rank_, false));
            return st;
        }
        if (is_flat_path(x.shape)) {
            st->path = Path::Flat;
            if (direct_ok_ && !(st->packed = lazy_form(gemm_weights_, gemm_builder()))) {
                // Only the direct tile's form is left: one pixel of planes.
                use_direct(*st, x, ctx);
            }
            if (int8_scale_term_ != 0 && x.dtype != DType::I8) st->quantized = ctx.request_scratch(x.shape[0]);
            return st;
        }
        st->k = dims_of(conv_kernel(p_, in, 2, false));
        const KernelDims& k = st->k;
        st->g = geometry(x.shape[1], x.shape[2], k);
        const ConvGeometry& g = st->g;
        st->dg = depthwise_geometry(x.shape[1], x.shape[2], g, k);
        st->gg = gemm_geometry(k, g);
        st->gg.in_h = x.shape[1] + g.rows.pad_begin + g.pad_bottom;
        st->gg.in_w = x.shape[2] + g.cols.pad_begin + g.pad_right;
        const int64_t padded_values = x.shape[0] * st->gg.in_h * st->gg.in_w;
        const bool pads = padded_values != shape_numel(x.shape);
        const int64_t outputs = shape_numel(out[0].shape);
        if (int8_scale_term_ == 0) {
            st->x_blocked = x.layout == Layout::ChannelBlocks;
            st->y_blocked = out[0].layout == Layout::ChannelBlocks;
            if (ctx.bf16() && !st->x_blocked && !st->y_blocked && takes_bf16(k) && use_bf16(*st, ctx)) return st;
            if (k.inch_g == 1 && k.outch == p_.group && st->dg.supported()) {
                st->path = Path::Depthwise;
                if (st->x_blocked || st->y_blocked) {
                    const int64_t block = depthwise_kernel().block;
                    st->block_weights = depthwise_block_weights(weights_.weight.data<float>(), k.outch,
                                                                k.kh * k.kw, block);
                    st->block_bias = padded_block_bias(weights_.bias_data(p_, {}), k.outch, block);
                } else if (!p_.dynamic) {
                    st->block_weights = channel_block_weights(st->dg, k.outch);
                }
                return st;
            }
            if (st->x_blocked && st->y_blocked && winograd_ok_ && (!prefers_blocked(k, g) || !direct_form_available())) {
                // The tile size the cost model picks, else one already built.
                const int pick = winograd_pick_tile(gemm_kernel(), k.inch_g, k.outch, g.rows.out, g.cols.out);
                for (int m : {pick, 6, 4})
                    if (m > 0 && use_winograd_blocks(*st, m, ctx)) return st;
            }
            if (direct_ok_ && (st->x_blocked || st->y_blocked || !plain_form_left())) {
                use_direct(*st, x, ctx);
                return st;
            }
            if (winograd_ok_) {
                const int m = eligible_form(winograd_pick_tile(gemm_kernel(), k.inch_g, k.outch, g.rows.out, g.cols.out),
                                            k, st->packed);
                if (m > 0) {
                    use_winograd(*st, m, x.shape[0], ctx);
                    return st;
                }
            }
            if (pads) st->padded = ctx.request_scratch(padded_values * 4);
            if (winograd_ok_ || direct_ok_) {
                use_gemm(*st, padded_values, ctx);
                if (!winograd_ok_) st->packed = lazy_form(gemm_weights_, gemm_builder());
                check(st->packed != nullptr, "internal: the GEMM's weights were released before they were packed");
                return st;
            }
            if (!uses_gemm(k.outch / p_.group)) {
                st->path = Path::Plain;
                return st;
            }
            use_gemm(*st, padded_values, ctx);
            if (!p_.dynamic) st->packed = gemm_weights_.data(); // packed at load
            if (p_.dynamic)
                st->dynamic_packed = ctx.request_scratch(conv2d_gemm_packed_floats(gemm_kernel(), st->gg) * 4);
            return st;
        }
        st->requant = onnx_.on || out[0].dtype == DType::I8; // a quantized output (int8; ONNX form: uint8, int32)
        st->top_scale = int8_scale_term_ > 100 ? top_scale_ : out[0].int8_scale;
        st->dg.pad_value = int8_pad_value(pad_value_);
        if (!int8_depthwise_weights_.empty() && st->dg.supported()) {
            // Requantized planes are finished one at a time by the thread that summed them.
            st->path = Path::Int8Depthwise;
            st->depthwise_int8 = depthwise_int8_kernel(st->dg);
            return st;
        }
        if (st->requant && int8_dot_.packed.empty()) st->requant_sums = ctx.request_scratch(outputs * 4);
        if (!int8_dot_.packed.empty()) {
            // The padded input as the kernel lays it out (channel quads).
            st->path = Path::Int8Dot;
            st->quad_offsets = conv2d_int8_dot_offsets(st->gg, int8_dot_);
            st->padded = ctx.request_scratch(conv2d_int8_dot_input_bytes(*int8_dot_.kern, st->gg));
        } else if (int8_gemm_.chunk_channels > 0) {
            st->path = Path::Int8Gemm;
            st->as_float = ctx.request_scratch(shape_numel(x.shape) * 4);
            if (pads) st->padded = ctx.request_scratch(padded_values * 4);
            st->int_sums = ctx.request_scratch(conv2d_int8_gemm_totals(int8_gemm_, st->gg) * 4);
        } else {
            st->path = Path::Int8Plain;
            if (x.dtype != DType::I8) st->quantized = ctx.request_scratch(shape_numel(x.shape));
            if (pads) st->padded = ctx.request_scratch(padded_values);
            st->int_sums = ctx.request_scratch(outputs * 4);
            st->columns = ctx.request_scratch(p_.group * g.rows.out * g.cols.out * k.inch_g * k.kh * k.kw);
        }
        return st;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const ConvState& st = ctx.state_as<ConvState>();
        const Tensor& x = in[0];
        const float* bias = weights_.bias_data(p_, in);
        const Epilogue ep{p_.activation, residual_ ? in.back().data<float>() : nullptr, out[0].data<float>()};
        switch (st.path) {
        case Path::Flat: forward_flat(x, st, ep, out[0], ctx); return;
        case Path::Depthwise:
            if (st.x_blocked || st.y_blocked)
                windows_by_blocks(st.dg, st.k.outch, WindowReduce::WeightedSum, st.block_weights.data(),
                                  st.block_bias.empty() ? nullptr : st.block_bias.data(), x.data<float>(),
                                  st.x_blocked, out[0].data<float>(), st.y_blocked, span_epilogue(ep), ctx);
            else
                forward_depthwise(x, st, weights_.weight_data(p_, in), bias, ep, out[0], ctx);
            return;
        case Path::Direct: forward_direct(x, st, ep, out[0], ctx); return;
        case Path::WinogradBlocks: forward_winograd_blocks(x, st, ep, out[0], ctx); return;
        case Path::Winograd: forward_winograd(padded_input<float>(x, st, st.padded, pad_value_, ctx), st, bias, ep, out[0], ctx); return;
        case Path::Gemm: forward_gemm(gemm_input(x, st, ctx), st, in, bias, ep, out[0], ctx); return;
        case Path::Plain: forward_plain(padded_input<float>(x, st, st.padded, pad_value_, ctx), st, in, bias, ep, out[0], ctx); return;
        case Path::Bf16: forward_bf16(x, st, ep, out[0], ctx); return;
        case Path::Reference:
            window::conv_forward(x, weights_.weight_data(p_, in), bias, p_.group, st.axes, pad_value_, out[0], ctx);
            ep(out[0].data<float>(), out[0].numel());
            return;
        default: forward_int8(x, st, bias, ep.residual, out[0], ctx); return;
        }
    }

private:
    // The last step over finished output values y[i], i in [v - y, v - y + n):
    // the residual input's value at the same index added (param 20), then the
    // activation.
    struct Epilogue {
        const Activation& activation;
        const float* residual; // none without param 20
        const float* y;

        void operator()(float* v, int64_t n) const
        {
            if (residual) {
                const float* r = residual + (v - y);
                for (int64_t i = 0; i < n; ++i) v[i] += r[i];
            }
            activation.apply(v, n);
        }
        bool empty() const { return !residual && activation.type == Activation::None; }
    };

    // How a forward runs, chosen in prepare for the input's shape and dtype.
    enum class Path { Flat, Depthwise, Direct, WinogradBlocks, Winograd, Gemm, Plain, Bf16, Int8Depthwise, Int8Dot, Int8Gemm, Int8Plain, Reference };

    // What prepare fixes for one input shape; the ints are scratch buffers (-1: none).
    struct ConvState : OpState {
        Path path = Path::Plain;
        KernelDims k;
        ConvGeometry g;
        Depthwise2dGeometry dg;
        Conv2dGemmGeometry gg; // with the padded input's size
        WinogradGeometry wg;
        int winograd = -1;     // Winograd's V and M
        const float* packed = nullptr; // the GEMM's or Winograd's packed weights (static weights)
        std::vector<window::Axis> axes; // the reference kernel's windows (1-D, 3-D)
        int padded = -1;       // the padded input (none: no padding)
        std::vector<int64_t> quad_offsets; // Int8Dot, Bf16: the laid-out input's words per depth step
        const Conv2dBf16* bf16 = nullptr;  // Bf16: the packed weights
        const DepthwiseInt8Kernel* depthwise_int8 = nullptr; // Int8Depthwise on byte dot products
        int quantized = -1;    // int8: the input quantized (when it is float)
        int as_float = -1;     // int8 float kernels: the input's int8 values as floats
        int requant_sums = -1; // int8 with an int8 output: the float sums before requantizing
        // int8: the output requantized to int8 with top_scale (int8_scale_term
        // > 100, or an int8 output the session chose: TensorDesc::int8_scale).
        bool requant = false;
        float top_scale = 0.f;
        int int_sums = -1;     // int8: int32 sums (the plain loop's, or a split GEMM depth's totals)
        int columns = -1;      // int8 plain loop: the unrolled input
        int dynamic_packed = -1; // GEMM with weights as an input: their packed copy
        int wide = -1;           // GEMM with wide rows: its outputs before they are copied out
        // Depthwise on small planes: the weights of whole blocks of the kernel's
        // channel block, as [block][tap][channel in block] (none: planes only).
        std::vector<float> block_weights;
        // Depthwise and direct layers: whether the input and the output are in
        // channel blocks, and (blocked depthwise, direct without a bias) the
        // bias over whole blocks.
        bool x_blocked = false, y_blocked = false;
        std::vector<float> block_bias;
        Conv2dBlockedProblem direct; // the direct tile's problem, but for the input and output
    };

    // Channel blocks for the input and the output (and a residual, read at
    // the output's index) of float depthwise layers and of one-group layers
    // with static weights that the direct tile suits (prefers_blocked).
    float int8_input_scale() const override
    {
        return rank_ == 2 && int8_scale_term_ != 0 && !onnx_.on ? bottom_scale_ : -1.f;
    }

    // An int8 layer that dequantizes its output can requantize it instead
    // (planes, not ncnn's flat 1-D path; no residual input).
    bool can_write_int8(const std::vector<TensorDesc>& in) const override
    {
        return rank_ == 2 && int8_scale_term_ != 0 && int8_scale_term_ < 100 && !onnx_.on && in.size() == 1 &&
               !is_flat_path(in[0].shape);
    }

    BlockedLayouts blocked_layouts(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&, bool bf16) const override
    {
        const TensorDesc& x = in[0];
        if (rank_ != 2 || p_.dynamic || int8_scale_term_ != 0 || x.dtype != DType::F32 || x.shape.size() != 3)
            return {};
        const KernelDims k = dims_of(conv_kernel(p_, in, 2, false));
        if (bf16 && takes_bf16(k)) return {}; // the bfloat16 path reads and writes planes
        const ConvGeometry g = geometry(x.shape[1], x.shape[2], k);
        const bool depthwise = k.inch_g == 1 && k.outch == p_.group &&
                               depthwise_geometry(x.shape[1], x.shape[2], g, k).supported();
        if (depthwise || (direct_ok_ && prefers_blocked(k, g) && direct_form_available())) {
            BlockedLayouts layouts{{0}, {1}};
            if (residual_) layouts.inputs.push_back(1);
            return layouts;
        }
        // Larger 3x3 stride-1 planes: Winograd on blocks when both sides are
        // blocked, else Winograd on planes (never the direct tile there).
        if (!(winograd_ok_ && takes_winograd(k) && winograd_block_form_available())) return {};
        BlockedLayouts layouts{{0}, {0}};
        if (residual_) layouts.inputs.push_back(0);
        return layouts;
    }

    bool is_flat_path(const Shape& s) const
    {
        return rank_ == 2 && !depthwise_ && !p_.dynamic && s.size() == 1 && p_.window.kernel[0] == 1 &&
               p_.window.kernel[1] == 1;
    }

    // The windows of every spatial axis (the reference kernel's geometry).
    std::vector<window::Axis> window_axes(const Shape& s, const ConvKernel& k) const
    {
        std::vector<window::Axis> axes(static_cast<size_t>(rank_));
        for (size_t i = 0; i < axes.size(); ++i) {
            check(s[i + 1] > 0, "expects a non-empty spatial size, got ", shape_str(s));
            axes[i] = conv_axis(p_, i, s[i + 1], k.kernel[i]).axis;
        }
        return axes;
    }
    int64_t num_flat_inputs() const { return p_.weight_data_size / p_.num_output; }

    KernelDims dims_of(const ConvKernel& c) const
    {
        KernelDims k;
        k.kh = c.kernel[0], k.kw = c.kernel[1], k.outch = c.outch, k.inch_g = c.inch / p_.group;
        return k;
    }

    // Throws when the kernel does not fit the padded input.
    ConvGeometry geometry(int64_t h, int64_t w, const KernelDims& k) const
    {
        const ConvAxis rows = conv_axis(p_, 0, h, k.kh), cols = conv_axis(p_, 1, w, k.kw);
        return ConvGeometry{rows.axis, cols.axis, rows.pad_end, cols.pad_end};
    }

    // x copied into scratch buffer `buffer`, a (c, ph, pw) plane set filled with
    // `pad` around it; x itself when there is no padding (buffer -1).
    template <class T>
    Tensor padded_input(const Tensor& x, const ConvState& st, int buffer, T pad, const ExecContext& ctx) const
    {
        if (buffer < 0) return x;
        const ConvGeometry& g = st.g;
        const int64_t c = x.dim(0), h = x.dim(1), w = x.dim(2);
        // The layer's own padded extent; past it (Winograd's whole tiles) 0.
        const int64_t own_h = h + g.rows.pad_begin + g.pad_bottom, own_w = w + g.cols.pad_begin + g.pad_right;
        Tensor p = Tensor::wrap(ctx.scratch(buffer), {c, st.gg.in_h, st.gg.in_w}, x.dtype());
        pad_planes(x.data<T>(), c, 1, h, w, g.rows.pad_begin, g.cols.pad_begin, pad, own_h, own_w, p.data<T>(),
                   st.gg.in_h, st.gg.in_w, ctx);
        return p;
    }

    // The Winograd path with tiles of side m. Its padded input covers whole
    // tiles and the two columns past the last patch that the transform reads
    // (0 past the layer's own padding), so that no patch is gathered value by
    // value.
    static void use_winograd(ConvState& st, int m, int64_t channels, PrepareContext& ctx)
    {
        const int64_t out_h = st.g.rows.out, out_w = st.g.cols.out;
        st.path = Path::Winograd;
        st.gg.in_h = std::max(st.gg.in_h, (out_h + m - 1) / m * m + 2);
        st.gg.in_w = std::max(st.gg.in_w, (out_w + m - 1) / m * m + 4);
        st.padded = ctx.request_scratch(channels * st.gg.in_h * st.gg.in_w * 4);
        st.wg = WinogradGeometry{m, st.k.inch_g, st.k.outch, st.gg.in_h, st.gg.in_w, out_h, out_w};
        st.winograd = ctx.request_scratch(winograd_scratch_floats(gemm_kernel(), st.wg) * 4);
    }

    // The float GEMM path; its input goes through the padding buffer whenever
    // the GEMM wants its rows split, padded or not.
    static void use_gemm(ConvState& st, int64_t padded_values, PrepareContext& ctx)
    {
        st.gg.wide_rows = conv2d_gemm_wants_wide_rows(gemm_kernel(), st.gg);
        if (st.gg.wide_rows && !conv2d_gemm_groups_in_parallel(st.gg, ctx.threads()))
            st.wide = ctx.request_scratch(st.gg.outch_g * st.gg.wide_columns() * 4);
        st.path = Path::Gemm;
        st.gg.split_columns = conv2d_gemm_wants_split_columns(st.gg);
        if (st.gg.split_columns && st.padded < 0) st.padded = ctx.request_scratch(padded_values * 4);
    }

    // x padded for the GEMM path, its rows laid out as st.gg says.
    Tensor gemm_input(const Tensor& x, const ConvState& st, const ExecContext& ctx) const
    {
        if (!st.gg.split_columns) return padded_input<float>(x, st, st.padded, pad_value_, ctx);
        const ConvGeometry& g = st.g;
        const int64_t c = x.dim(0), h = x.dim(1), w = x.dim(2), ph = st.gg.in_h, pw = st.gg.in_w;
        Tensor p = Tensor::wrap(ctx.scratch(st.padded), {c, ph, pw}, DType::F32);
        const float* s = x.data<float>();
        float* d = p.data<float>();
        ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
            for (int64_t ch = begin; ch < end; ++ch) {
                float* dp = d + ch * ph * pw;
                const int64_t top = g.rows.pad_begin, bottom = top + h;
                std::fill(dp, dp + top * pw, pad_value_);
                for (int64_t y = 0; y < h; ++y)
                    conv2d_gemm_input_row(st.gg, s + (ch * h + y) * w, w, g.cols.pad_begin, pad_value_,
                                          dp + (top + y) * pw);
                std::fill(dp + bottom * pw, dp + ph * pw, pad_value_);
            }
        });
        return p;
    }

    // o[y][x] += k * in[y*stride_h][x*stride_w] over the output plane.
    void accumulate_tap(float* o, const float* in, int64_t in_w, float k, const ConvGeometry& g) const
    {
        for (int64_t y = 0; y < g.rows.out; ++y) {
            const float* row = in + y * g.rows.stride * in_w;
            float* orow = o + y * g.cols.out;
            if (g.cols.stride == 1)
                for (int64_t x = 0; x < g.cols.out; ++x) orow[x] += k * row[x];
            else
                for (int64_t x = 0; x < g.cols.out; ++x) orow[x] += k * row[x * g.cols.stride];
        }
    }
    // Sum over one output channel's input channels and taps into `o` (already initialised).
    void accumulate_channel(float* o, const float* src, int64_t ph, int64_t pw, const float* wt, int64_t oc,
                            const KernelDims& k, const ConvGeometry& g) const
    {
        const int64_t out_per_group = k.outch / p_.group;
        const int64_t grp = oc / out_per_group;
        const int64_t ksize = k.kh * k.kw;
        for (int64_t ic = 0; ic < k.inch_g; ++ic) {
            const float* in_plane = src + (grp * k.inch_g + ic) * ph * pw;
            const float* kp = wt + (oc * k.inch_g + ic) * ksize;
            for (int64_t ky = 0; ky < k.kh; ++ky)
                for (int64_t kx = 0; kx < k.kw; ++kx)
                    accumulate_tap(o, in_plane + ky * g.rows.dilation * pw + kx * g.cols.dilation, pw,
                                   kp[ky * k.kw + kx], g);
        }
    }

    // The form a layer that may take Winograd runs a shape with: `preferred`
    // (a tile size, 0 for the direct GEMM), built from the loaded weights if
    // need be; once those are dropped (weights_released), a form already built,
    // which computes the same convolution. Sets `packed`; returns the form.
    int eligible_form(int preferred, const KernelDims& k, const float*& packed) const
    {
        std::lock_guard<std::mutex> lock(source_mutex_);
        const auto built = [&](int m) { return m == 0 ? gemm_weights_.built() : winograd_weights_[m == 6].built(); };
        int m = preferred;
        if (!built(m) && !source_.defined()) m = built(0) ? 0 : built(4) ? 4 : 6;
        if (m == 0)
            packed = gemm_weights_.get(
                [&] { return conv2d_gemm_pack_weights(gemm_kernel(), source_.data<float>(), gemm_geometry(k, {})); });
        else
            packed = winograd_weights_[m == 6].get(
                [&] { return winograd_pack_weights(gemm_kernel(), m, source_.data<float>(), k.outch, k.inch_g); });
        if (drop_source_) source_ = Tensor();
        return m;
    }

    void weights_released() override
    {
        std::lock_guard<std::mutex> lock(source_mutex_);
        drop_source_ = true;
        if (gemm_weights_.built() || winograd_weights_[0].built() || winograd_weights_[1].built() ||
            winograd_block_weights_[0].built() || winograd_block_weights_[1].built() || direct_weights_.built())
            source_ = Tensor();
    }

    // Layers (float, static weights, one group) that may take the direct
    // tile on channel blocks.
    // Grouped layers too when each group's channels are whole blocks (a
    // group's blocks then follow the previous group's, in either layout).
    bool takes_direct() const
    {
        const int64_t block = conv2d_blocked_kernel().block;
        return rank_ == 2 && !p_.dynamic &&
               (p_.group == 1 || (p_.in_channels / p_.group % block == 0 && p_.num_output / p_.group % block == 0));
    }
    // 1x1 stride-1 layers: every output pixel is the (padded) input's pixel
    // at the same place, so the direct tile takes the plane as one row.
    static bool pointwise_shape(const KernelDims& k, const ConvGeometry& g)
    {
        return k.kh == 1 && k.kw == 1 && g.rows.stride == 1 && g.cols.stride == 1;
    }
    // Whether a layer the direct tile can take prefers it: all but 3x3
    // stride-1 layers on planes over 8x8, which Winograd computes faster, on
    // blocks when their neighbours are (measured against the direct tile:
    // 0.8 at 14x14 with 256 channels, ResNet-50; 0.55-0.8 on ResNet-18's
    // 56x56 and 28x28 layers) and on planes otherwise. At 7x7 Winograd's
    // tiles overhang most and its weights (up to 64/9 of the layer's) stream
    // for a few tiles: 2.7x the direct tile's time on 512 channels.
    bool prefers_blocked(const KernelDims& k, const ConvGeometry& g) const
    {
        const int64_t plane = g.rows.out * g.cols.out;
        return !(winograd_ok_ && takes_winograd(k) && plane > 64);
    }

    // Winograd on channel blocks with tiles of side m, if its weights are (or
    // can still be) built; it reads the input's padding in place.
    bool use_winograd_blocks(ConvState& st, int m, PrepareContext& ctx) const
    {
        const int64_t block = conv2d_blocked_kernel().block;
        st.packed = lazy_form(winograd_block_weights_[m == 6], [this, m, block] {
            return winograd_pack_block_weights(m, source_.data<float>(), p_.num_output, p_.in_channels, block);
        });
        if (!st.packed) return false;
        st.path = Path::WinogradBlocks;
        st.wg = WinogradGeometry{m, st.k.inch_g, st.k.outch, st.gg.in_h, st.gg.in_w, st.g.rows.out, st.g.cols.out};
        st.winograd = ctx.request_scratch(winograd_block_scratch_floats(st.wg, block) * 4);
        const std::vector<float> zeros(static_cast<size_t>(p_.num_output), 0.f);
        st.block_bias = padded_block_bias(weights_.bias.defined() ? weights_.bias.data<float>() : zeros.data(),
                                          p_.num_output, block);
        return true;
    }
    bool winograd_block_form_available() const
    {
        std::lock_guard<std::mutex> lock(source_mutex_);
        return source_.defined() || winograd_block_weights_[0].built() || winograd_block_weights_[1].built();
    }

    // The direct tile's path: its weights, the bias over whole blocks, and a
    // padded copy of the input when the layer pads.
    void use_direct(ConvState& st, const TensorDesc& x, PrepareContext& ctx) const
    {
        st.path = Path::Direct;
        st.packed = lazy_form(direct_weights_, direct_builder());
        check(st.packed != nullptr, "internal: the direct tile's weights were released before they were packed");
        const int64_t block = conv2d_blocked_kernel().block;
        const std::vector<float> zeros(static_cast<size_t>(p_.num_output), 0.f);
        st.block_bias = padded_block_bias(weights_.bias.defined() ? weights_.bias.data<float>() : zeros.data(),
                                          p_.num_output, block);
        st.padded = -1;
        Conv2dBlockedProblem& pr = st.direct; // group 0's
        pr = pointwise_problem(p_.in_channels / p_.group, p_.num_output / p_.group, 1);
        pr.packed = st.packed, pr.bias = st.block_bias.data();
        pr.x_blocked = st.x_blocked, pr.y_blocked = st.y_blocked;
        if (x.shape.size() == 1) return; // the flat path
        const ConvGeometry& g = st.g;
        if (pointwise_shape(st.k, g)) {
            pr.in_w = pr.out_w = g.rows.out * g.cols.out;
        } else {
            pr.in_h = st.gg.in_h, pr.in_w = st.gg.in_w, pr.out_h = g.rows.out, pr.out_w = g.cols.out;
            pr.kh = st.k.kh, pr.kw = st.k.kw, pr.stride_h = g.rows.stride, pr.stride_w = g.cols.stride;
            pr.dilation_h = g.rows.dilation, pr.dilation_w = g.cols.dilation;
        }
        const int64_t channels = st.x_blocked ? (x.shape[0] + block - 1) / block * block : x.shape[0];
        if (st.gg.in_h * st.gg.in_w != x.shape[1] * x.shape[2])
            st.padded = ctx.request_scratch(channels * st.gg.in_h * st.gg.in_w * 4);
    }
    std::function<std::vector<float>()> direct_builder() const
    {
        return [this] {
            // Group after group.
            const int64_t out_g = p_.num_output / p_.group, in_g = p_.in_channels / p_.group;
            const int64_t taps = p_.window.kernel[0] * p_.window.kernel[1];
            std::vector<float> packed;
            for (int64_t grp = 0; grp < p_.group; ++grp) {
                const std::vector<float> part = pack_conv2d_blocked_weights(
                    source_.data<float>() + grp * out_g * in_g * taps, out_g, in_g, taps, conv2d_blocked_kernel().block);
                packed.insert(packed.end(), part.begin(), part.end());
            }
            return packed;
        };
    }
    std::function<std::vector<float>()> gemm_builder() const
    {
        const KernelDims k{p_.window.kernel[1], p_.window.kernel[0], p_.num_output, p_.in_channels / p_.group};
        return [this, k] { return conv2d_gemm_pack_weights(gemm_kernel(), source_.data<float>(), gemm_geometry(k, {})); };
    }
    // A lazily packed form of a layer that keeps its loaded weights: built
    // now if need be; nullptr once those are gone and it was never built.
    const float* lazy_form(const PackedWeights& form, const std::function<std::vector<float>()>& build) const
    {
        std::lock_guard<std::mutex> lock(source_mutex_);
        if (!form.built() && !source_.defined()) return nullptr;
        const float* packed = form.get(build);
        if (drop_source_) source_ = Tensor();
        return packed;
    }
    bool direct_form_available() const
    {
        std::lock_guard<std::mutex> lock(source_mutex_);
        return direct_weights_.built() || source_.defined();
    }
    // Whether a form for planes (GEMM or Winograd) is built or can still be.
    bool plain_form_left() const
    {
        std::lock_guard<std::mutex> lock(source_mutex_);
        return source_.defined() || gemm_weights_.built() || winograd_weights_[0].built() ||
               winograd_weights_[1].built();
    }

    // The residual and the activation over a finished span of the output.
    static OutputSpanFn span_epilogue(const Epilogue& ep)
    {
        if (ep.empty()) return {};
        return [&ep](float* v, int64_t n) { ep(v, n); };
    }

    void forward_direct(const Tensor& x, const ConvState& st, const Epilogue& ep, Tensor& y,
                        const ExecContext& ctx) const
    {
        // The problem as prepared (use_direct); x's logical size from the
        // geometry (a blocked x has its stored shape).
        Conv2dBlockedProblem pr = st.direct;
        pr.x = x.data<float>();
        if (st.padded >= 0) {
            float* padded = ctx.scratch_as<float>(st.padded);
            const int64_t block = st.x_blocked ? conv2d_blocked_kernel().block : 1;
            pad_planes(pr.x, (p_.in_channels + block - 1) / block, block, st.dg.in_h, st.dg.in_w, st.g.rows.pad_begin,
                       st.g.cols.pad_begin, pad_value_, st.gg.in_h, st.gg.in_w, padded, st.gg.in_h, st.gg.in_w, ctx);
            pr.x = padded;
        }
        // ReLU and Clip applied by the tile as it stores (unless a residual comes first).
        float bounds[2];
        pr.clamp = ep.residual ? nullptr : p_.activation.as_clamp(bounds);
        pr.y = y.data<float>();
        // Group g's input, output, weights and bias follow group g-1's (whole
        // blocks of channels: the same offsets in both layouts).
        const int64_t block = conv2d_blocked_kernel().block;
        const int64_t panels = (pr.out_ch + block - 1) / block * block * pr.in_ch * pr.taps(); // a group's weights
        for (int64_t grp = 0; grp < p_.group; ++grp) {
            conv2d_by_blocks(pr, pr.clamp ? OutputSpanFn() : span_epilogue(ep), ctx);
            pr.x += pr.in_ch * pr.in_h * pr.in_w, pr.y += pr.out_ch * pr.out_pixels();
            pr.packed += panels, pr.bias += pr.out_ch;
        }
    }

    void forward_winograd_blocks(const Tensor& x, const ConvState& st, const Epilogue& ep, Tensor& y,
                                 const ExecContext& ctx) const
    {
        const ConvGeometry& g = st.g;
        const WinogradBlockSource src{x.data<float>(), st.dg.in_h, st.dg.in_w, g.rows.pad_begin, g.cols.pad_begin,
                                      st.gg.in_h, st.gg.in_w, pad_value_};
        float bounds[2];
        const float* clamp = ep.residual ? nullptr : p_.activation.as_clamp(bounds);
        conv2d_winograd_blocks(conv2d_blocked_kernel(), winograd_kernel(), st.wg, st.packed, src,
                               st.block_bias.data(), clamp, y.data<float>(), ctx.scratch_as<float>(st.winograd),
                               clamp ? OutputSpanFn() : span_epilogue(ep), ctx);
    }

    // 3x3 stride-1 layers with enough channels for the transforms to pay off
    // (static float weights, one group).
    bool takes_winograd(const KernelDims& k) const
    {
        return !p_.dynamic && p_.group == 1 && k.kh == 3 && k.kw == 3 && p_.window.stride[0] == 1 &&
               p_.window.stride[1] == 1 && p_.window.dilation[0] == 1 && p_.window.dilation[1] == 1 &&
               k.inch_g >= 8 && k.outch >= 8;
    }
    // The epilogue over finished output pieces; empty without one, or when
    // the GEMM tile applies the activation as `clamp` bounds (no residual).
    static std::function<void(int64_t, float*, int64_t)> epilogue_post(const Epilogue& ep, const float* clamp)
    {
        if (ep.empty() || clamp) return {};
        return [&ep](int64_t, float* v, int64_t n) { ep(v, n); };
    }

    // Winograd's post sees a tile buffer, not the output: with a residual the
    // epilogue runs over the finished output instead.
    void forward_winograd(const Tensor& padded, const ConvState& st, const float* bias, const Epilogue& ep, Tensor& y,
                          const ExecContext& ctx) const
    {
        const Epilogue in_tiles{p_.activation, nullptr, nullptr}; // the activation alone
        conv2d_winograd(gemm_kernel(), winograd_kernel(), st.wg, st.packed, padded.data<float>(), bias,
                        y.data<float>(), ctx.scratch_as<float>(st.winograd),
                        ep.residual ? nullptr : epilogue_post(in_tiles, nullptr), ctx);
        if (!ep.residual) return;
        const int64_t plane = y.numel() / y.dim(0);
        ctx.parallel_for(y.dim(0), [&](int64_t begin, int64_t end) {
            ep(y.data<float>() + begin * plane, (end - begin) * plane);
        });
    }

    // GEMMs pay off from a few output channels per group; below that (depthwise)
    // the per-channel loops are as fast.
    static bool uses_gemm(int64_t outch_per_group) { return outch_per_group >= 4; }

    Conv2dGemmGeometry gemm_geometry(const KernelDims& k, const ConvGeometry& g) const
    {
        Conv2dGemmGeometry gg;
        gg.groups = p_.group, gg.inch_g = k.inch_g, gg.outch_g = k.outch / p_.group;
        gg.kh = k.kh, gg.kw = k.kw;
        gg.stride_h = g.rows.stride, gg.stride_w = g.cols.stride;
        gg.dilation_h = g.rows.dilation, gg.dilation_w = g.cols.dilation;
        gg.out_h = g.rows.out, gg.out_w = g.cols.out;
        return gg;
    }

    // One-group layers with enough channels to fill the bfloat16 tiles
    // (fewer waste most of AMX's 32-channel blocks: a first layer on 3) and
    // deep enough to repay laying out their input and leaving channel blocks
    // (128 products a sum: below it, measured on MobileNet-V2, ResNet-50 and
    // ShuffleNet-V2, the fp32 direct tile on blocks was as fast or faster).
    bool takes_bf16(const KernelDims& k) const
    {
        return (direct_ok_ || winograd_ok_) && p_.group == 1 && k.inch_g >= 16 && k.outch >= 16 && k.inch_g * k.kh * k.kw >= 128;
    }
    // The bfloat16 path, if its weights are (or can still be) built.
    bool use_bf16(ConvState& st, PrepareContext& ctx) const
    {
        {
            std::lock_guard<std::mutex> lock(source_mutex_);
            if (!bf16_weights_ && source_.defined())
                bf16_weights_ = std::make_shared<const Conv2dBf16>(conv2d_bf16_prepare(
                    bf16_gemm_kernel(), source_.data<float>(),
                    weights_.bias.defined() ? weights_.bias.data<float>() : nullptr, gemm_geometry(st.k, {})));
            // The loaded weights stay (unless an fp32 form drops them): an fp32 session may want one.
            if (!bf16_weights_) return false;
            st.bf16 = bf16_weights_.get();
        }
        st.path = Path::Bf16;
        st.quad_offsets = conv2d_bf16_offsets(st.gg, *st.bf16);
        st.padded = ctx.request_scratch(conv2d_bf16_input_words(bf16_gemm_kernel(), st.gg) * 4);
        return true;
    }
    void forward_bf16(const Tensor& x, const ConvState& st, const Epilogue& ep, Tensor& y,
                      const ExecContext& ctx) const
    {
        const Bf16GemmKernel& kern = bf16_gemm_kernel();
        uint32_t* input = ctx.scratch_as<uint32_t>(st.padded);
        conv2d_bf16_input(kern, *st.bf16, st.gg, x.data<float>(), x.dim(1), x.dim(2), st.g.rows.pad_begin,
                          st.g.cols.pad_begin, pad_value_, input, ctx);
        const int64_t plane = st.g.rows.out * st.g.cols.out;
        float* out = y.data<float>();
        conv2d_bf16(kern, *st.bf16, st.gg, st.quad_offsets, input,
                    [&](int64_t oc, int64_t pixel, const float* sums, int64_t n) {
                        float* v = out + oc * plane + pixel;
                        std::copy(sums, sums + n, v);
                        ep(v, n);
                    },
                    ctx);
    }

    void forward_gemm(const Tensor& padded, const ConvState& st, const std::vector<Tensor>& in, const float* bias,
                      const Epilogue& ep, Tensor& y, const ExecContext& ctx) const
    {
        const GemmKernel& kern = gemm_kernel();
        const float* packed = st.packed;
        if (p_.dynamic) {
            float* dst = ctx.scratch_as<float>(st.dynamic_packed);
            conv2d_gemm_pack_weights_into(kern, weights_.weight_data(p_, in), st.gg, dst);
            packed = dst;
        }
        // ReLU and Clip are applied by the GEMM tile as it stores (unless a
        // residual comes first); the others after it.
        float bounds[2];
        const float* clamp = ep.residual ? nullptr : p_.activation.as_clamp(bounds);
        conv2d_gemm(kern, st.gg, packed, padded.data<float>(), bias, y.data<float>(), epilogue_post(ep, clamp), ctx,
                    clamp, st.wide >= 0 ? ctx.scratch_as<float>(st.wide) : nullptr);
    }

    Depthwise2dGeometry depthwise_geometry(int64_t h, int64_t w, const ConvGeometry& g, const KernelDims& k) const
    {
        Depthwise2dGeometry dg;
        dg.in_h = h, dg.in_w = w;
        dg.pad_top = g.rows.pad_begin, dg.pad_left = g.cols.pad_begin, dg.pad_value = pad_value_;
        dg.out_h = g.rows.out, dg.out_w = g.cols.out;
        dg.kh = k.kh, dg.kw = k.kw, dg.stride_h = g.rows.stride, dg.stride_w = g.cols.stride;
        dg.dilation_h = g.rows.dilation, dg.dilation_w = g.cols.dilation;
        return dg;
    }

    // The whole blocks' weights for planes on small planes (depthwise_block_weights of them).
    std::vector<float> channel_block_weights(const Depthwise2dGeometry& dg, int64_t channels) const
    {
        const int64_t block = depthwise_kernel().block, blocks = channels / block;
        if (!dg.blocked() || blocks == 0) return {};
        return depthwise_block_weights(weights_.weight.data<float>(), blocks * block, dg.kh * dg.kw, block);
    }

    // One input channel and one output channel per group, by channel blocks
    // (st.block_weights) and then single planes; the kernels pad by themselves.
    void forward_depthwise(const Tensor& x, const ConvState& st, const float* wt, const float* bias,
                           const Epilogue& ep, Tensor& y, const ExecContext& ctx) const
    {
        const Depthwise2dGeometry& dg = st.dg;
        const DepthwiseKernel& kern = depthwise_kernel();
        const int64_t in_plane = dg.in_h * dg.in_w, out_plane = dg.out_h * dg.out_w, taps = dg.kh * dg.kw;
        const int64_t block = kern.block, blocks = static_cast<int64_t>(st.block_weights.size()) / (block * taps);
        const int64_t channels = y.dim(0), units = blocks + channels - blocks * block;
        const float* src = x.data<float>();
        float* dst = y.data<float>();
        const int64_t scratch_floats = std::max(dg.scratch_floats(), blocks ? dg.block_scratch_floats(block) : 0);
        ctx.parallel_for(units, [&](int64_t begin, int64_t end) {
            thread_local std::vector<float> scratch; // the thread's own, kept from call to call
            scratch.resize(std::max(scratch.size(), static_cast<size_t>(scratch_floats)));
            // Unit u: block u, or past the blocks one channel. The activation
            // runs over a few planes at once (small planes would spend more on
            // the calls than on the values), while they are in cache.
            const auto first_channel = [&](int64_t u) { return u < blocks ? u * block : u - blocks + blocks * block; };
            int64_t unactivated = first_channel(begin);
            for (int64_t u = begin; u < end; ++u) {
                const int64_t ch = first_channel(u);
                if (u < blocks)
                    kern.channels(dg, {src + ch * in_plane, in_plane, block}, st.block_weights.data() + u * block * taps,
                                  bias ? bias + ch : nullptr, {dst + ch * out_plane, out_plane, block}, scratch.data());
                else
                    kern.plane(dg, src + ch * in_plane, wt + ch * taps, bias ? bias[ch] : 0.f, dst + ch * out_plane,
                               scratch.data());
                const int64_t done = first_channel(u + 1);
                if ((done - unactivated) * out_plane < 4096 && u + 1 < end) continue;
                ep(dst + unactivated * out_plane, (done - unactivated) * out_plane);
                unactivated = done;
            }
        });
    }

    // The grouped forms neither kernel takes: accumulate per output channel.
    void forward_plain(const Tensor& padded, const ConvState& st, const std::vector<Tensor>& in, const float* bias,
                       const Epilogue& ep, Tensor& y, const ExecContext& ctx) const
    {
        const KernelDims& k = st.k;
        const ConvGeometry& g = st.g;
        const float* wt = weights_.weight_data(p_, in);
        const int64_t ph = padded.dim(1), pw = padded.dim(2);
        const float* src = padded.data<float>();
        float* dst = y.data<float>();
        const int64_t plane = g.rows.out * g.cols.out;
        ctx.parallel_for(k.outch, [&](int64_t begin, int64_t end) {
            for (int64_t oc = begin; oc < end; ++oc) {
                float* o = dst + oc * plane;
                std::fill(o, o + plane, bias ? bias[oc] : 0.f);
                accumulate_channel(o, src, ph, pw, wt, oc, k, g);
                ep(o, plane);
            }
        });
    }

    // x quantized with the bottom scale into scratch buffer `buffer`; x itself when it is int8.
    Tensor quantized_input(const Tensor& x, int buffer, const ExecContext& ctx) const
    {
        if (x.dtype() == DType::I8) return x;
        Tensor q = Tensor::wrap(ctx.scratch(buffer), x.shape(), DType::I8);
        const int64_t c = x.dim(0), plane = x.numel() / c;
        ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
            const int64_t from = begin * plane, n = (end - begin) * plane;
            if (x.dtype() == DType::U8) { // u read as u - 128
                for (int64_t i = from; i < from + n; ++i) q.data<uint8_t>()[i] = x.data<uint8_t>()[i] ^ 0x80u;
                return;
            }
            int8_output_kernel().quantize(x.data<float>() + from, n, bottom_scale_, q.data<int8_t>() + from);
        });
        return q;
    }

    // The weights of the exact float paths: the depthwise kernel takes them as
    // floats, the GEMM packed in chunks.
    void prepare_int8_kernels()
    {
        const KernelDims k{p_.window.kernel[1], p_.window.kernel[0], p_.num_output, p_.in_channels / p_.group};
        const int8_t* w = weights_.weight.data<int8_t>();
        const Conv2dGemmGeometry gg = gemm_geometry(k, {});
        if (k.inch_g == 1 && k.outch == p_.group) {
            int8_depthwise_weights_.assign(w, w + weights_.weight.numel());
            // The byte dot products read the input + 128: each channel's sums start from -128 * its weight sum.
            int8_depthwise_starts_.clear();
            for (int64_t sum : int8_gemm_row_sums(w, k.outch, k.kh * k.kw, k.kh * k.kw))
                int8_depthwise_starts_.push_back(static_cast<int32_t>(static_cast<uint32_t>(-128 * sum)));
            int8_depthwise_block_weights_ = depthwise_block_weights(int8_depthwise_weights_.data(), k.outch,
                                                                    k.kh * k.kw, depthwise_kernel().block);
        } else if (uses_gemm(k.outch / p_.group) && (int8_gemm_has_dot_instructions() || Conv2dInt8Gemm::supported(gg))) {
            if (int8_gemm_has_dot_instructions())
                int8_dot_ = conv2d_int8_dot_prepare(int8_gemm_kernel_for_runs(k.inch_g), w, gg);
            else
                int8_gemm_ = conv2d_int8_gemm_prepare(gemm_kernel(), w, gg);
            // The packed copy replaces the int8 weights, as for fp32, except for
            // a 1x1 kernel, whose 1-D input path (forward_flat) reads them.
            if (k.kh != 1 || k.kw != 1) weights_.weight = Tensor();
        }
    }

    // The input as the floats of its int8 values (exact), in scratch: quantized
    // with the bottom scale unless it already is int8.
    Tensor quantized_as_float(const Tensor& x, const ConvState& st, const ExecContext& ctx) const
    {
        Tensor f = Tensor::wrap(ctx.scratch(st.as_float), x.shape(), DType::F32);
        const int64_t plane = x.numel() / x.dim(0);
        ctx.parallel_for(x.dim(0), [&](int64_t begin, int64_t end) {
            channels_as_float(x, begin, end - begin, f.data<float>() + begin * plane);
        });
        return f;
    }

    // `count` channel planes of x from `first` as the floats of their int8 values.
    void channels_as_float(const Tensor& x, int64_t first, int64_t count, float* dst) const
    {
        const int64_t plane = x.numel() / x.dim(0), from = first * plane, n = count * plane;
        if (x.dtype() == DType::I8)
            std::copy(x.data<int8_t>() + from, x.data<int8_t>() + from + n, dst);
        else if (x.dtype() == DType::U8) // u read as u - 128
            for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(int(x.data<uint8_t>()[from + i]) - 128);
        else
            for (int64_t i = 0; i < n; ++i) dst[i] = float2int8(x.data<float>()[from + i] * bottom_scale_);
    }

    // Int8: every output's int32 sum, as the float it converts to, from the
    // depthwise or GEMM float kernels when they apply (exact), else from the
    // plain loop; each finished piece is dequantized where it lies.
    void forward_int8(const Tensor& x, const ConvState& st, const float* bias, const float* residual, Tensor& y,
                      const ExecContext& ctx) const
    {
        const Residual res{residual, y};
        if (st.path == Path::Int8Depthwise) return int8_depthwise(x, st, bias, res, y, ctx);
        if (st.path == Path::Int8Dot) return int8_on_dot_kernel(x, st, bias, res, y, ctx);
        float* sums = st.requant ? ctx.scratch_as<float>(st.requant_sums) : y.data<float>();
        const SumsFinished finish = [&](int64_t oc, float* v, int64_t n) {
            if (st.requant) return finish_sums(oc, bias, v, n, v, output_at(y, v - sums), nullptr, st.top_scale);
            finish_sums(oc, bias, v, n, v, nullptr, res.at(v), 0.f);
        };
        if (st.path == Path::Int8Gemm)
            int8_gemm(x, st, sums, finish, ctx);
        else
            int8_plain(x, st, sums, finish, ctx);
    }

    // finish(output channel, sums, count): a finished piece of an output plane.
    using SumsFinished = std::function<void(int64_t, float*, int64_t)>;

    // The residual input (param 20) of a float output y: at(v) is its value
    // for the output value at v (null without a residual).
    struct Residual {
        const float* values;
        const Tensor& y;
        const float* at(const float* v) const { return values ? values + (v - y.data<float>()) : nullptr; }
    };

    // Depthwise: the float kernel from a zero bias, at most kMaxDepthwiseTaps
    // products per sum (exact), each plane dequantized (and requantized) as
    // soon as it is summed: a requantized layer sums into a plane of the
    // thread's own, which stays in its cache.
    void int8_depthwise(const Tensor& x, const ConvState& st, const float* bias, const Residual& res, Tensor& y,
                        const ExecContext& ctx) const
    {
        const Depthwise2dGeometry& dg = st.dg;
        if (st.depthwise_int8) return int8_depthwise_bytes(x, st, bias, res, y, ctx);
        const bool requant = st.requant;
        const DepthwiseKernel& kern = depthwise_kernel();
        const int64_t in_plane = dg.in_h * dg.in_w, out_plane = dg.out_h * dg.out_w, taps = dg.kh * dg.kw;
        // Small planes by blocks of channels (vectors across them), large ones plane by plane.
        const int64_t width = dg.blocked() ? kern.block : 1, channels = p_.group;
        const int64_t scratch_floats = width > 1 ? dg.block_scratch_floats(width) : dg.scratch_floats();
        ctx.parallel_for((channels + width - 1) / width, [&](int64_t begin, int64_t end) {
            // The thread's own, kept from call to call: the unit's input planes
            // as floats (converted where they are summed, in cache), the
            // kernel's scratch, the requantized sums.
            thread_local std::vector<float> planes, scratch, sums;
            planes.resize(std::max(planes.size(), static_cast<size_t>(width * in_plane)));
            scratch.resize(std::max(scratch.size(), static_cast<size_t>(scratch_floats)));
            sums.resize(std::max(sums.size(), static_cast<size_t>(width * out_plane)));
            for (int64_t u = begin; u < end; ++u) {
                const int64_t ch = u * width, lanes = std::min(width, channels - ch);
                channels_as_float(x, ch, lanes, planes.data());
                // A dequantized output is summed where it goes, a requantized one in `sums`.
                float* out = requant ? sums.data() : y.data<float>() + ch * out_plane;
                if (width > 1)
                    kern.channels(dg, {planes.data(), in_plane, lanes},
                                  int8_depthwise_block_weights_.data() + u * width * taps, nullptr,
                                  {out, out_plane, lanes}, scratch.data());
                else
                    kern.plane(dg, planes.data(), int8_depthwise_weights_.data() + ch * taps, 0.f, out,
                               scratch.data());
                for (int64_t c = 0; c < lanes; ++c)
                    finish_sums(ch + c, bias, out + c * out_plane, out_plane, out + c * out_plane,
                                requant ? output_at(y, (ch + c) * out_plane) : nullptr,
                                requant ? nullptr : res.at(out + c * out_plane), st.top_scale);
            }
        });
    }

    // Int8 depthwise on byte dot products (kernels/depthwise_int8.h): each
    // channel's plane padded as unsigned bytes, summed in int32, finished as
    // the dot-product kernel's sums are.
    void int8_depthwise_bytes(const Tensor& x, const ConvState& st, const float* bias, const Residual& res, Tensor& y,
                              const ExecContext& ctx) const
    {
        const Depthwise2dGeometry& dg = st.dg;
        const int64_t row_bytes = depthwise_int8_row_bytes(dg), out_plane = dg.out_h * dg.out_w;
        const int8_t* w = weights_.weight.data<int8_t>();
        ctx.parallel_for(p_.group, [&](int64_t begin, int64_t end) {
            thread_local std::vector<uint8_t> padded;
            thread_local std::vector<int32_t> sums;
            padded.resize(std::max(padded.size(), static_cast<size_t>(dg.padded_h() * row_bytes)));
            sums.resize(std::max(sums.size(), static_cast<size_t>(out_plane)));
            for (int64_t c = begin; c < end; ++c) {
                padded_channel_bytes(x, c, dg, row_bytes, padded.data());
                st.depthwise_int8->plane(dg, padded.data(), row_bytes, w + c * dg.kh * dg.kw, int8_depthwise_starts_[c],
                                         sums.data());
                finish_int32_sums(st, bias, res, y, c, c * out_plane, sums.data(), out_plane);
            }
        });
    }

    // Channel c of x as the int8 depthwise kernel reads it: dg.padded_h() rows
    // of row_bytes unsigned bytes (int8 values + 128), the padding as dg's pad value.
    void padded_channel_bytes(const Tensor& x, int64_t c, const Depthwise2dGeometry& dg, int64_t row_bytes,
                              uint8_t* dst) const
    {
        const uint8_t pad = static_cast<uint8_t>(static_cast<int8_t>(dg.pad_value)) ^ 0x80u;
        const int64_t plane = dg.in_h * dg.in_w, width = std::min(dg.in_w, dg.padded_w() - dg.pad_left);
        const int64_t rows = std::min(dg.in_h, dg.padded_h() - dg.pad_top);
        for (int64_t pr = 0; pr < dg.padded_h(); ++pr) { // the padding only, around the rows copied below
            uint8_t* row = dst + pr * row_bytes;
            const bool inside = pr >= dg.pad_top && pr - dg.pad_top < rows;
            std::fill(row, row + (inside ? dg.pad_left : row_bytes), pad);
            if (inside) std::fill(row + dg.pad_left + width, row + row_bytes, pad);
        }
        for (int64_t r = 0; r < rows; ++r) {
            uint8_t* d = dst + (r + dg.pad_top) * row_bytes + dg.pad_left;
            const int64_t at = c * plane + r * dg.in_w;
            if (x.dtype() == DType::U8) { // ONNX's uint8: the unsigned operand as it is
                std::copy(x.data<uint8_t>() + at, x.data<uint8_t>() + at + width, d);
                continue;
            }
            if (x.dtype() == DType::I8)
                std::copy(x.data<int8_t>() + at, x.data<int8_t>() + at + width, reinterpret_cast<int8_t*>(d));
            else
                int8_output_kernel().quantize(x.data<float>() + at, width, bottom_scale_, reinterpret_cast<int8_t*>(d));
            for (int64_t i = 0; i < width; ++i) d[i] ^= 0x80u;
        }
    }

    // Output channel oc's int32 sums for the n outputs from `at` (of the
    // output's flat index), through the int8 output kernel straight into the
    // output: dequantized (ReLU/Clip as its clamp, a residual), or requantized.
    void finish_int32_sums(const ConvState& st, const float* bias, const Residual& res, Tensor& y, int64_t oc,
                           int64_t at, const int32_t* sums, int64_t n) const
    {
        float* out = y.data<float>() + at;
        if (!st.requant) return finish_sums(oc, bias, sums, n, out, nullptr, res.at(out), 0.f);
        int8_t* q = output_at(y, at);
        if (activation_in_output_kernel()) return finish_sums(oc, bias, sums, n, nullptr, q, nullptr, st.top_scale);
        thread_local std::vector<float> row; // a requantized piece's floats, for the activation
        row.resize(std::max(row.size(), static_cast<size_t>(n)));
        finish_sums(oc, bias, sums, n, row.data(), q, nullptr, st.top_scale);
    }

    // The dot-product kernel's int32 sums go through the int8 output kernel
    // straight into the output: dequantized (ReLU/Clip as its clamp), or
    // requantized to int8 without a float plane in between.
    void int8_on_dot_kernel(const Tensor& x, const ConvState& st, const float* bias, const Residual& res, Tensor& y,
                            const ExecContext& ctx) const
    {
        const Int8GemmKernel& kern = *int8_dot_.kern;
        uint8_t* input = ctx.scratch_as<uint8_t>(st.padded);
        const int8_t pad = int8_pad_value(pad_value_);
        if (x.dtype() == DType::I8) // quantized by the layer before (requantized)
            conv2d_int8_dot_input(kern, st.gg, x.data<int8_t>(), x.dim(1), x.dim(2), st.g.rows.pad_begin,
                                  st.g.cols.pad_begin, pad, input, ctx);
        else if (x.dtype() == DType::U8) // ONNX's uint8: the kernel's unsigned operand as it is
            conv2d_int8_dot_input(kern, st.gg, x.data<uint8_t>(), x.dim(1), x.dim(2), st.g.rows.pad_begin,
                                  st.g.cols.pad_begin, pad, input, ctx);
        else
            conv2d_int8_dot_input(kern, st.gg, x.data<float>(), bottom_scale_, x.dim(1), x.dim(2),
                                  st.g.rows.pad_begin, st.g.cols.pad_begin, pad, input, ctx);
        const int64_t plane = st.g.rows.out * st.g.cols.out;
        conv2d_int8_dot(kern, int8_dot_, st.gg, st.quad_offsets, input, [&](int64_t oc, int64_t pixel, const int32_t* sums, int64_t n) {
            finish_int32_sums(st, bias, res, y, oc, oc * plane + pixel, sums, n);
        }, ctx);
    }

    void int8_gemm(const Tensor& x, const ConvState& st, float* sums, const SumsFinished& finish,
                   const ExecContext& ctx) const
    {
        const Tensor padded =
            padded_input<float>(quantized_as_float(x, st, ctx), st, st.padded, int8_pad_value(pad_value_), ctx);
        conv2d_int8_gemm(gemm_kernel(), int8_gemm_, st.gg, padded.data<float>(), sums,
                         ctx.scratch_as<int32_t>(st.int_sums), finish, ctx);
    }

    void int8_plain(const Tensor& x, const ConvState& st, float* sums, const SumsFinished& finish,
                    const ExecContext& ctx) const
    {
        const int64_t plane = st.g.rows.out * st.g.cols.out;
        int32_t* isums = ctx.scratch_as<int32_t>(st.int_sums);
        const Tensor padded =
            padded_input<int8_t>(quantized_input(x, st.quantized, ctx), st, st.padded, int8_pad_value(pad_value_), ctx);
        int8_sums_plain(padded, st, isums, ctx);
        ctx.parallel_for(st.k.outch, [&](int64_t begin, int64_t end) {
            for (int64_t oc = begin; oc < end; ++oc) {
                float* v = sums + oc * plane;
                std::copy(isums + oc * plane, isums + (oc + 1) * plane, v);
                finish(oc, v, plane);
            }
        });
    }

    // The plain int32 loop: the padded input is unrolled once into per-group
    // columns col[g][pixel][r], r = (ic_in_group*kh + ky)*kw + kx, so that every
    // sum is one contiguous int8 dot product with its weight row (same r order).
    void int8_sums_plain(const Tensor& padded, const ConvState& st, int32_t* sums, const ExecContext& ctx) const
    {
        const KernelDims& k = st.k;
        const ConvGeometry& g = st.g;
        const int64_t ph = padded.dim(1), pw = padded.dim(2), channels = padded.dim(0);
        const int64_t plane = g.rows.out * g.cols.out, ksize = k.kh * k.kw, R = k.inch_g * ksize;
        const int8_t* src = padded.data<int8_t>();
        int8_t* cp = ctx.scratch_as<int8_t>(st.columns);
        ctx.parallel_for(channels, [&](int64_t begin, int64_t end) {
            for (int64_t ic = begin; ic < end; ++ic) {
                const int64_t grp = ic / k.inch_g, i = ic % k.inch_g;
                const int8_t* in_plane = src + ic * ph * pw;
                int8_t* gcol = cp + grp * plane * R;
                for (int64_t ky = 0; ky < k.kh; ++ky)
                    for (int64_t kx = 0; kx < k.kw; ++kx) {
                        const int64_t r = (i * k.kh + ky) * k.kw + kx;
                        for (int64_t oy = 0; oy < g.rows.out; ++oy) {
                            const int8_t* row =
                                in_plane + (oy * g.rows.stride + ky * g.rows.dilation) * pw + kx * g.cols.dilation;
                            int8_t* dst = gcol + oy * g.cols.out * R + r;
                            for (int64_t ox = 0; ox < g.cols.out; ++ox) dst[ox * R] = row[ox * g.cols.stride];
                        }
                    }
            }
        });
        const int8_t* wt = weights_.weight.data<int8_t>();
        const int64_t out_per_group = k.outch / p_.group;
        ctx.parallel_for(k.outch, [&](int64_t begin, int64_t end) {
            for (int64_t oc = begin; oc < end; ++oc) {
                const int8_t* wrow = wt + oc * R;
                const int8_t* gcol = cp + (oc / out_per_group) * plane * R;
                for (int64_t p = 0; p < plane; ++p) sums[oc * plane + p] = int8_dot(wrow, gcol + p * R, R);
            }
        });
    }

    // Where output value `at` lies in a quantized output (int8, or ONNX's form's
    // uint8 / int32), for finish_sums' q.
    static int8_t* output_at(Tensor& y, int64_t at)
    {
        return reinterpret_cast<int8_t*>(static_cast<uint8_t*>(y.raw()) + at * static_cast<int64_t>(dtype_size(y.dtype())));
    }

    // Whether the output kernel applies the activation (none, or ReLU/Clip as its clamp).
    bool activation_in_output_kernel() const { return clamp_ || p_.activation.type == Activation::None; }

    // Output channel oc's int32 sums (or the same integers held as floats),
    // dequantized with the bias and the activation into y, or requantized
    // into q with top_scale: ReLU and Clip as the output kernel's clamp, with
    // no float store in between; other activations run on the floats in y
    // after. A residual r (float outputs only) is added before the
    // activation, as the sum the optimizer fused was.
    template <class Sum>
    void finish_sums(int64_t oc, const float* bias, const Sum* sums, int64_t n, float* y, int8_t* q,
                     const float* r, float top_scale) const
    {
        constexpr bool ints = std::is_same_v<Sum, int32_t>;
        const Int8OutputKernel& out = int8_output_kernel();
        if (onnx_.on && onnx_.y_int32) { // ConvInteger: the sums and the offset, as they are
            int32_t* out32 = reinterpret_cast<int32_t*>(q);
            for (int64_t i = 0; i < n; ++i)
                out32[i] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int32_t>(sums[i])) +
                                                static_cast<uint32_t>(onnx_.offset[oc]));
            return;
        }
        if (onnx_.on) {
            const int32_t lo = onnx_.lowest(), hi = onnx_.highest();
            uint8_t* bytes = reinterpret_cast<uint8_t*>(q);
            if constexpr (ints)
                out.requantize_even(sums, n, onnx_.offset[oc], onnx_.scale[oc], onnx_.y_zero, lo, hi, bytes);
            else
                out.requantize_even_floats(sums, n, onnx_.offset[oc], onnx_.scale[oc], onnx_.y_zero, lo, hi,
                                           bytes);
            return;
        }
        const float scale = dequant_[oc];
        const float* b = bias ? bias + oc : nullptr;
        const float* clamp = clamp_ ? clamp_bounds_ : nullptr;
        const bool fused = activation_in_output_kernel();
        if (q && fused) {
            if constexpr (ints)
                out.requantize(sums, n, scale, b, clamp, top_scale, q);
            else
                out.requantize_floats(sums, n, scale, b, clamp, top_scale, q);
            return;
        }
        if constexpr (ints)
            out.dequantize(sums, n, scale, b, r, clamp, y);
        else
            out.dequantize_floats(sums, n, scale, b, r, clamp, y);
        if (!fused) p_.activation.apply(y, n);
        if (q) out.quantize(y, n, top_scale, q);
    }

    // ncnn's deprecated 1-D input path: InnerProduct over the flat input.
    void forward_flat(const Tensor& x, const ConvState& st, const Epilogue& ep, Tensor& y, const ExecContext& ctx) const
    {
        const int64_t n = num_flat_inputs();
        const float* bias = weights_.bias.defined() ? weights_.bias.data<float>() : nullptr;
        float* dst = y.data<float>();
        if (int8_scale_term_ == 0) {
            const float* xs = x.data<float>();
            // Weight (o, i): as loaded, or (one group) in the GEMM's packed
            // panels of mr rows stored k-major.
            const bool packed = !weights_.weight.defined();
            const float* w = packed ? gemm_weights_.data() : weights_.weight.data<float>();
            const int64_t mr = gemm_kernel().mr;
            ctx.parallel_for(p_.num_output, [&](int64_t begin, int64_t end) {
                for (int64_t o = begin; o < end; ++o) {
                    const float* row = packed ? w + o / mr * mr * n + o % mr : w + o * n;
                    const int64_t step = packed ? mr : 1;
                    float sum = bias ? bias[o] : 0.f;
                    for (int64_t i = 0; i < n; ++i) sum += row[i * step] * xs[i];
                    dst[o] = sum;
                }
                ep(dst + begin, end - begin);
            });
            return;
        }
        const Tensor xq = quantized_input(x.reshaped({1, n}), st.quantized, ctx);
        const int8_t* xs = xq.data<int8_t>();
        const int8_t* w = weights_.weight.data<int8_t>();
        ctx.parallel_for(p_.num_output, [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
                const int32_t sum = int8_dot(w + o * n, xs, n);
                const float v = static_cast<float>(sum) * dequant_[o];
                dst[o] = bias ? v + bias[o] : v;
            }
            ep(dst + begin, end - begin);
        });
    }

    int rank_;
    bool depthwise_;
    ConvParams p_;
    float pad_value_ = 0.f;
    int int8_scale_term_ = 0;
    ConvWeights weights_; // weight int8 with int8_scale_term
    std::vector<float> dequant_; // int8: per output channel, 1 / (bottom scale * weight scale)
    bool clamp_ = false;         // int8: the activation as the output kernel's clamp (clamp_bounds_)
    float clamp_bounds_[2] = {};
    // Static fp32 weights packed for the GEMM path (at load, or by prepare()
    // for layers that may take Winograd), and for Winograd F(4,3) and F(6,3).
    bool winograd_ok_ = false;
    bool residual_ = false; // param 20
    PackedWeights gemm_weights_;
    PackedWeights winograd_weights_[2];
    PackedWeights winograd_block_weights_[2]; // Winograd on channel blocks, F(4,3) and F(6,3)
    // One-group layers: their weights for the direct tile on channel blocks,
    // and whether they may take it.
    PackedWeights direct_weights_;
    bool direct_ok_ = false;
    // A layer that may take Winograd: its loaded weights, kept to build the
    // form a shape wants (dropped once the graph has released them and a form
    // is built), under source_mutex_.
    mutable Tensor source_;
    mutable bool drop_source_ = false;
    mutable std::mutex source_mutex_;
    // bfloat16 weights, built by the first prepare with PrepareContext::bf16.
    mutable std::shared_ptr<const Conv2dBf16> bf16_weights_;
    std::vector<float> int8_depthwise_weights_; // int8 depthwise: the weights as floats
    std::vector<int32_t> int8_depthwise_starts_; // and each channel's start on byte dot products
    std::vector<float> int8_depthwise_block_weights_; // and in channel blocks (depthwise_block_weights)
    Conv2dInt8Gemm int8_gemm_;                  // int8 on the float GEMM (chunk_channels 0: not used)
    Conv2dInt8Dot int8_dot_;                    // int8 on dot-product instructions (empty: not used)
    float bottom_scale_ = 0.f, top_scale_ = 0.f;
    OnnxQuantizedForm onnx_; // ONNX's quantized form (params 25-30)
};

} // namespace

std::unique_ptr<Op> make_convolution() { return std::make_unique<Convolution>(2, false); }
std::unique_ptr<Op> make_convolution_depthwise() { return std::make_unique<Convolution>(2, true); }
std::unique_ptr<Op> make_convolution_1d() { return std::make_unique<Convolution>(1, false); }
std::unique_ptr<Op> make_convolution_3d() { return std::make_unique<Convolution>(3, false); }
std::unique_ptr<Op> make_convolution_depthwise_1d() { return std::make_unique<Convolution>(1, true); }
std::unique_ptr<Op> make_convolution_depthwise_3d() { return std::make_unique<Convolution>(3, true); }

} // namespace kestrel
