// Resizing images and planes: the filter kernels' taps (ops/resample) applied
// by the one resampling engine, the columns' step row by row and the rows'
// step on the vector row sums.
#include <algorithm>
#include <cctype>
#include <type_traits>
#include <vector>

#include "core/saturate.h"
#include "kestrel/error.h"
#include "kestrel/image.h"
#include "kernels/resample_rows.h"
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

// How many input rows the taps read.
int64_t rows_read(const AxisTaps& rows)
{
    std::vector<bool> read(static_cast<size_t>(*std::max_element(rows.index.begin(), rows.index.end()) + 1));
    for (int64_t r : rows.index) read[static_cast<size_t>(r)] = true;
    return std::count(read.begin(), read.end(), true);
}

// The most rows one output row reads, from its lowest to its highest.
int64_t rows_spanned(const AxisTaps& rows)
{
    int64_t span = 1;
    for (int64_t y = 0; y < rows.out_len; ++y) {
        const auto first = rows.index.begin() + y * rows.per_output;
        const auto [low, high] = std::minmax_element(first, first + rows.per_output);
        span = std::max(span, *high - *low + 1);
    }
    return span;
}

// An image as rows of width * channels values, and the shape of one row's step.
template <class T> struct ImageRows {
    const T* data;
    int64_t width, channels;
    const T* row(int64_t r) const { return data + r * width * channels; }
    Shape shape() const { return {1, width, channels}; }
};

// The columns' step of one row as the gathering kernel takes it: output
// value i = x * channels + c reads, for tap k, at[k * n + i] with weight
// w[k * n + i].
struct GatherTable {
    int64_t n = 0;
    int taps = 0;
    std::vector<int32_t> at;
    std::vector<float> w;
    int32_t last = 0; // the largest offset read

    GatherTable(const AxisTaps& columns, int64_t channels)
        : n(columns.out_len * channels), taps(columns.per_output), at(static_cast<size_t>(n * taps)),
          w(static_cast<size_t>(n * taps))
    {
        for (int k = 0; k < taps; ++k)
            for (int64_t x = 0; x < columns.out_len; ++x)
                for (int64_t c = 0; c < channels; ++c) {
                    const size_t i = static_cast<size_t>(k * n + x * channels + c);
                    at[i] = static_cast<int32_t>(columns.index[static_cast<size_t>(x * taps + k)] * channels + c);
                    w[i] = columns.weight[static_cast<size_t>(x * taps + k)];
                    last = std::max(last, at[i]);
                }
    }
};

// Columns first, then rows, one output row at a time: an output row sums the
// input rows its taps read, each already resampled along the columns. Those
// are made when first read and kept in a ring of as many rows as one output
// row spans (input row r in slot r % ring: an output row's rows never share
// a slot), so a downscale resamples only the rows it reads.
template <class T>
void resize_columns_first(const ImageRows<T>& in, int64_t in_rows, T* out, const AxisTaps& rows,
                          const AxisTaps& columns)
{
    const int64_t mid_row = columns.out_len * in.channels, ring = rows_spanned(rows);
    std::vector<float> mid(static_cast<size_t>(ring * mid_row));
    std::vector<int64_t> held(static_cast<size_t>(ring), -1);
    std::vector<const float*> tap_rows(static_cast<size_t>(rows.per_output));
    const ResampleRowsKernel& kernel = resample_rows_kernel();
    const auto sum_rows = kernel.*ResampleRowsEntry<float, T>::of;
    const auto gather = kernel.*ResampleGatherEntry<T>::of;
    const GatherTable table(columns, in.channels);
    // Byte gathers read 4 bytes: the image's last bytes go the scalar way.
    const int64_t end = in_rows * in.width * in.channels;
    const auto gathers_safely = [&](int64_t r) {
        return sizeof(T) == 4 || r * in.width * in.channels + table.last + 4 <= end;
    };
    for (int64_t y = 0; y < rows.out_len; ++y) {
        for (int k = 0; k < rows.per_output; ++k) {
            const int64_t r = rows.index[static_cast<size_t>(y * rows.per_output + k)];
            float* slot = mid.data() + r % ring * mid_row;
            if (held[static_cast<size_t>(r % ring)] != r) {
                if (gathers_safely(r))
                    gather(in.row(r), table.at.data(), table.w.data(), table.taps, table.n, slot);
                else
                    apply_axis_taps(in.row(r), in.shape(), slot, columns, 0.f, ExecContext(nullptr, 1));
                held[static_cast<size_t>(r % ring)] = r;
            }
            tap_rows[static_cast<size_t>(k)] = slot;
        }
        sum_rows(tap_rows.data(), rows.weight.data() + y * rows.per_output, rows.per_output, mid_row,
                 out + y * mid_row);
    }
}

// Rows first, one output row at a time: the input rows' weighted sum, then
// that row resampled along the columns.
template <class T>
void resize_rows_first(const ImageRows<T>& in, T* out, const AxisTaps& rows, const AxisTaps& columns)
{
    const int64_t out_row = columns.out_len * in.channels;
    std::vector<float> mid(static_cast<size_t>(in.width * in.channels));
    std::vector<float> sums(std::is_same_v<T, float> ? 0 : static_cast<size_t>(out_row));
    std::vector<const T*> tap_rows(static_cast<size_t>(rows.per_output));
    const ResampleRowsKernel& kernel = resample_rows_kernel();
    const auto sum_rows = kernel.*ResampleRowsEntry<T, float>::of;
    const GatherTable table(columns, in.channels);
    for (int64_t y = 0; y < rows.out_len; ++y) {
        for (int k = 0; k < rows.per_output; ++k)
            tap_rows[static_cast<size_t>(k)] = in.row(rows.index[static_cast<size_t>(y * rows.per_output + k)]);
        sum_rows(tap_rows.data(), rows.weight.data() + y * rows.per_output, rows.per_output,
                 in.width * in.channels, mid.data());
        T* dst = out + y * out_row;
        if constexpr (std::is_same_v<T, float>) {
            kernel.gather_f32(mid.data(), table.at.data(), table.w.data(), table.taps, table.n, dst);
        } else {
            kernel.gather_f32(mid.data(), table.at.data(), table.w.data(), table.taps, table.n, sums.data());
            for (int64_t i = 0; i < out_row; ++i) dst[i] = saturate_pixel(sums[static_cast<size_t>(i)]);
        }
    }
}

// Streams row by row in the cheaper order, so nothing the size of the image
// is allocated (a 5 MB intermediate cost more in page faults than the sums).
// A value of the columns' step, its taps gathered, costs about 2 of the
// rows' step, a vector sum (measured on 1080p frames with AVX-512 gathers).
template <class T> void resize_as(const Tensor& image, Tensor& out, const AxisTaps& rows, const AxisTaps& columns)
{
    const ImageRows<T> in{image.data<T>(), image.dim(1), image.rank() == 3 ? image.dim(2) : 1};
    constexpr int64_t kGatherCost = 2;
    const int64_t out_w = columns.out_len, out_h = rows.out_len;
    const int64_t columns_first = kGatherCost * rows_read(rows) * out_w * columns.per_output +
                                  out_h * out_w * rows.per_output;
    const int64_t rows_first = out_h * in.width * rows.per_output + kGatherCost * out_h * out_w * columns.per_output;
    if (columns_first <= rows_first) resize_columns_first(in, image.dim(0), out.data<T>(), rows, columns);
    else resize_rows_first(in, out.data<T>(), rows, columns);
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
    Shape out_shape = image.shape();
    out_shape[0] = height;
    out_shape[1] = width;
    Tensor out(out_shape, image.dtype());
    if (image.dtype() == DType::U8) resize_as<uint8_t>(image, out, rows, columns);
    else resize_as<float>(image, out, rows, columns);
    return out;
}

} // namespace kestrel::image
