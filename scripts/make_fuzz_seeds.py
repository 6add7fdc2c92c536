#!/usr/bin/env python3
"""Writes the small binary seed files of fuzz/corpus (committed; rerun to regenerate)."""
import os, struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus")

def write(sub, name, data):
    with open(os.path.join(ROOT, sub, name), "wb") as f:
        f.write(data)

def i32(*v):
    return struct.pack("<%di" % len(v), *v)

# .param.bin: Input(16) -> Convolution(6) 1x1 -> ReLU(26); strings and arrays too.
pb = i32(7767517, 4, 4)
pb += i32(16, 0, 1, 0) + i32(0, 4, 1, 4, 2, 2, -233)
pb += i32(6, 1, 1, 0, 1) + i32(0, 3, 1, 1, 5, 1, 6, 6, -233)
pb += i32(26, 1, 1, 1, 2) + i32(-23300, 1, 0, -233)
pb += i32(27, 1, 1, 2, 3) + i32(-23406, 3) + b"-1\x00\x00" + i32(-233)
write("param_bin", "small.param.bin", pb)

# .bin for fuzz_model_bin's fixed .param, in three encodings of the tagged weights.
def tagged(count, kind, seed):
    vals = [((i * 7 + seed) % 11 - 5) / 8.0 for i in range(count)]
    if kind == "fp32":
        return struct.pack("<I", 0) + struct.pack("<%df" % count, *vals)
    if kind == "fp16":
        data = struct.pack("<I", 0x01306B47) + struct.pack("<%de" % count, *vals)
        return data + b"\x00" * ((4 - (count * 2) % 4) % 4)
    table = [i / 64.0 - 2.0 for i in range(256)]
    idx = bytes((i * 13 + seed) % 256 for i in range(count))
    return struct.pack("<I", 0x12345678) + struct.pack("<256f", *table) + idx + b"\x00" * ((4 - count % 4) % 4)

def raw(count, seed):
    return struct.pack("<%df" % count, *[((i * 5 + seed) % 7) / 4.0 + 0.25 for i in range(count)])

for kind in ("fp32", "fp16", "codebook"):
    data = tagged(108, kind, 1) + raw(4, 2) + tagged(36, kind, 3) + raw(4, 4)
    data += raw(4, 5) + raw(4, 6) + raw(4, 7) + raw(4, 8)  # BatchNorm slope, mean, var, bias
    data += tagged(20, kind, 9) + raw(5, 10)
    write("model_bin", kind + ".bin", data)

# .npy files of several dtypes and ranks.
def npy(descr, shape, payload):
    shape_txt = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_txt)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload

write("npy", "f32.npy", npy("<f4", (2, 3), struct.pack("<6f", *range(6))))
write("npy", "i64.npy", npy("<i8", (4,), struct.pack("<4q", -1, 0, 1, 2**40)))
write("npy", "bool.npy", npy("|b1", (2, 2), bytes([1, 0, 0, 1])))
write("npy", "scalar_f64.npy", npy("<f8", (), struct.pack("<d", 3.5)))
write("npy", "u16_rank5.npy", npy("<u2", (1, 1, 2, 1, 2), struct.pack("<4H", 1, 2, 3, 65535)))

for i, e in enumerate(["-1,*(0h,2),+(1c,2)", "//(0w,3),max(1h,2)", "round(/(0w,3.5))", "and(0c,7),lshift(1w,3)",
                       "trunc(*(sqrt(0h),1.5)),-(0d,1)", "remainder(-7,3),fmod(7.5,2)", "0n,1n,2n"]):
    write("expression", "e%d.txt" % i, e.encode())

# Tiny ONNX models (needs python3-onnx; skipped without it).
try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:
    onnx = None
if onnx is not None:
    def save(name, nodes, inputs, outputs, inits=()):
        graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        write("onnx", name + ".onnx", model.SerializeToString())
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    save("relu", [helper.make_node("Relu", ["x"], ["y"])], [x], [y])
    w = helper.make_tensor("w", TensorProto.FLOAT, [2, 3, 1, 1], [0.5, -1, 2, 1, 1, -0.25])
    save("conv_add", [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Add", ["c", "c"], ["y"])],
         [x], [y], [w])
    shape_nodes = [helper.make_node("Shape", ["x"], ["s"]),
                   helper.make_node("Gather", ["s", "i"], ["n"], axis=0),
                   helper.make_node("Concat", ["n", "m"], ["t"], axis=0),
                   helper.make_node("Reshape", ["x", "t"], ["y"])]
    save("dynamic_reshape", shape_nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4, 4])], [y],
         [helper.make_tensor("i", TensorProto.INT64, [1], [0]), helper.make_tensor("m", TensorProto.INT64, [1], [-1])])
