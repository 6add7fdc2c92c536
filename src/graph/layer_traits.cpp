#include "graph/layer_traits.h"

#include <map>
#include <mutex>

namespace kestrel {

namespace {

struct TraitsTable {
    std::mutex mutex;
    std::map<std::string, LayerTraits> traits;
};

TraitsTable& table()
{
    static TraitsTable t;
    return t;
}

} // namespace

void register_layer_traits(const std::string& type, const LayerTraits& traits)
{
    TraitsTable& t = table();
    std::lock_guard<std::mutex> lock(t.mutex);
    t.traits[type] = traits;
}

const LayerTraits& layer_traits(const std::string& type)
{
    static const LayerTraits none;
    TraitsTable& t = table();
    std::lock_guard<std::mutex> lock(t.mutex);
    const auto it = t.traits.find(type);
    // std::map never moves its values: the reference outlives the lock.
    return it == t.traits.end() ? none : it->second;
}

} // namespace kestrel
