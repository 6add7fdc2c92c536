"""Layer types written in Python (kestrel.register_op) inside ncnn models, against NumPy."""
import struct

import numpy as np
import pytest

import kestrel


class Affine:
    """y = x * scale + bias + w[c]: params 0=scale 1=bias 2=channels, weights w (one per channel)."""

    def __init__(self, params):
        self.scale = params.get_float(0, 1.0)
        self.bias = params.get_float(1, 0.0)
        self.channels = params.get_int(2, 0)

    def load_model(self, reader):
        self.w = reader.load(self.channels)

    def infer(self, inputs):
        ((shape, dtype),) = inputs
        return [shape]

    def forward(self, inputs):
        (x,) = inputs
        assert not x.flags.writeable  # inputs are the session's buffers, read-only
        return x * self.scale + self.bias + self.w.reshape(-1, 1, 1)


class MaxAndArgmax:
    """Two outputs of two dtypes: the maximum over the last axis and where it is."""

    def __init__(self, params):
        pass

    def infer(self, inputs):
        ((shape, dtype),) = inputs
        return [shape[:-1], (shape[:-1], "int64")]

    def forward(self, inputs):
        (x,) = inputs
        return [x.max(axis=-1), x.argmax(axis=-1)]


kestrel.register_op("PyAffine", Affine)
kestrel.register_op("PyMaxAndArgmax", MaxAndArgmax)

MODEL = """7767517
3 4
Input           in   0 1 data 0=4 1=3 2=2
PyAffine        aff  1 1 data y 0=2.0 1=0.5 2=2
PyMaxAndArgmax  mx   1 2 y m i
"""
WEIGHTS = np.array([0.25, -3.0], np.float32)


def load(model=MODEL, weights=WEIGHTS):
    net = kestrel.Net()
    net.load_param_mem(model)
    net.load_model_mem(struct.pack("<I", 0) + weights.tobytes())  # ncnn's tag 0: float32 follows
    return net


def run(net, x, *names):
    session = net.create_session()
    session.set_input("data", x)
    return session.run(list(names))


def test_python_layers_compute_as_numpy_does():
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    y, m, i = run(load(), x, "y", "m", "i")
    want = x * 2.0 + 0.5 + WEIGHTS.reshape(-1, 1, 1)
    np.testing.assert_allclose(y, want, rtol=1e-6)
    np.testing.assert_array_equal(m, want.max(axis=-1))
    assert i.dtype == np.int64
    np.testing.assert_array_equal(i, want.argmax(axis=-1))


def test_a_python_layer_that_raises_fails_the_run_naming_the_layer():
    class Broken(Affine):
        def forward(self, inputs):
            raise ValueError("no luck today")

    kestrel.register_op("PyBroken", Broken)
    net = load(MODEL.replace("PyAffine ", "PyBroken "))
    with pytest.raises(kestrel.Error, match="aff.*no luck today"):
        run(net, np.zeros((2, 3, 4), np.float32), "y")


def test_a_python_layer_must_give_what_its_infer_promised():
    class WrongShape(Affine):
        def forward(self, inputs):
            return inputs[0][:1]

    class WrongCount(Affine):
        def infer(self, inputs):
            return [inputs[0][0], inputs[0][0]]

    kestrel.register_op("PyWrongShape", WrongShape)
    kestrel.register_op("PyWrongCount", WrongCount)
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(kestrel.Error, match=r"aff.: forward.s output 0 has shape \(1,3,4\), infer said \(2,3,4\)"):
        run(load(MODEL.replace("PyAffine ", "PyWrongShape ")), x, "y")
    with pytest.raises(kestrel.Error, match="aff.*infer returned 2 outputs, the layer has 1"):
        run(load(MODEL.replace("PyAffine ", "PyWrongCount ")), x, "y")


def test_missing_weights_are_an_error_naming_the_layer():
    with pytest.raises(kestrel.Error, match="aff"):
        load(weights=np.array([1.0], np.float32))


def test_an_unregistered_type_is_named():
    net = kestrel.Net()
    with pytest.raises(kestrel.Error, match="PyNeverRegistered"):
        net.load_param_mem(MODEL.replace("PyAffine ", "PyNeverRegistered "))
