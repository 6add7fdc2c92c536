"""Small TensorFlow Lite models for the operator tests, written with Debian's
python3-flatbuffers through Python bindings that flatc generates from the
repository's schema (src/frontend/tflite/tflite_schema.fbs) at run time.

    m = ModelBuilder()
    x = m.input("x", [1, 8, 8, 3])
    w = m.const("w", np.ones((4, 3, 3, 3), np.float32))
    y = m.op("CONV_2D", [x, w], [1, 8, 8, 4], options=("Conv2DOptions", dict(padding="SAME", strideW=1, strideH=1)))
    m.output(y)
    open("conv.tflite", "wb").write(m.finish())

Output shapes are given by the test (the file declares them, as TFLite's
converter does); the reference runner checks them against what TFLite computes.
"""
import importlib
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "frontend", "tflite",
                      "tflite_schema.fbs")
_fb = None


def bindings():
    """The generated package (namespace renamed so it never shadows the kestrel module)."""
    global _fb
    if _fb is not None:
        return _fb
    out = tempfile.mkdtemp(prefix="tflite_py_")
    with open(SCHEMA) as f:
        text = re.sub(r"^namespace [\w.]+;", "namespace tflite_fb;", f.read(), flags=re.M)
    schema = os.path.join(out, "schema.fbs")
    with open(schema, "w") as f:
        f.write(text)
    subprocess.run(["flatc", "--python", "--gen-object-api", "-o", out, schema], check=True)
    sys.path.insert(0, out)
    _fb = importlib.import_module("tflite_fb")
    return _fb


def _module(name):
    return importlib.import_module("tflite_fb." + name)


def enum_value(enum, name):
    return getattr(getattr(_module(enum), enum), name)


TYPES = {np.dtype(np.float32): "FLOAT32", np.dtype(np.float16): "FLOAT16", np.dtype(np.int32): "INT32",
         np.dtype(np.uint8): "UINT8", np.dtype(np.int64): "INT64", np.dtype(np.bool_): "BOOL",
         np.dtype(np.int16): "INT16", np.dtype(np.int8): "INT8", np.dtype(np.float64): "FLOAT64"}


class ModelBuilder:
    def __init__(self):
        bindings()
        self.tensors, self.buffers, self.ops, self.codes = [], [_module("Buffer").BufferT()], [], []
        self.inputs, self.outputs = [], []

    def tensor(self, name, shape, dtype=np.float32, data=None, quant=None, signature=None):
        t = _module("Tensor").TensorT()
        t.name = name
        t.shape = list(shape)
        if signature is not None:
            t.shapeSignature = list(signature)
        t.type = enum_value("TensorType", TYPES[np.dtype(dtype)])
        t.buffer = 0
        if data is not None:
            b = _module("Buffer").BufferT()
            b.data = list(np.ascontiguousarray(data).astype(dtype).tobytes())
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        if quant is not None:
            q = _module("QuantizationParameters").QuantizationParametersT()
            q.scale = [float(s) for s in np.atleast_1d(quant[0])]
            q.zeroPoint = [int(z) for z in np.atleast_1d(quant[1])]
            q.quantizedDimension = quant[2] if len(quant) > 2 else 0
            t.quantization = q
        self.tensors.append(t)
        return len(self.tensors) - 1

    def input(self, name, shape, dtype=np.float32, **kw):
        i = self.tensor(name, shape, dtype, **kw)
        self.inputs.append(i)
        return i

    def const(self, name, value, dtype=None, **kw):
        value = np.asarray(value)
        return self.tensor(name, value.shape, dtype or value.dtype, data=value, **kw)

    def opcode(self, builtin, custom=None, version=1):
        key = (builtin, custom, version)
        if key not in self.codes:
            self.codes.append(key)
        return self.codes.index(key)

    def op(self, code, inputs, out_shapes, out_dtype=np.float32, options=None, custom=None, custom_options=None,
           version=1, names=None, out_quant=None):
        """Adds operator `code` (a BuiltinOperator name) writing one tensor per shape in out_shapes
        (a single shape for one output); returns the output index (or list)."""
        single = not out_shapes or not isinstance(out_shapes[0], (list, tuple))
        shapes = [out_shapes] if single else out_shapes
        dtypes = out_dtype if isinstance(out_dtype, (list, tuple)) else [out_dtype] * len(shapes)
        outs = [self.tensor((names or {}).get(k, f"{code.lower()}_{len(self.ops)}_{k}"), s, d,
                            quant=out_quant) for k, (s, d) in enumerate(zip(shapes, dtypes))]
        o = _module("Operator").OperatorT()
        o.opcodeIndex = self.opcode(code, custom, version)
        o.inputs = list(inputs)
        o.outputs = outs
        if options is not None:
            table, fields = options
            opts = getattr(_module(table), table + "T")()
            for k, v in fields.items():
                if isinstance(v, str):
                    v = self._enum_for(table, k, v)
                setattr(opts, k, v)
            union = "BuiltinOptions"
            o.builtinOptionsType = enum_value(union, table)
            o.builtinOptions = opts
        if custom_options is not None:
            o.customOptions = list(custom_options)
        self.ops.append(o)
        return outs[0] if single else outs

    @staticmethod
    def _enum_for(table, field, value):
        enums = {"padding": "Padding", "fusedActivationFunction": "ActivationFunctionType", "mode": "MirrorPadMode",
                 "weightsFormat": "FullyConnectedOptionsWeightsFormat", "outputType": "TensorType",
                 "inDataType": "TensorType", "outDataType": "TensorType", "outType": "TensorType"}
        return enum_value(enums[field], value)

    def output(self, *indices):
        self.outputs.extend(indices)

    def finish(self):
        import flatbuffers
        m = _module("Model").ModelT()
        m.version = 3
        codes = []
        for builtin, custom, version in self.codes:
            c = _module("OperatorCode").OperatorCodeT()
            value = enum_value("BuiltinOperator", builtin)
            c.builtinCode = value
            c.deprecatedBuiltinCode = min(value, 127)
            c.version = version
            if custom:
                c.customCode = custom
            codes.append(c)
        m.operatorCodes = codes
        g = _module("SubGraph").SubGraphT()
        g.tensors, g.inputs, g.outputs, g.operators = self.tensors, self.inputs, self.outputs, self.ops
        g.name = "main"
        m.subgraphs = [g]
        m.buffers = self.buffers
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())
