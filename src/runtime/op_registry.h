// The op registry's side the runtime needs beyond kestrel/op.h's
// register_op/create_op.
#pragma once

namespace kestrel {

// Installs the built-in layer types and their optimizer traits
// (graph/layer_traits.h) if not yet done; loaders call it before the graph
// passes that ask for traits.
void install_builtin_ops();

} // namespace kestrel
