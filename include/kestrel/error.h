// Kestrel reports every failure (bad files, bad shapes, bad params) by throwing
// kestrel::Error. The message is one line, already naming file/line/layer where
// they are known, so callers can print what() as it is.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace kestrel {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Thrown when a model asks for more memory than Options::max_tensor_bytes allows.
class TooLargeError : public Error {
public:
    using Error::Error;
};

namespace detail {
template <class... Args>
std::string concat(const Args&... args)
{
    std::ostringstream os;
    (os << ... << args);
    return os.str();
}
} // namespace detail

// fail("layer ", name, ": bad kernel ", k) throws kestrel::Error with the concatenation.
template <class... Args>
[[noreturn]] void fail(const Args&... args)
{
    throw Error(detail::concat(args...));
}

// The message arguments are evaluated even when the condition holds: never
// index with a value the condition is guarding.
template <class... Args>
void check(bool condition, const Args&... args)
{
    if (!condition) fail(args...);
}

} // namespace kestrel
