"""The examples on real trained models: PP-OCRv4 reads rendered lines exactly
(Python and C++), and the classifiers pick the classes that a PyTorch-made
input gives (C++ and Python)."""
import importlib.util
import os
import subprocess

import numpy as np
import pytest

import kestrel
from conftest import ROOT, shared_model

PIL = pytest.importorskip("PIL.Image")
from PIL import ImageDraw, ImageFont  # noqa: E402

MODELS = os.environ.get("KESTREL_OCR_MODELS", "")
EXAMPLES_BIN = os.environ.get("KESTREL_EXAMPLES_BIN", "")
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
LINES = ["Kestrel reads this line", "HELLO WORLD 42", "fast inference on two cores"]

needs_onnx = pytest.mark.skipif(not kestrel.has_onnx, reason="built without the ONNX importer")
needs_ocr = pytest.mark.skipif(not os.path.exists(os.path.join(MODELS, "ppocr_keys_v1.txt")),
                               reason="PaddleOCR's models were not fetched (examples/fetch_ocr_models.sh)")
needs_font = pytest.mark.skipif(not os.path.exists(FONT), reason="fonts-dejavu-core is missing")


def example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples", "python", name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def render(path):
    font = ImageFont.truetype(FONT, 32)
    picture = PIL.new("RGB", (640, 60 + 70 * len(LINES)), "white")
    draw = ImageDraw.Draw(picture)
    for i, text in enumerate(LINES):
        draw.text((30, 30 + 70 * i), text, fill="black", font=font)
    picture.save(path)
    return np.asarray(picture)


@needs_onnx
@needs_ocr
@needs_font
def test_the_python_ocr_example_reads_rendered_lines_exactly(tmp_path):
    rgb = render(tmp_path / "lines.png")
    lines, boxes, times = example("ocr").read_text(MODELS, rgb)
    assert lines == LINES
    assert [b[1] for b in boxes] == sorted(b[1] for b in boxes)
    assert set(times) == {"load", "detect", "recognize"}


@needs_onnx
@needs_ocr
@needs_font
def test_the_cpp_ocr_example_reads_rendered_lines_exactly(tmp_path):
    render(tmp_path / "lines.png")
    r = subprocess.run([os.path.join(EXAMPLES_BIN, "kestrel_ocr"), MODELS, str(tmp_path / "lines.png")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert [line.split(": ", 1)[1] for line in r.stdout.splitlines()] == LINES


def torch_input(rgb, size=224):
    """ImageNet pre-processing made with PyTorch: antialiased resize, rounding, mean and deviation."""
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(rgb.astype(np.float32)).permute(2, 0, 1)[None]
    x = torch.nn.functional.interpolate(x, size=(size, size), mode="bilinear", align_corners=False, antialias=True)
    x = torch.clamp(torch.floor(x + 0.5), 0, 255)[0].numpy()
    mean = np.float32([0.485, 0.456, 0.406]) * 255
    std = np.float32([0.229, 0.224, 0.225]) * 255
    return (x - mean[:, None, None]) / std[:, None, None]


@needs_onnx
def test_the_classification_examples_pick_the_classes_of_a_pytorch_made_input(tmp_path):
    # At the model's size: the input is then exact, so the order of the five best is too.
    y, x = np.mgrid[0:224, 0:224]
    rgb = np.stack([x, y, (x * y) % 256], -1).astype(np.uint8)
    PIL.fromarray(rgb).save(tmp_path / "picture.png")
    model = shared_model("squeezenet1_1", "model.onnx")
    (scores,) = kestrel.InferenceSession(model).run(None, {"input": torch_input(rgb)[None]})
    want = list(np.argsort(-scores.reshape(-1), kind="stable")[:5])
    assert [c for c, _ in example("classify").classify(model, rgb)] == want
    r = subprocess.run([os.path.join(EXAMPLES_BIN, "kestrel_classify"), model, str(tmp_path / "picture.png")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert [int(line.split()[0]) for line in r.stdout.splitlines()] == want
