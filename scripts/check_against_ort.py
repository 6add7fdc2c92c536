#!/usr/bin/env python3
"""Runs an ONNX model with Kestrel and with ONNX Runtime on the same inputs and
compares every graph output (issue #44: every ONNX model that ONNX Runtime
runs, Kestrel runs, with its numbers).

usage: python3 scripts/check_against_ort.py MODEL.onnx [--input NAME=FILE.npy]... [--shape NAME=D0,D1,...]...
           [--kestrel PATH] [--ort-node-modules DIR] [--rtol R] [--exact] [--seed S] [--keep DIR]

Inputs not given are drawn at random from --seed (default 0): floats from a
normal distribution, integers from [0, 4) (so index-like inputs stay valid),
bools half and half. A dimension without a fixed size takes --shape (which
gives the input's whole shape) or 1.

ONNX Runtime is npm's onnxruntime-node, run by tools/ort/ort_run.js from
--ort-node-modules DIR (default $KESTREL_ORT_NODE_MODULES or build/ort-node;
scripts/ort_node_modules.sh installs it there when missing). Kestrel is the
`kestrel` command (default $KESTREL_TOOL or build/kestrel).

Prints one line per output: its name, shape, dtype, the largest |difference|,
max|reference|, their ratio, how many elements differ, OK or MISMATCH.
Integer and bool outputs must be equal; float outputs must be within
rtol * max|reference| (rtol 1e-4, 1e-2 for float16 outputs, unless --rtol);
--exact demands equal bits everywhere. NaN where the reference has NaN is equal.
A different shape or dtype is a mismatch.
Exit status: 0 when every output passes, 1 on a mismatch, 2 when an engine fails.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT_RUN = os.path.join(ROOT, "tools", "ort", "ort_run.js")
ORT_INSTALL = os.path.join(ROOT, "scripts", "ort_node_modules.sh")
P = onnx.TensorProto
ELEMENT_TYPES = {P.FLOAT: np.float32, P.FLOAT16: np.float16, P.DOUBLE: np.float64, P.INT8: np.int8,
                 P.UINT8: np.uint8, P.INT16: np.int16, P.UINT16: np.uint16, P.INT32: np.int32,
                 P.UINT32: np.uint32, P.INT64: np.int64, P.UINT64: np.uint64, P.BOOL: np.bool_}


class Failure(Exception):
    """A usage error, or an engine that could not run the model (its message and stderr)."""


def default_kestrel():
    return os.environ.get("KESTREL_TOOL") or os.path.join(ROOT, "build", "kestrel")


def default_ort_node_modules():
    return os.environ.get("KESTREL_ORT_NODE_MODULES") or os.path.join(ROOT, "build", "ort-node")


def split_assignment(text, names, what):
    """'NAME=VALUE' split at the last '=' whose left part is one of names."""
    at = text.rfind("=")
    while at > 0:
        if text[:at] in names:
            return text[:at], text[at + 1:]
        at = text.rfind("=", 0, at)
    raise Failure(f"{what} {text!r}: expected NAME=VALUE with NAME one of the inputs {names}")


def graph_inputs(model):
    """The inputs to feed, [(name, numpy dtype or None, dims)]; None for a dimension of no fixed size."""
    initializers = {i.name for i in model.graph.initializer}
    inputs = []
    for v in model.graph.input:
        if v.name in initializers:
            continue
        tensor_type = v.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in tensor_type.shape.dim]
        dtype = ELEMENT_TYPES.get(tensor_type.elem_type) if v.type.HasField("tensor_type") else None
        inputs.append((v.name, dtype and np.dtype(dtype), dims))
    return inputs


def random_inputs(inputs, shapes, seed):
    """Deterministic arrays for the inputs: {name: array}; shapes overrides the declared dims."""
    rng = np.random.RandomState(seed)
    arrays = {}
    for name, dtype, dims in inputs:
        shape = shapes.get(name) or [1 if d is None else d for d in dims]
        if dtype is None:
            raise Failure(f"input {name!r}: no random values of its type; pass --input {name}=FILE.npy")
        if dtype.kind == "f":
            arrays[name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind in "iu":
            arrays[name] = rng.randint(0, 4, size=shape).astype(dtype)
        else:
            arrays[name] = rng.randint(0, 2, size=shape).astype(bool)
    return arrays


def run_engine(cmd, what, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise Failure(f"{what} failed (exit status {r.returncode}):\n{r.stderr.strip()}")


def ensure_ort(node_modules):
    """DIR/node_modules with onnxruntime-node, installed by scripts/ort_node_modules.sh if missing."""
    if shutil.which("node") is None:
        raise Failure("ONNX Runtime: node is not on PATH")
    if not os.path.isdir(os.path.join(node_modules, "node_modules", "onnxruntime-node")):
        run_engine(["bash", ORT_INSTALL, node_modules], "installing onnxruntime-node")
    return os.path.join(node_modules, "node_modules")


def run_ort(model_path, input_files, workdir, node_modules):
    """ONNX Runtime's outputs: [(name, array)] in the graph's order."""
    outdir = os.path.join(workdir, "ort")
    env = dict(os.environ, NODE_PATH=ensure_ort(node_modules))
    run_engine(["node", ORT_RUN, model_path, outdir] + [f"{name}={file}" for name, file in input_files.items()],
               "ONNX Runtime", env)
    with open(os.path.join(outdir, "outputs.json"), encoding="utf-8") as f:
        names = json.load(f)
    return [(name, np.load(os.path.join(outdir, f"output_{i}.npy"))) for i, name in enumerate(names)]


def run_kestrel(kestrel, model_path, input_files, output_names, workdir):
    """Kestrel's outputs: [(name, array)] for output_names, through `kestrel run`."""
    if not os.path.exists(kestrel):
        raise Failure(f"Kestrel: no kestrel command at {kestrel} (build it, or pass --kestrel)")
    files = [os.path.join(workdir, f"kestrel_output_{i}.npy") for i in range(len(output_names))]
    cmd = [kestrel, "run", model_path]
    for name, file in input_files.items():
        cmd += ["--input", f"{name}={file}"]
    for name, file in zip(output_names, files):
        cmd += ["--output", f"{name}={file}"]
    run_engine(cmd, "Kestrel")
    return [(name, np.load(file)) for name, file in zip(output_names, files)]


def compare(name, got, ref, rtol=None, exact=False):
    """(passes, one line describing it): Kestrel's got against ONNX Runtime's ref."""
    head = f"{name!r}  shape {ref.shape}  {ref.dtype}"
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return False, f"{head}  Kestrel gave shape {got.shape} {got.dtype}  MISMATCH"
    is_float = ref.dtype.kind == "f"
    if rtol is None:
        rtol = 1e-2 if ref.dtype == np.float16 else 1e-4
    if exact:
        unsigned = np.dtype(f"u{ref.dtype.itemsize}")
        same = got.view(unsigned) == ref.view(unsigned)
    else:
        with np.errstate(invalid="ignore"):
            same = got == ref
    if is_float:
        same |= np.isnan(got) & np.isnan(ref)
    g, r = got.astype(np.float64), ref.astype(np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.where(same, 0.0, np.nan_to_num(np.abs(g - r), nan=np.inf))
    worst = float(diff.max()) if diff.size else 0.0
    finite = np.abs(r[np.isfinite(r)])
    scale = float(finite.max()) if finite.size else 0.0
    ratio = worst / scale if scale > 0 else (0.0 if worst == 0 else np.inf)
    differ = int(diff.size - np.count_nonzero(same))
    passes = differ == 0 if (exact or not is_float) else worst <= rtol * scale
    bound = "exact" if exact or not is_float else f"rtol {rtol:g}"
    line = (f"{head}  max|diff| {worst:.6g}  max|ref| {scale:.6g}  ratio {ratio:.3g} ({bound})  "
            f"differ {differ}/{diff.size}  {'OK' if passes else 'MISMATCH'}")
    return passes, line


def check(model_path, inputs=(), shapes=(), kestrel=None, ort_node_modules=None, rtol=None, exact=False, seed=0,
          keep=None):
    """The comparison the command line makes: prints a line per output, returns 0 when all pass, 1 if
    not; raises Failure when an engine fails."""
    try:
        model = onnx.load(model_path, load_external_data=False)
    except Exception as e:  # a missing file, or not an ONNX model (protobuf's DecodeError)
        raise Failure(f"{model_path}: {e}") from e
    declared = graph_inputs(model)
    names = [name for name, _, _ in declared]
    given = dict(split_assignment(s, names, "--input") for s in inputs)
    dims = {}
    for s in shapes:
        name, value = split_assignment(s, names, "--shape")
        if not all(d.isdigit() for d in value.split(",")):
            raise Failure(f"--shape {s!r}: expected NAME=D0,D1,...")
        dims[name] = [int(d) for d in value.split(",")]
    workdir = keep or tempfile.mkdtemp(prefix="check_against_ort_")
    os.makedirs(workdir, exist_ok=True)
    try:
        files = {name: os.path.abspath(file) for name, file in given.items()}
        todo = [entry for entry in declared if entry[0] not in given]
        for i, (name, array) in enumerate(random_inputs(todo, dims, seed).items()):
            files[name] = os.path.join(workdir, f"input_{i}.npy")
            np.save(files[name], array)
        output_names = [o.name for o in model.graph.output]
        ref = run_ort(model_path, files, workdir, ort_node_modules or default_ort_node_modules())
        got = dict(run_kestrel(kestrel or default_kestrel(), model_path, files, output_names, workdir))
        status = 0
        for name, r in ref:
            passes, line = compare(name, got[name], r, rtol, exact)
            print(line)
            status = status if passes else 1
        return status
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="the .onnx model")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy", help="an input's values")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help="the shape of a random input")
    p.add_argument("--kestrel", help="the kestrel command (default $KESTREL_TOOL or build/kestrel)")
    p.add_argument("--ort-node-modules", metavar="DIR",
                   help="DIR/node_modules has onnxruntime-node (default $KESTREL_ORT_NODE_MODULES or build/ort-node)")
    p.add_argument("--rtol", type=float, help="float tolerance relative to max|reference| (1e-4; float16 1e-2)")
    p.add_argument("--exact", action="store_true", help="demand equal bits for every output")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--keep", metavar="DIR", help="keep the inputs and outputs in DIR")
    a = p.parse_args(argv)
    try:
        return check(a.model, a.input, a.shape, a.kestrel, a.ort_node_modules, a.rtol, a.exact, a.seed, a.keep)
    except Failure as e:
        print(f"check_against_ort.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
