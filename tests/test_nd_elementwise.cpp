// Element-wise layers in their typed forms (src/ops/elementwise/): BinaryOp
// 21=1 (binary, comparison, logic, bitwise, shift, PRelu), UnaryOp 21=1, Where
// and Eltwise 21=1 (variadic Sum/Mean/Max/Min), over every dtype they take,
// with numpy broadcasting.
// Expected values come from naive code written here: numpy broadcasting by
// index arithmetic, integer ops in 128-bit arithmetic reduced modulo 2^bits,
// float ops in long double from the ONNX formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/thread_pool.h"
#include "kestrel/kestrel.h"
#include "layer_test_util.h"
#include "test_helpers.h"
#if defined(KESTREL_HAVE_ONNX)
#include "kestrel/onnx.h"
#include "onnx/onnx_pb.h"
#endif

using namespace kestrel;

namespace {

using kestrel::layer_test::error_of;

// ---------------------------------------------------------------------------
// dtypes and tensors

template <class T> DType dt();
template <> DType dt<float>() { return DType::F32; }
template <> DType dt<double>() { return DType::F64; }
template <> DType dt<int8_t>() { return DType::I8; }
template <> DType dt<uint8_t>() { return DType::U8; }
template <> DType dt<int16_t>() { return DType::I16; }
template <> DType dt<uint16_t>() { return DType::U16; }
template <> DType dt<int32_t>() { return DType::I32; }
template <> DType dt<uint32_t>() { return DType::U32; }
template <> DType dt<int64_t>() { return DType::I64; }
template <> DType dt<uint64_t>() { return DType::U64; }
template <> DType dt<bool>() { return DType::Bool; }

template <class T> const char* dt_name() { return dtype_name(dt<T>()); }

template <class T> Tensor make(const Shape& s, const std::vector<T>& v)
{
    Tensor t(s, dt<T>());
    EXPECT_EQ(static_cast<size_t>(t.numel()), v.size());
    for (size_t i = 0; i < v.size(); ++i) t.data<T>()[i] = v[i];
    return t;
}
template <class T> std::vector<T> vals(const Tensor& t)
{
    EXPECT_EQ(t.dtype(), dt<T>());
    return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

// float16 / bfloat16 tensors from floats (reference conversions from test_helpers.h / the definition).
uint16_t bf16_ref(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
    const uint32_t rest = u & 0xffffu, keep = u >> 16;
    if (rest > 0x8000u || (rest == 0x8000u && (keep & 1))) return static_cast<uint16_t>(keep + 1);
    return static_cast<uint16_t>(keep);
}
float bf16_to_f(uint16_t b)
{
    const uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
Tensor make_half(DType t, const Shape& s, const std::vector<float>& v)
{
    Tensor r(s, t);
    for (size_t i = 0; i < v.size(); ++i)
        r.data<uint16_t>()[i] = t == DType::F16 ? ktest::float_to_half_ref(v[i]) : bf16_ref(v[i]);
    return r;
}
float half_at(const Tensor& t, int64_t i)
{
    const uint16_t b = t.data<uint16_t>()[i];
    return t.dtype() == DType::F16 ? ktest::half_to_float_ref(b) : bf16_to_f(b);
}
float round_half(DType t, float f)
{
    return t == DType::F16 ? ktest::half_to_float_ref(ktest::float_to_half_ref(f)) : bf16_to_f(bf16_ref(f));
}

// ---------------------------------------------------------------------------
// running one layer

ThreadPool& pool()
{
    static ThreadPool p(2);
    return p;
}

std::vector<Tensor> run_all(const std::string& type, const ParamDict& pd, const std::vector<Tensor>& in, int threads = 1,
                            size_t n_out = 1)
{
    auto op = create_op(type);
    if (!op) throw std::runtime_error("no layer type " + type);
    op->load_param(pd);
    std::vector<TensorDesc> d;
    for (const Tensor& t : in) d.emplace_back(t.shape(), t.dtype());
    std::vector<TensorDesc> od(n_out);
    op->infer(d, od);
    std::vector<Tensor> out;
    for (const TensorDesc& o : od) out.emplace_back(o.shape, o.dtype);
    op->run(in, out, ExecContext(threads > 1 ? &pool() : nullptr, threads));
    return out;
}
Tensor run(const std::string& type, const ParamDict& pd, const std::vector<Tensor>& in, int threads = 1)
{
    return run_all(type, pd, in, threads)[0];
}
// BinaryOp's / UnaryOp's typed op table.
ParamDict op_param(int op)
{
    ParamDict pd;
    pd.set_int(21, 1);
    pd.set_int(0, op);
    return pd;
}
// Eltwise's typed form for ONNX's Sum, Max, Min, Mean.
ParamDict eltwise_param(const std::string& type)
{
    ParamDict pd;
    pd.set_int(21, 1);
    pd.set_int(0, type == "Sum" ? 1 : type == "Max" ? 2 : type == "Min" ? 3 : 4);
    return pd;
}
// ---------------------------------------------------------------------------
// numpy broadcasting, by index arithmetic

Shape np_shape(const std::vector<Shape>& shapes)
{
    size_t r = 0;
    for (const Shape& s : shapes) r = std::max(r, s.size());
    Shape out(r, 1);
    for (const Shape& s : shapes)
        for (size_t i = 0; i < s.size(); ++i) {
            int64_t& o = out[r - s.size() + i];
            if (o == 1) o = s[i];
            else if (s[i] != 1 && s[i] != o) throw std::runtime_error("not broadcastable");
        }
    return out;
}

// Element of an input of shape `in` that output element `flat` reads.
int64_t src(const Shape& out, const Shape& in, int64_t flat)
{
    std::vector<int64_t> coord(out.size());
    for (size_t k = out.size(); k-- > 0;) {
        coord[k] = flat % out[k];
        flat /= out[k];
    }
    int64_t idx = 0, stride = 1;
    for (size_t j = in.size(); j-- > 0;) {
        const size_t k = out.size() - in.size() + j;
        idx += (in[j] == 1 ? 0 : coord[k]) * stride;
        stride *= in[j];
    }
    return idx;
}

// Shape pairs covering same shape, scalar, per-channel, per-row, both sides stretched, rank 5.
const std::vector<std::pair<Shape, Shape>>& shape_pairs()
{
    static const std::vector<std::pair<Shape, Shape>> p = {
        {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {}},     {{}, {3, 4}},           {{3, 5, 7}, {3, 1, 1}},
        {{2, 3, 4}, {4}},       {{3, 1}, {1, 4}},    {{2, 1, 3, 1, 2}, {4, 1, 1, 2}}, {{5}, {1}},
        {{0, 3}, {3}},          {{1}, {2, 2, 1}},
    };
    return p;
}

// ---------------------------------------------------------------------------
// value generators

template <class T> std::vector<T> gen(size_t n, uint32_t seed, int lo = -40, int hi = 40)
{
    std::mt19937 rng(seed);
    std::vector<T> v(n);
    if constexpr (std::is_same_v<T, bool>) {
        for (auto&& x : v) x = (rng() & 1) != 0;
    } else if constexpr (std::is_floating_point_v<T>) {
        std::uniform_int_distribution<int> d(lo * 4, hi * 4); // quarter steps: exact values
        for (auto& x : v) x = static_cast<T>(d(rng)) / T(4);
    } else {
        const int l = std::is_signed_v<T> ? lo : 0;
        std::uniform_int_distribution<int> d(l, hi);
        for (auto& x : v) x = static_cast<T>(d(rng));
        // extremes and small divisors at fixed spots
        const T special[] = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(0), static_cast<T>(-1)};
        for (size_t i = 0; i < n && i < 4; ++i) v[(i * 7 + seed) % n] = special[i];
    }
    return v;
}

// ---------------------------------------------------------------------------
// integer references: exact 128-bit arithmetic reduced modulo 2^bits

template <class T> using Wide = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
template <class T> T wrap(Wide<T> v) { return static_cast<T>(static_cast<unsigned __int128>(v) & ~static_cast<unsigned __int128>(0)); }

template <class T> T int_pow_ref(T a, T b)
{
    if constexpr (std::is_signed_v<T>) {
        if (b < 0) return a == 1 ? T(1) : (a == -1 ? (b % 2 == 0 ? T(1) : T(-1)) : T(0));
    }
    T r = 1;
    for (T i = 0; i < b; ++i) r = wrap<T>(static_cast<Wide<T>>(r) * a);
    return r;
}

enum BinOp {
    ADD = 0, SUB, MUL, DIV, POW, MOD, FMOD, MAX, MIN, SHL, SHR, EQ, GT, GE, LT, LE, AND, OR, XOR, BAND, BOR, BXOR,
    PRELU, NE
};

template <class T> T ref_int(int op, T a, T b)
{
    using W = Wide<T>;
    const W wa = a, wb = b;
    switch (op) {
    case ADD: return wrap<T>(wa + wb);
    case SUB: return wrap<T>(wa - wb);
    case MUL: return wrap<T>(wa * wb);
    case DIV: return b == 0 ? T(0) : wrap<T>(wa / wb); // 128-bit: INT_MIN / -1 does not overflow
    case FMOD: return b == 0 ? T(0) : wrap<T>(wa % wb);
    case MOD: {
        if (b == 0) return T(0);
        W q = wa / wb;
        if (wa % wb != 0 && ((wa < 0) != (wb < 0))) q -= 1; // floor division
        return wrap<T>(wa - q * wb);
    }
    case MAX: return a > b ? a : b;
    case MIN: return a < b ? a : b;
    case POW: return int_pow_ref(a, b);
    case BAND: return static_cast<T>(a & b);
    case BOR: return static_cast<T>(a | b);
    case BXOR: return static_cast<T>(a ^ b);
    case SHL: return static_cast<uint64_t>(b) >= sizeof(T) * 8 ? T(0) : wrap<T>(wa << static_cast<int>(b));
    case SHR: return static_cast<uint64_t>(b) >= sizeof(T) * 8 ? T(0) : static_cast<T>(a >> b);
    case PRELU: return (std::is_signed_v<T> && wa < 0) ? wrap<T>(wa * wb) : a;
    }
    throw std::runtime_error("bad op");
}

// floats: the ONNX / numpy definitions in long double
template <class T> T ref_float(int op, T a, T b)
{
    using L = long double;
    const L x = a, y = b;
    const L nan = std::numeric_limits<L>::quiet_NaN();
    switch (op) {
    case ADD: return static_cast<T>(x + y);
    case SUB: return static_cast<T>(x - y);
    case MUL: return static_cast<T>(x * y);
    case DIV: return static_cast<T>(x / y);
    case POW: return static_cast<T>(std::pow(x, y));
    case FMOD: return static_cast<T>(y == 0 || std::isinf(x) ? nan : x - std::trunc(x / y) * y);
    case MOD: return static_cast<T>(y == 0 || std::isinf(x) ? nan : x - std::floor(x / y) * y);
    case MAX: return std::isnan(a) || std::isnan(b) ? static_cast<T>(nan) : (a > b ? a : b);
    case MIN: return std::isnan(a) || std::isnan(b) ? static_cast<T>(nan) : (a < b ? a : b);
    case PRELU: return a < 0 ? static_cast<T>(x * y) : a;
    }
    throw std::runtime_error("bad op");
}

bool ref_cmp(int op, long double a, long double b)
{
    switch (op) {
    case EQ: return a == b;
    case NE: return a != b;
    case GT: return a > b;
    case GE: return a >= b;
    case LT: return a < b;
    case LE: return a <= b;
    }
    throw std::runtime_error("bad op");
}

template <class T> bool same_value(T got, T want, double rtol)
{
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(want)) return std::isnan(got);
        if (got == want) return true;
        return std::fabs(static_cast<double>(got) - static_cast<double>(want)) <= rtol * std::fabs(static_cast<double>(want));
    } else {
        return got == want;
    }
}

// Runs Elementwise `op` on a, b (numpy broadcast) and compares with ref(a_i, b_i).
template <class T, class TO, class Ref>
void check_binary(int op, const Shape& sa, const Shape& sb, const std::vector<T>& a, const std::vector<T>& b, Ref ref,
                  double rtol = 0, int threads = 1)
{
    const Tensor out = run("BinaryOp", op_param(op), {make(sa, a), make(sb, b)}, threads);
    const Shape os = np_shape({sa, sb});
    ASSERT_EQ(out.shape(), os) << "op " << op;
    ASSERT_EQ(out.dtype(), dt<TO>()) << "op " << op;
    const std::vector<TO> got = vals<TO>(out);
    for (int64_t i = 0; i < out.numel(); ++i) {
        const T x = a[src(os, sa, i)], y = b[src(os, sb, i)];
        const TO want = ref(x, y);
        ASSERT_TRUE(same_value<TO>(got[i], want, rtol))
            << "op " << op << " " << dt_name<T>() << " " << shape_str(sa) << " " << shape_str(sb) << " at " << i
            << ": f(" << +x << ", " << +y << ") = " << +got[i] << ", expected " << +want;
    }
}

// ---------------------------------------------------------------------------
// typed test over the native dtypes

template <class T> class NdElementwiseTyped : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>;
TYPED_TEST_SUITE(NdElementwiseTyped, NumericTypes);

TYPED_TEST(NdElementwiseTyped, ArithmeticBroadcast)
{
    using T = TypeParam;
    uint32_t seed = 1;
    for (const auto& [sa, sb] : shape_pairs()) {
        const auto a = gen<T>(static_cast<size_t>(shape_numel(sa)), seed++);
        const auto b = gen<T>(static_cast<size_t>(shape_numel(sb)), seed++);
        for (int op : {ADD, SUB, MUL, DIV, MOD, FMOD, MAX, MIN}) {
            if constexpr (std::is_floating_point_v<T>) {
                const double rtol = (op == MOD || op == FMOD || op == DIV) ? 1e-6 : 0.0; // long double rounding
                check_binary<T, T>(op, sa, sb, a, b, [op](T x, T y) { return ref_float<T>(op, x, y); }, rtol);
            } else {
                check_binary<T, T>(op, sa, sb, a, b, [op](T x, T y) { return ref_int<T>(op, x, y); });
            }
        }
    }
}

TYPED_TEST(NdElementwiseTyped, PowSameType)
{
    using T = TypeParam;
    const Shape sa{3, 4}, sb{4};
    const auto a = gen<T>(12, 5, -6, 6);
    const auto b = gen<T>(4, 6, std::is_floating_point_v<T> ? -2 : -3, 7);
    std::vector<T> bb = b;
    if constexpr (!std::is_floating_point_v<T>)
        for (auto& e : bb) { // keep exponents small for the reference loop (extremes come from gen)
            if (e > T(9)) e = T(9);
            if constexpr (std::is_signed_v<T>)
                if (e < T(-3)) e = T(9);
        }
    if constexpr (std::is_floating_point_v<T>)
        check_binary<T, T>(POW, sa, sb, a, bb, [](T x, T y) { return ref_float<T>(POW, x, y); }, 1e-6);
    else
        check_binary<T, T>(POW, sa, sb, a, bb, [](T x, T y) { return ref_int<T>(POW, x, y); });
}

TYPED_TEST(NdElementwiseTyped, ComparisonsGiveBool)
{
    using T = TypeParam;
    uint32_t seed = 40;
    for (const auto& [sa, sb] : shape_pairs()) {
        auto a = gen<T>(static_cast<size_t>(shape_numel(sa)), seed++, -3, 3);
        auto b = gen<T>(static_cast<size_t>(shape_numel(sb)), seed++, -3, 3);
        if constexpr (std::is_floating_point_v<T>) { // NaN compares false (NotEqual: true)
            if (!a.empty()) a[0] = std::numeric_limits<T>::quiet_NaN();
            if (b.size() > 1) b[1] = std::numeric_limits<T>::quiet_NaN();
        }
        for (int op : {EQ, NE, GT, GE, LT, LE})
            check_binary<T, bool>(op, sa, sb, a, b, [op](T x, T y) {
                return ref_cmp(op, static_cast<long double>(x), static_cast<long double>(y));
            });
    }
}

TYPED_TEST(NdElementwiseTyped, PReluUnidirectional)
{
    using T = TypeParam;
    for (const Shape& ss : {Shape{5}, Shape{3, 1, 1}, Shape{}, Shape{3, 4, 5}, Shape{1, 5}}) {
        const Shape sx{3, 4, 5};
        const auto x = gen<T>(60, 9);
        const auto s = gen<T>(static_cast<size_t>(shape_numel(ss)), 10, -3, 3);
        ParamDict pd = op_param(PRELU);
        pd.set_int(20, 2);
        const Tensor out = run("BinaryOp", pd, {make(sx, x), make(ss, s)});
        ASSERT_EQ(out.shape(), sx);
        const auto got = vals<T>(out);
        for (int64_t i = 0; i < 60; ++i) {
            T want;
            if constexpr (std::is_floating_point_v<T>) want = ref_float<T>(PRELU, x[i], s[src(sx, ss, i)]);
            else want = ref_int<T>(PRELU, x[i], s[src(sx, ss, i)]);
            ASSERT_EQ(got[i], want) << shape_str(ss) << " " << i;
        }
    }
    // the slope may not be larger than X
    ParamDict pd = op_param(PRELU);
    pd.set_int(20, 2);
    EXPECT_THROW(run("BinaryOp", pd, {make<T>({5}, gen<T>(5, 1)), make<T>({2, 5}, gen<T>(10, 2))}), Error);
}

TYPED_TEST(NdElementwiseTyped, VariadicSumMaxMin)
{
    using T = TypeParam;
    const std::vector<Shape> shapes = {{3, 1}, {4}, {2, 1, 1}, {}};
    std::vector<std::vector<T>> v;
    for (size_t i = 0; i < shapes.size(); ++i) v.push_back(gen<T>(static_cast<size_t>(shape_numel(shapes[i])), 70 + i));
    if constexpr (std::is_floating_point_v<T>) v[1][2] = std::numeric_limits<T>::quiet_NaN();
    for (const char* type : {"Sum", "Max", "Min"}) {
        const int op = std::string(type) == "Sum" ? ADD : (std::string(type) == "Max" ? MAX : MIN);
        for (size_t n = 1; n <= shapes.size(); ++n) {
            std::vector<Tensor> in;
            std::vector<Shape> ss(shapes.begin(), shapes.begin() + static_cast<long>(n));
            for (size_t i = 0; i < n; ++i) in.push_back(make(shapes[i], v[i]));
            const Tensor out = run("Eltwise", eltwise_param(type), in, 2);
            const Shape os = np_shape(ss);
            ASSERT_EQ(out.shape(), os);
            const auto got = vals<T>(out);
            for (int64_t e = 0; e < out.numel(); ++e) {
                T want = v[0][src(os, ss[0], e)];
                for (size_t i = 1; i < n; ++i) {
                    const T x = v[i][src(os, ss[i], e)];
                    if constexpr (std::is_floating_point_v<T>) want = ref_float<T>(op, want, x);
                    else want = ref_int<T>(op, want, x);
                }
                ASSERT_TRUE(same_value<T>(got[e], want, 0)) << type << " n=" << n << " at " << e;
            }
        }
    }
}

TYPED_TEST(NdElementwiseTyped, WhereThreeWayBroadcast)
{
    using T = TypeParam;
    const Shape sc{2, 1, 4}, sx{3, 1}, sy{};
    const auto c = gen<bool>(8, 3);
    const auto x = gen<T>(3, 4), y = gen<T>(1, 5);
    const Tensor out = run("Where", ParamDict(), {make(sc, c), make(sx, x), make(sy, y)});
    const Shape os{2, 3, 4};
    ASSERT_EQ(out.shape(), os);
    const auto got = vals<T>(out);
    for (int64_t i = 0; i < 24; ++i)
        ASSERT_EQ(got[i], c[src(os, sc, i)] ? x[src(os, sx, i)] : y[0]) << i;
}

// ---------------------------------------------------------------------------
// integer edge cases

template <class T> void int_edges()
{
    constexpr T mn = std::numeric_limits<T>::min(), mx = std::numeric_limits<T>::max();
    const std::vector<T> a = {mn, mn, 7, -7, 7, -7, mx, 0, 5, mn};
    const std::vector<T> b = {static_cast<T>(-1), 0, 0, 0, -2, 2, static_cast<T>(-1), 0, 3, mn};
    const Shape s{10};
    // division: INT_MIN / -1 == INT_MIN (wraps), x / 0 == 0
    EXPECT_EQ(vals<T>(run("BinaryOp", op_param(DIV), {make(s, a), make(s, b)})),
              (std::vector<T>{mn, 0, 0, 0, -3, -3, static_cast<T>(-mx), 0, 1, 1}));
    // Python mod (sign of the divisor): 7 % -2 == -1, -7 % 2 == 1; x % 0 == 0; INT_MIN % -1 == 0
    EXPECT_EQ(vals<T>(run("BinaryOp", op_param(MOD), {make(s, a), make(s, b)})),
              (std::vector<T>{0, 0, 0, 0, -1, 1, 0, 0, 2, 0}));
    // C fmod (sign of the dividend): 7 % -2 == 1, -7 % 2 == -1
    EXPECT_EQ(vals<T>(run("BinaryOp", op_param(FMOD), {make(s, a), make(s, b)})),
              (std::vector<T>{0, 0, 0, 0, 1, -1, 0, 0, 2, 0}));
    // abs / neg of INT_MIN wrap to INT_MIN
    EXPECT_EQ(vals<T>(run("UnaryOp", op_param(0), {make<T>({3}, {mn, -5, 5})})), (std::vector<T>{mn, 5, 5}));
    EXPECT_EQ(vals<T>(run("UnaryOp", op_param(1), {make<T>({3}, {mn, -5, 5})})), (std::vector<T>{mn, 5, -5}));
}

TEST(NdElementwise, IntegerDivModByZeroAndIntMin)
{
    int_edges<int8_t>();
    int_edges<int16_t>();
    int_edges<int32_t>();
    int_edges<int64_t>();
    // unsigned: x / 0 == 0, x % 0 == 0
    const Shape s{3};
    EXPECT_EQ(vals<uint32_t>(run("BinaryOp", op_param(DIV), {make<uint32_t>(s, {7, 0, 9}), make<uint32_t>(s, {0, 0, 2})})),
              (std::vector<uint32_t>{0, 0, 4}));
    EXPECT_EQ(vals<uint64_t>(run("BinaryOp", op_param(MOD), {make<uint64_t>(s, {7, 0, 9}), make<uint64_t>(s, {0, 0, 2})})),
              (std::vector<uint64_t>{0, 0, 1}));
}

TEST(NdElementwise, FloatDivModNaNInf)
{
    const Shape s{6};
    const float inf = INFINITY;
    const auto a = make<float>(s, {1.f, -1.f, 0.f, 5.5f, -5.5f, inf});
    const auto b = make<float>(s, {0.f, 0.f, 0.f, -2.f, 2.f, 2.f});
    const auto d = vals<float>(run("BinaryOp", op_param(DIV), {a, b}));
    EXPECT_EQ(d[0], inf);
    EXPECT_EQ(d[1], -inf);
    EXPECT_TRUE(std::isnan(d[2]));
    const auto m = vals<float>(run("BinaryOp", op_param(MOD), {a, b})); // Python: sign of divisor
    EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[2]) && std::isnan(m[5]));
    EXPECT_EQ(m[3], -0.5f);
    EXPECT_EQ(m[4], 0.5f);
    const auto f = vals<float>(run("BinaryOp", op_param(FMOD), {a, b})); // C: sign of dividend
    EXPECT_EQ(f[3], 1.5f);
    EXPECT_EQ(f[4], -1.5f);
    // Max / Min propagate NaN from either side (numpy maximum / minimum)
    const auto na = make<float>({3}, {NAN, 1.f, 2.f}), nb = make<float>({3}, {1.f, NAN, 1.f});
    for (int op : {MAX, MIN}) {
        const auto r = vals<float>(run("BinaryOp", op_param(op), {na, nb}));
        EXPECT_TRUE(std::isnan(r[0]) && std::isnan(r[1])) << op;
        EXPECT_EQ(r[2], op == MAX ? 2.f : 1.f);
    }
}

// ---------------------------------------------------------------------------
// logic and bitwise

TEST(NdElementwise, LogicBool)
{
    uint32_t seed = 100;
    for (const auto& [sa, sb] : shape_pairs()) {
        const auto a = gen<bool>(static_cast<size_t>(shape_numel(sa)), seed++);
        const auto b = gen<bool>(static_cast<size_t>(shape_numel(sb)), seed++);
        check_binary<bool, bool>(AND, sa, sb, a, b, [](bool x, bool y) { return x && y; });
        check_binary<bool, bool>(OR, sa, sb, a, b, [](bool x, bool y) { return x || y; });
        check_binary<bool, bool>(XOR, sa, sb, a, b, [](bool x, bool y) { return x != y; });
        check_binary<bool, bool>(EQ, sa, sb, a, b, [](bool x, bool y) { return x == y; });
    }
    const auto v = gen<bool>(17, 3);
    const auto n = vals<bool>(run("UnaryOp", op_param(36), {make<bool>({17}, v)}));
    for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(n[i], !v[i]);
    // logic ops take bool only; bitwise ops integers only
    const std::string m = error_of([] { run("BinaryOp", op_param(AND), {make<int32_t>({1}, {1}), make<int32_t>({1}, {1})}); });
    EXPECT_NE(m.find("And"), std::string::npos) << m;
    EXPECT_NE(m.find("int32"), std::string::npos) << m;
    EXPECT_THROW(run("BinaryOp", op_param(BAND), {make<float>({1}, {1}), make<float>({1}, {1})}), Error);
    EXPECT_THROW(run("BinaryOp", op_param(ADD), {make<bool>({1}, {true}), make<bool>({1}, {true})}), Error);
}

template <class T> void bitwise_for()
{
    const Shape sa{4, 3}, sb{3};
    const auto a = gen<T>(12, 11), b = gen<T>(3, 12);
    for (int op : {BAND, BOR, BXOR}) check_binary<T, T>(op, sa, sb, a, b, [op](T x, T y) { return ref_int<T>(op, x, y); });
    const auto n = vals<T>(run("UnaryOp", op_param(37), {make<T>(sa, a)}));
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(n[i], static_cast<T>(~a[i]));
}

template <class T> void shifts_for()
{
    const int bits = sizeof(T) * 8;
    std::vector<T> a, b;
    for (int s : {0, 1, 3, bits - 1, bits, bits + 1, 200 % 256}) {
        a.push_back(static_cast<T>(0xA5A5A5A5A5A5A5A5ull));
        b.push_back(static_cast<T>(s));
    }
    const Shape s{static_cast<int64_t>(a.size())};
    check_binary<T, T>(SHL, s, s, a, b, [](T x, T y) { return ref_int<T>(SHL, x, y); });
    check_binary<T, T>(SHR, s, s, a, b, [](T x, T y) { return ref_int<T>(SHR, x, y); });
    // broadcast: one shift amount for all
    check_binary<T, T>(SHL, s, {}, a, {T(2)}, [](T x, T y) { return ref_int<T>(SHL, x, y); });
}

TEST(NdElementwise, BitwiseAndShifts)
{
    bitwise_for<int8_t>();
    bitwise_for<uint16_t>();
    bitwise_for<int32_t>();
    bitwise_for<uint64_t>();
    shifts_for<uint8_t>();
    shifts_for<uint16_t>();
    shifts_for<uint32_t>();
    shifts_for<uint64_t>();
    // BitShift is ONNX's unsigned-only op
    EXPECT_THROW(run("BinaryOp", op_param(SHL), {make<int32_t>({1}, {1}), make<int32_t>({1}, {1})}), Error);
}

// ---------------------------------------------------------------------------
// Pow with mixed dtypes (ONNX Pow-12+: exponent of any numeric dtype, result has the base's)

TEST(NdElementwise, PowMixedTypes)
{
    // int32 base, float exponent: computed in floating point, truncated to int32 (numpy .astype)
    {
        const Tensor out = run("BinaryOp", op_param(POW),
                               {make<int32_t>({4}, {2, 3, 9, -8}), make<float>({4}, {0.5f, 2.f, 0.5f, 1.f})});
        EXPECT_EQ(out.dtype(), DType::I32);
        EXPECT_EQ(vals<int32_t>(out), (std::vector<int32_t>{1, 9, 3, -8}));
    }
    // float base, int64 exponent
    {
        const Tensor out =
            run("BinaryOp", op_param(POW), {make<float>({2, 2}, {1.5f, -2.f, 0.5f, 3.f}), make<int64_t>({2}, {2, -3})});
        EXPECT_EQ(out.dtype(), DType::F32);
        const auto v = vals<float>(out);
        EXPECT_FLOAT_EQ(v[0], 2.25f);
        EXPECT_FLOAT_EQ(v[1], -0.125f);
        EXPECT_FLOAT_EQ(v[2], 0.25f);
        EXPECT_FLOAT_EQ(v[3], 1.f / 27.f);
    }
    // int64 base, int32 exponent: exact integer power with wrap-around
    {
        const Tensor out = run("BinaryOp", op_param(POW),
                               {make<int64_t>({3}, {3, 2, -1}), make<int32_t>({3}, {39, 64, -3})});
        EXPECT_EQ(vals<int64_t>(out), (std::vector<int64_t>{int_pow_ref<int64_t>(3, 39), 0, -1}));
    }
    // uint8 base, double exponent
    {
        const Tensor out = run("BinaryOp", op_param(POW), {make<uint8_t>({2}, {4, 2}), make<double>({2}, {1.5, 10})});
        EXPECT_EQ(vals<uint8_t>(out), (std::vector<uint8_t>{8, 255})); // 1024 saturates
    }
    // the exponent must be numeric; other ops need one dtype
    EXPECT_THROW(run("BinaryOp", op_param(POW), {make<float>({1}, {1}), make<bool>({1}, {true})}), Error);
    const std::string m =
        error_of([] { run("BinaryOp", op_param(ADD), {make<float>({1}, {1}), make<int32_t>({1}, {1})}); });
    EXPECT_NE(m.find("float32"), std::string::npos) << m;
    EXPECT_NE(m.find("int32"), std::string::npos) << m;
}

// ---------------------------------------------------------------------------
// unary ops: ONNX formulas in long double

struct UnaryCase {
    int op;
    const char* name;
    std::function<long double(long double)> f;
    long double lo, hi; // input range
    float alpha = 0.f, beta = 0.f;
    int fa = -1, fb = -1;
};

long double erf_ld(long double x) { return std::erf(x); }

std::vector<UnaryCase> unary_cases()
{
    using L = long double;
    const L selu_a = 1.67326319217681884765625L, selu_g = 1.05070102214813232421875L;
    return {
        {0, "Abs", [](L x) { return x < 0 ? -x : x; }, -5, 5},
        {1, "Neg", [](L x) { return -x; }, -5, 5},
        {2, "Floor", [](L x) { return std::floor(x); }, -5, 5},
        {3, "Ceil", [](L x) { return std::ceil(x); }, -5, 5},
        {5, "Sqrt", [](L x) { return std::sqrt(x); }, 0, 9},
        {6, "Reciprocal", [](L x) { return 1 / x; }, 0.1L, 9},
        {7, "Exp", [](L x) { return std::exp(x); }, -5, 5},
        {8, "Log", [](L x) { return std::log(x); }, 0.05L, 9},
        {9, "Sin", [](L x) { return std::sin(x); }, -3, 3},
        {10, "Cos", [](L x) { return std::cos(x); }, -3, 3},
        {11, "Tan", [](L x) { return std::tan(x); }, -1.2L, 1.2L},
        {12, "Asin", [](L x) { return std::asin(x); }, -0.99L, 0.99L},
        {13, "Acos", [](L x) { return std::acos(x); }, -0.99L, 0.99L},
        {14, "Atan", [](L x) { return std::atan(x); }, -5, 5},
        {15, "Sinh", [](L x) { return (std::exp(x) - std::exp(-x)) / 2; }, -4, 4},
        {16, "Cosh", [](L x) { return (std::exp(x) + std::exp(-x)) / 2; }, -4, 4},
        {17, "Asinh", [](L x) { return std::log(x + std::sqrt(x * x + 1)); }, -4, 4},
        {18, "Acosh", [](L x) { return std::log(x + std::sqrt(x * x - 1)); }, 1, 6},
        {19, "Atanh", [](L x) { return std::log((1 + x) / (1 - x)) / 2; }, -0.9L, 0.9L},
        {20, "Erf", erf_ld, -3, 3},
        {21, "Sign", [](L x) { return x > 0 ? L(1) : (x < 0 ? L(-1) : L(0)); }, -3, 3},
        {24, "Softsign", [](L x) { return x / (1 + (x < 0 ? -x : x)); }, -5, 5},
        {25, "Softplus", [](L x) { return std::log(std::exp(x) + 1); }, -30, 30},
        {26, "Relu", [](L x) { return x > 0 ? x : 0; }, -5, 5},
        {27, "LeakyRelu", [](L x) { return x >= 0 ? x : 0.125L * x; }, -5, 5, 0.125f},
        {28, "Elu", [](L x) { return x >= 0 ? x : 0.5L * (std::exp(x) - 1); }, -5, 5, 0.5f},
        {29, "Selu", [=](L x) { return x > 0 ? selu_g * x : selu_g * (selu_a * std::exp(x) - selu_a); }, -5, 5,
         1.67326319217681884765625f, 1.05070102214813232421875f},
        {30, "Celu", [](L x) { return std::max(L(0), x) + std::min(L(0), 2 * (std::exp(x / 2) - 1)); }, -5, 5, 2.f},
        {31, "ThresholdedRelu", [](L x) { return x > 1.25L ? x : 0; }, -5, 5, 1.25f},
        {32, "HardSigmoid", [](L x) { return std::max(L(0), std::min(L(1), 0.25L * x + 0.375L)); }, -5, 5, 0.25f, 0.375f},
        {33, "HardSwish", [](L x) { return x * std::max(L(0), std::min(L(1), x / 6 + 0.5L)); }, -5, 5},
        {34, "Gelu", [](L x) { return x / 2 * (1 + std::erf(x / std::sqrt(L(2)))); }, -4, 4},
        {34, "Gelu(tanh)",
         [](L x) { return x / 2 * (1 + std::tanh(std::sqrt(2 / L(M_PI)) * (x + 0.044715L * x * x * x))); }, -4, 4, 0,
         0, 1},
        {35, "Shrink", [](L x) { return x < -1.5L ? x + 0.5L : (x > 1.5L ? x - 0.5L : 0); }, -5, 5, 1.5f, 0.5f},
        {38, "Sigmoid", [](L x) { return 1 / (1 + std::exp(-x)); }, -10, 10},
        {39, "Tanh", [](L x) { return std::tanh(x); }, -5, 5},
    };
}

ParamDict unary_param(const UnaryCase& c)
{
    ParamDict pd = op_param(c.op);
    if (c.alpha != 0.f || c.beta != 0.f) {
        pd.set_float(1, c.alpha);
        pd.set_float(2, c.beta);
    }
    if (c.fa >= 0) pd.set_int(3, c.fa);
    if (c.fb >= 0) pd.set_int(4, c.fb);
    return pd;
}

template <class T> void unary_float_for(double rtol, double atol)
{
    for (const UnaryCase& c : unary_cases()) {
        std::vector<T> x(101);
        for (size_t i = 0; i < x.size(); ++i)
            x[i] = static_cast<T>(c.lo + (c.hi - c.lo) * static_cast<long double>(i) / 100);
        const Tensor out = run("UnaryOp", unary_param(c), {make<T>({101}, x)}, 2);
        ASSERT_EQ(out.dtype(), dt<T>()) << c.name;
        const auto got = vals<T>(out);
        for (size_t i = 0; i < x.size(); ++i) {
            const double want = static_cast<double>(c.f(x[i]));
            ASSERT_NEAR(got[i], want, atol + rtol * std::fabs(want)) << c.name << "(" << x[i] << ") " << dt_name<T>();
        }
    }
}

TEST(NdElementwise, UnaryFloat32AndFloat64)
{
    unary_float_for<float>(3e-6, 1e-6);
    unary_float_for<double>(1e-12, 1e-14);
}

TEST(NdElementwise, UnaryHalfTypesComputeInFloat)
{
    for (DType t : {DType::F16, DType::BF16}) {
        for (const UnaryCase& c : unary_cases()) {
            std::vector<float> x(41);
            for (size_t i = 0; i < x.size(); ++i)
                x[i] = round_half(t, static_cast<float>(c.lo + (c.hi - c.lo) * static_cast<long double>(i) / 40));
            const Tensor in = make_half(t, {41}, x);
            const Tensor out = run("UnaryOp", unary_param(c), {in});
            ASSERT_EQ(out.dtype(), t) << c.name;
            for (size_t i = 0; i < x.size(); ++i) {
                // the value computed in float, rounded once to the storage type (allow that one rounding)
                const float want = static_cast<float>(c.f(half_at(in, static_cast<int64_t>(i))));
                const double tol = (t == DType::F16 ? 1e-3 : 8e-3) * std::fabs(want) + 1e-3;
                ASSERT_NEAR(half_at(out, static_cast<int64_t>(i)), want, tol) << c.name << " " << dtype_name(t);
            }
        }
    }
}

TEST(NdElementwise, UnaryIntegerOps)
{
    const std::vector<int32_t> x = {-7, -1, 0, 1, 2, 9, std::numeric_limits<int32_t>::min()};
    const Shape s{7};
    EXPECT_EQ(vals<int32_t>(run("UnaryOp", op_param(21), {make(s, x)})), (std::vector<int32_t>{-1, -1, 0, 1, 1, 1, -1}));
    EXPECT_EQ(vals<int32_t>(run("UnaryOp", op_param(26), {make(s, x)})), (std::vector<int32_t>{0, 0, 0, 1, 2, 9, 0}));
    ParamDict shrink = op_param(35);
    shrink.set_float(1, 1.5f);
    shrink.set_float(2, 1.f);
    EXPECT_EQ(vals<int32_t>(run("UnaryOp", shrink, {make(s, x)})),
              (std::vector<int32_t>{-6, 0, 0, 0, 1, 8, std::numeric_limits<int32_t>::min() + 1}));
    const std::vector<uint8_t> u = {0, 3, 255};
    EXPECT_EQ(vals<uint8_t>(run("UnaryOp", op_param(0), {make<uint8_t>({3}, u)})), u);
    EXPECT_EQ(vals<uint8_t>(run("UnaryOp", op_param(21), {make<uint8_t>({3}, u)})), (std::vector<uint8_t>{0, 1, 1}));
    EXPECT_EQ(vals<int64_t>(run("UnaryOp", op_param(1), {make<int64_t>({2}, {5, -6})})), (std::vector<int64_t>{-5, 6}));
    // float-only ops reject integers, Neg rejects unsigned
    const std::string m = error_of([] { run("UnaryOp", op_param(7), {make<int32_t>({1}, {1})}); });
    EXPECT_NE(m.find("Exp"), std::string::npos) << m;
    EXPECT_NE(m.find("int32"), std::string::npos) << m;
    EXPECT_THROW(run("UnaryOp", op_param(1), {make<uint32_t>({1}, {1})}), Error);
    EXPECT_THROW(run("UnaryOp", op_param(36), {make<int8_t>({1}, {1})}), Error); // Not is bool-only
}

TEST(NdElementwise, RoundHalfToEvenSignNaNIsNaNIsInf)
{
    const float nan = NAN, inf = INFINITY;
    EXPECT_EQ(vals<float>(run("UnaryOp", op_param(4), {make<float>({9}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, 2.6f, -0.f})})),
              (std::vector<float>{0.f, 2.f, 2.f, -0.f, -2.f, -2.f, 2.f, 3.f, -0.f}));
    EXPECT_EQ(vals<double>(run("UnaryOp", op_param(4), {make<double>({3}, {4.5, 5.5, -4.5})})),
              (std::vector<double>{4.0, 6.0, -4.0}));
    const auto sg = vals<float>(run("UnaryOp", op_param(21), {make<float>({4}, {nan, -inf, inf, 0.f})}));
    EXPECT_TRUE(std::isnan(sg[0])); // numpy sign keeps NaN (ncnn's UnaryOp SIGN gives 0)
    EXPECT_EQ(sg[1], -1.f);
    EXPECT_EQ(sg[2], 1.f);
    EXPECT_EQ(sg[3], 0.f);
    const Tensor x = make<float>({5}, {nan, inf, -inf, 0.f, -3.f});
    const Tensor isnan_out = run("UnaryOp", op_param(22), {x});
    EXPECT_EQ(isnan_out.dtype(), DType::Bool);
    EXPECT_EQ(vals<bool>(isnan_out), (std::vector<bool>{true, false, false, false, false}));
    for (int neg : {0, 1})
        for (int pos : {0, 1}) {
            ParamDict pd = op_param(23);
            pd.set_int(3, neg);
            pd.set_int(4, pos);
            EXPECT_EQ(vals<bool>(run("UnaryOp", pd, {x})), (std::vector<bool>{false, pos == 1, neg == 1, false, false}));
        }
    // IsInf defaults: both directions
    EXPECT_EQ(vals<bool>(run("UnaryOp", op_param(23), {x})), (std::vector<bool>{false, true, true, false, false}));
    // NaN passes through Relu / activations, Softplus does not overflow
    EXPECT_TRUE(std::isnan(vals<float>(run("UnaryOp", op_param(26), {make<float>({1}, {nan})}))[0]));
    EXPECT_FLOAT_EQ(vals<float>(run("UnaryOp", op_param(25), {make<float>({1}, {100.f})}))[0], 100.f);
    // f16: IsNaN gives bool
    const Tensor h = make_half(DType::F16, {3}, {nan, 1.f, inf});
    EXPECT_EQ(vals<bool>(run("UnaryOp", op_param(22), {h})), (std::vector<bool>{true, false, false}));
}

// ---------------------------------------------------------------------------
// float16 / bfloat16 binary, Where, variadic

TEST(NdElementwise, HalfTypesBinaryWhereVariadic)
{
    for (DType t : {DType::F16, DType::BF16}) {
        const Shape sa{2, 3}, sb{3};
        std::vector<float> a = {1.5f, -2.f, 3.25f, 0.1f, 100.f, -7.f}, b = {0.3f, 2.f, -1.5f};
        for (float& v : a) v = round_half(t, v);
        for (float& v : b) v = round_half(t, v);
        const Tensor ta = make_half(t, sa, a), tb = make_half(t, sb, b);
        for (int op : {ADD, SUB, MUL, DIV, POW, MOD, FMOD, MAX, MIN}) {
            const Tensor out = run("BinaryOp", op_param(op), {ta, tb});
            ASSERT_EQ(out.dtype(), t);
            for (int64_t i = 0; i < 6; ++i) {
                const float want = round_half(t, ref_float<float>(op, a[i], b[i % 3]));
                const float got = half_at(out, i);
                if (std::isnan(want)) ASSERT_TRUE(std::isnan(got)) << op << " " << i;
                else // one rounding of a float result that may differ from long double's by an ulp
                    ASSERT_NEAR(got, want, (t == DType::F16 ? 1e-3 : 8e-3) * std::fabs(want)) << op << " " << i << " "
                                                                                                << dtype_name(t);
            }
        }
        for (int op : {EQ, LT, GE}) {
            const auto got = vals<bool>(run("BinaryOp", op_param(op), {ta, tb}));
            for (size_t i = 0; i < 6; ++i) ASSERT_EQ(got[i], ref_cmp(op, a[i], b[i % 3])) << op;
        }
        // Where picks raw values
        const auto c = gen<bool>(6, 1);
        const Tensor w = run("Where", ParamDict(), {make<bool>(sa, c), ta, make_half(t, {1}, {0.5f})});
        for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(half_at(w, i), c[i] ? a[i] : 0.5f);
        // Mean of three: ((a + b) + b) / 3 computed in float, rounded once
        const Tensor m = run("Eltwise", eltwise_param("Mean"), {ta, tb, tb});
        for (int64_t i = 0; i < 6; ++i) {
            const float s1 = a[i] + b[i % 3];
            EXPECT_EQ(half_at(m, i), round_half(t, (s1 + b[i % 3]) / 3.f)) << i;
        }
        // one input: the identity
        const Tensor one = run("Eltwise", eltwise_param("Max"), {ta});
        for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(half_at(one, i), a[i]);
    }
}

TEST(NdElementwise, MeanFloatOnlyAndExact)
{
    const Tensor a = make<double>({2}, {1, 2}), b = make<double>({2, 1}, {10, 20}), c = make<double>({}, {0.5});
    EXPECT_EQ(vals<double>(run("Eltwise", eltwise_param("Mean"), {a})), (std::vector<double>{1, 2}));
    EXPECT_EQ(vals<double>(run("Eltwise", eltwise_param("Mean"), {a, b})), (std::vector<double>{5.5, 6, 10.5, 11}));
    EXPECT_EQ(vals<double>(run("Eltwise", eltwise_param("Mean"), {a, b, c})),
              (std::vector<double>{11.5 / 3, 12.5 / 3, 21.5 / 3, 22.5 / 3}));
    const std::string m = error_of([] { run("Eltwise", eltwise_param("Mean"), {make<int32_t>({1}, {1}), make<int32_t>({1}, {2})}); });
    EXPECT_NE(m.find("Mean"), std::string::npos) << m;
    EXPECT_THROW(run("Eltwise", eltwise_param("Sum"), {make<float>({1}, {1}), make<double>({1}, {2})}), Error);
    EXPECT_THROW(run("Eltwise", eltwise_param("Sum"), {make<float>({3}, {1, 2, 3}), make<float>({2}, {1, 2})}), Error);
}

// ---------------------------------------------------------------------------
// errors, params

TEST(NdElementwise, ParamAndShapeErrors)
{
    EXPECT_THROW(run("BinaryOp", op_param(24), {make<float>({1}, {1}), make<float>({1}, {1})}), Error);
    EXPECT_THROW(run("BinaryOp", op_param(-1), {make<float>({1}, {1}), make<float>({1}, {1})}), Error);
    ParamDict bad_rule = op_param(ADD);
    bad_rule.set_int(20, 3);
    EXPECT_THROW(run("BinaryOp", bad_rule, {make<float>({1}, {1}), make<float>({1}, {1})}), Error);
    EXPECT_THROW(run("UnaryOp", op_param(40), {make<float>({1}, {1})}), Error);
    ParamDict celu = op_param(30);
    celu.set_float(1, 0.f);
    EXPECT_THROW(run("UnaryOp", celu, {make<float>({1}, {1})}), Error);
    const std::string m = error_of(
        [] { run("BinaryOp", op_param(ADD), {make<int64_t>({2, 3}, gen<int64_t>(6, 1)), make<int64_t>({4}, gen<int64_t>(4, 1))}); });
    EXPECT_NE(m.find("(2,3)"), std::string::npos) << m;
    EXPECT_NE(m.find("(4,)"), std::string::npos) << m;
    // Where: bool condition, X and Y of one dtype
    EXPECT_THROW(run("Where", ParamDict(), {make<int32_t>({1}, {1}), make<float>({1}, {1}), make<float>({1}, {2})}), Error);
    EXPECT_THROW(run("Where", ParamDict(), {make<bool>({1}, {true}), make<float>({1}, {1}), make<double>({1}, {2})}), Error);
    EXPECT_THROW(run("Where", ParamDict(), {make<bool>({2}, {true, false}), make<float>({3}, {1, 2, 3}), make<float>({1}, {2})}),
                 Error);
}

// ---------------------------------------------------------------------------
// through a Net: multiple threads, in place, zero-size

TEST(NdElementwise, InANetThreadsAndInPlace)
{
    Net net;
    net.load_param_mem("7767517\n6 6\n"
                       "Input a 0 1 a 21=8\nInput b 0 1 b 21=8\n"
                       "Elementwise mul 2 1 a b m 0=2\n"
                       "Elementwise sub 2 1 m b s 0=1\n"          // may run in place over m
                       "Elementwise gt 2 1 s b g 0=12\n"
                       "Where w 3 1 g s b y\n");
    const Shape sa{64, 33, 40}, sb{33, 1};
    const auto a = gen<int32_t>(static_cast<size_t>(shape_numel(sa)), 1, -1000, 1000);
    const auto b = gen<int32_t>(33, 2, -1000, 1000);
    std::vector<std::vector<int32_t>> results;
    for (int threads : {1, 2}) {
        Options o;
        o.threads = threads;
        Session s(net, o);
        s.set_input("a", make(sa, a));
        s.set_input("b", make(sb, b));
        const Tensor y = s.get("y");
        ASSERT_EQ(y.shape(), sa);
        results.push_back(vals<int32_t>(y));
    }
    EXPECT_EQ(results[0], results[1]);
    for (int64_t i = 0; i < shape_numel(sa); ++i) {
        const int32_t bv = b[src(sa, sb, i)];
        const int32_t sv = ref_int<int32_t>(SUB, ref_int<int32_t>(MUL, a[i], bv), bv);
        ASSERT_EQ(results[0][i], sv > bv ? sv : bv) << i;
    }
    // zero-size inputs give zero-size outputs
    Session s(net);
    s.set_input("a", Tensor({0, 33, 2}, DType::I32));
    s.set_input("b", make(sb, b));
    EXPECT_EQ(s.get("y").shape(), (Shape{0, 33, 2}));
}

TEST(NdElementwise, RegisteredLayerNames)
{
    for (const char* t : {"BinaryOp", "UnaryOp", "Where", "Eltwise"}) EXPECT_NE(create_op(t), nullptr) << t;
}

// ---------------------------------------------------------------------------
// converters: ONNX graphs built here

#if defined(KESTREL_HAVE_ONNX)
struct In {
    std::string name;
    int type;
    int rank = 1; // 1: shape (3); 0: a scalar
};
onnx::ModelProto one_node_model(const std::string& op, const std::vector<In>& inputs, int out_type, int opset,
                                const std::vector<onnx::AttributeProto>& attrs = {})
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset);
    onnx::GraphProto* g = m.mutable_graph();
    g->set_name("g");
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name("n");
    for (const In& in : inputs) {
        n->add_input(in.name);
        onnx::ValueInfoProto* vi = g->add_input();
        vi->set_name(in.name);
        vi->mutable_type()->mutable_tensor_type()->set_elem_type(in.type);
        auto* shape = vi->mutable_type()->mutable_tensor_type()->mutable_shape();
        if (in.rank == 1) shape->add_dim()->set_dim_value(3);
    }
    n->add_output("y");
    for (const auto& a : attrs) *n->add_attribute() = a;
    onnx::ValueInfoProto* vo = g->add_output();
    vo->set_name("y");
    vo->mutable_type()->mutable_tensor_type()->set_elem_type(out_type);
    vo->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
    return m;
}

Net load_model(const onnx::ModelProto& m)
{
    const std::string bytes = m.SerializeAsString();
    Net net;
    load_onnx_mem(net, bytes.data(), bytes.size(), "test.onnx", ".", OnnxImportOptions());
    return net;
}

TEST(NdElementwise, ConvertersPickLayers)
{
    constexpr int F32 = 1, I32 = 6, I64 = 7, BOOL = 9, F16 = 10, I8 = 3;
    // float32 Add -> BinaryOp's ncnn table with numpy broadcasting; int64 Add -> its typed table
    EXPECT_NE(load_model(one_node_model("Add", {{"a", F32}, {"b", F32}}, F32, 13)).param_text().find("BinaryOp"),
              std::string::npos);
    {
        Net net = load_model(one_node_model("Add", {{"a", I64}, {"b", I64}}, I64, 13));
        EXPECT_NE(net.param_text().find("BinaryOp n 2 1 a b y 0=0 21=1"), std::string::npos) << net.param_text();
        Session s(net);
        s.set_input("a", make<int64_t>({3}, {1, 2, std::numeric_limits<int64_t>::max()}));
        s.set_input("b", make<int64_t>({3}, {10, 20, 1}));
        EXPECT_EQ(vals<int64_t>(s.get("y")), (std::vector<int64_t>{11, 22, std::numeric_limits<int64_t>::min()}));
    }
    // Less -> bool
    {
        Net net = load_model(one_node_model("Less", {{"a", I32}, {"b", I32}}, BOOL, 13));
        Session s(net);
        s.set_input("a", make<int32_t>({3}, {1, 5, 3}));
        s.set_input("b", make<int32_t>({3}, {2, 2, 3}));
        EXPECT_EQ(vals<bool>(s.get("y")), (std::vector<bool>{true, false, false}));
    }
    // Relu on int8 and float16 go to UnaryOp's typed table; float32 stays ncnn's ReLU
    {
        Net net = load_model(one_node_model("Relu", {{"x", I8}}, I8, 14));
        EXPECT_NE(net.param_text().find("UnaryOp"), std::string::npos) << net.param_text();
        Session s(net);
        s.set_input("x", make<int8_t>({3}, {-128, 0, 127}));
        EXPECT_EQ(vals<int8_t>(s.get("y")), (std::vector<int8_t>{0, 0, 127}));
    }
    EXPECT_NE(load_model(one_node_model("Relu", {{"x", F32}}, F32, 14)).param_text().find("ReLU"), std::string::npos);
    // A float16 model computes in float32 between casts (onnx/float16_model.h): ncnn's Sigmoid.
    {
        const std::string text = load_model(one_node_model("Sigmoid", {{"x", F16}}, F16, 13)).param_text();
        EXPECT_NE(text.find("Sigmoid"), std::string::npos) << text;
        EXPECT_NE(text.find("Cast"), std::string::npos) << text;
    }
    // Mod fmod attribute, BitShift direction
    {
        onnx::AttributeProto fmod;
        fmod.set_name("fmod");
        fmod.set_type(onnx::AttributeProto::INT);
        fmod.set_i(1);
        Net net = load_model(one_node_model("Mod", {{"a", I32}, {"b", I32}}, I32, 13, {fmod}));
        Session s(net);
        s.set_input("a", make<int32_t>({3}, {7, -7, 5}));
        s.set_input("b", make<int32_t>({3}, {-2, 2, 0}));
        EXPECT_EQ(vals<int32_t>(s.get("y")), (std::vector<int32_t>{1, -1, 0}));
    }
    // Clip on int32 with non-constant bounds -> Max then Min
    {
        Net net = load_model(one_node_model("Clip", {{"x", I32}, {"lo", I32, 0}, {"hi", I32, 0}}, I32, 13));
        Session s(net);
        s.set_input("x", make<int32_t>({3}, {-5, 3, 50}));
        s.set_input("lo", make<int32_t>({}, {0}));
        s.set_input("hi", make<int32_t>({}, {10}));
        EXPECT_EQ(vals<int32_t>(s.get("y")), (std::vector<int32_t>{0, 3, 10}));
    }
}
#endif

} // namespace
