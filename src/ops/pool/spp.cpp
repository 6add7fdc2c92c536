// SPP (ncnn, Caffe's spatial pyramid pooling): 0=pooling_type (0 max, 1
// average), 1=pyramid_height (1). Level p cuts each channel of a (c, h, w)
// float32 input into 2^p x 2^p windows of ceil(size / 2^p) at that stride,
// the input centred in zero padding (max pooling sees those zeros too; an
// average divides by the whole window); the levels' (c, 2^p, 2^p) results,
// flattened, are concatenated: output (c * (4^height - 1) / 3).
// ncnn allocates only (w=bins, h=1, c=2) for this and overruns it when c > 2;
// Kestrel gives the whole vector.
#include <algorithm>
#include <cmath>

#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Spp : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        type_ = pd.get_int(0, 0);
        check(type_ == 0 || type_ == 1, "pooling_type (param 0) must be 0 (max) or 1 (avg), got ", type_);
        height_ = pd.get_int(1, 1);
        check(height_ >= 1 && height_ <= 8, "pyramid_height (param 1) must be 1..8, got ", height_);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        check(s.size() == 3 && s[1] > 0 && s[2] > 0, "expects a non-empty (c,h,w) input, got ", shape_str(s));
        out[0] = TensorDesc(Shape{s[0] * (((int64_t{1} << (2 * height_)) - 1) / 3)}, DType::F32);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t c = in[0].dim(0), h = in[0].dim(1), w = in[0].dim(2);
        float* y = out[0].data<float>();
        for (int p = 0; p < height_; ++p) {
            const int64_t bins = int64_t{1} << p;
            const Level ly = level(h, bins), lx = level(w, bins);
            ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
                for (int64_t q = begin; q < end; ++q)
                    pool_channel(in[0].data<float>() + q * h * w, h, w, ly, lx, bins, y + q * bins * bins);
            });
            y += c * bins * bins;
        }
    }

private:
    // One axis of a level: window size (= stride) and the padding before the input.
    struct Level {
        int64_t kernel, pad;
    };
    static Level level(int64_t n, int64_t bins)
    {
        const int64_t kernel = (n + bins - 1) / bins;
        return Level{kernel, (kernel * bins - n + 1) / 2};
    }

    void pool_channel(const float* x, int64_t h, int64_t w, const Level& ly, const Level& lx, int64_t bins,
                      float* y) const
    {
        for (int64_t i = 0; i < bins; ++i)
            for (int64_t j = 0; j < bins; ++j) {
                float best = 0.f, sum = 0.f;
                bool first = true;
                for (int64_t a = 0; a < ly.kernel; ++a)
                    for (int64_t b = 0; b < lx.kernel; ++b) {
                        const int64_t r = i * ly.kernel + a - ly.pad, col = j * lx.kernel + b - lx.pad;
                        // The padded border and anything past the padded size read as 0.
                        const float v = r >= 0 && r < h && col >= 0 && col < w ? x[r * w + col] : 0.f;
                        best = first ? v : std::max(best, v);
                        first = false;
                        sum += v;
                    }
                y[i * bins + j] = type_ == 0 ? best : sum / static_cast<float>(ly.kernel * lx.kernel);
            }
    }

    int type_ = 0, height_ = 1;
};

} // namespace

std::unique_ptr<Op> make_spp() { return std::make_unique<Spp>(); }

} // namespace kestrel
