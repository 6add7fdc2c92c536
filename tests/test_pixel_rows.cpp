// The pixel row kernels (kernels/pixel_rows.h), every one this CPU runs:
// channel moves exactly as the formats' names say, gray and YUV within 1 of
// the BT.601 formulas in double precision, and every kernel the same bytes
// as the generic one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/pixel_rows.h"

namespace kestrel {
namespace {

// Each format's channels by name, in PixelFormat's order ("L": luma).
const char* const kChannelNames[kPixelFormats] = {"RGB", "BGR", "L", "RGBA", "BGRA"};

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<uint8_t> v(n);
    for (uint8_t& x : v) x = static_cast<uint8_t>(rng() % 256);
    return v;
}

// Pixel i of a format: channel `name` (R, G, B, A or L), or -1 when absent.
int channel(const std::vector<uint8_t>& px, int format, int64_t i, char name)
{
    const std::string names = kChannelNames[format];
    const size_t at = names.find(name);
    if (at == std::string::npos) return -1;
    return px[static_cast<size_t>(i * static_cast<int64_t>(names.size()) + static_cast<int64_t>(at))];
}

double rounded_luma(int r, int g, int b) { return std::floor(0.299 * r + 0.587 * g + 0.114 * b + 0.5); }

TEST(PixelRows, ConversionsMoveChannelsAsTheFormatsNameThem)
{
    const std::vector<const PixelRowsKernel*> kernels = pixel_rows_kernels_available();
    for (int64_t n : {1, 7, 16, 33, 100})
        for (int from = 0; from < kPixelFormats; ++from)
            for (int to = 0; to < kPixelFormats; ++to) {
                const std::string in_names = kChannelNames[from], out_names = kChannelNames[to];
                const std::vector<uint8_t> src = random_bytes(static_cast<size_t>(n) * in_names.size(), 3);
                std::vector<uint8_t> generic;
                for (const PixelRowsKernel* k : kernels) {
                    SCOPED_TRACE(::testing::Message() << k->isa << " " << in_names << " -> " << out_names << " n " << n);
                    std::vector<uint8_t> dst(static_cast<size_t>(n) * out_names.size() + 1, 77);
                    k->convert[from][to](src.data(), dst.data(), n);
                    ASSERT_EQ(dst.back(), 77) << "wrote past the row";
                    dst.pop_back();
                    for (int64_t i = 0; i < n; ++i) {
                        const int r = channel(src, from, i, 'R'), g = channel(src, from, i, 'G');
                        const int b = channel(src, from, i, 'B'), l = channel(src, from, i, 'L');
                        for (char c : out_names) {
                            const int got = channel(dst, to, i, c);
                            if (c == 'L') {
                                const double want = l >= 0 ? l : rounded_luma(r, g, b);
                                ASSERT_LE(std::fabs(got - want), l >= 0 ? 0.0 : 1.0) << "pixel " << i;
                            } else {
                                const int same = channel(src, from, i, c);
                                const int want = same >= 0 ? same : c == 'A' ? 255 : l;
                                ASSERT_EQ(got, want) << "pixel " << i << " channel " << c;
                            }
                        }
                    }
                    if (generic.empty()) generic = dst;
                    EXPECT_EQ(dst, generic) << "differs from the generic kernel";
                }
            }
}

TEST(PixelRows, YuvRowsFollowBt601VideoRange)
{
    for (int64_t n : {2, 8, 30, 64, 250}) {
        const std::vector<uint8_t> y = random_bytes(static_cast<size_t>(n), 11);
        const std::vector<uint8_t> chroma = random_bytes(static_cast<size_t>(n), 12);
        std::vector<int32_t> u(static_cast<size_t>(n)), v(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
            u[static_cast<size_t>(i)] = chroma[static_cast<size_t>(i / 2 * 2)];
            v[static_cast<size_t>(i)] = chroma[static_cast<size_t>(i / 2 * 2 + 1)];
        }
        for (bool bgr : {false, true}) {
            std::vector<uint8_t> generic;
            for (const PixelRowsKernel* k : pixel_rows_kernels_available()) {
                SCOPED_TRACE(::testing::Message() << k->isa << (bgr ? " BGR" : " RGB") << " n " << n);
                std::vector<uint8_t> dst(static_cast<size_t>(n * 3) + 1, 77);
                (bgr ? k->yuv_to_bgr : k->yuv_to_rgb)(y.data(), u.data(), v.data(), n, dst.data());
                ASSERT_EQ(dst.back(), 77) << "wrote past the row";
                dst.pop_back();
                for (int64_t i = 0; i < n; ++i) {
                    const double luma = 1.164383 * std::max(0, y[static_cast<size_t>(i)] - 16);
                    const double cu = u[static_cast<size_t>(i)] - 128.0, cv = v[static_cast<size_t>(i)] - 128.0;
                    const double rgb[3] = {luma + 1.596027 * cv, luma - 0.812968 * cv - 0.391762 * cu,
                                           luma + 2.017232 * cu};
                    for (int c = 0; c < 3; ++c) {
                        const double want = std::min(255.0, std::max(0.0, rgb[c]));
                        const int got = dst[static_cast<size_t>(i * 3 + (bgr ? 2 - c : c))];
                        ASSERT_LE(std::fabs(got - want), 1.0) << "pixel " << i << " channel " << c;
                    }
                }
                if (generic.empty()) generic = dst;
                EXPECT_EQ(dst, generic) << "differs from the generic kernel";
            }
        }
    }
}

} // namespace
} // namespace kestrel
