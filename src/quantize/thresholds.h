// Calibration thresholds: from the values a blob takes on the calibration
// set, the |x| beyond which int8 clips (scale = 127 / threshold).
#pragma once
#include <cstdint>
#include <vector>

namespace kestrel {

constexpr int kHistogramBins = 2048;
constexpr int kInt8Levels = 128; // the magnitudes int8 represents: 0..127

// Counts of the non-zero |x| in kHistogramBins equal bins over [0, absmax]
// (the largest value falls in the last bin). Zeros are left out: any scale
// represents them exactly, and after ReLU they would outweigh the rest.
struct AbsHistogram {
    explicit AbsHistogram(float absmax) : absmax(absmax), counts(kHistogramBins, 0) {}
    float absmax;
    std::vector<uint64_t> counts;

    void add(const float* values, int64_t n);
    float bin_width() const { return absmax / kHistogramBins; }
};

// The threshold whose quantization to kInt8Levels levels loses least: for
// each candidate bin count i (kInt8Levels..kHistogramBins), P is the histogram
// cut at i with the clipped tail added to its last bin, Q is the same cut
// without the tail merged into kInt8Levels levels and spread back evenly over
// the bins that have counts (so Q misses what clipping moves: the tail); the
// i with the smallest KL(P || Q) gives (i + 0.5) bin widths.
float kl_threshold(const AbsHistogram& histogram);

// The upper edge of the bin where the share of counts below reaches
// `percentile` (in %).
float percentile_threshold(const AbsHistogram& histogram, double percentile);

// KL(P || Q) of two histograms, each normalized to sum 1; bins where P is 0
// add nothing, a bin where only Q is 0 counts as Q = 1e-12 of P's total (so
// the divergence stays finite but large).
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q);

} // namespace kestrel
