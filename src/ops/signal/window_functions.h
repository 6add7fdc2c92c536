// The window functions of the signal family, as functions of x = 2*pi*n/N:
// the ONNX window layers (windows.cpp) and ncnn's Spectrogram /
// InverseSpectrogram (spectrogram.cpp) take their values from here.
#pragma once
#include <cmath>

namespace kestrel::signal {

constexpr double kPi = 3.14159265358979323846;

inline double hann(double x) { return 0.5 - 0.5 * std::cos(x); }
// Hamming with coefficient a: a - (1 - a) cos(x). ONNX's a is 25/46, PyTorch's and ncnn's 0.54.
inline double hamming(double x, double a) { return a - (1.0 - a) * std::cos(x); }
inline double onnx_hamming(double x) { return hamming(x, 25.0 / 46.0); }
inline double blackman(double x) { return 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x); }

} // namespace kestrel::signal
