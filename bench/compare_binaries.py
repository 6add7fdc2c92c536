#!/usr/bin/env python3
"""Time two kestrel binaries side by side on the zoo models (docs/benchmarks.md).

usage: python3 bench/compare_binaries.py OLD_KESTREL NEW_KESTREL [--zoo DIR]
           [--threads 1,2] [--rounds 5] [--loops 10] [--models a,b,...]

Each round runs every model once with each binary (`kestrel bench MODEL
--shape w,h,c` with the zoo's shapes.txt), the binary going first alternating
from model to model and round to round, so that the machine's drifts fall on
both alike. Prints per model and thread count the median of the runs' medians
and the smallest minimum for each binary, and new/old for both (below 1: the
new binary is faster).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"min =\s*([\d.]+).*median =\s*([\d.]+)")


def zoo_shapes(zoo):
    shapes = {}
    with open(os.path.join(zoo, "shapes.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, shape = line.split()
                shapes[name] = shape
    return shapes


def bench(binary, param, shape, threads, loops):
    out = subprocess.run([binary, "bench", param, "--shape", shape, "--threads", str(threads),
                          "--loops", str(loops), "--warmup", "2"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = LINE.search(line)
        if m:
            return float(m.group(1)), float(m.group(2))
    sys.exit(f"no timing from {binary} on {param}:\n{out}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--zoo", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "zoo"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--loops", type=int, default=10)
    ap.add_argument("--models", default="")
    a = ap.parse_args()
    shapes = zoo_shapes(a.zoo)
    models = a.models.split(",") if a.models else sorted(shapes)
    print(f"| model | threads | old median ms | new median ms | new/old median | old min | new min | new/old min |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    ratios = []
    for threads in [int(t) for t in a.threads.split(",")]:
        runs = {m: {"old": [], "new": []} for m in models}
        for r in range(a.rounds):
            for i, m in enumerate(models):
                order = ["old", "new"] if (i + r) % 2 == 0 else ["new", "old"]
                for which in order:
                    binary = a.old if which == "old" else a.new
                    runs[m][which].append(bench(binary, os.path.join(a.zoo, m + ".param"), shapes[m], threads, a.loops))
        for m in models:
            old_med = statistics.median(x[1] for x in runs[m]["old"])
            new_med = statistics.median(x[1] for x in runs[m]["new"])
            old_min = min(x[0] for x in runs[m]["old"])
            new_min = min(x[0] for x in runs[m]["new"])
            ratios.append((m, threads, new_med / old_med, new_min / old_min))
            print(f"| {m} | {threads} | {old_med:.2f} | {new_med:.2f} | {new_med / old_med:.3f} | "
                  f"{old_min:.2f} | {new_min:.2f} | {new_min / old_min:.3f} |", flush=True)
    worst = max(ratios, key=lambda x: min(x[2], x[3]))
    geo = statistics.geometric_mean(x[2] for x in ratios)
    print(f"\ngeometric mean new/old (medians): {geo:.3f}; worst model: {worst[0]} at {worst[1]} threads "
          f"(median {worst[2]:.3f}, min {worst[3]:.3f})")


if __name__ == "__main__":
    main()
