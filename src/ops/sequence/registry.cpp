// The sequence family. ONNX's sequence values (DType::Sequence tensors
// whose elements are tensors): SequenceConstruct (and SequenceEmpty),
// SequenceInsert, SequenceErase, SequenceAt, SequenceLength,
// SplitToSequence, ConcatFromSequence, SequenceMap (a body sub-network per
// element); and optionals (DType::Optional): Optional, OptionalHasElement,
// OptionalGetElement.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_sequence_construct();
std::unique_ptr<Op> make_sequence_insert();
std::unique_ptr<Op> make_sequence_erase();
std::unique_ptr<Op> make_sequence_at();
std::unique_ptr<Op> make_sequence_length();
std::unique_ptr<Op> make_split_to_sequence();
std::unique_ptr<Op> make_concat_from_sequence();
std::unique_ptr<Op> make_sequence_map();
std::unique_ptr<Op> make_optional();
std::unique_ptr<Op> make_optional_has_element();
std::unique_ptr<Op> make_optional_get_element();

std::vector<BuiltinOp> sequence_family()
{
    return {
        {"SequenceConstruct", make_sequence_construct},
        {"SequenceInsert", make_sequence_insert},
        {"SequenceErase", make_sequence_erase},
        {"SequenceAt", make_sequence_at},
        {"SequenceLength", make_sequence_length},
        {"SplitToSequence", make_split_to_sequence},
        {"ConcatFromSequence", make_concat_from_sequence},
        {"SequenceMap", make_sequence_map},
        {"Optional", make_optional},
        {"OptionalHasElement", make_optional_has_element},
        {"OptionalGetElement", make_optional_get_element},
    };
}

} // namespace kestrel
