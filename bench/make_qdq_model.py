"""Writes a QDQ-quantized copy of a float ONNX model, as ONNX Runtime's static
quantizer lays one out, for timing quantized models side by side (Kestrel vs
onnxruntime-node) and checking their agreement with the float model.

Every input and output of a Conv, Gemm or MatMul (its output after a Relu
that alone reads it: the Relu then goes, the uint8 range from zero clamps as
it did; a Clip from 0, ReLU6, likewise) passes through QuantizeLinear -> DequantizeLinear with a uint8
scale and zero point from min-max calibration; the weights become int8 per
output channel (symmetric, zero point 0), a bias int32 in units of
x_scale * w_scale. Calibration runs the float model in Kestrel (its Python
module) on the model's shared input plus random normal inputs.

usage: PYTHONPATH=build/python /usr/bin/python3 bench/make_qdq_model.py MODEL.onnx INPUT.npy OUT.onnx [--inputs 16]
"""
import argparse

import numpy as np
import onnx
from onnx import helper, numpy_helper

import kestrel

QUANTIZED_OPS = ("Conv", "Gemm", "MatMul")


def consumers(graph):
    readers = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    return readers


def clamps_from_zero(node, inits):
    """A Relu, or a Clip whose lower bound is 0 (ReLU6): uint8 from zero clamps as it does."""
    if node.op_type == "Relu":
        return True
    if node.op_type != "Clip" or len(node.input) < 2 or node.input[1] not in inits:
        return False
    return float(numpy_helper.to_array(inits[node.input[1]])) == 0.0


def fold_relus(graph):
    """A Relu / ReLU6 that is the one reader of a quantized op's output goes; its readers read
    the op (the quantized range, calibrated on its output, clamps as it did)."""
    readers = consumers(graph)
    inits = {t.name: t for t in graph.initializer}
    for node in graph.node:  # Constant nodes' values, as initializers are
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            inits[node.output[0]] = node.attribute[0].t
    outputs = {o.name for o in graph.output}
    gone = []
    for node in graph.node:
        if node.op_type not in QUANTIZED_OPS:
            continue
        after = readers.get(node.output[0], [])
        if len(after) == 1 and clamps_from_zero(after[0], inits) and node.output[0] not in outputs:
            relu = after[0]
            node.output[0] = relu.output[0]
            gone.append(relu)
    for relu in gone:
        graph.node.remove(relu)


def activation_ranges(model, names, feeds):
    """min and max of each named tensor over the calibration inputs (Kestrel, float model)."""
    probe = onnx.shape_inference.infer_shapes(model)
    known = {o.name for o in probe.graph.output}
    inputs = {i.name for i in probe.graph.input}
    inferred = {v.name: v for v in probe.graph.value_info}
    for name in names:
        if name not in known and name not in inputs:
            probe.graph.output.append(inferred[name])
    path = "/tmp/kestrel_qdq_probe.onnx"
    onnx.save(probe, path)
    session = kestrel.InferenceSession(path)
    input_name = session.get_inputs()[0].name
    lo = {n: np.inf for n in names}
    hi = {n: -np.inf for n in names}
    probed = [n for n in names if n not in inputs]
    for x in feeds:
        values = dict(zip(probed, session.run(probed, {input_name: x})))
        values[input_name] = x
        for name in names:
            value = values[name]
            lo[name] = min(lo[name], float(value.min()))
            hi[name] = max(hi[name], float(value.max()))
    return lo, hi


def uint8_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0 if hi > lo else 1.0)
    zero_point = np.uint8(np.clip(round(-lo / scale), 0, 255))
    return scale, zero_point


def quantize(model, lo, hi, names):
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    outputs = {o.name for o in graph.output}
    new_inits, qdq_nodes, read_as, scale_of = [], [], {}, {}
    for name in names:  # Q -> DQ after each activation; its readers read the DQ (a graph output keeps its name)
        source = name + "_float" if name in outputs else name
        dq = name if name in outputs else name + "_dq"
        if name in outputs:
            for node in graph.node:
                node.output[:] = [source if o == name else o for o in node.output]
        scale, zp = uint8_params(lo[name], hi[name])
        scale_of[name] = scale
        new_inits += [numpy_helper.from_array(np.array(scale), name + "_scale"),
                      numpy_helper.from_array(np.array(zp), name + "_zp")]
        qdq_nodes.append(helper.make_node("QuantizeLinear", [source, name + "_scale", name + "_zp"], [name + "_q"]))
        qdq_nodes.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_scale", name + "_zp"], [dq]))
        read_as[name] = dq
    for node in graph.node:  # the weights (and biases) of the quantized ops
        x = node.input[0] if node.input else ""
        node.input[:] = [read_as.get(i, i) for i in node.input]
        if node.op_type not in QUANTIZED_OPS or len(node.input) < 2 or node.input[1] not in inits:
            continue
        w = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
        if w.ndim < 2:
            continue
        trans_b = any(a.name == "transB" and a.i for a in node.attribute)
        axis = 0 if node.op_type == "Conv" or (node.op_type == "Gemm" and trans_b) else 1
        ws = (np.abs(w).max(axis=tuple(a for a in range(w.ndim) if a != axis)) / 127.0).astype(np.float32)
        ws[ws == 0] = 1.0
        shape = [1] * w.ndim
        shape[axis] = -1
        wq = np.clip(np.round(w / ws.reshape(shape)), -127, 127).astype(np.int8)
        base = node.input[1]
        new_inits += [numpy_helper.from_array(wq, base + "_int8"), numpy_helper.from_array(ws, base + "_wscale")]
        qdq_nodes.append(helper.make_node("DequantizeLinear", [base + "_int8", base + "_wscale"], [base + "_wdq"],
                                          axis=axis))
        node.input[1] = base + "_wdq"
        if len(node.input) > 2 and node.input[2] in inits:
            b = numpy_helper.to_array(inits[node.input[2]]).astype(np.float32)
            bs = (scale_of[x] * ws).astype(np.float32)
            bname = node.input[2]
            new_inits += [numpy_helper.from_array(np.round(b / bs).astype(np.int32), bname + "_int32"),
                          numpy_helper.from_array(bs, bname + "_bscale")]
            qdq_nodes.append(helper.make_node("DequantizeLinear", [bname + "_int32", bname + "_bscale"],
                                              [bname + "_bdq"], axis=0))
            node.input[2] = bname + "_bdq"
    graph.initializer.extend(new_inits)
    # The Q / DQ nodes go where their inputs are written: sort the whole graph.
    nodes = list(graph.node) + qdq_nodes
    del graph.node[:]
    graph.node.extend(topological(nodes, {i.name for i in graph.input} | {t.name for t in graph.initializer}))
    return model


def topological(nodes, available):
    done, order = set(available), []
    pending = list(nodes)
    while pending:
        ready = [n for n in pending if all(not i or i in done for i in n.input)]
        if not ready:
            raise SystemExit("the graph has a cycle or an unknown input")
        for n in ready:
            order.append(n)
            done.update(n.output)
        pending = [n for n in pending if n not in ready]
    return order


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("input")
    ap.add_argument("out")
    ap.add_argument("--inputs", type=int, default=16)
    args = ap.parse_args()
    original = onnx.load(args.model)
    model = onnx.ModelProto()
    model.CopyFrom(original)
    fold_relus(model.graph)
    names = []
    for node in model.graph.node:
        if node.op_type in QUANTIZED_OPS:
            for name in (node.input[0], node.output[0]):
                if name not in names:
                    names.append(name)
    x = np.load(args.input).astype(np.float32)
    rng = np.random.default_rng(0)
    feeds = [x] + [rng.standard_normal(x.shape).astype(np.float32) for _ in range(args.inputs - 1)]
    lo, hi = activation_ranges(original, names, feeds)  # a folded Relu's output: from zero
    onnx.save(quantize(model, lo, hi, names), args.out)
    print(f"{args.out}: {len(names)} activations quantized")


if __name__ == "__main__":
    main()
