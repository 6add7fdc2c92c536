#!/usr/bin/python3
"""Write small PyTorch models as ncnn's converter pnnx writes them (.param and
.bin), with PyTorch's outputs, for tests/test_pnnx_models.cpp.

pnnx itself needs libtorch's C++ build, which Debian does not ship; so each
model here is written layer by layer with the conversions pnnx applies (read
from its tools/pnnx/src/pass_ncnn/*.cpp for the facts): the batch axis dropped,
nn.Linear on a sequence as Gemm (constant B and C, broadcast type 4), on a
vector as InnerProduct, LSTM gates reordered from PyTorch's IFGO to ncnn's
IFOG with the two biases summed, GRU biases as (r, z, n_input, n_hidden),
torch.squeeze/unsqueeze/repeat/flip as Squeeze/ExpandDims/Tile/Flip with axes
counted without the batch, Split layers before blobs used twice. Weights that
ncnn loads "tagged" get the 4-byte float32 tag, the others are raw.

Usage: gen_pnnx_models.py OUTDIR
Writes OUTDIR/NAME/{model.param, model.bin, input.npy, output.npy}; the .npy
shapes are ours (ncnn's [w, h, c] reversed, no batch). Exits 77 (CTest's
"skipped") without PyTorch, unless CI is set.
"""
import os
import struct
import sys

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:  # depends on the machine
    print(f"cannot build the models: {e} (install python3-torch)")
    sys.exit(1 if os.environ.get("CI") else 77)


class NcnnWriter:
    """Collects layers and weights; blob names are pnnx's running numbers."""

    def __init__(self):
        self.layers = []
        self.weights = bytearray()
        self.blobs = 0
        self.counts = {}

    def blob(self):
        self.blobs += 1
        return str(self.blobs - 1)

    def layer(self, type_, bottoms, params="", tops=1):
        n = self.counts.get(type_, 0)
        self.counts[type_] = n + 1
        outs = [self.blob() for _ in range(tops)]
        name = f"{type_.lower()}_{n}"
        self.layers.append(f"{type_:<24}{name:<24}{len(bottoms)} {len(outs)} {' '.join(bottoms + outs)} {params}".rstrip())
        return outs[0] if tops == 1 else outs

    def tagged(self, t):  # ncnn's mb.load(..., 0): a float32 tag, then the values
        self.weights += struct.pack("<I", 0)
        self.raw(t)

    def raw(self, t):  # mb.load(..., 1)
        self.weights += np.ascontiguousarray(t.detach().numpy(), dtype="<f4").tobytes()

    def split(self, b):
        return self.layer("Split", [b], tops=2)

    def write(self, out_dir):
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "model.param"), "w") as f:
            f.write(f"7767517\n{len(self.layers)} {self.blobs}\n" + "\n".join(self.layers) + "\n")
        with open(os.path.join(out_dir, "model.bin"), "wb") as f:
            f.write(bytes(self.weights))


def arr(key, values):
    """An array param as the .param text writes it: -23300-key=count,v0,v1,..."""
    return f"-{23300 + key}={len(values)}," + ",".join(str(v) for v in values)


def linear_gemm(w, x, lin, seq):  # pnnx's nn_Linear_0: (seq, in) @ W^T + b
    y = w.layer("Gemm", [x], f"2=0 3=1 4=0 5=1 6=1 7={seq} 8={lin.out_features} 9={lin.in_features} 10=4")
    w.tagged(lin.weight)
    w.tagged(lin.bias)
    return y


def vit_tail(w):
    """A transformer block's MLP half on tokens, its class token picked with
    select + squeeze, a head, then unsqueeze/repeat/flip/softplus/erf."""
    torch.manual_seed(1)
    seq, dim = 6, 16
    ln, fc1, fc2, head = nn.LayerNorm(dim), nn.Linear(dim, 32), nn.Linear(32, dim), nn.Linear(dim, 5)
    with torch.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-0.2, 0.2)
    rms_w = torch.rand(dim) + 0.5
    x = torch.randn(1, seq, dim)

    def rms_norm(t, eps=1e-6):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps) * rms_w

    with torch.no_grad():
        h = x + fc2(F.gelu(fc1(ln(x))))
        h = rms_norm(h)
        cls = h[:, 0:1, :].squeeze(1).squeeze(0)  # (dim,)
        y = F.softplus(head(cls))
        y = torch.flip(y.unsqueeze(0).repeat(3, 1), dims=[1])
        y = torch.erf(y - 1.0)

    inp = w.layer("Input", [], "0=16 1=6")
    a, b = w.split(inp)
    t = w.layer("LayerNorm", [a], "0=16 1=1.000000e-05 2=1")
    w.raw(ln.weight)
    w.raw(ln.bias)
    t = linear_gemm(w, t, fc1, seq)
    t = w.layer("GELU", [t], "0=0")
    t = linear_gemm(w, t, fc2, seq)
    t = w.layer("BinaryOp", [b, t], "0=0")
    t = w.layer("RMSNorm", [t], "0=16 1=1.000000e-06 2=1")
    w.raw(rms_w)
    t = w.layer("Crop", [t], f"{arr(9, [0])} {arr(10, [1])} {arr(11, [0])}")
    t = w.layer("Squeeze", [t], arr(3, [0]))
    t = w.layer("InnerProduct", [t], f"0=5 1=1 2={5 * dim}")
    w.tagged(head.weight)
    w.raw(head.bias)
    t = w.layer("Softplus", [t])
    t = w.layer("ExpandDims", [t], arr(3, [0]))
    t = w.layer("Tile", [t], arr(2, [3, 1]))
    t = w.layer("Flip", [t], arr(0, [1]))
    t = w.layer("BinaryOp", [t], "0=1 1=1 2=1.000000e+00")
    w.layer("Erf", [t])
    return x[0], y


def conv_block(w):
    """Conv, InstanceNorm, PReLU, PixelShuffle, GroupNorm, ELU, Conv, SELU, GLU."""
    torch.manual_seed(2)
    c1, inorm, prelu = nn.Conv2d(3, 8, 3, padding=1), nn.InstanceNorm2d(8, affine=True), nn.PReLU(8)
    gn, c2 = nn.GroupNorm(2, 2), nn.Conv2d(2, 4, 3, padding=1)
    with torch.no_grad():
        for m in (inorm, gn):
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.3, 0.3)
        prelu.weight.uniform_(0.05, 0.4)
    x = torch.randn(1, 3, 8, 8)
    with torch.no_grad():
        t = F.pixel_shuffle(prelu(inorm(c1(x))), 2)
        y = F.glu(F.selu(c2(F.elu(gn(t), alpha=0.7))), dim=1)

    t = w.layer("Input", [], "0=8 1=8 2=3")
    t = w.layer("Convolution", [t], "0=8 1=3 11=3 2=1 12=1 3=1 13=1 4=1 14=1 15=1 16=1 5=1 6=216")
    w.tagged(c1.weight)
    w.raw(c1.bias)
    t = w.layer("InstanceNorm", [t], "0=8 1=1.000000e-05 2=1")
    w.raw(inorm.weight)
    w.raw(inorm.bias)
    t = w.layer("PReLU", [t], "0=8")
    w.raw(prelu.weight)
    t = w.layer("PixelShuffle", [t], "0=2 1=0")
    t = w.layer("GroupNorm", [t], "0=2 1=2 2=1.000000e-05 3=1")
    w.raw(gn.weight)
    w.raw(gn.bias)
    t = w.layer("ELU", [t], "0=7.000000e-01")
    t = w.layer("Convolution", [t], "0=4 1=3 11=3 2=1 12=1 3=1 13=1 4=1 14=1 15=1 16=1 5=1 6=72")
    w.tagged(c2.weight)
    w.raw(c2.bias)
    t = w.layer("SELU", [t])
    w.layer("GLU", [t], "0=0")
    return x[0], y[0]


def recurrent(w):
    """A bidirectional LSTM, a GRU, then an LSTM with a projection (proj_size), on a batch_first sequence."""
    torch.manual_seed(3)
    seq, inp_size = 7, 6
    lstm = nn.LSTM(inp_size, 5, batch_first=True, bidirectional=True)
    gru = nn.GRU(10, 4, batch_first=True)
    proj = nn.LSTM(4, 6, batch_first=True, proj_size=3)
    x = torch.randn(1, seq, inp_size)
    with torch.no_grad():
        y = proj(gru(lstm(x)[0])[0])[0][0]

    def ifog(t, hidden):  # PyTorch's gate blocks i, f, g, o as ncnn's i, f, o, g
        i, f, g, o = t.split(hidden, 0)
        return torch.cat([i, f, o, g], 0)

    t = w.layer("Input", [], f"0={inp_size} 1={seq}")
    t = w.layer("LSTM", [t], f"0=5 1={2 * 5 * inp_size * 4} 2=2 3=5")
    suffixes = ["_l0", "_l0_reverse"]
    w.tagged(torch.cat([ifog(getattr(lstm, "weight_ih" + s), 5) for s in suffixes]))
    w.tagged(torch.cat([ifog(getattr(lstm, "bias_ih" + s) + getattr(lstm, "bias_hh" + s), 5) for s in suffixes]))
    w.tagged(torch.cat([ifog(getattr(lstm, "weight_hh" + s), 5) for s in suffixes]))
    t = w.layer("GRU", [t], f"0=4 1={4 * 10 * 3} 2=0")
    w.tagged(gru.weight_ih_l0)
    bih, bhh = gru.bias_ih_l0, gru.bias_hh_l0
    w.tagged(torch.cat([bih[:8] + bhh[:8], bih[8:], bhh[8:]]))
    w.tagged(gru.weight_hh_l0)
    # num_output is the projection's size, hidden_size the cell's; weight_hr last.
    w.layer("LSTM", [t], f"0=3 1={6 * 4 * 4} 2=0 3=6")
    w.tagged(ifog(proj.weight_ih_l0, 6))
    w.tagged(ifog(proj.bias_ih_l0 + proj.bias_hh_l0, 6))
    w.tagged(ifog(proj.weight_hh_l0, 6))
    w.tagged(proj.weight_hr_l0)
    return x[0], y


MODELS = {"pnnx_vit_tail": vit_tail, "pnnx_conv_block": conv_block, "pnnx_recurrent": recurrent}


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    for name, build in MODELS.items():
        w = NcnnWriter()
        x, y = build(w)
        out_dir = os.path.join(sys.argv[1], name)
        w.write(out_dir)
        np.save(os.path.join(out_dir, "input.npy"), x.detach().numpy().astype(np.float32))
        np.save(os.path.join(out_dir, "output.npy"), y.detach().numpy().astype(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
