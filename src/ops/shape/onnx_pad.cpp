// Pad (ONNX, opset 11+ form): input 0 data (any rank and dtype), input 1 pads
// (1-D integers [begin_0.., end_0..], one pair per padded axis; negative pads
// crop), input 2 constant_value (optional, one element, converted to data's
// dtype; default 0), input 3 axes (optional, opset 18: the axes the pads are
// for; default all). Param 0=mode: 0 constant, 1 reflect (mirror without
// repeating the edge), 2 edge (repeat the edge), 3 wrap (periodic). Param
// 20=dynamic (see nd_common.cpp). Attribute forms are converted to inputs.
#include <algorithm>
#include <cstring>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Pad : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        mode_ = pd.get_int(0, 0);
        check(mode_ >= 0 && mode_ <= 3, "mode (param 0) must be 0 constant, 1 reflect, 2 edge or 3 wrap, got ", mode_);
        dynamic_ = pd.get_int(20, 0) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 4);
        expect_output_count(out, 1);
        const bool known = in[1].value.defined() && (in.size() < 4 || in[3].value.defined());
        if (!known && dynamic_) {
            out[0] = TensorDesc(in[0].shape, in[0].dtype); // placeholder: forward() gives the real shape
            return;
        }
        const Tensor* axes = in.size() == 4 ? &nd::known_value(in[3], "axes (input 3)") : nullptr;
        const Pads p = pads(in[0].shape, nd::known_value(in[1], "pads (input 1)"), axes);
        out[0] = TensorDesc(out_shape(in[0].shape, p), in[0].dtype);
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& d = in[0].shape();
        const Pads p = pads(d, in[1], in.size() == 4 && in[3].defined() ? &in[3] : nullptr);
        const Shape s = out_shape(d, p);
        if (out[0].shape() != s) out[0] = Tensor(s, in[0].dtype());
        if (out[0].numel() == 0) return;
        const int r = static_cast<int>(d.size());
        const size_t es = dtype_size(in[0].dtype());
        // The fill value in data's dtype.
        std::vector<uint8_t> fill(es, 0);
        if (in.size() >= 3 && in[2].defined() && in[2].numel() > 0) {
            check(in[2].numel() == 1, "constant_value (input 2) must hold one value, got shape ", shape_str(in[2].shape()));
            const Tensor v = in[2].to(in[0].dtype());
            std::memcpy(fill.data(), v.raw(), es);
        }
        if (r == 0) {
            std::memcpy(out[0].raw(), in[0].raw(), es);
            return;
        }
        // Per axis: the source index of every output index (-1: the fill value).
        std::vector<std::vector<int64_t>> src(static_cast<size_t>(r));
        for (int k = 0; k < r; ++k) src[static_cast<size_t>(k)] = source_map(d[static_cast<size_t>(k)],
                                                                             s[static_cast<size_t>(k)], p.begin[static_cast<size_t>(k)], k);
        const Shape ds = nd::dense_strides(d);
        const int64_t inner = s[static_cast<size_t>(r - 1)];
        const int64_t rows = out[0].numel() / inner;
        const std::vector<int64_t>& last = src[static_cast<size_t>(r - 1)];
        // The run of the innermost axis that copies straight from the source.
        const int64_t mid0 = std::clamp<int64_t>(p.begin[static_cast<size_t>(r - 1)], 0, inner);
        const int64_t mid1 = std::clamp<int64_t>(p.begin[static_cast<size_t>(r - 1)] + d[static_cast<size_t>(r - 1)], mid0, inner);
        const uint8_t* in_p = static_cast<const uint8_t*>(in[0].raw());
        uint8_t* out_p = static_cast<uint8_t*>(out[0].raw());
        auto body = [&](int64_t r0, int64_t r1) {
            for (int64_t row = r0; row < r1; ++row) {
                uint8_t* o = out_p + static_cast<size_t>(row * inner) * es;
                int64_t base = 0, rem = row;
                bool filled = false;
                for (int k = r - 2; k >= 0; --k) {
                    const int64_t i = src[static_cast<size_t>(k)][static_cast<size_t>(rem % s[static_cast<size_t>(k)])];
                    rem /= s[static_cast<size_t>(k)];
                    if (i < 0) filled = true;
                    base += i * ds[static_cast<size_t>(k)];
                }
                for (int64_t x = 0; x < inner; ++x) {
                    if (!filled && x >= mid0 && x < mid1) {
                        std::memcpy(o + static_cast<size_t>(x) * es, in_p + static_cast<size_t>(base + last[static_cast<size_t>(x)]) * es,
                                    static_cast<size_t>(mid1 - mid0) * es);
                        x = mid1 - 1;
                        continue;
                    }
                    const int64_t i = last[static_cast<size_t>(x)];
                    const uint8_t* from = filled || i < 0 ? fill.data() : in_p + static_cast<size_t>(base + i) * es;
                    std::memcpy(o + static_cast<size_t>(x) * es, from, es);
                }
            }
        };
        if (rows > 1 && out[0].numel() >= 32768)
            ctx.parallel_for(rows, body);
        else
            body(0, rows);
    }

private:
    struct Pads {
        std::vector<int64_t> begin, end;
    };
    static Pads pads(const Shape& d, const Tensor& pads_value, const Tensor* axes_value)
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
    static Shape out_shape(const Shape& d, const Pads& p)
    {
        Shape s(d.size());
        for (size_t k = 0; k < d.size(); ++k) {
            s[k] = d[k] + p.begin[k] + p.end[k];
            check(s[k] >= 0, "pads ", p.begin[k], " and ", p.end[k], " crop axis ", k, " of ", shape_str(d),
                  " below zero");
        }
        return s;
    }
    std::vector<int64_t> source_map(int64_t dim, int64_t out_dim, int64_t begin, int axis) const
    {
        std::vector<int64_t> m(static_cast<size_t>(out_dim));
        for (int64_t o = 0; o < out_dim; ++o) {
            int64_t i = o - begin;
            if (i < 0 || i >= dim) {
                if (mode_ == 0) {
                    i = -1;
                } else {
                    check(dim > 0, "cannot pad the empty axis ", axis, " in mode ", mode_ == 1 ? "reflect" : mode_ == 2 ? "edge" : "wrap");
                    if (mode_ == 2) {
                        i = std::clamp<int64_t>(i, 0, dim - 1);
                    } else if (mode_ == 3) {
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
    int mode_ = 0;
    bool dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_nd_pad() { return std::make_unique<Pad>(); }

} // namespace kestrel
