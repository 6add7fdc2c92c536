// The direct DFT sums ONNX's DFT and STFT and ncnn's Spectrogram share: bin k of the n-point
// transform of `used` complex samples (those past them zeros), in double,
// the twiddles exp(sign * 2 pi i k j / n) from a table of n cos/sin values.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "kestrel/error.h"
#include "ops/signal/window_functions.h"

namespace kestrel::signal {

// At most this many products in one op's direct sums (a 10-second 16 kHz
// STFT of 512-point frames takes 1.3e8): a model asking for more fails
// clearly instead of running for minutes.
constexpr int64_t kMaxDftProducts = int64_t(1) << 30;

inline int64_t checked_dft_products(int64_t lines, int64_t bins, int64_t samples)
{
    const double products = static_cast<double>(lines) * static_cast<double>(bins) * static_cast<double>(samples);
    check(products <= static_cast<double>(kMaxDftProducts), "the direct DFT sums would take ", products,
          " products, more than ", kMaxDftProducts);
    return lines * bins * samples;
}

struct Twiddles {
    std::vector<double> cos, sin;
    explicit Twiddles(int64_t n) : cos(static_cast<size_t>(n)), sin(static_cast<size_t>(n))
    {
        for (int64_t k = 0; k < n; ++k) {
            const double angle = 2 * kPi * static_cast<double>(k) / static_cast<double>(n);
            cos[static_cast<size_t>(k)] = std::cos(angle);
            sin[static_cast<size_t>(k)] = std::sin(angle);
        }
    }
    int64_t n() const { return static_cast<int64_t>(cos.size()); }
};

// sample(j, re, im) gives sample j < used; sign -1 forward, +1 inverse.
template <class Sample>
void dft_bin(const Twiddles& t, int64_t k, int64_t used, double sign, const Sample& sample, double& re, double& im)
{
    re = im = 0;
    const int64_t n = t.n();
    for (int64_t j = 0; j < used; ++j) {
        double xr, xi;
        sample(j, xr, xi);
        const size_t w = static_cast<size_t>(k * j % n);
        const double c = t.cos[w], s = sign * t.sin[w];
        re += xr * c - xi * s;
        im += xr * s + xi * c;
    }
}

} // namespace kestrel::signal
