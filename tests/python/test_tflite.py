"""TensorFlow Lite models through the Python faces: InferenceSession from a
path and from the file's bytes, Net.load, against TensorFlow Lite's own
outputs (the cases tests/tflite/make_cases.py writes; skipped without them)."""
import os

import numpy as np
import pytest

import kestrel

CASES = os.environ.get("KESTREL_TFLITE_CASES", "")
MODEL = "mediapipe_face_detection_short_range"


def case_file(suffix):
    return os.path.join(CASES, MODEL + suffix)


needs_cases = pytest.mark.skipif(not os.path.exists(case_file(".out0.npy")),
                                 reason="no TFLite cases (node or npm's tfjs-tflite missing)")


def check_outputs(outputs):
    assert len(outputs) == 2
    for k, got in enumerate(outputs):
        ref = np.load(case_file(f".out{k}.npy"))
        assert got.shape == ref.shape and got.dtype == ref.dtype
        assert np.abs(got - ref).max() <= 1e-4 * np.abs(ref).max()


@needs_cases
@pytest.mark.parametrize("from_bytes", [False, True])
def test_inference_session_runs_tflite(from_bytes):
    path = case_file(".tflite")
    source = open(path, "rb").read() if from_bytes else path
    sess = kestrel.InferenceSession(source, threads=2)
    (inp,) = sess.get_inputs()
    assert list(inp.shape) == [1, 128, 128, 3]  # NHWC, as the model declares
    x = np.load(case_file(".in0.npy"))
    check_outputs(sess.run(None, {inp.name: x}))


@needs_cases
def test_bytes_of_another_format_are_refused():
    with pytest.raises(ValueError, match="TFL3"):
        kestrel.InferenceSession(b"7767517\n1 1\n")


EXAMPLES_BIN = os.environ.get("KESTREL_EXAMPLES_BIN", "")
NODE_MODULES = os.environ.get("KESTREL_TFLITE_NODE", "")
REFERENCE_JS = os.path.join(os.path.dirname(__file__), "..", "tflite", "tflite_reference.js")


@pytest.mark.skipif(not os.path.exists(os.path.join(CASES, "mediapipe_selfie_segmentation.reference.tflite"))
                    or not os.path.exists(os.path.join(EXAMPLES_BIN, "kestrel_segment_selfie")),
                    reason="no selfie segmentation model, reference or example binary")
def test_selfie_segmentation_example_writes_tflites_mask(tmp_path):
    """The example end to end on a picture of the model's size (its resize then
    changes nothing): the mask PNG must be TensorFlow Lite's probabilities x 255."""
    import subprocess
    from PIL import Image
    yy, xx = np.mgrid[0:256, 0:256]
    picture = np.stack([(xx + yy) % 256, (2 * xx) % 256, np.where((xx - 128) ** 2 + (yy - 100) ** 2 < 3000, 230, 40)],
                       axis=-1).astype(np.uint8)
    Image.fromarray(picture).save(tmp_path / "picture.png")
    model = os.path.join(CASES, "mediapipe_selfie_segmentation.tflite")
    r = subprocess.run([os.path.join(EXAMPLES_BIN, "kestrel_segment_selfie"), model, str(tmp_path / "picture.png"),
                        str(tmp_path / "mask.png")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "mask written" in r.stdout
    mask = np.asarray(Image.open(tmp_path / "mask.png"))
    assert mask.shape == (256, 256) and mask.dtype == np.uint8
    # TFLite's probabilities on the same input.
    os.symlink(os.path.join(CASES, "mediapipe_selfie_segmentation.reference.tflite"), tmp_path / "ref.tflite")
    np.save(tmp_path / "selfie.in0.npy", (picture[None].astype(np.float32) / np.float32(255)))
    (tmp_path / "cases.txt").write_text("selfie 0 ref.tflite\n")
    subprocess.run(["node", REFERENCE_JS, str(tmp_path), NODE_MODULES], check=True)
    ref = np.load(tmp_path / "selfie.out0.npy").reshape(256, 256)
    assert np.abs(mask.astype(np.float64) - np.clip(ref, 0, 1) * 255).max() <= 0.5 + 1e-2


@needs_cases
def test_convert_writes_kestrel_format_that_runs_alike(tmp_path):
    """`kestrel convert X.tflite OUT.param OUT.bin`: Kestrel's format, NHWC in and out as the model declares."""
    import subprocess
    tool = os.environ["KESTREL_TOOL"]
    param, weights = tmp_path / "fd.param", tmp_path / "fd.bin"
    subprocess.run([tool, "convert", case_file(".tflite"), str(param), str(weights)], check=True, capture_output=True)
    net = kestrel.Net()
    net.load(str(param))
    session = net.create_session()
    session.set_input(net.input_names()[0], np.load(case_file(".in0.npy")))
    check_outputs([session.get(name) for name in net.output_names()])
