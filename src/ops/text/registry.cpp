// The text family: TfIdfVectorizer (n-gram counts of token ids),
// StringNormalizer (stopwords and case of strings).
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_tfidf_vectorizer();
std::unique_ptr<Op> make_string_normalizer();

std::vector<BuiltinOp> text_family()
{
    return {
        {"TfIdfVectorizer", make_tfidf_vectorizer},
        {"StringNormalizer", make_string_normalizer},
    };
}

} // namespace kestrel
