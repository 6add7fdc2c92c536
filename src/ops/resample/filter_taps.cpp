// The filter kernels' tap rule (see taps.h): TensorFlow's resize filters,
// computed in double as the formulas read, then normalized.
#include <algorithm>
#include <cmath>

#include "ops/resample/taps.h"

namespace kestrel {

namespace {

using image::Filter;

constexpr double kPi = 3.14159265358979323846;

double sinc(double x) { return x == 0 ? 1.0 : std::sin(kPi * x) / (kPi * x); }

// The kernel's radius: it is zero at and past it.
double radius(Filter f)
{
    switch (f) {
    case Filter::Bilinear: return 1;
    case Filter::Bicubic: return 2;
    case Filter::Lanczos3: return 3;
    case Filter::Lanczos5: return 5;
    case Filter::Gaussian: return 1.5;
    case Filter::MitchellCubic: return 2;
    default: return 0.5; // Nearest and Area have rules of their own
    }
}

double kernel(Filter f, double a, double x)
{
    x = std::fabs(x);
    if (x >= radius(f)) return 0;
    switch (f) {
    case Filter::Bilinear: return 1 - x;
    case Filter::Bicubic: return x <= 1 ? ((a + 2) * x - (a + 3)) * x * x + 1 : ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    case Filter::Lanczos3: return sinc(x) * sinc(x / 3);
    case Filter::Lanczos5: return sinc(x) * sinc(x / 5);
    case Filter::Gaussian: return std::exp(-x * x / (2 * 0.5 * 0.5));
    case Filter::MitchellCubic: // B = C = 1/3
        return x < 1 ? ((7.0 / 6 * x - 2) * x) * x + 8.0 / 9 : ((-7.0 / 18 * x + 2) * x - 10.0 / 3) * x + 16.0 / 9;
    default: return 0;
    }
}

// One output's taps: (input index, weight) pairs.
using Taps = std::vector<std::pair<int64_t, double>>;

// floor((o + 0.5) * in / out), exactly (in integers: no tie goes the wrong way).
Taps nearest(int64_t in_len, int64_t out_len, int64_t o)
{
    return {{std::min((2 * o + 1) * in_len / (2 * out_len), in_len - 1), 1.0}};
}

// The input area [o, o + 1) * scale covers, each pixel weighted by its overlap.
Taps area(double scale, int64_t in_len, int64_t o)
{
    const double lo = o * scale, hi = std::min((o + 1) * scale, static_cast<double>(in_len));
    Taps taps;
    for (int64_t i = static_cast<int64_t>(std::floor(lo)); i < in_len && i < hi; ++i)
        taps.push_back({i, (std::min(hi, i + 1.0) - std::max(lo, static_cast<double>(i))) / scale});
    return taps;
}

Taps kernel_taps(const image::ResizeOptions& rule, double scale, int64_t in_len, int64_t o)
{
    const double stretch = rule.antialias && scale > 1 ? scale : 1.0;
    const double support = radius(rule.filter) * stretch;
    const double center = (o + 0.5) * scale - 0.5; // in input indices
    Taps taps;
    for (int64_t i = static_cast<int64_t>(std::floor(center - support)) + 1; i < center + support; ++i) {
        const bool outside = i < 0 || i >= in_len;
        if (outside && rule.exclude_outside) continue;
        const double w = kernel(rule.filter, rule.cubic_a, (i - center) / stretch);
        taps.push_back({std::min(std::max<int64_t>(i, 0), in_len - 1), w});
    }
    return taps;
}

} // namespace

AxisTaps filter_axis_taps(const image::ResizeOptions& rule, size_t axis, int64_t in_len, int64_t out_len)
{
    check(in_len > 0 && out_len > 0, "resize: lengths must be positive, got ", in_len, " -> ", out_len);
    const double scale = static_cast<double>(in_len) / static_cast<double>(out_len);
    std::vector<Taps> all(static_cast<size_t>(out_len));
    size_t widest = 1;
    for (int64_t o = 0; o < out_len; ++o) {
        Taps& t = all[static_cast<size_t>(o)];
        t = rule.filter == Filter::Nearest ? nearest(in_len, out_len, o)
            : rule.filter == Filter::Area  ? area(scale, in_len, o)
                                           : kernel_taps(rule, scale, in_len, o);
        double sum = 0;
        for (const auto& tap : t) sum += tap.second;
        for (auto& tap : t) tap.second = sum != 0 ? tap.second / sum : 0;
        widest = std::max(widest, t.size());
    }
    AxisTaps taps;
    taps.axis = axis;
    taps.resize(out_len, static_cast<int>(widest));
    for (int64_t o = 0; o < out_len; ++o) {
        const Taps& t = all[static_cast<size_t>(o)];
        for (size_t k = 0; k < widest; ++k) {
            // Narrower outputs repeat their first tap with weight 0.
            const size_t at = static_cast<size_t>(o) * widest + k;
            taps.index[at] = k < t.size() ? t[k].first : t.empty() ? 0 : t[0].first;
            taps.weight[at] = k < t.size() ? static_cast<float>(t[k].second) : 0.f;
        }
    }
    return taps;
}

} // namespace kestrel
