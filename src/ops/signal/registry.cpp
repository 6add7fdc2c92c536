// The signal family. Signal processing: the Hann, Hamming and Blackman windows.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_hann_window();
std::unique_ptr<Op> make_hamming_window();
std::unique_ptr<Op> make_blackman_window();

std::vector<BuiltinOp> signal_family()
{
    return {
        {"HannWindow", make_hann_window},
        {"HammingWindow", make_hamming_window},
        {"BlackmanWindow", make_blackman_window},
    };
}

} // namespace kestrel
