#!/usr/bin/env python3
"""Kestrel against MNN on TensorFlow Lite models, side by side on this machine
(issue 46's target: Kestrel <= 0.8 x MNN; docs/benchmarks.md).

usage: python3 bench/compare_tflite_mnn.py --kestrel build/kestrel --mnn-timer TIMER
           --models DIR [--threads 1,2] [--rounds 3] [--loops 20]

Kestrel runs DIR/NAME.tflite as it is (`kestrel bench`); MNN runs
DIR/NAME.mnn, the same file converted by MNN's own converter
(MNNConvert -f TFLITE), through TIMER, a command built outside the repository
(never committed) that takes `MODEL.mnn THREADS LOOPS` and prints the
minimum per-inference time as `min = X` or `min_ms=X` (ms). Each round times every model
once per engine, the engine going first alternating from model to model and
round to round; a model's figure is the smallest minimum over the rounds.
Prints a markdown table: Kestrel, MNN, and their ratio per model and thread count.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

LINE = re.compile(r"min(?:_ms)?\s*=\s*([\d.]+)")


def minimum(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    for line in out.splitlines()[::-1]:
        m = LINE.search(line)
        if m:
            return float(m.group(1))
    sys.exit(f"no timing from {' '.join(cmd)}:\n{out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kestrel", required=True)
    ap.add_argument("--mnn-timer", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--loops", type=int, default=20)
    args = ap.parse_args()
    names = sorted(os.path.basename(p)[:-len(".tflite")] for p in glob.glob(os.path.join(args.models, "*.tflite"))
                   if os.path.exists(p[:-len(".tflite")] + ".mnn"))
    if not names:
        sys.exit(f"no NAME.tflite with its NAME.mnn in {args.models}")
    best = {}
    turn = 0
    for r in range(args.rounds):
        for threads in [int(t) for t in args.threads.split(",")]:
            for name in names:
                base = os.path.join(args.models, name)
                runs = {
                    "kestrel": [args.kestrel, "bench", base + ".tflite", "--threads", str(threads), "--loops",
                                str(args.loops)],
                    "mnn": [args.mnn_timer, base + ".mnn", str(threads), str(args.loops)],
                }
                order = ["kestrel", "mnn"] if turn % 2 == 0 else ["mnn", "kestrel"]
                turn += 1
                for engine in order:
                    t = minimum(runs[engine])
                    key = (name, threads, engine)
                    best[key] = min(best.get(key, t), t)
    print("| model | threads | Kestrel min (ms) | MNN min (ms) | Kestrel / MNN |")
    print("| --- | --- | --- | --- | --- |")
    for threads in [int(t) for t in args.threads.split(",")]:
        for name in names:
            k, m = best[(name, threads, "kestrel")], best[(name, threads, "mnn")]
            print(f"| {name} | {threads} | {k:.2f} | {m:.2f} | {k / m:.2f} |")


if __name__ == "__main__":
    main()
