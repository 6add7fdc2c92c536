#!/usr/bin/env python3
"""Layers that only look down: reads every `#include "..."` line under src/
and fails when a file includes something its layer may not see.

The layers, from the bottom (docs/architecture.md, "Layers"):
  core      tensors, dtypes, the thread pool, CPU features
  kernels   the optimized loops per ISA
  graph     the IR and the optimizer (asks ops through graph/layer_traits.h)
  ops       the layers (src/ops/<family>/)
  runtime   Net, the op registry, Session (reaches ops through ops/registry.h)
  backend   devices (Vulkan), behind runtime/device_backend.h
  frontend  one folder per model format over frontend/common/
  faces     image, quantize, capi (tools/ and python/ are not checked)

Usage: check_layers.py [REPO_ROOT]   (exit 1 and one line per violation)
       check_layers.py --self-test  (the checker on a made-up tree)
"""
import os
import re
import sys

# The public headers every layer may include, and those only the op level and
# above may (the op interface, the Net, the faces' APIs).
VALUE_HEADERS = {"kestrel/error.h", "kestrel/tensor.h", "kestrel/param_dict.h", "kestrel/npy.h",
                 "kestrel/parallel.h", "kestrel/options.h", "kestrel/weights.h"}
OP_INTERFACE = {"kestrel/op.h"}
ALL_PUBLIC = "kestrel/"

# Layer -> what it may include: folder prefixes, exact headers.
RULES = {
    "core": ["core/"] + sorted(VALUE_HEADERS),
    "kernels": ["core/", "kernels/"] + sorted(VALUE_HEADERS),
    "graph": ["core/", "graph/"] + sorted(VALUE_HEADERS | OP_INTERFACE),
    "ops": ["core/", "kernels/", "graph/layer_traits.h", "ops/", ALL_PUBLIC],
    "runtime": ["core/", "kernels/", "graph/", "runtime/", "ops/registry.h", ALL_PUBLIC],
    "backend": ["core/", "kernels/", "ops/", "runtime/device_backend.h", "backend/", ALL_PUBLIC],
    "frontend/common": ["core/", "graph/", "ops/", "runtime/", "frontend/common/", ALL_PUBLIC],
    "image": ["core/", "kernels/", "ops/", "image/", ALL_PUBLIC],
    "quantize": ["core/", "kernels/", "graph/", "ops/", "runtime/", "frontend/", "quantize/", ALL_PUBLIC],
    "capi": ["core/", "graph/", "runtime/", "frontend/", "capi/", ALL_PUBLIC],
}

# Named exceptions, each with its reason.
EXCEPTIONS = {
    # If/Loop/Scan carry sub-networks: a Net inside a layer, run through the public API.
    "ops/control/": ["kestrel/net.h", "graph/graph.h", "runtime/analysis.h"],
}


def layer_of(rel):
    """The layer of src/<rel>, and the rules that apply to it."""
    parts = rel.split("/")
    if parts[0] == "frontend":
        if len(parts) == 2:  # the wing's entry point: every format's front-end
            return "frontend", RULES["frontend/common"] + ["frontend/"]
        if parts[1] == "common":
            return "frontend/common", RULES["frontend/common"]
        # A format's front-end: its own folder and the common toolkit, never another format.
        own = "frontend/%s/" % parts[1]
        return "frontend/" + parts[1], RULES["frontend/common"][:-2] + ["frontend/common/", own, ALL_PUBLIC]
    return parts[0], RULES.get(parts[0])


def allowed(rel, header, rules):
    if any(header == r or (r.endswith("/") and header.startswith(r)) for r in rules):
        # Public headers: core and kernels see only the value ones (listed exactly).
        return not (header.startswith(ALL_PUBLIC) and ALL_PUBLIC not in rules and header not in rules)
    return any(rel.startswith(prefix) and header in extra for prefix, extra in EXCEPTIONS.items())


def violations(root):
    src = os.path.join(root, "src")
    found = []
    for dirpath, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".h", ".cpp")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, src).replace(os.sep, "/")
            layer, rules = layer_of(rel)
            if rules is None:
                found.append("src/%s: in no known layer (add its folder to scripts/check_layers.py)" % rel)
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    header = m.group(1)
                    # Generated files of the build (SPIR-V, protobuf) and the backend's own shaders.
                    if "/" not in header or header.startswith(("onnx/", "google/")):
                        continue
                    if not allowed(rel, header, rules):
                        found.append("src/%s:%d: the %s layer includes \"%s\"" % (rel, number, layer, header))
    return found


def self_test():
    """The checker on a made-up tree: each kind of upward include is caught, the allowed ones are not."""
    import tempfile
    cases = {
        "core/a.cpp": ('#include "kestrel/op.h"\n#include "core/b.h"\n#include "kestrel/tensor.h"\n', 1),
        "kernels/k.cpp": ('#include "kestrel/image.h"\n#include "core/b.h"\n', 1),
        "graph/g.cpp": ('#include "ops/conv/conv_params.h"\n#include "runtime/session_impl.h"\n#include "kestrel/op.h"\n', 2),
        "ops/x/y.cpp": ('#include "runtime/plan.h"\n#include "graph/layer_traits.h"\n#include "kernels/gemm.h"\n', 1),
        "ops/control/if.cpp": ('#include "kestrel/net.h"\n', 0),
        "runtime/s.cpp": ('#include "ops/conv/convolution.h"\n#include "ops/registry.h"\n', 1),
        "frontend/onnx/c.cpp": ('#include "frontend/ncnn/param.h"\n#include "frontend/common/graph_builder.h"\n', 1),
        "frontend/common/t.cpp": ('#include "frontend/onnx/converter.h"\n', 1),
        "frontend/model_file.cpp": ('#include "frontend/ncnn/model_loader.h"\n', 0),
        "newlayer/z.cpp": ("", 1),
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, (text, _) in cases.items():
            path = os.path.join(root, "src", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        found = violations(root)
    ok = True
    for rel, (_, want) in cases.items():
        got = sum(1 for v in found if v.startswith("src/%s:" % rel))
        if got != want:
            print("self-test: src/%s: %d violation(s) found, %d expected" % (rel, got, want))
            ok = False
    print("self-test: %s" % ("the checker catches what it should" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    found = violations(root)
    for v in found:
        print(v)
    if found:
        print("%d include(s) reach up a layer (docs/architecture.md, \"Layers\")" % len(found))
        return 1
    print("layers: every include looks down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
