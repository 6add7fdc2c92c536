// One Vulkan compute device: instance, device and queue, buffers the host
// maps, compute pipelines built from the SPIR-V embedded in the library
// (shaders/*.comp, compiled by glslc at build time), and dispatch. Shared by
// every session that runs on it (open() returns the process's one per index);
// dispatches on it are serialized.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/vulkan/vulkan_api.h"

namespace kestrel::vulkan {

// Device memory the host sees (mapped while it lives).
class Buffer {
public:
    Buffer() = default;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer();
    void* data() const { return mapped_; }
    size_t bytes() const { return bytes_; }
    VkBuffer handle() const { return buffer_; }
    // From now on the storage of `other` (which must outlive this buffer's
    // use); this buffer's own storage is released.
    void share(const Buffer& other);

private:
    void release();
    friend class Device;
    const Api* api_ = nullptr;
    VkDevice device_ = VK_NULL_HANDLE;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    void* mapped_ = nullptr;
    size_t bytes_ = 0;
    bool owned_ = true; // false: another buffer's storage (share)
};

// One shader run: `items` invocations of shader `name` (its bindings 0.. the
// buffers, in order; `push` its push constants), in workgroups `local_size`
// wide that loop over the items with a grid stride: as many groups as cover
// them, at most the device's limit.
struct Dispatch {
    std::string shader;
    std::vector<const Buffer*> buffers;
    std::vector<uint8_t> push;
    uint64_t items = 0;
    uint32_t local_size = 256;
};

// A Dispatch whose push constants are the bytes of `push`.
template <class Push>
Dispatch dispatch_of(std::string shader, std::vector<const Buffer*> buffers, const Push& push, uint64_t items,
                     uint32_t local_size = 256)
{
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(&push);
    return Dispatch{std::move(shader), std::move(buffers), std::vector<uint8_t>(bytes, bytes + sizeof push), items,
                    local_size};
}

class Device {
public:
    // The machine's Vulkan devices by name; empty, with the reason in
    // `why_not`, when there is no loader or no device.
    static std::vector<std::string> list(std::string* why_not = nullptr);
    // Device `index` of list(); throws kestrel::Error saying why it cannot.
    static std::shared_ptr<Device> open(int index);
    ~Device();

    const std::string& name() const { return name_; }
    // Whether shaders may store tensors as float16 (16-bit storage buffers).
    bool has_fp16_storage() const { return fp16_storage_; }
    // `bytes` of storage (at least 4), mapped for the host.
    std::unique_ptr<Buffer> buffer(size_t bytes);
    // Shader runs in order, each seeing what the ones before it wrote, in one
    // submission; waits for the last. Returns the time the device spent on
    // them (its timestamps, ms), or -1 when it has no timestamps.
    double run(const std::vector<Dispatch>& steps);
    // run() of one Dispatch.
    double dispatch_items(const std::string& name, const std::vector<const Buffer*>& buffers, const void* push,
                          uint32_t push_bytes, uint64_t items, uint32_t local_size = 256);

private:
    struct Pipeline {
        VkShaderModule module = VK_NULL_HANDLE;
        VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
        VkPipelineLayout layout = VK_NULL_HANDLE;
        VkPipeline pipeline = VK_NULL_HANDLE;
        size_t bindings = 0;
    };
    Device() = default;
    void create(VkPhysicalDevice physical, uint32_t queue_family);
    void create_timestamps(VkPhysicalDevice physical, uint32_t queue_family);
    const Pipeline& pipeline(const std::string& name, size_t bindings, uint32_t push_bytes);
    void record(const Dispatch& d, bool after_another);
    // Submits the recorded commands and waits; the device's ms between the
    // two timestamps around them, or -1 without timestamps.
    double submit_and_wait();

    Api api_;
    VkInstance instance_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    VkCommandPool command_pool_ = VK_NULL_HANDLE;
    VkCommandBuffer commands_ = VK_NULL_HANDLE;
    VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    VkQueryPool timestamps_ = VK_NULL_HANDLE; // two queries around each submission, when the queue has timestamps
    double timestamp_ns_ = 0;                 // nanoseconds per timestamp tick
    uint64_t timestamp_mask_ = 0;             // the valid bits of a timestamp
    uint32_t host_memory_type_ = 0;
    uint32_t max_groups_x_ = 65535;
    bool fp16_storage_ = false;
    std::string name_;
    std::map<std::string, Pipeline> pipelines_;
    std::mutex mutex_;
};

} // namespace kestrel::vulkan
