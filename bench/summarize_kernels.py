#!/usr/bin/env python3
"""Summarize a kestrel_bench_kernels JSON run (docs/benchmarks.md).

usage: kestrel_bench_kernels --benchmark_repetitions=5 \
           --benchmark_out=k.json --benchmark_out_format=json
       python3 bench/summarize_kernels.py k.json

Prints, per benchmark and arguments, the median GFLOP/s over the repetitions
and its fraction of the FMA peak (BM_FmaPeak) at the same thread count,
measured in the same run. Winograd's GFLOP/s counts the direct algorithm's
multiply-adds (its effective rate), so it may exceed the peak.
"""
import json
import statistics
import sys
from collections import defaultdict


def main(path):
    with open(path) as f:
        run = json.load(f)
    rates = defaultdict(list)  # (bench, args) -> [GFLOP/s per repetition]
    for b in run["benchmarks"]:
        if b.get("run_type") != "iteration" or "GFLOPS" not in b:
            continue
        name = b.get("run_name", b["name"]).split("/")
        bench, args = name[0], [a for a in name[1:] if a[:1].isdigit()]
        rates[(bench, tuple(int(a) for a in args))].append(b["GFLOPS"] / 1e9)
    ctx = run.get("context", {})
    print(f"# {ctx.get('date', '')}  {ctx.get('num_cpus', '?')} cpus  load {ctx.get('load_avg', '?')}")
    print("| benchmark | threads | args | median GFLOP/s | of FMA peak |")
    print("| --- | ---: | --- | ---: | ---: |")
    med = {k: statistics.median(v) for k, v in rates.items()}
    for (bench, args) in sorted(med):
        threads = args[0]
        peak = med.get(("BM_FmaPeak", (threads,)))
        frac = f"{100 * med[(bench, args)] / peak:.0f} %" if peak else "?"
        rest = ",".join(str(a) for a in args[1:])
        print(f"| {bench} | {threads} | {rest} | {med[(bench, args)]:.1f} | {frac} |")


if __name__ == "__main__":
    main(sys.argv[1])
