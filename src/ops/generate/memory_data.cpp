// MemoryData (ncnn): a constant read from the .bin. Params 0=w 1=h 11=d 2=c give
// the shape by the highest nonzero one: d -> (c,d,h,w), else c -> (c,h,w), else
// h -> (h,w), else w -> (w); all zero -> one element (ncnn leaves it
// uninitialized; ours is 0). 21=load_type: 1 raw fp32 (default), 0 tagged
// (fp32/fp16 come out as F32, int8-tagged data as I8). No inputs, one output.
#include <cstring>

#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class MemoryData : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        const int w = pd.get_int(0, 0), h = pd.get_int(1, 0), d = pd.get_int(11, 0), c = pd.get_int(2, 0);
        load_type_ = pd.get_int(21, 1);
        check(load_type_ == 0 || load_type_ == 1, "load_type (param 21) must be 0 (tagged) or 1 (raw), got ",
              load_type_);
        const int dims = d != 0 ? 4 : c != 0 ? 3 : h != 0 ? 2 : w != 0 ? 1 : 0;
        // Every dim the rank uses must be positive.
        static const int kIds[4] = {0, 1, 11, 2};
        const int values[4] = {w, h, d, c};
        static const int kUsed[5][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {1, 1, 0, 0}, {1, 1, 0, 1}, {1, 1, 1, 1}};
        for (int i = 0; i < 4; ++i) {
            check(values[i] >= 0, "param ", kIds[i], " must be >= 0, got ", values[i]);
            check(!kUsed[dims][i] || values[i] > 0, "param ", kIds[i], " must be > 0 for a rank ", dims,
                  " MemoryData, got ", values[i]);
        }
        shape_ = dims == 0 ? Shape{1} : shape_from_ncnn(dims, w, h, d, c);
        from_file_ = dims != 0;
        data_ = from_file_ ? Tensor() : Tensor::zeros(shape_, DType::F32);
    }

    void load_model(WeightReader& wr) override
    {
        if (!from_file_) return;
        const int64_t count = shape_numel(shape_);
        Tensor t = wr.load(count, load_type_ == 0 ? WeightEncoding::Tagged : WeightEncoding::Raw);
        check(t.numel() == count, "read ", t.numel(), " values, expected ", count);
        data_ = t.reshaped(shape_);
    }

    int64_t weight_bytes() const override { return from_file_ && data_.defined() ? static_cast<int64_t>(data_.nbytes()) : 0; }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 0, 0);
        expect_output_count(out, 1);
        check(data_.defined(), "weights are not loaded");
        out[0] = TensorDesc{};
        out[0].shape = data_.shape();
        out[0].dtype = data_.dtype();
    }

    // The runtime shares this tensor instead of calling forward (ncnn clones it).
    Tensor constant_value() const override { return data_; }

    void forward(const std::vector<Tensor>&, std::vector<Tensor>& out, const ExecContext&) const override
    {
        check(out[0].nbytes() == data_.nbytes() && out[0].dtype() == data_.dtype(), "output buffer does not match the data");
        if (data_.nbytes()) std::memcpy(out[0].raw(), data_.raw(), data_.nbytes());
    }

private:
    Shape shape_;
    int load_type_ = 1;
    bool from_file_ = false;
    Tensor data_;
};

} // namespace

std::unique_ptr<Op> make_memory_data() { return std::make_unique<MemoryData>(); }

} // namespace kestrel
