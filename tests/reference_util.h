// Helpers for comparing engine outputs with reference data in ../shared.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kestrel/kestrel.h"

// Defined in AddressSanitizer builds, where the big networks take minutes.
#if defined(__SANITIZE_ADDRESS__)
#define KESTREL_TESTS_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KESTREL_TESTS_UNDER_ASAN 1
#endif
#endif

namespace kestrel::testing {

inline std::string shared_path(const std::string& rel) { return std::string(KESTREL_SHARED_DIR) + "/" + rel; }
inline std::string source_path(const std::string& rel) { return std::string(KESTREL_SOURCE_DIR) + "/" + rel; }

// The networks of ../shared/zoo and their input shapes (ours: (c,h,w)) from its shapes.txt.
struct ZooModel {
    std::string name;
    Shape shape;
};
// How gtest names a zoo network in its messages.
inline void PrintTo(const ZooModel& m, std::ostream* os) { *os << m.name; }

inline std::vector<ZooModel> zoo_models()
{
    std::vector<ZooModel> models;
    std::ifstream in(shared_path("zoo/shapes.txt"));
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ss(line);
        std::string name, dims;
        ss >> name >> dims;
        int64_t w, h, c;
        char comma;
        std::istringstream ds(dims);
        ds >> w >> comma >> h >> comma >> c;
        models.push_back({name, {c, h, w}});
    }
    return models;
}

// |a-b| <= rel * max|ref| everywhere, shapes equal. Returns the worst error for reporting.
inline double expect_close_to_reference(const Tensor& got, const Tensor& ref, double rel)
{
    EXPECT_EQ(got.shape(), ref.shape());
    if (got.shape() != ref.shape()) return INFINITY;
    const Tensor g = got.to(DType::F64), r = ref.to(DType::F64);
    double max_ref = 0, worst = 0;
    for (int64_t i = 0; i < r.numel(); ++i) max_ref = std::max(max_ref, std::fabs(r.data<double>()[i]));
    for (int64_t i = 0; i < r.numel(); ++i)
        worst = std::max(worst, std::fabs(g.data<double>()[i] - r.data<double>()[i]));
    EXPECT_LE(worst, rel * max_ref) << "max |ref| = " << max_ref;
    return worst;
}

inline bool bit_identical(const Tensor& a, const Tensor& b)
{
    return a.shape() == b.shape() && a.dtype() == b.dtype() && std::equal(static_cast<const uint8_t*>(a.raw()),
                                                                          static_cast<const uint8_t*>(a.raw()) + a.nbytes(),
                                                                          static_cast<const uint8_t*>(b.raw()));
}

} // namespace kestrel::testing
