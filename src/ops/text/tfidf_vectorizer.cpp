// TfIdfVectorizer (ONNX): counts n-grams of integer tokens against a pool.
// Input 0: tokens, integers, [C] or [N, C] (rows counted apart). Output:
// float32 [K] or [N, K], K = the largest output index + 1: per pool n-gram,
// its count (TF), its weight where it occurs (IDF), or count * weight (TFIDF).
// For n from min to max gram length, an n-gram takes tokens i, i + d, ...,
// i + (n - 1) d for every gap d from 1 to max_skip_count + 1 (1-grams once).
// Params: 0 = min gram length, 1 = max gram length, 2 = max skip count, 3 =
// mode (0 TF, 1 IDF, 2 TFIDF), 4 = ngram_counts (where each length's n-grams
// start in the pool, in values), 5 = ngram_indexes (each pool n-gram's output
// index), 6 = the pool's values, 7 = the weights (0: all 1). Weights: the
// pool (int64, Typed), then the weights (float32, Typed) when param 7 > 0.
#include <algorithm>
#include <map>

#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class TfIdfVectorizer : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        min_n_ = pd.get_int(0, 1), max_n_ = pd.get_int(1, 1), max_skip_ = pd.get_int(2, 0), mode_ = pd.get_int(3, 0);
        check(min_n_ >= 1 && max_n_ >= min_n_, "gram lengths (params 0, 1) must satisfy 1 <= min <= max, got ", min_n_,
              " and ", max_n_);
        check(max_skip_ >= 0, "the max skip count (param 2) must be >= 0, got ", max_skip_);
        check(mode_ >= 0 && mode_ <= 2, "mode (param 3) must be 0 (TF), 1 (IDF) or 2 (TFIDF), got ", mode_);
        starts_ = pd.get_ints(4), indexes_ = pd.get_ints(5);
        pool_values_ = pd.get_int(6, 0), weight_count_ = pd.get_int(7, 0);
        check(pool_values_ >= 0 && weight_count_ >= 0, "params 6 and 7 (value counts) must be >= 0");
        check(!indexes_.empty(), "ngram_indexes (param 5) must not be empty");
        check(*std::min_element(indexes_.begin(), indexes_.end()) >= 0, "ngram_indexes (param 5) must be >= 0");
        width_ = *std::max_element(indexes_.begin(), indexes_.end()) + int64_t{1};
        check(weight_count_ == 0 || weight_count_ == static_cast<int>(indexes_.size()), "the weights (param 7) must be ",
              indexes_.size(), ", one per n-gram, got ", weight_count_);
    }

    void load_model(WeightReader& wr) override
    {
        const Tensor pool = wr.load_typed({pool_values_}, DType::I64);
        const Tensor weights = weight_count_ ? wr.load_typed({weight_count_}, DType::F32) : Tensor();
        index_pool(pool.data<int64_t>());
        for (size_t j = 0; j < indexes_.size(); ++j) weight_of_.push_back(weight_count_ ? weights.data<float>()[j] : 1.f);
    }

    int64_t weight_bytes() const override { return int64_t{pool_values_} * 8 + int64_t{weight_count_} * 4; }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        check(in[0].dtype == DType::I32 || in[0].dtype == DType::I64, "the tokens must be int32 or int64, got ",
              dtype_name(in[0].dtype));
        check(in[0].shape.size() == 1 || in[0].shape.size() == 2, "the tokens must be [C] or [N, C], got ",
              shape_str(in[0].shape));
        out[0] = TensorDesc(in[0].shape.size() == 1 ? Shape{width_} : Shape{in[0].shape[0], width_}, DType::F32);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Tensor tokens = in[0].to(DType::I64);
        const int64_t rows = tokens.rank() == 1 ? 1 : tokens.dim(0), c = tokens.dim(-1);
        float* y = out[0].data<float>();
        std::fill(y, y + rows * width_, 0.f);
        std::vector<int64_t> counts(indexes_.size());
        for (int64_t r = 0; r < rows; ++r) {
            std::fill(counts.begin(), counts.end(), 0);
            count_row(tokens.data<int64_t>() + r * c, c, counts);
            for (size_t j = 0; j < counts.size(); ++j) {
                if (!counts[j]) continue;
                const float tf = static_cast<float>(counts[j]);
                y[r * width_ + indexes_[j]] = mode_ == 0 ? tf : mode_ == 1 ? weight_of_[j] : tf * weight_of_[j];
            }
        }
    }

private:
    // The pool's n-grams, each to its position in pool order (ngram_indexes' order).
    void index_pool(const int64_t* pool)
    {
        size_t ngram = 0;
        for (size_t level = 0; level < starts_.size(); ++level) {
            const int64_t n = static_cast<int64_t>(level) + 1, begin = starts_[level];
            const int64_t end = level + 1 < starts_.size() ? starts_[level + 1] : pool_values_;
            check(begin >= 0 && begin <= end && end <= pool_values_, "ngram_counts (param 4) must rise within the pool's ",
                  pool_values_, " values, got ", begin, " to ", end, " for ", n, "-grams");
            check((end - begin) % n == 0, "the pool's ", n, "-grams take ", end - begin, " values, not a multiple of ", n);
            for (int64_t v = begin; v < end; v += n, ++ngram) {
                check(ngram < indexes_.size(), "the pool holds more n-grams than ngram_indexes (", indexes_.size(), ")");
                if (n >= min_n_ && n <= max_n_) positions_[std::vector<int64_t>(pool + v, pool + v + n)] = ngram;
            }
        }
        check(ngram == indexes_.size(), "the pool holds ", ngram, " n-grams; ngram_indexes has ", indexes_.size());
    }

    void count_row(const int64_t* x, int64_t c, std::vector<int64_t>& counts) const
    {
        std::vector<int64_t> gram;
        // (An n-gram of more than c tokens, or spread wider, fits nowhere.)
        for (int64_t n = min_n_; n <= std::min<int64_t>(max_n_, c); ++n)
            for (int64_t gap = 1; gap <= (n == 1 ? 1 : std::min<int64_t>(max_skip_ + 1, c)); ++gap)
                for (int64_t i = 0; i + (n - 1) * gap < c; ++i) {
                    gram.clear();
                    for (int64_t k = 0; k < n; ++k) gram.push_back(x[i + k * gap]);
                    const auto it = positions_.find(gram);
                    if (it != positions_.end()) ++counts[it->second];
                }
    }

    int min_n_ = 1, max_n_ = 1, max_skip_ = 0, mode_ = 0, pool_values_ = 0, weight_count_ = 0;
    int64_t width_ = 0;
    std::vector<int> starts_, indexes_;
    std::vector<float> weight_of_;
    std::map<std::vector<int64_t>, size_t> positions_;
};

} // namespace

std::unique_ptr<Op> make_tfidf_vectorizer() { return std::make_unique<TfIdfVectorizer>(); }

} // namespace kestrel
