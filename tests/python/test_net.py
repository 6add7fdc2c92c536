"""kestrel.Net and Session (ncnn's shape): any blob, callbacks, arrays in and out, conversion, errors."""
import numpy as np
import pytest

import kestrel
from conftest import assert_close_to_reference, shared_model

# relu(x) and relu(x)^2 (BinaryOp 0=2: multiply) of a (2, 3, 4) input.
SQUARED_RELU = """7767517
4 5
Input            in    0 1 data 0=4 1=3 2=2
ReLU             relu  1 1 data r
Split            split 1 2 r r0 r1
BinaryOp         mul   2 1 r0 r1 sq 0=2
"""


def squared_relu_net():
    net = kestrel.Net()
    net.load_param_mem(SQUARED_RELU)
    net.load_model_mem(b"")
    return net


def some_input(shape=(2, 3, 4), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_any_blob_can_be_read_and_matches_numpy():
    net = squared_relu_net()
    session = net.create_session()
    x = some_input()
    session.set_input("data", x)
    np.testing.assert_array_equal(session.get("r"), np.maximum(x, 0))
    np.testing.assert_array_equal(session.get("sq"), np.maximum(x, 0) ** 2)
    r, sq = session.run(["r", "sq"])
    np.testing.assert_array_equal(r * r, sq)
    assert net.input_names() == ["data"] and net.output_names() == ["sq"]


def test_strided_inputs_are_read_as_numpy_sees_them():
    session = squared_relu_net().create_session()
    x = some_input((2, 3, 8))[:, :, ::2]  # not contiguous
    session.set_input("data", x)
    np.testing.assert_array_equal(session.get("sq"), np.maximum(x, 0) ** 2)


def test_results_are_arrays_over_kestrels_storage_and_used_in_place_as_inputs():
    session = squared_relu_net().create_session()
    x = some_input()
    # A plain NumPy input is copied: changing it after set_input changes nothing.
    session.set_input("data", x)
    x[...] = -x
    np.testing.assert_array_equal(session.get("r"), np.maximum(-x, 0))
    # An array in Kestrel's storage is used in place: a change before the run is seen.
    y = kestrel.empty((2, 3, 4))
    y[...] = x
    session2 = squared_relu_net().create_session()
    session2.set_input("data", y)
    y[...] = 2 * x
    np.testing.assert_array_equal(session2.get("r"), np.maximum(2 * x, 0))
    assert isinstance(session2.get("sq").base, kestrel._kestrel._TensorStorage)


def test_callbacks_see_every_layer_in_order_with_its_values():
    net = squared_relu_net()
    session = net.create_session(reuse_memory=False)
    x = some_input()
    seen, kept = [], []

    def before(e):
        seen.append(("before", e.layer_type, e.layer_name))

    def after(e):
        seen.append(("after", e.layer_type, e.layer_name))
        kept.append(e)
        if e.layer_name == "relu":
            (inp,) = e.inputs
            (out,) = e.outputs
            np.testing.assert_array_equal(inp, x)
            np.testing.assert_array_equal(out, np.maximum(x, 0))

    session.set_callbacks(before, after)
    session.set_input("data", x)
    session.get("sq")
    layers = [("ReLU", "relu"), ("Split", "split"), ("BinaryOp", "mul")]
    assert [s for s in seen if s[1] != "Input"] == [(w, t, n) for t, n in layers for w in ("before", "after")]
    # The session's buffers are gone after the callback: the event refuses to hand them out.
    with pytest.raises(kestrel.Error, match="only during its callback"):
        kept[-1].outputs


def test_an_exception_in_a_callback_ends_the_run_and_reaches_the_caller():
    session = squared_relu_net().create_session()

    def after(e):
        if e.layer_name == "split":
            raise ValueError("stop at the split")

    session.set_callbacks(after=after)
    session.set_input("data", some_input())
    with pytest.raises(ValueError, match="stop at the split"):
        session.get("sq")
    session.set_callbacks()
    np.testing.assert_array_equal(session.get("sq"), np.maximum(some_input(), 0) ** 2)


def test_a_malformed_param_names_the_line_and_layer():
    net = kestrel.Net()
    bad = SQUARED_RELU.replace("BinaryOp         mul   2 1 r0 r1 sq 0=2", "BinaryOp         mul   2 1 r0 r1 sq 0=2.5")
    with pytest.raises(kestrel.Error, match=r":6: BinaryOp .mul.: param 0 must be an integer"):
        net.load_param_mem(bad)


def test_unknown_blobs_and_dtypes_are_kestrel_errors():
    session = squared_relu_net().create_session()
    with pytest.raises(kestrel.Error, match="no blob named 'nope'"):
        session.set_input("nope", some_input())
    with pytest.raises(kestrel.Error, match="complex64"):
        session.set_input("data", np.zeros((2, 3, 4), np.complex64))


def test_a_session_keeps_its_net_alive():
    session = squared_relu_net().create_session()  # the Net has no other reference
    x = some_input()
    session.set_input("data", x)
    np.testing.assert_array_equal(session.get("sq"), np.maximum(x, 0) ** 2)


def test_ncnn_model_with_fused_layers_and_two_threads_matches_ncnn():
    net = kestrel.Net(fuse_layers=True)
    net.load_param(shared_model("resnet18", "ncnn.param"))
    net.load_model(shared_model("resnet18", "ncnn.bin"))
    session = kestrel.Session(net, threads=2)
    session.set_input("input", np.load(shared_model("resnet18", "ncnn_input.npy")))
    assert_close_to_reference(session.get(net.output_names()[0]), np.load(shared_model("resnet18", "ncnn_output.npy")))


def test_bf16_sessions_follow_ncnn_within_2e2_and_other_precisions_are_refused():
    # precision="bf16": convolutions multiply in bfloat16 where the CPU can
    # (else fp32 runs); resnet18's outputs stay within 2e-2 of ncnn's.
    net = kestrel.Net(fuse_layers=True)
    net.load_param(shared_model("resnet18", "ncnn.param"))
    net.load_model(shared_model("resnet18", "ncnn.bin"))
    x = np.load(shared_model("resnet18", "ncnn_input.npy"))
    ref = np.load(shared_model("resnet18", "ncnn_output.npy"))
    for session in (net.create_session(precision="bf16"), kestrel.Session(net, precision="bf16")):
        session.set_input("input", x)
        assert_close_to_reference(session.get(net.output_names()[0]), ref, rel=2e-2)
    with pytest.raises(ValueError, match="precision must be 'fp32' or 'bf16'"):
        net.create_session(precision="fp16")


def test_sessions_with_and_without_blocked_layouts_match_ncnn():
    # mobilenet_v2's depthwise and 1x1 chains run on channel blocks by default;
    # blocked_layouts=False keeps every blob plain. Both give ncnn's outputs.
    net = kestrel.Net()
    net.load_param(shared_model("mobilenet_v2", "ncnn.param"))
    net.load_model(shared_model("mobilenet_v2", "ncnn.bin"))
    x = np.load(shared_model("mobilenet_v2", "ncnn_input.npy"))
    ref = np.load(shared_model("mobilenet_v2", "ncnn_output.npy"))
    for blocked in (True, False):
        session = net.create_session(threads=2, blocked_layouts=blocked)
        session.set_input(net.input_names()[0], x)
        assert_close_to_reference(session.get(net.output_names()[0]), ref)


@pytest.mark.skipif(not kestrel.has_onnx, reason="built without the ONNX importer")
def test_convert_writes_an_ncnn_model_that_matches_pytorch(tmp_path):
    param, weights = str(tmp_path / "m.param"), str(tmp_path / "m.bin")
    kestrel.convert(shared_model("squeezenet1_1", "model.onnx"), param, weights)
    net = kestrel.Net()
    net.load_param(param)
    net.load_model(weights)
    session = net.create_session()
    session.set_input(net.input_names()[0], np.load(shared_model("squeezenet1_1", "input.npy")))
    y = session.get(net.output_names()[0])
    assert_close_to_reference(y, np.load(shared_model("squeezenet1_1", "output.npy")))
