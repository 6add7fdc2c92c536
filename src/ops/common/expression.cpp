// Parser and evaluator for ncnn's shape expressions; see expression.h.
//
// Behaviour follows ncnn's src/expression.cpp: tokens split on '(' ')' ','
// only, evaluated right to left on a stack, values typed int or float.
// Because every value's type follows from the text alone (blob dims and
// integral literals are ints, each operator's result type depends only on
// its operands' types), parse() resolves the int/float variant of every
// operator once and rejects bitwise operators on floats up front.
#include "ops/common/expression.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <exception>
#include <string_view>
#include <system_error>

namespace kestrel {
namespace {

using Step = detail::ExpressionStep;

// ---------------------------------------------------------------------------
// Errors

// "expression "<text>" : <what> at position <n>" -- the one message format
// for both syntax and evaluation errors, so callers can point at the token.
[[noreturn]] void fail_at(const std::string& text, int position, const std::string& what)
{
    fail("expression \"", text, "\" : ", what, " at position ", position);
}

// Operator functions do not know where they sit in the text; they throw this
// and the evaluator rethrows it as a kestrel::Error naming the position.
struct EvalFault {
    std::string what;
};

template <class... Args>
[[noreturn]] void fault(const Args&... args)
{
    throw EvalFault{detail::concat(args...)};
}

// ---------------------------------------------------------------------------
// Checked conversions (ncnn leaves these cases undefined; we refuse them)

int checked_int(int64_t value, const char* op)
{
    if (value < INT_MIN || value > INT_MAX) fault("integer overflow in '", op, "'");
    return static_cast<int>(value);
}

// C's (int) cast: truncation toward zero, for the values where it is defined.
int float_to_int(float value)
{
    if (std::isnan(value)) fault("NaN cannot be converted to int");
    if (!(value >= -2147483648.0f && value < 2147483648.0f))
        fault("float ", value, " does not fit in int");
    return static_cast<int>(value);
}

void check_shift_amount(int amount, const char* op)
{
    if (amount < 0 || amount > 31) fault("shift amount ", amount, " out of range 0..31 in '", op, "'");
}

// ---------------------------------------------------------------------------
// Operator table

// Unary operators ignore their second argument.
using IntFn = int (*)(int a, int b);
using FloatFn = float (*)(float a, float b);

enum class OpKind : uint8_t {
    TypePreserving, // int when every operand is int, else float (ints widened)
    Rounding,       // ints pass through; floats are rounded, then become ints
    FloatOnly,      // operands widened to float; the result is float
    Bitwise,        // int operands only; the result is int
};

struct Operator {
    const char* name;
    int arity;
    OpKind kind;
    IntFn on_ints;     // null for FloatOnly
    FloatFn on_floats; // null for Bitwise
};

int floor_div_ints(int a, int b)
{
    // ncnn uses C division here, which truncates: //(-7,2) is -3, not -4.
    if (b == 0) fault("integer division by zero in '//'");
    return checked_int(int64_t{a} / b, "//"); // INT_MIN / -1 overflows
}

int shift_left_ints(int a, int b)
{
    check_shift_amount(b, "lshift");
    // Shift the bit pattern, as ncnn's `a << b` does on real hardware, without
    // C++17's undefined behaviour for negative or overflowing a.
    return static_cast<int>(static_cast<uint32_t>(a) << b);
}

int shift_right_ints(int a, int b)
{
    check_shift_amount(b, "rshift");
    return a >> b; // arithmetic for negative a, as in ncnn
}

float sign_of_float(float a, float)
{
    // NaN fails both tests and yields -1, as in ncnn.
    return a > 0.f ? 1.f : (a == 0.f ? 0.f : -1.f);
}

float python_remainder(float a, float b)
{
    // ncnn adds b whenever the signs differ, even when fmod is already 0:
    // remainder(-6,3) is 3 there (Python says 0). We keep ncnn's answer.
    float r = std::fmod(a, b);
    if (a * b < 0.f) r += b;
    return r;
}

uint32_t float_bits(float f)
{
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
}

float log_add_exp(float a, float b)
{
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    // Equal infinities would give inf - inf = NaN in the general formula.
    if (std::isinf(a) && float_bits(a) == float_bits(b)) return a;
    const float hi = std::max(a, b);
    const float lo = std::min(a, b);
    return hi + std::log1p(std::exp(lo - hi));
}

constexpr OpKind kPreserve = OpKind::TypePreserving;
constexpr OpKind kRound = OpKind::Rounding;
constexpr OpKind kFloat = OpKind::FloatOnly;
constexpr OpKind kBits = OpKind::Bitwise;

// clang-format off
const Operator kOperators[] = {
    {"+",   2, kPreserve, [](int a, int b) { return checked_int(int64_t{a} + b, "+"); }, [](float a, float b) { return a + b; }},
    {"-",   2, kPreserve, [](int a, int b) { return checked_int(int64_t{a} - b, "-"); }, [](float a, float b) { return a - b; }},
    {"*",   2, kPreserve, [](int a, int b) { return checked_int(int64_t{a} * b, "*"); }, [](float a, float b) { return a * b; }},
    {"//",  2, kPreserve, floor_div_ints,                                                [](float a, float b) { return std::floor(a / b); }},
    {"max", 2, kPreserve, [](int a, int b) { return std::max(a, b); },                   [](float a, float b) { return std::max(a, b); }},
    {"min", 2, kPreserve, [](int a, int b) { return std::min(a, b); },                   [](float a, float b) { return std::min(a, b); }},

    {"abs",    1, kPreserve, [](int a, int) { return checked_int(a > 0 ? int64_t{a} : -int64_t{a}, "abs"); }, [](float a, float) { return std::fabs(a); }},
    {"neg",    1, kPreserve, [](int a, int) { return checked_int(-int64_t{a}, "neg"); },                      [](float a, float) { return -a; }},
    {"sign",   1, kPreserve, [](int a, int) { return a > 0 ? 1 : (a == 0 ? 0 : -1); },                        sign_of_float},
    {"square", 1, kPreserve, [](int a, int) { return checked_int(int64_t{a} * a, "square"); },                [](float a, float) { return a * a; }},

    // Ints pass through unchanged; the float result is converted by the evaluator.
    {"trunc", 1, kRound, [](int a, int) { return a; }, [](float a, float) { return std::trunc(a); }},
    {"ceil",  1, kRound, [](int a, int) { return a; }, [](float a, float) { return std::ceil(a); }},
    {"floor", 1, kRound, [](int a, int) { return a; }, [](float a, float) { return std::floor(a); }},
    {"round", 1, kRound, [](int a, int) { return a; }, [](float a, float) { return std::round(a); }}, // halves away from zero

    {"acos",       1, kFloat, nullptr, [](float a, float) { return std::acos(a); }},
    {"acosh",      1, kFloat, nullptr, [](float a, float) { return std::acosh(a); }},
    {"asin",       1, kFloat, nullptr, [](float a, float) { return std::asin(a); }},
    {"asinh",      1, kFloat, nullptr, [](float a, float) { return std::asinh(a); }},
    {"atan",       1, kFloat, nullptr, [](float a, float) { return std::atan(a); }},
    {"atanh",      1, kFloat, nullptr, [](float a, float) { return std::atanh(a); }},
    {"cos",        1, kFloat, nullptr, [](float a, float) { return std::cos(a); }},
    {"cosh",       1, kFloat, nullptr, [](float a, float) { return std::cosh(a); }},
    {"erf",        1, kFloat, nullptr, [](float a, float) { return std::erf(a); }},
    {"exp",        1, kFloat, nullptr, [](float a, float) { return std::exp(a); }},
    {"log",        1, kFloat, nullptr, [](float a, float) { return std::log(a); }},
    {"log10",      1, kFloat, nullptr, [](float a, float) { return std::log10(a); }},
    {"reciprocal", 1, kFloat, nullptr, [](float a, float) { return 1.f / a; }},
    {"rsqrt",      1, kFloat, nullptr, [](float a, float) { return 1.f / std::sqrt(a); }},
    {"sin",        1, kFloat, nullptr, [](float a, float) { return std::sin(a); }},
    {"sinh",       1, kFloat, nullptr, [](float a, float) { return std::sinh(a); }},
    {"sqrt",       1, kFloat, nullptr, [](float a, float) { return std::sqrt(a); }},
    {"tan",        1, kFloat, nullptr, [](float a, float) { return std::tan(a); }},
    {"tanh",       1, kFloat, nullptr, [](float a, float) { return std::tanh(a); }},

    {"/",         2, kFloat, nullptr, [](float a, float b) { return a / b; }},
    {"atan2",     2, kFloat, nullptr, [](float a, float b) { return std::atan2(a, b); }},
    {"fmod",      2, kFloat, nullptr, [](float a, float b) { return std::fmod(a, b); }},
    {"pow",       2, kFloat, nullptr, [](float a, float b) { return std::pow(a, b); }},
    {"remainder", 2, kFloat, nullptr, python_remainder},
    {"logaddexp", 2, kFloat, nullptr, log_add_exp},

    {"and",    2, kBits, [](int a, int b) { return a & b; }, nullptr},
    {"or",     2, kBits, [](int a, int b) { return a | b; }, nullptr},
    {"xor",    2, kBits, [](int a, int b) { return a ^ b; }, nullptr},
    {"lshift", 2, kBits, shift_left_ints,                    nullptr},
    {"rshift", 2, kBits, shift_right_ints,                   nullptr},
};
// clang-format on

constexpr int kOperatorCount = static_cast<int>(sizeof kOperators / sizeof kOperators[0]);

int find_operator(std::string_view name)
{
    for (int i = 0; i < kOperatorCount; i++)
        if (name == kOperators[i].name) return i;
    return -1;
}

// ---------------------------------------------------------------------------
// Tokens

struct Token {
    std::string_view text;
    int position;
};

// '(' ')' and ',' are all plain separators, as in ncnn: parentheses group
// nothing, they only end tokens. Empty tokens are dropped.
std::vector<Token> split_tokens(const std::string& text)
{
    std::vector<Token> tokens;
    size_t start = 0;
    for (size_t i = 0; i <= text.size(); i++) {
        const bool at_separator = i == text.size() || text[i] == '(' || text[i] == ')' || text[i] == ',';
        if (!at_separator) continue;
        if (i > start) tokens.push_back({std::string_view(text).substr(start, i - start), static_cast<int>(start)});
        start = i + 1;
    }
    return tokens;
}

constexpr const char kDimLetters[] = "whdcn"; // index = ExpressionStep::dim

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_dim_letter(char c) { return c != '\0' && std::strchr(kDimLetters, c) != nullptr; }

// Digits followed by one dim letter: "0w" is a blob reference, "12h" would be
// one if ncnn allowed more than 10 inputs (ncnn reads it as the number 12).
bool looks_like_blob_ref(std::string_view token)
{
    if (token.size() < 2 || !is_dim_letter(token.back())) return false;
    return std::all_of(token.begin(), token.end() - 1, is_digit);
}

// ---------------------------------------------------------------------------
// Numeric literals

struct Literal {
    bool is_float;
    int int_value;
    float float_value;
};

// sscanf skips leading white space; "%d"/"%f" stop before trailing white space.
bool is_scanf_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

size_t skip_digits(std::string_view s, size_t i)
{
    while (i < s.size() && is_digit(s[i])) i++;
    return i;
}

// Length of the decimal number at the start of s -- [+-]?(d+(.d*)?|.d+)([eE][+-]?d+)? --
// or 0 when s does not start with one. Hex, inf and nan are not accepted.
size_t scan_decimal(std::string_view s)
{
    size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
    const size_t int_end = skip_digits(s, i);
    size_t end = int_end;
    size_t digits = int_end - i;
    if (end < s.size() && s[end] == '.') {
        const size_t frac_end = skip_digits(s, end + 1);
        digits += frac_end - (end + 1);
        end = frac_end;
    }
    if (digits == 0) return 0;
    if (end < s.size() && (s[end] == 'e' || s[end] == 'E')) {
        size_t j = end + 1;
        if (j < s.size() && (s[j] == '+' || s[j] == '-')) j++;
        const size_t exp_end = skip_digits(s, j);
        if (exp_end > j) end = exp_end; // "1e" is a malformed literal; the caller sees leftovers
    }
    return end;
}

// For an unsigned decimal too large or too small for float: whether it
// overflows (magnitude >= 1) rather than underflows.
bool decimal_overflows(std::string_view number)
{
    const size_t e = number.find_first_of("eE");
    const std::string_view mantissa = number.substr(0, e);
    long exponent = 0;
    if (e != std::string_view::npos) {
        size_t i = e + 1;
        const bool negative = number[i] == '-';
        if (number[i] == '+' || number[i] == '-') i++;
        for (; i < number.size(); i++) exponent = std::min(exponent * 10 + (number[i] - '0'), 1000000L);
        if (negative) exponent = -exponent;
    }
    const size_t dot = std::min(mantissa.find('.'), mantissa.size());
    const size_t first = mantissa.find_first_of("123456789");
    if (first == std::string_view::npos) return false; // zero never overflows
    const long order = first < dot ? static_cast<long>(dot - first - 1) : -static_cast<long>(first - dot);
    return order + exponent >= 0;
}

// The float sscanf("%f") would read: correctly rounded, +-inf on overflow,
// +-0 on underflow. from_chars is used because strtof obeys the C locale.
float decimal_to_float(std::string_view number)
{
    const bool negative = number[0] == '-';
    if (number[0] == '+' || number[0] == '-') number.remove_prefix(1);
    float value = 0.f;
    const auto result = std::from_chars(number.data(), number.data() + number.size(), value);
    if (result.ec == std::errc::result_out_of_range)
        value = decimal_overflows(number) ? HUGE_VALF : 0.f;
    return negative ? -value : value;
}

// The int sscanf("%d") would read from the leading [+-]?digits, if it fits.
bool decimal_int_prefix(std::string_view number, int& out)
{
    const bool negative = number[0] == '-';
    if (number[0] == '+' || number[0] == '-') number.remove_prefix(1);
    const size_t digits = skip_digits(number, 0);
    if (digits == 0) return false; // ".5": %d fails
    // Parse the digits with their sign so INT_MIN is reachable.
    const std::string signed_digits = (negative ? "-" : "") + std::string(number.substr(0, digits));
    const auto result = std::from_chars(signed_digits.data(), signed_digits.data() + signed_digits.size(), out);
    return result.ec == std::errc();
}

// Reads a literal as ncnn does: int when sscanf's %d and %f both succeed and
// agree (so "2.0" and "16777217" are ints), float otherwise ("2.5", "1e3").
// Returns false when the token is not exactly one number, optionally padded
// with white space.
bool parse_literal(std::string_view token, Literal& out)
{
    while (!token.empty() && is_scanf_space(token.front())) token.remove_prefix(1);
    while (!token.empty() && is_scanf_space(token.back())) token.remove_suffix(1);
    const size_t length = scan_decimal(token);
    if (length == 0 || length != token.size()) return false;

    out.float_value = decimal_to_float(token);
    int prefix = 0;
    out.is_float = !(decimal_int_prefix(token, prefix) && static_cast<float>(prefix) == out.float_value);
    out.int_value = prefix;
    return true;
}

// Whether a rejected token was meant as a number: only for the error message.
bool looks_numeric(std::string_view token)
{
    while (!token.empty() && is_scanf_space(token.front())) token.remove_prefix(1);
    if (!token.empty() && (token[0] == '+' || token[0] == '-')) token.remove_prefix(1);
    return !token.empty() && (is_digit(token[0]) || token[0] == '.');
}

// ---------------------------------------------------------------------------
// Parser: turns tokens into steps while tracking the static type of every
// stack slot, which fixes each operator's int/float variant.

class Parser {
public:
    explicit Parser(const std::string& text) : text_(text) {}

    void run()
    {
        if (text_.size() > static_cast<size_t>(INT_MAX)) fail("expression of ", text_.size(), " characters is too long");
        const std::vector<Token> tokens = split_tokens(text_);
        if (tokens.empty()) fail_at(text_, 0, "empty expression");
        for (auto it = tokens.rbegin(); it != tokens.rend(); ++it) add_token(*it);
    }

    std::vector<Step> steps;
    size_t max_depth = 0;
    int blob_count = 0;

private:
    void add_token(const Token& token)
    {
        const int op = find_operator(token.text);
        if (op >= 0)
            add_operator(op, token.position);
        else if (looks_like_blob_ref(token.text))
            add_blob_ref(token);
        else
            add_literal(token);
    }

    void add_blob_ref(const Token& token)
    {
        if (token.text.size() != 2)
            fail_at(text_, token.position, "blob reference '" + std::string(token.text) + "' out of range: inputs are 0-9");
        Step step;
        step.kind = Step::Kind::BlobDim;
        step.index = static_cast<uint8_t>(token.text[0] - '0');
        step.dim = static_cast<uint8_t>(std::strchr(kDimLetters, token.text[1]) - kDimLetters);
        blob_count = std::max(blob_count, step.index + 1);
        push(step, token.position, false);
    }

    void add_literal(const Token& token)
    {
        Literal literal{};
        if (!parse_literal(token.text, literal)) {
            const char* what = looks_numeric(token.text) ? "malformed number '" : "unknown token '";
            fail_at(text_, token.position, what + std::string(token.text) + "'");
        }
        Step step;
        step.kind = literal.is_float ? Step::Kind::FloatLiteral : Step::Kind::IntLiteral;
        step.int_value = literal.int_value;
        step.float_value = literal.float_value;
        push(step, token.position, literal.is_float);
    }

    void add_operator(int index, int position)
    {
        const Operator& op = kOperators[index];
        if (static_cast<int>(types_.size()) < op.arity)
            fail_at(text_, position, detail::concat("operator '", op.name, "' needs ", op.arity, op.arity == 1 ? " operand" : " operands"));
        bool any_float = false;
        for (int i = 0; i < op.arity; i++) {
            any_float = any_float || types_.back();
            types_.pop_back();
        }
        // ncnn only asserts this in a comment and would read a float's bits as an int.
        if (op.kind == OpKind::Bitwise && any_float)
            fail_at(text_, position, detail::concat("operator '", op.name, "' needs integer operands"));

        Step step;
        step.kind = Step::Kind::Operator;
        step.index = static_cast<uint8_t>(index);
        step.float_path = op.kind == OpKind::FloatOnly || any_float;
        const bool result_is_float = op.kind == OpKind::FloatOnly || (op.kind == OpKind::TypePreserving && any_float);
        push(step, position, result_is_float);
    }

    void push(Step step, int position, bool is_float)
    {
        step.position = position;
        steps.push_back(step);
        types_.push_back(is_float);
        max_depth = std::max(max_depth, types_.size());
    }

    const std::string& text_;
    std::vector<bool> types_; // static type of each stack slot: true = float
};

// ---------------------------------------------------------------------------
// Evaluation

struct Value {
    bool is_float;
    int i;
    float f;
    int position; // token that produced it, for errors in the final conversion

    float as_float() const { return is_float ? f : static_cast<float>(i); }
};

Value int_value(int i, int position) { return {false, i, 0.f, position}; }
Value float_value(float f, int position) { return {true, 0, f, position}; }

// Where each ncnn dim (w h d c n) sits in a kestrel shape of a given rank,
// counted from the outermost axis; -1: absent, reads as 1. ncnn's 3-d Mat is
// (c,h,w), so rank 3 has no d.
constexpr int kAxisOfDim[6][5] = {
    // w   h   d   c   n
    {-1, -1, -1, -1, -1}, // rank 0
    {0, -1, -1, -1, -1},  // (w)
    {1, 0, -1, -1, -1},   // (h,w)
    {2, 1, -1, 0, -1},    // (c,h,w)
    {3, 2, 1, 0, -1},     // (c,d,h,w)
    {4, 3, 2, 1, 0},      // (n,c,d,h,w)
};

int read_blob_dim(const std::vector<Shape>& blobs, const Step& step)
{
    if (step.index >= blobs.size())
        fault("blob ", int{step.index}, " referenced but only ", blobs.size(), " input shape(s) given");
    const Shape& shape = blobs[step.index];
    if (shape.size() > 5) fault("blob ", int{step.index}, " has rank ", shape.size(), "; expressions read at most rank 5");
    const int axis = kAxisOfDim[shape.size()][step.dim];
    if (axis < 0) return 1;
    const int64_t dim = shape[static_cast<size_t>(axis)];
    if (dim < INT_MIN || dim > INT_MAX) fault("blob ", int{step.index}, " dim ", dim, " does not fit in int");
    return static_cast<int>(dim);
}

Value pop(std::vector<Value>& stack)
{
    const Value v = stack.back();
    stack.pop_back();
    return v;
}

Value apply_operator(const Step& step, std::vector<Value>& stack)
{
    const Operator& op = kOperators[step.index];
    // The first argument is on top: the text's tokens were pushed right to left.
    const Value a = pop(stack);
    const Value b = op.arity == 2 ? pop(stack) : int_value(0, step.position);
    if (!step.float_path) return int_value(op.on_ints(a.i, b.i), step.position);
    const float r = op.on_floats(a.as_float(), b.as_float());
    if (op.kind == OpKind::Rounding) return int_value(float_to_int(r), step.position);
    return float_value(r, step.position);
}

Value evaluate_step(const Step& step, const std::vector<Shape>& blobs, std::vector<Value>& stack)
{
    switch (step.kind) {
    case Step::Kind::IntLiteral: return int_value(step.int_value, step.position);
    case Step::Kind::FloatLiteral: return float_value(step.float_value, step.position);
    case Step::Kind::BlobDim: return int_value(read_blob_dim(blobs, step), step.position);
    case Step::Kind::Operator: return apply_operator(step, stack);
    }
    return int_value(0, step.position); // unreachable: every kind is handled above
}

} // namespace

// ---------------------------------------------------------------------------
// Public API

Expression Expression::parse(const std::string& text)
{
    Parser parser(text);
    parser.run();
    Expression expr;
    expr.text_ = text;
    expr.steps_ = std::move(parser.steps);
    expr.max_stack_depth_ = parser.max_depth;
    expr.blob_count_ = parser.blob_count;
    return expr;
}

std::vector<int> Expression::eval_list(const std::vector<Shape>& blobs) const
{
    std::vector<Value> stack;
    stack.reserve(max_stack_depth_);
    int position = 0; // of whatever is being computed, should it fail
    try {
        for (const Step& step : steps_) {
            position = step.position;
            const Value v = evaluate_step(step, blobs, stack);
            stack.push_back(v);
        }
        // The top of the stack is the first list item.
        std::vector<int> list;
        list.reserve(stack.size());
        for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
            position = it->position;
            list.push_back(it->is_float ? float_to_int(it->f) : it->i);
        }
        return list;
    } catch (const EvalFault& f) {
        fail_at(text_, position, f.what);
    }
}

int count_expression_blobs(const std::string& expr)
{
    return Expression::parse(expr).blob_count();
}

int eval_list_expression(const std::string& expr, const std::vector<Shape>& blobs, std::vector<int>& outlist)
{
    try {
        const std::vector<int> list = Expression::parse(expr).eval_list(blobs);
        outlist.insert(outlist.end(), list.begin(), list.end());
        return 0;
    } catch (const std::exception&) {
        return -1; // ncnn reports failure only through the return value
    }
}

} // namespace kestrel
