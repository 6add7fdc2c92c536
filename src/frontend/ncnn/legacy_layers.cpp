// The table of legacy layer names (see legacy_layers.h). An entry moves param
// ids (old -> new), sets params the new form needs, and may renumber values.
#include "frontend/ncnn/legacy_layers.h"

#include <cstring>
#include <map>
#include <vector>

#include "kestrel/error.h"

namespace kestrel {

namespace {

struct LegacyLayer {
    const char* old_type;
    const char* type;
    std::vector<std::pair<int, int>> moved;  // old id -> new id; other ids keep theirs
    std::vector<std::pair<int, int>> added;  // id = value, set after the move where absent
    void (*renumber)(ParamDict&) = nullptr;  // codes whose numbering changed
};

// Transpose without a perm reversed the axes.
void reverse_without_perm(ParamDict& pd)
{
    if (!pd.has(1)) pd.set_int(2, 1);
}

// Pad's modes 1 reflect, 2 edge are Padding's types 2 and 1.
void onnx_pad_modes(ParamDict& pd)
{
    const int mode = pd.get_int(4, 0);
    if (mode == 1 || mode == 2) pd.set_int(4, 3 - mode);
}

// Resize's modes 0 nearest, 1 linear, 2 cubic are Interp's resize_types 1-3.
void ncnn_resize_types(ParamDict& pd)
{
    pd.set_int(0, pd.get_int(0, 0) + 1);
}

// GridSampleND's mode and padding codes counted from 0, ncnn's from 1.
void ncnn_grid_sample_codes(ParamDict& pd)
{
    for (int id : {0, 1}) pd.set_int(id, pd.get_int(id, 0) + 1);
}

const std::vector<LegacyLayer>& legacy_layers()
{
    static const std::vector<LegacyLayer> table = {
        {"ArgMaxND", "ArgMax", {{0, 21}, {1, 22}, {2, 23}}, {{20, 1}}}, // axis keepdims select_last_index
        {"CastND", "Cast", {{0, 2}}, {}}, // 0=to
        {"RoiAlign", "ROIAlign", {{0, 21}, {1, 22}, {2, 23}, {3, 24}, {4, 25}, {5, 26}}, {{20, 1}}}, // ONNX's RoiAlign
        {"ConcatND", "Concat", {}, {}},
        {"ReshapeND", "Reshape", {{0, 21}}, {}}, // 0=allowzero
        {"DropoutND", "Dropout", {{0, 21}}, {{20, 1}}}, // 0=mask dtype
        {"EinsumND", "Einsum", {}, {}},
        {"Elementwise", "BinaryOp", {{1, 20}}, {{21, 1}, {20, 1}}}, // 1=broadcast_rule (default numpy)
        {"FlattenND", "Flatten", {}, {{0, 1}}},  // 0=axis, default 1
        {"SqueezeND", "Squeeze", {}, {{21, 1}}},
        {"Unsqueeze", "ExpandDims", {}, {{21, 1}}},
        {"SplitND", "Slice", {{0, 1}}, {}},     // 0=axis
        {"SliceND", "Crop", {{20, 23}}, {{22, 1}}}, // 20=dynamic
        // kernel_shape strides pads dilations ceil_mode auto_pad storage_order; 6=count_include_pad stays
        {"GridSampleND", "GridSample", {}, {{20, 1}}, ncnn_grid_sample_codes}, // ONNX rounding of nearest
        {"Max", "Eltwise", {}, {{21, 1}, {0, 2}}},
        {"Mean", "Eltwise", {}, {{21, 1}, {0, 4}}},
        {"Min", "Eltwise", {}, {{21, 1}, {0, 3}}},
        {"MaxPool", "Pooling", {{0, 21}, {1, 22}, {2, 23}, {3, 24}, {4, 25}, {5, 26}, {7, 27}}, {{20, 1}, {0, 0}}},
        {"AveragePool", "Pooling", {{0, 21}, {1, 22}, {2, 23}, {3, 24}, {4, 25}, {5, 26}, {7, 27}}, {{20, 1}, {0, 1}}},
        {"NormalizeND", "LayerNorm", {{0, 21}, {1, 22}, {2, 23}, {3, 24}, {4, 25}}, {{20, 1}}},
        // coordinate transform, nearest mode, cubic_a, exclude_outside, target kind, extrapolation, dynamic
        {"Resize", "Interp", {{1, 21}, {2, 22}, {3, 23}, {4, 24}, {5, 25}, {6, 26}, {20, 27}}, {{20, 1}},
         ncnn_resize_types},
        {"QuantizeLinear", "Quantize", {{0, 21}, {1, 22}}, {{20, 1}}},  // axis, y dtype
        {"DequantizeLinear", "Dequantize", {{0, 21}}, {{20, 1}}},      // axis
        {"Pad", "Padding", {{0, 4}}, {{21, 1}}, onnx_pad_modes}, // 0=mode
        {"RNNND", "RNN", {{0, 21}, {1, 22}, {2, 23}, {3, 24}, {4, 25}, {5, 26}, {6, 27}, {7, 28}}, {{20, 1}}},
        {"GRUND", "GRU", {{0, 21}, {1, 22}, {2, 23}, {3, 24}, {4, 25}, {5, 26}, {6, 27}, {7, 28}}, {{20, 1}}},
        {"LSTMND", "LSTM", {{0, 21}, {1, 22}, {2, 23}, {3, 24}, {4, 25}, {5, 26}, {6, 27}, {7, 28}}, {{20, 1}}},
        {"ReduceND", "Reduction", {{1, 4}, {2, 22}}, {{21, 1}, {4, 1}}}, // 1=keepdims (1) 2=noop_with_empty_axes
        {"TileND", "Tile", {}, {{21, 1}}},
        {"Sum", "Eltwise", {}, {{21, 1}, {0, 1}}},
        {"Transpose", "Permute", {{0, 1}}, {}, reverse_without_perm}, // 0=perm
        {"Unary", "UnaryOp", {}, {{21, 1}}},
    };
    return table;
}

// Copies param `from` of `src` to `to` of `dst`, whatever its kind.
void copy_param(const ParamDict& src, int from, ParamDict& dst, int to)
{
    switch (src.kind(from)) {
    case ParamDict::Kind::Int: dst.set_int(to, src.get_int(from, 0)); break;
    case ParamDict::Kind::Float: dst.set_float(to, src.get_float(from, 0.f)); break;
    case ParamDict::Kind::IntArray: dst.set_ints(to, src.get_ints(from)); break;
    case ParamDict::Kind::FloatArray: dst.set_floats(to, src.get_floats(from)); break;
    case ParamDict::Kind::String: dst.set_string(to, src.get_string(from)); break;
    default: fail("param ", from, " of a legacy layer has a form it never had");
    }
}

} // namespace

bool upgrade_legacy_layer(std::string& type, ParamDict& params)
{
    for (const LegacyLayer& l : legacy_layers()) {
        if (type != l.old_type) continue;
        std::map<int, int> moved(l.moved.begin(), l.moved.end());
        ParamDict upgraded;
        for (int id : params.ids()) {
            const auto it = moved.find(id);
            copy_param(params, id, upgraded, it == moved.end() ? id : it->second);
        }
        for (const auto& [id, value] : l.added)
            if (!upgraded.has(id)) upgraded.set_int(id, value);
        if (l.renumber) l.renumber(upgraded);
        params = upgraded;
        type = l.type;
        return true;
    }
    return false;
}

} // namespace kestrel
