"""The `kestrel` command loads its ONNX importer (protobuf, libonnx) only for
.onnx models, from the module beside it, and says so when the module is
missing."""
import os
import shutil
import subprocess

import pytest

import kestrel
from conftest import SHARED, shared_model

TOOL = os.environ.get("KESTREL_TOOL", "")
pytestmark = [pytest.mark.skipif(not os.path.exists(TOOL), reason="KESTREL_TOOL is not set"),
              pytest.mark.skipif(not kestrel.has_onnx, reason="built without the ONNX importer")]


def bench_loading(tool, model, *args):
    """The run's result and the libraries the dynamic loader opened."""
    env = dict(os.environ, LD_DEBUG="files")
    r = subprocess.run([tool, "bench", model, "--loops", "1", "--warmup", "0", *args], capture_output=True,
                       text=True, env=env)
    return r, r.stderr


def test_an_ncnn_model_runs_without_protobuf_and_libonnx():
    zoo = os.path.join(SHARED, "zoo", "squeezenet.param")
    r, loaded = bench_loading(TOOL, zoo, "--shape", "227,227,3")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "libkestrel.so" in loaded  # the loader's trace is there
    for library in ("libprotobuf", "libonnx", "kestrel_onnx_importer"):
        assert library not in loaded


def test_an_onnx_model_loads_the_importer():
    r, loaded = bench_loading(TOOL, shared_model("squeezenet1_1", "model.onnx"))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "kestrel_onnx_importer" in loaded and "libprotobuf" in loaded


def test_a_missing_importer_is_a_clear_error(tmp_path):
    lonely = tmp_path / "kestrel"
    shutil.copy(TOOL, lonely)  # finds libkestrel.so by its build-tree rpath, not the module
    model = shared_model("squeezenet1_1", "model.onnx")
    r = subprocess.run([str(lonely), "bench", model, "--loops", "1"], capture_output=True, text=True)
    assert r.returncode == 1
    assert f"{model}: cannot load the ONNX importer" in r.stderr
    assert "libkestrel_onnx_importer" in r.stderr
