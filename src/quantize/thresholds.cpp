#include "quantize/thresholds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kestrel {

namespace {

// P merged into `levels` equal ranges of bins (fractional at their edges),
// each range's mass spread back over the bins of P that hold counts,
// in proportion to how much of each bin the range covers.
std::vector<double> merged_and_spread(const std::vector<double>& p, int levels)
{
    const size_t n = p.size();
    const double per_level = static_cast<double>(n) / levels;
    std::vector<double> q(n, 0.0);
    for (int j = 0; j < levels; ++j) {
        const double lo = j * per_level, hi = lo + per_level;
        const size_t first = static_cast<size_t>(lo);
        const size_t end = std::min(n, static_cast<size_t>(std::ceil(hi)));
        auto overlap = [&](size_t k) { return std::min(hi, k + 1.0) - std::max(lo, static_cast<double>(k)); };
        double mass = 0, covered = 0;
        for (size_t k = first; k < end; ++k) {
            mass += overlap(k) * p[k];
            if (p[k] > 0) covered += overlap(k);
        }
        if (covered <= 0) continue;
        for (size_t k = first; k < end; ++k)
            if (p[k] > 0) q[k] += mass * overlap(k) / covered;
    }
    return q;
}

} // namespace

void AbsHistogram::add(const float* values, int64_t n)
{
    if (!(absmax > 0)) return;
    const float per_unit = kHistogramBins / absmax;
    for (int64_t i = 0; i < n; ++i) {
        const float a = std::fabs(values[i]);
        if (!(a > 0)) continue; // zero or NaN
        const float bin = a * per_unit; // +inf for an infinite value
        ++counts[bin < kHistogramBins ? static_cast<size_t>(bin) : kHistogramBins - 1];
    }
}

double kl_divergence(const std::vector<double>& p, const std::vector<double>& q)
{
    const double p_total = std::accumulate(p.begin(), p.end(), 0.0);
    const double q_total = std::accumulate(q.begin(), q.end(), 0.0);
    if (p_total <= 0) return 0;
    double d = 0;
    for (size_t k = 0; k < p.size(); ++k) {
        if (p[k] <= 0) continue;
        const double pk = p[k] / p_total;
        const double qk = q_total > 0 && q[k] > 0 ? q[k] / q_total : 1e-12;
        d += pk * std::log(pk / qk);
    }
    return d;
}

float kl_threshold(const AbsHistogram& histogram)
{
    const std::vector<uint64_t>& c = histogram.counts;
    double beyond = std::accumulate(c.begin() + kInt8Levels, c.end(), 0.0); // counts past the cut
    if (beyond + std::accumulate(c.begin(), c.begin() + kInt8Levels, 0.0) == 0) return histogram.absmax;
    double best = std::numeric_limits<double>::infinity();
    int best_bins = kHistogramBins;
    for (int bins = kInt8Levels; bins <= kHistogramBins; ++bins) {
        std::vector<double> p(c.begin(), c.begin() + bins);
        const std::vector<double> q = merged_and_spread(p, kInt8Levels); // without the tail
        p.back() += beyond;
        const double d = kl_divergence(p, q);
        if (d < best) best = d, best_bins = bins;
        if (bins < kHistogramBins) beyond -= static_cast<double>(c[static_cast<size_t>(bins)]);
    }
    return (static_cast<float>(best_bins) + 0.5f) * histogram.bin_width();
}

float percentile_threshold(const AbsHistogram& histogram, double percentile)
{
    const std::vector<uint64_t>& c = histogram.counts;
    const double total = std::accumulate(c.begin(), c.end(), 0.0);
    if (total == 0) return histogram.absmax;
    const double wanted = total * std::clamp(percentile, 0.0, 100.0) / 100.0;
    double below = 0;
    for (size_t k = 0; k < c.size(); ++k) {
        below += static_cast<double>(c[k]);
        if (below >= wanted) return static_cast<float>(k + 1) * histogram.bin_width();
    }
    return histogram.absmax;
}

} // namespace kestrel
