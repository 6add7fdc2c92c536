// ONNX TfIdfVectorizer on integer tokens (src/ops/text/tfidf_vectorizer.cpp)
// against a brute-force count: for each pool n-gram, every start and gap
// whose tokens spell it.
#include <random>

#include "layer_test_util.h"
#include "onnx_test_graph.h"

#ifdef KESTREL_HAVE_ONNX
namespace kestrel {
namespace {

using layer_test::OnnxGraph;

struct TfIdf {
    int64_t min_n, max_n, max_skip;
    std::string mode;
    std::vector<int64_t> counts, indexes, pool;
    std::vector<float> weights;
};

OnnxGraph tfidf_model(const TfIdf& t, const Shape& x_shape, int elem_type)
{
    OnnxGraph g(9);
    g.input("x", x_shape, elem_type);
    onnx::NodeProto* n = g.node("TfIdfVectorizer", {"x"}, {"y"});
    OnnxGraph::attr_int(n, "min_gram_length", t.min_n);
    OnnxGraph::attr_int(n, "max_gram_length", t.max_n);
    OnnxGraph::attr_int(n, "max_skip_count", t.max_skip);
    OnnxGraph::attr_ints(n, "ngram_counts", t.counts);
    OnnxGraph::attr_ints(n, "ngram_indexes", t.indexes);
    OnnxGraph::attr_ints(n, "pool_int64s", t.pool);
    onnx::AttributeProto* mode = n->add_attribute();
    mode->set_name("mode");
    mode->set_type(onnx::AttributeProto::STRING);
    mode->set_s(t.mode);
    if (!t.weights.empty()) {
        onnx::AttributeProto* w = n->add_attribute();
        w->set_name("weights");
        w->set_type(onnx::AttributeProto::FLOATS);
        for (float v : t.weights) w->add_floats(v);
    }
    g.output("y", static_cast<int>(x_shape.size()));
    return g;
}

// The expected row: each pool n-gram (in pool order) counted over all starts and gaps.
std::vector<float> brute_force(const TfIdf& t, const std::vector<int64_t>& x)
{
    const int64_t width = *std::max_element(t.indexes.begin(), t.indexes.end()) + 1;
    std::vector<float> y(static_cast<size_t>(width), 0.f);
    size_t j = 0;
    for (size_t level = 0; level < t.counts.size(); ++level) {
        const int64_t n = static_cast<int64_t>(level) + 1;
        const int64_t end = level + 1 < t.counts.size() ? t.counts[level + 1] : static_cast<int64_t>(t.pool.size());
        for (int64_t v = t.counts[level]; v < end; v += n, ++j) {
            if (n < t.min_n || n > t.max_n) continue;
            int64_t count = 0;
            for (int64_t gap = 1; gap <= (n == 1 ? 1 : t.max_skip + 1); ++gap)
                for (int64_t s = 0; s + (n - 1) * gap < static_cast<int64_t>(x.size()); ++s) {
                    bool same = true;
                    for (int64_t k = 0; k < n; ++k) same = same && x[s + k * gap] == t.pool[v + k];
                    count += same;
                }
            const float w = t.weights.empty() ? 1.f : t.weights[j];
            const float tf = static_cast<float>(count);
            y[t.indexes[j]] = count == 0 ? 0.f : t.mode == "TF" ? tf : t.mode == "IDF" ? w : tf * w;
        }
    }
    return y;
}

TEST(OnnxTfIdf, EveryModeGramRangeAndSkipMatchesABruteForceCount)
{
    // 1-, 2- and 3-grams over tokens 0..4, output indexes permuted, weights.
    TfIdf t;
    t.counts = {0, 3, 9};
    t.pool = {1, 3, 4, /* 2-grams */ 1, 2, 3, 3, 0, 1, /* 3-grams */ 1, 2, 3, 4, 4, 4};
    t.indexes = {5, 0, 7, 1, 2, 3, 4, 6};
    std::mt19937 rng(4);
    std::uniform_int_distribution<int64_t> token(0, 4);
    for (const std::string mode : {"TF", "IDF", "TFIDF"})
        for (int64_t min_n = 1; min_n <= 3; ++min_n)
            for (int64_t max_n = min_n; max_n <= 3; ++max_n)
                for (int64_t skip : {0, 2})
                    for (bool weighted : {false, true}) {
                        t.mode = mode, t.min_n = min_n, t.max_n = max_n, t.max_skip = skip;
                        t.weights = weighted ? std::vector<float>{0.5f, 2.f, 1.5f, 3.f, 0.25f, 4.f, 1.f, 2.5f}
                                             : std::vector<float>{};
                        const int elem = weighted ? onnx::TensorProto::INT64 : onnx::TensorProto::INT32;
                        const Net net = tfidf_model(t, {3, 20}, elem).load(true);
                        std::vector<int64_t> x(60);
                        for (int64_t& v : x) v = token(rng);
                        Tensor input({3, 20}, weighted ? DType::I64 : DType::I32);
                        for (size_t i = 0; i < x.size(); ++i)
                            if (weighted) input.data<int64_t>()[i] = x[i];
                            else input.data<int32_t>()[i] = static_cast<int32_t>(x[i]);
                        Session s(net);
                        s.set_input("x", input);
                        const Tensor y = s.get("y");
                        ASSERT_EQ(y.shape(), (Shape{3, 8}));
                        for (int r = 0; r < 3; ++r) {
                            const std::vector<float> want =
                                brute_force(t, std::vector<int64_t>(x.begin() + r * 20, x.begin() + (r + 1) * 20));
                            for (int k = 0; k < 8; ++k)
                                ASSERT_EQ(y.data<float>()[r * 8 + k], want[k])
                                    << mode << " grams " << min_n << ".." << max_n << " skip " << skip << " row " << r
                                    << " column " << k;
                        }
                    }
}

TEST(OnnxTfIdf, MalformedPoolsAreRefused)
{
    TfIdf t{2, 2, 0, "TF", {0, 2}, {0, 1}, {1, 2, 3, 4, 5}, {}}; // 3 values of 2-grams
    std::string msg = layer_test::error_of([&] { tfidf_model(t, {6}, onnx::TensorProto::INT64).load(true); });
    EXPECT_TRUE(layer_test::contains(msg, "not a multiple of 2")) << msg;
    t = TfIdf{1, 1, 0, "TF", {0}, {0, 1}, {7}, {}}; // one n-gram, two indexes
    msg = layer_test::error_of([&] { tfidf_model(t, {6}, onnx::TensorProto::INT64).load(true); });
    EXPECT_TRUE(layer_test::contains(msg, "ngram_indexes has 2")) << msg;
    t = TfIdf{1, 1, 0, "BM25", {0}, {0}, {7}, {}};
    msg = layer_test::error_of([&] { tfidf_model(t, {6}, onnx::TensorProto::INT64).load(true); });
    EXPECT_TRUE(layer_test::contains(msg, "mode must be TF, IDF or TFIDF")) << msg;
}

} // namespace
} // namespace kestrel
#endif
