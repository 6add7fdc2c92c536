// kestrel convert MODEL.onnx OUT.param OUT.bin [--no-optimize] [--ncnn] —
// writes our format (ncnn's .param/.bin, with our documented layers where
// ONNX needs more), after the graph optimizer unless --no-optimize; with
// --ncnn, ncnn's own conventions only (frontend/ncnn/export_form.h), for ncnn to run.
#include <cstdio>

#include "cli.h"
#include "graph/graph.h"
#include "frontend/ncnn/export_form.h"

namespace kestrel::cli {

int convert_command(const std::vector<std::string>& argv)
{
    const Args args = parse_args(argv, {}, {"--no-optimize", "--ncnn"});
    if (args.positional.size() != 3) throw UsageError("convert needs MODEL.onnx OUT.param OUT.bin");
    const bool for_ncnn = args.last("--ncnn") != nullptr;
    LoadedModel model;
    model.onnx = args.onnx_limits();
    if (for_ncnn) { // ncnn's convolutions take no residual input
        LoadOptions lo = model.net.load_options();
        lo.fuse_residuals = false;
        model.net.set_load_options(lo);
    }
    load_model(model, args.positional[0], nullptr, false, args.last("--no-optimize") == nullptr);
    if (for_ncnn) model.net = ncnn_form(model.net);
    model.net.save_param(args.positional[1]);
    model.net.save_model(args.positional[2]);
    std::printf("wrote %s and %s (%zu layers)\n", args.positional[1].c_str(), args.positional[2].c_str(),
                model.net.graph().layers.size());
    return 0;
}

} // namespace kestrel::cli
