// The recurrent family. Recurrent layers: RNN, GRU and LSTM with ONNX semantics.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_rnn();
std::unique_ptr<Op> make_gru();
std::unique_ptr<Op> make_lstm();

std::vector<BuiltinOp> recurrent_family()
{
    return {
        {"RNN", make_rnn},
        {"GRU", make_gru},
        {"LSTM", make_lstm},
    };
}

} // namespace kestrel
