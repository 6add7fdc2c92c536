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
import torch.nn as nn
import torchvision.models as tvm
import torchvision.models.segmentation as seg

DEFAULT = ["mobilenet_v3_small", "efficientnet_b0", "shufflenet_v2_x1_0", "regnet_y_400mf", "convnext_tiny",
           "swin_t", "maxvit_t", "squeezenet1_1", "googlenet", "densenet121", "mnasnet0_5",
           "lraspp_mobilenet_v3_large:320", "deeplabv3_mobilenet_v3_large:320", "fcn_resnet50:320"]


def randomize_bn(model):
    """As ../shared/tools/gen_torch_models.py: BatchNorm statistics away from
    identity, zero-initialized Linear heads given weights."""
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.Linear) and not m.weight.detach().any():  # zero-initialized heads
            m.weight.data.copy_(torch.randn(m.weight.shape, generator=g) * 0.05)
            if m.bias is not None:
                m.bias.data.copy_(torch.randn(m.bias.shape, generator=g) * 0.05)
        if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm1d)):
            n = m.num_features
            m.running_mean.copy_(torch.rand(n, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_(torch.rand(n, generator=g) * 0.2 - 0.1)
    return model


def export(name, size, workdir):
    torch.manual_seed(0)
    kwargs = {"weights": None}
    ctor = getattr(tvm, name, None)
    if ctor is None:  # segmentation models: no pretrained backbone either
        ctor = getattr(seg, name)
        kwargs["weights_backbone"] = None
    model = randomize_bn(ctor(**kwargs)).eval()
    x = torch.rand(1, 3, size, size)
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
