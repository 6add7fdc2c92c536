// The signal family. Signal processing: the Hann, Hamming and Blackman windows.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_nd_hann_window();
std::unique_ptr<Op> make_nd_hamming_window();
std::unique_ptr<Op> make_nd_blackman_window();

std::vector<BuiltinOp> signal_family()
{
    return {
        {"HannWindow", make_nd_hann_window},
        {"HammingWindow", make_nd_hamming_window},
        {"BlackmanWindow", make_nd_blackman_window},
    };
}

} // namespace kestrel
