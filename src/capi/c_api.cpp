// The C API (include/kestrel/c_api.h): thin wrappers over Net, Session and
// Tensor. Every entry point catches what the C++ side throws and turns it into
// a status and this thread's last error message (c_api_internal.h); layer
// types written in C are an Op that calls the C callbacks.
#include "capi/c_api_internal.h"
#include "kestrel/model_file.h"

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kestrel/net.h"
#include "kestrel/op.h"
#include "kestrel/tflite.h"

using kestrel::capi::fail_with;
using kestrel::capi::guarded;
using kestrel::capi::load_step;
using kestrel::capi::null_argument;

namespace {

bool valid_dtype(const kestrel_dtype& t)
{
    const int v = kestrel::capi::enum_value(t);
    return v >= KESTREL_FLOAT32 && v <= KESTREL_BOOL;
}

kestrel::LoadOptions load_options_of(const kestrel_options& o)
{
    kestrel::LoadOptions lo;
    lo.fuse_layers = o.fuse_layers != 0;
    lo.winograd = o.winograd != 0;
    lo.fp16_weights = o.fp16_weights != 0;
    return lo;
}

kestrel_tensor_desc c_desc(const kestrel::TensorDesc& d)
{
    kestrel_tensor_desc c{};
    c.dtype = static_cast<kestrel_dtype>(d.dtype);
    c.rank = static_cast<int>(d.shape.size());
    for (int i = 0; i < c.rank; ++i) c.shape[i] = d.shape[static_cast<size_t>(i)];
    return c;
}

// A layer type whose infer and forward are C callbacks.
class CallbackOp : public kestrel::Op {
public:
    explicit CallbackOp(const kestrel_layer_callbacks& cb) : cb_(cb) {}

    void load_param(const kestrel::ParamDict& pd) override { params_.params = pd; }

    void infer(const std::vector<kestrel::TensorDesc>& in, std::vector<kestrel::TensorDesc>& out) const override
    {
        for (const kestrel::TensorDesc& d : in)
            kestrel::check(d.shape.size() <= KESTREL_MAX_RANK, "an input of rank ", d.shape.size(), " (at most ",
                           KESTREL_MAX_RANK, " for a layer written in C)");
        std::vector<kestrel_tensor_desc> ins, outs(out.size());
        for (const kestrel::TensorDesc& d : in) ins.push_back(c_desc(d));
        char error[256] = "";
        const int rc = cb_.infer(cb_.user_data, &params_, static_cast<int>(ins.size()), ins.data(),
                                 static_cast<int>(outs.size()), outs.data(), error, sizeof error);
        kestrel::check(rc == 0, "infer: ", error[0] ? error : "failed");
        for (size_t i = 0; i < out.size(); ++i) {
            const kestrel_tensor_desc& c = outs[i];
            kestrel::check(valid_dtype(c.dtype) && c.rank >= 0 && c.rank <= KESTREL_MAX_RANK, "infer: output ", i,
                           " has dtype ", kestrel::capi::enum_value(c.dtype), " and rank ", c.rank);
            out[i] = kestrel::TensorDesc(kestrel::Shape(c.shape, c.shape + c.rank), static_cast<kestrel::DType>(c.dtype));
        }
    }

    void forward(const std::vector<kestrel::Tensor>& in, std::vector<kestrel::Tensor>& out,
                 const kestrel::ExecContext&) const override
    {
        std::vector<kestrel_tensor> ins, outs;
        for (const kestrel::Tensor& t : in) ins.push_back(kestrel_tensor{t});
        for (const kestrel::Tensor& t : out) outs.push_back(kestrel_tensor{t});
        std::vector<const kestrel_tensor*> in_ptrs;
        std::vector<kestrel_tensor*> out_ptrs;
        for (kestrel_tensor& t : ins) in_ptrs.push_back(&t);
        for (kestrel_tensor& t : outs) out_ptrs.push_back(&t);
        char error[256] = "";
        const int rc = cb_.forward(cb_.user_data, &params_, static_cast<int>(in_ptrs.size()), in_ptrs.data(),
                                   static_cast<int>(out_ptrs.size()), out_ptrs.data(), error, sizeof error);
        kestrel::check(rc == 0, "forward: ", error[0] ? error : "failed");
    }

private:
    kestrel_layer_callbacks cb_;
    kestrel_params params_;
};

// A getter's value, or `fallback` when the params are NULL or the id holds
// another kind (nothing may throw into the caller's C frames).
template <class Get, class T> T param_or(const kestrel_params* params, T fallback, const Get& get) noexcept
{
    if (!params) return fallback;
    try {
        return get(params->params);
    } catch (...) {
        return fallback;
    }
}

} // namespace

extern "C" {

const char* kestrel_last_error(void) { return kestrel::capi::last_error().c_str(); }

void kestrel_options_init(kestrel_options* options)
{
    if (!options) return;
    options->threads = 1;
    options->fuse_layers = 1;
    options->winograd = 1;
    options->fp16_weights = 0;
    options->blocked_layouts = 1;
    options->bf16 = 0;
}

kestrel_status kestrel_net_create(kestrel_net** net)
{
    if (!net) return null_argument("net");
    *net = nullptr;
    return guarded([&] {
        auto n = std::make_unique<kestrel_net>();
        kestrel_options defaults;
        kestrel_options_init(&defaults);
        n->net.set_load_options(load_options_of(defaults));
        *net = n.release();
    });
}

void kestrel_net_destroy(kestrel_net* net) { delete net; }

kestrel_status kestrel_net_set_options(kestrel_net* net, const kestrel_options* options)
{
    if (!net) return null_argument("net");
    if (!options) return null_argument("options");
    return guarded([&] { net->net.set_load_options(load_options_of(*options)); });
}

kestrel_status kestrel_net_load(kestrel_net* net, const char* path, const char* weights)
{
    return load_step(net, path, "path", [&] {
        kestrel::ModelFileOptions o;
        if (weights) o.weights = weights;
        o.optimize = net->net.load_options().fuse_layers;
        kestrel::load_model_file(net->net, path, o);
    });
}

kestrel_status kestrel_net_load_param(kestrel_net* net, const char* path)
{
    return load_step(net, path, "path", [&] { net->net.load_param(path); });
}

kestrel_status kestrel_net_load_param_mem(kestrel_net* net, const char* text)
{
    return load_step(net, text, "text", [&] { net->net.load_param_mem(text); });
}

kestrel_status kestrel_net_load_model(kestrel_net* net, const char* path)
{
    return load_step(net, path, "path", [&] { net->net.load_model(path); });
}

kestrel_status kestrel_net_load_model_mem(kestrel_net* net, const void* data, size_t size)
{
    static const char kEmpty = 0;
    return load_step(net, size > 0 ? data : &kEmpty, "data", [&] { net->net.load_model_mem(data, size); });
}

kestrel_status kestrel_net_load_tflite_mem(kestrel_net* net, const void* data, size_t size)
{
    static const char kEmpty = 0;
    return load_step(net, size > 0 ? data : &kEmpty, "data", [&] {
        kestrel::TfliteImportOptions o;
        o.optimize = net->net.load_options().fuse_layers;
        kestrel::load_tflite_mem(net->net, data, size, "<memory>", o);
    });
}

int kestrel_net_input_count(const kestrel_net* net) { return net ? static_cast<int>(net->inputs.size()) : 0; }
int kestrel_net_output_count(const kestrel_net* net) { return net ? static_cast<int>(net->outputs.size()) : 0; }

const char* kestrel_net_input_name(const kestrel_net* net, int i)
{
    return net && i >= 0 && i < kestrel_net_input_count(net) ? net->inputs[static_cast<size_t>(i)].c_str() : nullptr;
}

const char* kestrel_net_output_name(const kestrel_net* net, int i)
{
    return net && i >= 0 && i < kestrel_net_output_count(net) ? net->outputs[static_cast<size_t>(i)].c_str() : nullptr;
}

kestrel_status kestrel_session_create(const kestrel_net* net, const kestrel_options* options,
                                      kestrel_session** session)
{
    if (!net) return null_argument("net");
    if (!session) return null_argument("session");
    *session = nullptr;
    return guarded([&] {
        kestrel::Options o;
        if (options) {
            o.threads = options->threads, o.blocked_layouts = options->blocked_layouts != 0;
            o.precision = options->bf16 ? kestrel::Options::Precision::BF16 : kestrel::Options::Precision::F32;
        }
        kestrel::check(o.threads >= 1, "threads must be >= 1, got ", o.threads);
        auto s = std::make_unique<kestrel_session>();
        s->session = std::make_unique<kestrel::Session>(net->net, o);
        *session = s.release();
    });
}

void kestrel_session_destroy(kestrel_session* session) { delete session; }

kestrel_status kestrel_session_set_input(kestrel_session* session, const char* name, kestrel_dtype dtype,
                                         const int64_t* shape, int rank, const void* data)
{
    if (!session) return null_argument("session");
    if (!name) return null_argument("name");
    if (!shape && rank > 0) return null_argument("shape");
    if (rank < 0 || rank > KESTREL_MAX_RANK)
        return fail_with(KESTREL_ERROR_ARGUMENT, "rank " + std::to_string(rank) + " is not in 0.." +
                                                     std::to_string(KESTREL_MAX_RANK));
    if (!valid_dtype(dtype)) return fail_with(KESTREL_ERROR_ARGUMENT, "unknown dtype " + std::to_string(kestrel::capi::enum_value(dtype)));
    return guarded([&] {
        kestrel::Tensor t(kestrel::Shape(shape, shape + rank), static_cast<kestrel::DType>(dtype));
        kestrel::check(data != nullptr || t.nbytes() == 0, "data is NULL");
        if (t.nbytes() > 0) std::memcpy(t.raw(), data, t.nbytes());
        session->session->set_input(name, t);
    });
}

kestrel_status kestrel_session_get(kestrel_session* session, const char* name, kestrel_tensor** tensor)
{
    if (!session) return null_argument("session");
    if (!name) return null_argument("name");
    if (!tensor) return null_argument("tensor");
    *tensor = nullptr;
    return guarded([&] { *tensor = new kestrel_tensor{session->session->get(name)}; });
}

namespace {

// A C callback as a Session's OpCallback: the tensors as handles for the call's duration.
kestrel::OpCallback c_layer_callback(kestrel_layer_callback fn, void* user_data)
{
    if (!fn) return nullptr;
    return [fn, user_data](const kestrel::OpEvent& e) {
        std::vector<kestrel_tensor> ins, outs;
        for (const kestrel::Tensor& t : e.inputs) ins.push_back(kestrel_tensor{t});
        for (const kestrel::Tensor& t : e.outputs) outs.push_back(kestrel_tensor{t});
        std::vector<const kestrel_tensor*> in_handles, out_handles;
        for (const kestrel_tensor& t : ins) in_handles.push_back(&t);
        for (const kestrel_tensor& t : outs) out_handles.push_back(&t);
        fn(user_data, e.layer_type.c_str(), e.layer_name.c_str(), static_cast<int>(in_handles.size()),
           in_handles.data(), static_cast<int>(out_handles.size()), out_handles.data());
    };
}

} // namespace

kestrel_status kestrel_session_set_callbacks(kestrel_session* session, kestrel_layer_callback before,
                                             kestrel_layer_callback after, void* user_data)
{
    if (!session) return null_argument("session");
    return guarded([&] {
        session->session->set_callbacks(c_layer_callback(before, user_data), c_layer_callback(after, user_data));
    });
}

void kestrel_tensor_destroy(kestrel_tensor* tensor) { delete tensor; }

kestrel_dtype kestrel_tensor_dtype(const kestrel_tensor* tensor)
{
    return tensor ? static_cast<kestrel_dtype>(tensor->tensor.dtype()) : KESTREL_FLOAT32;
}

int kestrel_tensor_rank(const kestrel_tensor* tensor) { return tensor ? tensor->tensor.rank() : 0; }

const int64_t* kestrel_tensor_shape(const kestrel_tensor* tensor)
{
    return tensor ? tensor->tensor.shape().data() : nullptr;
}

int64_t kestrel_tensor_count(const kestrel_tensor* tensor) { return tensor ? tensor->tensor.numel() : 0; }

const void* kestrel_tensor_data(const kestrel_tensor* tensor) { return tensor ? tensor->tensor.raw() : nullptr; }

void* kestrel_tensor_mutable_data(kestrel_tensor* tensor) { return tensor ? tensor->tensor.raw() : nullptr; }

int kestrel_params_has(const kestrel_params* params, int id)
{
    return param_or(params, 0, [&](const kestrel::ParamDict& p) { return p.has(id) ? 1 : 0; });
}

int kestrel_params_int(const kestrel_params* params, int id, int default_value)
{
    return param_or(params, default_value, [&](const kestrel::ParamDict& p) { return p.get_int(id, default_value); });
}

float kestrel_params_float(const kestrel_params* params, int id, float default_value)
{
    return param_or(params, default_value,
                    [&](const kestrel::ParamDict& p) { return p.get_float(id, default_value); });
}

int kestrel_params_floats(const kestrel_params* params, int id, float* values, int capacity)
{
    return param_or(params, 0, [&](const kestrel::ParamDict& p) {
        const std::vector<float> v = p.get_floats(id);
        for (int i = 0; values && i < capacity && i < static_cast<int>(v.size()); ++i) values[i] = v[static_cast<size_t>(i)];
        return static_cast<int>(v.size());
    });
}

kestrel_status kestrel_register_layer(const char* type, const kestrel_layer_callbacks* callbacks)
{
    if (!type) return null_argument("type");
    if (!callbacks) return null_argument("callbacks");
    if (!callbacks->infer || !callbacks->forward) return null_argument("callbacks->infer or callbacks->forward");
    return guarded([&] {
        const kestrel_layer_callbacks cb = *callbacks;
        kestrel::register_op(type, [cb] { return std::make_unique<CallbackOp>(cb); });
    });
}

} // extern "C"
