#include "frontend/common/unsupported_ops.h"

#include "kestrel/error.h"

namespace kestrel {

void UnsupportedOperators::add(std::string where, std::string type, std::string name, std::string message)
{
    ops_.push_back(Op{std::move(where), std::move(type), std::move(name), std::move(message)});
}

void UnsupportedOperators::raise_if_any(const std::string& noun) const
{
    if (ops_.empty()) return;
    std::string message = ops_[0].message;
    if (ops_.size() > 1) {
        message += " (" + std::to_string(ops_.size()) + " " + noun + ":";
        for (size_t i = 0; i < ops_.size(); ++i)
            message += (i ? ", " : " ") + ops_[i].where + " " + ops_[i].type + " '" + ops_[i].name + "'";
        message += ")";
    }
    fail(message);
}

} // namespace kestrel
