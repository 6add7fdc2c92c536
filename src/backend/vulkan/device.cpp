#include "backend/vulkan/device.h"

#include <algorithm>
#include <cstring>

#include "backend/vulkan/shaders.h"
#include "kestrel/error.h"

namespace kestrel::vulkan {

namespace {

// Dispatches per submission, and storage buffers per shader, the descriptor
// pool holds.
constexpr uint32_t kSetsPerSubmit = 64, kMaxBindings = 8;

// A Vulkan info struct of type `type`, every other member zero.
template <class T> T vk_struct(VkStructureType type)
{
    T v{};
    v.sType = type;
    return v;
}

void vk_check(VkResult r, const char* what)
{
    if (r != VK_SUCCESS) fail("Vulkan: ", what, " failed (VkResult ", static_cast<int>(r), ")");
}

// An instance of Vulkan 1.1 with the loader's functions; null (and `why_not`) when none.
VkInstance create_instance(Api& api, std::string* why_not)
{
    const Api* loader = load_loader(why_not);
    if (!loader) return VK_NULL_HANDLE;
    api = *loader;
    auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
    app.pApplicationName = "kestrel";
    app.apiVersion = VK_API_VERSION_1_1;
    auto info = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
    info.pApplicationInfo = &app;
    VkInstance instance = VK_NULL_HANDLE;
    const VkResult r = api.vkCreateInstance(&info, nullptr, &instance);
    if (r != VK_SUCCESS) {
        if (why_not) *why_not = "cannot create a Vulkan instance (VkResult " + std::to_string(static_cast<int>(r)) + ")";
        return VK_NULL_HANDLE;
    }
    load_instance_functions(api, instance);
    return instance;
}

std::vector<VkPhysicalDevice> physical_devices(const Api& api, VkInstance instance)
{
    uint32_t n = 0;
    api.vkEnumeratePhysicalDevices(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> devices(n);
    if (n) api.vkEnumeratePhysicalDevices(instance, &n, devices.data());
    devices.resize(n);
    return devices;
}

// A queue family that computes; -1 when the device has none.
int compute_family(const Api& api, VkPhysicalDevice d)
{
    uint32_t n = 0;
    api.vkGetPhysicalDeviceQueueFamilyProperties(d, &n, nullptr);
    std::vector<VkQueueFamilyProperties> families(n);
    api.vkGetPhysicalDeviceQueueFamilyProperties(d, &n, families.data());
    for (uint32_t i = 0; i < n; ++i)
        if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return static_cast<int>(i);
    return -1;
}

} // namespace

Buffer::~Buffer() { release(); }

void Buffer::release()
{
    if (!api_ || !owned_) return;
    if (mapped_) api_->vkUnmapMemory(device_, memory_);
    api_->vkDestroyBuffer(device_, buffer_, nullptr);
    api_->vkFreeMemory(device_, memory_, nullptr);
}

void Buffer::share(const Buffer& other)
{
    release();
    api_ = other.api_, device_ = other.device_, buffer_ = other.buffer_, memory_ = other.memory_;
    mapped_ = other.mapped_, bytes_ = other.bytes_;
    owned_ = false;
}

std::vector<std::string> Device::list(std::string* why_not)
{
    Api api;
    const VkInstance instance = create_instance(api, why_not);
    if (!instance) return {};
    std::vector<std::string> names;
    for (VkPhysicalDevice d : physical_devices(api, instance)) {
        VkPhysicalDeviceProperties p;
        api.vkGetPhysicalDeviceProperties(d, &p);
        names.push_back(p.deviceName);
    }
    api.vkDestroyInstance(instance, nullptr);
    if (names.empty() && why_not) *why_not = "the Vulkan loader found no device";
    return names;
}

std::shared_ptr<Device> Device::open(int index)
{
    // Opened once per process and kept: creating a device costs milliseconds, sessions come and go.
    static std::mutex mutex;
    static std::map<int, std::shared_ptr<Device>> open_devices;
    std::lock_guard<std::mutex> lock(mutex);
    if (auto existing = open_devices[index]) return existing;
    std::shared_ptr<Device> device(new Device());
    std::string why_not;
    device->instance_ = create_instance(device->api_, &why_not);
    if (!device->instance_) fail("no Vulkan device: ", why_not);
    const std::vector<VkPhysicalDevice> all = physical_devices(device->api_, device->instance_);
    check(!all.empty(), "no Vulkan device: the Vulkan loader found none");
    check(index >= 0 && index < static_cast<int>(all.size()), "Vulkan device ", index, " does not exist (this machine has ",
          all.size(), ": 0..", all.size() - 1, ")");
    const int family = compute_family(device->api_, all[static_cast<size_t>(index)]);
    check(family >= 0, "Vulkan device ", index, " has no compute queue");
    device->create(all[static_cast<size_t>(index)], static_cast<uint32_t>(family));
    open_devices[index] = device;
    return device;
}

void Device::create(VkPhysicalDevice physical, uint32_t queue_family)
{
    physical_ = physical;
    VkPhysicalDeviceProperties props;
    api_.vkGetPhysicalDeviceProperties(physical, &props);
    name_ = props.deviceName;
    max_groups_x_ = props.limits.maxComputeWorkGroupCount[0];
    VkPhysicalDeviceMemoryProperties memory;
    api_.vkGetPhysicalDeviceMemoryProperties(physical, &memory);
    const VkMemoryPropertyFlags wanted = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    host_memory_type_ = UINT32_MAX;
    for (uint32_t i = 0; i < memory.memoryTypeCount && host_memory_type_ == UINT32_MAX; ++i)
        if ((memory.memoryTypes[i].propertyFlags & wanted) == wanted) host_memory_type_ = i;
    check(host_memory_type_ != UINT32_MAX, "Vulkan device '", name_, "' has no host-visible coherent memory");

    const float priority = 1.f;
    auto queue = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
    queue.queueFamilyIndex = queue_family;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    auto info = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue;
    // 16-bit storage, for shaders that store tensors as float16 (Options::fp16_storage), where the device has it.
    auto storage16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
    if (api_.vkGetPhysicalDeviceFeatures2) {
        auto features = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
        features.pNext = &storage16;
        api_.vkGetPhysicalDeviceFeatures2(physical, &features);
        fp16_storage_ = storage16.storageBuffer16BitAccess == VK_TRUE;
    }
    if (fp16_storage_) {
        storage16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
        storage16.storageBuffer16BitAccess = VK_TRUE;
        info.pNext = &storage16;
    }
    vk_check(api_.vkCreateDevice(physical, &info, nullptr, &device_), "vkCreateDevice");
    load_device_functions(api_, device_);
    api_.vkGetDeviceQueue(device_, queue_family, 0, &queue_);

    auto pool = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = queue_family;
    vk_check(api_.vkCreateCommandPool(device_, &pool, nullptr, &command_pool_), "vkCreateCommandPool");
    auto alloc = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    alloc.commandPool = command_pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    vk_check(api_.vkAllocateCommandBuffers(device_, &alloc, &commands_), "vkAllocateCommandBuffers");

    const VkDescriptorPoolSize sizes{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerSubmit * kMaxBindings};
    auto dpool = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
    dpool.maxSets = kSetsPerSubmit; // one submission in flight: the pool is reset after each
    dpool.poolSizeCount = 1;
    dpool.pPoolSizes = &sizes;
    vk_check(api_.vkCreateDescriptorPool(device_, &dpool, nullptr, &descriptor_pool_), "vkCreateDescriptorPool");
    auto fence = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    vk_check(api_.vkCreateFence(device_, &fence, nullptr, &fence_), "vkCreateFence");
    create_timestamps(physical, queue_family);
}

void Device::create_timestamps(VkPhysicalDevice physical, uint32_t queue_family)
{
    VkPhysicalDeviceProperties props;
    api_.vkGetPhysicalDeviceProperties(physical, &props);
    uint32_t count = 0;
    api_.vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
    std::vector<VkQueueFamilyProperties> families(count);
    api_.vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
    const uint32_t bits = families[queue_family].timestampValidBits;
    if (bits == 0 || props.limits.timestampPeriod <= 0.f) return;
    auto info = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = 2;
    if (api_.vkCreateQueryPool(device_, &info, nullptr, &timestamps_) != VK_SUCCESS) return;
    timestamp_ns_ = props.limits.timestampPeriod;
    timestamp_mask_ = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

Device::~Device()
{
    if (device_) {
        for (auto& kv : pipelines_) {
            api_.vkDestroyPipeline(device_, kv.second.pipeline, nullptr);
            api_.vkDestroyPipelineLayout(device_, kv.second.layout, nullptr);
            api_.vkDestroyDescriptorSetLayout(device_, kv.second.set_layout, nullptr);
            api_.vkDestroyShaderModule(device_, kv.second.module, nullptr);
        }
        if (timestamps_) api_.vkDestroyQueryPool(device_, timestamps_, nullptr);
        api_.vkDestroyFence(device_, fence_, nullptr);
        api_.vkDestroyDescriptorPool(device_, descriptor_pool_, nullptr);
        api_.vkDestroyCommandPool(device_, command_pool_, nullptr);
        api_.vkDestroyDevice(device_, nullptr);
    }
    if (instance_) api_.vkDestroyInstance(instance_, nullptr);
}

std::unique_ptr<Buffer> Device::buffer(size_t bytes)
{
    auto b = std::make_unique<Buffer>();
    b->bytes_ = bytes;
    auto info = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
    info.size = std::max<size_t>(bytes, 4);
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    vk_check(api_.vkCreateBuffer(device_, &info, nullptr, &b->buffer_), "vkCreateBuffer");
    b->api_ = &api_;
    b->device_ = device_;
    VkMemoryRequirements req;
    api_.vkGetBufferMemoryRequirements(device_, b->buffer_, &req);
    check((req.memoryTypeBits >> host_memory_type_) & 1u, "Vulkan: a buffer cannot live in host-visible memory");
    auto alloc = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = host_memory_type_;
    vk_check(api_.vkAllocateMemory(device_, &alloc, nullptr, &b->memory_), "vkAllocateMemory");
    vk_check(api_.vkBindBufferMemory(device_, b->buffer_, b->memory_, 0), "vkBindBufferMemory");
    vk_check(api_.vkMapMemory(device_, b->memory_, 0, VK_WHOLE_SIZE, 0, &b->mapped_), "vkMapMemory");
    return b;
}

const Device::Pipeline& Device::pipeline(const std::string& name, size_t bindings, uint32_t push_bytes)
{
    auto it = pipelines_.find(name);
    if (it != pipelines_.end()) return it->second;
    const Spirv code = spirv_of(name);
    Pipeline p;
    p.bindings = bindings;
    auto module = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    module.codeSize = code.words * 4;
    module.pCode = code.data;
    vk_check(api_.vkCreateShaderModule(device_, &module, nullptr, &p.module), "vkCreateShaderModule");
    std::vector<VkDescriptorSetLayoutBinding> slots(bindings);
    for (size_t i = 0; i < bindings; ++i)
        slots[i] = {static_cast<uint32_t>(i), VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    auto set = vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    set.bindingCount = static_cast<uint32_t>(bindings);
    set.pBindings = slots.data();
    vk_check(api_.vkCreateDescriptorSetLayout(device_, &set, nullptr, &p.set_layout), "vkCreateDescriptorSetLayout");
    const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    auto layout = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &p.set_layout;
    layout.pushConstantRangeCount = push_bytes ? 1 : 0;
    layout.pPushConstantRanges = &range;
    vk_check(api_.vkCreatePipelineLayout(device_, &layout, nullptr, &p.layout), "vkCreatePipelineLayout");
    auto info = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    info.stage = vk_struct<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = p.module;
    info.stage.pName = "main";
    info.layout = p.layout;
    vk_check(api_.vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &p.pipeline),
             "vkCreateComputePipelines");
    return pipelines_.emplace(name, p).first->second;
}

// Binds the shader, its buffers and push constants and dispatches it; a
// dispatch after another first waits for the other's writes.
void Device::record(const Dispatch& d, bool after_another)
{
    const uint32_t push_bytes = static_cast<uint32_t>(d.push.size());
    const Pipeline& p = pipeline(d.shader, d.buffers.size(), push_bytes);
    check(d.buffers.size() <= kMaxBindings, "shader ", d.shader, " binds ", d.buffers.size(), " buffers, at most ",
          kMaxBindings);
    check(p.bindings == d.buffers.size(), "shader ", d.shader, " takes ", p.bindings, " buffers, got ", d.buffers.size());
    auto alloc = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    alloc.descriptorPool = descriptor_pool_;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &p.set_layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    vk_check(api_.vkAllocateDescriptorSets(device_, &alloc, &set), "vkAllocateDescriptorSets");
    std::vector<VkDescriptorBufferInfo> infos(d.buffers.size());
    std::vector<VkWriteDescriptorSet> writes(d.buffers.size());
    for (size_t i = 0; i < d.buffers.size(); ++i) {
        infos[i] = {d.buffers[i]->handle(), 0, VK_WHOLE_SIZE};
        writes[i] = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
        writes[i].dstSet = set;
        writes[i].dstBinding = static_cast<uint32_t>(i);
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
    }
    api_.vkUpdateDescriptorSets(device_, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
    if (after_another) {
        auto barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
        barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
        barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        api_.vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
                                  1, &barrier, 0, nullptr, 0, nullptr);
    }
    api_.vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    api_.vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
    if (push_bytes) api_.vkCmdPushConstants(commands_, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, d.push.data());
    const uint64_t groups = std::min<uint64_t>((d.items + d.local_size - 1) / d.local_size, max_groups_x_);
    api_.vkCmdDispatch(commands_, static_cast<uint32_t>(std::max<uint64_t>(groups, 1)), 1, 1);
}

double Device::submit_and_wait()
{
    if (timestamps_)
        api_.vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps_, 1);
    vk_check(api_.vkEndCommandBuffer(commands_), "vkEndCommandBuffer");
    auto submit = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands_;
    vk_check(api_.vkQueueSubmit(queue_, 1, &submit, fence_), "vkQueueSubmit");
    vk_check(api_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    api_.vkResetFences(device_, 1, &fence_);
    api_.vkResetCommandBuffer(commands_, 0);
    api_.vkResetDescriptorPool(device_, descriptor_pool_, 0);
    uint64_t ticks[2] = {0, 0};
    if (!timestamps_ || api_.vkGetQueryPoolResults(device_, timestamps_, 0, 2, sizeof ticks, ticks, sizeof ticks[0],
                                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS)
        return -1;
    return double((ticks[1] - ticks[0]) & timestamp_mask_) * timestamp_ns_ * 1e-6;
}

double Device::run(const std::vector<Dispatch>& steps)
{
    std::lock_guard<std::mutex> lock(mutex_);
    double ms = 0;
    // Submissions of at most kSetsPerSubmit dispatches (the descriptor pool's size).
    for (size_t first = 0; first < steps.size(); first += kSetsPerSubmit) {
        auto begin = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        vk_check(api_.vkBeginCommandBuffer(commands_, &begin), "vkBeginCommandBuffer");
        if (timestamps_) {
            api_.vkCmdResetQueryPool(commands_, timestamps_, 0, 2);
            api_.vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps_, 0);
        }
        for (size_t i = first; i < std::min<size_t>(steps.size(), first + kSetsPerSubmit); ++i) record(steps[i], i > first);
        const double part = submit_and_wait();
        ms = part < 0 || ms < 0 ? -1 : ms + part;
    }
    return ms;
}

double Device::dispatch_items(const std::string& name, const std::vector<const Buffer*>& buffers, const void* push,
                              uint32_t push_bytes, uint64_t items, uint32_t local_size)
{
    const uint8_t* bytes = static_cast<const uint8_t*>(push);
    return run({Dispatch{name, buffers, std::vector<uint8_t>(bytes, bytes + push_bytes), items, local_size}});
}

} // namespace kestrel::vulkan
