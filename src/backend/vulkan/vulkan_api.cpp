#include "backend/vulkan/vulkan_api.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace kestrel::vulkan {

const Api* load_loader(std::string* why_not)
{
    static Api api;
    static std::string error;
    static std::once_flag once;
    std::call_once(once, [] {
        void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) lib = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            error = "no Vulkan loader (libvulkan.so.1) on this machine";
            return;
        }
        api.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
        if (!api.vkGetInstanceProcAddr) {
            error = "the Vulkan loader has no vkGetInstanceProcAddr";
            return;
        }
        api.vkCreateInstance =
            reinterpret_cast<PFN_vkCreateInstance>(api.vkGetInstanceProcAddr(nullptr, "vkCreateInstance"));
        api.vkEnumerateInstanceVersion = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
            api.vkGetInstanceProcAddr(nullptr, "vkEnumerateInstanceVersion"));
    });
    if (!error.empty()) {
        if (why_not) *why_not = error;
        return nullptr;
    }
    return &api;
}

void load_instance_functions(Api& api, VkInstance instance)
{
#define KESTREL_VK_LOAD(name) api.name = reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(instance, #name));
    KESTREL_VK_INSTANCE_FUNCTIONS(KESTREL_VK_LOAD)
#undef KESTREL_VK_LOAD
}

void load_device_functions(Api& api, VkDevice device)
{
#define KESTREL_VK_LOAD(name) api.name = reinterpret_cast<PFN_##name>(api.vkGetDeviceProcAddr(device, #name));
    KESTREL_VK_DEVICE_FUNCTIONS(KESTREL_VK_LOAD)
#undef KESTREL_VK_LOAD
}

} // namespace kestrel::vulkan
