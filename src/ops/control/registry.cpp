// The control family. Graph plumbing and control flow: Input, Split (fan-out), Noop, Dropout
// (an identity at inference), If (sub-networks chosen by a condition), Loop and Scan
// (a body sub-network run repeatedly).
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_input();
std::unique_ptr<Op> make_split();
std::unique_ptr<Op> make_noop();
std::unique_ptr<Op> make_packing();
std::unique_ptr<Op> make_if();
std::unique_ptr<Op> make_loop();
std::unique_ptr<Op> make_scan();
std::unique_ptr<Op> make_dropout();

std::vector<BuiltinOp> control_family()
{
    return {
        {"Input", make_input},
        {"Split", make_split},
        {"Noop", make_noop},
        {"Packing", make_packing},
        {"If", make_if},
        {"Loop", make_loop},
        {"Scan", make_scan},
        {"Dropout", make_dropout},
    };
}

} // namespace kestrel
