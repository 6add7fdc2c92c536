// N-d sliding windows shared by the 1-D/3-D convolution, deconvolution and
// pooling layers and the ONNX pools of any rank: per-axis geometry and plain
// reference kernels over one sample, a tensor (channels, spatial...). The
// layers are thin front-ends that turn their params (ncnn's or ONNX's) into a
// list of Axis, outermost spatial axis first.
#pragma once
#include <cstdint>
#include <vector>

#include "kestrel/op.h"
#include "kestrel/param_dict.h"

namespace kestrel::window {

struct Axis {
    int64_t kernel = 1, stride = 1, dilation = 1;
    // Convolution and pooling: padding before the first input position.
    // Deconvolution: positions cut from the start of the full output.
    int64_t pad_begin = 0;
    int64_t out = 0; // output size along the axis
    int64_t extent() const { return dilation * (kernel - 1) + 1; }
};

// A range along one axis: pads before/after, or positions [begin, end).
struct Span {
    int64_t begin = 0, end = 0;
};

// ONNX auto_pad SAME (ncnn pads -233/-234): the total padding that makes
// out = ceil(in / stride); the odd position goes at the end (upper) or the start.
Span same_pads(int64_t in, int64_t stride, int64_t extent, bool upper);

// Windows of `extent` at `stride` that fit in `padded` positions (0 if none).
int64_t window_count(int64_t padded, int64_t extent, int64_t stride);

// Spatial dims of a (channels, spatial...) shape.
Shape spatial_dims(const Shape& s);
// Output spatial dims (Axis::out of each axis).
Shape output_dims(const std::vector<Axis>& axes);
// Taps per window (product of the kernel sizes).
int64_t kernel_size(const std::vector<Axis>& axes);

// ncnn's window params of a 1-D/2-D/3-D layer, in our axis order (outermost
// first: d, h, w). Axis i of ncnn's order w, h, d reads id + 10*i for kernel,
// stride, dilation and pad_begin (left, top, front), pad_end_id + i for
// pad_end (right, bottom, behind); h and d default to w, a pad_end to its
// pad_begin. Pads are all >= 0, or all -233 (SAME_UPPER) / -234 (SAME_LOWER).
struct NcnnWindowIds {
    int kernel, stride, dilation, pad_begin, pad_end; // dilation -1: none (1)
};
struct NcnnWindow {
    std::vector<int64_t> kernel, stride, dilation;
    std::vector<Span> pads;
    int same = 0; // 0, -233 or -234
};
constexpr int kSameUpper = -233;
constexpr int kSameLower = -234;
// kernel_required: kernel sizes must be > 0 (0 is allowed when the weight input gives them).
NcnnWindow read_ncnn_window(const ParamDict& pd, int rank, const NcnnWindowIds& ids, bool kernel_required);

// y = conv(x) + bias. x (C, S...), weight [M][C/group][kernel...], y (M, O...);
// taps outside the input read pad_value.
void conv_forward(const Tensor& x, const float* weight, const float* bias, int64_t group,
                  const std::vector<Axis>& axes, float pad_value, Tensor& y, const ExecContext& ctx);

// Transposed convolution. x (C, S...), weight [M][C/group][kernel...], y (M, O...):
// input position i, tap k lands on output i*stride + k*dilation - pad_begin
// (positions outside y are the cut ones).
void deconv_forward(const Tensor& x, const float* weight, const float* bias, int64_t group,
                    const std::vector<Axis>& axes, Tensor& y, const ExecContext& ctx);

// ONNX ConvTranspose weight order [C][M/group][kernel...] -> ours [M][C/group][kernel...].
void deconv_weight_from_onnx(const float* src, int64_t in_channels, int64_t out_per_group, int64_t group,
                             int64_t ksize, float* dst);

// How pads take part in pooling. Onnx: a max sees only the taps inside the
// input (a window with none gives the dtype's lowest value); an average sums
// in double. Ncnn: a max folds every tap in order with std::max, pads reading
// the dtype's lowest value (-FLT_MAX, -128); an average sums and divides in
// float, as ncnn does.
enum class PoolConvention { Onnx, Ncnn };

// Max pooling, any numeric dtype. x (P, S...), y (P, O...).
// With `indices` (I64, y's shape; Onnx only): the flat position of each
// maximum in x, counted from `index_base` (row-major, or with column_major the
// spatial axes reversed as ONNX's storage_order=1); the first maximum wins.
void max_pool(const Tensor& x, const std::vector<Axis>& axes, PoolConvention convention, Tensor& y, Tensor* indices,
              int64_t index_base, bool column_major, const ExecContext& ctx);

// Average pooling of a floating-point x: the sum of the taps inside the input divided by
// the number of taps whose position lies in [counted[a].begin, counted[a].end)
// along every axis a (input coordinates; 0 when none).
void average_pool(const Tensor& x, const std::vector<Axis>& axes, const std::vector<Span>& counted,
                  PoolConvention convention, Tensor& y, const ExecContext& ctx);

} // namespace kestrel::window
