// The text family. Layers over token ids: TfIdfVectorizer (n-gram counts).
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_tfidf_vectorizer();

std::vector<BuiltinOp> text_family()
{
    return {
        {"TfIdfVectorizer", make_tfidf_vectorizer},
    };
}

} // namespace kestrel
