// kestrel: one command for running, inspecting, benchmarking and converting
// models. Exit status: 0 success, 1 error, 2 usage error.
#include <cstdio>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <cstring>

#include "cli.h"

namespace {

struct Command {
    const char* name;
    int (*run)(const std::vector<std::string>&);
    const char* usage; // the lines after "kestrel "
};

const Command kCommands[] = {
    {"run", kestrel::cli::run_command,
     "run  MODEL [--weights FILE] [--input NAME=FILE.npy]... [--output NAME=FILE.npy]...\n"
     "             [--shape NAME=D0,D1,...]... [--threads N] [--no-optimize] [--fp16-weights]\n"
     "             [--precision fp32|bf16] [--backend cpu|vulkan [--device N] [--fp16-storage]]\n"
     "             [--image FILE [--size W,H] [--mean V,...] [--norm V,...] [--pixel-type RGB|BGR|GRAY]\n"
     "              [--resize FILTER]] [--topk K [--labels FILE]]\n"
     "             (a sequence input or output NAME=FILE.npy is FILE_0.npy, FILE_1.npy, ..., one per element)\n"},
    {"info", kestrel::cli::info_command,
     "info MODEL [--weights FILE] [--shape NAME=D0,D1,...]... [--json | --dot | --plan]\n"
     "             [--backend cpu|vulkan [--device N]] (which layers run on the device, which on the CPU)\n"},
    {"bench", kestrel::cli::bench_command,
     "bench MODEL|DIR... [--threads N] [--loops N] [--warmup N] [--profile] [--json] [--no-optimize]\n"
     "             [--fp16-weights] [--precision fp32|bf16] [--shape D0,D1,...] [--shape NAME=D0,D1,...]\n"
     "             [--backend cpu|vulkan [--device N] [--fp16-storage]] (--profile: each layer's time and device)\n"
     "             (.param shapes in ncnn's order [w,h,c]; .onnx shapes in the model's own order)\n"},
    {"convert", kestrel::cli::convert_command, "convert MODEL.onnx OUT.param OUT.bin [--no-optimize] [--ncnn]\n"},
    {"quantize", kestrel::cli::quantize_command,
     "quantize MODEL OUT.param OUT.bin --calibration DIR [--method kl|minmax|percentile] [--percentile P]\n"
     "             [--eval DIR] [--threads N] [--weights FILE] [--no-requantize]\n"
     "             [--size W,H] [--mean V,...] [--norm V,...] [--pixel-type RGB|BGR|GRAY] [--resize FILTER]\n"
     "             (DIR: .npy inputs or pictures, one per sample; for several inputs, a folder per sample\n"
     "              with NAME.npy for each input)\n"},
};

const char* const kModels =
    "MODEL is an ONNX model (.onnx, converted in memory; .npy shapes are its ONNX shapes), a TensorFlow Lite\n"
    "model (.tflite; inputs and outputs as it declares them, NHWC images stay NHWC) or an ncnn .param\n"
    "(weights default to the same path with .bin) or .param.bin; the format is told from the content.\n"
    "For ncnn models, .npy shapes are ncnn's [w,h,d,c] reversed: (c,d,h,w), (c,h,w), (h,w), (w,).\n"
    "Every command that loads an ONNX model takes --onnx-limit depth=N|subgraphs=N|nodes=N (raises the bounds\n"
    "on nested subgraphs and node counts; docs/onnx.md). Names are the model's own, spaces and all.\n";

void print_usage(FILE* f, const Command* only = nullptr)
{
    std::fputs(only ? "usage: kestrel " : "usage: kestrel <command> [args]\n", f);
    for (const Command& c : kCommands)
        if (only == nullptr || only == &c) std::fprintf(f, "%s%s", only ? "" : "  ", c.usage);
    std::fputs(kModels, f);
    if (only == nullptr) std::fputs("kestrel help COMMAND, kestrel COMMAND --help: one command's usage; kestrel --version\n", f);
}

const Command* find_command(const std::string& name)
{
    for (const Command& c : kCommands)
        if (name == c.name) return &c;
    return nullptr;
}

bool is_help(const char* arg) { return std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0; }

} // namespace

int main(int argc, char** argv)
{
    using namespace kestrel;
#ifdef __GLIBC__
    // A fixed mmap threshold: glibc otherwise raises it each time a large
    // block is freed (weights dropped while loading), and later large blocks
    // then come from the heap, which does not give freed memory back.
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    const std::string command = argv[1];
    if (is_help(argv[1]) || (command == "help" && argc == 2)) {
        print_usage(stdout);
        return 0;
    }
    if (command == "--version") {
        std::printf("kestrel %s\n", KESTREL_VERSION);
        return 0;
    }
    if (command == "help") {
        const Command* c = find_command(argv[2]);
        if (c == nullptr) {
            std::fprintf(stderr, "kestrel help: unknown command '%s'\n", argv[2]);
            print_usage(stderr);
            return 2;
        }
        print_usage(stdout, c);
        return 0;
    }
    const Command* c = find_command(command);
    if (c == nullptr) {
        std::fprintf(stderr, "kestrel: unknown command '%s'\n", command.c_str());
        print_usage(stderr);
        return 2;
    }
    const std::vector<std::string> args(argv + 2, argv + argc);
    for (const std::string& a : args)
        if (is_help(a.c_str())) {
            print_usage(stdout, c);
            return 0;
        }
    try {
        return c->run(args);
    } catch (const cli::UsageError& e) {
        std::fprintf(stderr, "kestrel %s: %s\n", command.c_str(), e.what());
        print_usage(stderr, c);
        return 2;
    } catch (const Error& e) {
        std::fprintf(stderr, "kestrel %s: error: %s\n", command.c_str(), e.what());
        return 1;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "kestrel %s: error: out of memory\n", command.c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kestrel %s: error: %s\n", command.c_str(), e.what());
        return 1;
    }
}
