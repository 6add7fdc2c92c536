// Every operator of a file that no converter takes, reported in one error: a
// user converting a model sees all that is missing at once, not one per try.
#pragma once
#include <string>
#include <vector>

namespace kestrel {

class UnsupportedOperators {
public:
    // `where` places it in the file ("line 4", "node 12"); `type` and `name`
    // are the file's; `message` is the full error for the first one.
    void add(std::string where, std::string type, std::string name, std::string message);
    bool empty() const { return ops_.empty(); }
    size_t size() const { return ops_.size(); }
    // Throws kestrel::Error when any were added: the first one's message, then
    // (when there are more) "(N <noun>: where type 'name', ...)".
    void raise_if_any(const std::string& noun) const;

private:
    struct Op {
        std::string where, type, name, message;
    };
    std::vector<Op> ops_;
};

} // namespace kestrel
