// The recurrent family. Recurrent layers: RNN, GRU and LSTM with ONNX semantics.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_nd_rnn();
std::unique_ptr<Op> make_nd_gru();
std::unique_ptr<Op> make_nd_lstm();

std::vector<BuiltinOp> recurrent_family()
{
    return {
        {"RNNND", make_nd_rnn},
        {"GRUND", make_nd_gru},
        {"LSTMND", make_nd_lstm},
    };
}

} // namespace kestrel
