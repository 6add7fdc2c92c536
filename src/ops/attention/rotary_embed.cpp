// RotaryEmbed (ncnn, rotary position embedding): x (heads, seq, dim) or one
// head (seq, dim), float32, with cos and sin tables (seq, dim/2). Each pair
// (a, b) of a row becomes (a cos - b sin, a sin + b cos) with the row's
// j-th cos/sin; the pairs are (x[2j], x[2j+1]) with 0=interleaved 1, else
// (x[j], x[j + dim/2]) (the halves, as GPT-NeoX and LLaMA write it).
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class RotaryEmbed : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        const int v = pd.get_int(0, 0);
        check(v == 0 || v == 1, "interleaved (param 0) must be 0 or 1, got ", v);
        interleaved_ = v == 1;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 3, 3);
        expect_output_count(out, 1);
        for (const TensorDesc& d : in) expect_f32(d);
        const Shape& x = in[0].shape;
        check((x.size() == 2 || x.size() == 3) && x.back() % 2 == 0 && x.back() > 0,
              "x (input 0) must be (heads, seq, dim) or (seq, dim) with an even dim > 0, got ", shape_str(x));
        const Shape table = {x[x.size() - 2], x.back() / 2};
        for (int i : {1, 2})
            check(in[static_cast<size_t>(i)].shape == table, i == 1 ? "cos" : "sin", " (input ", i, ") must be ",
                  shape_str(table), ", got ", shape_str(in[static_cast<size_t>(i)].shape));
        out[0] = in[0];
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& s = in[0].shape();
        const int64_t dim = s.back(), seq = s[s.size() - 2], half = dim / 2, rows = in[0].numel() / dim;
        const float* x = in[0].data<float>();
        const float* cos = in[1].data<float>();
        const float* sin = in[2].data<float>();
        float* y = out[0].data<float>();
        // Pair j of a row: its two elements' offsets.
        const int64_t first_step = interleaved_ ? 2 : 1, second = interleaved_ ? 1 : half;
        ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                const float* xr = x + r * dim;
                float* yr = y + r * dim;
                const float* c = cos + r % seq * half;
                const float* sn = sin + r % seq * half;
                for (int64_t j = 0; j < half; ++j) {
                    const int64_t i0 = j * first_step, i1 = i0 + second;
                    const float a = xr[i0], b = xr[i1];
                    yr[i0] = a * c[j] - b * sn[j];
                    yr[i1] = a * sn[j] + b * c[j];
                }
            }
        });
    }

private:
    bool interleaved_ = false;
};

} // namespace

std::unique_ptr<Op> make_rotary_embed() { return std::make_unique<RotaryEmbed>(); }

} // namespace kestrel
