// The weighted row sum kernels of a resize (kernels/resample_rows.h) and
// their gathered step along a row, every one this CPU runs, against the
// plain loop they promise to match bit for bit: one multiply and one add per
// value in tap order, U8 results rounded to nearest and saturated (NaN: 0).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/resample_rows.h"

namespace kestrel {
namespace {

template <class Out> Out reference_store(float v);
template <> float reference_store<float>(float v) { return v; }
template <> uint8_t reference_store<uint8_t>(float v)
{
    if (!(v > 0.f)) return 0;
    return static_cast<uint8_t>(std::floor(std::min(v, 255.f) + 0.5f));
}

template <class In, class Out>
std::vector<Out> reference(const std::vector<std::vector<In>>& rows, const std::vector<float>& w, int64_t n)
{
    std::vector<Out> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        float acc = static_cast<float>(rows[0][i]) * w[0];
        for (size_t k = 1; k < rows.size(); ++k) {
            const float product = static_cast<float>(rows[k][i]) * w[k];
            acc = acc + product;
        }
        out[static_cast<size_t>(i)] = reference_store<Out>(acc);
    }
    return out;
}

template <class In> std::vector<In> row_of(int64_t n, std::mt19937& rng);
template <> std::vector<float> row_of<float>(int64_t n, std::mt19937& rng)
{
    std::uniform_real_distribution<float> d(-40.f, 300.f); // past both ends of a pixel's range
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = d(rng);
    if (n > 3) v[3] = std::numeric_limits<float>::quiet_NaN();
    return v;
}
template <> std::vector<uint8_t> row_of<uint8_t>(int64_t n, std::mt19937& rng)
{
    std::vector<uint8_t> v(static_cast<size_t>(n));
    for (uint8_t& x : v) x = static_cast<uint8_t>(rng() % 256);
    return v;
}

template <class In, class Out> void check_every_kernel()
{
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> weight(-0.4f, 1.2f);
    for (int taps : {1, 2, 3, 6})
        for (int64_t n : {1, 3, 4, 13, 15, 16, 17, 24, 29, 64, 100, 1031}) { // tails of 8, 4 and fewer
            std::vector<std::vector<In>> rows;
            std::vector<const In*> pointers;
            std::vector<float> w;
            for (int k = 0; k < taps; ++k) {
                rows.push_back(row_of<In>(n, rng));
                w.push_back(weight(rng));
            }
            for (const auto& r : rows) pointers.push_back(r.data());
            const std::vector<Out> want = reference<In, Out>(rows, w, n);
            for (const ResampleRowsKernel* k : resample_rows_kernels_available()) {
                SCOPED_TRACE(::testing::Message() << k->isa << " taps " << taps << " n " << n);
                std::vector<Out> got(static_cast<size_t>(n) + 1, Out(77));
                (k->*ResampleRowsEntry<In, Out>::of)(pointers.data(), w.data(), taps, n, got.data());
                EXPECT_EQ(got[static_cast<size_t>(n)], Out(77)) << "wrote past the row";
                got.pop_back();
                // Bit for bit (NaN results compare by their bits too).
                EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(Out)), 0);
            }
        }
}

// The gathered step: lane i sums w[k*n + i] * src[at[k*n + i]] over k, the
// same products and adds as the plain loop.
template <class In> void check_every_gather()
{
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> weight(-0.4f, 1.2f);
    const int64_t src_len = 97;
    // Byte gathers may read 3 bytes past an offset (the kernels' contract).
    std::vector<In> src = row_of<In>(src_len + 3, rng);
    for (int taps : {1, 2, 3, 6})
        for (int64_t n : {1, 5, 8, 13, 16, 17, 40, 300}) {
            std::vector<int32_t> at(static_cast<size_t>(taps * n));
            std::vector<float> w(at.size());
            for (size_t j = 0; j < at.size(); ++j) {
                at[j] = static_cast<int32_t>(rng() % src_len);
                w[j] = weight(rng);
            }
            std::vector<float> want(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; ++i) {
                float acc = static_cast<float>(src[static_cast<size_t>(at[i])]) * w[i];
                for (int k = 1; k < taps; ++k) {
                    const size_t j = static_cast<size_t>(k * n + i);
                    const float product = static_cast<float>(src[static_cast<size_t>(at[j])]) * w[j];
                    acc = acc + product;
                }
                want[static_cast<size_t>(i)] = acc;
            }
            for (const ResampleRowsKernel* k : resample_rows_kernels_available()) {
                SCOPED_TRACE(::testing::Message() << k->isa << " taps " << taps << " n " << n);
                std::vector<float> got(static_cast<size_t>(n) + 1, 77.f);
                (k->*ResampleGatherEntry<In>::of)(src.data(), at.data(), w.data(), taps, n, got.data());
                EXPECT_EQ(got[static_cast<size_t>(n)], 77.f) << "wrote past the row";
                got.pop_back();
                EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0);
            }
        }
}

TEST(ResampleRows, EveryGatherMatchesTheScalarSumsOfFloats) { check_every_gather<float>(); }
TEST(ResampleRows, EveryGatherMatchesTheScalarSumsOfBytes) { check_every_gather<uint8_t>(); }

TEST(ResampleRows, EveryKernelMatchesTheScalarSumsFloatToFloat) { check_every_kernel<float, float>(); }
TEST(ResampleRows, EveryKernelMatchesTheScalarSumsBytesToFloat) { check_every_kernel<uint8_t, float>(); }
TEST(ResampleRows, EveryKernelMatchesTheScalarSumsFloatToBytes) { check_every_kernel<float, uint8_t>(); }
TEST(ResampleRows, EveryKernelMatchesTheScalarSumsBytesToBytes) { check_every_kernel<uint8_t, uint8_t>(); }

} // namespace
} // namespace kestrel
