// ONNX softmax-family, loss and small misc layers (src/ops/nd_*.cpp), used by
// the ONNX importer.
#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_nd_log_softmax();
std::unique_ptr<Op> make_nd_hardmax();
std::unique_ptr<Op> make_nd_nll_loss();
std::unique_ptr<Op> make_nd_dropout();
std::unique_ptr<Op> make_nd_hann_window();
std::unique_ptr<Op> make_nd_hamming_window();
std::unique_ptr<Op> make_nd_blackman_window();
std::unique_ptr<Op> make_nd_reverse_sequence();
std::unique_ptr<Op> make_nd_det();
std::unique_ptr<Op> make_nd_unique();

std::vector<BuiltinOp> losses_ops()
{
    return {
        {"LogSoftmax", make_nd_log_softmax},
        {"Hardmax", make_nd_hardmax},
        {"NegativeLogLikelihoodLoss", make_nd_nll_loss},
        {"DropoutND", make_nd_dropout},
        {"HannWindow", make_nd_hann_window},
        {"HammingWindow", make_nd_hamming_window},
        {"BlackmanWindow", make_nd_blackman_window},
        {"ReverseSequence", make_nd_reverse_sequence},
        {"Det", make_nd_det},
        {"Unique", make_nd_unique},
    };
}

} // namespace kestrel
