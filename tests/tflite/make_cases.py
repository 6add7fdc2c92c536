#!/usr/bin/env python3
"""Writes the TFLite test cases into DIR and their reference outputs, computed
by TensorFlow Lite's own interpreter (tests/tflite/tflite_reference.js):

  * one or more small models per operator and per option (fused activations,
    paddings, strides, masks, broadcast shapes), built with model_builder.py;
  * every .tflite of npm's @mediapipe/selfie_segmentation, face_detection and
    hands (their custom Convolution2DTransposeBias is rewritten as
    TRANSPOSE_CONV with the bias for the reference, which is what it computes).

DIR/cases.txt lists NAME TOLERANCE [REFERENCE_MODEL]: Kestrel runs DIR/NAME.tflite
on DIR/NAME.in<k>.npy and must give DIR/NAME.out<k>.npy within TOLERANCE x
max|reference| (0: exactly). Exits 77 (a skip) when node or the npm modules are missing.

usage: make_cases.py DIR NODE_MODULES_DIR
"""
import glob
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model_builder import ModelBuilder, bindings  # noqa: E402

rng = np.random.default_rng(7)
CASES = []


def case(tolerance=1e-5):
    def register(fn):
        CASES.append((fn.__name__, fn, tolerance))
        return fn
    return register


def rand(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def conv_opts(padding="SAME", s=1, act="NONE", d=1):
    return ("Conv2DOptions", dict(padding=padding, strideW=s, strideH=s, fusedActivationFunction=act,
                                  dilationWFactor=d, dilationHFactor=d))


def folded(m, x, shape):
    """x through a 1x1 convolution: an image value the engine holds as NCHW."""
    c = shape[-1]
    w = m.const(f"fold_w{len(m.tensors)}", rand(c, 1, 1, c))
    return m.op("CONV_2D", [x, w, m.const(f"fold_b{len(m.tensors)}", rand(c))], shape, options=conv_opts())


def image_in(m, shape, name="x"):
    return folded(m, m.input(name, shape), shape)


# --- convolutions and pools -------------------------------------------------

@case()
def conv_same_s1_relu(m):
    x = m.input("x", [1, 9, 9, 3])
    y = m.op("CONV_2D", [x, m.const("w", rand(4, 3, 3, 3)), m.const("b", rand(4))], [1, 9, 9, 4],
             options=conv_opts("SAME", 1, "RELU"))
    m.output(y)


@case()
def conv_valid_s2_relu6(m):
    x = m.input("x", [1, 10, 10, 3])
    y = m.op("CONV_2D", [x, m.const("w", rand(5, 3, 3, 3) * 4), m.const("b", rand(5))], [1, 4, 4, 5],
             options=conv_opts("VALID", 2, "RELU6"))
    m.output(y)


@case()
def conv_same_s2_odd_relu_n1(m):
    x = m.input("x", [1, 11, 9, 2])
    y = m.op("CONV_2D", [x, m.const("w", rand(4, 3, 3, 2)), m.const("b", rand(4))], [1, 6, 5, 4],
             options=conv_opts("SAME", 2, "RELU_N1_TO_1"))
    m.output(y)


@case()
def conv_same_dilation2_fused_tanh(m):  # TFLite applies no TANH fused into a convolution
    x = m.input("x", [1, 11, 11, 2])
    y = m.op("CONV_2D", [x, m.const("w", rand(3, 3, 3, 2)), m.const("b", rand(3))], [1, 11, 11, 3],
             options=conv_opts("SAME", 1, "TANH", 2))
    m.output(y)


@case()
def conv_5x5_same_s2_even(m):
    x = m.input("x", [1, 12, 12, 3])
    y = m.op("CONV_2D", [x, m.const("w", rand(8, 5, 5, 3)), m.const("b", rand(8))], [1, 6, 6, 8],
             options=conv_opts("SAME", 2))
    m.output(y)


@case()
def depthwise_multiplier2_relu(m):
    x = m.input("x", [1, 8, 8, 3])
    y = m.op("DEPTHWISE_CONV_2D", [x, m.const("w", rand(1, 3, 3, 6)), m.const("b", rand(6))], [1, 8, 8, 6],
             options=("DepthwiseConv2DOptions", dict(padding="SAME", strideW=1, strideH=1, depthMultiplier=2,
                                                     fusedActivationFunction="RELU")))
    m.output(y)


@case()
def depthwise_valid_s2(m):
    x = image_in(m, [1, 9, 9, 4])
    y = m.op("DEPTHWISE_CONV_2D", [x, m.const("w", rand(1, 3, 3, 4)), m.const("b", rand(4))], [1, 4, 4, 4],
             options=("DepthwiseConv2DOptions", dict(padding="VALID", strideW=2, strideH=2, depthMultiplier=1)))
    m.output(y)


@case()
def transpose_conv_same_s2_bias(m):
    x = m.input("x", [1, 4, 4, 2])
    y = m.op("TRANSPOSE_CONV", [m.const("shape", np.array([1, 8, 8, 3], np.int32)), m.const("w", rand(3, 3, 3, 2)), x,
                                m.const("b", rand(3))], [1, 8, 8, 3], version=3,
             options=("TransposeConvOptions", dict(padding="SAME", strideW=2, strideH=2)))
    m.output(y)


@case()
def transpose_conv_valid_s2(m):
    x = m.input("x", [1, 4, 5, 3])
    y = m.op("TRANSPOSE_CONV", [m.const("shape", np.array([1, 9, 11, 2], np.int32)), m.const("w", rand(2, 3, 3, 3)), x],
             [1, 9, 11, 2], options=("TransposeConvOptions", dict(padding="VALID", strideW=2, strideH=2)))
    m.output(y)


def pool(m, code, shape, out, padding, f, s, act="NONE"):
    x = image_in(m, shape)
    y = m.op(code, [x], out, options=("Pool2DOptions", dict(padding=padding, strideW=s, strideH=s, filterWidth=f,
                                                            filterHeight=f, fusedActivationFunction=act)))
    m.output(y)


@case()
def max_pool_same_s2(m): pool(m, "MAX_POOL_2D", [1, 7, 7, 3], [1, 4, 4, 3], "SAME", 3, 2)


@case()
def max_pool_valid_relu(m): pool(m, "MAX_POOL_2D", [1, 8, 8, 2], [1, 4, 4, 2], "VALID", 2, 2, "RELU")


@case()
def average_pool_same_s1(m): pool(m, "AVERAGE_POOL_2D", [1, 7, 7, 3], [1, 7, 7, 3], "SAME", 3, 1)


@case()
def average_pool_same_s2_relu6(m): pool(m, "AVERAGE_POOL_2D", [1, 9, 8, 3], [1, 5, 4, 3], "SAME", 3, 2, "RELU6")


@case()
def fully_connected_rows_relu(m):
    x = m.input("x", [3, 10])
    y = m.op("FULLY_CONNECTED", [x, m.const("w", rand(4, 10)), m.const("b", rand(4))], [3, 4],
             options=("FullyConnectedOptions", dict(fusedActivationFunction="RELU")))
    m.output(y)


@case()
def fully_connected_after_conv(m):
    x = image_in(m, [1, 4, 4, 3])
    y = m.op("FULLY_CONNECTED", [x, m.const("w", rand(5, 48))], [1, 5], options=("FullyConnectedOptions", dict()))
    m.output(y)


@case()
def fully_connected_keep_num_dims(m):
    x = m.input("x", [1, 3, 4, 8])
    y = m.op("FULLY_CONNECTED", [x, m.const("w", rand(6, 8)), m.const("b", rand(6))], [1, 3, 4, 6], version=5,
             options=("FullyConnectedOptions", dict(keepNumDims=True)))
    m.output(y)


@case()
def batch_matmul(m):
    a, b = m.input("a", [2, 3, 4]), m.input("b", [2, 4, 5])
    m.output(m.op("BATCH_MATMUL", [a, b], [2, 3, 5], options=("BatchMatMulOptions", dict())))


@case()
def batch_matmul_adj_y(m):
    a, b = m.input("a", [2, 3, 4]), m.input("b", [2, 5, 4])
    m.output(m.op("BATCH_MATMUL", [a, b], [2, 3, 5], options=("BatchMatMulOptions", dict(adjY=True))))


# --- element-wise -------------------------------------------------------------

def binary(m, code, a_shape, b_shape, out, b_const=False, options=None, dtype=np.float32, out_dtype=None, fold=True):
    a = image_in(m, a_shape, "a") if fold and len(a_shape) == 4 else m.input("a", a_shape, dtype)
    b = m.const("b", rand(*b_shape)) if b_const else m.input("b", b_shape, dtype)
    m.output(m.op(code, [a, b], out, options=options, out_dtype=out_dtype or dtype))


@case()
def add_channel_constant_relu(m):
    binary(m, "ADD", [1, 4, 4, 3], [3], [1, 4, 4, 3], True, ("AddOptions", dict(fusedActivationFunction="RELU")))


@case()
def add_two_images(m):
    binary(m, "ADD", [1, 5, 4, 3], [1, 5, 4, 3], [1, 5, 4, 3], False, ("AddOptions", dict()), fold=False)


@case()
def sub_broadcast_rows_relu6(m):
    binary(m, "SUB", [1, 4, 5, 3], [1, 1, 5, 3], [1, 4, 5, 3], False,
           ("SubOptions", dict(fusedActivationFunction="RELU6")))


@case()
def mul_scalar(m):
    binary(m, "MUL", [1, 4, 4, 3], [], [1, 4, 4, 3], True, ("MulOptions", dict()))


@case()
def mul_plain_rank3(m):
    binary(m, "MUL", [2, 3, 4], [3, 1], [2, 3, 4], False, ("MulOptions", dict()))


@case(1e-5)
def div_broadcast(m):
    a = image_in(m, [1, 3, 3, 4], "a")
    b = m.const("b", rand(1, 1, 4, lo=0.5, hi=2.0))
    m.output(m.op("DIV", [a, b], [1, 3, 3, 4], options=("DivOptions", dict())))


@case()
def maximum(m): binary(m, "MAXIMUM", [1, 4, 4, 3], [1, 4, 4, 1], [1, 4, 4, 3])


@case()
def minimum(m): binary(m, "MINIMUM", [1, 4, 4, 3], [3], [1, 4, 4, 3], True)


@case()
def squared_difference(m): binary(m, "SQUARED_DIFFERENCE", [1, 3, 4, 2], [1, 3, 4, 2], [1, 3, 4, 2])


@case(1e-5)
def pow_positive(m):
    a = m.input("a", [2, 5])
    m.output(m.op("POW", [a, m.const("b", rand(2, 5, lo=0.5, hi=2.0))], [2, 5]))


@case(0)
def greater(m): binary(m, "GREATER", [1, 3, 3, 2], [1, 3, 3, 2], [1, 3, 3, 2], out_dtype=np.bool_)


@case(0)
def less_equal_broadcast(m): binary(m, "LESS_EQUAL", [2, 4], [4], [2, 4], True, out_dtype=np.bool_)


@case(0)
def equal_int32(m): binary(m, "EQUAL", [3, 4], [3, 4], [3, 4], dtype=np.int32, out_dtype=np.bool_)


@case(0)
def not_equal_int32(m): binary(m, "NOT_EQUAL", [3, 4], [1, 4], [3, 4], dtype=np.int32, out_dtype=np.bool_)


@case(0)
def logical_and_or_not(m):
    a, b = m.input("a", [2, 3], np.bool_), m.input("b", [2, 3], np.bool_)
    both = m.op("LOGICAL_AND", [a, b], [2, 3], out_dtype=np.bool_)
    either = m.op("LOGICAL_OR", [a, b], [2, 3], out_dtype=np.bool_)
    m.output(both, either, m.op("LOGICAL_NOT", [a], [2, 3], out_dtype=np.bool_))


@case()
def select_v2_broadcast(m):
    c = m.input("c", [1, 4, 1, 3], np.bool_)
    x = image_in(m, [1, 4, 5, 3], "x")
    y = m.input("y", [3])
    m.output(m.op("SELECT_V2", [c, x, y], [1, 4, 5, 3]))


def unary(m, code, shape=(1, 4, 5, 3), options=None, version=1):
    x = image_in(m, list(shape)) if len(shape) == 4 else m.input("x", list(shape))
    m.output(m.op(code, [x], list(shape), options=options, version=version))


def unary_positive(m, code):
    x = m.input("x", [2, 3, 4])
    m.output(m.op(code, [x], [2, 3, 4]))


def positive_input(name, shape):
    return {f"{name}.in0.npy": rand(*shape, lo=0.05, hi=3.0)}


for _code in ["ABS", "NEG", "SQUARE", "SIN", "COS", "FLOOR", "CEIL", "ROUND", "LOGISTIC", "TANH", "RELU", "RELU6",
              "RELU_N1_TO_1", "HARD_SWISH", "ELU", "EXP"]:
    CASES.append((_code.lower(), (lambda code: lambda m: unary(m, code))(_code), 1e-5))
for _code in ["LOG", "SQRT", "RSQRT"]:
    CASES.append((_code.lower(), (lambda code: lambda m: unary_positive(m, code))(_code), 1e-5))
POSITIVE_INPUTS = {"log": [2, 3, 4], "sqrt": [2, 3, 4], "rsqrt": [2, 3, 4]}


@case()
def leaky_relu(m): unary(m, "LEAKY_RELU", options=("LeakyReluOptions", dict(alpha=0.2)))


@case()
def gelu(m): unary(m, "GELU", options=("GeluOptions", dict(approximate=False)))


@case()
def gelu_tanh(m): unary(m, "GELU", options=("GeluOptions", dict(approximate=True)))


@case()
def prelu_channels(m):
    x = image_in(m, [1, 4, 4, 3])
    m.output(m.op("PRELU", [x, m.const("alpha", rand(1, 1, 3))], [1, 4, 4, 3]))


@case(0)
def cast_float_int32(m):
    x = m.input("x", [2, 5])
    i = m.op("CAST", [x], [2, 5], out_dtype=np.int32)
    m.output(i, m.op("CAST", [i], [2, 5], out_dtype=np.float32))


@case()
def dequantize_float16_weights(m):
    x = m.input("x", [1, 6, 6, 3])
    w16 = m.const("w16", rand(4, 3, 3, 3).astype(np.float16))
    w = m.op("DEQUANTIZE", [w16], [4, 3, 3, 3])
    m.output(m.op("CONV_2D", [x, w, m.const("b", rand(4))], [1, 6, 6, 4], options=conv_opts()))


@case()
def dequantize_int8_per_channel_weights(m):
    x = m.input("x", [1, 6, 6, 3])
    q = rng.integers(-127, 128, size=(4, 3, 3, 3)).astype(np.int8)
    scales = rand(4, lo=0.001, hi=0.01)
    wq = m.const("wq", q, quant=(scales, np.zeros(4, np.int64), 0))
    w = m.op("DEQUANTIZE", [wq], [4, 3, 3, 3])
    m.output(m.op("CONV_2D", [x, w, m.const("b", rand(4))], [1, 6, 6, 4], options=conv_opts()))


def hybrid_weights(shape, axis, per_channel=True):
    q = rng.integers(-127, 128, size=shape).astype(np.int8)
    n = shape[axis] if per_channel else 1
    return q, (rand(n, lo=0.002, hi=0.01), np.zeros(n, np.int64), axis)


# Dynamic-range models: int8 weights read by a float operator directly.
# TFLite's hybrid kernels quantize the activations on the fly (per row, 8
# bits), Kestrel computes in float with the weights' real values: the two
# differ by that quantization, about 1% of the output's scale.
@case(2e-2)
def hybrid_conv_int8_weights(m):
    x = m.input("x", [1, 6, 6, 3])
    q, quant = hybrid_weights((4, 3, 3, 3), 0)
    w = m.const("w", q, quant=quant)
    m.output(m.op("CONV_2D", [x, w, m.const("b", rand(4))], [1, 6, 6, 4], options=conv_opts(), version=2))


@case(2e-2)
def hybrid_fully_connected_int8_weights(m):
    x = m.input("x", [2, 16])
    q, quant = hybrid_weights((5, 16), 0, per_channel=False)  # the reference's hybrid FC is per tensor
    m.output(m.op("FULLY_CONNECTED", [x, m.const("w", q, quant=quant), m.const("b", rand(5))], [2, 5], version=3,
                  options=("FullyConnectedOptions", dict())))


# --- data movement --------------------------------------------------------------

@case()
def reshape_after_conv(m):
    x = image_in(m, [1, 3, 4, 2])
    m.output(m.op("RESHAPE", [x, m.const("shape", np.array([1, 12, 2], np.int32))], [1, 12, 2]))


@case()
def reshape_options_only(m):
    x = m.input("x", [2, 6])
    m.output(m.op("RESHAPE", [x], [3, 4], options=("ReshapeOptions", dict(newShape=[3, -1]))))


@case()
def squeeze_and_expand_dims(m):
    x = image_in(m, [1, 1, 5, 3])
    s = m.op("SQUEEZE", [x], [5, 3], options=("SqueezeOptions", dict(squeezeDims=[0, 1])))
    m.output(m.op("EXPAND_DIMS", [s, m.const("axis", np.array([1], np.int32))], [5, 1, 3]))


@case()
def transpose_folded(m):
    x = image_in(m, [1, 2, 3, 4])
    m.output(m.op("TRANSPOSE", [x, m.const("perm", np.array([0, 3, 1, 2], np.int32))], [1, 4, 2, 3]))


@case()
def transpose_rank3(m):
    x = m.input("x", [2, 3, 4])
    m.output(m.op("TRANSPOSE", [x, m.const("perm", np.array([2, 0, 1], np.int32))], [4, 2, 3]))


def strided(m, shape, begin, end, strides, out, fold=True, **masks):
    x = image_in(m, shape) if fold and len(shape) == 4 else m.input("x", shape)
    opts = {k: v for k, v in masks.items()}
    m.output(m.op("STRIDED_SLICE", [x, m.const("begin", np.array(begin, np.int32)), m.const("end", np.array(end, np.int32)),
                                    m.const("strides", np.array(strides, np.int32))], out,
                  options=("StridedSliceOptions", opts)))


@case()
def strided_slice_folded_steps(m):
    strided(m, [1, 8, 7, 6], [0, 1, 0, 1], [1, 7, 7, 6], [1, 2, 3, 2], [1, 3, 3, 3])


@case()
def strided_slice_masks_negative(m):
    strided(m, [1, 6, 5, 4], [0, 4, 0, 3], [1, 0, 5, 0], [1, -1, 1, -2], [1, 6, 5, 2], beginMask=2, endMask=2)


@case()
def strided_slice_shrink(m):
    strided(m, [1, 5, 6, 3], [0, 2, 0, 0], [1, 3, 6, 3], [1, 1, 2, 1], [1, 3, 3], shrinkAxisMask=2)


@case()
def strided_slice_ellipsis_new_axis(m):
    strided(m, [2, 5, 6], [0, 0, 1], [0, 0, 4], [1, 1, 1], [2, 5, 1, 3], fold=False, ellipsisMask=1, newAxisMask=2)


@case()
def slice_folded(m):
    x = image_in(m, [1, 6, 6, 4])
    m.output(m.op("SLICE", [x, m.const("begin", np.array([0, 1, 2, 1], np.int32)),
                            m.const("size", np.array([1, 3, -1, 2], np.int32))], [1, 3, 4, 2]))


@case()
def gather_axis1(m):
    x = m.input("x", [3, 5, 2])
    m.output(m.op("GATHER", [x, m.const("idx", np.array([4, 0, 2], np.int32))], [3, 3, 2],
                  options=("GatherOptions", dict(axis=1))))


@case()
def gather_nd(m):
    x = m.input("x", [3, 4, 2])
    m.output(m.op("GATHER_ND", [x, m.const("idx", np.array([[0, 1], [2, 3]], np.int32))], [2, 2]))


@case()
def split_channels(m):
    x = image_in(m, [1, 3, 3, 6])
    m.output(*m.op("SPLIT", [m.const("axis", np.array([3], np.int32)), x], [[1, 3, 3, 2]] * 3,
                   options=("SplitOptions", dict(numSplits=3))))


@case()
def split_v_height(m):
    x = image_in(m, [1, 6, 3, 2])
    m.output(*m.op("SPLIT_V", [x, m.const("sizes", np.array([1, -1, 2], np.int32)), m.const("axis", np.array([1], np.int32))],
                   [[1, 1, 3, 2], [1, 3, 3, 2], [1, 2, 3, 2]], options=("SplitVOptions", dict(numSplits=3))))


@case()
def pack_unpack(m):
    a, b = m.input("a", [2, 3]), m.input("b", [2, 3])
    p = m.op("PACK", [a, b], [2, 2, 3], options=("PackOptions", dict(valuesCount=2, axis=1)))
    m.output(*m.op("UNPACK", [p], [[2, 2]] * 3, options=("UnpackOptions", dict(num=3, axis=2))))


@case()
def tile_folded(m):
    x = image_in(m, [1, 2, 3, 2])
    m.output(m.op("TILE", [x, m.const("multiples", np.array([1, 2, 1, 3], np.int32))], [1, 4, 3, 6]))


def broadcast_to(m):  # not in the reference interpreter of tfjs-tflite 0.0.1-alpha.10: no case
    x = m.input("x", [3, 1])
    m.output(m.op("BROADCAST_TO", [x, m.const("shape", np.array([2, 3, 4], np.int32))], [2, 3, 4]))


@case()
def pad_folded(m):
    x = image_in(m, [1, 3, 4, 2])
    m.output(m.op("PAD", [x, m.const("pads", np.array([[0, 0], [1, 2], [2, 0], [0, 1]], np.int32))], [1, 6, 6, 3]))


@case()
def padv2_value(m):
    x = m.input("x", [2, 3])
    m.output(m.op("PADV2", [x, m.const("pads", np.array([[1, 0], [0, 2]], np.int32)), m.const("v", np.array(0.5, np.float32))],
                  [3, 5]))


@case()
def mirror_pad_reflect(m):
    x = image_in(m, [1, 4, 4, 2])
    m.output(m.op("MIRROR_PAD", [x, m.const("pads", np.array([[0, 0], [2, 1], [1, 2], [0, 0]], np.int32))], [1, 7, 7, 2],
                  options=("MirrorPadOptions", dict(mode="REFLECT"))))


@case()
def concatenation_channels(m):
    a = image_in(m, [1, 3, 3, 2], "a")
    b = m.input("b", [1, 3, 3, 3])
    m.output(m.op("CONCATENATION", [a, b], [1, 3, 3, 5],
                  options=("ConcatenationOptions", dict(axis=-1))))


@case()
def concatenation_height(m):
    a, b = image_in(m, [1, 2, 3, 2], "a"), image_in(m, [1, 4, 3, 2], "b")
    m.output(m.op("CONCATENATION", [a, b], [1, 6, 3, 2], options=("ConcatenationOptions", dict(axis=1))))


@case()
def depth_to_space(m):
    x = image_in(m, [1, 2, 3, 8])
    m.output(m.op("DEPTH_TO_SPACE", [x], [1, 4, 6, 2], options=("DepthToSpaceOptions", dict(blockSize=2))))


@case()
def space_to_depth(m):
    x = image_in(m, [1, 4, 6, 2])
    m.output(m.op("SPACE_TO_DEPTH", [x], [1, 2, 3, 8], options=("SpaceToDepthOptions", dict(blockSize=2))))


def resize(m, code, table, out_hw, **flags):
    x = image_in(m, [1, 5, 4, 3])
    m.output(m.op(code, [x, m.const("size", np.array(out_hw, np.int32))], [1, out_hw[0], out_hw[1], 3], version=3,
                  options=(table, dict(flags))))


@case()
def resize_bilinear(m): resize(m, "RESIZE_BILINEAR", "ResizeBilinearOptions", [9, 7])


@case()
def resize_bilinear_align_corners(m): resize(m, "RESIZE_BILINEAR", "ResizeBilinearOptions", [9, 7], alignCorners=True)


@case()
def resize_bilinear_half_pixel(m): resize(m, "RESIZE_BILINEAR", "ResizeBilinearOptions", [10, 8], halfPixelCenters=True)


@case()
def resize_bilinear_down_half_pixel(m): resize(m, "RESIZE_BILINEAR", "ResizeBilinearOptions", [3, 3], halfPixelCenters=True)


@case()
def resize_nearest(m): resize(m, "RESIZE_NEAREST_NEIGHBOR", "ResizeNearestNeighborOptions", [9, 7])


@case()
def resize_nearest_align_corners(m):
    resize(m, "RESIZE_NEAREST_NEIGHBOR", "ResizeNearestNeighborOptions", [9, 7], alignCorners=True)


@case()
def resize_nearest_half_pixel(m):
    resize(m, "RESIZE_NEAREST_NEIGHBOR", "ResizeNearestNeighborOptions", [10, 7], halfPixelCenters=True)


@case(0)
def shape_of(m):
    x = m.input("x", [2, 3, 4])
    m.output(m.op("SHAPE", [x], [3], out_dtype=np.int32, options=("ShapeOptions", dict(outType="INT32"))))


# --- reductions and normalizations ---------------------------------------------

def reduce(m, code, axes, keep, out, shape=(1, 4, 5, 3)):
    x = image_in(m, list(shape))
    m.output(m.op(code, [x, m.const("axes", np.array(axes, np.int32))], out, options=("ReducerOptions", dict(keepDims=keep))))


@case()
def mean_hw_keepdims(m): reduce(m, "MEAN", [1, 2], True, [1, 1, 1, 3])


@case()
def mean_hw(m): reduce(m, "MEAN", [1, 2], False, [1, 3])


@case()
def sum_channels(m): reduce(m, "SUM", [3], False, [1, 4, 5])


@case()
def reduce_max_batch_width(m): reduce(m, "REDUCE_MAX", [0, 2], False, [4, 3])


@case()
def reduce_min_all(m): reduce(m, "REDUCE_MIN", [0, 1, 2, 3], False, [])


@case()
def reduce_prod_height(m): reduce(m, "REDUCE_PROD", [1], True, [1, 1, 5, 3])


@case(0)
def arg_max_channels(m):
    x = image_in(m, [1, 3, 4, 5])
    m.output(m.op("ARG_MAX", [x, m.const("axis", np.array([3], np.int32))], [1, 3, 4], out_dtype=np.int32,
                  options=("ArgMaxOptions", dict(outputType="INT32"))))


@case(0)
def arg_min_height(m):
    x = m.input("x", [2, 5, 3])
    m.output(m.op("ARG_MIN", [x, m.const("axis", np.array([1], np.int32))], [2, 3], out_dtype=np.int32,
                  options=("ArgMinOptions", dict(outputType="INT32"))))


@case()
def softmax_beta(m):
    x = image_in(m, [1, 3, 4, 5])
    m.output(m.op("SOFTMAX", [x], [1, 3, 4, 5], options=("SoftmaxOptions", dict(beta=0.5))))


@case()
def softmax_rows(m):
    x = m.input("x", [3, 7])
    m.output(m.op("SOFTMAX", [x], [3, 7], options=("SoftmaxOptions", dict(beta=1.0))))


@case()
def log_softmax(m):
    x = m.input("x", [3, 7])
    m.output(m.op("LOG_SOFTMAX", [x], [3, 7]))


@case()
def l2_normalization(m):
    x = image_in(m, [1, 3, 4, 5])
    m.output(m.op("L2_NORMALIZATION", [x], [1, 3, 4, 5], options=("L2NormOptions", dict())))


@case()
def cumsum_exclusive_reverse(m):
    x = m.input("x", [3, 5])
    m.output(m.op("CUMSUM", [x, m.const("axis", np.array(1, np.int32))], [3, 5],
                  options=("CumsumOptions", dict(exclusive=True, reverse=True))))


@case(0)
def top_k(m):
    x = m.input("x", [3, 8])
    m.output(*m.op("TOPK_V2", [x, m.const("k", np.array(3, np.int32))], [[3, 3], [3, 3]], out_dtype=[np.float32, np.int32]))


# --- the real models ------------------------------------------------------------

MEDIAPIPE = ["selfie_segmentation/selfie_segmentation", "selfie_segmentation/selfie_segmentation_landscape",
             "face_detection/face_detection_short_range", "face_detection/face_detection_full_range",
             "face_detection/face_detection_full_range_sparse", "hands/hand_landmark_lite", "hands/hand_landmark_full"]


def with_transpose_conv(src, dst):
    """MediaPipe's Convolution2DTransposeBias as TRANSPOSE_CONV (version 3: with the bias)."""
    fb = bindings()
    import importlib
    import flatbuffers
    Model = importlib.import_module("tflite_fb.Model")
    ops_mod = {n: importlib.import_module("tflite_fb." + n) for n in
               ["BuiltinOperator", "BuiltinOptions", "TransposeConvOptions", "Tensor", "Buffer", "TensorType"]}
    data = open(src, "rb").read()
    m = Model.ModelT.InitFromObj(Model.Model.GetRootAs(bytearray(data), 0))
    custom = [i for i, c in enumerate(m.operatorCodes) if c.customCode == b"Convolution2DTransposeBias"
              or c.customCode == "Convolution2DTransposeBias"]
    if not custom:
        shutil.copy(src, dst)
        return
    tc = ops_mod["BuiltinOperator"].BuiltinOperator.TRANSPOSE_CONV
    for i in custom:
        c = m.operatorCodes[i]
        c.builtinCode, c.deprecatedBuiltinCode, c.customCode, c.version = tc, tc, None, 3
    g = m.subgraphs[0]
    for op in g.operators:
        if op.opcodeIndex not in custom:
            continue
        padding, stride_w, stride_h = np.frombuffer(bytes(bytearray(op.customOptions))[:12], np.int32)
        opts = ops_mod["TransposeConvOptions"].TransposeConvOptionsT()
        opts.padding = 0 if padding == 1 else 1  # TfLitePadding (1 SAME, 2 VALID) -> Padding (SAME 0, VALID 1)
        opts.strideW, opts.strideH = int(stride_w), int(stride_h)
        shape = ops_mod["Tensor"].TensorT()
        shape.shape, shape.type, shape.name = [4], ops_mod["TensorType"].TensorType.INT32, "output_shape"
        buf = ops_mod["Buffer"].BufferT()
        buf.data = list(np.array(g.tensors[op.outputs[0]].shape, np.int32).tobytes())
        m.buffers.append(buf)
        shape.buffer = len(m.buffers) - 1
        g.tensors.append(shape)
        x, w, b = list(op.inputs)
        op.inputs = [len(g.tensors) - 1, w, x, b]
        op.builtinOptionsType = ops_mod["BuiltinOptions"].BuiltinOptions.TransposeConvOptions
        op.builtinOptions = opts
        op.customOptions = None
    builder = flatbuffers.Builder(len(data) + 1024)
    builder.Finish(m.Pack(builder), file_identifier=b"TFL3")
    open(dst, "wb").write(bytes(builder.Output()))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, modules = sys.argv[1], sys.argv[2]
    reference = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tflite_reference.js")
    if not shutil.which("node") or not os.path.isdir(os.path.join(modules, "node_modules/@tensorflow/tfjs-tflite")):
        print("make_cases.py: node or npm's @tensorflow/tfjs-tflite is missing (scripts/tflite_node_modules.sh)")
        sys.exit(77)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    lines, declared = [], {}
    only = os.environ.get("KESTREL_TFLITE_CASES")
    for name, build, tol in CASES:
        if only and name not in only.split(","):
            continue
        m = ModelBuilder()
        build(m)
        with open(os.path.join(out, name + ".tflite"), "wb") as f:
            f.write(m.finish())
        declared[name] = [list(m.tensors[t].shape) for t in m.outputs]
        if name in POSITIVE_INPUTS:
            np.save(os.path.join(out, name + ".in0.npy"), rand(*POSITIVE_INPUTS[name], lo=0.05, hi=3.0))
        lines.append(f"{name} {tol}")
    for path in MEDIAPIPE:
        src = os.path.join(modules, "node_modules/@mediapipe", path + ".tflite")
        if only or not os.path.exists(src):
            continue
        name = "mediapipe_" + os.path.basename(path)
        shutil.copy(src, os.path.join(out, name + ".tflite"))
        ref = os.path.join(out, name + ".reference.tflite")
        with_transpose_conv(src, ref)
        lines.append(f"{name} 1e-4 {name}.reference.tflite")
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    r = subprocess.run(["node", reference, out, modules])
    # The test's declared shapes must be TFLite's (a wrong one would test nothing).
    wrong = [f"{name} output {k}: declared {s}, TFLite gives {list(np.load(os.path.join(out, f'{name}.out{k}.npy')).shape)}"
             for name, shapes in declared.items() for k, s in enumerate(shapes)
             if os.path.exists(os.path.join(out, f"{name}.out{k}.npy"))
             and list(np.load(os.path.join(out, f"{name}.out{k}.npy")).shape) != s]
    for w in wrong:
        print("make_cases.py:", w)
    sys.exit(r.returncode or (1 if wrong else 0))


if __name__ == "__main__":
    main()
