// The control family. Graph plumbing and control flow: Input, Split (fan-out), Noop, Dropout
// (an identity at inference), and If (sub-networks chosen by a condition).
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_input();
std::unique_ptr<Op> make_split();
std::unique_ptr<Op> make_noop();
std::unique_ptr<Op> make_packing();
std::unique_ptr<Op> make_if();
std::unique_ptr<Op> make_dropout();

std::vector<BuiltinOp> control_family()
{
    return {
        {"Input", make_input},
        {"Split", make_split},
        {"Noop", make_noop},
        {"Packing", make_packing},
        {"If", make_if},
        {"Dropout", make_dropout},
    };
}

} // namespace kestrel
