// ONNX's pooling window (kernel_shape, strides, pads, dilations) as layer
// params, shared by the pooling op's ONNX form and MaxUnpool.
#pragma once
#include <vector>

#include "kestrel/param_dict.h"
#include "ops/common/sliding_window.h"

namespace kestrel {

using window::Axis;
using window::Span;

// ONNX window attributes, one value per spatial axis.
struct OnnxWindow {
    std::vector<int64_t> kernel, stride, dilation;
    std::vector<Span> pads;

    // kernel_shape at param `first`, strides at first+1, pads at first+2 and,
    // when with_dilation, dilations at first+3.
    void load(const ParamDict& pd, int first, bool with_dilation)
    {
        for (int k : pd.get_ints(first)) kernel.push_back(k);
        const size_t rank = kernel.size();
        check(rank > 0, "kernel_shape (param ", first, ") must have at least one value");
        for (int64_t k : kernel) check(k > 0, "kernel_shape (param ", first, ") values must be > 0, got ", k);
        stride = per_axis(pd, first + 1, "strides");
        dilation = with_dilation ? per_axis(pd, first + 3, "dilations") : std::vector<int64_t>(rank, 1);
        const std::vector<int> p = pd.get_ints(first + 2);
        check(p.empty() || p.size() == 2 * rank, "pads (param ", first + 2, ") must have ", 2 * rank, " values, got ",
              p.size());
        pads.assign(rank, Span{});
        for (size_t a = 0; a < p.size() / 2; ++a) {
            pads[a] = Span{p[a], p[a + rank]};
            check(p[a] >= 0 && p[a + rank] >= 0, "pads (param ", first + 2, ") must be >= 0");
        }
    }

    std::vector<int64_t> per_axis(const ParamDict& pd, int id, const char* what) const
    {
        const std::vector<int> v = pd.get_ints(id);
        check(v.empty() || v.size() == kernel.size(), what, " (param ", id, ") must have ", kernel.size(),
              " values, got ", v.size());
        std::vector<int64_t> out(kernel.size(), 1);
        for (size_t a = 0; a < v.size(); ++a) {
            check(v[a] > 0, what, " (param ", id, ") values must be > 0, got ", v[a]);
            out[a] = v[a];
        }
        return out;
    }

    // The (N, C, spatial...) input shape this window expects.
    void expect_input(const Shape& s) const
    {
        check(s.size() == kernel.size() + 2, "expects an (N, C, ", kernel.size(), " spatial dims) input, got ",
              shape_str(s));
        for (size_t a = 2; a < s.size(); ++a) check(s[a] > 0, "expects a non-empty spatial size, got ", shape_str(s));
    }
};

} // namespace kestrel
