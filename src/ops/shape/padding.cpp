// Padding (ncnn): 0=top 1=bottom 2=left 3=right 7=front 8=behind (all >= 0),
// 4=type (0 constant, 1 replicate, 2 reflect), 5=value, 6=per_channel_pad_data_size
// (then that many raw fp32 values from the .bin).
//   rank 1 pads w (left/right); rank 2 also h (top/bottom); rank 3 also c
//   (front/behind); rank 4 pads d with front/behind, never c.
// Constant padding uses `value`, or with per-channel data the entry of the
// *output* channel (rank 3: channels added by front/behind have their own
// entries) or of the channel (rank 4). Reflect excludes the edge, so each pad
// must be smaller than its axis. Any dtype: the pad value is converted to it
// (int8 like ncnn's static_cast), elements are moved as bytes.
#include <algorithm>
#include <cstring>

#include "core/dtype_dispatch.h"
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum PadType { kConstant = 0, kReplicate = 1, kReflect = 2 };

// For each output index of an axis: the source index, or -1 for "pad value".
std::vector<int64_t> axis_map(int64_t n, int64_t lo, int64_t hi, int type)
{
    std::vector<int64_t> m(static_cast<size_t>(n + lo + hi));
    for (int64_t i = 0; i < n + lo + hi; ++i) {
        int64_t j = i - lo;
        if (j < 0 || j >= n) {
            if (type == kConstant) j = -1;
            else if (type == kReplicate) j = std::clamp<int64_t>(j, 0, n - 1);
            else j = j < 0 ? -j : 2 * (n - 1) - j;
        }
        m[static_cast<size_t>(i)] = j;
    }
    return m;
}

// The bytes of float `v` stored as dtype `t`.
std::vector<uint8_t> value_bytes(float v, DType t)
{
    std::vector<uint8_t> bytes(dtype_size(t));
    visit_dtype(t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T x = convert_value<T>(v);
        std::memcpy(bytes.data(), &x, sizeof(T));
    });
    return bytes;
}

class Padding : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        static const int kIds[6] = {0, 1, 2, 3, 7, 8};
        static const char* const kNames[6] = {"top", "bottom", "left", "right", "front", "behind"};
        for (int i = 0; i < 6; ++i) {
            pads_[i] = pd.get_int(kIds[i], 0);
            check(pads_[i] >= 0, kNames[i], " (param ", kIds[i], ") must be >= 0, got ", pads_[i]);
        }
        type_ = pd.get_int(4, 0);
        check(type_ >= 0 && type_ <= 2, "type (param 4) must be 0 (constant), 1 (replicate) or 2 (reflect), got ",
              type_);
        value_ = pd.get_float(5, 0.f);
        per_channel_size_ = pd.get_int(6, 0);
        check(per_channel_size_ >= 0, "per_channel_pad_data_size (param 6) must be >= 0, got ", per_channel_size_);
        per_channel_.clear();
    }

    void load_model(WeightReader& wr) override
    {
        if (per_channel_size_ == 0) return;
        const Tensor t = wr.load(per_channel_size_, WeightEncoding::Raw).to(DType::F32);
        check(t.numel() == per_channel_size_, "per_channel_pad_data has ", t.numel(), " values, expected ",
              per_channel_size_);
        per_channel_.assign(t.data<float>(), t.data<float>() + t.numel());
    }

    int64_t weight_bytes() const override { return static_cast<int64_t>(per_channel_.size() * sizeof(float)); }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        const Geometry g = geometry(in[0].shape);
        out[0] = TensorDesc{};
        out[0].shape = shape_from_ncnn(g.rank, g.out[3], g.out[2], g.out[1], g.out[0]);
        out[0].dtype = in[0].dtype;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Geometry g = geometry(in[0].shape());
        const DType dt = in[0].dtype();
        const size_t es = dtype_size(dt);
        // Axis maps for (c, d, h, w).
        std::vector<int64_t> maps[4];
        for (int a = 0; a < 4; ++a) maps[a] = axis_map(g.in[a], g.lo[a], g.hi[a], type_);
        // One pad value per output channel (the value depends on the channel only).
        std::vector<std::vector<uint8_t>> fill(static_cast<size_t>(g.out[0]));
        for (int64_t q = 0; q < g.out[0]; ++q) {
            const bool per_channel = !per_channel_.empty() && g.rank >= 3;
            fill[static_cast<size_t>(q)] = value_bytes(per_channel ? per_channel_[static_cast<size_t>(q)] : value_, dt);
        }
        const int64_t ow = g.out[3], iw = g.in[3];
        const std::vector<int64_t>& wmap = maps[3];
        const int64_t left = g.lo[3];
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        uint8_t* dst = static_cast<uint8_t*>(out[0].raw());
        const int64_t rows = g.out[0] * g.out[1] * g.out[2];
        ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                const int64_t y = r % g.out[2], z = (r / g.out[2]) % g.out[1], q = r / (g.out[2] * g.out[1]);
                const uint8_t* v = fill[static_cast<size_t>(q)].data();
                uint8_t* o = dst + static_cast<size_t>(r * ow) * es;
                const int64_t sq = maps[0][static_cast<size_t>(q)], sz = maps[1][static_cast<size_t>(z)],
                              sy = maps[2][static_cast<size_t>(y)];
                if (sq < 0 || sz < 0 || sy < 0) {
                    for (int64_t x = 0; x < ow; ++x) std::memcpy(o + x * es, v, es);
                    continue;
                }
                const uint8_t* s = src + static_cast<size_t>(((sq * g.in[1] + sz) * g.in[2] + sy) * iw) * es;
                for (int64_t x = 0; x < left; ++x) {
                    const int64_t sx = wmap[static_cast<size_t>(x)];
                    std::memcpy(o + x * es, sx < 0 ? v : s + sx * es, es);
                }
                std::memcpy(o + left * es, s, static_cast<size_t>(iw) * es);
                for (int64_t x = left + iw; x < ow; ++x) {
                    const int64_t sx = wmap[static_cast<size_t>(x)];
                    std::memcpy(o + x * es, sx < 0 ? v : s + sx * es, es);
                }
            }
        });
    }

private:
    // Sizes and pads in (c, d, h, w) order; axes a rank lacks are 1 and unpadded.
    struct Geometry {
        int rank = 0;
        int64_t in[4] = {1, 1, 1, 1}, out[4] = {1, 1, 1, 1}, lo[4] = {0, 0, 0, 0}, hi[4] = {0, 0, 0, 0};
    };

    Geometry geometry(const Shape& s) const
    {
        const NcnnDims n = ncnn_dims(s);
        Geometry g;
        g.rank = n.dims;
        g.in[0] = n.c, g.in[1] = n.d, g.in[2] = n.h, g.in[3] = n.w;
        const int top = pads_[0], bottom = pads_[1], left = pads_[2], right = pads_[3], front = pads_[4],
                  behind = pads_[5];
        g.lo[3] = left, g.hi[3] = right;
        if (n.dims >= 2) g.lo[2] = top, g.hi[2] = bottom;
        if (n.dims == 3) g.lo[0] = front, g.hi[0] = behind;
        if (n.dims == 4) g.lo[1] = front, g.hi[1] = behind;
        static const char* const kAxis[4] = {"c", "d", "h", "w"};
        for (int a = 0; a < 4; ++a) {
            g.out[a] = g.in[a] + g.lo[a] + g.hi[a];
            if (g.lo[a] == 0 && g.hi[a] == 0) continue;
            check(g.in[a] >= 1, "cannot pad axis ", kAxis[a], " of size 0");
            if (type_ == kReflect)
                check(g.lo[a] < g.in[a] && g.hi[a] < g.in[a], "reflect padding ", g.lo[a], "/", g.hi[a], " on axis ",
                      kAxis[a], " must be smaller than its size ", g.in[a]);
        }
        if (!per_channel_.empty() && n.dims >= 3)
            check(static_cast<int64_t>(per_channel_.size()) >= g.out[0], "per_channel_pad_data has ",
                  per_channel_.size(), " values but the output has ", g.out[0], " channels");
        check(per_channel_size_ == 0 || !per_channel_.empty(), "per-channel pad data was not loaded");
        return g;
    }

    int pads_[6] = {0, 0, 0, 0, 0, 0}; // top bottom left right front behind
    int type_ = kConstant;
    float value_ = 0.f;
    int per_channel_size_ = 0;
    std::vector<float> per_channel_;
};

} // namespace

std::unique_ptr<Op> make_padding() { return std::make_unique<Padding>(); }

} // namespace kestrel
