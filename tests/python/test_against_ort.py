"""Kestrel against ONNX Runtime on models that ONNX Runtime runs (issue #44:
"Every ONNX model that ONNX Runtime runs, Kestrel runs, with its numbers").

Each test builds its model here with onnx.helper (deterministic weights), and
scripts/check_against_ort.py runs it with both engines and compares every
output. ONNX Runtime is npm's onnxruntime-node in $KESTREL_ORT_NODE_MODULES
(ctest's fixture fetch_ort_node installs it) or build/ort-node; the tests skip
when node, npm or onnxruntime-node are missing. Kestrel is $KESTREL_TOOL or
build/kestrel.
"""
import importlib.util
import itertools
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

CHECK = os.path.join(ROOT, "scripts", "check_against_ort.py")
_spec = importlib.util.spec_from_file_location("check_against_ort", CHECK)
check_against_ort = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_against_ort)

KESTREL = check_against_ort.default_kestrel()
F, F16, U8, I32 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.UINT8, TensorProto.INT32


# --- building models ---------------------------------------------------------------------------

def value(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def const(name, array):
    """An initializer holding array (its numpy dtype decides the element type)."""
    return numpy_helper.from_array(np.asarray(array), name)


def node(op, inputs, outputs, name=None, **attrs):
    """A node, named after its first output unless told otherwise."""
    return helper.make_node(op, inputs, outputs, name=name or f"{op} {outputs[0]}", **attrs)


def model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def save(m, tmp_path, name="model.onnx", check=True):
    if check:
        onnx.checker.check_model(m)
    path = str(tmp_path / name)
    onnx.save(m, path)
    return path


def weights(rng, *shape, scale=None):
    """Normal float32 weights, scaled by 1/sqrt(the size of all but the first axis) unless told."""
    scale = scale if scale is not None else 1.0 / math.sqrt(np.prod(shape[1:]) if len(shape) > 1 else shape[0])
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def to_float16(m):
    """The float32 model m in float16 throughout: initializers, Constants, Cast targets, inputs and outputs."""
    g = m.graph
    for i, init in enumerate(g.initializer):
        if init.data_type == F:
            g.initializer[i].CopyFrom(const(init.name, numpy_helper.to_array(init).astype(np.float16)))
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Constant" and a.name == "value" and a.t.data_type == F:
                a.t.CopyFrom(const(a.t.name, numpy_helper.to_array(a.t).astype(np.float16)))
            if n.op_type == "Cast" and a.name == "to" and a.i == F:
                a.i = F16
    for v in list(g.input) + list(g.output):
        if v.type.tensor_type.elem_type == F:
            v.type.tensor_type.elem_type = F16
    del g.value_info[:]
    return m


# --- running both engines ----------------------------------------------------------------------

@pytest.fixture(scope="session")
def ort_node_modules():
    """The folder whose node_modules has onnxruntime-node (installed if missing); skips without it."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    folder = check_against_ort.default_ort_node_modules()
    if not os.path.isdir(os.path.join(folder, "node_modules", "onnxruntime-node")):
        r = subprocess.run(["bash", check_against_ort.ORT_INSTALL, folder], capture_output=True, text=True)
        if r.returncode == 77 or not os.path.isdir(os.path.join(folder, "node_modules", "onnxruntime-node")):
            pytest.skip(f"onnxruntime-node is not installed in {folder}: {r.stderr.strip()}")
    return folder


def write_inputs(tmp_path, inputs):
    """The arrays {name: array} as .npy files in tmp_path: {name: file}."""
    files = {}
    for i, (name, array) in enumerate(inputs.items()):
        files[name] = str(tmp_path / f"given_{i}.npy")
        np.save(files[name], array)
    return files


def check(path, ort_node_modules, tmp_path, *options, inputs=None):
    """check_against_ort.py on the model at path, inputs {name: array} given as .npy; its printout."""
    args = [sys.executable, CHECK, path, "--kestrel", KESTREL, "--ort-node-modules", ort_node_modules, *options]
    for name, file in write_inputs(tmp_path, inputs or {}).items():
        args += ["--input", f"{name}={file}"]
    r = subprocess.run(args, capture_output=True, text=True)
    print(r.stdout)
    assert r.returncode == 0, f"exit status {r.returncode}\n{r.stdout}{r.stderr}"
    return r.stdout


# --- a. nested If: three levels, 42 If nodes, 84 subgraphs -------------------------------------

def nested_if_model(trees=6, depth=3):
    """trees If nodes on x, each branch a small float expression of its enclosing scope's value and
    (above depth) another If on that value; the conditions compare weighted sums with 0."""
    rng = np.random.RandomState(44)
    initializers = [const("zero", np.float32(0))]
    kinds = itertools.count()

    def expression(prefix, v):
        c, k = np.float32(rng.uniform(0.5, 1.5)), next(kinds)
        out = f"{prefix}_e"
        if k % 6 == 0:  # a constant of the main graph, from three scopes out
            initializers.append(const(f"{prefix}_c", c))
            return [node("Mul", [v, f"{prefix}_c"], [out])], out
        if k % 6 == 1:
            return [node("Constant", [], [f"{prefix}_c"], value=const("c", c)),
                    node("Add", [v, f"{prefix}_c"], [out])], out
        if k % 6 == 2:
            return [node("Tanh", [v], [out])], out
        if k % 6 == 3:
            return [node("Sigmoid", [v], [f"{prefix}_s"]), node("Sub", [f"{prefix}_s", "zero"], [out])], out
        if k % 6 == 4:
            return [node("Abs", [v], [f"{prefix}_a"]), node("Mul", [f"{prefix}_a", v], [out])], out
        return [node("Neg", [v], [out])], out

    def branch(prefix, v, level):
        nodes, e = expression(prefix, v)
        if level == depth:
            return helper.make_graph(nodes, prefix, [], [value(e, F, [2, 3])])
        nodes += if_node(prefix, e, level + 1)
        nodes.append(node("Add", [e, f"{prefix}_if"], [f"{prefix}_out"]))
        return helper.make_graph(nodes, prefix, [], [value(f"{prefix}_out", F, [2, 3])])

    def if_node(prefix, v, level):
        w = rng.standard_normal((2, 3)).astype(np.float32)
        return [node("Constant", [], [f"{prefix}_w"], value=const("w", w)),
                node("Mul", [v, f"{prefix}_w"], [f"{prefix}_m"]),
                node("ReduceSum", [f"{prefix}_m"], [f"{prefix}_sum"], keepdims=0),
                node("Greater", [f"{prefix}_sum", "zero"], [f"{prefix}_cond"]),
                node("If", [f"{prefix}_cond"], [f"{prefix}_if"],
                     then_branch=branch(f"{prefix}t", v, level), else_branch=branch(f"{prefix}f", v, level))]

    nodes = [n for t in range(trees) for n in if_node(f"t{t}", "x", 1)]
    return model(nodes, [value("x", F, [2, 3])], [value(f"t{t}_if", F, [2, 3]) for t in range(trees)],
                 initializers)


def if_stats(graph, depth=1):
    """(If nodes, subgraphs, the deepest If's level) in graph and its subgraphs."""
    ifs, subgraphs, deepest = 0, 0, 0
    for n in graph.node:
        if n.op_type == "If":
            ifs, deepest = ifs + 1, max(deepest, depth)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                i, s, d = if_stats(a.g, depth + 1)
                ifs, subgraphs, deepest = ifs + i, subgraphs + s + 1, max(deepest, d)
    return ifs, subgraphs, deepest


# Issue #44 (a): nested control flow (If three levels deep, more than 32 subgraphs).
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nested_ifs_three_deep(ort_node_modules, tmp_path, seed):
    m = nested_if_model()
    assert if_stats(m.graph) == (42, 84, 3)
    check(save(m, tmp_path), ort_node_modules, tmp_path, "--rtol", "1e-5", "--seed", str(seed))


# Issue #44 (a): a limit refuses a model past it naming the limit and its option, and the option raises it.
def test_subgraph_limit_names_its_option(tmp_path):
    path = save(nested_if_model(), tmp_path)
    r = subprocess.run([KESTREL, "run", path, "--onnx-limit", "subgraphs=80"], capture_output=True, text=True)
    assert r.returncode == 1 and "more than 80 subgraphs" in r.stderr and "--onnx-limit subgraphs=N" in r.stderr, r.stderr
    r = subprocess.run([KESTREL, "run", path, "--onnx-limit", "depth=2"], capture_output=True, text=True)
    assert r.returncode == 1 and "deeper than 2 levels" in r.stderr and "max_nesting_depth" in r.stderr, r.stderr
    r = subprocess.run([KESTREL, "run", path, "--onnx-limit", "subgraphs=84"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# --- b. dynamic quantization, bit for bit ------------------------------------------------------
# ONNX Runtime's uint8 x int8 matrix products on AVX2 and AVX-512 without VNNI (vpmaddubsw) saturate
# each sum of two neighbouring products to int16, so MatMulInteger, QLinearConv and QLinearMatMul
# give other numbers than ONNX's there when 2 * 255 * |w| > 32767. Their int8 weights are 7-bit,
# as quantize_dynamic's reduce_range makes them; ConvInteger does not saturate and takes all 8 bits.

def dynamic_conv(x, prefix, w, w_zero_point, w_scale, **conv):
    """ONNX Runtime's quantize_dynamic of a Conv: DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul
    by x_scale * w_scale. Returns (nodes, initializers, the float output, the int32 output)."""
    p = prefix
    nodes = [node("DynamicQuantizeLinear", [x], [f"{p}_xq", f"{p}_xs", f"{p}_xz"]),
             node("ConvInteger", [f"{p}_xq", f"{p}_w", f"{p}_xz", f"{p}_wz"], [f"{p}_int32"], **conv),
             node("Mul", [f"{p}_xs", f"{p}_ws"], [f"{p}_scales"]),
             node("Cast", [f"{p}_int32"], [f"{p}_cast"], to=F),
             node("Mul", [f"{p}_cast", f"{p}_scales"], [f"{p}_y"])]
    inits = [const(f"{p}_w", w), const(f"{p}_wz", w_zero_point), const(f"{p}_ws", w_scale)]
    return nodes, inits, f"{p}_y", f"{p}_int32"


def dynamic_conv_model():
    """Three quantized convolutions on a 1x16x20x20 input: (i) int8 weights, zero point 0, pads 1;
    (ii) uint8 weights, per-tensor zero point 131, stride 2, group 2; (iii) int8 weights, zero point
    -3, per-output-channel scales, dilation 2 over 64 channels (576 terms a sum). ONNX Runtime's
    ConvInteger takes no per-channel zero point ("Non per-tensor quantization is not supported now")."""
    rng = np.random.RandomState(441)
    layers = [
        ("c1", rng.randint(-127, 128, (32, 16, 3, 3)).astype(np.int8), np.int8(0), np.float32(0.004),
         dict(pads=[1, 1, 1, 1]), [1, 32, 20, 20]),
        ("c2", rng.randint(0, 256, (64, 16, 3, 3)).astype(np.uint8), np.uint8(131), np.float32(0.003),
         dict(pads=[1, 1, 1, 1], strides=[2, 2], group=2), [1, 64, 10, 10]),
        ("c3", rng.randint(-128, 128, (48, 64, 3, 3)).astype(np.int8), np.int8(-3),
         rng.uniform(0.001, 0.003, (48, 1, 1)).astype(np.float32), dict(pads=[2, 2, 2, 2], dilations=[2, 2]),
         [1, 48, 10, 10]),
    ]
    nodes, inits, outputs, x = [], [], [], "x"
    for prefix, w, zp, scale, conv, shape in layers:
        n, i, y, int32 = dynamic_conv(x, prefix, w, zp, scale, kernel_shape=[3, 3], **conv)
        nodes += n + [node("Relu", [y], [f"{prefix}_relu"])]
        inits += i
        outputs += [value(int32, I32, shape), value(y, F, shape)]
        x = f"{prefix}_relu"
    return model(nodes, [value("x", F, [1, 16, 20, 20])], outputs, inits)


def dynamic_matmul_model():
    """DynamicQuantizeLinear on a (2,7,48) input into MatMulInteger with constant B: 7-bit int8 with
    zero point 0, and uint8 with per-column zero points and scales."""
    rng = np.random.RandomState(442)
    b_int8 = rng.randint(-64, 64, (48, 24)).astype(np.int8)
    b_uint8 = rng.randint(0, 256, (48, 16)).astype(np.uint8)
    b_zp = rng.randint(100, 156, 16).astype(np.uint8)
    b_scale = rng.uniform(0.002, 0.01, 16).astype(np.float32)
    nodes = [node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"])]
    inits, outputs = [], []
    for p, b, zp, scale in (("m1", b_int8, np.int8(0), np.float32(0.005)), ("m2", b_uint8, b_zp, b_scale)):
        nodes += [node("MatMulInteger", ["xq", f"{p}_b", "xz", f"{p}_bz"], [f"{p}_int32"]),
                  node("Mul", ["xs", f"{p}_bs"], [f"{p}_scales"]),
                  node("Cast", [f"{p}_int32"], [f"{p}_cast"], to=F),
                  node("Mul", [f"{p}_cast", f"{p}_scales"], [f"{p}_y"])]
        inits += [const(f"{p}_b", b), const(f"{p}_bz", zp), const(f"{p}_bs", scale)]
        outputs += [value(f"{p}_int32", I32, [2, 7, b.shape[1]]), value(f"{p}_y", F, [2, 7, b.shape[1]])]
    return model(nodes, [value("x", F, [2, 7, 48])], outputs, inits)


def extremes(rng, shape, high, low=0):
    """Integers mostly at low or high (products of 255 * 255 size), some in between."""
    return np.where(rng.rand(*shape) < 0.8, np.where(rng.rand(*shape) < 0.9, high, low),
                    rng.randint(low, high + 1, shape))


# Issue #44 (b): dynamic quantization bit for bit (quantize_dynamic's Conv chains).
def test_dynamic_quantized_convolutions_bit_for_bit(ort_node_modules, tmp_path):
    check(save(dynamic_conv_model(), tmp_path), ort_node_modules, tmp_path, "--exact")


# Issue #44 (b): dynamic quantization bit for bit (quantize_dynamic's MatMul chains).
def test_dynamic_quantized_matmuls_bit_for_bit(ort_node_modules, tmp_path):
    check(save(dynamic_matmul_model(), tmp_path), ort_node_modules, tmp_path, "--exact")


# Issue #44 (b): dynamic quantization bit for bit (MatMulInteger of two run-time operands; sums of
# 600 products of 255 * 255, past float32's exact integers).
def test_matmul_integer_of_run_time_operands(ort_node_modules, tmp_path):
    rng = np.random.RandomState(443)
    m = model([node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
              [value("a", U8, [3, 600]), value("b", U8, [600, 5]), value("az", U8, []), value("bz", U8, [])],
              [value("y", I32, [3, 5])])
    inputs = {"a": extremes(rng, (3, 600), 255).astype(np.uint8), "b": extremes(rng, (600, 5), 255).astype(np.uint8),
              "az": np.uint8(0), "bz": np.uint8(1)}
    check(save(m, tmp_path), ort_node_modules, tmp_path, "--exact", inputs=inputs)


def tied_data():
    """Range [-2.5, 252.5], scale 1: every value and the zero point 2.5 are rounding ties."""
    return np.concatenate([[-2.5, 252.5], np.arange(-2, 252) + 0.5]).astype(np.float32)


DYNAMIC_QUANTIZE_DATA = {
    "ties": tied_data(),
    "negative": -np.abs(np.random.RandomState(1).standard_normal(300)).astype(np.float32) - 0.1,
    "positive": np.abs(np.random.RandomState(2).standard_normal(300)).astype(np.float32) * 7 + 0.01,
    "zero": np.zeros(300, np.float32),
    "large range": np.concatenate([[3.0e7, -1.0e6, 1e-3, -1e-3],
                                   np.random.RandomState(3).standard_normal(296) * 1e5]).astype(np.float32),
}


# Issue #44 (b): dynamic quantization bit for bit (DynamicQuantizeLinear's y, scale and zero point).
@pytest.mark.parametrize("data", DYNAMIC_QUANTIZE_DATA)
def test_dynamic_quantize_linear_alone(ort_node_modules, tmp_path, data):
    m = model([node("DynamicQuantizeLinear", ["x"], ["y", "y_scale", "y_zero_point"])],
              [value("x", F, ["n"])], [value("y", U8, ["n"]), value("y_scale", F, []), value("y_zero_point", U8, [])])
    check(save(m, tmp_path), ort_node_modules, tmp_path, "--exact", inputs={"x": DYNAMIC_QUANTIZE_DATA[data]})


def qlinear_model(op, w, w_zero_point, y_scale, bias=None):
    """QLinearConv (3x3, pads 1) or QLinearMatMul of a uint8 input with constant weights and scales."""
    x_shape, y_shape = ([1, 64, 6, 6], [1, 8, 6, 6]) if op == "QLinearConv" else ([4, 640], [4, 8])
    inputs = ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"] + ([] if bias is None else ["bias"])
    inits = [const("x_scale", np.float32(0.02)), const("x_zp", np.uint8(0)), const("w", w),
             const("w_scale", np.float32(0.0005)), const("w_zp", w_zero_point), const("y_scale", np.float32(y_scale)),
             const("y_zp", np.uint8(10))] + ([const("bias", bias)] if bias is not None else [])
    attrs = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]) if op == "QLinearConv" else {}
    return model([node(op, inputs, ["y"], **attrs)], [value("x", U8, x_shape)], [value("y", U8, y_shape)], inits)


# Issue #44 (b): dynamic quantization bit for bit (QLinearConv and QLinearMatMul: uint8 weights with a
# nonzero zero point; int8 symmetric weights with an int32 bias; 576 and 640 terms a sum).
@pytest.mark.parametrize("op", ["QLinearConv", "QLinearMatMul"])
@pytest.mark.parametrize("weights", ["uint8", "int8"])
def test_qlinear_ops_bit_for_bit(ort_node_modules, tmp_path, op, weights):
    rng = np.random.RandomState(444)
    w_shape = (8, 64, 3, 3) if op == "QLinearConv" else (640, 8)
    if weights == "uint8":
        w, zp, bias, y_scale = extremes(rng, w_shape, 255).astype(np.uint8), np.uint8(3), None, 1.2
    else:
        w, zp, y_scale = extremes(rng, w_shape, 63, -64).astype(np.int8), np.int8(0), 0.25
        bias = rng.randint(-50000, 50000, 8).astype(np.int32) if op == "QLinearConv" else None
    m = qlinear_model(op, w, zp, y_scale, bias)
    x_shape = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
    check(save(m, tmp_path), ort_node_modules, tmp_path, "--exact",
          inputs={"x": extremes(rng, x_shape, 255).astype(np.uint8)})


# --- c. graphs out of order, and cycles -------------------------------------------------------

def unsorted_model():
    """A uint8 picture through Cast, six convolutions, adds and a Concat (15 nodes), its nodes
    shuffled out of topological order."""
    rng = np.random.RandomState(445)
    inits = [const(f"w{i}", weights(rng, 8, c, 3, 3)) for i, c in enumerate([3, 8, 8, 3, 16, 8])]
    inits += [const("bias", weights(rng, 8, scale=0.1))]
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    nodes = [node("Cast", ["picture"], ["x"], to=F),
             node("Div", ["x", "255"], ["xn"]),
             node("Conv", ["xn", "w0", "bias"], ["a"], **conv),
             node("Relu", ["a"], ["a_relu"]),
             node("Conv", ["a_relu", "w1"], ["b"], **conv),
             node("Add", ["a", "b"], ["ab"]),
             node("Conv", ["ab", "w2"], ["c"], **conv),
             node("Conv", ["xn", "w3"], ["d"], **conv),
             node("Sigmoid", ["d"], ["d_sig"]),
             node("Add", ["c", "d_sig"], ["cd"]),
             node("Concat", ["cd", "ab"], ["cat"], axis=1),
             node("Conv", ["cat", "w4"], ["e"], **conv),
             node("Relu", ["e"], ["e_relu"]),
             node("Conv", ["e_relu", "w5"], ["f"], **conv),
             node("Add", ["f", "cd"], ["y"])]
    order = rng.permutation(len(nodes))
    m = model([nodes[i] for i in order], [value("picture", U8, [1, 3, 12, 12])], [value("y", F, [1, 8, 12, 12])],
              inits + [const("255", np.float32(255))])
    return m


def is_sorted(graph):
    known = {v.name for v in graph.input} | {i.name for i in graph.initializer}
    for n in graph.node:
        if not set(n.input) <= known:
            return False
        known |= set(n.output)
    return True


# Issue #44 (c): nodes in any order (ONNX's checker refuses them, ONNX Runtime sorts them).
def test_unsorted_graph(ort_node_modules, tmp_path):
    m = unsorted_model()
    assert not is_sorted(m.graph)
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(m)
    check(save(m, tmp_path, check=False), ort_node_modules, tmp_path, inputs={
        "picture": np.random.RandomState(5).randint(0, 256, (1, 3, 12, 12)).astype(np.uint8)})


# Issue #44 (c): a graph with a cycle is refused with the name of a node on it (no ORT needed).
def test_a_cycle_is_refused_naming_a_node_on_it(tmp_path):
    nodes = [node("Relu", ["x"], ["x_relu"], name="before the cycle"),
             node("Add", ["x_relu", "back"], ["sum"], name="cycle add"),
             node("Sigmoid", ["sum"], ["squashed"], name="cycle sigmoid"),
             node("Mul", ["squashed", "x"], ["back"], name="cycle mul"),
             node("Neg", ["back"], ["y"], name="after the cycle")]
    path = save(model(nodes, [value("x", F, [1, 4])], [value("y", F, [1, 4])]), tmp_path, check=False)
    r = subprocess.run([KESTREL, "run", path, "--output", f"y={tmp_path / 'y.npy'}"], capture_output=True, text=True)
    assert r.returncode == 1, f"exit status {r.returncode}\n{r.stdout}{r.stderr}"
    assert any(name in r.stderr for name in ("cycle add", "cycle sigmoid", "cycle mul")), r.stderr


# --- d. float16 throughout ---------------------------------------------------------------------

def cnn_model():
    """Conv, BatchNormalization, Relu, MaxPool, Conv with bias, GlobalAveragePool, Flatten, Gemm,
    Softmax on a 1x3x16x16 picture; the logits are an output too."""
    rng = np.random.RandomState(446)
    inits = [const("w1", weights(rng, 8, 3, 3, 3)), const("bn_scale", rng.uniform(0.5, 1.5, 8).astype(np.float32)),
             const("bn_bias", weights(rng, 8, scale=0.1)), const("bn_mean", weights(rng, 8, scale=0.1)),
             const("bn_var", rng.uniform(0.5, 2, 8).astype(np.float32)), const("w2", weights(rng, 16, 8, 3, 3)),
             const("b2", weights(rng, 16, scale=0.1)), const("fc_w", weights(rng, 10, 16)),
             const("fc_b", weights(rng, 10, scale=0.1))]
    nodes = [node("Conv", ["picture", "w1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["bn"], epsilon=1e-3),
             node("Relu", ["bn"], ["r1"]),
             node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             node("Conv", ["p1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("GlobalAveragePool", ["c2"], ["gap"]),
             node("Flatten", ["gap"], ["flat"]),
             node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1),
             node("Softmax", ["logits"], ["probabilities"], axis=1)]
    return model(nodes, [value("picture", F, [1, 3, 16, 16])],
                 [value("probabilities", F, [1, 10]), value("logits", F, [1, 10])], inits, opset=15)


def transformer_model(seq=8, d=32, heads=4, hidden=64):
    """A pre-norm transformer block: LayerNormalization, attention over heads (scores divided by
    sqrt of the head size, from the shape through Cast), Erf-based Gelu, residual adds."""
    rng = np.random.RandomState(447)
    inits = [const(n, weights(rng, d, d)) for n in ("wq", "wk", "wv", "wo")]
    inits += [const(n, weights(rng, d, scale=0.1)) for n in ("bq", "bk", "bv", "bo", "ln1_b", "ln2_b")]
    inits += [const(n, rng.uniform(0.8, 1.2, d).astype(np.float32)) for n in ("ln1_g", "ln2_g")]
    inits += [const("w1", weights(rng, d, hidden)), const("b1", weights(rng, hidden, scale=0.1)),
              const("w2", weights(rng, hidden, d)), const("b2", weights(rng, d, scale=0.1)),
              const("heads_shape", np.array([1, seq, heads, d // heads], np.int64)),
              const("model_shape", np.array([1, seq, d], np.int64)), const("three", np.array(3, np.int64)),
              const("half", np.float32(0.5)), const("one", np.float32(1)), const("sqrt2", np.float32(math.sqrt(2)))]
    nodes = [node("LayerNormalization", ["x", "ln1_g", "ln1_b"], ["h"], axis=-1, epsilon=1e-5)]
    for n in "qkv":
        nodes += [node("MatMul", ["h", f"w{n}"], [f"{n}_mm"]), node("Add", [f"{n}_mm", f"b{n}"], [n]),
                  node("Reshape", [n, "heads_shape"], [f"{n}_split"])]
    nodes += [node("Transpose", ["q_split"], ["q_heads"], perm=[0, 2, 1, 3]),
              node("Transpose", ["k_split"], ["k_heads_t"], perm=[0, 2, 3, 1]),
              node("Transpose", ["v_split"], ["v_heads"], perm=[0, 2, 1, 3]),
              node("MatMul", ["q_heads", "k_heads_t"], ["scores"]),
              node("Shape", ["q_heads"], ["q_shape"]),
              node("Gather", ["q_shape", "three"], ["head_size"], axis=0),
              node("Cast", ["head_size"], ["head_size_f"], to=F),
              node("Sqrt", ["head_size_f"], ["sqrt_d"]),
              node("Div", ["scores", "sqrt_d"], ["scaled"]),
              node("Softmax", ["scaled"], ["attention"], axis=-1),
              node("MatMul", ["attention", "v_heads"], ["context"]),
              node("Transpose", ["context"], ["context_t"], perm=[0, 2, 1, 3]),
              node("Reshape", ["context_t", "model_shape"], ["merged"]),
              node("MatMul", ["merged", "wo"], ["o_mm"]),
              node("Add", ["o_mm", "bo"], ["o"]),
              node("Add", ["x", "o"], ["r1"]),
              node("LayerNormalization", ["r1", "ln2_g", "ln2_b"], ["h2"], axis=-1, epsilon=1e-5),
              node("MatMul", ["h2", "w1"], ["f_mm"]),
              node("Add", ["f_mm", "b1"], ["f"]),
              node("Div", ["f", "sqrt2"], ["f_scaled"]),
              node("Erf", ["f_scaled"], ["erf"]),
              node("Add", ["erf", "one"], ["erf_1"]),
              node("Mul", ["f", "erf_1"], ["gelu_2"]),
              node("Mul", ["gelu_2", "half"], ["gelu"]),
              node("MatMul", ["gelu", "w2"], ["g_mm"]),
              node("Add", ["g_mm", "b2"], ["g"]),
              node("Add", ["r1", "g"], ["y"])]
    return model(nodes, [value("x", F, [1, seq, d])], [value("y", F, [1, seq, d])], inits, opset=17)


# Issue #44 (d): float16 models (inputs, weights, outputs and arithmetic in float16).
@pytest.mark.parametrize("build", [cnn_model, transformer_model], ids=["cnn", "transformer"])
def test_float16_model(ort_node_modules, tmp_path, build):
    m = to_float16(build())
    assert all(v.type.tensor_type.elem_type == F16 for v in list(m.graph.input) + list(m.graph.output))
    assert not any(i.data_type == F for i in m.graph.initializer)
    printout = check(save(m, tmp_path), ort_node_modules, tmp_path)
    assert "float16" in printout and "ratio" in printout


# --- e. names with spaces, quotes, slashes, '=', JSON and non-ASCII ----------------------------

NAMES = {"a": 'in put/"a"=1', "b": '{"1": "1_minute_timer", "2": "x"}', "sum": "it's a/b=c",
         "scaled": "Größe/中间 2", "relu": "Größe/输出 1", "diff": 'out = {"k": "v"}'}


def names_model():
    n = NAMES
    nodes = [node("Add", [n["a"], n["b"]], [n["sum"]], name="add 'a'/b=\"c\""),
             node("Mul", [n["sum"], "scale/量"], [n["scaled"]], name="Größe"),
             node("Relu", [n["scaled"]], [n["relu"]], name='{"op": "relu"}'),
             node("Sub", [n["scaled"], n["a"]], [n["diff"]])]
    return model(nodes, [value(n["a"], F, [2, 5]), value(n["b"], F, [2, 5])],
                 [value(n["relu"], F, [2, 5]), value(n["diff"], F, [2, 5])], [const("scale/量", np.float32(1.5))])


# Issue #44 (e): any names (inputs, outputs and values between) through the command line.
def test_names_through_the_command_line(ort_node_modules, tmp_path):
    printout = check(save(names_model(), tmp_path), ort_node_modules, tmp_path)
    assert repr(NAMES["relu"]) in printout and repr(NAMES["diff"]) in printout


# Issue #44 (e): names survive `kestrel convert` (the .param writer escapes them, its reader unescapes
# them): the converted model answers to the same names with the same numbers.
def test_names_through_a_converted_param_file(tmp_path):
    path = save(names_model(), tmp_path)
    param, weights = str(tmp_path / "names.param"), str(tmp_path / "names.bin")
    subprocess.run([KESTREL, "convert", path, param, weights], check=True, capture_output=True)
    rng = np.random.RandomState(9)
    files = write_inputs(tmp_path, {NAMES[k]: rng.standard_normal((2, 5)).astype(np.float32) for k in ("a", "b")})
    results = []
    for model_file in (path, param):
        out = str(tmp_path / f"out{len(results)}.npy")
        args = [KESTREL, "run", model_file, "--output", f"{NAMES['diff']}={out}"]
        for name, file in files.items():
            args += ["--input", f"{name}={file}"]
        subprocess.run(args, check=True, capture_output=True)
        results.append(np.load(out))
    assert np.array_equal(results[0], results[1])


# Issue #44 (e): any names through the Python module, outputs asked for by their exact names.
def test_names_through_the_python_module(ort_node_modules, tmp_path):
    kestrel = pytest.importorskip("kestrel")
    if not kestrel.has_onnx:
        pytest.skip("the Python module is built without the ONNX importer")
    path = save(names_model(), tmp_path)
    rng = np.random.RandomState(6)
    inputs = {NAMES[k]: rng.standard_normal((2, 5)).astype(np.float32) for k in ("a", "b")}
    ref = dict(check_against_ort.run_ort(path, write_inputs(tmp_path, inputs), str(tmp_path), ort_node_modules))
    session = kestrel.InferenceSession(path)
    assert [i.name for i in session.get_inputs()] == [NAMES["a"], NAMES["b"]]
    assert [o.name for o in session.get_outputs()] == [NAMES["relu"], NAMES["diff"]]
    asked = [NAMES["diff"], NAMES["relu"], NAMES["sum"]]
    got = session.run(asked, inputs)
    ref[NAMES["sum"]] = inputs[NAMES["a"]] + inputs[NAMES["b"]]
    for name, array in zip(asked, got):
        passes, line = check_against_ort.compare(name, np.asarray(array), ref[name])
        assert passes, line
