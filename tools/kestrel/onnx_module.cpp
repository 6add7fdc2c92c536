// The ONNX importer, loaded from its module (onnx_importer/) on first use:
// beside this executable in a build tree, or in LIBDIR/kestrel when installed.
#include "onnx_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "kestrel/error.h"

namespace kestrel::cli {

namespace {

using ImportFn = void (*)(Net&, const std::string&, const OnnxImportOptions&);

// The directory of the running executable ("" if unknown).
std::string executable_dir()
{
    char buf[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "";
    const std::string path(buf, static_cast<size_t>(n));
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? "" : path.substr(0, slash);
}

ImportFn find_importer()
{
#ifdef KESTREL_HAVE_ONNX
    const std::string dir = executable_dir(), name = KESTREL_ONNX_IMPORTER;
    std::string tried, why;
    for (const std::string& candidate : {dir + "/" + name, dir + "/../" KESTREL_ONNX_IMPORTER_DIR "/" + name}) {
        tried += (tried.empty() ? "" : ", ") + candidate;
        if (void* module = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            if (void* fn = dlsym(module, "kestrel_onnx_import")) return reinterpret_cast<ImportFn>(fn);
            why = dlerror();
        } else if (why.empty()) {
            why = dlerror();
        }
    }
    fail("cannot load the ONNX importer (tried ", tried, "): ", why);
#else
    fail("this kestrel was built without the ONNX importer (install libonnx-dev and rebuild)");
#endif
}

} // namespace

void import_onnx(Net& net, const std::string& path, const OnnxImportOptions& options)
{
    ImportFn import = nullptr;
    try {
        static const ImportFn found = find_importer();
        import = found;
    } catch (const Error& e) {
        fail(path, ": ", e.what());
    }
    import(net, path, options);
}

} // namespace kestrel::cli
