#include "runtime/device_backend.h"

#include "kestrel/error.h"

namespace kestrel {

#ifdef KESTREL_HAVE_VULKAN
std::shared_ptr<DeviceBackend> make_vulkan_backend(int device, bool fp16_storage);
#endif

std::shared_ptr<DeviceBackend> make_device_backend(const Options& options)
{
    switch (options.backend) {
    case Options::Backend::CPU: return nullptr;
    case Options::Backend::Vulkan:
#ifdef KESTREL_HAVE_VULKAN
        return make_vulkan_backend(options.device, options.fp16_storage);
#else
        fail("this Kestrel was built without the Vulkan backend (it needs libvulkan-dev and glslc at build time)");
#endif
    }
    fail("unknown backend");
}

} // namespace kestrel
