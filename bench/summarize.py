#!/usr/bin/env python3
"""Summarize a kestrel_bench_elementwise JSON run (docs/benchmarks.md).

usage: kestrel_bench_elementwise --benchmark_repetitions=10 \
           --benchmark_enable_random_interleaving=true \
           --benchmark_out=run.json --benchmark_out_format=json
       python3 bench/summarize.py run.json

Prints, per benchmark and thread count, the median and the best (fastest
repetition) bandwidth in GB/s (10^9 bytes/s), the ratio to memcpy with the same
thread count, and the 2-thread / 1-thread speed-up. The medians are the
recorded figures; the best repetition shows what an unloaded machine gives.
"""
import json
import statistics
import sys
from collections import defaultdict


def main(path):
    with open(path) as f:
        run = json.load(f)
    rates = defaultdict(list)  # (bench, threads) -> [bytes/s per repetition]
    for b in run["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"] if "run_name" in b else b["name"]
        parts = name.split("/")
        rates[(parts[0], int(parts[1]))].append(b["bytes_per_second"])
    ctx = run.get("context", {})
    print(f"# {ctx.get('date', '')}  host {ctx.get('host_name', '')}  "
          f"{ctx.get('num_cpus', '?')} cpus @ {ctx.get('mhz_per_cpu', '?')} MHz  "
          f"load {ctx.get('load_avg', '?')}")
    med = {k: statistics.median(v) for k, v in rates.items()}
    best = {k: max(v) for k, v in rates.items()}
    print(f"{'benchmark':<24}{'thr':>4}{'reps':>5}{'median GB/s':>13}{'best GB/s':>11}"
          f"{'med/memcpy':>12}{'best/memcpy':>13}{'2T/1T med':>11}")
    for (bench, thr) in sorted(rates):
        m, bst = med[(bench, thr)], best[(bench, thr)]
        mc_m, mc_b = med.get(("BM_Memcpy", thr)), best.get(("BM_Memcpy", thr))
        r_m = f"{m / mc_m:.0%}" if mc_m else "-"
        r_b = f"{bst / mc_b:.0%}" if mc_b else "-"
        sp = ""
        if thr == 2 and (bench, 1) in med:
            sp = f"{m / med[(bench, 1)]:.2f}x"
        print(f"{bench:<24}{thr:>4}{len(rates[(bench, thr)]):>5}{m / 1e9:>13.2f}{bst / 1e9:>11.2f}"
              f"{r_m:>12}{r_b:>13}{sp:>11}")


if __name__ == "__main__":
    main(sys.argv[1])
