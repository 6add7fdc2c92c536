"""kestrel.calibrate and kestrel.quantize: an int8 model from a float one, against the float model's outputs."""
import numpy as np
import pytest

import kestrel
from conftest import shared_model


def smooth_inputs(count, seed):
    """Low-frequency pictures (a few gratings per channel), ImageNet-normalized: (3, 224, 224) float32."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:224, 0:224] / 224.0
    mean = np.array([0.485, 0.456, 0.406]).reshape(3, 1, 1)
    std = np.array([0.229, 0.224, 0.225]).reshape(3, 1, 1)
    out = []
    for _ in range(count):
        c = np.zeros((3, 224, 224))
        for ch in range(3):
            for _ in range(4):
                fx, fy = rng.uniform(0.5, 6, 2)
                c[ch] += rng.uniform(0.2, 1) * np.sin(2 * np.pi * (fx * x + fy * y) + rng.uniform(0, 6.3))
        c = (c - c.min()) / (c.max() - c.min())
        out.append(((c - mean) / std).astype(np.float32))
    return out


def load(fuse_residuals=False):
    net = kestrel.Net(fuse_residuals=fuse_residuals)
    net.load_param(shared_model("resnet18", "ncnn.param"))
    net.load_model(shared_model("resnet18", "ncnn.bin"))
    return net


def cosine(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_quantized_resnet18_follows_the_float_model(tmp_path):
    net = load()
    scales = kestrel.calibrate(net, [{"input": x} for x in smooth_inputs(8, 1)], method="minmax")
    assert len(scales) == 21 and all(s > 0 for s in scales.values())
    int8 = kestrel.quantize(net, scales)
    assert int8.param_text().count(" 8=") == 21
    int8.save_param(str(tmp_path / "q.param"))
    int8.save_model(str(tmp_path / "q.bin"))
    written = kestrel.Net()
    written.load_param(str(tmp_path / "q.param"))
    written.load_model(str(tmp_path / "q.bin"))
    for x in smooth_inputs(3, 2):
        want = net.create_session()
        want.set_input("input", x)
        got = written.create_session()
        got.set_input("input", x)
        assert cosine(want.get("output"), got.get("output")) >= 0.99


def test_scales_for_unknown_methods_and_blobs():
    net = load()
    with pytest.raises(ValueError):
        kestrel.calibrate(net, [{"input": smooth_inputs(1, 3)[0]}], method="median")
    with pytest.raises(kestrel.Error):
        kestrel.calibrate(net, [])
    # No scale, no int8 layer: the copy is the float model.
    assert " 8=" not in kestrel.quantize(net, {}).param_text()
