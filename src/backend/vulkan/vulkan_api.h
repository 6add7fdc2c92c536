// The Vulkan functions the backend calls, loaded at run time from the system's
// loader (libvulkan.so.1): the library links no Vulkan library, so it loads
// and runs on machines without one (the backend then reports no device).
#pragma once
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

namespace kestrel::vulkan {

#define KESTREL_VK_INSTANCE_FUNCTIONS(X)                                                                               \
    X(vkDestroyInstance)                                                                                               \
    X(vkEnumeratePhysicalDevices)                                                                                      \
    X(vkGetPhysicalDeviceProperties)                                                                                   \
    X(vkGetPhysicalDeviceQueueFamilyProperties)                                                                        \
    X(vkGetPhysicalDeviceMemoryProperties)                                                                             \
    X(vkGetPhysicalDeviceFeatures2)                                                                                    \
    X(vkCreateDevice)                                                                                                  \
    X(vkGetDeviceProcAddr)

#define KESTREL_VK_DEVICE_FUNCTIONS(X)                                                                                 \
    X(vkDestroyDevice)                                                                                                 \
    X(vkGetDeviceQueue)                                                                                                \
    X(vkCreateBuffer)                                                                                                  \
    X(vkDestroyBuffer)                                                                                                 \
    X(vkGetBufferMemoryRequirements)                                                                                   \
    X(vkAllocateMemory)                                                                                                \
    X(vkFreeMemory)                                                                                                    \
    X(vkBindBufferMemory)                                                                                              \
    X(vkMapMemory)                                                                                                     \
    X(vkUnmapMemory)                                                                                                   \
    X(vkCreateShaderModule)                                                                                            \
    X(vkDestroyShaderModule)                                                                                           \
    X(vkCreateDescriptorSetLayout)                                                                                     \
    X(vkDestroyDescriptorSetLayout)                                                                                    \
    X(vkCreatePipelineLayout)                                                                                          \
    X(vkDestroyPipelineLayout)                                                                                         \
    X(vkCreateComputePipelines)                                                                                        \
    X(vkDestroyPipeline)                                                                                               \
    X(vkCreateDescriptorPool)                                                                                          \
    X(vkDestroyDescriptorPool)                                                                                         \
    X(vkResetDescriptorPool)                                                                                           \
    X(vkAllocateDescriptorSets)                                                                                        \
    X(vkUpdateDescriptorSets)                                                                                          \
    X(vkCreateCommandPool)                                                                                             \
    X(vkDestroyCommandPool)                                                                                            \
    X(vkAllocateCommandBuffers)                                                                                        \
    X(vkResetCommandBuffer)                                                                                            \
    X(vkBeginCommandBuffer)                                                                                            \
    X(vkEndCommandBuffer)                                                                                              \
    X(vkCmdBindPipeline)                                                                                               \
    X(vkCmdBindDescriptorSets)                                                                                         \
    X(vkCmdPushConstants)                                                                                              \
    X(vkCmdDispatch)                                                                                                   \
    X(vkCmdPipelineBarrier)                                                                                            \
    X(vkCmdWriteTimestamp)                                                                                             \
    X(vkCmdResetQueryPool)                                                                                             \
    X(vkCreateQueryPool)                                                                                               \
    X(vkDestroyQueryPool)                                                                                              \
    X(vkGetQueryPoolResults)                                                                                           \
    X(vkCreateFence)                                                                                                   \
    X(vkDestroyFence)                                                                                                  \
    X(vkResetFences)                                                                                                   \
    X(vkWaitForFences)                                                                                                 \
    X(vkQueueSubmit)

// Function pointers: the loader's own three, then per instance and per device.
struct Api {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
    PFN_vkCreateInstance vkCreateInstance = nullptr;
    PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;
#define KESTREL_VK_DECLARE(name) PFN_##name name = nullptr;
    KESTREL_VK_INSTANCE_FUNCTIONS(KESTREL_VK_DECLARE)
    KESTREL_VK_DEVICE_FUNCTIONS(KESTREL_VK_DECLARE)
#undef KESTREL_VK_DECLARE
};

// The loader's entry points, or an empty string's worth of reason why not
// (no libvulkan.so.1 on this machine). Loaded once per process.
const Api* load_loader(std::string* why_not);
void load_instance_functions(Api& api, VkInstance instance);
void load_device_functions(Api& api, VkDevice device);

} // namespace kestrel::vulkan
