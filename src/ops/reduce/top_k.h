// Selecting the k largest (or smallest) values of a row, shared by TopK and
// ncnn's ArgMax (a top-k of the whole input).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

namespace kestrel {

// order[0..k) = the indices of the k largest (largest) or smallest values of
// row[0..n), best first. NaN counts as the largest value. Equal values keep
// the lower index first, or the higher with ties_high (ncnn's ArgMax sorts
// (value, index) pairs in descending order). `order` holds n entries.
template <class V>
void select_top_k(const V* row, int64_t n, int64_t k, bool largest, bool ties_high, int64_t* order)
{
    std::iota(order, order + n, int64_t(0));
    auto before = [&](int64_t i, int64_t j) {
        const V vi = row[i], vj = row[j];
        if constexpr (std::is_floating_point_v<V>) {
            const bool ni = std::isnan(vi), nj = std::isnan(vj);
            if (ni || nj) {
                if (ni && nj) return ties_high ? i > j : i < j;
                return largest ? ni : nj;
            }
        }
        if (vi != vj) return largest ? vi > vj : vi < vj;
        return ties_high ? i > j : i < j;
    };
    std::partial_sort(order, order + k, order + n, before);
}

} // namespace kestrel
