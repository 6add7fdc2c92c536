#!/usr/bin/python3
"""Exports torchvision models (random weights, non-trivial BatchNorm
statistics) to ONNX, runs each with `kestrel run`, and compares with PyTorch's
output: max |error| <= 1e-4 * max |reference|, shapes equal.

Not part of the test suite (exports take minutes and write hundreds of MB);
the results of the last run are in docs/onnx.md ("Models checked against
PyTorch"). Needs Debian's python3-torch, python3-torchvision, python3-onnx.

Usage: check_torchvision.py KESTREL_BINARY WORKDIR [NAME[:SIZE]...]
Exits 1 when a model fails to export, run or match.
"""
import os
import subprocess
import sys

import numpy as np
import torch
import torchvision.models as tvm
import torchvision.models.segmentation as seg
import torchvision.models.video as video

from gen_dynamic_models import randomize_bn  # the shared tool's BatchNorm and head randomization

DEFAULT = ["mobilenet_v3_small", "efficientnet_b0", "shufflenet_v2_x1_0", "regnet_y_400mf", "convnext_tiny",
           "swin_t", "maxvit_t", "squeezenet1_1", "googlenet", "densenet121", "mnasnet0_5",
           "lraspp_mobilenet_v3_large:320", "deeplabv3_mobilenet_v3_large:320", "fcn_resnet50:320",
           "r3d_18:112"]


def export(name, size, workdir):
    torch.manual_seed(0)
    kwargs = {"weights": None}
    ctor = getattr(tvm, name, None)
    clip = getattr(video, name, None) if ctor is None else None  # video models: (N, C, frames, H, W)
    if clip is not None:
        ctor = clip
    elif ctor is None:  # segmentation models: no pretrained backbone either
        ctor = getattr(seg, name)
        kwargs["weights_backbone"] = None
    model = randomize_bn(ctor(**kwargs)).eval()
    x = torch.rand(1, 3, 8, size, size) if clip is not None else torch.rand(1, 3, size, size)
    with torch.no_grad():
        y = model(x)
    if isinstance(y, dict):
        y = y["out"]
    path = os.path.join(workdir, name)
    torch.onnx.export(model, x, path + ".onnx", opset_version=17, input_names=["x"], output_names=["y"])
    np.save(path + "_input.npy", x.numpy())
    return path, y.numpy()


def main():
    kestrel, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    failed = 0
    for spec in sys.argv[3:] or DEFAULT:
        name, _, size = spec.partition(":")
        path, want = export(name, int(size or 224), workdir)
        run = subprocess.run([kestrel, "run", path + ".onnx", "--input", f"x={path}_input.npy", "--output",
                              f"y={path}_kestrel.npy"], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{name}: kestrel run failed: {run.stderr.strip()}")
            failed += 1
            continue
        got = np.load(path + "_kestrel.npy")
        err = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
        ref = float(np.abs(want).max())
        ok = err <= 1e-4 * ref
        failed += not ok
        print(f"{name}: output {want.shape}, max |error| {err:.3g}, max |reference| {ref:.3g}, "
              f"relative {err / ref:.2g} {'OK' if ok else 'MISMATCH'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
