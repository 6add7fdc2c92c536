// ncnn's BinaryOp broadcast tables (binaryop-broadcasting.md) as test cases,
// in ncnn's [w,h,d,c] notation, shared by the CPU and GPU BinaryOp tests.
#pragma once
#include <vector>

#include "kestrel/tensor.h"

namespace kestrel::binary_op_cases {

struct NMat {
    int dims = 0;
    int64_t w = 1, h = 1, d = 1, c = 1;
};

inline NMat nmat(int dims, int64_t w, int64_t h, int64_t d, int64_t c)
{
    NMat m;
    m.dims = dims;
    m.w = w, m.h = h, m.d = d, m.c = c;
    return m;
}

// [w,h,d,c] list -> NMat, and -> our (outermost-first) shape.
inline NMat nmat_of(const std::vector<int64_t>& v)
{
    const int n = static_cast<int>(v.size());
    return nmat(n, v[0], n > 1 ? v[1] : 1, n > 3 ? v[2] : 1, n == 3 ? v[2] : (n == 4 ? v[3] : 1));
}
inline Shape shape_of(const NMat& m)
{
    switch (m.dims) {
    case 1: return {m.w};
    case 2: return {m.h, m.w};
    case 3: return {m.c, m.h, m.w};
    default: return {m.c, m.d, m.h, m.w};
    }
}

struct Row {
    std::vector<int64_t> a, b; // ncnn [w,h,d,c]
};

// ncnn's broadcast tables (binaryop-broadcasting.md) plus ties and the older special types.
inline const std::vector<Row> kRows = {
    {{2}, {1}}, {{2, 3}, {1}}, {{2, 3}, {1, 1}}, {{2, 3, 4}, {1}}, {{2, 3, 4}, {1, 1}}, {{2, 3, 4}, {1, 1, 1}},
    {{2, 3, 4, 5}, {1}}, {{2, 3, 4, 5}, {1, 1}}, {{2, 3, 4, 5}, {1, 1, 1}}, {{2, 3, 4, 5}, {1, 1, 1, 1}},
    {{2}, {2}}, {{2, 3}, {2, 3}}, {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4, 5}, {2, 3, 4, 5}},
    {{2, 3}, {1, 3}}, {{2, 3}, {2, 1}}, {{2, 3, 4}, {1, 3, 4}}, {{2, 3, 4}, {2, 1, 4}}, {{2, 3, 4}, {2, 3, 1}},
    {{2, 3, 4}, {1, 1, 4}}, {{2, 3, 4}, {1, 3, 1}}, {{2, 3, 4}, {2, 1, 1}},
    {{2, 3, 4, 5}, {1, 3, 4, 5}}, {{2, 3, 4, 5}, {2, 1, 4, 5}}, {{2, 3, 4, 5}, {2, 3, 1, 5}},
    {{2, 3, 4, 5}, {2, 3, 4, 1}}, {{2, 3, 4, 5}, {1, 1, 4, 5}}, {{2, 3, 4, 5}, {1, 3, 1, 5}},
    {{2, 3, 4, 5}, {1, 3, 4, 1}}, {{2, 3, 4, 5}, {2, 1, 1, 5}}, {{2, 3, 4, 5}, {2, 1, 4, 1}},
    {{2, 3, 4, 5}, {2, 3, 1, 1}}, {{2, 3, 4, 5}, {1, 1, 1, 5}}, {{2, 3, 4, 5}, {1, 1, 4, 1}},
    {{2, 3, 4, 5}, {1, 3, 1, 1}}, {{2, 3, 4, 5}, {2, 1, 1, 1}},
    {{2, 3}, {3}}, {{2, 3, 4}, {4}}, {{2, 3, 4}, {3, 4}}, {{2, 3, 4, 5}, {5}}, {{2, 3, 4, 5}, {4, 5}},
    {{2, 3, 4, 5}, {3, 4, 5}},
    {{2, 3}, {2}}, {{2, 3, 4}, {2}}, {{2, 3, 4, 5}, {2}},
    {{2, 2}, {2}}, {{2, 3, 2}, {2}}, {{2, 3, 4, 2}, {2}},
    {{2, 1, 4}, {1, 3, 1}}, {{1, 3, 1, 5}, {2, 1, 4, 1}},
    {{40, 3, 5}, {5}}, {{33, 17}, {33}}, {{48, 2, 3}, {48, 2, 1}},
};

} // namespace kestrel::binary_op_cases
