// kestrel: one command for running, inspecting (and later benchmarking and
// converting) models. Exit status: 0 success, 1 error, 2 usage error.
#include <cstdio>
#include <cstring>

#include "cli.h"

namespace {

const char* const kUsage =
    "usage: kestrel <command> [args]\n"
    "  run  MODEL [--weights FILE] [--input NAME=FILE.npy]... [--output NAME=FILE.npy]...\n"
    "             [--shape NAME=D0,D1,...]... [--threads N] [--no-optimize]\n"
    "  info MODEL [--weights FILE] [--shape NAME=D0,D1,...]...\n"
    "  bench MODEL.param|DIR... [--threads N] [--loops N] [--warmup N] [--shape [w,h,c]]\n"
    "             [--shape NAME=[w,h,c]] [--profile]   (bench shapes are in ncnn order w,h,c)\n"
    "  convert MODEL.onnx OUT.param OUT.bin [--no-optimize]\n"
    "MODEL is an ONNX model (.onnx, converted in memory; .npy shapes are its ONNX shapes) or an ncnn .param (weights default to the same path with .bin) or .param.bin.\n"
    "For ncnn models, .npy shapes are ncnn's [w,h,d,c] reversed: (c,d,h,w), (c,h,w), (h,w), (w,).\n";

} // namespace

int main(int argc, char** argv)
{
    using namespace kestrel;
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
        std::fputs(kUsage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const std::string command = argv[1];
    const std::vector<std::string> args(argv + 2, argv + argc);
    try {
        if (command == "run") return cli::run_command(args);
        if (command == "info") return cli::info_command(args);
        if (command == "bench") return cli::bench_command(args);
        if (command == "convert") return cli::convert_command(args);
        std::fprintf(stderr, "kestrel: unknown command '%s'\n%s", command.c_str(), kUsage);
        return 2;
    } catch (const cli::UsageError& e) {
        std::fprintf(stderr, "kestrel %s: %s\n%s", command.c_str(), e.what(), kUsage);
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
