#!/usr/bin/env python3
"""Reads the text in a picture with PaddleOCR's PP-OCRv4 detector and
recognizer on Kestrel: detection map -> boxes -> crops -> recognition -> text.

    examples/fetch_ocr_models.sh build/ocr-models
    PYTHONPATH=build/python python3 examples/python/ocr.py build/ocr-models picture.png

Prints one line of text per box, top to bottom, and the time of each stage."""
import os
import sys
import time

import numpy as np

import kestrel
from kestrel import image

# PaddleOCR's pre-processing: BGR pixels; the detector normalizes with
# ImageNet's mean and deviation, the recognizer maps 0..255 to -1..1.
DET_MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
DET_NORM = [1 / (0.229 * 255), 1 / (0.224 * 255), 1 / (0.225 * 255)]
DET_LIMIT = 960      # the longer side at most, rounded to a multiple of 32
DET_THRESHOLD = 0.3  # a pixel is text above this probability
BOX_THRESHOLD = 0.6  # a box is kept when its mean probability is above this
UNCLIP_RATIO = 2.0   # boxes grow by area * ratio / perimeter: DBNet shrinks text regions; PaddleOCR
                     # grows them by 1.5, a crop so tight that PP-OCRv4 drops the spaces between words
REC_HEIGHT, REC_MIN_WIDTH = 48, 320


def read_picture(path):
    """RGB pixels of a picture file (PIL here; the C++ example uses stb_image)."""
    from PIL import Image
    return np.asarray(Image.open(path).convert("RGB"))


def components(mask):
    """The 4-connected regions of a boolean map, as lists of (row, col) arrays."""
    labels = np.zeros(mask.shape, np.int32)
    regions = []
    for start in zip(*np.nonzero(mask)):
        if labels[start]:
            continue
        labels[start] = len(regions) + 1
        stack, pixels = [start], []
        while stack:
            r, c = stack.pop()
            pixels.append((r, c))
            for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if 0 <= nr < mask.shape[0] and 0 <= nc < mask.shape[1] and mask[nr, nc] and not labels[nr, nc]:
                    labels[nr, nc] = len(regions) + 1
                    stack.append((nr, nc))
        regions.append(np.array(pixels))
    return regions


def detect(session, rgb):
    """Text boxes (x0, y0, x1, y1) in the picture's pixels, top to bottom."""
    h, w = rgb.shape[:2]
    scale = min(1.0, DET_LIMIT / max(h, w))
    dh, dw = (max(32, int(round(h * scale / 32)) * 32), max(32, int(round(w * scale / 32)) * 32))
    x = image.from_pixels(rgb, "RGB2BGR", size=(dw, dh), mean=DET_MEAN, norm=DET_NORM)
    (prob,) = session.run(None, {"x": x[None]})
    prob = prob[0, 0]
    boxes = []
    for region in components(prob > DET_THRESHOLD):
        (r0, c0), (r1, c1) = region.min(0), region.max(0) + 1
        if min(r1 - r0, c1 - c0) < 3 or prob[region[:, 0], region[:, 1]].mean() < BOX_THRESHOLD:
            continue
        grow = (r1 - r0) * (c1 - c0) * UNCLIP_RATIO / (2 * ((r1 - r0) + (c1 - c0)))
        x0, x1 = (c0 - grow) * w / dw, (c1 + grow) * w / dw
        y0, y1 = (r0 - grow) * h / dh, (r1 + grow) * h / dh
        boxes.append((max(0, int(x0)), max(0, int(y0)), min(w, int(np.ceil(x1))), min(h, int(np.ceil(y1)))))
    return sorted(boxes, key=lambda b: (b[1], b[0]))


def recognize(session, keys, rgb, box):
    """The text of one box: greedy CTC over the recognizer's per-step classes."""
    x0, y0, x1, y1 = box
    crop = image.crop(rgb, x0, y0, x1 - x0, y1 - y0)
    width = min(int(np.ceil(REC_HEIGHT * (x1 - x0) / (y1 - y0))), 4096)
    x = image.from_pixels(crop, "RGB2BGR", size=(width, REC_HEIGHT), mean=[127.5] * 3, norm=[1 / 127.5] * 3)
    padded = np.zeros((1, 3, REC_HEIGHT, max(width, REC_MIN_WIDTH)), np.float32)
    padded[0, :, :, :width] = x
    (probs,) = session.run(None, {"x": padded})
    text, previous = [], 0
    for index in probs[0].argmax(axis=1):
        if index != 0 and index != previous:  # 0 is CTC's blank; repeats collapse
            text.append(keys[index - 1] if index - 1 < len(keys) else " ")
        previous = index
    return "".join(text)


def read_text(models, rgb, threads=1):
    """Each box's text, top to bottom, and the seconds each stage took."""
    times = {}
    start = time.perf_counter()
    det = kestrel.InferenceSession(os.path.join(models, "ch_PP-OCRv4_det_infer.onnx"), threads=threads)
    rec = kestrel.InferenceSession(os.path.join(models, "ch_PP-OCRv4_rec_infer.onnx"), threads=threads)
    with open(os.path.join(models, "ppocr_keys_v1.txt"), encoding="utf-8") as f:
        keys = [line.rstrip("\n") for line in f] + [" "]
    times["load"] = time.perf_counter() - start
    start = time.perf_counter()
    boxes = detect(det, rgb)
    times["detect"] = time.perf_counter() - start
    start = time.perf_counter()
    lines = [recognize(rec, keys, rgb, box) for box in boxes]
    times["recognize"] = time.perf_counter() - start
    return lines, boxes, times


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    lines, boxes, times = read_text(sys.argv[1], read_picture(sys.argv[2]))
    for text, box in zip(lines, boxes):
        print(f"{box}: {text}")
    print("  ".join(f"{k} {v * 1e3:.1f} ms" for k, v in times.items()), file=sys.stderr)


if __name__ == "__main__":
    main()
