// Layer types that earlier versions of `kestrel convert` wrote and that now
// have one name per concept (ConcatND is Concat, Transpose is Permute, ...):
// the .param reader renames them, moving param ids and renumbering codes, so
// files converted then still load. Nothing writes these names any more.
#pragma once
#include <string>

#include "kestrel/param_dict.h"

namespace kestrel {

// Rewrites `type` and `params` in place when `type` is a legacy name; returns
// whether it was one.
bool upgrade_legacy_layer(std::string& type, ParamDict& params);

} // namespace kestrel
