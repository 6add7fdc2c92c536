// Data movement: RESHAPE, SQUEEZE, EXPAND_DIMS, TRANSPOSE, STRIDED_SLICE,
// SLICE, GATHER, GATHER_ND, SPLIT, SPLIT_V, PACK, UNPACK, TILE, BROADCAST_TO,
// PAD, PADV2, MIRROR_PAD, CONCATENATION, SPACE_TO_DEPTH, DEPTH_TO_SPACE,
// RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR, SHAPE.
//  * Operators that read the element order (reshapes, gathers, stacking)
//    take plain values; those with axes (slices, pads, concat, split, tile)
//    keep a folded input folded with their axes mapped; the image operators
//    (resizes, depth <-> space) compute folded.
//  * Values they need (shapes, begins, pads) must be constants of the file,
//    as TFLite's converter writes them.
#include <algorithm>
#include <climits>

#include "frontend/common/axis_order.h"
#include "frontend/tflite/converter.h"

namespace kestrel::tflite_import {

namespace {

// Input k is held folded and has rank 4: its axes are mapped, it stays folded.
bool keeps_folded(const OpContext& n, int k) { return n.rank(k) == 4 && n.is_folded(k) && n.out(0).shape.size() == 4; }

void emit_reshape(OpContext& n, const std::string& x, const Shape& shape, const std::string& y)
{
    ParamDict pd;
    pd.set_int(21, 1); // a 0 is a size, not "copy" (ONNX's allowzero)
    n.emit("Reshape", {x, n.constant_blob(int64_tensor(shape), "shape")}, {y}, pd);
}

// The declared output shape with the batch left to follow the input (-1)
// when the file says the batch varies.
Shape output_shape(const OpContext& n, int k)
{
    const TensorInfo& t = n.out(k);
    return t.signature.empty() ? t.shape : t.signature;
}

void convert_reshape(OpContext& n)
{
    Shape target;
    if (n.has_input(1) && n.constant(1)) {
        const auto v = n.constant_ints(1, "the shape");
        target.assign(v.begin(), v.end());
    } else if (const auto* o = n.op().builtin_options_as_ReshapeOptions(); o && o->new_shape()) {
        target.assign(o->new_shape()->begin(), o->new_shape()->end());
    } else {
        target = output_shape(n, 0);
    }
    if (const Tensor* c = n.constant(0)) {
        n.set_constant_output(0, c->reshaped(n.out(0).shape));
        return;
    }
    emit_reshape(n, n.plain(0), target, n.output(0, false));
}

// SQUEEZE and EXPAND_DIMS: the declared output shape (batch kept variable).
void convert_to_declared_shape(OpContext& n)
{
    if (const Tensor* c = n.constant(0)) {
        n.set_constant_output(0, c->reshaped(n.out(0).shape));
        return;
    }
    Shape target = output_shape(n, 0);
    if (std::count(target.begin(), target.end(), -1) > 1)
        for (size_t a = 1; a < target.size(); ++a)
            if (target[a] < 0) target[a] = n.out(0).shape[a];
    emit_reshape(n, n.plain(0), target, n.output(0, false));
}

void convert_transpose(OpContext& n)
{
    const std::vector<int64_t> p = n.constant_ints(1, "the permutation");
    const int r = n.rank(0);
    n.check(static_cast<int>(p.size()) == r, "the permutation has ", p.size(), " entries for rank ", r);
    std::vector<int> perm;
    for (int64_t a : p) perm.push_back(checked_int(n, a < 0 ? a + r : a, 0, r - 1, "axis"));
    std::string x;
    if (r == 4 && n.is_folded(0)) {
        // The folded value holds file axis e[j] at engine axis j: read through it.
        const std::vector<int> e = engine_permutation(AxisOrder::ChannelsLast, 4);
        std::vector<int> at(4);
        for (int j = 0; j < 4; ++j) at[static_cast<size_t>(e[static_cast<size_t>(j)])] = j;
        for (int& a : perm) a = at[static_cast<size_t>(a)];
        x = n.folded(0);
    } else {
        x = n.plain(0);
    }
    ParamDict pd;
    pd.set_ints(1, perm);
    n.emit("Permute", {x}, {n.output(0, false)}, pd);
}

// A slice on the file's axes as ONNX's starts / ends / axes / steps (Crop 22=1).
struct SliceSpec {
    std::vector<int64_t> starts, ends, axes, steps;
};

void emit_slice(OpContext& n, SliceSpec s, bool folded_form, const std::string& y)
{
    const int r = n.rank(0);
    if (folded_form)
        for (int64_t& a : s.axes) a = OpContext::axis_in(static_cast<int>(a), r, true);
    const std::string x = folded_form ? n.folded(0) : n.plain(0);
    ParamDict pd;
    pd.set_int(22, 1);
    n.emit("Crop", {x, n.constant_blob(int64_tensor(s.starts), "starts"), n.constant_blob(int64_tensor(s.ends), "ends"),
                    n.constant_blob(int64_tensor(s.axes), "axes"), n.constant_blob(int64_tensor(s.steps), "steps")},
           {y}, pd);
}

// STRIDED_SLICE's options and operands.
struct StridedSpec {
    int begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_mask = 0;
    bool offset = false;
    std::vector<int64_t> begin, end, strides;
    bool bit(int mask, int i) const { return ((mask >> i) & 1) != 0; }
};

StridedSpec strided_spec(const OpContext& n)
{
    StridedSpec s;
    if (const auto* o = n.op().builtin_options_as_StridedSliceOptions()) {
        s.begin_mask = o->begin_mask(), s.end_mask = o->end_mask(), s.ellipsis_mask = o->ellipsis_mask();
        s.new_axis_mask = o->new_axis_mask(), s.shrink_mask = o->shrink_axis_mask(), s.offset = o->offset();
    }
    s.begin = n.constant_ints(1, "begin"), s.end = n.constant_ints(2, "end");
    s.strides = n.has_input(3) ? n.constant_ints(3, "strides") : std::vector<int64_t>(s.begin.size(), 1);
    n.check(s.end.size() == s.begin.size() && s.strides.size() == s.begin.size() && s.begin.size() <= 32,
            "begin, end and strides must have one length (at most 32)");
    return s;
}

// The spec resolved against the input's rank as TensorFlow does: an ellipsis
// stands for the axes the spec leaves out, new axes take none, a shrunk axis
// takes one element. `reshape`: whether the result's rank differs.
SliceSpec resolve_strided_slice(const OpContext& n, const StridedSpec& p, bool& reshape)
{
    const int sparse = static_cast<int>(p.begin.size()), r = n.rank(0);
    const Shape& in = n.in(0).shape;
    SliceSpec spec;
    reshape = false;
    int full = 0; // the input axis the next spec entry addresses
    for (int i = 0; i < sparse; ++i) {
        if (p.bit(p.ellipsis_mask, i)) {
            int new_after = 0;
            for (int j = i + 1; j < sparse; ++j) new_after += p.bit(p.new_axis_mask, j);
            full = std::min(r, r - (sparse - i) + 1 + new_after);
            continue;
        }
        if (p.bit(p.new_axis_mask, i)) {
            reshape = true;
            continue;
        }
        n.check(full < r, "the slice spec addresses more axes than the input's ", r);
        const int64_t dim = in[static_cast<size_t>(full)];
        const size_t k = static_cast<size_t>(i);
        int64_t b = p.begin[k], e = p.end[k], s = p.strides[k];
        n.check(s != 0, "stride 0 on axis ", full);
        if (p.bit(p.shrink_mask, i)) {
            if (b < 0) b += dim;
            n.check(b >= 0 && b < dim, "shrunk axis ", full, " index ", p.begin[k], " is out of range ", dim);
            e = b + 1, s = 1;
            reshape = true;
        } else {
            if (p.offset) e += b;
            if (p.bit(p.begin_mask, i)) b = s > 0 ? 0 : INT64_MAX;
            if (p.bit(p.end_mask, i)) e = s > 0 ? INT64_MAX : INT64_MIN;
        }
        spec.starts.push_back(b);
        spec.ends.push_back(e);
        spec.axes.push_back(full);
        spec.steps.push_back(s);
        ++full;
    }
    return spec;
}

// STRIDED_SLICE with every mask: a folded input stays folded unless the rank changes.
void convert_strided_slice(OpContext& n)
{
    bool reshape = false;
    const SliceSpec spec = resolve_strided_slice(n, strided_spec(n), reshape);
    if (!reshape) {
        const bool folded_form = keeps_folded(n, 0);
        emit_slice(n, spec, folded_form, n.output(0, folded_form));
        return;
    }
    const std::string sliced = n.temp("sliced");
    emit_slice(n, spec, false, sliced);
    emit_reshape(n, sliced, output_shape(n, 0), n.output(0, false));
}

void convert_slice(OpContext& n)
{
    const std::vector<int64_t> begin = n.constant_ints(1, "begin"), size = n.constant_ints(2, "size");
    const int r = n.rank(0);
    n.check(static_cast<int>(begin.size()) == r && size.size() == begin.size(), "begin and size must have ", r, " values");
    SliceSpec spec;
    for (int a = 0; a < r; ++a) {
        const int64_t b = begin[static_cast<size_t>(a)], s = size[static_cast<size_t>(a)];
        n.check(b >= 0 && s >= -1, "begin ", b, " / size ", s, " on axis ", a);
        spec.starts.push_back(b);
        spec.ends.push_back(s == -1 ? INT64_MAX : b + s);
        spec.axes.push_back(a);
        spec.steps.push_back(1);
    }
    const bool folded_form = keeps_folded(n, 0);
    emit_slice(n, spec, folded_form, n.output(0, folded_form));
}

void convert_gather(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_GatherOptions();
    n.check(!o || o->batch_dims() == 0, "batch_dims ", o ? o->batch_dims() : 0, " is not supported");
    ParamDict pd;
    pd.set_int(0, o ? o->axis() : 0);
    n.emit("Gather", {n.plain(0), n.plain(1)}, {n.output(0, false)}, pd);
}

void convert_gather_nd(OpContext& n)
{
    ParamDict pd;
    pd.set_int(0, 0);
    n.emit("GatherND", {n.plain(0), n.plain(1)}, {n.output(0, false)}, pd);
}

// SPLIT / SPLIT_V onto Slice with the sizes as an input and the axis mapped.
void emit_split(OpContext& n, int input, int axis, std::vector<int64_t> sizes)
{
    const int r = n.rank(input);
    if (axis < 0) axis += r;
    n.check(axis >= 0 && axis < r, "axis ", axis, " is out of range for rank ", r);
    const int64_t dim = n.in(input).shape[static_cast<size_t>(axis)];
    int64_t known = 0, unknown = 0;
    for (int64_t s : sizes) (s < 0 ? unknown : known) += s < 0 ? 1 : s;
    n.check(unknown <= 1, "more than one size is -1");
    for (int64_t& s : sizes)
        if (s < 0) s = dim - known;
    const bool folded_form = r == 4 && n.is_folded(input);
    ParamDict pd;
    pd.set_int(1, OpContext::axis_in(axis, r, folded_form));
    std::vector<std::string> tops;
    for (int k = 0; k < n.num_outputs(); ++k) tops.push_back(n.output(k, folded_form));
    const std::string x = folded_form ? n.folded(input) : n.plain(input);
    n.emit("Slice", {x, n.constant_blob(int64_tensor(sizes), "sizes")}, tops, pd);
}

void convert_split(OpContext& n)
{
    const std::vector<int64_t> axis = n.constant_ints(0, "the axis");
    n.check(axis.size() == 1, "the axis must be one value");
    const int parts = n.num_outputs();
    const int r = n.rank(1);
    const int a = static_cast<int>(axis[0] < 0 ? axis[0] + r : axis[0]);
    n.check(a >= 0 && a < r, "axis ", axis[0], " is out of range for rank ", r);
    const int64_t dim = n.in(1).shape[static_cast<size_t>(a)];
    n.check(parts > 0 && dim % parts == 0, "axis ", a, " of size ", dim, " does not split into ", parts);
    emit_split(n, 1, a, std::vector<int64_t>(static_cast<size_t>(parts), dim / parts));
}

void convert_split_v(OpContext& n)
{
    const std::vector<int64_t> axis = n.constant_ints(2, "the axis");
    n.check(axis.size() == 1, "the axis must be one value");
    emit_split(n, 0, static_cast<int>(axis[0]), n.constant_ints(1, "the sizes"));
}

// PACK: each value given a unit axis there, then joined along it.
void convert_pack(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_PackOptions();
    const int r = n.rank(0) + 1;
    int axis = o ? o->axis() : 0;
    if (axis < 0) axis += r;
    n.check(axis >= 0 && axis < r, "axis is out of range");
    Shape unit = n.in(0).shape;
    unit.insert(unit.begin() + axis, 1);
    std::vector<std::string> parts;
    for (int k = 0; k < n.num_inputs(); ++k) {
        const std::string p = n.temp("unit");
        emit_reshape(n, n.plain(k), unit, p);
        parts.push_back(p);
    }
    ParamDict pd;
    pd.set_int(0, axis);
    n.emit("Concat", parts, {n.output(0, false)}, pd);
}

// UNPACK: slices of one along the axis, each without it.
void convert_unpack(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_UnpackOptions();
    const int r = n.rank(0);
    int axis = o ? o->axis() : 0;
    if (axis < 0) axis += r;
    n.check(axis >= 0 && axis < r, "axis is out of range");
    const int parts = n.num_outputs();
    n.check(n.in(0).shape[static_cast<size_t>(axis)] == parts, "axis ", axis, " does not hold ", parts, " values");
    std::vector<std::string> slices;
    for (int k = 0; k < parts; ++k) slices.push_back(n.temp("slice"));
    ParamDict pd;
    pd.set_int(1, axis);
    n.emit("Slice", {n.plain(0), n.constant_blob(int64_tensor(std::vector<int64_t>(static_cast<size_t>(parts), 1)), "sizes")},
           slices, pd);
    for (int k = 0; k < parts; ++k) emit_reshape(n, slices[static_cast<size_t>(k)], output_shape(n, k), n.output(k, false));
}

// Per-axis values of the file's axes (repeats, pads) in the engine's order.
std::vector<int64_t> engine_ordered(const std::vector<int64_t>& v)
{
    const std::vector<int> e = engine_permutation(AxisOrder::ChannelsLast, static_cast<int>(v.size()));
    std::vector<int64_t> out;
    for (int a : e) out.push_back(v[static_cast<size_t>(a)]);
    return out;
}

void convert_tile(OpContext& n)
{
    std::vector<int64_t> repeats = n.constant_ints(1, "the multiples");
    const bool folded_form = keeps_folded(n, 0);
    if (folded_form) repeats = engine_ordered(repeats);
    ParamDict pd;
    pd.set_int(21, 1);
    const std::string x = folded_form ? n.folded(0) : n.plain(0);
    n.emit("Tile", {x, n.constant_blob(int64_tensor(repeats), "repeats")}, {n.output(0, folded_form)}, pd);
}

void convert_broadcast_to(OpContext& n)
{
    n.emit("Expand", {n.plain(0), n.plain(1)}, {n.output(0, false)});
}

// PAD / PADV2 / MIRROR_PAD: paddings [rank][2] -> ONNX's begins then ends.
void convert_pad(OpContext& n, int type)
{
    const std::vector<int64_t> p = n.constant_ints(1, "the paddings");
    const int r = n.rank(0);
    n.check(static_cast<int>(p.size()) == 2 * r, "the paddings must be [", r, ", 2], they have ", p.size(), " values");
    std::vector<int64_t> begins, ends;
    for (int a = 0; a < r; ++a) {
        begins.push_back(p[static_cast<size_t>(2 * a)]);
        ends.push_back(p[static_cast<size_t>(2 * a + 1)]);
    }
    const bool folded_form = keeps_folded(n, 0);
    if (folded_form) {
        begins = engine_ordered(begins);
        ends = engine_ordered(ends);
    }
    begins.insert(begins.end(), ends.begin(), ends.end());
    ParamDict pd;
    pd.set_int(4, type);
    pd.set_int(21, 1);
    const std::string x = folded_form ? n.folded(0) : n.plain(0);
    std::vector<std::string> bottoms = {x, n.constant_blob(int64_tensor(begins), "pads")};
    if (type == 0 && n.has_input(2)) bottoms.push_back(n.plain(2));
    n.emit("Padding", bottoms, {n.output(0, folded_form)}, pd);
}

void convert_mirror_pad(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_MirrorPadOptions();
    n.check(!o || o->mode() == fb::MirrorPadMode::REFLECT, "SYMMETRIC mirror padding is not supported");
    convert_pad(n, 2);
}

void convert_concatenation(OpContext& n)
{
    const auto* o = n.op().builtin_options_as_ConcatenationOptions();
    const int r = static_cast<int>(n.out(0).shape.size());
    const bool folded_form = r == 4 && n.prefer_folded();
    ParamDict pd;
    pd.set_int(0, OpContext::axis_in(o ? o->axis() : 0, r, folded_form));
    std::vector<std::string> parts;
    for (int k = 0; k < n.num_inputs(); ++k) parts.push_back(n.operand(k, folded_form));
    const auto act = o ? o->fused_activation_function() : fb::ActivationFunctionType::NONE;
    const std::string y = n.output(0, folded_form);
    const std::string pre = act == fb::ActivationFunctionType::NONE ? y : n.temp("pre_activation");
    n.emit("Concat", parts, {pre}, pd);
    n.activation(pre, act, y);
}

void convert_depth_space(OpContext& n, bool to_space)
{
    int block = 0;
    if (to_space) {
        const auto* o = n.op().builtin_options_as_DepthToSpaceOptions();
        block = o ? o->block_size() : 0;
    } else {
        const auto* o = n.op().builtin_options_as_SpaceToDepthOptions();
        block = o ? o->block_size() : 0;
    }
    n.check(block >= 1, "block size ", block, " must be positive");
    ParamDict pd;
    pd.set_int(0, block);
    if (to_space) pd.set_int(1, 0); // TensorFlow's order is ONNX's DCR
    const std::string x = n.folded(0);
    n.emit(to_space ? "DepthToSpace" : "SpaceToDepth", {x}, {n.output(0, true)}, pd);
}

// RESIZE_*: TFLite's coordinate rules as Interp's ONNX modes (21):
// align_corners -> align_corners, half_pixel_centers -> half_pixel
// (nearest: TensorFlow's half-pixel flooring), else asymmetric.
void convert_resize(OpContext& n, bool bilinear)
{
    bool align = false, half = false;
    if (bilinear) {
        const auto* o = n.op().builtin_options_as_ResizeBilinearOptions();
        align = o && o->align_corners();
        half = o && o->half_pixel_centers();
    } else {
        const auto* o = n.op().builtin_options_as_ResizeNearestNeighborOptions();
        align = o && o->align_corners();
        half = o && o->half_pixel_centers();
    }
    n.check(!(align && half), "align_corners and half_pixel_centers together are not supported");
    const std::vector<int64_t> size = n.constant_ints(1, "the size");
    n.check(size.size() == 2 && size[0] > 0 && size[1] > 0, "the size must be two positive values");
    const Shape& in = n.in(0).shape;
    n.check(in.size() == 4, "the input must be NHWC");
    ParamDict pd;
    pd.set_int(20, 1);
    pd.set_int(0, bilinear ? 2 : 1);
    pd.set_int(21, align ? 2 : half ? (bilinear ? 0 : 4) : 3);
    pd.set_int(22, align ? 1 : 2); // nearest: round half up with align_corners, else floor
    pd.set_int(25, 1);
    const std::string x = n.folded(0);
    const std::string sizes = n.constant_blob(int64_tensor({in[0], in[3], size[0], size[1]}), "sizes");
    n.emit("Interp", {x, sizes}, {n.output(0, true)}, pd);
}

// SHAPE: a constant when the file's shape is static, else the run-time shape.
void convert_shape_of(OpContext& n)
{
    const TensorInfo& x = n.in(0);
    const DType out = n.out(0).dtype;
    if (std::find(x.signature.begin(), x.signature.end(), -1) == x.signature.end()) {
        n.set_constant_output(0, int64_tensor(std::vector<int64_t>(x.shape.begin(), x.shape.end())).to(out));
        return;
    }
    const std::string shape = n.temp("shape");
    n.emit("Shape", {n.plain(0)}, {shape});
    ParamDict pd;
    pd.set_int(2, static_cast<int>(out));
    n.emit("Cast", {shape}, {n.output(0, false)}, pd);
}

} // namespace

void add_shape_converters(BuiltinTable& t)
{
    using Op = fb::BuiltinOperator;
    t[Op::RESHAPE] = convert_reshape;
    t[Op::SQUEEZE] = convert_to_declared_shape;
    t[Op::EXPAND_DIMS] = convert_to_declared_shape;
    t[Op::TRANSPOSE] = convert_transpose;
    t[Op::STRIDED_SLICE] = convert_strided_slice;
    t[Op::SLICE] = convert_slice;
    t[Op::GATHER] = convert_gather;
    t[Op::GATHER_ND] = convert_gather_nd;
    t[Op::SPLIT] = convert_split;
    t[Op::SPLIT_V] = convert_split_v;
    t[Op::PACK] = convert_pack;
    t[Op::UNPACK] = convert_unpack;
    t[Op::TILE] = convert_tile;
    t[Op::BROADCAST_TO] = convert_broadcast_to;
    t[Op::PAD] = [](OpContext& n) { convert_pad(n, 0); };
    t[Op::PADV2] = [](OpContext& n) { convert_pad(n, 0); };
    t[Op::MIRROR_PAD] = convert_mirror_pad;
    t[Op::CONCATENATION] = convert_concatenation;
    t[Op::DEPTH_TO_SPACE] = [](OpContext& n) { convert_depth_space(n, true); };
    t[Op::SPACE_TO_DEPTH] = [](OpContext& n) { convert_depth_space(n, false); };
    t[Op::RESIZE_BILINEAR] = [](OpContext& n) { convert_resize(n, true); };
    t[Op::RESIZE_NEAREST_NEIGHBOR] = [](OpContext& n) { convert_resize(n, false); };
    t[Op::SHAPE] = convert_shape_of;
}

} // namespace kestrel::tflite_import
