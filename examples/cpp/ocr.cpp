// Reads the text in a picture with PaddleOCR's PP-OCRv4 detector and
// recognizer on Kestrel: detection map -> boxes -> crops -> recognition -> text
// (the C++ twin of examples/python/ocr.py).
//
//     examples/fetch_ocr_models.sh build/ocr-models
//     build/examples/kestrel_ocr build/ocr-models picture.png
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "kestrel/image.h"
#include "kestrel/kestrel.h"
#include "kestrel/onnx.h"
#include "picture.h"

namespace {

using namespace kestrel;

// PaddleOCR's pre-processing and DBNet's post-processing constants (see ocr.py).
const std::vector<float> kDetMean = {0.485f * 255, 0.456f * 255, 0.406f * 255};
const std::vector<float> kDetNorm = {1 / (0.229f * 255), 1 / (0.224f * 255), 1 / (0.225f * 255)};
constexpr int kDetLimit = 960, kRecHeight = 48, kRecMinWidth = 320;
constexpr float kDetThreshold = 0.3f, kBoxThreshold = 0.6f, kUnclipRatio = 2.0f;

struct Box {
    int x0, y0, x1, y1;
};

double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A (1, c, h, w) input from a (c, h, w) tensor.
Tensor batch_of_one(const Tensor& chw)
{
    Shape s = chw.shape();
    s.insert(s.begin(), 1);
    return chw.reshaped(s);
}

// Bounding boxes of the 4-connected regions of prob > threshold whose mean probability passes.
std::vector<Box> regions(const float* prob, int h, int w)
{
    std::vector<int> label(static_cast<size_t>(h) * w, 0);
    std::vector<Box> boxes;
    int next = 0;
    for (int start = 0; start < h * w; ++start) {
        if (prob[start] <= kDetThreshold || label[start]) continue;
        label[start] = ++next;
        std::vector<int> stack = {start};
        Box b{w, h, 0, 0};
        double sum = 0;
        int count = 0;
        while (!stack.empty()) {
            const int p = stack.back();
            stack.pop_back();
            const int r = p / w, c = p % w;
            b = {std::min(b.x0, c), std::min(b.y0, r), std::max(b.x1, c + 1), std::max(b.y1, r + 1)};
            sum += prob[p];
            ++count;
            const int neighbours[4][2] = {{r - 1, c}, {r + 1, c}, {r, c - 1}, {r, c + 1}};
            for (const auto& n : neighbours) {
                if (n[0] < 0 || n[0] >= h || n[1] < 0 || n[1] >= w) continue;
                const int q = n[0] * w + n[1];
                if (prob[q] > kDetThreshold && !label[q]) {
                    label[q] = next;
                    stack.push_back(q);
                }
            }
        }
        if (std::min(b.x1 - b.x0, b.y1 - b.y0) >= 3 && sum / count >= kBoxThreshold) boxes.push_back(b);
    }
    return boxes;
}

std::vector<Box> detect(Session& session, const std::string& input, const std::string& output, const Tensor& rgb)
{
    const int h = static_cast<int>(rgb.dim(0)), w = static_cast<int>(rgb.dim(1));
    const double scale = std::min(1.0, static_cast<double>(kDetLimit) / std::max(h, w));
    const int dh = std::max(32, static_cast<int>(std::lround(h * scale / 32)) * 32);
    const int dw = std::max(32, static_cast<int>(std::lround(w * scale / 32)) * 32);
    image::FromPixelsOptions o;
    o.width = dw;
    o.height = dh;
    o.mean = kDetMean;
    o.norm = kDetNorm;
    session.set_input(input, batch_of_one(image::from_pixels(rgb, image::PixelFormat::RGB, image::PixelFormat::BGR, o)));
    const Tensor prob = session.get(output);
    std::vector<Box> boxes;
    for (const Box& b : regions(prob.data<float>(), dh, dw)) {
        const float grow = float(b.y1 - b.y0) * float(b.x1 - b.x0) * kUnclipRatio / (2.f * float(b.y1 - b.y0 + b.x1 - b.x0));
        boxes.push_back({std::max(0, int((b.x0 - grow) * w / dw)), std::max(0, int((b.y0 - grow) * h / dh)),
                         std::min(w, int(std::ceil((b.x1 + grow) * w / dw))),
                         std::min(h, int(std::ceil((b.y1 + grow) * h / dh)))});
    }
    std::sort(boxes.begin(), boxes.end(), [](const Box& a, const Box& b) { return a.y0 != b.y0 ? a.y0 < b.y0 : a.x0 < b.x0; });
    return boxes;
}

std::string recognize(Session& session, const std::string& input, const std::string& output,
                      const std::vector<std::string>& keys, const Tensor& rgb, const Box& b)
{
    const Tensor crop = image::crop(rgb, b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0);
    const int width = std::min(4096, static_cast<int>(std::ceil(double(kRecHeight) * (b.x1 - b.x0) / (b.y1 - b.y0))));
    image::FromPixelsOptions o;
    o.width = width;
    o.height = kRecHeight;
    o.mean = {127.5f, 127.5f, 127.5f};
    o.norm = {1 / 127.5f, 1 / 127.5f, 1 / 127.5f};
    const Tensor x = image::from_pixels(crop, image::PixelFormat::RGB, image::PixelFormat::BGR, o);
    const int padded_width = std::max(width, kRecMinWidth);
    Tensor padded = Tensor::zeros({1, 3, kRecHeight, padded_width});
    for (int64_t row = 0; row < 3 * kRecHeight; ++row)
        std::copy_n(x.data<float>() + row * width, width, padded.data<float>() + row * padded_width);
    session.set_input(input, padded);
    const Tensor probs = session.get(output); // (1, steps, classes)
    const int64_t steps = probs.dim(1), classes = probs.dim(2);
    std::string text;
    int64_t previous = 0;
    for (int64_t t = 0; t < steps; ++t) {
        const float* p = probs.data<float>() + t * classes;
        const int64_t best = std::max_element(p, p + classes) - p;
        if (best != 0 && best != previous) // 0 is CTC's blank; repeats collapse
            text += best - 1 < static_cast<int64_t>(keys.size()) ? keys[best - 1] : " ";
        previous = best;
    }
    return text;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: kestrel_ocr MODELS_DIR PICTURE\n");
        return 2;
    }
    try {
        const std::string models = argv[1];
        auto start = std::chrono::steady_clock::now();
        Net det, rec;
        load_onnx(det, models + "/ch_PP-OCRv4_det_infer.onnx");
        load_onnx(rec, models + "/ch_PP-OCRv4_rec_infer.onnx");
        std::vector<std::string> keys;
        std::ifstream in(models + "/ppocr_keys_v1.txt");
        if (!in) fail(models, "/ppocr_keys_v1.txt: cannot open");
        for (std::string line; std::getline(in, line);) keys.push_back(line);
        Session det_session(det), rec_session(rec);
        const double load = seconds_since(start);
        const Tensor rgb = read_picture(argv[2]);
        start = std::chrono::steady_clock::now();
        const std::vector<Box> boxes = detect(det_session, det.input_names()[0], det.output_names()[0], rgb);
        const double detect_time = seconds_since(start);
        start = std::chrono::steady_clock::now();
        for (const Box& b : boxes) {
            const std::string text = recognize(rec_session, rec.input_names()[0], rec.output_names()[0], keys, rgb, b);
            std::printf("(%d, %d, %d, %d): %s\n", b.x0, b.y0, b.x1, b.y1, text.c_str());
        }
        std::fprintf(stderr, "load %.1f ms  detect %.1f ms  recognize %.1f ms\n", load * 1e3, detect_time * 1e3,
                     seconds_since(start) * 1e3);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kestrel_ocr: %s\n", e.what());
        return 1;
    }
    return 0;
}
