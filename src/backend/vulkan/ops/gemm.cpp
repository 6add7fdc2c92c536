// Gemm (ncnn's, float32) on the GPU (shaders/matmul.comp): A, B and C as
// inputs or as the weights loaded, transposes and output_transpose as
// strides, C's broadcast types as strides 0; y = alpha * (A B + beta * C).
// int8 Gemm and weights the graph has released stay on the CPU.
#include "backend/vulkan/gpu_kernel.h"
#include "backend/vulkan/ops/matmul.h"

namespace kestrel::vulkan {

namespace {

// (rows, cols) of an operand as ncnn's Gemm takes it: 1-D a row, 2-D, or (c, 1, w).
bool as_matrix(const Shape& s, int64_t& rows, int64_t& cols)
{
    if (s.size() == 1) rows = 1, cols = s[0];
    else if (s.size() == 2) rows = s[0], cols = s[1];
    else if (s.size() == 3 && s[1] == 1) rows = s[0], cols = s[2];
    else return false;
    return true;
}

} // namespace

std::unique_ptr<DeviceKernel> make_gemm_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                               const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    const ParamDict& pd = l.params;
    if (pd.get_int(18, 0) != 0 || out.size() != 1) return nullptr;
    for (const TensorDesc& d : in)
        if (d.dtype != DType::F32) return nullptr;
    const bool transA = pd.get_int(2, 0) == 1, transB = pd.get_int(3, 0) == 1;
    const bool constA = pd.get_int(4, 0) == 1, constB = pd.get_int(5, 0) == 1, constC = pd.get_int(6, 0) == 1;
    const int typeC_param = pd.get_int(10, 0);
    // The weights as loaded, in order A, B, C.
    size_t w = 0;
    const auto weight = [&](bool constant) { return constant && w < l.weights.size() ? l.weights[w++].value : Tensor(); };
    const Tensor wa = weight(constA), wb = weight(constB), wc = weight(constC && typeC_param != -1);
    size_t next = 0;
    int64_t M = 0, K = 0, N = 0, kb = 0, rows = 0, cols = 0;
    if (constA) {
        M = pd.get_int(7, 0), K = pd.get_int(9, 0);
        if (!wa.defined() || wa.numel() != M * K) return nullptr;
    } else {
        if (next >= in.size() || !as_matrix(in[next++].shape, rows, cols)) return nullptr;
        M = transA ? cols : rows, K = transA ? rows : cols;
    }
    if (constB) {
        N = pd.get_int(8, 0), kb = pd.get_int(9, 0);
        if (!wb.defined() || wb.numel() != N * kb) return nullptr;
    } else {
        if (next >= in.size() || !as_matrix(in[next++].shape, rows, cols)) return nullptr;
        N = transB ? rows : cols, kb = transB ? cols : rows;
    }
    if (kb != K || M <= 0 || N <= 0 || K <= 0) return nullptr;
    // C: its broadcast type from the param (constant) or its shape (input), as the CPU layer.
    int typeC = -1;
    int64_t c_floats = 0;
    if (constC) {
        typeC = typeC_param;
        if (typeC != -1 && !wc.defined()) return nullptr;
        c_floats = wc.defined() ? wc.numel() : 0;
    } else if (next < in.size()) {
        // Only the shapes whose broadcast is unambiguous.
        const Shape& s = in[next].shape;
        const int64_t n = shape_numel(s);
        typeC = n == 1                                 ? 0
                : s == Shape{M, N}                     ? 3
                : s == Shape{M, 1}                     ? 2
                : (s == Shape{1, N} || s == Shape{N}) && M != N ? 4
                                                       : -2;
        if (typeC == -2 || next + 1 != in.size()) return nullptr;
        c_floats = n;
    }
    if (next + (constC || typeC == -1 ? 0 : 1) != in.size()) return nullptr;
    const bool out_transpose = pd.get_int(14, 0) == 1;
    if (shape_numel(out[0].shape) != M * N || M * N >= (int64_t{1} << 31) || M * K >= (int64_t{1} << 31) ||
        N * K >= (int64_t{1} << 31))
        return nullptr;
    auto kernel = std::make_unique<StepsKernel>(device);
    size_t input = 0;
    // An operand: the weight as loaded, or the next input.
    const auto operand = [&](const Tensor& constant, int64_t floats) {
        return constant.defined() ? kernel->constant(constant) : kernel->input(input++, floats);
    };
    const Buffer* a = operand(wa, M * K);
    const Buffer* b = operand(wb, K * N);
    const Buffer* c = typeC == -1 ? nullptr : operand(constC ? wc : Tensor(), c_floats);
    const Buffer* y = kernel->buffer(M * N);
    kernel->set_output(y);
    const Strides as = transA ? Strides{0, 1, M} : Strides{0, K, 1};
    const Strides bs = transB ? Strides{0, 1, K} : Strides{0, N, 1};
    const Strides cs = typeC == 0 ? Strides{0, 0, 0} : typeC == 1 || typeC == 2 ? Strides{0, 1, 0}
                       : typeC == 3                 ? Strides{0, N, 1}
                                                    : Strides{0, 0, 1};
    const Strides ys = out_transpose ? Strides{0, 1, M} : Strides{0, N, 1};
    kernel->add(matmul(a, as, b, bs, c, cs, y, ys, 1, M, N, K, pd.get_float(0, 1.f), pd.get_float(1, 1.f)));
    return kernel;
}

} // namespace kestrel::vulkan
