// Recurrent nets, NonMaxSuppression, quantization, Einsum, GridSample and
// RoiAlign with ONNX semantics (src/ops/nd_*.cpp), used by the ONNX importer.
#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_nd_rnn();
std::unique_ptr<Op> make_nd_gru();
std::unique_ptr<Op> make_nd_lstm();
std::unique_ptr<Op> make_nd_non_max_suppression();
std::unique_ptr<Op> make_nd_quantize_linear();
std::unique_ptr<Op> make_nd_dequantize_linear();
std::unique_ptr<Op> make_nd_dynamic_quantize_linear();
std::unique_ptr<Op> make_nd_einsum();
std::unique_ptr<Op> make_nd_grid_sample();
std::unique_ptr<Op> make_nd_roi_align();

std::vector<BuiltinOp> seqmisc_ops()
{
    return {
        {"RNNND", make_nd_rnn},
        {"GRUND", make_nd_gru},
        {"LSTMND", make_nd_lstm},
        {"NonMaxSuppression", make_nd_non_max_suppression},
        {"QuantizeLinear", make_nd_quantize_linear},
        {"DequantizeLinear", make_nd_dequantize_linear},
        {"DynamicQuantizeLinear", make_nd_dynamic_quantize_linear},
        {"EinsumND", make_nd_einsum},
        {"GridSampleND", make_nd_grid_sample},
        {"RoiAlign", make_nd_roi_align},
    };
}

} // namespace kestrel
