// Einsum (ncnn's and ONNX's): sums of products over an equation (param 0, a
// string such as "bij,bjk->bik", or as ncnn writes it an int array of the
// characters' codes; spaces are ignored).
// Each input has a term of letters (a-z, A-Z), optionally with one "..."
// standing for the dims not named by letters; "..." dims of different inputs
// broadcast (aligned to the right, size 1 stretches). A letter repeated within
// a term takes the diagonal. Without "->" the output is "..." followed by the
// letters that occur once in the whole equation, in ASCII order. Letters not in
// the output are summed over. Inputs share one numeric dtype; floats
// accumulate in double, integers in int64 (wrapping like the type when cast
// back).
// A reference implementation: one pass over output x summed index space.
#include <algorithm>
#include <array>
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

constexpr int kLetters = 52;  // label ids 0..51 are letters, 52.. the dims of "..."
constexpr int kEllipsis = -1; // in a parsed term

int letter_id(char c)
{
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= 'A' && c <= 'Z') return c - 'A';
    fail("einsum equation (param 0): '", c, "' is not a letter");
}

// A term: letter ids in order, with kEllipsis where "..." stands.
std::vector<int> parse_term(const std::string& s)
{
    std::vector<int> term;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '.') {
            check(s.compare(i, 3, "...") == 0, "einsum equation (param 0): a '.' that is not part of '...'");
            check(std::count(term.begin(), term.end(), kEllipsis) == 0, "einsum equation (param 0): term '", s,
                  "' has more than one '...'");
            term.push_back(kEllipsis);
            i += 2;
        } else {
            term.push_back(letter_id(s[i]));
        }
    }
    return term;
}

struct Equation {
    std::vector<std::vector<int>> inputs;
    bool explicit_output = false;
    std::vector<int> output; // meaningful when explicit_output
};

Equation parse_equation(std::string text)
{
    text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t'; }), text.end());
    Equation eq;
    const size_t arrow = text.find("->");
    const std::string lhs = text.substr(0, arrow);
    if (arrow != std::string::npos) {
        eq.explicit_output = true;
        eq.output = parse_term(text.substr(arrow + 2));
        std::vector<int> seen = eq.output;
        std::sort(seen.begin(), seen.end());
        check(std::adjacent_find(seen.begin(), seen.end()) == seen.end(),
              "einsum equation (param 0): the output repeats a label");
    }
    size_t start = 0;
    while (true) {
        const size_t comma = lhs.find(',', start);
        eq.inputs.push_back(parse_term(lhs.substr(start, comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return eq;
}

// The equation applied to given input shapes: each label's size, the output
// labels, and the summed labels.
struct Plan {
    std::vector<int64_t> size;                   // per label id
    std::vector<std::vector<int>> input_labels;  // per input, per dim
    std::vector<int> out_labels, sum_labels;
    Shape out_shape;
};

void bind_label(Plan& p, int label, int64_t dim, bool broadcastable)
{
    int64_t& s = p.size[static_cast<size_t>(label)];
    if (s < 0 || (broadcastable && s == 1)) s = dim;
    else check(s == dim || (broadcastable && dim == 1), "einsum: label '",
               label < kLetters ? static_cast<char>(label < 26 ? 'A' + label : 'a' + label - 26) : '.', "' has sizes ",
               s, " and ", dim);
}

Plan make_plan(const Equation& eq, const std::vector<Shape>& shapes)
{
    check(eq.inputs.size() == shapes.size(), "einsum equation (param 0) has ", eq.inputs.size(),
          " input terms but the layer has ", shapes.size(), " inputs");
    size_t ellipsis_rank = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
        const std::vector<int>& term = eq.inputs[i];
        const size_t letters = static_cast<size_t>(std::count_if(term.begin(), term.end(), [](int l) { return l != kEllipsis; }));
        const bool has_ellipsis = letters != term.size();
        check(has_ellipsis ? shapes[i].size() >= letters : shapes[i].size() == letters, "einsum: input ", i, " has rank ",
              shapes[i].size(), " but its term names ", letters, " dims");
        if (has_ellipsis) ellipsis_rank = std::max(ellipsis_rank, shapes[i].size() - letters);
    }
    Plan p;
    p.size.assign(kLetters + ellipsis_rank, -1);
    std::array<int, kLetters> count{};
    for (size_t i = 0; i < shapes.size(); ++i) {
        std::vector<int> labels;
        const size_t e = shapes[i].size() + 1 - eq.inputs[i].size(); // dims covered by "..."
        for (int l : eq.inputs[i]) {
            if (l == kEllipsis)
                for (size_t k = 0; k < e; ++k) labels.push_back(kLetters + static_cast<int>(ellipsis_rank - e + k));
            else {
                labels.push_back(l);
                ++count[static_cast<size_t>(l)];
            }
        }
        for (size_t k = 0; k < labels.size(); ++k) bind_label(p, labels[k], shapes[i][k], labels[k] >= kLetters);
        p.input_labels.push_back(labels);
    }
    std::vector<int> out;
    if (eq.explicit_output) {
        for (int l : eq.output) {
            if (l == kEllipsis) {
                for (size_t k = 0; k < ellipsis_rank; ++k) out.push_back(kLetters + static_cast<int>(k));
                continue;
            }
            check(count[static_cast<size_t>(l)] > 0, "einsum equation (param 0): an output label is in no input");
            out.push_back(l);
        }
        check(ellipsis_rank == 0 || std::count(eq.output.begin(), eq.output.end(), kEllipsis) == 1,
              "einsum equation (param 0): inputs have '...' dims but the output has no '...'");
    } else {
        for (size_t k = 0; k < ellipsis_rank; ++k) out.push_back(kLetters + static_cast<int>(k));
        // Alphabetical ASCII order: 'A'..'Z' (ids 0..25) before 'a'..'z' (26..51).
        for (int l = 0; l < kLetters; ++l)
            if (count[static_cast<size_t>(l)] == 1) out.push_back(l);
    }
    p.out_labels = out;
    for (int l = 0; l < static_cast<int>(p.size.size()); ++l)
        if (p.size[static_cast<size_t>(l)] >= 0 && std::find(out.begin(), out.end(), l) == out.end())
            p.sum_labels.push_back(l);
    for (int l : out) p.out_shape.push_back(p.size[static_cast<size_t>(l)]);
    return p;
}

// Element strides of input i per label (repeated labels add up: the diagonal;
// broadcast dims of size 1 get 0).
std::vector<int64_t> label_strides(const Plan& p, size_t i, const Shape& shape)
{
    std::vector<int64_t> st(p.size.size(), 0);
    int64_t stride = 1;
    for (size_t k = shape.size(); k-- > 0;) {
        if (shape[k] != 1) st[static_cast<size_t>(p.input_labels[i][k])] += stride;
        stride *= shape[k];
    }
    return st;
}

class Einsum : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        if (pd.kind(0) == ParamDict::Kind::IntArray) {
            for (int c : pd.get_ints(0)) {
                check(c > 0 && c < 128, "equation (param 0) holds the code ", c, ", not an ASCII character");
                text_ += static_cast<char>(c);
            }
        } else {
            text_ = pd.get_string(0, "");
        }
        check(!text_.empty(), "equation (param 0) is missing");
        eq_ = parse_equation(text_);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 64);
        expect_output_count(out, 1);
        std::vector<Shape> shapes;
        for (const TensorDesc& d : in) {
            check(d.dtype == in[0].dtype, "all inputs must have one dtype, got ", dtype_name(in[0].dtype), " and ",
                  dtype_name(d.dtype));
            shapes.push_back(d.shape);
        }
        check(in[0].dtype != DType::Bool, "inputs must be numeric, got bool");
        out[0] = TensorDesc(make_plan(eq_, shapes).out_shape, in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        std::vector<Shape> shapes;
        for (const Tensor& t : in) shapes.push_back(t.shape());
        const Plan p = make_plan(eq_, shapes);
        std::vector<std::vector<int64_t>> strides;
        for (size_t i = 0; i < in.size(); ++i) strides.push_back(label_strides(p, i, shapes[i]));
        int64_t summed = 1;
        for (int l : p.sum_labels) summed *= p.size[static_cast<size_t>(l)];
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (!std::is_same_v<T, bool>) {
                using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
                T* y = out[0].data<T>();
                ctx.parallel_for(out[0].numel(), [&](int64_t begin, int64_t end) {
                    std::vector<int64_t> offset(in.size());
                    for (int64_t o = begin; o < end; ++o) {
                        Acc total = 0;
                        for (int64_t s = 0; s < summed; ++s) total += product_at<T, Acc>(p, in, strides, o, s, offset);
                        y[o] = convert_value<T>(total);
                    }
                });
            }
        });
    }

private:
    // The product of the inputs at output element o and summed element s.
    template <class T, class Acc>
    static Acc product_at(const Plan& p, const std::vector<Tensor>& in, const std::vector<std::vector<int64_t>>& strides,
                          int64_t o, int64_t s, std::vector<int64_t>& offset)
    {
        std::fill(offset.begin(), offset.end(), 0);
        auto add_coords = [&](const std::vector<int>& labels, int64_t flat) {
            for (size_t k = labels.size(); k-- > 0;) {
                const size_t l = static_cast<size_t>(labels[k]);
                const int64_t c = flat % p.size[l];
                flat /= p.size[l];
                for (size_t i = 0; i < in.size(); ++i) offset[i] += c * strides[i][l];
            }
        };
        add_coords(p.out_labels, o);
        add_coords(p.sum_labels, s);
        Acc prod = 1;
        for (size_t i = 0; i < in.size(); ++i) prod *= convert_value<Acc>(in[i].data<T>()[offset[i]]);
        return prod;
    }

    std::string text_;
    Equation eq_;
};

} // namespace

std::unique_ptr<Op> make_einsum() { return std::make_unique<Einsum>(); }

} // namespace kestrel
