// What the C API's parts share (src/capi/c_api.cpp, and the ONNX loader in
// src/capi/c_api_onnx.cpp): the handles' definitions, and the mapping of C++
// exceptions to a status and this thread's last error message.
#pragma once
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kestrel/c_api.h"
#include "kestrel/net.h"

struct kestrel_net {
    kestrel::Net net;
    std::vector<std::string> inputs, outputs; // names handed out, refreshed after each load
};

struct kestrel_session {
    std::unique_ptr<kestrel::Session> session;
};

struct kestrel_tensor {
    kestrel::Tensor tensor; // shares the storage it was made from
};

struct kestrel_params {
    kestrel::ParamDict params;
};

namespace kestrel::capi {

// A C enum's value as the int it is stored as: a caller may pass any int, and
// loading one outside the enumerators as the enum type is undefined in C++.
template <class Enum> int enum_value(const Enum& e)
{
    static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized");
    int v;
    std::memcpy(&v, &e, sizeof v);
    return v;
}

// This thread's last error message.
inline std::string& last_error()
{
    thread_local std::string message;
    return message;
}

inline kestrel_status fail_with(kestrel_status status, const std::string& message)
{
    last_error() = message;
    return status;
}

// Runs `body`, mapping what it throws to a status.
template <class Body> kestrel_status guarded(const Body& body)
{
    try {
        body();
        return KESTREL_OK;
    } catch (const kestrel::TooLargeError& e) {
        return fail_with(KESTREL_ERROR_TOO_LARGE, e.what());
    } catch (const kestrel::Error& e) {
        return fail_with(KESTREL_ERROR_FAILED, e.what());
    } catch (const std::bad_alloc&) {
        return fail_with(KESTREL_ERROR_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception& e) {
        return fail_with(KESTREL_ERROR_INTERNAL, e.what());
    } catch (...) {
        return fail_with(KESTREL_ERROR_INTERNAL, "unknown error");
    }
}

inline kestrel_status null_argument(const char* what)
{
    return fail_with(KESTREL_ERROR_ARGUMENT, std::string(what) + " is NULL");
}

inline void refresh_names(kestrel_net* n)
{
    n->inputs = n->net.input_names();
    n->outputs = n->net.output_names();
}

// A loading step of `net` that takes argument `arg` (not NULL); the names of
// the inputs and outputs are read again after it.
template <class Load> kestrel_status load_step(kestrel_net* net, const void* arg, const char* what, const Load& load)
{
    if (!net) return null_argument("net");
    if (!arg) return null_argument(what);
    return guarded([&] {
        load();
        refresh_names(net);
    });
}

} // namespace kestrel::capi
