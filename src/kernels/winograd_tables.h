// The transform matrices of Winograd F(4,3) and F(6,3) (interpolation points
// 0, +-1, +-2 and 0, +-1, +-2, +-1/2; wincnn's choice, also ncnn's), used by
// kernels/conv2d_winograd.cpp (G, at load) and kernels/winograd_tiles.h (BT, AT).
#pragma once

namespace kestrel::winograd {

struct F43 {
    static constexpr int m = 4, alpha = 6;
    static constexpr float BT[6][6] = {
        {4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
        {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1},
    };
    static constexpr float AT[4][6] = {
        {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1},
    };
    static constexpr double G[6][3] = {
        {1. / 4, 0, 0},           {-1. / 6, -1. / 6, -1. / 6}, {-1. / 6, 1. / 6, -1. / 6},
        {1. / 24, 1. / 12, 1. / 6}, {1. / 24, -1. / 12, 1. / 6}, {0, 0, 1},
    };
};

struct F63 {
    static constexpr int m = 6, alpha = 8;
    static constexpr float BT[8][8] = {
        {1, 0, -5.25f, 0, 5.25f, 0, -1, 0},         {0, 1, 1, -4.25f, -4.25f, 1, 1, 0},
        {0, -1, 1, 4.25f, -4.25f, -1, 1, 0},        {0, 0.5f, 0.25f, -2.5f, -1.25f, 2, 1, 0},
        {0, -0.5f, 0.25f, 2.5f, -1.25f, -2, 1, 0},  {0, 2, 4, -2.5f, -5, 0.5f, 1, 0},
        {0, -2, 4, 2.5f, -5, -0.5f, 1, 0},          {0, -1, 0, 5.25f, 0, -5.25f, 0, 1},
    };
    static constexpr float AT[6][8] = {
        {1, 1, 1, 1, 1, 1, 1, 0},           {0, 1, -1, 2, -2, 0.5f, -0.5f, 0},
        {0, 1, 1, 4, 4, 0.25f, 0.25f, 0},   {0, 1, -1, 8, -8, 0.125f, -0.125f, 0},
        {0, 1, 1, 16, 16, 0.0625f, 0.0625f, 0}, {0, 1, -1, 32, -32, 0.03125f, -0.03125f, 1},
    };
    static constexpr double G[8][3] = {
        {1, 0, 0},
        {-2. / 9, -2. / 9, -2. / 9},
        {-2. / 9, 2. / 9, -2. / 9},
        {1. / 90, 1. / 45, 2. / 45},
        {1. / 90, -1. / 45, 2. / 45},
        {32. / 45, 16. / 45, 8. / 45},
        {32. / 45, -16. / 45, 8. / 45},
        {0, 0, 1},
    };
};

} // namespace kestrel::winograd
