// The resample family. Resampling of images and grids: Interp (ncnn's form and ONNX's Resize, on one per-axis tap engine), GridSample.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_interp();
std::unique_ptr<Op> make_grid_sample();

std::vector<BuiltinOp> resample_family()
{
    return {
        {"Interp", make_interp},
        {"GridSample", make_grid_sample},
    };
}

} // namespace kestrel
