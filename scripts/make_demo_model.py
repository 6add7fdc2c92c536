#!/usr/bin/env python3
"""Writes models/demo/demo.bin: deterministic weights for the hand-written
models/demo/demo.param (a tiny MobileNet-style classifier, 3x32x32 -> 10).
Plain Python (no numpy) so it runs anywhere; the output is committed."""
import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "models", "demo", "demo.bin")

# (layer, count, tagged): in .param order, each layer's weights in ncnn load order.
WEIGHTS = [
    ("conv1 weight", 16 * 3 * 3 * 3, True), ("conv1 bias", 16, False),
    ("dw2 weight", 16 * 3 * 3, True), ("dw2 bias", 16, False),
    ("pw2 weight", 32 * 16, True), ("pw2 bias", 32, False),
    ("conv3 weight", 32 * 32 * 3 * 3, True), ("conv3 bias", 32, False),
    ("fc weight", 10 * 32, True), ("fc bias", 10, False),
]

def values(count, seed):
    # A smooth, reproducible pattern scaled like He initialisation.
    scale = 1.0 / math.sqrt(max(count / 16.0, 1.0))
    return [scale * math.sin(seed * 12.9898 + i * 78.233) for i in range(count)]

with open(OUT, "wb") as f:
    for seed, (_, count, tagged) in enumerate(WEIGHTS, start=1):
        if tagged:
            f.write(struct.pack("<I", 0))  # fp32 tag
        f.write(struct.pack("<%df" % count, *values(count, seed)))
print("wrote", OUT)
