#pragma once
#include <cstdint>

namespace kestrel {

// Choices fixed when a Net loads a model (Net::set_load_options, before
// load_param; winograd and keep_loaded_weights may change until load_model).
struct LoadOptions {
    // Fuse layers into a convolution when nothing else reads the blob between
    // them, with the same bits: an activation (ReLU, Clip, Mish, HardSwish,
    // Swish) into the Convolution or InnerProduct before it, a constant
    // Padding of rows and columns into the convolution after it (its pads
    // added to the convolution's), an Eltwise sum of a convolution's output
    // and another blob into the convolution (a residual input added before
    // its activation: ResNet's blocks). One pass over the data instead of two;
    // the blob between is then gone (get() of it fails). Net::optimize does
    // this and more on a loaded model.
    bool fuse_layers = false;
    // With fuse_layers (and in Net::optimize and the ONNX import): fuse a
    // residual sum into the convolution before it. Off, the sums stay layers
    // of their own, as ncnn's format has them (int8 convolutions take no
    // residual input, so `kestrel quantize` loads models this way).
    bool fuse_residuals = true;
    // 3x3 stride-1 convolutions by Winograd's minimal filtering (F(4,3), or
    // F(6,3) for wide layers): 2-4x fewer multiplications, and a transformed
    // copy of those weights 4-7x their size in place of the packed one. The
    // results differ from the direct sum by rounding (about 1e-6 of the output's
    // scale), so turn it off for outputs bit-identical to the direct kernels.
    bool winograd = true;
    // Keep the graph's copy of the weights as loaded (save_model and optimize
    // need it). Off: each layer's copy is dropped as soon as the layer has
    // taken what it computes with, so the loaded and packed forms of all the
    // weights never take memory together (Net::release_weights after loading
    // frees the same memory, but only after the peak).
    bool keep_loaded_weights = true;
    // InnerProduct keeps its float weights as IEEE half floats (converted back
    // as they are read; the sums stay float): half the memory, and nearly half
    // the time of the large fully connected layers, which stream their weights
    // from memory on every run (VGG's fc6 is 400 MB in float). Each weight is
    // rounded to 11 significant bits, so outputs move by about 1e-3 of their
    // scale; ncnn does the same by default (Option::use_fp16_storage).
    bool fp16_weights = false;
};

struct Options {
    // Threads a session may use (the process-wide pool is bounded by the core count).
    int threads = 1;
    // Reuse intermediate buffers across layers (off: every blob gets its own buffer,
    // useful when inspecting many blobs with callbacks).
    bool reuse_memory = true;
    // Store activations between layers that take it in channel blocks
    // (Layout::ChannelBlocks: ncnn's and ONNX Runtime's packed layout), where
    // convolutions chain without transposing their inputs and outputs. Off:
    // every blob plain. The caller sees plain tensors either way (callbacks
    // too, unless set with stored layouts).
    bool blocked_layouts = true;
    // Refuse any single tensor or weight larger than this, before allocating.
    int64_t max_tensor_bytes = int64_t(4) << 30;
    // Refuse a run whose planned activation memory exceeds this.
    int64_t max_arena_bytes = int64_t(16) << 30;
    // Arithmetic of the GEMM-heavy layers. BF16: convolutions (several
    // output channels per group, static weights) multiply bfloat16 weights
    // and inputs (rounded to 8 significant bits) with fp32 sums, on CPUs with
    // bfloat16 dot products (AMX-BF16 or AVX512-BF16; elsewhere fp32 runs);
    // every other layer and every blob between layers stays fp32. Outputs
    // move by about 1e-2 of their scale (docs/precision.md).
    enum class Precision { F32, BF16 } precision = Precision::F32;
    // Where layers run. Vulkan: on GPU `device` (0: the first Vulkan device)
    // where the backend has the layer, on the CPU otherwise (per layer);
    // blobs are kept plain (no channel blocks) then.
    enum class Backend { CPU, Vulkan } backend = Backend::CPU;
    int device = 0;
    // Vulkan: GPU layers store the float32 tensors they read and write as
    // float16 where the device has 16-bit storage (every layer but the
    // detection layers; tensors cross to the host as float32); arithmetic
    // stays float32. Halves the memory traffic between layers; results move
    // by about 1e-3 of their scale per layer (float16's precision).
    bool fp16_storage = false;
};

} // namespace kestrel
