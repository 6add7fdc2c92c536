// Host tensors to and from device buffers (mapped host-visible memory).
#include <cstring>

#include "backend/vulkan/gpu_kernel.h"
#include "kestrel/error.h"

namespace kestrel::vulkan {

void upload(const Tensor& t, Buffer& b)
{
    check(t.nbytes() <= b.bytes(), "upload of ", t.nbytes(), " bytes into a buffer of ", b.bytes());
    if (t.nbytes()) std::memcpy(b.data(), t.raw(), t.nbytes());
}

void download(const Buffer& b, Tensor& t)
{
    check(t.nbytes() <= b.bytes(), "download of ", t.nbytes(), " bytes from a buffer of ", b.bytes());
    if (t.nbytes()) std::memcpy(t.raw(), b.data(), t.nbytes());
}

} // namespace kestrel::vulkan
