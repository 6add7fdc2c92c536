// ncnn's shape-expression language (Reshape 6=, Crop 19/20/21=, Interp 9=).
//
// An expression is a comma-separated list written in prefix form, e.g.
// "-1,*(0h,2),+(1c,2)". As in ncnn, '(' ')' and ',' only separate tokens; each
// operator's arity comes from its name and the tokens are evaluated right to
// left on a stack. `<digit><w|h|d|c|n>` reads a dimension of input blob 0-9.
// Values are int or float with ncnn's typing rules; every list item is
// truncated to int at the end.
//
// The text is parsed once into a flat step vector; eval_list() only walks it.
// We accept a subset of what ncnn accepts (ncnn silently misreads tokens such
// as "10w" or "3abc"; we reject them) and evaluate that subset exactly as ncnn
// does, except that evaluations ncnn would leave undefined (integer overflow,
// division by zero, bad shifts, NaN/huge floats converted to int) throw.
#pragma once
#include "kestrel/error.h"
#include "kestrel/tensor.h" // provides: using Shape = std::vector<int64_t>;  (outermost dim first)

#include <cstdint>
#include <string>
#include <vector>

namespace kestrel {

namespace detail {
// One token of a parsed expression, stored in evaluation order (the text's
// tokens reversed), so evaluation is a single forward walk.
struct ExpressionStep {
    enum class Kind : uint8_t { IntLiteral, FloatLiteral, BlobDim, Operator };
    Kind kind = Kind::IntLiteral;
    // Operator: run the float variant because some operand is a float. Decided
    // at parse time: every value's type follows from the text alone.
    bool float_path = false;
    uint8_t index = 0; // Operator: row of the operator table; BlobDim: blob index
    uint8_t dim = 0;   // BlobDim: 0..4 for w h d c n
    int position = 0;  // character offset of the token, for error messages
    int int_value = 0;
    float float_value = 0.f;
};
} // namespace detail

class Expression {
public:
    // An empty expression: references no blob and evaluates to an empty list.
    Expression() = default;

    // Parses; throws kestrel::Error with the character position on a syntax error.
    static Expression parse(const std::string& text);
    // 1 + highest referenced blob index (0 when the expression references no blob).
    int blob_count() const { return blob_count_; }
    // Evaluates with the shapes of the referenced input blobs (kestrel order: outermost first).
    // Throws kestrel::Error on a missing blob, an unsupported rank or an
    // arithmetic error (overflow, division by zero, non-finite float to int).
    std::vector<int> eval_list(const std::vector<Shape>& blobs) const;
    const std::string& text() const { return text_; }

private:
    std::string text_;
    std::vector<detail::ExpressionStep> steps_;
    size_t max_stack_depth_ = 0;
    int blob_count_ = 0;
};

// ncnn-named helpers with ncnn's meanings:
// 1 + highest referenced blob index; throws kestrel::Error on a syntax error.
int count_expression_blobs(const std::string& expr);
// Appends the evaluated list to outlist; 0 ok, -1 on any error (never throws).
int eval_list_expression(const std::string& expr, const std::vector<Shape>& blobs, std::vector<int>& outlist);

} // namespace kestrel
