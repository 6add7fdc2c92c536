// The compute shaders (shaders/*.comp) as SPIR-V, compiled by glslc at build
// time and embedded (the generated vulkan_shaders.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace kestrel::vulkan {

struct Spirv {
    const uint32_t* data;
    size_t words;
};
// Shader `name` (its file name without .comp; NAME_fp16: its variant storing
// tensors as float16, see shaders/storage.glsl); throws when there is none.
Spirv spirv_of(const std::string& name);
bool has_spirv(const std::string& name);

} // namespace kestrel::vulkan
