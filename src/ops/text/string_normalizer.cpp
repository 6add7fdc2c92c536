// StringNormalizer (ONNX): drops stopwords from a row of strings, then changes
// case. Input 0: strings, [C] or [1, C]. Output: the kept strings, [C'] or
// [1, C'] in order; when none is kept, one empty string ([1] or [1, 1]).
// Params: 0 = case change (0 none, 1 lower, 2 upper), 1 = stopwords compared
// case-sensitively (1) or not (0, the default), 2 = the number of stopwords.
// Weights: the stopwords (strings, Typed) when param 2 > 0.
// Case is mapped letter by letter (UTF-8, Unicode's simple mappings) for
// U+0000..U+017F (ASCII, Latin-1, Latin Extended-A), U+0370..U+03FF (Greek
// and Coptic) and U+0400..U+045F (Cyrillic); other characters, and bytes
// that are not UTF-8, stay as they are. ONNX's locale attribute is not consulted.
#include <set>

#include "core/utf8.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum class CaseChange { None, Lower, Upper };

// Letters whose other case is not at a fixed distance (Unicode's simple
// mappings); some map one way only (U+0130 lowers to 'i', 'i' uppers to 'I').
enum class Way { Both, ToLower, ToUpper };
struct CasePair {
    char32_t upper, lower;
    Way way;
};
constexpr CasePair kIrregularPairs[] = {
    {0x178, 0xFF, Way::Both},     {0x386, 0x3AC, Way::Both},    {0x38C, 0x3CC, Way::Both},
    {0x3CF, 0x3D7, Way::Both},    {0x37F, 0x3F3, Way::Both},    {0x3F9, 0x3F2, Way::Both},
    {0x3F7, 0x3F8, Way::Both},    {0x3FA, 0x3FB, Way::Both},    {0x130, 'i', Way::ToLower},
    {0x3F4, 0x3B8, Way::ToLower}, {'I', 0x131, Way::ToUpper},   {'S', 0x17F, Way::ToUpper},
    {0x39C, 0xB5, Way::ToUpper},  {0x3A3, 0x3C2, Way::ToUpper}, {0x392, 0x3D0, Way::ToUpper},
    {0x398, 0x3D1, Way::ToUpper}, {0x3A6, 0x3D5, Way::ToUpper}, {0x3A0, 0x3D6, Way::ToUpper},
    {0x39A, 0x3F0, Way::ToUpper}, {0x3A1, 0x3F1, Way::ToUpper}, {0x395, 0x3F5, Way::ToUpper},
};

// Runs [first, last] of upper-case letters whose lower case is `offset` away.
struct CaseRun {
    char32_t first, last;
    int32_t offset;
};
constexpr CaseRun kRuns[] = {
    {'A', 'Z', 32},     {0xC0, 0xD6, 32},   {0xD8, 0xDE, 32},     {0x388, 0x38A, 37}, {0x38E, 0x38F, 63},
    {0x391, 0x3A1, 32}, {0x3A3, 0x3AB, 32}, {0x3FD, 0x3FF, -130}, {0x410, 0x42F, 32}, {0x400, 0x40F, 80},
};

// Blocks of pairs side by side: the upper case first, its lower case next.
struct AlternatingBlock {
    char32_t first, last; // the first upper, the last lower
};
constexpr AlternatingBlock kAlternating[] = {
    {0x100, 0x12F}, {0x132, 0x137}, {0x139, 0x148}, {0x14A, 0x177},
    {0x179, 0x17E}, {0x370, 0x373}, {0x376, 0x377}, {0x3D8, 0x3EF},
};

char32_t lower_of(char32_t c)
{
    for (const CasePair& p : kIrregularPairs)
        if (c == p.upper && p.way != Way::ToUpper) return p.lower;
    for (const CaseRun& r : kRuns)
        if (c >= r.first && c <= r.last) return static_cast<char32_t>(static_cast<int32_t>(c) + r.offset);
    for (const AlternatingBlock& b : kAlternating)
        if (c >= b.first && c <= b.last && (c - b.first) % 2 == 0) return c + 1;
    return c;
}

char32_t upper_of(char32_t c)
{
    for (const CasePair& p : kIrregularPairs)
        if (c == p.lower && p.way != Way::ToLower) return p.upper;
    for (const CaseRun& r : kRuns) {
        const int32_t upper = static_cast<int32_t>(c) - r.offset;
        if (upper >= static_cast<int32_t>(r.first) && upper <= static_cast<int32_t>(r.last)) return static_cast<char32_t>(upper);
    }
    for (const AlternatingBlock& b : kAlternating)
        if (c >= b.first && c <= b.last && (c - b.first) % 2 == 1) return c - 1;
    return c;
}

std::string change_case(const std::string& s, CaseChange change)
{
    if (change == CaseChange::None) return s;
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const char32_t c = utf8::next(s, i);
        utf8::append(out, change == CaseChange::Lower ? lower_of(c) : upper_of(c));
    }
    return out;
}

class StringNormalizer : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        const int change = pd.get_int(0, 0);
        check(change >= 0 && change <= 2, "case change (param 0) must be 0 (none), 1 (lower) or 2 (upper), got ", change);
        change_ = static_cast<CaseChange>(change);
        case_sensitive_ = pd.get_int(1, 0) != 0;
        stopword_count_ = pd.get_int(2, 0);
        check(stopword_count_ >= 0, "the stopword count (param 2) must be >= 0, got ", stopword_count_);
    }
    void load_model(WeightReader& wr) override
    {
        if (!stopword_count_) return;
        const Tensor words = wr.load_typed({stopword_count_}, DType::String);
        for (int64_t i = 0; i < words.numel(); ++i) stopwords_.insert(compared_form(words.data<std::string>()[i]));
    }
    int64_t weight_bytes() const override
    {
        int64_t bytes = 0;
        for (const std::string& w : stopwords_) bytes += 4 + static_cast<int64_t>(w.size());
        return bytes;
    }
    bool takes_strings() const override { return true; }
    bool dynamic_output_shape() const override { return true; }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        check(in[0].dtype == DType::String, "input 0 must be strings, got ", dtype_name(in[0].dtype));
        const Shape& s = in[0].shape;
        check(s.size() == 1 || (s.size() == 2 && s[0] == 1), "input 0 must be [C] or [1, C], got ", shape_str(s));
        Shape bound = s;
        bound.back() = std::max<int64_t>(bound.back(), 1); // all dropped: one empty string
        out[0] = TensorDesc(bound, DType::String);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        std::vector<std::string> kept;
        for (int64_t i = 0; i < in[0].numel(); ++i) {
            const std::string& s = in[0].data<std::string>()[i];
            if (!stopwords_.count(compared_form(s))) kept.push_back(change_case(s, change_));
        }
        if (kept.empty()) kept.emplace_back();
        Shape shape = in[0].shape();
        shape.back() = static_cast<int64_t>(kept.size());
        out[0] = Tensor::strings(shape, kept);
    }

private:
    std::string compared_form(const std::string& s) const
    {
        return case_sensitive_ ? s : change_case(s, CaseChange::Lower);
    }

    CaseChange change_ = CaseChange::None;
    bool case_sensitive_ = false;
    int stopword_count_ = 0;
    std::set<std::string> stopwords_;
};

} // namespace

std::unique_ptr<Op> make_string_normalizer() { return std::make_unique<StringNormalizer>(); }

} // namespace kestrel
