// How a shader stores the tensors it reads and writes (its X, Y and residual
// buffers; weights and tables stay float32): float32, or in the shader's
// _fp16 variant (built with FP16_STORAGE, run where the device has 16-bit
// storage and Options::fp16_storage asks for it) float16. Arithmetic is
// float32 in both: loads read float(x[i]), stores write act_t(v).
#ifdef FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define act_t float16_t
#define word_t uint16_t
#else
#define act_t float
#define word_t uint
#endif
// word_t: what shaders that only move elements (strided_copy) move: a
// float32 tensor's 32-bit words, or its float16 halves.
