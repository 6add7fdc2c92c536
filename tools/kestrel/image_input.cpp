// `kestrel run --image`: a picture file (decoded with stb_image, Debian's
// libstb-dev) as the model's first input, and `--topk` to print the best
// classes of its first output.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <numeric>

#include "cli.h"
#include "kestrel/image.h"
#ifdef KESTREL_HAVE_STB
#include <stb_image.h>
#endif

namespace kestrel::cli {

namespace {

// The file's pixels as RGB (height, width, 3).
Tensor read_picture(const std::string& path)
{
#ifdef KESTREL_HAVE_STB
    int width = 0, height = 0, channels = 0;
    unsigned char* data = stbi_load(path.c_str(), &width, &height, &channels, 3);
    if (!data) fail(path, ": cannot read the picture (", stbi_failure_reason(), ")");
    Tensor pixels({height, width, 3}, DType::U8);
    std::copy_n(data, pixels.nbytes(), pixels.data<uint8_t>());
    stbi_image_free(data);
    return pixels;
#else
    fail(path, ": this kestrel was built without libstb-dev, so it cannot read pictures");
#endif
}

// A list option's values, each channel's (one value repeated for all).
std::vector<float> per_channel(const Args& args, const char* option, int64_t channels)
{
    const std::string* text = args.last(option);
    if (!text) return {};
    std::vector<float> v = parse_floats(*text, option);
    if (v.size() == 1) v.assign(static_cast<size_t>(channels), v[0]);
    if (static_cast<int64_t>(v.size()) != channels)
        throw UsageError(std::string(option) + " has " + std::to_string(v.size()) + " values for " +
                         std::to_string(channels) + " channels");
    return v;
}

} // namespace

Tensor image_input(const Args& args, const Shape& declared, const std::string& model_path)
{
    return image_input(args, *args.last("--image"), declared, model_path);
}

Tensor image_input(const Args& args, const std::string& path, const Shape& declared, const std::string& model_path)
{
    const image::PixelFormat format =
        image::parse_pixel_format(args.last("--pixel-type") ? *args.last("--pixel-type") : "RGB");
    const int64_t channels = image::channels(format);
    // The model's (c, h, w), batch first for ONNX's rank-4 inputs.
    const bool batched = declared.size() == 4;
    const size_t first = batched ? 1 : 0;
    if (!declared.empty() && declared.size() != 3 && !batched)
        fail(model_path, ": --image needs an input of rank 3 (c,h,w) or 4 (n,c,h,w), this one is ", shape_str(declared));
    if (!declared.empty() && declared[first] > 0 && declared[first] != channels)
        fail(model_path, ": the input takes ", declared[first], " channels, --pixel-type ",
             image::pixel_format_name(format), " gives ", channels);
    image::FromPixelsOptions o;
    if (const std::string* size = args.last("--size")) {
        const std::vector<int64_t> wh = parse_dims(*size);
        if (wh.size() != 2) throw UsageError("--size takes W,H");
        o.width = static_cast<int>(wh[0]);
        o.height = static_cast<int>(wh[1]);
    } else if (!declared.empty() && declared[first + 1] > 0 && declared[first + 2] > 0) {
        o.width = static_cast<int>(declared[first + 2]);
        o.height = static_cast<int>(declared[first + 1]);
    }
    o.resize.filter = image::parse_filter(args.last("--resize") ? *args.last("--resize") : "bilinear");
    o.resize.antialias = true; // a picture is usually larger than the input: low-pass it first
    o.resize.exclude_outside = true;
    o.mean = per_channel(args, "--mean", channels);
    o.norm = per_channel(args, "--norm", channels);
    const Tensor input = image::from_pixels(read_picture(path), image::PixelFormat::RGB, format, o);
    if (!batched) return input;
    Shape shape = input.shape();
    shape.insert(shape.begin(), 1);
    return input.reshaped(shape);
}

bool is_picture_path(const std::string& path)
{
    const size_t dot = path.rfind('.');
    if (dot == std::string::npos) return false;
    std::string ext = path.substr(dot + 1);
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* known : {"jpg", "jpeg", "png", "bmp", "ppm", "pgm", "tga", "gif", "psd", "hdr", "pic"})
        if (ext == known) return true;
    return false;
}

void print_topk(const std::string& name, const Tensor& scores, int k, const std::string* labels_path)
{
    std::vector<std::string> labels;
    if (labels_path) {
        std::ifstream in(*labels_path);
        if (!in) fail(*labels_path, ": cannot open");
        for (std::string line; std::getline(in, line);) labels.push_back(line);
    }
    const Tensor f = scores.to(DType::F64);
    const double* v = f.data<double>();
    std::vector<int64_t> order(static_cast<size_t>(f.numel()));
    std::iota(order.begin(), order.end(), 0);
    const size_t top = std::min(order.size(), static_cast<size_t>(k));
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                      [&](int64_t a, int64_t b) { return v[a] > v[b] || (v[a] == v[b] && a < b); });
    std::printf("%s: top %zu of %lld\n", name.c_str(), top, static_cast<long long>(f.numel()));
    for (size_t i = 0; i < top; ++i) {
        const int64_t c = order[i];
        const std::string label = c < static_cast<int64_t>(labels.size()) ? "  " + labels[static_cast<size_t>(c)] : "";
        std::printf("%zu. %lld %.6g%s\n", i + 1, static_cast<long long>(c), v[c], label.c_str());
    }
}

} // namespace kestrel::cli
