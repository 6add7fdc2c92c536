#!/usr/bin/env python3
"""kestrel.image against OpenCV on a 1920x1080 frame, one thread each: the
minimum of ROUNDS timed calls per function, the two libraries alternating call
by call. Usage: PYTHONPATH=build/python /usr/bin/python3 bench/image_vs_opencv.py [ROUNDS]"""
import sys
import time

import cv2
import numpy as np

import kestrel
from kestrel import image

W, H = 1920, 1080


def cases():
    rng = np.random.default_rng(0)
    bgr = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
    nv21 = rng.integers(0, 256, (H * 3 // 2, W), dtype=np.uint8)
    return [
        ("NV21 -> RGB", lambda: image.yuv420sp2rgb(nv21, W, H), lambda: cv2.cvtColor(nv21, cv2.COLOR_YUV2RGB_NV21)),
        ("BGR -> RGB", lambda: image.convert(bgr, "BGR2RGB"), lambda: cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)),
        ("BGR -> GRAY", lambda: image.convert(bgr, "BGR2GRAY"), lambda: cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)),
        ("bilinear -> 640x360", lambda: image.resize(bgr, (640, 360)),
         lambda: cv2.resize(bgr, (640, 360), interpolation=cv2.INTER_LINEAR)),
        ("bilinear -> 224x224", lambda: image.resize(bgr, (224, 224)),
         lambda: cv2.resize(bgr, (224, 224), interpolation=cv2.INTER_LINEAR)),
        ("area -> 640x360", lambda: image.resize(bgr, (640, 360), "area"),
         lambda: cv2.resize(bgr, (640, 360), interpolation=cv2.INTER_AREA)),
        ("area -> 224x224", lambda: image.resize(bgr, (224, 224), "area"),
         lambda: cv2.resize(bgr, (224, 224), interpolation=cv2.INTER_AREA)),
        ("from_pixels BGR2RGB 224x224 mean/norm",
         lambda: image.from_pixels(bgr, "BGR2RGB", (224, 224), mean=[123.7, 116.3, 103.5], norm=[0.017] * 3),
         lambda: ((cv2.resize(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), (224, 224), interpolation=cv2.INTER_LINEAR)
                   - np.float32([123.7, 116.3, 103.5])) * np.float32(0.017)).transpose(2, 0, 1).copy()),
    ]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    cv2.setNumThreads(1)
    print(f"{'':40s} {'kestrel ms':>10s} {'OpenCV ms':>10s} {'ratio':>6s}")
    for name, ours, theirs in cases():
        best = [float("inf"), float("inf")]
        ours(), theirs()
        for _ in range(rounds):
            for i, fn in enumerate((ours, theirs)):
                start = time.perf_counter()
                fn()
                best[i] = min(best[i], time.perf_counter() - start)
        print(f"{name:40s} {best[0] * 1e3:10.3f} {best[1] * 1e3:10.3f} {best[0] / best[1]:6.2f}")


if __name__ == "__main__":
    main()
