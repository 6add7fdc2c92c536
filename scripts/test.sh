#!/usr/bin/env bash
# The everyday test command: builds Kestrel (optimized) and runs the whole
# test suite, including the ONNX conformance run. Exits non-zero on any failure.
# CI then adds the sanitizer stages: scripts/test-sanitizers.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
