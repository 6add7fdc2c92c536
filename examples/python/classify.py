#!/usr/bin/env python3
"""Classifies a picture with any ImageNet-style classifier (.onnx, or ncnn .param
with its .bin) on Kestrel: resized (antialiased) to the model's input, ImageNet's
mean and deviation, softmax, the five best classes.

    PYTHONPATH=build/python python3 examples/python/classify.py MODEL PICTURE [LABELS]"""
import sys

import numpy as np

import kestrel
from kestrel import image

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
NORM = [1 / (0.229 * 255), 1 / (0.224 * 255), 1 / (0.225 * 255)]


def classify(model, rgb, top=5):
    """[(class, probability)] of the `top` best classes."""
    session = kestrel.InferenceSession(model)
    declared = session.get_inputs()[0]
    shape = declared.shape or (1, 3, 224, 224)
    h, w = (shape[-2] or 224), (shape[-1] or 224)
    x = image.from_pixels(rgb, "RGB", size=(w, h), mean=MEAN, norm=NORM, antialias=True)
    if len(shape) == 4:
        x = x[None]
    (scores,) = session.run(None, {declared.name: x})
    scores = scores.reshape(-1).astype(np.float64)
    probs = np.exp(scores - scores.max())
    probs /= probs.sum()
    best = np.argsort(-probs, kind="stable")[:top]
    return [(int(i), float(probs[i])) for i in best]


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    from PIL import Image
    rgb = np.asarray(Image.open(sys.argv[2]).convert("RGB"))
    labels = open(sys.argv[3], encoding="utf-8").read().splitlines() if len(sys.argv) == 4 else []
    for index, p in classify(sys.argv[1], rgb):
        print(f"{index:5d} {p:.4f} {labels[index] if index < len(labels) else ''}")


if __name__ == "__main__":
    main()
