#include "ops/quant/onnx_form.h"

#include <algorithm>

#include "kernels/int8_gemm.h"
#include "kestrel/error.h"

namespace kestrel {

void OnnxQuantizedForm::load_param(const ParamDict& pd)
{
    on = pd.get_int(25, 0) != 0;
    if (!on) return;
    x_uint8 = pd.get_int(27, 0) != 0;
    const int y_type = pd.get_int(29, 0);
    check(y_type >= 0 && y_type <= 2, "the output type (param 29) must be 0 (int8), 1 (uint8) or 2 (int32), got ",
          y_type);
    y_uint8 = y_type == 1;
    y_int32 = y_type == 2;
    const int x = pd.get_int(26, 0), y = pd.get_int(28, 0);
    check(x_uint8 ? x >= 0 && x <= 255 : x >= -128 && x <= 127,
          "the input zero point (param 26) is out of the input type's range: ", x);
    check(y_int32 || (y_uint8 ? y >= 0 && y <= 255 : y >= -128 && y <= 127),
          "the output zero point (param 28) is out of the output type's range: ", y);
    x_zero = x_uint8 ? x - 128 : x;
    y_zero = y;
    bias = pd.get_int(30, 0) != 0;
}

void OnnxQuantizedForm::load_requantization(WeightReader& wr, const Int8Scales& scales, const int8_t* weights,
                                            int64_t outputs, int64_t per)
{
    std::vector<int32_t> b(static_cast<size_t>(outputs), 0);
    if (bias) {
        const Tensor t = wr.load_typed({outputs}, DType::I32);
        std::copy(t.data<int32_t>(), t.data<int32_t>() + outputs, b.begin());
    }
    const std::vector<int64_t> sums = int8_gemm_row_sums(weights, outputs, per, per);
    scale.resize(static_cast<size_t>(outputs));
    offset.resize(static_cast<size_t>(outputs));
    for (size_t o = 0; o < scale.size(); ++o) {
        scale[o] = scales.bottom * scales.weight[o] / scales.top;
        offset[o] = static_cast<int32_t>(static_cast<uint32_t>(b[o]) -
                                         static_cast<uint32_t>(static_cast<int64_t>(x_zero) * sums[o]));
    }
}

} // namespace kestrel
