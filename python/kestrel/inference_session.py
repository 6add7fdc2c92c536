"""ONNX Runtime's InferenceSession over a Kestrel Net, so that its users feel at home."""
import os
import threading

import numpy as np

from . import _kestrel

# ONNX Runtime's names for element types (NodeArg.type).
_ONNX_TYPE_NAMES = {
    np.dtype("float32"): "tensor(float)", np.dtype("float16"): "tensor(float16)",
    np.dtype("float64"): "tensor(double)", np.dtype("int8"): "tensor(int8)",
    np.dtype("uint8"): "tensor(uint8)", np.dtype("int16"): "tensor(int16)",
    np.dtype("uint16"): "tensor(uint16)", np.dtype("int32"): "tensor(int32)",
    np.dtype("uint32"): "tensor(uint32)", np.dtype("int64"): "tensor(int64)",
    np.dtype("uint64"): "tensor(uint64)", np.dtype("bool"): "tensor(bool)",
    np.dtype("U"): "tensor(string)",
}


class NodeArg:
    """An input or output: its name, shape (None or a name for a dimension that
    may vary, None for an unknown shape) and ONNX type name."""

    def __init__(self, name, shape, type):
        self.name = name
        self.shape = shape
        self.type = type

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class InferenceSession:
    """Runs a model of any format Kestrel reads, told from the file's content:
    ONNX, TensorFlow Lite (a path, or the ``.tflite`` file's bytes, as ONNX
    Runtime takes bytes), or an ncnn ``.param`` with its ``.bin`` beside it (or ``weights=``). ``run`` may be called from several threads: each thread
    gets its own session of the one loaded net."""

    def __init__(self, path, threads=1, weights=None, fuse_layers=True, fp16_weights=False):
        self._net = _kestrel.Net(fuse_layers=fuse_layers, fp16_weights=fp16_weights)
        if isinstance(path, (bytes, bytearray, memoryview)):
            data = bytes(path)
            if data[4:8] != b"TFL3":
                raise ValueError("InferenceSession takes bytes of a TensorFlow Lite model (identifier TFL3); "
                                 "other formats load from a path")
            self._net.load_tflite_bytes(data, optimize=fuse_layers)
        else:
            # The format from the file's content (ncnn .param/.param.bin, ONNX,
            # TensorFlow Lite); fuse_layers=False keeps an ncnn model's layers as written.
            self._net.load(os.fspath(path), None if weights is None else os.fspath(weights), optimize=fuse_layers)
        self._threads = threads
        self._local = threading.local()

    def _session(self):
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = self._net.create_session(threads=self._threads)
        return session

    def get_inputs(self):
        return [NodeArg(name, self._net.input_shape(name), _ONNX_TYPE_NAMES[self._net.input_dtype(name)])
                for name in self._net.input_names()]

    def get_outputs(self):
        # Inferred from the declared input shapes; a dimension that follows a
        # varying input dimension is None (found by inferring at two sizes).
        declared = {name: self._net.input_shape(name) for name in self._net.input_names()}
        if any(shape is None for shape in declared.values()):
            return [NodeArg(name, None, None) for name in self._net.output_names()]
        small = self._net.infer({n: [1 if d is None else d for d in s] for n, s in declared.items()})
        large = self._net.infer({n: [2 if d is None else d for d in s] for n, s in declared.items()})
        outputs = []
        for name in self._net.output_names():
            (shape, dtype), (other, _) = small[name], large[name]
            dims = tuple(a if a == b else None for a, b in zip(shape, other)) if len(shape) == len(other) else None
            outputs.append(NodeArg(name, dims, _ONNX_TYPE_NAMES[dtype]))
        return outputs

    def run(self, output_names, input_feed, run_options=None):
        """Returns the outputs named (all of them for None or []) as arrays, in order."""
        names = list(output_names) if output_names else self._net.output_names()
        session = self._session()
        for name, value in input_feed.items():
            session.set_input(name, np.asarray(value))
        return session.run(names)
