"""kestrel.InferenceSession, ONNX Runtime's shape, against PyTorch's and ncnn's outputs."""
import threading

import numpy as np
import pytest

import kestrel
from conftest import assert_close_to_reference, shared_model

onnx = pytest.importorskip("onnx") if kestrel.has_onnx else None
needs_onnx = pytest.mark.skipif(not kestrel.has_onnx, reason="built without the ONNX importer")

ONNX_TYPE_NAMES = {1: "tensor(float)", 7: "tensor(int64)", 10: "tensor(float16)", 11: "tensor(double)"}


@needs_onnx
@pytest.mark.parametrize("name", ["squeezenet1_1", "resnet18", "mobilenet_v2", "shufflenet_v2_x0_5", "tiny_vit"])
def test_onnx_model_matches_pytorch(name):
    session = kestrel.InferenceSession(shared_model(name, "model.onnx"))
    x = np.load(shared_model(name, "input.npy"))
    (y,) = session.run(None, {session.get_inputs()[0].name: x})
    assert_close_to_reference(y, np.load(shared_model(name, "output.npy")))


@needs_onnx
def test_outputs_come_in_the_order_asked_for():
    session = kestrel.InferenceSession(shared_model("resizes", "model.onnx"))
    x = np.load(shared_model("resizes", "input.npy"))
    names = [o.name for o in session.get_outputs()]
    assert len(names) == 2
    refs = [np.load(shared_model("resizes", f"output{i}.npy")) for i in range(2)]
    first, second = session.run(names, {session.get_inputs()[0].name: x})
    assert_close_to_reference(first, refs[0])
    assert_close_to_reference(second, refs[1])
    (only_second,) = session.run(names[1:], {session.get_inputs()[0].name: x})
    assert_close_to_reference(only_second, refs[1])


@needs_onnx
@pytest.mark.parametrize("name", ["squeezenet1_1", "resizes", "tiny_vit"])
def test_inputs_and_outputs_are_described_as_the_onnx_file_declares(name):
    path = shared_model(name, "model.onnx")
    graph = onnx.load(path).graph
    session = kestrel.InferenceSession(path)

    def dims(value_info):
        return tuple(d.dim_value if d.HasField("dim_value") else None for d in value_info.type.tensor_type.shape.dim)

    initializers = {i.name for i in graph.initializer}
    declared_inputs = [v for v in graph.input if v.name not in initializers]
    assert [i.name for i in session.get_inputs()] == [v.name for v in declared_inputs]
    for got, want in zip(session.get_inputs(), declared_inputs):
        assert got.shape == dims(want)
        assert got.type == ONNX_TYPE_NAMES[want.type.tensor_type.elem_type]
    assert [o.name for o in session.get_outputs()] == [v.name for v in graph.output]
    x = np.load(shared_model(name, "input.npy"))
    results = session.run(None, {declared_inputs[0].name: x})
    for got, want, result in zip(session.get_outputs(), graph.output, results):
        assert got.shape == result.shape  # inferred without running
        assert got.type == ONNX_TYPE_NAMES[want.type.tensor_type.elem_type]


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_ncnn_model_matches_ncnn(name):
    session = kestrel.InferenceSession(shared_model(name, "ncnn.param"))
    (y,) = session.run(None, {"input": np.load(shared_model(name, "ncnn_input.npy"))})
    assert_close_to_reference(y, np.load(shared_model(name, "ncnn_output.npy")))


@needs_onnx
def test_two_threads_running_one_session_get_each_their_own_results():
    session = kestrel.InferenceSession(shared_model("squeezenet1_1", "model.onnx"), threads=1)
    x = np.load(shared_model("squeezenet1_1", "input.npy"))
    inputs = [x, np.ascontiguousarray(x[:, ::-1])]  # two different inputs
    expected = [session.run(None, {"input": i})[0] for i in inputs]
    results, errors = {}, []

    def worker(k):
        try:
            for _ in range(5):
                (y,) = session.run(None, {"input": inputs[k]})
                np.testing.assert_array_equal(y, expected[k])
            results[k] = True
        except Exception as e:  # reported below, in the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == {0: True, 1: True}
    assert not np.array_equal(expected[0], expected[1])


def test_a_missing_file_is_a_kestrel_error_naming_it(tmp_path):
    missing = tmp_path / "nothing.param"
    with pytest.raises(kestrel.Error, match="nothing.param"):
        kestrel.InferenceSession(str(missing))


@needs_onnx
def test_a_wrong_input_dtype_is_refused_with_the_inputs_name():
    session = kestrel.InferenceSession(shared_model("squeezenet1_1", "model.onnx"))
    x = np.load(shared_model("squeezenet1_1", "input.npy")).astype(np.float64)
    with pytest.raises(kestrel.Error, match="input 'input' must be"):
        session.run(None, {"input": x})


@needs_onnx
def test_string_tensors_in_and_out(tmp_path):
    """NumPy str arrays in (str, bytes or str objects) and out, through
    StringNormalizer; the expectation by Python's own str.upper()."""
    from onnx import TensorProto, helper

    node = helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="UPPER", stopwords=["monday"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.STRING, [None])],
                              [helper.make_tensor_value_info("y", TensorProto.STRING, [None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)])
    path = tmp_path / "upper.onnx"
    onnx.save(model, str(path))
    session = kestrel.InferenceSession(path)
    assert session.get_inputs()[0].type == "tensor(string)"
    words = ["Monday", "naïve", "Ärger", "ΣΊΣΥΦΟΣ", "tuesday"]
    want = [w.upper() for w in words if w.lower() != "monday"]
    for x in (np.array(words), np.array(words, dtype=object), np.array([w.encode() for w in words])):
        (y,) = session.run(None, {"x": x})
        assert y.dtype.kind == "U"
        assert y.tolist() == want


@needs_onnx
def test_format_is_told_from_the_content_not_the_name(tmp_path):
    # An ONNX model under a .param name, and an ncnn one under .onnx: each runs as what it is.
    misnamed = tmp_path / "squeezenet.param"
    misnamed.write_bytes(open(shared_model("squeezenet1_1", "model.onnx"), "rb").read())
    session = kestrel.InferenceSession(misnamed)
    x = np.load(shared_model("squeezenet1_1", "input.npy"))
    (y,) = session.run(None, {session.get_inputs()[0].name: x})
    assert_close_to_reference(y, np.load(shared_model("squeezenet1_1", "output.npy")))
    ncnn = tmp_path / "tiny.onnx"
    ncnn.write_text("7767517\n2 2\nInput in 0 1 x 0=3\nAbsVal a 1 1 x y\n")
    net = kestrel.Net()
    assert net.load(str(ncnn)) == ""  # no weights needed, none read
    session = net.create_session()
    session.set_input("x", np.array([-1.5, 2.0, -0.25], dtype=np.float32))
    np.testing.assert_array_equal(session.get("y"), [1.5, 2.0, 0.25])


def test_net_load_names_what_it_cannot_read(tmp_path):
    tflite = tmp_path / "m.tflite"
    tflite.write_bytes(b"\x1c\x00\x00\x00TFL3" + bytes(8))
    with pytest.raises(kestrel.Error, match="TensorFlow Lite"):
        kestrel.Net().load(str(tflite))
    weights = kestrel.Net()
    path = shared_model("resnet18", "ncnn.param")
    assert weights.load(path) == path[: -len(".param")] + ".bin"
