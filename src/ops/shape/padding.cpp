// Padding: input 0 (any rank and dtype) with values added before and after
// each axis, by 4=type: 0 constant, 1 replicate (the edge value), 2 reflect
// (mirror without repeating the edge), 3 wrap (periodic).
// The pads come as
//   ncnn params   0=top 1=bottom 2=left 3=right 7=front 8=behind (all >= 0):
//                 rank 1 pads w (left/right); rank 2 also h (top/bottom); rank
//                 3 also c (front/behind); rank 4 pads d with front/behind,
//                 never c. 5=value; 6=per_channel_pad_data_size, then that
//                 many raw fp32 values from the .bin: the constant of each
//                 *output* channel (rank 3: channels added by front/behind
//                 have their own entries) or channel (rank 4). Reflect pads
//                 must be smaller than their axis (ncnn reads outside it).
//   inputs        21=1 (ONNX's Pad): input 1 pads (1-D integers [begin_0..,
//                 end_0..], one pair per padded axis; negative pads crop),
//                 input 2 constant_value (optional, one element, converted to
//                 data's dtype; default 0), input 3 axes (optional: the axes
//                 the pads are for; default all). 20=dynamic=1 accepts pads
//                 known only at run time (see common/tensor_util.cpp).
// One kernel: per axis, the source index of every output index (or "the pad
// value"); then each output row is copied run by run. Any dtype: the pad value
// is converted to it (int8 like ncnn's static_cast), elements move as bytes.
#include <algorithm>
#include <cstring>

#include "core/dtype_dispatch.h"
#include "ops/common/element_moves.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

enum PadType { kConstant = 0, kReplicate = 1, kReflect = 2, kWrap = 3 };

// Pads per axis, outermost first.
struct Pads {
    std::vector<int64_t> begin, end;
};

// The bytes of `v` stored as dtype `t`.
template <class V> std::vector<uint8_t> value_bytes(V v, DType t)
{
    std::vector<uint8_t> bytes(dtype_size(t));
    visit_dtype(t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T x = convert_value<T>(v);
        std::memcpy(bytes.data(), &x, sizeof(T));
    });
    return bytes;
}

// For each output index of an axis of size `dim`: the source index, or -1 for
// "the pad value".
std::vector<int64_t> source_map(int64_t dim, int64_t out_dim, int64_t begin, int type, size_t axis)
{
    std::vector<int64_t> m(static_cast<size_t>(out_dim));
    for (int64_t o = 0; o < out_dim; ++o) {
        int64_t i = o - begin;
        if (i < 0 || i >= dim) {
            if (type == kConstant) {
                i = -1;
            } else {
                check(dim > 0, "cannot pad the empty axis ", axis, " by replicating, reflecting or wrapping");
                if (type == kReplicate) {
                    i = std::clamp<int64_t>(i, 0, dim - 1);
                } else if (type == kWrap) {
                    i = ((i % dim) + dim) % dim;
                } else if (dim == 1) {
                    i = 0;
                } else {
                    const int64_t period = 2 * (dim - 1);
                    i = ((i % period) + period) % period;
                    if (i >= dim) i = period - i;
                }
            }
        }
        m[static_cast<size_t>(o)] = i;
    }
    return m;
}

Shape padded_shape(const Shape& d, const Pads& p)
{
    Shape s(d.size());
    for (size_t k = 0; k < d.size(); ++k) {
        s[k] = d[k] + p.begin[k] + p.end[k];
        check(s[k] >= 0, "pads ", p.begin[k], " and ", p.end[k], " crop axis ", k, " of ", shape_str(d), " below zero");
    }
    return s;
}

// `count` copies of the value of `es` bytes at v, from o on (copies of what is
// already written, doubling).
void fill_run(uint8_t* o, int64_t count, const uint8_t* v, size_t es)
{
    if (count <= 0) return;
    std::memcpy(o, v, es);
    for (int64_t done = 1; done < count;) {
        const int64_t n = std::min(done, count - done);
        std::memcpy(o + static_cast<size_t>(done) * es, o, static_cast<size_t>(n) * es);
        done += n;
    }
}

// y = x padded by p; the pad value is fill[0], or fill[i] where the output's
// index along `fill_axis` is i (ncnn's per-channel values).
void pad_copy(const Tensor& x, const Pads& pads, int type, const std::vector<std::vector<uint8_t>>& fill,
              int fill_axis, Tensor& y, const ExecContext& ctx)
{
    // The axes after the last padded one (and after fill_axis) as one: rows
    // of whole planes when only channels are padded (BlazeFace's 24 -> 28
    // channels: a copy and a fill, not a copy per row).
    Shape d = x.shape(), s = y.shape();
    Pads p = pads;
    int keep = fill_axis + 1;
    for (int k = 0; k < static_cast<int>(d.size()); ++k)
        if (p.begin[static_cast<size_t>(k)] != 0 || p.end[static_cast<size_t>(k)] != 0) keep = std::max(keep, k + 1);
    if (keep < static_cast<int>(d.size())) {
        const size_t first = static_cast<size_t>(keep);
        int64_t inner = 1;
        for (size_t k = first; k < d.size(); ++k) inner *= d[k];
        d.resize(first), s.resize(first), p.begin.resize(first), p.end.resize(first);
        d.push_back(inner), s.push_back(inner), p.begin.push_back(0), p.end.push_back(0);
    }
    const int r = static_cast<int>(d.size());
    const size_t es = dtype_size(x.dtype());
    if (y.numel() == 0) return;
    if (r == 0) {
        std::memcpy(y.raw(), x.raw(), es);
        return;
    }
    std::vector<std::vector<int64_t>> src(static_cast<size_t>(r));
    for (int k = 0; k < r; ++k) {
        const size_t u = static_cast<size_t>(k);
        src[u] = source_map(d[u], s[u], p.begin[u], type, u);
    }
    const Shape ds = nd::dense_strides(d);
    const size_t last_axis = static_cast<size_t>(r - 1);
    const int64_t inner = s[last_axis], rows = y.numel() / inner;
    const std::vector<int64_t>& last = src[last_axis];
    // The run of the innermost axis that copies straight from the source.
    const int64_t mid0 = std::clamp<int64_t>(p.begin[last_axis], 0, inner);
    const int64_t mid1 = std::clamp<int64_t>(p.begin[last_axis] + d[last_axis], mid0, inner);
    const uint8_t* in = static_cast<const uint8_t*>(x.raw());
    uint8_t* out = static_cast<uint8_t*>(y.raw());
    auto body = [&](int64_t r0, int64_t r1) {
        for (int64_t row = r0; row < r1; ++row) {
            uint8_t* o = out + static_cast<size_t>(row * inner) * es;
            int64_t base = 0, rem = row;
            size_t value = 0;
            bool filled = false;
            for (int k = r - 2; k >= 0; --k) {
                const size_t u = static_cast<size_t>(k);
                const int64_t at = rem % s[u];
                rem /= s[u];
                if (k == fill_axis) value = static_cast<size_t>(at);
                const int64_t i = src[u][static_cast<size_t>(at)];
                if (i < 0) filled = true;
                base += i * ds[u];
            }
            const uint8_t* v = fill[value].data();
            if (filled) { // a row wholly of pad values
                fill_run(o, inner, v, es);
                continue;
            }
            // The row's ends one value at a time (pad values or mapped
            // sources), its middle one straight copy.
            const auto edge = [&](int64_t xo) {
                const int64_t i = last[static_cast<size_t>(xo)];
                std::memcpy(o + static_cast<size_t>(xo) * es, i < 0 ? v : in + static_cast<size_t>(base + i) * es, es);
            };
            for (int64_t xo = 0; xo < mid0; ++xo) edge(xo);
            if (mid1 > mid0)
                std::memcpy(o + static_cast<size_t>(mid0) * es, in + static_cast<size_t>(base + last[static_cast<size_t>(mid0)]) * es,
                            static_cast<size_t>(mid1 - mid0) * es);
            for (int64_t xo = mid1; xo < inner; ++xo) edge(xo);
        }
    };
    if (rows > 1 && y.numel() >= 32768)
        ctx.parallel_for(rows, body);
    else
        body(0, rows);
}

// The pad value, or one per index along `axis` of the output (ncnn's per-channel data).
struct PadValues {
    std::vector<std::vector<uint8_t>> values;
    int axis = -1;
};

// A run of an axis's source map: `length` outputs from `begin` on take the
// sources source, source + step, ... (step 1 copies, 0 replicates, -1 reflects).
struct SourceRun {
    int64_t begin = 0, length = 0, source = 0, step = 1;
};

std::vector<SourceRun> source_runs(const std::vector<int64_t>& map)
{
    std::vector<SourceRun> runs;
    const int64_t n = static_cast<int64_t>(map.size());
    for (int64_t o = 0; o < n;) {
        if (map[static_cast<size_t>(o)] < 0) {
            ++o;
            continue;
        }
        SourceRun r{o, 1, map[static_cast<size_t>(o)], 1};
        if (o + 1 < n && map[static_cast<size_t>(o + 1)] >= 0) r.step = map[static_cast<size_t>(o + 1)] - r.source;
        while (o + r.length < n && map[static_cast<size_t>(o + r.length)] >= 0 &&
               map[static_cast<size_t>(o + r.length)] == r.source + r.length * r.step)
            ++r.length;
        runs.push_back(r);
        o += r.length;
    }
    return runs;
}

// Fills an output of shape `s` with its pad values (whole, or channel by channel).
void add_fills(const Shape& s, const PadValues& fill, ElementMoves& moves)
{
    if (fill.axis < 0) {
        moves.fills.push_back(ConstantFill{0, 0, s, nd::dense_strides(s), fill.values[0]});
        return;
    }
    const Shape plane(s.begin() + 1, s.end());
    const int64_t plane_size = shape_numel(plane);
    for (int64_t q = 0; q < s[0]; ++q)
        moves.fills.push_back(ConstantFill{0, q * plane_size, plane, nd::dense_strides(plane), fill.values[static_cast<size_t>(q)]});
}

class Padding : public Op, public MovesElements {
public:
    void load_param(const ParamDict& pd) override
    {
        type_ = pd.get_int(4, kConstant);
        pads_input_ = pd.get_int(21, 0) == 1;
        if (pads_input_) {
            check(type_ >= 0 && type_ <= 3, "type (param 4) must be 0 constant, 1 replicate, 2 reflect or 3 wrap, got ",
                  type_);
            dynamic_ = pd.get_int(20, 0) != 0;
            return;
        }
        static const int kIds[6] = {0, 1, 2, 3, 7, 8};
        static const char* const kNames[6] = {"top", "bottom", "left", "right", "front", "behind"};
        for (int i = 0; i < 6; ++i) {
            pads_[i] = pd.get_int(kIds[i], 0);
            check(pads_[i] >= 0, kNames[i], " (param ", kIds[i], ") must be >= 0, got ", pads_[i]);
        }
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
        expect_input_count(in, pads_input_ ? 2 : 1, pads_input_ ? 4 : 1);
        expect_output_count(out, 1);
        if (!pads_input_) {
            out[0] = TensorDesc(padded_shape(in[0].shape, ncnn_pads(in[0].shape)), in[0].dtype);
            return;
        }
        if (!output_shapes_known(in) && dynamic_) {
            out[0] = TensorDesc(in[0].shape, in[0].dtype); // placeholder: forward() gives the real shape
            return;
        }
        const Tensor* axes = in.size() == 4 ? &nd::known_value(in[3], "axes (input 3)") : nullptr;
        const Pads p = input_pads(in[0].shape, nd::known_value(in[1], "pads (input 1)"), axes);
        out[0] = TensorDesc(padded_shape(in[0].shape, p), in[0].dtype);
    }

    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override
    {
        return in.size() < 2 || (in[1].value.defined() && (in.size() < 4 || in[3].value.defined()));
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const auto given = [&](size_t i) { return i < in.size() && in[i].defined() ? &in[i] : nullptr; };
        PadValues fill;
        const Pads p = resolve(in[0].shape(), in[0].dtype(), given(1), given(2), given(3), fill);
        const Shape s = padded_shape(in[0].shape(), p);
        if (out[0].shape() != s) out[0] = Tensor(s, in[0].dtype()); // dynamic pads only
        pad_copy(in[0], p, type_, fill.values, fill.axis, out[0], ctx);
    }

    // Per axis, the runs of its source map; the output is every combination
    // of one run per axis, copied, over a fill of the pad values.
    bool element_moves(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                       ElementMoves& moves) const override
    {
        if (!output_shapes_known(in) || (in.size() > 2 && !in[2].value.defined())) return false;
        const auto given = [&](size_t i) { return i < in.size() && in[i].value.defined() ? &in[i].value : nullptr; };
        PadValues fill;
        const Shape& d = in[0].shape;
        const Pads p = resolve(d, in[0].dtype, given(1), given(2), given(3), fill);
        const Shape& s = out[0].shape;
        const std::vector<int64_t> in_strides = nd::dense_strides(d), out_strides = nd::dense_strides(s);
        std::vector<std::vector<SourceRun>> runs;
        size_t combinations = 1;
        bool padded = false;
        for (size_t k = 0; k < d.size(); ++k) {
            const std::vector<int64_t> map = source_map(d[k], s[k], p.begin[k], type_, k);
            padded = padded || std::count(map.begin(), map.end(), -1) > 0;
            runs.push_back(source_runs(map));
            combinations *= std::max<size_t>(runs.back().size(), 1);
            if (combinations > kMaxCopies) return false;
        }
        if (padded) add_fills(s, fill, moves);
        for (size_t n = 0; n < combinations; ++n) {
            StridedCopy c{0, 0, 0, 0, Shape(d.size()), in_strides, out_strides};
            size_t rem = n;
            bool empty = false;
            for (size_t k = d.size(); k-- > 0;) {
                if (runs[k].empty()) {
                    empty = true;
                    break;
                }
                const SourceRun& r = runs[k][rem % runs[k].size()];
                rem /= runs[k].size();
                c.dims[k] = r.length;
                c.in_offset += r.source * in_strides[k];
                c.in_strides[k] *= r.step;
                c.out_offset += r.begin * out_strides[k];
            }
            if (!empty) moves.copies.push_back(std::move(c));
        }
        return true;
    }

private:
    // The most copies element_moves describes (runs multiply across axes).
    static constexpr size_t kMaxCopies = 4096;

    // The pads and pad values for input 0 of shape `d` and dtype `dt`, given
    // the pads, constant_value and axes inputs (null where absent).
    Pads resolve(const Shape& d, DType dt, const Tensor* pads, const Tensor* value, const Tensor* axes,
                 PadValues& fill) const
    {
        if (pads_input_) {
            check(pads != nullptr, "pads (input 1) is not known");
            const Pads p = input_pads(d, *pads, axes);
            fill.values.assign(1, std::vector<uint8_t>(dtype_size(dt), 0));
            if (value != nullptr && value->numel() > 0) {
                check(value->numel() == 1, "constant_value (input 2) must hold one value, got shape ",
                      shape_str(value->shape()));
                if (value->dtype() == dt)
                    std::memcpy(fill.values[0].data(), value->raw(), fill.values[0].size());
                else
                    visit_dtype(value->dtype(), [&](auto tag) {
                        using T = typename decltype(tag)::type;
                        fill.values[0] = value_bytes(value->data<T>()[0], dt);
                    });
            }
            return p;
        }
        const Pads p = ncnn_pads(d);
        // ncnn's pad value, per output channel (the outermost axis) with per-channel data.
        const bool per_channel = !per_channel_.empty() && d.size() >= 3;
        fill.axis = per_channel ? 0 : -1;
        const int64_t channels = per_channel ? d[0] + p.begin[0] + p.end[0] : 1;
        for (int64_t q = 0; q < channels; ++q)
            fill.values.push_back(value_bytes(per_channel ? per_channel_[static_cast<size_t>(q)] : value_, dt));
        return p;
    }

    // ncnn's pads for a rank 1-4 shape, checked.
    Pads ncnn_pads(const Shape& s) const
    {
        const NcnnDims n = ncnn_dims(s);
        Pads p{std::vector<int64_t>(s.size(), 0), std::vector<int64_t>(s.size(), 0)};
        const int top = pads_[0], bottom = pads_[1], left = pads_[2], right = pads_[3], front = pads_[4],
                  behind = pads_[5];
        const size_t w = s.size() - 1;
        p.begin[w] = left, p.end[w] = right;
        if (n.dims >= 2) p.begin[w - 1] = top, p.end[w - 1] = bottom;
        if (n.dims == 3) p.begin[0] = front, p.end[0] = behind;
        if (n.dims == 4) p.begin[1] = front, p.end[1] = behind;
        for (size_t a = 0; a < s.size(); ++a) {
            if (p.begin[a] == 0 && p.end[a] == 0) continue;
            check(s[a] >= 1, "cannot pad axis ", a, " of size 0");
            if (type_ == kReflect)
                check(p.begin[a] < s[a] && p.end[a] < s[a], "reflect padding ", p.begin[a], "/", p.end[a], " on axis ",
                      a, " must be smaller than its size ", s[a]);
        }
        if (!per_channel_.empty() && n.dims >= 3)
            check(static_cast<int64_t>(per_channel_.size()) >= s[0] + p.begin[0] + p.end[0], "per_channel_pad_data has ",
                  per_channel_.size(), " values but the output has ", s[0] + p.begin[0] + p.end[0], " channels");
        check(per_channel_size_ == 0 || !per_channel_.empty(), "per-channel pad data was not loaded");
        return p;
    }

    // ONNX's pads input: [begins, ends] for the axes input's axes (default all).
    static Pads input_pads(const Shape& d, const Tensor& pads_value, const Tensor* axes_value)
    {
        const int64_t r = static_cast<int64_t>(d.size());
        const std::vector<int64_t> v = nd::int_values(pads_value, "pads (input 1)");
        std::vector<int> axes;
        if (axes_value) {
            for (int64_t a : nd::int_values(*axes_value, "axes (input 3)")) axes.push_back(nd::normalize_axis(a, r, "axis"));
        } else {
            for (int k = 0; k < r; ++k) axes.push_back(k);
        }
        check(v.size() == 2 * axes.size(), "pads (input 1) has ", v.size(), " values; expected ", 2 * axes.size(),
              " (begin and end for each of ", axes.size(), " axes)");
        Pads p{std::vector<int64_t>(d.size(), 0), std::vector<int64_t>(d.size(), 0)};
        std::vector<bool> seen(d.size(), false);
        for (size_t i = 0; i < axes.size(); ++i) {
            const size_t a = static_cast<size_t>(axes[i]);
            check(!seen[a], "axes repeat axis ", a);
            seen[a] = true;
            p.begin[a] = v[i];
            p.end[a] = v[i + axes.size()];
        }
        return p;
    }

    int type_ = kConstant;
    bool pads_input_ = false, dynamic_ = false;
    int pads_[6] = {0, 0, 0, 0, 0, 0}; // top bottom left right front behind
    float value_ = 0.f;
    int per_channel_size_ = 0;
    std::vector<float> per_channel_;
};

} // namespace

std::unique_ptr<Op> make_padding() { return std::make_unique<Padding>(); }

} // namespace kestrel
