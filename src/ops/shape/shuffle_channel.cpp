// ShuffleChannel (ncnn): 0=group (default 1, > 0), 1=reverse (default 0).
// Channels (ncnn c: axis 0 of ranks 3-4; ranks 1-2 have one channel) must
// divide by group. With reverse the group becomes c / group. Output channel
// g*j + i is input channel cpg*i + j (g = group used, cpg = c / g, i < g, j < cpg).
// Any dtype: whole channels are copied as bytes.
#include <cstring>

#include "ops/registry.h"
#include "ops/common/element_moves.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

class ShuffleChannel : public Op, public MovesElements {
public:
    void load_param(const ParamDict& pd) override
    {
        group_ = positive_param(pd, 0, 1, "group");
        reverse_ = pd.get_int(1, 0) != 0;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        const NcnnDims n = ncnn_dims(in[0].shape);
        check(n.c % group_ == 0, "channels ", n.c, " do not divide by group (param 0) ", group_);
        out[0] = in[0];
        out[0].value = Tensor();
    }

    // Output channel g*j + i (j < cpg, i < g) from input channel cpg*i + j:
    // the output as dense (cpg, g, plane) reads the input's (g, cpg, plane)
    // with the first two axes swapped.
    bool element_moves(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                       ElementMoves& moves) const override
    {
        const NcnnDims n = ncnn_dims(in[0].shape);
        const int64_t g = groups(n.c), cpg = n.c / g, plane = n.w * n.h * n.d;
        StridedCopy c = dense_copy(0, 0, {cpg, g, plane});
        c.in_strides = {plane, cpg * plane, 1};
        moves.copies.push_back(std::move(c));
        return true;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const NcnnDims n = ncnn_dims(in[0].shape());
        const int64_t g = groups(n.c);
        const int64_t cpg = n.c / g;
        const size_t channel = static_cast<size_t>(n.w * n.h * n.d) * dtype_size(in[0].dtype());
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        uint8_t* dst = static_cast<uint8_t*>(out[0].raw());
        ctx.parallel_for(n.c, [&](int64_t begin, int64_t end) {
            for (int64_t src_q = begin; src_q < end; ++src_q) {
                const int64_t i = src_q / cpg, j = src_q % cpg;
                std::memcpy(dst + static_cast<size_t>(g * j + i) * channel, src + static_cast<size_t>(src_q) * channel,
                            channel);
            }
        });
    }

private:
    // The group count used: `group`, or with reverse channels / group.
    int64_t groups(int64_t channels) const { return reverse_ ? channels / group_ : group_; }

    int group_ = 1;
    bool reverse_ = false;
};

} // namespace

std::unique_ptr<Op> make_shuffle_channel() { return std::make_unique<ShuffleChannel>(); }

} // namespace kestrel
