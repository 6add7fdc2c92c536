// HannWindow, HammingWindow, BlackmanWindow (ONNX): a 1-D window of the length
// in input 0 (one integer, >= 0). Params 0=periodic (default 1; 0 gives the
// symmetric window), 1=output dtype (a kestrel::DType code, default F32),
// 20=dynamic (see common/tensor_util.cpp).
// With N = size (periodic) or size - 1 (symmetric) and x = 2*pi*n/N:
//   Hann      0.5 - 0.5 cos(x)
//   Hamming   25/46 - 21/46 cos(x)
//   Blackman  0.42 - 0.5 cos(x) + 0.08 cos(2x)
// A symmetric window of length 1 is [1] (N would be 0).
#include <cmath>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"
#include "ops/signal/window_functions.h"

namespace kestrel {

namespace {

using signal::kPi;
using WindowFn = double (*)(double x);

template <WindowFn Window>
class WindowOp : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        periodic_ = pd.get_int(0, 1) != 0;
        dtype_ = dtype_param(pd, 1, DType::F32, "output dtype");
        dynamic_ = pd.get_int(20, 0) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        check(shape_numel(in[0].shape) == 1, "size (input 0) must hold one value, got shape ", shape_str(in[0].shape));
        if (!in[0].value.defined() && dynamic_) {
            out[0] = TensorDesc(Shape{0}, dtype_); // placeholder: forward() gives the real length
            return;
        }
        out[0] = TensorDesc(Shape{length(nd::known_value(in[0], "size (input 0)"))}, dtype_);
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 0); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const int64_t size = length(in[0]);
        if (out[0].shape() != Shape{size}) out[0] = Tensor({size}, dtype_);
        const double period = static_cast<double>(periodic_ ? size : size - 1);
        visit_dtype(dtype_, [&](auto tag) {
            using T = typename decltype(tag)::type;
            T* y = out[0].data<T>();
            for (int64_t i = 0; i < size; ++i)
                y[i] = convert_value<T>(period == 0 ? 1.0 : Window(2 * kPi * static_cast<double>(i) / period));
        });
    }

private:
    static int64_t length(const Tensor& size)
    {
        const int64_t n = nd::int_scalar(size, "size (input 0)");
        check(n >= 0, "size (input 0) must be >= 0, got ", n);
        return n;
    }

    bool periodic_ = true, dynamic_ = false;
    DType dtype_ = DType::F32;
};

} // namespace

std::unique_ptr<Op> make_hann_window() { return std::make_unique<WindowOp<signal::hann>>(); }
std::unique_ptr<Op> make_hamming_window() { return std::make_unique<WindowOp<signal::onnx_hamming>>(); }
std::unique_ptr<Op> make_blackman_window() { return std::make_unique<WindowOp<signal::blackman>>(); }

} // namespace kestrel
