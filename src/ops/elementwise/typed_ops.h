// The typed element-wise ops: one table of binary ops, one of unary ops and
// the steps of the variadic ones, each op a functor run by the one broadcast
// engine (kernels/broadcast.h) over every dtype the op accepts (its dtype
// categories); float16 / bfloat16 are widened to float32, computed there and
// rounded back once. BinaryOp, UnaryOp and Eltwise use them in their typed
// form (21=1); their ncnn forms run ncnn's float32 functors (kernels/elementwise_ops.h).
//
// Binary ops (BinaryOp 21=1, 0=op): A and B have one dtype, except for Pow (the
// exponent may be any numeric dtype; the result has A's dtype). Comparisons
// and logic give bool.
//    op  name             dtypes          op  name             dtypes
//     0  Add              numeric         12  Greater          numeric -> bool
//     1  Sub              numeric         13  GreaterOrEqual   numeric -> bool
//     2  Mul              numeric         14  Less             numeric -> bool
//     3  Div              numeric         15  LessOrEqual      numeric -> bool
//     4  Pow              numeric         16  And              bool -> bool
//     5  Mod (fmod=0)     numeric         17  Or               bool -> bool
//     6  Fmod (fmod=1)    numeric         18  Xor              bool -> bool
//     7  Max              numeric         19  BitwiseAnd       integer
//     8  Min              numeric         20  BitwiseOr        integer
//     9  BitShift left    unsigned        21  BitwiseXor       integer
//    10  BitShift right   unsigned        22  PRelu (B=slope)  numeric
//    11  Equal            any -> bool     23  NotEqual         any -> bool
//   Integers: arithmetic wraps; Div truncates; x / 0, x % 0 give 0; INT_MIN / -1
//   gives INT_MIN; Mod (fmod=0) takes the divisor's sign (Python), Fmod the
//   dividend's (C); shifts by >= the bit width give 0; integer Pow is exact
//   with wrap-around (negative exponents give 0 except for bases 1 and -1).
//   Floats: Max/Min propagate NaN (numpy maximum/minimum); Mod is Python's.
//
// Unary ops (UnaryOp 21=1, 0=op, 1=alpha 2=beta (floats), 3, 4 (ints)):
//    0 Abs (numeric)  1 Neg (float, signed)  2 Floor  3 Ceil  4 Round (half
//    to even)  5 Sqrt  6 Reciprocal  7 Exp  8 Log  9 Sin  10 Cos  11 Tan
//   12 Asin  13 Acos  14 Atan  15 Sinh  16 Cosh  17 Asinh  18 Acosh  19 Atanh
//   20 Erf  21 Sign (numeric; NaN stays NaN)  22 IsNaN (-> bool)
//   23 IsInf (-> bool; 3=detect_negative 1, 4=detect_positive 1)  24 Softsign
//   25 Softplus  26 Relu (float, signed)  27 LeakyRelu (1=alpha 0.01)
//   28 Elu (1=alpha 1)  29 Selu (1=alpha 1.67326, 2=gamma 1.0507)
//   30 Celu (1=alpha 1, nonzero)  31 ThresholdedRelu (1=alpha 1)
//   32 HardSigmoid (1=alpha 0.2, 2=beta 0.5)  33 HardSwish
//   34 Gelu (3=approximate: 0 none, 1 tanh)  35 Shrink (numeric; 1=lambd 0.5,
//   2=bias 0)  36 Not (bool)  37 BitwiseNot (integer)  38 Sigmoid  39 Tanh
//   Ops without a dtype note take float types (f16, bf16, f32, f64).
//
// Variadic steps (Eltwise 21=1): Sum, Max, Min over numeric types, Mean over
// float types (sum, then divided by the count).
#pragma once
#include <string>
#include <vector>

#include "kernels/broadcast.h"
#include "kestrel/tensor.h"

namespace kestrel::typed_ops {

// Attribute values handed to functors that take them.
struct OpParams {
    double alpha = 0, beta = 0;
    int flag_a = 0, flag_b = 0;
};

using BinaryKernel = void (*)(const BroadcastPlan&, const void*, const void*, void*, const OpParams&,
                              const ParallelRunner&);
using UnaryKernel = void (*)(const BroadcastPlan&, const void*, void*, const OpParams&, const ParallelRunner&);

// Binary ops.
int binary_count();
const char* binary_name(int op);
bool binary_bool_out(int op);
// Checks that `op` takes a of dtype ta and b of dtype tb.
void check_binary_dtypes(int op, DType ta, DType tb);
// out = a op b (dtypes checked), the broadcast given by `plan`; a is widened
// for half types by the caller (run_widened).
void run_binary(int op, const BroadcastPlan& plan, const Tensor& a, const Tensor& b, Tensor& out,
                const ParallelRunner& run);

// Unary ops.
int unary_count();
const char* unary_name(int op);
int unary_index(const std::string& name); // the op of that name (fails for none)
bool unary_bool_out(int op);
void check_unary_dtype(int op, DType t);
// The params' defaults per op (LeakyRelu's alpha 0.01, ...).
OpParams unary_defaults(int op);
void run_unary(int op, const Tensor& in, Tensor& out, const OpParams& p, const ParallelRunner& run);

// Variadic steps.
enum VariadicStep { kStepAdd = 0, kStepAddDiv = 1, kStepMax = 2, kStepMin = 3 };
void check_variadic_dtype(const char* name, int step, DType t);
BinaryKernel variadic_kernel(DType t, int step);

bool any_half(const std::vector<Tensor>& inputs);
// Runs fn(inputs, out) with float16 / bfloat16 tensors widened to float32; a
// float32 result is rounded back into `out` once (a bool result goes straight in).
template <class Fn> void run_widened(const std::vector<Tensor>& inputs, Tensor& out, const Fn& fn)
{
    std::vector<Tensor> wide;
    for (const Tensor& t : inputs)
        wide.push_back(t.dtype() == DType::F16 || t.dtype() == DType::BF16 ? t.to(DType::F32) : t);
    if (out.dtype() != DType::F16 && out.dtype() != DType::BF16) {
        fn(wide, out);
        return;
    }
    Tensor tmp(out.shape(), DType::F32);
    fn(wide, tmp);
    const Tensor back = tmp.to(out.dtype());
    std::copy_n(static_cast<const uint8_t*>(back.raw()), out.nbytes(), static_cast<uint8_t*>(out.raw()));
}

} // namespace kestrel::typed_ops
