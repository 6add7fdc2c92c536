// Crop (ncnn): cuts a box out of input 0. How the box is given picks the mode,
// decided at load time exactly as ncnn does:
//   numpy      9=starts 10=ends [11=axes] (int arrays; axes count outermost
//              first over the ncnn rank, default all). start/end -233 = open;
//              negative values count from the end; end == 0 means "to the end"
//              (ncnn computes end > 0 ? end : size + end). No step.
//   expression 19=starts_expr 20=ends_expr [21=axes_expr]: the same, with the
//              lists computed from the input shapes; referencing blob k makes
//              the layer take 1 + max k inputs. Wins over 9/10 when both exist.
//   offset     0=woffset 1=hoffset 13=doffset 2=coffset, 3=outw 4=outh 14=outd
//              5=outc, 6/7/15/8 = the same offsets from the far end. Per axis:
//              size - off - off2, then min(outX, that) unless outX == -233.
//              Chosen when any outX or off2 is nonzero. An outX left at its
//              default 0 gives size 0 on that axis: ncnn then fails the run,
//              and so do we, with an error naming the param (write -233).
//   reference  none of the above: two inputs, the output takes input 1's w,h,
//              (d), and c when input 1 has input 0's rank; offsets from 0/1/13/2.
//   roi        reference with 0=-233: input 1 holds ints [woff,hoff,(doff),coff,
//              outw,outh,(outd),outc] (as many as the rank needs). The output
//              shape then depends on data: exact while planning when the value
//              is known, otherwise bounded by input 0 and fixed by forward.
//   slice      22=1 (ONNX's Slice, any rank): inputs 1 starts, 2 ends, 3 axes
//              (optional: 0..n-1), 4 steps (optional: 1s), 1-D integer tensors
//              of one length. Negative starts/ends count from the end, then are
//              clamped ([0, dim] for positive steps, [-1, dim-1] for negative
//              ones); steps may be negative but not 0; axes must not repeat; a
//              range may be empty. 23=dynamic=1 accepts values known only at
//              run time (see common/tensor_util.cpp).
// Every ncnn box must lie inside the input with size >= 1 on each axis; ncnn
// reads out of bounds or fails on the boxes we reject. Whatever the mode, the
// result is a strided region of the input (shape, first element, strides),
// copied by one strided copy. Any dtype: bytes are copied.
#include <algorithm>
#include <cstring>

#include "ops/common/expression.h"
#include "ops/registry.h"
#include "ops/common/tensor_util.h"
#include "ops/common/element_moves.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

constexpr int kOpen = -233;

// Per ncnn axis, in ncnn's [w,h,d,c] order.
enum Ax { W = 0, H = 1, D = 2, C = 3 };
const char* const kAxisName[4] = {"w", "h", "d", "c"};

struct Box {
    int64_t off[4] = {0, 0, 0, 0};
    int64_t len[4] = {1, 1, 1, 1};
};

// The [w,h,d,c] slot of axis k (outermost first) for a rank.
int slot_of(int rank, int k)
{
    static const int kSlots[4][4] = {{W}, {H, W}, {C, H, W}, {C, D, H, W}};
    return kSlots[rank - 1][k];
}

// Box covering the whole input.
Box full_box(const NcnnDims& n)
{
    Box b;
    const int64_t size[4] = {n.w, n.h, n.d, n.c};
    for (int i = 0; i < 4; ++i) b.len[i] = size[i];
    return b;
}

// numpy-style starts/ends/axes, as ncnn resolves them.
Box numpy_box(const NcnnDims& n, const std::vector<int>& starts, const std::vector<int>& ends,
              const std::vector<int>& axes)
{
    Box b = full_box(n);
    const size_t count = axes.empty() ? static_cast<size_t>(n.dims) : axes.size();
    check(starts.size() >= count && ends.size() >= count, "starts/ends have ", starts.size(), "/", ends.size(),
          " entries, ", count, " needed for ", axes.empty() ? "every axis" : "the given axes");
    const int64_t size[4] = {n.w, n.h, n.d, n.c};
    for (size_t i = 0; i < count; ++i) {
        int axis = axes.empty() ? static_cast<int>(i) : axes[i];
        if (axis < 0) axis += n.dims;
        check(axis >= 0 && axis < n.dims, "crop axis ", axes.empty() ? axis : axes[i], " is out of range for a rank ",
              n.dims, " input");
        const int s = slot_of(n.dims, axis);
        const int64_t dim = size[s];
        const int64_t start = starts[i] == kOpen ? 0 : starts[i];
        const int64_t end = ends[i] == kOpen ? dim : ends[i];
        b.off[s] = start >= 0 ? start : dim + start;
        b.len[s] = std::min(dim, end > 0 ? end : dim + end) - b.off[s];
    }
    return b;
}

void check_box(const Box& b, const NcnnDims& n)
{
    const int64_t size[4] = {n.w, n.h, n.d, n.c};
    for (int i = 0; i < 4; ++i) {
        check(b.off[i] >= 0 && b.off[i] < size[i], "crop start ", b.off[i], " on axis ", kAxisName[i],
              " is outside 0..", size[i] - 1);
        check(b.len[i] >= 1, "crop size on axis ", kAxisName[i], " is ", b.len[i], " (from start ", b.off[i],
              ", axis size ", size[i], "); an empty crop is an error");
        check(b.off[i] + b.len[i] <= size[i], "crop ", b.off[i], "+", b.len[i], " runs past axis ", kAxisName[i],
              " of size ", size[i]);
    }
}

// ncnn reads the ROI blob as int words: 4-byte dtypes are taken as int32 bit
// patterns (as ncnn's `(const int*)` does); I64 holds the values directly.
std::vector<int64_t> roi_values(const Tensor& t)
{
    std::vector<int64_t> v(static_cast<size_t>(t.numel()));
    switch (t.dtype()) {
    case DType::I32:
    case DType::U32:
    case DType::F32:
        for (size_t i = 0; i < v.size(); ++i) {
            int32_t x;
            std::memcpy(&x, static_cast<const uint8_t*>(t.raw()) + 4 * i, 4);
            v[i] = x;
        }
        break;
    case DType::I64:
        for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<int64_t>()[i];
        break;
    default: fail("the ROI input (input 1) must hold 32-bit ints (or I64), got ", dtype_name(t.dtype()));
    }
    return v;
}

Box roi_box(const NcnnDims& n, const std::vector<int64_t>& p)
{
    static const size_t kNeed[4] = {4, 5, 6, 8};
    check(p.size() >= kNeed[n.dims - 1], "the ROI input has ", p.size(), " values; a rank ", n.dims, " crop needs ",
          kNeed[n.dims - 1]);
    Box b = full_box(n);
    switch (n.dims) {
    case 1: b.off[W] = p[0], b.len[W] = p[3]; break;
    case 2: b.off[W] = p[0], b.off[H] = p[1], b.len[W] = p[3], b.len[H] = p[4]; break;
    case 3:
        b.off[W] = p[0], b.off[H] = p[1], b.off[C] = p[2];
        b.len[W] = p[3], b.len[H] = p[4], b.len[C] = p[5];
        break;
    default:
        for (int i = 0; i < 4; ++i) b.off[i] = p[i], b.len[i] = p[4 + i];
    }
    return b;
}

Shape shape_of_box(const Box& b, int rank)
{
    return shape_from_ncnn(rank, b.len[W], b.len[H], b.len[D], b.len[C]);
}

// The region a crop copies: its shape, its first element and, per axis, the
// input stride between its elements (in elements).
struct Region {
    Shape shape;
    int64_t offset = 0;
    std::vector<int64_t> strides;
};

Region region_of_box(const Box& b, const Shape& input)
{
    const int rank = static_cast<int>(input.size());
    Region r;
    r.shape = shape_of_box(b, rank);
    r.strides = nd::dense_strides(input);
    for (int k = 0; k < rank; ++k) r.offset += b.off[slot_of(rank, k)] * r.strides[static_cast<size_t>(k)];
    return r;
}

// ONNX's Slice: values are starts, ends, [axes], [steps].
Region onnx_slice_region(const Shape& d, const std::vector<Tensor>& v)
{
    const int64_t rank = static_cast<int64_t>(d.size());
    const std::vector<int64_t> starts = nd::int_values(v[0], "starts (input 1)");
    const std::vector<int64_t> ends = nd::int_values(v[1], "ends (input 2)");
    const size_t n = starts.size();
    check(ends.size() == n, "starts has ", n, " values but ends has ", ends.size());
    std::vector<int64_t> axes, steps(n, 1);
    if (v.size() > 2 && v[2].defined() && v[2].numel() > 0) {
        axes = nd::int_values(v[2], "axes (input 3)");
        check(axes.size() == n, "axes has ", axes.size(), " values but starts has ", n);
    } else {
        check(static_cast<int64_t>(n) <= rank, n, " starts for a rank ", rank, " input");
        for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (v.size() > 3 && v[3].defined()) {
        steps = nd::int_values(v[3], "steps (input 4)");
        check(steps.size() == n, "steps has ", steps.size(), " values but starts has ", n);
    }
    Region r;
    r.shape = d;
    r.strides = nd::dense_strides(d);
    std::vector<bool> seen(d.size(), false);
    for (size_t i = 0; i < n; ++i) {
        const int a = nd::normalize_axis(axes[i], rank, "axis");
        check(!seen[static_cast<size_t>(a)], "axes repeat axis ", a);
        seen[static_cast<size_t>(a)] = true;
        const int64_t dim = d[static_cast<size_t>(a)], step = steps[i];
        check(step != 0, "step for axis ", a, " is 0");
        int64_t b = starts[i], e = ends[i];
        if (b < 0) b += dim;
        if (e < 0) e += dim;
        int64_t len;
        if (step > 0) {
            b = std::clamp<int64_t>(b, 0, dim);
            e = std::clamp<int64_t>(e, 0, dim);
            len = e > b ? (e - b - 1) / step + 1 : 0;
        } else {
            b = std::clamp<int64_t>(b, -1, dim - 1);
            e = std::clamp<int64_t>(e, -1, dim - 1);
            const int64_t mag = step == INT64_MIN ? INT64_MAX : -step;
            len = b > e ? (b - e - 1) / mag + 1 : 0;
        }
        r.shape[static_cast<size_t>(a)] = len;
        if (len > 0) r.offset += b * r.strides[static_cast<size_t>(a)];
        r.strides[static_cast<size_t>(a)] *= step;
    }
    return r;
}

// A region that is a range of whole channel blocks of a [..., C, H, W]
// input (the last block may end where the input's channels do): its first
// channel; -1 for any other region.
int64_t whole_block_channels(const Region& r, const Shape& in)
{
    const size_t rank = in.size();
    if (rank < 3) return -1;
    const size_t ca = rank - 3;
    const std::vector<int64_t> dense = nd::dense_strides(in);
    if (r.strides != dense || r.shape[ca] == 0 || r.offset % dense[ca] != 0) return -1;
    for (size_t a = 0; a < rank; ++a)
        if (a != ca && r.shape[a] != in[a]) return -1;
    const int64_t c0 = r.offset / dense[ca], block = channel_block();
    if (c0 % block != 0 || (r.shape[ca] % block != 0 && c0 + r.shape[ca] != in[ca])) return -1;
    return c0;
}

// A crop of whole channel blocks, on blocked tensors: the same region over
// the stored shapes (block rows and every lane).
struct CropState : OpState {
    Region stored;
};

class Crop : public Op, public MovesElements {
public:
    enum class Mode { Numpy, Expression, Offset, Reference, Roi, OnnxSlice };

    void load_param(const ParamDict& pd) override
    {
        if (pd.get_int(22, 0) == 1) {
            mode_ = Mode::OnnxSlice;
            dynamic_ = pd.get_int(23, 0) != 0;
            return;
        }
        off_[W] = pd.get_int(0, 0), off_[H] = pd.get_int(1, 0), off_[D] = pd.get_int(13, 0), off_[C] = pd.get_int(2, 0);
        out_[W] = pd.get_int(3, 0), out_[H] = pd.get_int(4, 0), out_[D] = pd.get_int(14, 0), out_[C] = pd.get_int(5, 0);
        off2_[W] = pd.get_int(6, 0), off2_[H] = pd.get_int(7, 0), off2_[D] = pd.get_int(15, 0),
        off2_[C] = pd.get_int(8, 0);
        starts_ = pd.get_ints(9);
        ends_ = pd.get_ints(10);
        axes_ = pd.get_ints(11);
        const std::string se = pd.get_string(19, ""), ee = pd.get_string(20, ""), ae = pd.get_string(21, "");
        check(starts_.empty() == ends_.empty(), "param 9 (starts) and 10 (ends) must be given together");
        check(axes_.empty() || !starts_.empty(), "param 11 (axes) needs 9 (starts) and 10 (ends)");
        check(se.empty() == ee.empty(), "param 19 (starts_expr) and 20 (ends_expr) must be given together");
        check(ae.empty() || !se.empty(), "param 21 (axes_expr) needs 19 (starts_expr) and 20 (ends_expr)");
        inputs_ = 1;
        if (!se.empty()) {
            starts_expr_ = Expression::parse(se);
            ends_expr_ = Expression::parse(ee);
            if (!ae.empty()) axes_expr_ = Expression::parse(ae);
            mode_ = Mode::Expression;
            inputs_ = std::max({1, starts_expr_.blob_count(), ends_expr_.blob_count(), axes_expr_.blob_count()});
        } else if (!starts_.empty()) {
            mode_ = Mode::Numpy;
        } else if (std::any_of(out_, out_ + 4, [](int v) { return v != 0; }) ||
                   std::any_of(off2_, off2_ + 4, [](int v) { return v != 0; })) {
            mode_ = Mode::Offset;
            static const int kOutId[4] = {3, 4, 14, 5}, kOff2Id[4] = {6, 7, 15, 8};
            for (int i = 0; i < 4; ++i) {
                check(out_[i] >= 0 || out_[i] == kOpen, "out", kAxisName[i], " (param ", kOutId[i],
                      ") must be >= 0 or -233, got ", out_[i]);
                check(off2_[i] >= 0, "far-end offset (param ", kOff2Id[i], ") must be >= 0, got ", off2_[i]);
            }
        } else {
            mode_ = off_[W] == kOpen ? Mode::Roi : Mode::Reference;
            inputs_ = 2;
        }
        if (mode_ == Mode::Offset || mode_ == Mode::Reference) {
            static const int kOffId[4] = {0, 1, 13, 2};
            for (int i = 0; i < 4; ++i)
                check(off_[i] >= 0, "offset (param ", kOffId[i], ") must be >= 0, got ", off_[i]);
        }
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        if (mode_ == Mode::OnnxSlice)
            expect_input_count(in, 3, 5);
        else if (mode_ == Mode::Expression)
            expect_expression_inputs(in, inputs_);
        else
            expect_input_count(in, inputs_, inputs_);
        expect_output_count(out, 1);
        std::vector<Tensor> values;
        for (size_t i = 1; i < in.size(); ++i) values.push_back(in[i].value);
        if (!output_shapes_known(in)) {
            // Known only when running: a placeholder (roi: bounded by the input), forward() gives the shape.
            out[0] = TensorDesc(in[0].shape, in[0].dtype);
            if (mode_ == Mode::Roi) out[0].shape = shape_of_box(full_box(ncnn_dims(in[0].shape)), static_cast<int>(in[0].shape.size()));
            return;
        }
        std::vector<Shape> shapes;
        for (const auto& d : in) shapes.push_back(d.shape);
        if (mode_ == Mode::OnnxSlice) {
            static const char* const names[] = {"", "starts (input 1)", "ends (input 2)", "axes (input 3)", "steps (input 4)"};
            for (size_t i = 1; i < in.size(); ++i) nd::known_value(in[i], names[i]);
        }
        out[0] = TensorDesc(region(shapes, values).shape, in[0].dtype);
    }

    // Channel crops of whole blocks take blocked input and output; the other
    // inputs (shape references, slice parameters) stay plain.
    BlockedLayouts blocked_layouts(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&, bool) const override
    {
        if (dynamic_output_shape() || !output_shapes_known(in) || in[0].dtype != DType::F32) return {};
        std::vector<Shape> shapes;
        std::vector<Tensor> values;
        for (size_t i = 0; i < in.size(); ++i) {
            shapes.push_back(in[i].shape);
            if (i > 0) values.push_back(in[i].value);
        }
        if (whole_block_channels(region(shapes, values), in[0].shape) < 0) return {};
        BlockedLayouts layouts{std::vector<int>(in.size(), -1), {0}};
        layouts.inputs[0] = 0;
        return layouts;
    }

    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                                     PrepareContext&) const override
    {
        if (in[0].layout != Layout::ChannelBlocks) return nullptr;
        std::vector<Shape> shapes;
        std::vector<Tensor> values;
        for (size_t i = 0; i < in.size(); ++i) {
            shapes.push_back(in[i].shape);
            if (i > 0) values.push_back(in[i].value);
        }
        const int64_t c0 = whole_block_channels(region(shapes, values), in[0].shape);
        check(c0 >= 0, "internal: a blocked crop that is not of whole channel blocks");
        auto st = std::make_unique<CropState>();
        const Shape stored_in = stored_shape(in[0].shape, Layout::ChannelBlocks);
        st->stored.shape = stored_shape(out[0].shape, Layout::ChannelBlocks);
        st->stored.strides = nd::dense_strides(stored_in);
        st->stored.offset = c0 / channel_block() * st->stored.strides[in[0].shape.size() - 3];
        return st;
    }

    bool dynamic_output_shape() const override { return mode_ == Mode::Roi || (mode_ == Mode::OnnxSlice && dynamic_); }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override
    {
        if (mode_ == Mode::Roi) return nd::values_known(in, 1, 2);
        return mode_ != Mode::OnnxSlice || !dynamic_ || nd::values_known(in, 1);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        if (ctx.state()) {
            const Region& r = ctx.state_as<CropState>().stored;
            nd::strided_copy(in[0].raw(), r.offset, r.shape, r.strides, out[0].raw(), sizeof(float), &ctx);
            return;
        }
        std::vector<Shape> shapes;
        for (const auto& t : in) shapes.push_back(t.shape());
        const Region r = region(shapes, std::vector<Tensor>(in.begin() + 1, in.end()));
        if (out[0].shape() != r.shape) {
            check(dynamic_output_shape(), "output has shape ", shape_str(out[0].shape()), ", expected ", shape_str(r.shape));
            out[0] = Tensor(r.shape, in[0].dtype());
        }
        nd::strided_copy(in[0].raw(), r.offset, r.shape, r.strides, out[0].raw(), dtype_size(in[0].dtype()), &ctx);
    }

    // The region, copied whole.
    bool element_moves(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                       ElementMoves& moves) const override
    {
        if (!output_shapes_known(in)) return false;
        std::vector<Shape> shapes;
        std::vector<Tensor> values;
        for (size_t i = 0; i < in.size(); ++i) {
            shapes.push_back(in[i].shape);
            if (i > 0) values.push_back(in[i].value);
        }
        const Region r = region(shapes, values);
        moves.copies.push_back(StridedCopy{0, 0, r.offset, 0, r.shape, r.strides, nd::dense_strides(r.shape)});
        return true;
    }

private:
    // The region for these input shapes and the other inputs' values (the
    // roi, or ONNX's starts, ends, axes, steps).
    Region region(const std::vector<Shape>& shapes, const std::vector<Tensor>& values) const
    {
        if (mode_ == Mode::OnnxSlice) return onnx_slice_region(shapes[0], values);
        return region_of_box(resolve(shapes, mode_ == Mode::Roi ? &values[0] : nullptr), shapes[0]);
    }

    // The box for these input shapes (and ROI tensor, in roi mode); validated.
    Box resolve(const std::vector<Shape>& shapes, const Tensor* roi) const
    {
        const NcnnDims n = ncnn_dims(shapes[0]);
        Box b = full_box(n);
        switch (mode_) {
        case Mode::Numpy: b = numpy_box(n, starts_, ends_, axes_); break;
        case Mode::Expression:
            b = numpy_box(n, starts_expr_.eval_list(shapes), ends_expr_.eval_list(shapes), axes_expr_.eval_list(shapes));
            break;
        case Mode::Offset: {
            const int64_t size[4] = {n.w, n.h, n.d, n.c};
            // Axes the rank has (rank 3 has no d).
            for (int k = 0; k < n.dims; ++k) {
                const int s = slot_of(n.dims, k);
                b.off[s] = off_[s];
                b.len[s] = size[s] - off_[s] - off2_[s];
                if (out_[s] != kOpen) b.len[s] = std::min<int64_t>(out_[s], b.len[s]);
                static const int kOutId[4] = {3, 4, 14, 5};
                check(b.len[s] != 0 || out_[s] != 0, "crop size on axis ", kAxisName[s], " is 0 because out",
                      kAxisName[s], " (param ", kOutId[s], ") is 0 (its default); use -233 for \"up to the end\"");
            }
            break;
        }
        case Mode::Reference: {
            const NcnnDims r = ncnn_dims(shapes[1]);
            const int64_t ref[4] = {r.w, r.h, r.d, r.dims == n.dims ? r.c : n.c};
            for (int k = 0; k < n.dims; ++k) {
                const int s = slot_of(n.dims, k);
                b.off[s] = off_[s];
                b.len[s] = ref[s];
            }
            break;
        }
        case Mode::Roi: b = roi_box(n, roi_values(*roi)); break;
        case Mode::OnnxSlice: break; // not a box
        }
        check_box(b, n);
        return b;
    }

    Mode mode_ = Mode::Reference;
    size_t inputs_ = 2;
    bool dynamic_ = false; // slice mode: values known only at run time are accepted
    int off_[4] = {0, 0, 0, 0}, out_[4] = {0, 0, 0, 0}, off2_[4] = {0, 0, 0, 0};
    std::vector<int> starts_, ends_, axes_;
    Expression starts_expr_, ends_expr_, axes_expr_;
};

} // namespace

std::unique_ptr<Op> make_crop() { return std::make_unique<Crop>(); }

} // namespace kestrel
