// Element moves as data (element_moves.h) and their plain reference run.
#include "ops/common/element_moves.h"

#include <cstring>

#include "kestrel/error.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

bool element_moves_of(const Op& op, const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                      ElementMoves& moves)
{
    const auto* mover = dynamic_cast<const MovesElements*>(&op);
    return mover != nullptr && mover->element_moves(in, out, moves);
}

StridedCopy dense_copy(size_t input, size_t output, const Shape& dims, int64_t in_offset, int64_t out_offset)
{
    const std::vector<int64_t> strides = nd::dense_strides(dims);
    return StridedCopy{input, output, in_offset, out_offset, dims, strides, strides};
}

namespace {

// Calls visit(in_offset, out_offset) for every index within dims, row-major.
template <class Visit>
void walk(const Shape& dims, int64_t in_offset, const std::vector<int64_t>& in_strides, int64_t out_offset,
          const std::vector<int64_t>& out_strides, Visit&& visit)
{
    const int64_t count = shape_numel(dims);
    for (int64_t i = 0; i < count; ++i) {
        int64_t rem = i, src = in_offset, dst = out_offset;
        for (size_t k = dims.size(); k-- > 0;) {
            const int64_t c = rem % dims[k];
            rem /= dims[k];
            src += c * in_strides[k];
            dst += c * out_strides[k];
        }
        visit(src, dst);
    }
}

void check_within(int64_t at, const Tensor& t, const char* what)
{
    check(at >= 0 && at < t.numel(), "internal: an element move ", what, " at ", at, " outside ", t.numel(), " elements");
}

} // namespace

void apply_element_moves(const ElementMoves& moves, const std::vector<Tensor>& in, std::vector<Tensor>& out)
{
    for (const ConstantFill& f : moves.fills) {
        Tensor& y = out.at(f.output);
        const size_t es = dtype_size(y.dtype());
        check(f.value.size() == es, "internal: a fill value of ", f.value.size(), " bytes for ", es, "-byte elements");
        walk(f.dims, 0, f.strides, f.offset, f.strides, [&](int64_t, int64_t dst) {
            check_within(dst, y, "writes");
            std::memcpy(static_cast<uint8_t*>(y.raw()) + dst * static_cast<int64_t>(es), f.value.data(), es);
        });
    }
    for (const StridedCopy& c : moves.copies) {
        const Tensor& x = in.at(c.input);
        Tensor& y = out.at(c.output);
        const size_t es = dtype_size(y.dtype());
        check(dtype_size(x.dtype()) == es, "internal: a copy between element sizes");
        walk(c.dims, c.in_offset, c.in_strides, c.out_offset, c.out_strides, [&](int64_t src, int64_t dst) {
            check_within(src, x, "reads");
            check_within(dst, y, "writes");
            std::memcpy(static_cast<uint8_t*>(y.raw()) + dst * static_cast<int64_t>(es),
                        static_cast<const uint8_t*>(x.raw()) + src * static_cast<int64_t>(es), es);
        });
    }
}

} // namespace kestrel
