// Separates a person from the background with MediaPipe's selfie
// segmentation model (.tflite, run as TensorFlow Lite ships it) and writes the
// person mask as a grayscale PNG of the picture's size (255: person).
//
//     build/examples/kestrel_segment_selfie selfie_segmentation.tflite PICTURE MASK.png
//
// The model comes from npm's @mediapipe/selfie_segmentation
// (scripts/tflite_node_modules.sh fetches it into build/tflite-node).
#include <chrono>
#include <cstdio>
#include <string>

#include <stb_image_write.h>

#include "kestrel/image.h"
#include "kestrel/kestrel.h"
#include "kestrel/model_file.h"
#include "picture.h"

using namespace kestrel;

namespace {

// The picture at the model's size as its input: NHWC, RGB in [0, 1].
Tensor model_input(const Tensor& rgb, int64_t height, int64_t width)
{
    const Tensor resized = image::resize(rgb, static_cast<int>(width), static_cast<int>(height));
    Tensor x({1, height, width, 3});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = resized.data<uint8_t>()[i] / 255.f;
    return x;
}

// The model's [1, H, W, 1] probabilities at the picture's size, as 8-bit gray.
Tensor mask_pixels(const Tensor& probabilities, int height, int width)
{
    const Tensor plane = probabilities.reshaped({probabilities.dim(1), probabilities.dim(2)});
    const Tensor resized = image::resize(plane, width, height);
    Tensor gray({height, width}, DType::U8);
    for (int64_t i = 0; i < gray.numel(); ++i) {
        const float p = std::min(1.f, std::max(0.f, resized.data<float>()[i]));
        gray.data<uint8_t>()[i] = static_cast<uint8_t>(p * 255.f + 0.5f);
    }
    return gray;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: kestrel_segment_selfie MODEL.tflite PICTURE MASK.png\n");
        return 2;
    }
    try {
        Net net;
        load_model_file(net, argv[1]);
        const std::string input = net.input_names().at(0);
        const Shape shape = net.input_shape(input); // [1, H, W, 3]
        check(shape.size() == 4 && shape[3] == 3, argv[1], ": expected an NHWC RGB input, got ", shape_str(shape));
        const Tensor rgb = read_picture(argv[2]);
        const int height = static_cast<int>(rgb.dim(0)), width = static_cast<int>(rgb.dim(1));

        const auto start = std::chrono::steady_clock::now();
        Session session(net);
        const Tensor x = model_input(rgb, shape[1], shape[2]);
        session.set_input(input, x);
        const Tensor probabilities = session.get(net.output_names().at(0));
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

        const Tensor gray = mask_pixels(probabilities, height, width);
        check(stbi_write_png(argv[3], width, height, 1, gray.data<uint8_t>(), width) != 0, argv[3], ": cannot write");
        int64_t person = 0;
        for (int64_t i = 0; i < gray.numel(); ++i) person += gray.data<uint8_t>()[i] >= 128;
        std::printf("%s: %dx%d, person on %.1f%% of the picture (%.1f ms); mask written to %s\n", argv[2], width, height,
                    100.0 * static_cast<double>(person) / static_cast<double>(gray.numel()), ms, argv[3]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kestrel_segment_selfie: %s\n", e.what());
        return 1;
    }
    return 0;
}
