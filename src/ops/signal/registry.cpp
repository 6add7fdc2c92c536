// The signal family. Signal processing: the Hann, Hamming and Blackman windows (window_functions.h),
// ncnn's Spectrogram and InverseSpectrogram (STFT by direct DFT), ONNX's DFT and STFT (direct sums, dft_sums.h) and
// MelWeightMatrix.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_hann_window();
std::unique_ptr<Op> make_hamming_window();
std::unique_ptr<Op> make_blackman_window();
std::unique_ptr<Op> make_spectrogram();
std::unique_ptr<Op> make_inverse_spectrogram();
std::unique_ptr<Op> make_dft();
std::unique_ptr<Op> make_stft();
std::unique_ptr<Op> make_mel_weight_matrix();

std::vector<BuiltinOp> signal_family()
{
    return {
        {"HannWindow", make_hann_window},
        {"HammingWindow", make_hamming_window},
        {"BlackmanWindow", make_blackman_window},
        {"Spectrogram", make_spectrogram},
        {"InverseSpectrogram", make_inverse_spectrogram},
        {"DFT", make_dft},
        {"STFT", make_stft},
        {"MelWeightMatrix", make_mel_weight_matrix},
    };
}

} // namespace kestrel
