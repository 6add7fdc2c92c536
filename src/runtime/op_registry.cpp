// Type name -> factory. Built-ins are installed from one explicit table on
// first use (no static initializers, so static linking cannot drop them).
#include <map>
#include <mutex>

#include "runtime/op_registry.h"

#include "graph/layer_traits.h"
#include "kestrel/op.h"
#include "ops/registry.h"

namespace kestrel {

namespace {
struct Registry {
    std::mutex mutex;
    std::map<std::string, OpFactory> factories;
    Registry()
    {
        for (const BuiltinOp& b : builtin_ops()) {
            factories[b.type] = b.factory;
            register_layer_traits(b.type, b.traits);
        }
    }
};
Registry& registry()
{
    static Registry r;
    return r;
}
} // namespace

void install_builtin_ops() { registry(); }

void register_op(const std::string& type, OpFactory factory)
{
    check(!type.empty(), "register_op: empty type name");
    check(static_cast<bool>(factory), "register_op: no factory for '", type, "'");
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.factories[type] = std::move(factory);
}

std::unique_ptr<Op> create_op(const std::string& type)
{
    Registry& r = registry();
    OpFactory factory;
    {
        std::lock_guard<std::mutex> lock(r.mutex);
        auto it = r.factories.find(type);
        if (it == r.factories.end()) return nullptr;
        factory = it->second;
    }
    return factory();
}

std::vector<std::string> registered_op_types()
{
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::vector<std::string> v;
    for (auto& kv : r.factories) v.push_back(kv.first);
    return v;
}

} // namespace kestrel
