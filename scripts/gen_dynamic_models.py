#!/usr/bin/python3
"""Re-export reference models with dynamic axes (torch.onnx.export's dynamic_axes)
and record PyTorch's outputs at several input shapes.

Adapted from ../shared/tools/gen_torch_models.py: the same modules, the same
seeded weights (torch.manual_seed(crc32(name)), randomize_bn), but the ONNX
graph gets symbolic dims, so one model must run at every shape below.

Usage: gen_dynamic_models.py OUTDIR [NAME...]
Writes OUTDIR/NAME/model.onnx and, for each case TAG, input_TAG.npy and
output_TAG.npy. Needs Debian's python3-torch, python3-torchvision and
python3-onnx (run with /usr/bin/python3). Exits 77 (CTest's "skipped") when
PyTorch is not installed.
"""
import os
import sys
import zlib
from typing import List

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torchvision.models as tvm
except ImportError as e:  # depends on the machine
    print(f"cannot export: {e} (install python3-torch python3-torchvision python3-onnx)")
    sys.exit(1 if os.environ.get("CI") else 77)  # CI installs them: missing there is an error


def randomize_bn(model):
    """Same as gen_torch_models.py: non-trivial BatchNorm statistics."""
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.Linear) and not m.weight.detach().any():
            m.weight.data.copy_(torch.randn(m.weight.shape, generator=g) * 0.05)
            if m.bias is not None:
                m.bias.data.copy_(torch.randn(m.bias.shape, generator=g) * 0.05)
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)):
            n = m.num_features
            m.running_mean.copy_(torch.rand(n, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_(torch.rand(n, generator=g) * 0.2 - 0.1)
    return model


class DynamicReshape(nn.Module):
    """The shared case: every reshape target is computed from the input's shape."""

    def forward(self, x):  # x: [n, 8, h, w]
        n, c, h, w = x.shape
        y = x.reshape(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h * w)
        y = y.reshape(n, -1, w * 2)
        return torch.softmax(y, dim=-1).flatten(1)


class ResidualBlocks(nn.Module):
    """Sums of convolutions and their inputs (which the optimizer fuses into
    the convolutions as a residual input), exported at a static batch of 2."""

    def __init__(self):
        super().__init__()
        self.full = nn.Conv2d(8, 8, 3, padding=1)
        self.pointwise = nn.Conv2d(8, 8, 1)
        self.depthwise = nn.Conv2d(8, 8, 3, padding=1, groups=8)

    def forward(self, x):
        y = torch.relu(self.full(x) + x)
        y = torch.relu(y + self.pointwise(y))
        return self.depthwise(y) + y


class GreedyDecoder(nn.Module):
    """A scripted loop (torch.jit.script, exported as ONNX Loop): a GRU cell
    written out (scripted nn.GRUCell does not export) decodes tokens greedily
    from the state h until it emits token 2 or has taken 12 steps, so the
    number of iterations depends on the input. Returns the tokens and the
    final state."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.wi = nn.Linear(8, 48)
        self.wh = nn.Linear(16, 48)
        self.out = nn.Linear(16, 10)

    def forward(self, h):  # h: [1, 16]
        tok = torch.zeros(1, dtype=torch.long)
        tokens = torch.zeros(0, dtype=torch.long)
        steps = 0
        go = True
        while go and steps < 12:
            gi = self.wi(self.embed(tok))
            gh = self.wh(h)
            r = torch.sigmoid(gi[:, :16] + gh[:, :16])
            z = torch.sigmoid(gi[:, 16:32] + gh[:, 16:32])
            n = torch.tanh(gi[:, 32:] + r * gh[:, 32:])
            h = (1 - z) * n + z * h
            tok = self.out(h).argmax(dim=1)
            tokens = torch.cat([tokens, tok])
            steps += 1
            go = bool(tok[0] != 2)
        return tokens, h


class PerClassBoxes(nn.Module):
    """A scripted model that returns a list of tensors (List[Tensor], exported
    as an ONNX sequence built in a Loop): per class, the boxes whose score for
    it passes 0.5, scaled by that score; each element has its own row count."""

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 7)

    def forward(self, x):  # x: [n, 8]
        y = self.head(x)
        boxes = y[:, :4]
        scores = torch.sigmoid(y[:, 4:])
        out: List[torch.Tensor] = []
        for c in range(scores.size(1)):
            keep = scores[:, c] > 0.5
            out.append(boxes[keep] * scores[keep][:, c:c + 1])
        return out


# name -> (constructor, dynamic axes of input 0 (none: static), {tag: input shape}[, scripted]);
# the first shape is the one the graph is traced with. A scripted model is exported through
# torch.jit.script (its loops become ONNX Loop); one with several outputs writes output_TAG.npy,
# output1_TAG.npy, ...; one that returns a list writes its elements as output_TAG_0.npy,
# output_TAG_1.npy, ... (as `kestrel run` writes a sequence).
MODELS = {
    "dynamic_reshape": (DynamicReshape, {0: "batch", 2: "height", 3: "width"},
                        {"b1": (1, 8, 12, 16), "b3": (3, 8, 12, 16),
                         "b1_10x6": (1, 8, 10, 6), "b3_20x24": (3, 8, 20, 24)}),
    "resnet18": (lambda: tvm.resnet18(), {0: "batch"},
                 {"b1": (1, 3, 224, 224), "b4": (4, 3, 224, 224)}),
    "residual_b2": (ResidualBlocks, {}, {"b2": (2, 8, 12, 12)}),
    "greedy_decoder": (GreedyDecoder, {}, {f"h{i}": (1, 16) for i in range(8)}, True),
    "per_class_boxes": (PerClassBoxes, {0: "n"}, {f"n{n}": (n, 8) for n in (1, 5, 12, 40)}, True),
}


def up_to_date(d, cases):
    """Files from an earlier run of this same script are reused."""
    files = ["model.onnx"] + [f"input_{t}.npy" for t in cases]
    files += [f"output_{t}.npy" if os.path.exists(os.path.join(d, f"output_{t}.npy")) else f"output_{t}_0.npy"
              for t in cases]
    paths = [os.path.join(d, f) for f in files]
    if not all(os.path.exists(p) for p in paths):
        return False
    return min(os.path.getmtime(p) for p in paths) > os.path.getmtime(__file__)


def export(name, outdir):
    ctor, axes, cases, *scripted = MODELS[name]
    d = os.path.join(outdir, name)
    if up_to_date(d, cases):
        print(name, "up to date")
        return
    torch.manual_seed(zlib.crc32(name.encode()))  # the weights of the shared case
    model = randomize_bn(ctor()).eval()
    if scripted:
        model = torch.jit.script(model)
    os.makedirs(d, exist_ok=True)
    g = torch.Generator().manual_seed(3)
    first = True
    for tag, shape in cases.items():
        x = torch.rand(*shape, generator=g) * 2 - 1
        with torch.no_grad():
            y = model(x)
        outputs = list(y) if isinstance(y, tuple) else [y]
        names = ["output"] + [f"output{i}" for i in range(1, len(outputs))]
        if isinstance(y, list):  # one output, a list of tensors
            outputs, names = y, [f"output_{tag}_{k}" for k in range(len(y))]
        if first:
            torch.onnx.export(model, x, os.path.join(d, "model.onnx"), opset_version=13,
                              input_names=["input"], output_names=["output"] if isinstance(y, list) else names,
                              dynamic_axes={"input": axes, "output": {0: "batch"}} if axes else None,
                              do_constant_folding=True)
            first = False
        np.save(os.path.join(d, f"input_{tag}.npy"), x.numpy())
        for n, out in zip(names, outputs):
            np.save(os.path.join(d, n + ".npy" if isinstance(y, list) else f"{n}_{tag}.npy"), out.numpy())
    print(name, "ok", list(cases))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    for n in sys.argv[2:] or MODELS:
        export(n, outdir)
