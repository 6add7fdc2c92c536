// The resample family. Resampling of images and grids: ncnn's Interp, ONNX's Resize, GridSample.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_interp();
std::unique_ptr<Op> make_resize();
std::unique_ptr<Op> make_grid_sample();

std::vector<BuiltinOp> resample_family()
{
    return {
        {"Interp", make_interp},
        {"Resize", make_resize},
        {"GridSample", make_grid_sample},
    };
}

} // namespace kestrel
