#!/usr/bin/env python3
"""Feeds mutated model and input files to `kestrel run` and checks that every
run ends cleanly: exit status 0 (a result), 1 (an error, with a message on
stderr) or 2 (usage) -- never a signal, a sanitizer report or a hang.

usage: mutate_run.py KESTREL_BINARY [--runs N] [--seed S] [--timeout SECONDS]
                     [--shared DIR] [--keep DIR]

Five kinds of victim, N mutations each: the demo .param (text) and its .bin,
an ONNX model from ../shared, a .npy input, and a TFLite model (a fuzzing seed). Mutations: flipped bytes,
overwritten bytes, truncation, inserted or duplicated chunks, and for text
numbers replaced with extreme values and lines dropped or swapped. Failing
inputs are written to --keep (default: a temporary directory) to replay.
Standard library only.
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

EXTREME_NUMBERS = ["0", "-1", "1", "-233", "2147483647", "-2147483648", "4294967296",
                   "99999999999999999999", "1e38", "-1e38", "nan", "inf", "3.5", "65536", "7"]


def mutate_bytes(data, rng):
    data = bytearray(data)
    kind = rng.randrange(5)
    if not data:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
    if kind == 0:  # flip bits
        for _ in range(rng.randrange(1, 9)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == 1:  # overwrite a run with an interesting value
        at = rng.randrange(len(data))
        value = rng.choice([b"\x00" * 4, b"\xff" * 4, b"\x7f\xff\xff\xff", b"\x00\x00\x00\x80",
                            bytes(rng.randrange(256) for _ in range(4))])
        data[at:at + len(value)] = value
    elif kind == 2:  # truncate
        del data[rng.randrange(len(data)):]
    elif kind == 3:  # insert random bytes
        at = rng.randrange(len(data) + 1)
        data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    else:  # duplicate a chunk
        a = rng.randrange(len(data))
        b = min(len(data), a + rng.randrange(1, 256))
        at = rng.randrange(len(data) + 1)
        data[at:at] = data[a:b]
    return bytes(data)


def mutate_text(data, rng):
    text = data.decode("latin-1")
    kind = rng.randrange(4)
    if kind == 0:  # replace some numbers with extreme ones
        numbers = list(re.finditer(r"-?\d+(\.\d+)?(e[-+]?\d+)?", text))
        for _ in range(rng.randrange(1, 4)):
            if not numbers:
                break
            m = rng.choice(numbers)
            text = text[:m.start()] + rng.choice(EXTREME_NUMBERS) + text[m.end():]
            numbers = list(re.finditer(r"-?\d+(\.\d+)?(e[-+]?\d+)?", text))
    elif kind == 1:  # drop a line
        lines = text.split("\n")
        del lines[rng.randrange(len(lines))]
        text = "\n".join(lines)
    elif kind == 2:  # swap two lines
        lines = text.split("\n")
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        text = "\n".join(lines)
    else:
        return mutate_bytes(data, rng)
    return text.encode("latin-1")


def victims(repo, shared):
    """(name, files {role: path}, role to mutate, mutator, command builder)."""
    demo_param = os.path.join(repo, "models/demo/demo.param")
    demo_bin = os.path.join(repo, "models/demo/demo.bin")
    onnx = os.path.join(shared, "models/broadcasts/model.onnx")
    npy = os.path.join(shared, "models/broadcasts/input.npy")
    out = [
        ("param", {"param": demo_param, "bin": demo_bin}, "param", mutate_text,
         lambda f: ["run", f["param"], "--weights", f["bin"]]),
        ("bin", {"param": demo_param, "bin": demo_bin}, "bin", mutate_bytes,
         lambda f: ["run", f["param"], "--weights", f["bin"]]),
    ]
    if os.path.exists(onnx):
        out.append(("onnx", {"onnx": onnx}, "onnx", mutate_bytes, lambda f: ["run", f["onnx"]]))
        out.append(("npy", {"onnx": onnx, "npy": npy}, "npy", mutate_bytes,
                    lambda f: ["run", f["onnx"], "--input", "input=" + f["npy"]]))
    tflite = os.path.join(repo, "fuzz/corpus/tflite/fully_connected_after_conv.tflite")
    out.append(("tflite", {"tflite": tflite}, "tflite", mutate_bytes, lambda f: ["run", f["tflite"]]))
    return out


def bad_outcome(proc_returncode, stderr, timed_out):
    if timed_out:
        return "hang (timeout)"
    if proc_returncode < 0:
        return f"killed by signal {-proc_returncode}"
    if "Sanitizer" in stderr or "runtime error:" in stderr:
        return "sanitizer report"
    if proc_returncode not in (0, 1, 2):
        return f"exit status {proc_returncode}"
    if proc_returncode != 0 and not stderr.strip():
        return f"exit status {proc_returncode} without a message"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kestrel")
    ap.add_argument("--runs", type=int, default=100, help="mutations per victim")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--shared", default=None)
    ap.add_argument("--keep", default=None)
    args = ap.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shared = args.shared or os.path.join(repo, "..", "shared")
    keep = args.keep or tempfile.mkdtemp(prefix="kestrel_mutants_")
    work = tempfile.mkdtemp(prefix="kestrel_mutate_")
    rng = random.Random(args.seed)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    failures = 0
    counts = {}
    try:
        for name, files, role, mutate, command in victims(repo, shared):
            original = open(files[role], "rb").read()
            ext = os.path.splitext(files[role])[1]
            for i in range(args.runs):
                mutant = mutate(original, rng)
                for _ in range(rng.randrange(3)):  # sometimes stack mutations
                    mutant = mutate(mutant, rng)
                path = os.path.join(work, f"mutant{ext}")
                with open(path, "wb") as f:
                    f.write(mutant)
                run_files = dict(files, **{role: path})
                cmd = [args.kestrel] + command(run_files)
                try:
                    p = subprocess.run(cmd, capture_output=True, timeout=args.timeout, env=env)
                    code, err, timed_out = p.returncode, p.stderr.decode("utf-8", "replace"), False
                except subprocess.TimeoutExpired:
                    code, err, timed_out = 0, "", True
                counts.setdefault(name, {}).setdefault(code if not timed_out else "timeout", 0)
                counts[name][code if not timed_out else "timeout"] += 1
                problem = bad_outcome(code, err, timed_out)
                if problem:
                    failures += 1
                    saved = os.path.join(keep, f"{name}-{i}{ext}")
                    shutil.copy(path, saved)
                    print(f"FAIL {name} #{i}: {problem}; input kept as {saved}\n{err[-2000:]}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, c in counts.items():
        print(f"{name}: {sum(c.values())} mutants, exit statuses {dict(sorted(c.items(), key=str))}")
    if failures:
        print(f"{failures} mutant(s) did not end cleanly", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
