// kestrel convert MODEL.onnx OUT.param OUT.bin [--no-optimize] — writes our
// format (ncnn's .param/.bin, with our documented layers where ONNX needs
// more), after the graph optimizer unless --no-optimize.
#include <cstdio>

#include "cli.h"
#include "graph/graph.h"

namespace kestrel::cli {

int convert_command(const std::vector<std::string>& argv)
{
    const Args args = parse_args(argv, {}, {"--no-optimize"});
    if (args.positional.size() != 3) throw UsageError("convert needs MODEL.onnx OUT.param OUT.bin");
    LoadedModel model;
    load_model(model, args.positional[0], nullptr, false, args.last("--no-optimize") == nullptr);
    model.net.save_param(args.positional[1]);
    model.net.save_model(args.positional[2]);
    std::printf("wrote %s and %s (%zu layers)\n", args.positional[1].c_str(), args.positional[2].c_str(),
                model.net.graph().layers.size());
    return 0;
}

} // namespace kestrel::cli
