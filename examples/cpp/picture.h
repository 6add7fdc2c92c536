// The examples' picture reader: a PNG, JPEG, BMP, ... file as RGB pixels
// (height, width, 3), decoded with stb_image (Debian's libstb-dev).
#pragma once
#include <algorithm>
#include <string>

#include <stb_image.h>

#include "kestrel/kestrel.h"

inline kestrel::Tensor read_picture(const std::string& path)
{
    int w = 0, h = 0, n = 0;
    unsigned char* data = stbi_load(path.c_str(), &w, &h, &n, 3);
    if (!data) kestrel::fail(path, ": cannot read the picture (", stbi_failure_reason(), ")");
    kestrel::Tensor rgb({h, w, 3}, kestrel::DType::U8);
    std::copy_n(data, rgb.nbytes(), rgb.data<uint8_t>());
    stbi_image_free(data);
    return rgb;
}
