// The non-virtual parts of the Op interface (include/kestrel/op.h): scratch
// requests and lookups, stored shapes of layouts, and running one op outside
// a Session.
#include "kestrel/op.h"

#include "kernels/depthwise_conv2d.h"

namespace kestrel {

Shape stored_shape(const Shape& shape, Layout layout)
{
    if (layout == Layout::Plain) return shape;
    check(shape.size() >= 3, "internal: channel blocks need a [..., C, H, W] shape, got ", shape_str(shape));
    const int64_t block = channel_block();
    Shape s = shape;
    int64_t& channels = s[s.size() - 3];
    channels = (channels + block - 1) / block;
    s.push_back(block);
    return s;
}

int PrepareContext::request_scratch(int64_t bytes)
{
    check(bytes >= 0, "internal: negative scratch request (", bytes, " bytes)");
    scratch_bytes_.push_back(bytes);
    return static_cast<int>(scratch_bytes_.size()) - 1;
}

void* ExecContext::scratch(int index) const
{
    check(scratch_ != nullptr && index >= 0 && static_cast<size_t>(index) < scratch_->size(),
          "internal: scratch buffer ", index, " was not requested in prepare()");
    return (*scratch_)[static_cast<size_t>(index)];
}

void Op::run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, const ExecContext& ctx) const
{
    std::vector<TensorDesc> in, out;
    for (const Tensor& t : inputs) in.emplace_back(t.shape(), t.dtype(), t);
    for (const Tensor& t : outputs) out.emplace_back(t.shape(), t.dtype());
    PrepareContext prep(ctx.threads());
    const std::unique_ptr<OpState> state = prepare(in, out, prep);
    std::vector<Tensor> buffers;
    std::vector<void*> scratch;
    for (int64_t bytes : prep.scratch_bytes()) {
        buffers.emplace_back(Shape{bytes}, DType::U8);
        scratch.push_back(buffers.back().raw());
    }
    forward(inputs, outputs, ctx.with(state.get(), &scratch));
}

} // namespace kestrel
