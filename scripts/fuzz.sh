#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each one for a
# bounded time (FUZZ_SECONDS, default 60) from the seeds in fuzz/corpus, JOBS
# (default: the core count) targets at a time.
# Fails on any crash, leak, sanitizer report, or an input taking over 1 s.
# FUZZ_TARGETS="fuzz_npy fuzz_onnx" limits the set; FUZZ_RUNS=N runs N inputs instead.
# FUZZ_CORPUS_DIR=DIR keeps each target's grown corpus in DIR/<target> across runs
# (long campaigns); by default a temporary directory is used and dropped.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
jobs=${JOBS:-$(nproc)}
# FUZZ_BUILD_DIR reuses another clang build configured with -DKESTREL_FUZZ=ON
# (scripts/test-sanitizers.sh shares its sanitizer build this way).
build=${FUZZ_BUILD_DIR:-build-fuzz}
if [ ! -f "$build/CMakeCache.txt" ]; then
  CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKESTREL_FUZZ=ON -DKESTREL_BUILD_TESTS=OFF >/dev/null
fi
targets=${FUZZ_TARGETS:-$(ls fuzz/fuzz_*.cpp | xargs -n1 basename | sed 's/\.cpp$//')}
cmake --build "$build" -j"$jobs" --target $targets
mkdir -p "$build/artifacts"
# Runs one target; prints its summary (or its log's tail on failure).
fuzz_one() {
  local t=$1
  local seeds=fuzz/corpus/${t#fuzz_} work extra=() extra_dir="" budget runs
  if [ -n "${FUZZ_CORPUS_DIR:-}" ]; then
    work=$FUZZ_CORPUS_DIR/$t; mkdir -p "$work"
  else
    work=$(mktemp -d)
  fi
  if [ "$t" = fuzz_onnx ] && [ -d /usr/share/libonnx-testdata/data/node ]; then
    # ONNX's own conformance models make good extra seeds (read-only, not copied into the repo).
    extra_dir=$(mktemp -d)
    local i=0 m
    for m in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
      i=$((i + 1)); [ $((i % 4)) -eq 0 ] && cp "$m" "$extra_dir/$i.onnx"
    done
    extra=("$extra_dir")
  fi
  budget=(-max_total_time="$seconds" -seed="${FUZZ_SEED:-1}")
  [ -n "${FUZZ_RUNS:-}" ] && budget=(-runs="$FUZZ_RUNS" -seed="${FUZZ_SEED:-1}")
  # FUZZ_CI=1: a fixed number of inputs per target (about a minute each on one
  # core) with a fixed seed, so CI replays exactly the inputs that were
  # checked before merging instead of whatever a minute reaches on its machine.
  if [ "${FUZZ_CI:-0}" = 1 ]; then
    case $t in
      fuzz_npy) runs=3000000 ;; fuzz_expression) runs=1000000 ;; fuzz_param_bin) runs=900000 ;;
      fuzz_model_bin) runs=200000 ;; fuzz_param_text) runs=85000 ;; fuzz_run_graph) runs=80000 ;;
      fuzz_tflite) runs=150000 ;;
      *) runs=40000 ;;
    esac
    budget=(-runs="$runs" -seed="${FUZZ_SEED:-1}")
  fi
  local ok=0
  "$build/fuzz/$t" "${budget[@]}" -timeout=1 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t-" "$work" "$seeds" "${extra[@]}" 2>"$build/$t.log" || ok=1
  # One write per target, so that the reports of targets running side by side stay whole.
  local report
  if [ $ok = 0 ]; then
    report="== $t (${budget[*]})"$'\n'$(grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/$t.log" || true)
  else
    report="FAILED: $t (${budget[*]}; log: $build/$t.log)"$'\n'$(tail -40 "$build/$t.log")
  fi
  printf '%s\n' "$report"
  [ -n "${FUZZ_CORPUS_DIR:-}" ] || rm -rf "$work"
  [ -z "$extra_dir" ] || rm -rf "$extra_dir"
  return $ok
}

# The targets run $jobs at a time (each is single-threaded); each one's inputs
# are fixed by its seed and budget, so running them side by side changes nothing.
status=0
running=0
for t in $targets; do
  [ -x "$build/fuzz/$t" ] || { echo "skipping $t (not built)"; continue; }
  if [ $running -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
while [ $running -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
