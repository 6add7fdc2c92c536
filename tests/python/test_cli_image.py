"""`kestrel run --image ... --topk`: a picture file as a model's input, against
PIL (decoding), PyTorch (the antialiased resize) and kestrel.InferenceSession."""
import os
import subprocess

import numpy as np
import pytest

import kestrel
from conftest import assert_close_to_reference, shared_model

torch = pytest.importorskip("torch")
PIL = pytest.importorskip("PIL.Image")
TOOL = os.environ.get("KESTREL_TOOL", "")
pytestmark = [pytest.mark.skipif(not os.path.exists(TOOL), reason="KESTREL_TOOL is not set"),
              pytest.mark.skipif(not kestrel.has_onnx, reason="built without the ONNX importer")]

MEAN = [123.675, 116.28, 103.53]
NORM = [0.017125, 0.017507, 0.017429]


def run_tool(*args):
    return subprocess.run([TOOL, "run", *args], capture_output=True, text=True)


def picture(path, seed=0):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:300, 0:400]
    rgb = np.stack([x * 255 / 400, y * 255 / 300, rng.integers(0, 256, (300, 400))], -1).astype(np.uint8)
    PIL.fromarray(rgb).save(path)
    return rgb


def test_a_picture_becomes_the_normalized_antialiased_input_and_the_best_classes_are_printed(tmp_path):
    rgb = picture(tmp_path / "p.png")
    model = shared_model("squeezenet1_1", "model.onnx")
    labels = tmp_path / "labels.txt"
    labels.write_text("".join(f"class {i}\n" for i in range(1000)))
    fed = tmp_path / "input.npy"
    r = run_tool(model, "--image", str(tmp_path / "p.png"), "--mean", ",".join(map(str, MEAN)), "--norm",
                 ",".join(map(str, NORM)), "--output", f"input={fed}")
    assert r.returncode == 0, r.stderr
    x = np.load(fed)
    # The reference: PyTorch's antialiased bilinear resize of the pixels, rounded, then normalized.
    resized = torch.nn.functional.interpolate(torch.from_numpy(rgb.astype(np.float32)).permute(2, 0, 1)[None],
                                              size=(224, 224), mode="bilinear", align_corners=False,
                                              antialias=True)[0].numpy()
    want = (np.clip(np.floor(resized + 0.5), 0, 255) - np.float32(MEAN)[:, None, None]) * np.float32(NORM)[:, None,
                                                                                                          None]
    assert x.shape == (1, 3, 224, 224)
    np.testing.assert_allclose(x[0], want, atol=max(NORM) * 1.01)

    r = run_tool(model, "--image", str(tmp_path / "p.png"), "--mean", ",".join(map(str, MEAN)), "--norm",
                 ",".join(map(str, NORM)), "--topk", "5", "--labels", str(labels))
    assert r.returncode == 0, r.stderr
    (scores,) = kestrel.InferenceSession(model).run(None, {"input": x})
    best = np.argsort(-scores[0], kind="stable")[:5]
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith("output: top 5 of 1000")
    for rank, (line, index) in enumerate(zip(lines[1:], best), 1):
        number, cls, value, *label = line.split()
        assert number == f"{rank}." and int(cls) == index and " ".join(label) == f"class {index}"
        assert abs(float(value) - scores[0][index]) <= 1e-4 * abs(scores[0]).max()


def test_an_ncnn_model_takes_the_picture_in_its_channel_order(tmp_path):
    rgb = picture(tmp_path / "p.png", seed=1)
    model = shared_model("resnet18", "ncnn.param")
    out = tmp_path / "x.npy"
    r = run_tool(model, "--image", str(tmp_path / "p.png"), "--pixel-type", "BGR", "--size", "400,300", "--output",
                 f"input={out}")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(out), rgb[..., ::-1].transpose(2, 0, 1).astype(np.float32))
    y = tmp_path / "y.npy"
    r = run_tool(model, "--input", f"input={out}", "--output", f"{kestrel.InferenceSession(model).get_outputs()[0].name}={y}")
    assert r.returncode == 0, r.stderr
    (want,) = kestrel.InferenceSession(model).run(None, {"input": np.load(out)})
    assert_close_to_reference(np.load(y), want)


def test_bad_pictures_and_options_are_clear_errors(tmp_path):
    model = shared_model("squeezenet1_1", "model.onnx")
    r = run_tool(model, "--image", str(tmp_path / "missing.png"))
    assert r.returncode == 1 and "missing.png" in r.stderr
    (tmp_path / "bad.png").write_bytes(b"not a picture")
    r = run_tool(model, "--image", str(tmp_path / "bad.png"))
    assert r.returncode == 1 and "bad.png: cannot read the picture" in r.stderr
    picture(tmp_path / "p.png")
    r = run_tool(model, "--image", str(tmp_path / "p.png"), "--pixel-type", "GRAY")
    assert r.returncode == 1 and "takes 3 channels" in r.stderr
    r = run_tool(model, "--image", str(tmp_path / "p.png"), "--mean", "1,2")
    assert r.returncode == 2 and "--mean has 2 values for 3 channels" in r.stderr
