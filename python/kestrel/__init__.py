"""Kestrel, a lightweight, fast neural-network inference engine.

Two ways in:

* ONNX Runtime's shape: ``kestrel.InferenceSession(path)`` for an ``.onnx``
  model or an ncnn ``.param`` (weights beside it), ``.run(None, {name: array})``.
* ncnn's shape: ``kestrel.Net`` loads a model, ``net.create_session()`` sets
  inputs and gets any blob, with per-layer callbacks.

Layer types written in Python: ``kestrel.register_op(type, cls)``.
Int8 quantization: ``kestrel.calibrate(net, samples)``, then ``kestrel.quantize(net, scales)``.
Every failure raises ``kestrel.Error`` naming the file, line or layer.
"""
from ._kestrel import (Error, LayerEvent, Net, ParamDict, Session, WeightReader, calibrate, empty, has_onnx,
                       quantize, register_op)
from . import image
from .inference_session import InferenceSession, NodeArg

if has_onnx:
    from ._kestrel import convert

__all__ = ["Error", "image", "InferenceSession", "LayerEvent", "Net", "NodeArg", "ParamDict", "Session",
           "WeightReader", "calibrate", "convert", "empty", "has_onnx", "quantize", "register_op"]
