// Classifies a picture with any ImageNet-style classifier (.onnx, or ncnn
// .param with its .bin) on Kestrel (the C++ twin of examples/python/classify.py).
//
//     build/examples/kestrel_classify MODEL PICTURE [LABELS]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "kestrel/image.h"
#include "kestrel/kestrel.h"
#include "kestrel/onnx.h"
#include "picture.h"

namespace {

using namespace kestrel;

bool ends_with(const std::string& s, const std::string& tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

void load(Net& net, const std::string& model)
{
    if (ends_with(model, ".onnx")) return load_onnx(net, model);
    net.load_param(model);
    net.load_model(model.substr(0, model.size() - std::string(".param").size()) + ".bin");
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 3 && argc != 4) {
        std::fprintf(stderr, "usage: kestrel_classify MODEL PICTURE [LABELS]\n");
        return 2;
    }
    try {
        Net net;
        load(net, argv[1]);
        const std::string input = net.input_names().at(0);
        Shape shape = net.input_shape(input);
        if (shape.empty()) shape = {3, 224, 224};
        const int64_t h = shape[shape.size() - 2] > 0 ? shape[shape.size() - 2] : 224;
        const int64_t w = shape.back() > 0 ? shape.back() : 224;
        image::FromPixelsOptions o;
        o.width = static_cast<int>(w);
        o.height = static_cast<int>(h);
        o.resize.antialias = true;
        o.mean = {0.485f * 255, 0.456f * 255, 0.406f * 255};
        o.norm = {1 / (0.229f * 255), 1 / (0.224f * 255), 1 / (0.225f * 255)};
        Tensor x = image::from_pixels(read_picture(argv[2]), image::PixelFormat::RGB, image::PixelFormat::RGB, o);
        if (shape.size() == 4) x = x.reshaped({1, 3, h, w});
        Session session(net);
        session.set_input(input, x);
        const Tensor scores = session.get(net.output_names().at(0)).to(DType::F64);
        const double* s = scores.data<double>();
        const int64_t n = scores.numel();
        const double top = *std::max_element(s, s + n);
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += std::exp(s[i] - top);
        std::vector<int64_t> order(static_cast<size_t>(n));
        std::iota(order.begin(), order.end(), 0);
        const size_t best = std::min<size_t>(5, order.size());
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(best), order.end(),
                          [&](int64_t a, int64_t b) { return s[a] > s[b] || (s[a] == s[b] && a < b); });
        std::vector<std::string> labels;
        if (argc == 4) {
            std::ifstream in(argv[3]);
            for (std::string line; std::getline(in, line);) labels.push_back(line);
        }
        for (size_t i = 0; i < best; ++i) {
            const int64_t c = order[i];
            std::printf("%5lld %.4f %s\n", static_cast<long long>(c), std::exp(s[c] - top) / sum,
                        c < static_cast<int64_t>(labels.size()) ? labels[static_cast<size_t>(c)].c_str() : "");
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kestrel_classify: %s\n", e.what());
        return 1;
    }
    return 0;
}
