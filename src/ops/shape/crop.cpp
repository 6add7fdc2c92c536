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
// Every resolved box must lie inside the input with size >= 1 on each axis; ncnn
// reads out of bounds or fails on the boxes we reject. Any dtype: bytes are copied.
#include <algorithm>
#include <cstring>

#include "graph/expression.h"
#include "ops/registry.h"
#include "ops/common/tensor_util.h"
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

class Crop : public Op {
public:
    enum class Mode { Numpy, Expression, Offset, Reference, Roi };

    void load_param(const ParamDict& pd) override
    {
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
        expect_input_count(in, inputs_, inputs_);
        expect_output_count(out, 1);
        std::vector<Shape> shapes;
        for (const auto& d : in) shapes.push_back(d.shape);
        Box b;
        if (mode_ == Mode::Roi && !in[1].value.defined()) {
            // Known only when running: bounded by the input (forward shrinks it).
            b = full_box(ncnn_dims(in[0].shape));
        } else {
            b = resolve(shapes, mode_ == Mode::Roi ? &in[1].value : nullptr);
        }
        out[0] = TensorDesc{};
        out[0].shape = shape_of_box(b, static_cast<int>(in[0].shape.size()));
        out[0].dtype = in[0].dtype;
    }

    bool dynamic_output_shape() const override { return mode_ == Mode::Roi; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1, 2); }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        std::vector<Shape> shapes;
        for (const auto& t : in) shapes.push_back(t.shape());
        const Box b = resolve(shapes, mode_ == Mode::Roi ? &in[1] : nullptr);
        const int rank = in[0].rank();
        const Shape want = shape_of_box(b, rank);
        if (out[0].shape() != want) {
            check(mode_ == Mode::Roi, "output has shape ", shape_str(out[0].shape()), ", expected ", shape_str(want));
            out[0] = Tensor(want, in[0].dtype());
        }
        const NcnnDims n = ncnn_dims(in[0].shape());
        const size_t esize = dtype_size(in[0].dtype());
        const size_t row = static_cast<size_t>(b.len[W]) * esize;
        const int64_t rows = b.len[C] * b.len[D] * b.len[H];
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        uint8_t* dst = static_cast<uint8_t*>(out[0].raw());
        ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                const int64_t y = r % b.len[H], z = (r / b.len[H]) % b.len[D], q = r / (b.len[H] * b.len[D]);
                const int64_t at = (((q + b.off[C]) * n.d + z + b.off[D]) * n.h + y + b.off[H]) * n.w + b.off[W];
                std::memcpy(dst + static_cast<size_t>(r) * row, src + static_cast<size_t>(at) * esize, row);
            }
        });
    }

private:
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
        }
        check_box(b, n);
        return b;
    }

    Mode mode_ = Mode::Reference;
    size_t inputs_ = 2;
    int off_[4] = {0, 0, 0, 0}, out_[4] = {0, 0, 0, 0}, off2_[4] = {0, 0, 0, 0};
    std::vector<int> starts_, ends_, axes_;
    Expression starts_expr_, ends_expr_, axes_expr_;
};

} // namespace

std::unique_ptr<Op> make_crop() { return std::make_unique<Crop>(); }

} // namespace kestrel
