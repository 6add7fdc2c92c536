// Tests for ncnn's shape-expression language (src/ops/common/expression.h).
//
// Expected values are written by hand or computed here with <cmath> in float
// precision (ncnn evaluates in float), never by running the evaluator twice.
#include "ops/common/expression.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <string>
#include <vector>

namespace kestrel {
namespace {

using List = std::vector<int>;

List eval(const std::string& text, const std::vector<Shape>& blobs = {})
{
    return Expression::parse(text).eval_list(blobs);
}

// Evaluates a one-item expression.
int eval1(const std::string& text, const std::vector<Shape>& blobs = {})
{
    const List list = eval(text, blobs);
    EXPECT_EQ(list.size(), 1u) << text;
    return list.empty() ? INT_MIN : list[0];
}

// Float results are checked as `*(expr,1000)`, i.e. x * 1000 in float, truncated.
int milli(float x) { return static_cast<int>(x * 1000.0f); }

bool ends_with(const std::string& s, const std::string& suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void expect_message(const std::string& message, const std::string& text, int position, const std::string& fragment)
{
    EXPECT_NE(message.find("expression \"" + text + "\""), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
    EXPECT_TRUE(ends_with(message, " at position " + std::to_string(position))) << message;
}

// A syntax error: parse throws; the ncnn-style helpers fail too.
void expect_syntax_error(const std::string& text, int position, const std::string& fragment)
{
    SCOPED_TRACE("expression: " + text);
    try {
        Expression::parse(text);
        ADD_FAILURE() << "parse accepted it";
    } catch (const Error& e) {
        expect_message(e.what(), text, position, fragment);
    }
    EXPECT_THROW(count_expression_blobs(text), Error);
    List out{42};
    EXPECT_EQ(eval_list_expression(text, {}, out), -1);
    EXPECT_EQ(out, List{42}); // untouched on failure
}

// An evaluation error: parse succeeds, eval_list throws.
void expect_eval_error(const std::string& text, const std::vector<Shape>& blobs, int position, const std::string& fragment)
{
    SCOPED_TRACE("expression: " + text);
    const Expression expr = Expression::parse(text);
    try {
        expr.eval_list(blobs);
        ADD_FAILURE() << "eval_list accepted it";
    } catch (const Error& e) {
        expect_message(e.what(), text, position, fragment);
    }
    List out{42};
    EXPECT_EQ(eval_list_expression(text, blobs, out), -1);
    EXPECT_EQ(out, List{42});
}

// ---------------------------------------------------------------------------
// Type-preserving arithmetic: + - * // max min abs neg sign square

TEST(Expression, IntArithmeticStaysInt)
{
    EXPECT_EQ(eval1("+(2,3)"), 5);
    EXPECT_EQ(eval1("-(10,3)"), 7); // first argument minus second
    EXPECT_EQ(eval1("-(3,10)"), -7);
    EXPECT_EQ(eval1("*(-4,6)"), -24);
    EXPECT_EQ(eval1("max(3,-2)"), 3);
    EXPECT_EQ(eval1("min(3,-2)"), -2);
    EXPECT_EQ(eval1("abs(-5)"), 5);
    EXPECT_EQ(eval1("abs(5)"), 5);
    EXPECT_EQ(eval1("neg(3)"), -3);
    EXPECT_EQ(eval1("sign(-7)"), -1);
    EXPECT_EQ(eval1("sign(0)"), 0);
    EXPECT_EQ(eval1("sign(9)"), 1);
    EXPECT_EQ(eval1("square(-4)"), 16);
}

TEST(Expression, IntArithmeticAtTheEdgesOfInt)
{
    EXPECT_EQ(eval1("+(2147483646,1)"), INT_MAX);
    EXPECT_EQ(eval1("-(-2147483647,1)"), INT_MIN);
    EXPECT_EQ(eval1("*(46340,46340)"), 46340 * 46340);
    EXPECT_EQ(eval1("square(-46340)"), 46340 * 46340);
    EXPECT_EQ(eval1("neg(2147483647)"), -INT_MAX);
    EXPECT_EQ(eval1("abs(-2147483647)"), INT_MAX);
    EXPECT_EQ(eval1("//(-2147483648,1)"), INT_MIN);
}

TEST(Expression, FloatOperandMakesArithmeticFloat)
{
    // Scaling by 2 after the operation exposes the fraction an int path would lose.
    EXPECT_EQ(eval1("*(+(2.5,1),2)"), 7);
    EXPECT_EQ(eval1("*(-(1,2.5),2)"), -3);
    EXPECT_EQ(eval1("*(*(2.5,3),2)"), 15);
    EXPECT_EQ(eval1("*(max(2.5,2),2)"), 5);
    EXPECT_EQ(eval1("*(min(2.5,3),2)"), 5);
    EXPECT_EQ(eval1("*(abs(-2.5),2)"), 5);
    EXPECT_EQ(eval1("*(neg(2.5),2)"), -5);
    EXPECT_EQ(eval1("*(square(1.5),100)"), 225);
    EXPECT_EQ(eval1("*(sign(-0.5),3)"), -3);
    EXPECT_EQ(eval1("*(sign(0.5),3)"), 3);
    // Ints are widened to float before the operation, so 16777217 becomes 16777216.
    EXPECT_EQ(eval1("+(16777217,0.5)"), static_cast<int>(static_cast<float>(16777217) + 0.5f));
}

TEST(Expression, FloorDivIsTruncatingOnIntsAndFlooringOnFloats)
{
    EXPECT_EQ(eval1("//(7,2)"), 3);
    EXPECT_EQ(eval1("//(-7,2)"), -3); // C division, not Python's -4
    EXPECT_EQ(eval1("//(7,-2)"), -3);
    EXPECT_EQ(eval1("//(-7,-2)"), 3);
    EXPECT_EQ(eval1("//(-7.5,2)"), static_cast<int>(std::floor(-7.5f / 2.0f))); // -4
    EXPECT_EQ(eval1("//(7.5,2)"), 3);
    EXPECT_EQ(eval1("//(-7,/(4,2))"), -4); // '/' always yields float, so floorf(-3.5)
    EXPECT_EQ(eval1("//(-7,sqrt(4))"), -4);
}

TEST(Expression, ResultTypesFlowThroughOperators)
{
    // Each probe divides by 2 with '//': -3 means the operand was an int, -4 a float.
    EXPECT_EQ(eval1("//(ceil(-7.5),2)"), -3);  // ceil yields int -7
    EXPECT_EQ(eval1("//(round(-7.4),2)"), -3); // round yields int -7
    EXPECT_EQ(eval1("//(neg(7),2)"), -3);
    EXPECT_EQ(eval1("//(neg(7.0),2)"), -3); // "7.0" is an int literal
    EXPECT_EQ(eval1("//(neg(7.5),2)"), -4);
    EXPECT_EQ(eval1("//(max(-7,-7.5),2)"), -4); // max(-7.0f,-7.5f) = -7.0f, still float
    EXPECT_EQ(eval1("//(+(-8,0.5),2)"), -4);
    EXPECT_EQ(eval1("//(sign(-0.5),2)"), -1); // float -1: floorf(-0.5); an int would give 0
    EXPECT_EQ(eval1("//(-7,and(2,-1))"), -3); // bitwise results are ints
}

// ---------------------------------------------------------------------------
// Rounding: trunc ceil floor round

TEST(Expression, RoundingOperatorsOnFloats)
{
    EXPECT_EQ(eval1("trunc(-2.5)"), -2);
    EXPECT_EQ(eval1("ceil(-2.5)"), -2);
    EXPECT_EQ(eval1("floor(-2.5)"), -3);
    EXPECT_EQ(eval1("trunc(2.9)"), 2);
    EXPECT_EQ(eval1("ceil(2.1)"), 3);
    EXPECT_EQ(eval1("floor(2.9)"), 2);
    EXPECT_EQ(eval1("floor(sin(3.14))"), 0);
    EXPECT_EQ(eval1("ceil(/(7,2))"), 4);
}

TEST(Expression, RoundHalvesAwayFromZero)
{
    // C round(), not Python's banker's rounding (which gives 2, 0 and -2 for the halves).
    EXPECT_EQ(eval1("round(2.5)"), 3);
    EXPECT_EQ(eval1("round(-2.5)"), -3);
    EXPECT_EQ(eval1("round(0.5)"), 1);
    EXPECT_EQ(eval1("round(-0.5)"), -1);
    EXPECT_EQ(eval1("round(1.5)"), 2);
    EXPECT_EQ(eval1("round(2.4)"), 2);
    EXPECT_EQ(eval1("round(-2.6)"), -3);
}

TEST(Expression, RoundingOperatorsPassIntsThrough)
{
    EXPECT_EQ(eval1("trunc(7)"), 7);
    EXPECT_EQ(eval1("ceil(-7)"), -7);
    EXPECT_EQ(eval1("floor(7)"), 7);
    EXPECT_EQ(eval1("round(-7)"), -7);
    EXPECT_EQ(eval1("round(2147483647)"), INT_MAX); // no detour through float
}

TEST(Expression, FinalFloatsAreTruncated)
{
    EXPECT_EQ(eval("2.7,-2.7,0.5,-0.5"), (List{2, -2, 0, 0}));
    EXPECT_EQ(eval1("/(-7,2)"), -3);
}

// ---------------------------------------------------------------------------
// Float-only operators

TEST(Expression, FloatUnaryOperators)
{
    EXPECT_EQ(eval1("*(sqrt(2),1000)"), milli(std::sqrt(2.0f)));
    EXPECT_EQ(eval1("*(rsqrt(2),1000)"), milli(1.0f / std::sqrt(2.0f)));
    EXPECT_EQ(eval1("*(reciprocal(3),1000)"), milli(1.0f / 3.0f));
    EXPECT_EQ(eval1("*(exp(1),1000)"), milli(std::exp(1.0f)));
    EXPECT_EQ(eval1("*(log(10),1000)"), milli(std::log(10.0f)));
    EXPECT_EQ(eval1("*(log10(2000),1000)"), milli(std::log10(2000.0f)));
    EXPECT_EQ(eval1("*(sin(2),1000)"), milli(std::sin(2.0f)));
    EXPECT_EQ(eval1("*(sin(-2),1000)"), milli(std::sin(-2.0f)));
    EXPECT_EQ(eval1("*(asin(0.5),1000)"), milli(std::asin(0.5f)));
    EXPECT_EQ(eval1("*(cos(2),1000)"), milli(std::cos(2.0f)));
    EXPECT_EQ(eval1("*(acos(0.5),1000)"), milli(std::acos(0.5f)));
    EXPECT_EQ(eval1("*(tan(1),1000)"), milli(std::tan(1.0f)));
    EXPECT_EQ(eval1("*(atan(3),1000)"), milli(std::atan(3.0f)));
    EXPECT_EQ(eval1("*(sinh(1),1000)"), milli(std::sinh(1.0f)));
    EXPECT_EQ(eval1("*(asinh(2),1000)"), milli(std::asinh(2.0f)));
    EXPECT_EQ(eval1("*(cosh(1),1000)"), milli(std::cosh(1.0f)));
    EXPECT_EQ(eval1("*(acosh(2),1000)"), milli(std::acosh(2.0f)));
    EXPECT_EQ(eval1("*(tanh(0.5),1000)"), milli(std::tanh(0.5f)));
    EXPECT_EQ(eval1("*(atanh(0.5),1000)"), milli(std::atanh(0.5f)));
    EXPECT_EQ(eval1("*(erf(0.5),1000)"), milli(std::erf(0.5f)));
}

TEST(Expression, FloatUnaryOperatorsByHand)
{
    EXPECT_EQ(eval1("*(sqrt(2),1000)"), 1414);
    EXPECT_EQ(eval1("*(exp(1),1000)"), 2718);
    EXPECT_EQ(eval1("*(atan(1),4000)"), 3141);
    EXPECT_EQ(eval1("*(erf(0.5),1000)"), 520);
    EXPECT_EQ(eval1("*(acosh(2),1000)"), 1316);
}

TEST(Expression, FloatBinaryOperators)
{
    EXPECT_EQ(eval1("*(/(7,2),2)"), 7); // an int division would give 6
    EXPECT_EQ(eval1("*(/(1,3),1000)"), milli(1.0f / 3.0f));
    EXPECT_EQ(eval1("pow(2,10)"), 1024);
    EXPECT_EQ(eval1("*(pow(2,0.5),1000)"), milli(std::pow(2.0f, 0.5f)));
    EXPECT_EQ(eval1("*(pow(2,-1),10)"), 5);
    EXPECT_EQ(eval1("fmod(7,3)"), 1);
    EXPECT_EQ(eval1("fmod(-7,3)"), -1); // sign of the dividend
    EXPECT_EQ(eval1("*(fmod(7.5,2),10)"), 15);
    // atan2(y = first, x = second)
    EXPECT_EQ(eval1("*(atan2(1,1),1000)"), milli(std::atan2(1.0f, 1.0f)));
    EXPECT_EQ(eval1("*(atan2(1,-1),1000)"), 2356);
    EXPECT_EQ(eval1("*(atan2(-1,1),1000)"), -785);
}

TEST(Expression, RemainderFollowsNcnn)
{
    // Python-style sign (the divisor's) ...
    EXPECT_EQ(eval1("remainder(7,3)"), 1);
    EXPECT_EQ(eval1("remainder(-7,3)"), 2);
    EXPECT_EQ(eval1("remainder(7,-3)"), -2);
    EXPECT_EQ(eval1("remainder(-7,-3)"), -1);
    EXPECT_EQ(eval1("remainder(6,3)"), 0);
    EXPECT_EQ(eval1("*(remainder(-7.5,2),10)"), 5);
    // ... except that ncnn adds the divisor whenever the signs differ, even
    // when fmod is already zero: Python gives 0 here, ncnn gives 3 and -3.
    EXPECT_EQ(eval1("remainder(-6,3)"), 3);
    EXPECT_EQ(eval1("remainder(6,-3)"), -3);
}

TEST(Expression, LogAddExp)
{
    EXPECT_EQ(eval1("*(logaddexp(1,2),1000)"), 2313); // ln(e + e^2) = 2.31326...
    EXPECT_EQ(eval1("*(logaddexp(2,1),1000)"), 2313);
    EXPECT_EQ(eval1("*(logaddexp(0,0),1000)"), milli(std::log(2.0f)));
    EXPECT_EQ(eval1("logaddexp(-1000,5)"), 5);
    // Equal infinities stay infinite instead of becoming NaN (inf - inf);
    // min/max against a NaN would keep the NaN and fail the final conversion.
    EXPECT_EQ(eval1("min(logaddexp(/(1,0),/(1,0)),7)"), 7);
    EXPECT_EQ(eval1("max(logaddexp(/(-1,0),/(-1,0)),-7)"), -7);
    expect_eval_error("logaddexp(/(0,0),1)", {}, 0, "NaN");
    expect_eval_error("logaddexp(1,/(0,0))", {}, 0, "NaN");
}

// ---------------------------------------------------------------------------
// Bitwise operators

TEST(Expression, BitwiseOperators)
{
    EXPECT_EQ(eval1("and(12,10)"), 8);
    EXPECT_EQ(eval1("or(12,10)"), 14);
    EXPECT_EQ(eval1("xor(12,10)"), 6);
    EXPECT_EQ(eval1("and(-1,255)"), 255);
    EXPECT_EQ(eval1("lshift(3,4)"), 48);
    EXPECT_EQ(eval1("rshift(256,4)"), 16);
    EXPECT_EQ(eval1("rshift(-16,2)"), -4); // arithmetic shift
    EXPECT_EQ(eval1("rshift(-1,31)"), -1);
    EXPECT_EQ(eval1("lshift(-1,4)"), -16);
    EXPECT_EQ(eval1("lshift(1,31)"), INT_MIN); // the bit pattern, as on hardware
    EXPECT_EQ(eval1("lshift(1,0)"), 1);
    EXPECT_EQ(eval1("xor(round(1.5),1)"), 3); // round yields an int, so this is allowed
    EXPECT_EQ(eval1("and(0w,-4)", {{4, 5, 7}}), 4);
}

// ---------------------------------------------------------------------------
// Literals

TEST(Expression, LiteralsBecomeIntWhenScanfIntAndFloatAgree)
{
    EXPECT_EQ(eval1("-1"), -1);
    EXPECT_EQ(eval1("+3"), 3);
    EXPECT_EQ(eval1("007"), 7);
    EXPECT_EQ(eval1("//(-7,2.0)"), -3); // "2.0" is an int, so C division
    EXPECT_EQ(eval1("//(-7,2.)"), -3);
    EXPECT_EQ(eval1("//(-7,200e-2)"), -4); // %d reads 200, %f 2: a float, so floorf(-3.5)
    EXPECT_EQ(eval1("//(-1e3,7)"), static_cast<int>(std::floor(-1000.0f / 7.0f))); // "1e3" is a float
    EXPECT_EQ(eval1("*(.5,4)"), 2);
    EXPECT_EQ(eval1("*(-.5,4)"), -2);
    EXPECT_EQ(eval1("*(2.5E1,2)"), 50);
    EXPECT_EQ(eval1("-2147483648"), INT_MIN);
    EXPECT_EQ(eval1("2147483647"), INT_MAX);
}

TEST(Expression, LiteralIntFloatTestComparesInFloat)
{
    // ncnn compares the %d value, converted to float, with the %f value.
    EXPECT_EQ(eval1("16777217"), 16777217); // exact int although float(16777217) = 16777216
    // %f rounds 16777217.5 to 16777218, %d reads 16777217 -> 16777216.f: float.
    EXPECT_EQ(eval1("16777217.5"), 16777218);
    // %f rounds 33554433.5 to 33554432 = float(33554433): so it is the int 33554433.
    EXPECT_EQ(eval1("33554433.5"), 33554433);
}

TEST(Expression, LiteralsOutOfFloatRange)
{
    EXPECT_EQ(eval1("min(1e40,3)"), 3);         // +inf
    EXPECT_EQ(eval1("max(-1e40,3)"), 3);        // -inf
    EXPECT_EQ(eval1("min(100000e35,3)"), 3);    // 1e40
    EXPECT_EQ(eval1("*(0.00001e40,0)"), 0);     // 1e35 fits
    EXPECT_EQ(eval1("1e-50"), 0);               // underflows to 0
    EXPECT_EQ(eval1("0.1e-45"), 0);
    expect_eval_error("1e40", {}, 0, "does not fit in int");
    expect_eval_error("100000e35", {}, 0, "does not fit in int");
}

TEST(Expression, WhiteSpaceAroundNumbersIsSkippedAsSscanfDoes)
{
    EXPECT_EQ(eval(" 7 "), List{7});
    EXPECT_EQ(eval("1, 2,\t3"), (List{1, 2, 3}));
}

// ---------------------------------------------------------------------------
// Structure: nesting, lists, separators

TEST(Expression, Nesting)
{
    EXPECT_EQ(eval1("+(*(-2,1),10)"), 8);
    EXPECT_EQ(eval1("max(2,3)"), 3);
    EXPECT_EQ(eval1("+(+(+(+(1,2),3),4),5)"), 15);
    EXPECT_EQ(eval1("-(-(10,-(4,1)),2)"), 5);
    EXPECT_EQ(eval1("*(+(0c,1c),2)", {{3, 4, 5}, {7, 8, 9}}), (3 + 7) * 2);
}

TEST(Expression, Lists)
{
    EXPECT_EQ(eval("1,2,+(3,2)"), (List{1, 2, 5}));
    EXPECT_EQ(eval("42"), List{42});
    EXPECT_EQ(eval("/(7,2),*(3,4),-5"), (List{3, 12, -5}));
    EXPECT_EQ(eval("1,2,"), (List{1, 2})); // empty tokens are dropped
    EXPECT_EQ(eval(",1"), List{1});
}

TEST(Expression, ParenthesesAreOnlySeparatorsAsInNcnn)
{
    // Arity comes from the operator name; parentheses group nothing.
    EXPECT_EQ(eval("+(1,2,3)"), (List{3, 3}));
    EXPECT_EQ(eval("+(1),2"), List{3});
    EXPECT_EQ(eval("+(1,2"), List{3});
    EXPECT_EQ(eval("max)1(2"), List{2});
    EXPECT_EQ(eval("+1,2"), (List{1, 2})); // "+1" is a literal
}

// ---------------------------------------------------------------------------
// Blob references

TEST(Expression, BlobDimsByRank)
{
    const std::string all = "0w,0h,0d,0c,0n";
    EXPECT_EQ(eval(all, {Shape{}}), (List{1, 1, 1, 1, 1}));
    EXPECT_EQ(eval(all, {{6}}), (List{6, 1, 1, 1, 1}));
    EXPECT_EQ(eval(all, {{5, 6}}), (List{6, 5, 1, 1, 1}));
    EXPECT_EQ(eval(all, {{4, 5, 6}}), (List{6, 5, 1, 4, 1})); // (c,h,w): no d
    EXPECT_EQ(eval(all, {{3, 4, 5, 6}}), (List{6, 5, 4, 3, 1}));
    EXPECT_EQ(eval(all, {{2, 3, 4, 5, 6}}), (List{6, 5, 4, 3, 2}));
    EXPECT_EQ(eval("0h,0w", {{0, 5}}), (List{0, 5}));
}

TEST(Expression, SeveralBlobs)
{
    const std::vector<Shape> blobs = {{2, 3}, {4, 5, 6}, {7, 8, 9, 10}};
    EXPECT_EQ(eval("0w,1h,2d,1c,0h,2w", blobs), (List{3, 5, 8, 4, 2, 10}));
    EXPECT_EQ(eval("*(0w,1w),+(2c,0h)", blobs), (List{18, 9}));

    std::vector<Shape> ten;
    for (int64_t i = 0; i < 10; i++) ten.push_back({i + 1});
    EXPECT_EQ(eval("9w,0w,5w", ten), (List{10, 1, 6}));
    EXPECT_EQ(Expression::parse("9w,0w,5w").blob_count(), 10);
}

TEST(Expression, ReshapeExample)
{
    // A and B are (c,h,w); the result is [w=-1, h=A.h*2, c=B.c+2].
    const Expression expr = Expression::parse("-1,*(0h,2),+(1c,2)");
    EXPECT_EQ(expr.blob_count(), 2);
    EXPECT_EQ(expr.text(), "-1,*(0h,2),+(1c,2)");
    EXPECT_EQ(expr.eval_list({{3, 4, 5}, {7, 8, 9}}), (List{-1, 8, 9}));
}

TEST(Expression, ParsedOnceEvaluatedManyTimes)
{
    const Expression expr = Expression::parse("*(0w,0h),//(0c,2)");
    for (int64_t c = 1; c <= 20; c++) {
        EXPECT_EQ(expr.eval_list({{c, c + 1, c + 2}}), (List{static_cast<int>((c + 2) * (c + 1)), static_cast<int>(c / 2)}));
    }
    const Expression copy = expr;
    EXPECT_EQ(copy.eval_list({{2, 3, 4}}), (List{12, 1}));
    EXPECT_EQ(copy.text(), expr.text());
    EXPECT_EQ(expr.eval_list({{4, 5, 6}, {1}}), (List{30, 2})); // extra blobs are fine
}

TEST(Expression, DefaultConstructedIsEmpty)
{
    const Expression expr;
    EXPECT_EQ(expr.blob_count(), 0);
    EXPECT_TRUE(expr.text().empty());
    EXPECT_TRUE(expr.eval_list({}).empty());
}

// ---------------------------------------------------------------------------
// ncnn-named helpers

TEST(Expression, CountExpressionBlobs)
{
    EXPECT_EQ(count_expression_blobs("0w,1h"), 2);
    EXPECT_EQ(count_expression_blobs("-1,*(0h,2),+(1c,2)"), 2);
    EXPECT_EQ(count_expression_blobs("1,2"), 0);
    EXPECT_EQ(count_expression_blobs("9n"), 10);
    EXPECT_EQ(count_expression_blobs("+(3w,0h)"), 4);
    EXPECT_EQ(count_expression_blobs("2d,2d"), 3);
    EXPECT_THROW(count_expression_blobs("foo"), Error);
}

TEST(Expression, EvalListExpressionAppends)
{
    List out{7};
    EXPECT_EQ(eval_list_expression("-1,*(0h,2),+(1c,2)", {{3, 4, 5}, {7, 8, 9}}, out), 0);
    EXPECT_EQ(out, (List{7, -1, 8, 9}));
    EXPECT_EQ(eval_list_expression("+(1,2)", {}, out), 0);
    EXPECT_EQ(out, (List{7, -1, 8, 9, 3}));
}

// ---------------------------------------------------------------------------
// Syntax errors: each names the expression and the 0-based token position

TEST(ExpressionSyntaxError, Empty)
{
    expect_syntax_error("", 0, "empty expression");
    expect_syntax_error(",(),,", 0, "empty expression");
}

TEST(ExpressionSyntaxError, TooFewOperands)
{
    expect_syntax_error("+(0w", 0, "operator '+' needs 2 operands");
    expect_syntax_error("1,abs()", 2, "operator 'abs' needs 1 operand");
    expect_syntax_error("*(2,+(1))", 4, "operator '+' needs 2 operands");
    expect_syntax_error("-", 0, "operator '-' needs 2 operands");
    expect_syntax_error("1,2,//", 4, "operator '//' needs 2 operands");
    expect_syntax_error("round()", 0, "operator 'round' needs 1 operand");
}

TEST(ExpressionSyntaxError, UnknownToken)
{
    expect_syntax_error("foo(1)", 0, "unknown token 'foo'");
    expect_syntax_error("MAX(1,2)", 0, "unknown token 'MAX'");
    expect_syntax_error("+(1,x)", 4, "unknown token 'x'");
    expect_syntax_error("+ (1,2)", 0, "unknown token '+ '");
    expect_syntax_error("inf", 0, "unknown token 'inf'");
    expect_syntax_error("+(1,nan)", 4, "unknown token 'nan'");
    expect_syntax_error("1, ,2", 2, "unknown token ' '");
    expect_syntax_error("--1", 0, "unknown token '--1'");
    expect_syntax_error("foo,bar", 4, "unknown token 'bar'"); // scanned right to left
}

TEST(ExpressionSyntaxError, MalformedNumber)
{
    expect_syntax_error("+(1,2x)", 4, "malformed number '2x'");
    expect_syntax_error("3abc", 0, "malformed number '3abc'");
    expect_syntax_error("1e", 0, "malformed number '1e'");
    expect_syntax_error("1.2.3", 0, "malformed number '1.2.3'");
    expect_syntax_error("0x10", 0, "malformed number '0x10'");
    expect_syntax_error("-0w", 0, "malformed number '-0w'");
    expect_syntax_error("0W", 0, "malformed number '0W'");
    expect_syntax_error("1 2", 0, "malformed number '1 2'");
    expect_syntax_error(".", 0, "malformed number '.'");
    expect_syntax_error("+(0w, 0h)", 5, "malformed number ' 0h'"); // blob refs take no spaces
}

TEST(ExpressionSyntaxError, BlobIndexOutOfRange)
{
    expect_syntax_error("10w", 0, "blob reference '10w' out of range");
    expect_syntax_error("+(1,12h)", 4, "blob reference '12h' out of range");
}

TEST(ExpressionSyntaxError, BitwiseOperatorOnFloat)
{
    expect_syntax_error("and(1.5,2)", 0, "operator 'and' needs integer operands");
    expect_syntax_error("or(1,/(4,2))", 0, "operator 'or' needs integer operands");
    expect_syntax_error("lshift(1,sqrt(4))", 0, "operator 'lshift' needs integer operands");
    expect_syntax_error("rshift(neg(2.5),1)", 0, "operator 'rshift' needs integer operands");
    expect_syntax_error("+(1,xor(2,0.5))", 4, "operator 'xor' needs integer operands");
}

// ---------------------------------------------------------------------------
// Evaluation errors

TEST(ExpressionEvalError, MissingBlob)
{
    expect_eval_error("0w,3h", {{1}, {2}}, 3, "blob 3 referenced but only 2");
    expect_eval_error("0w", {}, 0, "blob 0 referenced but only 0");
}

TEST(ExpressionEvalError, UnsupportedShape)
{
    expect_eval_error("1,0w", {{1, 2, 3, 4, 5, 6}}, 2, "rank 6");
    expect_eval_error("0w", {{int64_t{3000000000}}}, 0, "does not fit in int");
    expect_eval_error("0c", {{int64_t{-3000000000}, 1, 1}}, 0, "does not fit in int");
}

TEST(ExpressionEvalError, IntegerDivision)
{
    expect_eval_error("//(1,0)", {}, 0, "division by zero");
    expect_eval_error("+(1,//(1,0))", {}, 4, "division by zero");
    expect_eval_error("//(-2147483648,-1)", {}, 0, "overflow");
}

TEST(ExpressionEvalError, IntegerOverflow)
{
    expect_eval_error("+(2147483647,1)", {}, 0, "integer overflow in '+'");
    expect_eval_error("-(-2147483648,1)", {}, 0, "integer overflow in '-'");
    expect_eval_error("*(65536,65536)", {}, 0, "integer overflow in '*'");
    expect_eval_error("abs(-2147483648)", {}, 0, "integer overflow in 'abs'");
    expect_eval_error("neg(-2147483648)", {}, 0, "integer overflow in 'neg'");
    expect_eval_error("square(46341)", {}, 0, "integer overflow in 'square'");
    expect_eval_error("1,*(0w,0h)", {{100000, 100000}}, 2, "integer overflow in '*'");
}

TEST(ExpressionEvalError, ShiftOutOfRange)
{
    expect_eval_error("lshift(1,32)", {}, 0, "shift amount 32");
    expect_eval_error("lshift(1,-1)", {}, 0, "shift amount -1");
    expect_eval_error("rshift(1,32)", {}, 0, "shift amount 32");
    expect_eval_error("rshift(1,-1)", {}, 0, "shift amount -1");
}

TEST(ExpressionEvalError, FloatToIntConversion)
{
    expect_eval_error("/(1,0)", {}, 0, "does not fit in int");
    expect_eval_error("/(0,0)", {}, 0, "NaN");
    expect_eval_error("sqrt(-1)", {}, 0, "NaN");
    expect_eval_error("log(0)", {}, 0, "does not fit in int");
    expect_eval_error("trunc(/(1,0))", {}, 0, "does not fit in int");
    expect_eval_error("ceil(3e9)", {}, 0, "does not fit in int");
    expect_eval_error("floor(-3e9)", {}, 0, "does not fit in int");
    expect_eval_error("round(/(0,0))", {}, 0, "NaN");
    expect_eval_error("3000000000", {}, 0, "does not fit in int");
    expect_eval_error("1,2147483648", {}, 2, "does not fit in int");
    expect_eval_error("1,/(1,0)", {}, 2, "does not fit in int");
    expect_eval_error("//(1.5,0)", {}, 0, "does not fit in int"); // floorf(inf)
    // Just inside the range: -2147483648.5f rounds to -2^31, which fits.
    EXPECT_EQ(eval1("trunc(-2147483648.5)"), INT_MIN);
    EXPECT_EQ(eval1("trunc(-2147483520.5)"), static_cast<int>(-2147483520.5f));
}

} // namespace
} // namespace kestrel
