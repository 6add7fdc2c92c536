// The C API's ONNX loader (kestrel_net_load_onnx and kestrel_register_onnx in kestrel/c_api.h), here in
// the kestrel_onnx library so that the runtime's C API needs no protobuf.
#include "capi/c_api_internal.h"
#include "kestrel/onnx.h"

extern "C" kestrel_status kestrel_net_load_onnx(kestrel_net* net, const char* path)
{
    return kestrel::capi::load_step(net, path, "path", [&] { kestrel::load_onnx(net->net, path); });
}

extern "C" kestrel_status kestrel_register_onnx(void)
{
    kestrel::register_onnx_loader();
    return KESTREL_OK;
}
