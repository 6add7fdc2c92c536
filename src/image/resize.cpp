// Resizing images and planes: the filter kernels' taps (ops/resample) applied
// by the one resampling engine, one axis after the other.
#include <cctype>

#include "kestrel/error.h"
#include "kestrel/image.h"
#include "ops/resample/taps.h"

namespace kestrel::image {

namespace {

struct FilterName {
    const char* name;
    Filter filter;
};
constexpr FilterName kFilterNames[] = {
    {"nearest", Filter::Nearest},   {"bilinear", Filter::Bilinear}, {"linear", Filter::Bilinear},
    {"bicubic", Filter::Bicubic},   {"cubic", Filter::Bicubic},     {"lanczos3", Filter::Lanczos3},
    {"lanczos5", Filter::Lanczos5}, {"gaussian", Filter::Gaussian}, {"mitchellcubic", Filter::MitchellCubic},
    {"area", Filter::Area},
};

// In -> Mid along `first`, Mid -> Out along `second` (axes 0 = rows, 1 = columns).
template <class T>
void resize_as(const Tensor& image, Tensor& out, const AxisTaps& first, const AxisTaps& second, const Shape& mid_shape)
{
    const ExecContext one_thread(nullptr, 1);
    Tensor mid(mid_shape, DType::F32);
    apply_axis_taps(image.data<T>(), image.shape(), mid.data<float>(), first, 0.f, one_thread);
    apply_axis_taps(mid.data<float>(), mid_shape, out.data<T>(), second, 0.f, one_thread);
}

} // namespace

Filter parse_filter(const std::string& name)
{
    std::string lower = name;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (const FilterName& f : kFilterNames)
        if (lower == f.name) return f.filter;
    fail("unknown resize filter '", name, "' (nearest, bilinear, bicubic, lanczos3, lanczos5, gaussian, ",
         "mitchellcubic, area)");
}

Tensor resize(const Tensor& image, int width, int height, const ResizeOptions& options)
{
    check(image.rank() == 2 || image.rank() == 3, "resize: expected (height, width[, channels]), got ",
          shape_str(image.shape()));
    check(image.dtype() == DType::U8 || image.dtype() == DType::F32, "resize: expected U8 or F32, got ",
          dtype_name(image.dtype()));
    check(width > 0 && height > 0 && image.dim(0) > 0 && image.dim(1) > 0, "resize: ", shape_str(image.shape()),
          " to ", width, "x", height, ": sizes must be positive");
    const AxisTaps rows = filter_axis_taps(options, 0, image.dim(0), height);
    const AxisTaps columns = filter_axis_taps(options, 1, image.dim(1), width);
    // The cheaper order: each step costs its output's size times its taps
    // (measured: the columns' gathered step and the rows' vector sums cost
    // about the same per value).
    const int64_t h = image.dim(0), w = image.dim(1);
    const bool columns_first = h * width * columns.per_output + int64_t(height) * width * rows.per_output <=
                               int64_t(height) * w * rows.per_output + int64_t(height) * width * columns.per_output;
    Shape mid = image.shape(), out_shape = image.shape();
    out_shape[0] = height;
    out_shape[1] = width;
    mid[columns_first ? 1 : 0] = columns_first ? width : height;
    Tensor out(out_shape, image.dtype());
    const AxisTaps &first = columns_first ? columns : rows, &second = columns_first ? rows : columns;
    if (image.dtype() == DType::U8) resize_as<uint8_t>(image, out, first, second, mid);
    else resize_as<float>(image, out, first, second, mid);
    return out;
}

} // namespace kestrel::image
