// InnerProduct (ncnn params): y = W x + b with a fused activation. Input is
// flattened to num_input, except a 2-D (h, num_input) input, done row by row.
//
// int8 (8 = int8_scale_term != 0): weights [num_output][num_input] are
// quantized at load with per-output scales (or used as they are when the .bin
// holds int8), the input is quantized with the bottom scale (unless it is
// already I8), the int32 sums (kernels/int8_gemm.h's row dot products where
// the CPU has int8 dot-product instructions) are dequantized by
// 1/(bottom*weight scale), then bias and activation. The output is always
// float32: ncnn's InnerProduct has no requantized output and loads no top
// scale, whatever the value of param 8.
//
// ONNX's quantized form (25 = 1, Kestrel's, for QLinearMatMul and
// MatMulInteger: ops/quant/onnx_form.h, params 25-30; 8 = 2): an input of any
// rank >= 1 whose last axis holds num_input values, uint8 or int8 with a zero
// point -> the same shape with num_output values last, uint8 / int8 with a
// zero point or int32 sums. A few rows take the row dot products; more, the
// int8 GEMM with the input rows as A (the weights, offset by 128, packed as B
// by the first prepare that wants them): each output row then is a run of
// columns, requantized with a scale and an offset per column.
#include <algorithm>
#include <vector>

#include "core/half.h"
#include "kernels/gemm.h"
#include "kernels/int8_gemm.h"
#include "kernels/int8_output.h"
#include "kernels/bf16_gemm.h"
#include "kernels/row_dots.h"
#include "ops/common/packed_weights.h"
#include "ops/activation/activation.h"
#include "ops/registry.h"
#include "ops/quant/int8.h"
#include "ops/quant/onnx_form.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class InnerProduct : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        num_output_ = positive_param(pd, 0, 0, "num_output");
        bias_term_ = pd.get_int(1, 0) != 0;
        weight_data_size_ = positive_param(pd, 2, 0, "weight_data_size");
        int8_scale_term_ = pd.get_int(8, 0);
        check(int8_scale_term_ >= 0, "int8_scale_term (param 8) must be >= 0, got ", int8_scale_term_);
        activation_ = Activation::from_ncnn(pd.get_int(9, 0), pd.get_floats(10));
        check(weight_data_size_ % num_output_ == 0, "weight_data_size (param 2) ", weight_data_size_,
              " is not a multiple of num_output ", num_output_);
        num_input_ = weight_data_size_ / num_output_;
        onnx_.load_param(pd);
        check(!onnx_.on || (int8_scale_term_ == 2 && !bias_term_ && activation_.type == Activation::None),
              "ONNX's quantized form (param 25) needs 8=2 and no bias term or activation");
    }

    void load_model(WeightReader& wr) override
    {
        Tensor weight = wr.load(weight_data_size_, WeightEncoding::Tagged);
        bias_ = bias_term_ ? wr.load(num_output_, WeightEncoding::Raw) : Tensor();
        check(weight.dtype() == DType::F32 || int8_scale_term_ != 0, "int8 weights need int8_scale_term (param 8)");
        if (int8_scale_term_ != 0) {
            // No top scale but in ONNX's form (see the header).
            const Int8Scales scales = Int8Scales::load(wr, num_output_, onnx_.on);
            if (onnx_.on) load_onnx_requantization(wr, scales, weight);
            weight = int8_weights(weight, scales.weight);
            bottom_scale_ = scales.bottom;
            dequant_ = scales.dequant_factors(num_output_);
        }
        dot_starts_.clear();
        if (int8_scale_term_ != 0 && !onnx_.on && int8_gemm_has_dot_instructions()) {
            // The dot-product kernel reads the input + 128 (unsigned): each
            // sum starts from -128 * its row's sum (wrapping as the sums do).
            for (int64_t sum : int8_gemm_row_sums(weight.data<int8_t>(), num_output_, num_input_, num_input_))
                dot_starts_.push_back(static_cast<int32_t>(static_cast<uint32_t>(-128 * sum)));
        }
        weight_ = weight;
        gemm_weights_.reset();
        bf16_weights_.reset();
        bf16_gemm_b_.reset();
        onnx_gemm_b_.reset();
        half_weights_.clear();
        if (int8_scale_term_ == 0 && wr.options.fp16_weights) {
            // Half floats only: the float copy goes.
            const float* w = weight_.data<float>();
            half_weights_.resize(static_cast<size_t>(weight_.numel()));
            for (size_t i = 0; i < half_weights_.size(); ++i) half_weights_[i] = float_to_half(w[i]);
            weight_ = Tensor();
        }
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, onnx_.on ? 2 : 1);
        expect_output_count(out, 1);
        if (onnx_.on) {
            out[0] = onnx_output_desc(in);
            return;
        }
        const DType dt = in[0].dtype;
        check(dt == DType::F32 || dt == DType::I8, "input must be float32 or int8, got ", dtype_name(dt));
        check(dt == DType::F32 || int8_scale_term_ != 0, "an int8 input needs int8_scale_term (param 8)");
        const Shape& s = in[0].shape;
        check(!s.empty() && s.size() <= 4, "expects a rank 1-4 input, got ", shape_str(s));
        if (s.size() == 2 && s[1] == num_input_) {
            out[0] = make_desc({s[0], num_output_}, DType::F32);
            return;
        }
        check(shape_numel(s) == num_input_, "expects ", num_input_,
              " input values (from weight_data_size), or a 2-D (rows, ", num_input_, ") input; got ", shape_str(s));
        out[0] = make_desc({num_output_}, DType::F32);
    }

    int64_t macs(const std::vector<TensorDesc>&, const std::vector<TensorDesc>& out) const override
    {
        return shape_numel(out[0].shape) * num_input_;
    }

    int64_t weight_bytes() const override
    {
        return static_cast<int64_t>(weight_.nbytes() +
                                    (half_weights_.size() + bf16_weights_.floats() + bf16_gemm_b_.floats()) * sizeof(uint16_t) +
                                    (bias_.defined() ? bias_.nbytes() : 0) +
                                    (dequant_.size() + gemm_weights_.floats() + onnx_.scale.size()) * sizeof(float) +
                                    onnx_gemm_b_.floats() + onnx_dot_offset_.size() * sizeof(int32_t) +
                                    onnx_weight_sums_.size() * sizeof(int64_t));
    }

    // From this many input rows, a GEMM (kernels/gemm.h) beats one dot product
    // per output (its copy of the weights, packed by the first prepare() that
    // wants it, is kept beside them).
    static constexpr int64_t kGemmRows = 16;

    bool uses_gemm(int64_t rows) const { return int8_scale_term_ == 0 && half_weights_.empty() && rows >= kGemmRows; }

    // With PrepareContext::bf16, bfloat16 weights, a copy built by the first
    // such prepare and kept beside the float ones: for row dot products (half
    // the bytes of a layer whose weights stream from memory) as they are, for
    // a GEMM as its packed B (W^T).
    struct Bf16Weights : OpState {
        const uint16_t* weights = nullptr;
        bool gemm = false; // scratch 0 then holds the input packed as bfloat16
    };

    // Scratch 0: the input packed for the GEMM, or quantized for the int8 path.
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        const int64_t rows = shape_numel(in[0].shape) / num_input_;
        if (onnx_.on) return prepare_onnx(in, rows, ctx);
        if (ctx.bf16() && int8_scale_term_ == 0 && half_weights_.empty()) {
            auto st = std::make_unique<Bf16Weights>();
            const Bf16GemmKernel& kern = bf16_gemm_kernel();
            st->gemm = uses_gemm(rows);
            if (st->gemm) {
                st->weights = bf16_gemm_b_.get([&] {
                    std::vector<uint16_t> b(static_cast<size_t>(bf16_gemm_packed_b_values(kern, num_output_, num_input_)));
                    bf16_gemm_pack_b(kern, weight_.data<float>(), num_input_, num_output_, 1, b.data(), num_input_);
                    return b;
                });
                ctx.request_scratch(bf16_gemm_packed_a_values(kern, rows, num_input_) * 2);
            } else {
                st->weights = bf16_weights_.get([&] {
                    const float* w = weight_.data<float>();
                    std::vector<uint16_t> b(static_cast<size_t>(weight_.numel()));
                    for (size_t i = 0; i < b.size(); ++i) b[i] = float_to_bf16(w[i]);
                    return b;
                });
            }
            return st;
        }
        if (uses_gemm(rows)) {
            ctx.request_scratch(gemm_packed_a_floats(gemm_kernel(), rows, num_input_) * 4);
            packed_weights();
        }
        else if (int8_scale_term_ != 0 && (in[0].dtype != DType::I8 || !dot_starts_.empty()))
            ctx.request_scratch(shape_numel(in[0].shape));
        return nullptr;
    }

    // The weights as the GEMM's B panels (B = W^T).
    const float* packed_weights() const
    {
        return gemm_weights_.get([&] {
            const GemmKernel& kern = gemm_kernel();
            return gemm_pack_b(kern, num_output_, num_input_,
                               GemmTransposedB{weight_.data<float>(), num_input_, num_input_, kern.nr});
        });
    }

    // y (rows x out) = bias, then + x W^T in input order, then the activation.
    void forward_gemm(const float* x, int64_t rows, const float* bias, float* y, const ExecContext& ctx) const
    {
        ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                float* yr = y + r * num_output_;
                if (bias)
                    std::copy(bias, bias + num_output_, yr);
                else
                    std::fill(yr, yr + num_output_, 0.f);
            }
        });
        const GemmKernel& kern = gemm_kernel();
        float* a_packed = ctx.scratch_as<float>(0);
        gemm_pack_a_into(kern, x, rows, num_input_, num_input_, 1, a_packed, ctx);
        gemm_f32(kern, rows, num_output_, num_input_, a_packed, GemmStart::C, nullptr, y, num_output_,
                 GemmPackedB{packed_weights(), num_input_, kern.nr},
                 [&](int64_t, float* values, int64_t count) { activation_.apply(values, count); }, ctx);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t rows = in[0].numel() / num_input_;
        if (onnx_.on) return forward_onnx(in, rows, out[0], ctx);
        const float* bias = bias_.defined() ? bias_.data<float>() : nullptr;
        float* y = out[0].data<float>();
        if (ctx.state() && ctx.state_as<Bf16Weights>().gemm) {
            bf16_gemm_rows(bf16_gemm_kernel(), rows, num_output_, num_input_, in[0].data<float>(), num_input_,
                           ctx.state_as<Bf16Weights>().weights, y, ctx.scratch_as<uint16_t>(0), ctx);
            ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
                for (int64_t r = begin; r < end; ++r) {
                    float* yr = y + r * num_output_;
                    if (bias)
                        for (int64_t o = 0; o < num_output_; ++o) yr[o] += bias[o];
                    activation_.apply(yr, num_output_);
                }
            });
            return;
        }
        if (uses_gemm(rows)) {
            forward_gemm(in[0].data<float>(), rows, bias, y, ctx);
            return;
        }
        if (!half_weights_.empty()) {
            forward_rows(half_weights_.data(), &RowDotKernel::halves, in[0].data<float>(), rows, bias, y, ctx);
            return;
        }
        if (ctx.state()) {
            forward_rows(ctx.state_as<Bf16Weights>().weights, &RowDotKernel::bf16s, in[0].data<float>(), rows, bias, y,
                         ctx);
            return;
        }
        if (int8_scale_term_ == 0) {
            forward_rows(weight_.data<float>(), &RowDotKernel::floats, in[0].data<float>(), rows, bias, y, ctx);
            return;
        }
        if (!dot_starts_.empty()) return forward_int8_dots(in[0], rows, bias, y, ctx);
        Tensor xq = in[0];
        if (xq.dtype() != DType::I8) {
            xq = Tensor::wrap(ctx.scratch(0), in[0].shape(), DType::I8);
            const float* src = in[0].data<float>();
            int8_t* dst = xq.data<int8_t>();
            ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
                quantize_span(src + begin * num_input_, dst + begin * num_input_, (end - begin) * num_input_,
                              bottom_scale_);
            });
        }
        const int8_t* x = xq.data<int8_t>();
        const int8_t* w = weight_.data<int8_t>();
        ctx.parallel_for(rows * num_output_, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                const int64_t r = i / num_output_, o = i % num_output_;
                const int8_t* xr = x + r * num_input_;
                const int8_t* wr = w + o * num_input_;
                const int32_t sum = int8_dot(xr, wr, num_input_);
                const float v = static_cast<float>(sum) * dequant_[o];
                y[i] = activation_(bias ? v + bias[o] : v);
            }
        });
    }

private:
    // ONNX's quantized form (see the header).
    void load_onnx_requantization(WeightReader& wr, const Int8Scales& scales, const Tensor& weight)
    {
        check(weight.dtype() == DType::I8, "ONNX's quantized form (param 25) takes int8 weights");
        onnx_.load_requantization(wr, scales, weight.data<int8_t>(), num_output_, num_input_);
        // The row dot products read the input + 128: each sum carries 128 * its weight row's sum.
        onnx_weight_sums_ = int8_gemm_row_sums(weight.data<int8_t>(), num_output_, num_input_, num_input_);
        onnx_dot_offset_.resize(onnx_weight_sums_.size());
        for (size_t o = 0; o < onnx_weight_sums_.size(); ++o)
            onnx_dot_offset_[o] = static_cast<int32_t>(static_cast<uint32_t>(onnx_.offset[o]) -
                                                       static_cast<uint32_t>(128 * onnx_weight_sums_[o]));
    }

    TensorDesc onnx_output_desc(const std::vector<TensorDesc>& in) const
    {
        const TensorDesc& x = in[0];
        check(x.dtype == onnx_.input_dtype() && !x.shape.empty() && x.shape.back() == num_input_,
              "ONNX's quantized form takes a ", dtype_name(onnx_.input_dtype()), " input of ", num_input_,
              " values on its last axis, got ", dtype_name(x.dtype), " ", shape_str(x.shape));
        if (in.size() > 1)
            check(in[1].dtype == x.dtype && shape_numel(in[1].shape) == 1, "the input's zero point (input 1) must be one ",
                  dtype_name(x.dtype), " value, got ", dtype_name(in[1].dtype), " ", shape_str(in[1].shape));
        Shape s = x.shape;
        s.back() = num_output_;
        return make_desc(s, onnx_.output_dtype());
    }

    // From this many rows, the int8 GEMM beats row dot products.
    static constexpr int64_t kOnnxGemmRows = 4;

    // ONNX's form: the kernel and the scratch buffers (-1: none).
    struct OnnxRows : OpState {
        const Int8GemmKernel* kern = nullptr;
        bool gemm = false;
        int packed = -1, init = -1, sums = -1, flipped = -1;
        int offsets = -1; // with the input's zero point at run time (input 1): the offsets it gives
    };

    std::unique_ptr<OpState> prepare_onnx(const std::vector<TensorDesc>& in, int64_t rows, PrepareContext& ctx) const
    {
        const TensorDesc& x = in[0];
        auto st = std::make_unique<OnnxRows>();
        if (in.size() > 1) st->offsets = ctx.request_scratch(num_output_ * 4);
        st->kern = &int8_gemm_kernel_for_runs(num_input_);
        st->gemm = rows >= kOnnxGemmRows;
        if (st->gemm) {
            st->packed = ctx.request_scratch(int8_gemm_packed_a_bytes(*st->kern, rows, num_input_));
            st->init = ctx.request_scratch(rows * 4);
            if (!onnx_.y_int32) st->sums = ctx.request_scratch(rows * num_output_ * 4);
            onnx_packed_weights(*st->kern);
        } else if (x.dtype == DType::I8) {
            st->flipped = ctx.request_scratch(rows * num_input_);
        }
        return st;
    }

    // The weights + 128 as the int8 GEMM's B (W^T), packed for kern.
    const uint8_t* onnx_packed_weights(const Int8GemmKernel& kern) const
    {
        return onnx_gemm_b_.get([&] {
            std::vector<uint8_t> offset(static_cast<size_t>(weight_.numel()));
            const int8_t* w = weight_.data<int8_t>();
            for (size_t i = 0; i < offset.size(); ++i) offset[i] = static_cast<uint8_t>(w[i]) ^ 0x80u;
            std::vector<uint8_t> b(static_cast<size_t>(int8_gemm_packed_b_bytes(kern, num_output_, num_input_)));
            int8_gemm_pack_b_transposed(kern, offset.data(), num_output_, num_input_, num_input_, b.data());
            return b;
        });
    }

    // Output values [o0, o0 + count) of a row from their int32 sums and offsets.
    void finish_onnx(const int32_t* sums, int64_t o0, int64_t count, const int32_t* offsets, void* y) const
    {
        if (onnx_.y_int32) {
            int32_t* y32 = static_cast<int32_t*>(y);
            for (int64_t o = 0; o < count; ++o)
                y32[o] = static_cast<int32_t>(static_cast<uint32_t>(sums[o]) + static_cast<uint32_t>(offsets[o0 + o]));
            return;
        }
        int8_output_kernel().requantize_even_columns(sums, count, offsets + o0, onnx_.scale.data() + o0, onnx_.y_zero,
                                                     onnx_.lowest(), onnx_.highest(), static_cast<uint8_t*>(y));
    }

    // The offsets with the input's zero point given at run time (`zero`, one
    // value of the input's type): `base` (the load-time offsets, made with
    // param 26's zero point) less the difference times each weight row's sum.
    const int32_t* run_time_offsets(const OnnxRows& st, const Tensor& zero, const std::vector<int32_t>& base,
                                    const ExecContext& ctx) const
    {
        const int64_t read_as = zero.dtype() == DType::U8 ? int64_t{zero.data<uint8_t>()[0]} - 128 : zero.data<int8_t>()[0];
        const int64_t zp = read_as - onnx_.x_zero;
        int32_t* offsets = ctx.scratch_as<int32_t>(st.offsets);
        for (size_t o = 0; o < base.size(); ++o)
            offsets[o] = static_cast<int32_t>(static_cast<uint32_t>(base[o]) -
                                              static_cast<uint32_t>(zp * onnx_weight_sums_[o]));
        return offsets;
    }

    void forward_onnx(const std::vector<Tensor>& in, int64_t rows, Tensor& y, const ExecContext& ctx) const
    {
        const OnnxRows& st = ctx.state_as<OnnxRows>();
        const Tensor& x = in[0];
        const int64_t out_size = dtype_size(y.dtype());
        uint8_t* out = static_cast<uint8_t*>(y.raw());
        const std::vector<int32_t>& base = st.gemm ? onnx_.offset : onnx_dot_offset_;
        const int32_t* offsets = in.size() > 1 ? run_time_offsets(st, in[1], base, ctx) : base.data();
        if (st.gemm) return forward_onnx_gemm(st, x, rows, offsets, out, out_size, ctx);
        // Row dot products: the input bytes + 128 (uint8 ones are that already).
        const uint8_t* xu = x.data<uint8_t>();
        if (x.dtype() == DType::I8) {
            uint8_t* flipped = ctx.scratch_as<uint8_t>(st.flipped);
            ctx.parallel_for(rows * num_input_, [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) flipped[i] = xu[i] ^ 0x80u;
            });
            xu = flipped;
        }
        const int8_t* w = weight_.data<int8_t>();
        const int64_t chunk = weight_chunk_rows(1);
        over_weight_chunks(chunk, rows, ctx, [&](int64_t o0, int64_t count, int64_t r) {
            thread_local std::vector<int32_t> sums;
            sums.resize(std::max(sums.size(), static_cast<size_t>(chunk)));
            st.kern->row_dots(w + o0 * num_input_, xu + r * num_input_, num_input_, count, sums.data());
            finish_onnx(sums.data(), o0, count, offsets, out + (r * num_output_ + o0) * out_size);
        });
    }

    // The int8 GEMM, A = the input rows as int8 values, B = the weights +
    // 128: each sum carries 128 * its input row's sum, taken off by init.
    void forward_onnx_gemm(const OnnxRows& st, const Tensor& x, int64_t rows, const int32_t* offsets, uint8_t* out,
                           int64_t out_size, const ExecContext& ctx) const
    {
        const Int8GemmKernel& kern = *st.kern;
        int8_t* a = ctx.scratch_as<int8_t>(st.packed);
        int8_gemm_pack_a(kern, x.data<int8_t>(), rows, num_input_, num_input_, a);
        const bool uint8 = x.dtype() == DType::U8;
        if (uint8) // u as u - 128 (the packing's zeros too: B is zero there)
            ctx.parallel_for(int8_gemm_packed_a_bytes(kern, rows, num_input_), [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) a[i] = static_cast<int8_t>(static_cast<uint8_t>(a[i]) ^ 0x80u);
            });
        // init: -128 times each row's sum as int8 values (uint8 ones as u - 128), wrapped as the sums are.
        int32_t* init = ctx.scratch_as<int32_t>(st.init);
        ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                int64_t sum = 0;
                for (int64_t k = 0; k < num_input_; ++k)
                    sum += uint8 ? int64_t{x.data<uint8_t>()[r * num_input_ + k]} - 128
                                 : int64_t{x.data<int8_t>()[r * num_input_ + k]};
                init[r] = static_cast<int32_t>(static_cast<uint32_t>(-128 * sum));
            }
        });
        int32_t* sums = onnx_.y_int32 ? reinterpret_cast<int32_t*>(out) : ctx.scratch_as<int32_t>(st.sums);
        int8_gemm(kern, rows, num_output_, num_input_, a, init, onnx_packed_weights(kern), sums, num_output_, ctx);
        ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r)
                finish_onnx(sums + r * num_output_, 0, num_output_, offsets, out + r * num_output_ * out_size);
        });
    }

    // Int8 on the CPU's dot-product instructions: the input quantized and
    // offset by 128 into scratch, then row dot products over chunks of weight
    // rows, as forward_rows.
    void forward_int8_dots(const Tensor& x, int64_t rows, const float* bias, float* y, const ExecContext& ctx) const
    {
        uint8_t* xu = ctx.scratch_as<uint8_t>(0);
        ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
            const int64_t at = begin * num_input_, count = (end - begin) * num_input_;
            int8_t* q = reinterpret_cast<int8_t*>(xu + at);
            if (x.dtype() == DType::I8)
                std::copy(x.data<int8_t>() + at, x.data<int8_t>() + at + count, q);
            else
                int8_output_kernel().quantize(x.data<float>() + at, count, bottom_scale_, q);
            for (int64_t i = 0; i < count; ++i) xu[at + i] ^= 0x80u;
        });
        const Int8GemmKernel& kern = int8_gemm_kernel();
        const int8_t* w = weight_.data<int8_t>();
        const int64_t chunk = weight_chunk_rows(1);
        over_weight_chunks(chunk, rows, ctx, [&](int64_t o0, int64_t count, int64_t r) {
            thread_local std::vector<int32_t> sums;
            sums.resize(std::max(sums.size(), static_cast<size_t>(chunk)));
            kern.row_dots(w + o0 * num_input_, xu + r * num_input_, num_input_, count, sums.data());
            for (int64_t o = o0; o < o0 + count; ++o) {
                const int32_t sum = static_cast<int32_t>(static_cast<uint32_t>(sums[o - o0]) +
                                                         static_cast<uint32_t>(dot_starts_[o]));
                const float v = static_cast<float>(sum) * dequant_[o];
                y[r * num_output_ + o] = activation_(bias ? v + bias[o] : v);
            }
        });
    }

    // Fewer input rows than a GEMM pays off for: row dot products, each
    // thread a range of outputs, in chunks of weight rows that stay in cache
    // while every input row passes over them (the weights stream once).
    template <class T>
    void forward_rows(const T* w, void (*RowDotKernel::*dots)(const T*, const float*, int64_t, int64_t, float*),
                      const float* x, int64_t rows, const float* bias, float* y, const ExecContext& ctx) const
    {
        const auto run = row_dot_kernel().*dots;
        // Chunks as for float weights (half ones too: 128 KiB of them).
        over_weight_chunks(weight_chunk_rows(sizeof(float)), rows, ctx, [&](int64_t o0, int64_t count, int64_t r) {
            float* yr = y + r * num_output_ + o0;
            run(w + o0 * num_input_, x + r * num_input_, num_input_, count, yr);
            if (bias)
                for (int64_t o = 0; o < count; ++o) yr[o] += bias[o0 + o];
            activation_.apply(yr, count);
        });
    }

    // Weight rows per chunk: about 256 KiB of weights of `bytes` each.
    int64_t weight_chunk_rows(int64_t bytes) const
    {
        return std::max<int64_t>(1, (256 * 1024) / std::max<int64_t>(num_input_ * bytes, 1));
    }

    // The outputs split across threads, each thread's in chunks of `chunk`
    // weight rows, each chunk applied to every input row while it is in
    // cache: f(first output, count, input row).
    template <class F> void over_weight_chunks(int64_t chunk, int64_t rows, const ExecContext& ctx, F f) const
    {
        ctx.parallel_for(num_output_, [&](int64_t begin, int64_t end) {
            for (int64_t o0 = begin; o0 < end; o0 += chunk)
                for (int64_t r = 0; r < rows; ++r) f(o0, std::min(chunk, end - o0), r);
        });
    }

    int64_t num_output_ = 0, num_input_ = 0;
    int weight_data_size_ = 0, int8_scale_term_ = 0;
    bool bias_term_ = false;
    Activation activation_;
    std::vector<uint16_t> half_weights_; // LoadOptions::fp16_weights: the weights as half floats
    Tensor weight_, bias_;
    PackedWeights gemm_weights_;
    PackedWeightsOf<uint16_t> bf16_weights_, bf16_gemm_b_;
    std::vector<float> dequant_; // int8: per output, 1 / (bottom scale * weight scale)
    std::vector<int32_t> dot_starts_; // int8 on dot-product instructions (empty: not used)
    float bottom_scale_ = 0.f;
    OnnxQuantizedForm onnx_;                // ONNX's quantized form (params 25-30)
    std::vector<int32_t> onnx_dot_offset_;  // its offsets for the row dot products' sums
    std::vector<int64_t> onnx_weight_sums_; // its weight rows' sums (a zero point given at run time)
    PackedWeightsOf<uint8_t> onnx_gemm_b_;  // its weights as the int8 GEMM's B
};

} // namespace

std::unique_ptr<Op> make_inner_product() { return std::make_unique<InnerProduct>(); }

} // namespace kestrel
