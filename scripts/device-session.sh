#!/usr/bin/env bash
# Runs on the GPU machine, in a copy of the repository with .gpu/ (scripts/build-gpu-bundle.sh)
# carried along: the whole GPU suite, sanitizers, the law checker, `scangen bench` and the CUB
# baseline, in one go. Results go to $OUT (or ./device-out).
#   scripts/device-session.sh [suite] [sanitize] [bench] [cub] [sizes] [cub-sizes] [cold]
#   (default: the first four)
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/device-out}"
mkdir -p "$out"
steps="${*:-suite sanitize bench cub}"
has() { [[ " $steps " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
tool=.gpu/bin/tools/scangen

if has suite; then
  .gpu/run-all.sh 2>&1 | tee "$out/suite.log" | grep -E "^(=== |gpu suite|test result|run-all|.*FAILED|.*panicked)" 
fi

if has sanitize; then
  # Small and medium sizes, every algorithm: the non-commutative struct test and the examples;
  # then CUDA graph replays.
  export SCANGEN_CACHE_DIR="$PWD/.gpu/cache" SCANGEN_REQUIRE_NVRTC=1
  for t in memcheck racecheck synccheck initcheck; do
    echo "=== compute-sanitizer --tool $t" | tee -a "$out/sanitize.log"
    timeout 120 compute-sanitizer --tool "$t" --error-exitcode 9 \
      .gpu/bin/tests/gpu_suite --include-ignored --test-threads=1 sanitizer_smoke \
      >>"$out/sanitize.log" 2>&1
    echo "exit $? ($t)" | tee -a "$out/sanitize.log"
    # Graph replays: captured scans replayed across the epoch wrap, and two scanners in one graph.
    echo "=== compute-sanitizer --tool $t (graph replays)" | tee -a "$out/sanitize.log"
    SCANGEN_GRAPH_REPLAYS=8 timeout 240 compute-sanitizer --tool "$t" --error-exitcode 9 \
      .gpu/bin/tests/graphs --include-ignored --test-threads=1 epoch_wrap two_scans \
      >>"$out/sanitize.log" 2>&1
    echo "exit $? ($t, graphs)" | tee -a "$out/sanitize.log"
    grep -E "ERROR SUMMARY|========= (Invalid|Race|Barrier|Uninitialized)" "$out/sanitize.log" | tail -3
  done
fi

if has bench; then
  "$tool" bench --op add,max,affine --type i32,f32,i64,f64 \
    --json "$out/bench.json" --plot "$out/bench.svg" 2>/dev/null | tee "$out/bench.md"
fi

if has cub; then
  nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_scan .gpu/cub/cub_scan.cu && /tmp/cub_scan | tee "$out/cub.txt"
fi

if has sizes; then
  # Element sizes 1 to 32 bytes x inputs 2^16 to 2^30 (issue 16's table).
  "$tool" bench --element-sizes --json "$out/element-sizes.json" 2>/dev/null | tee "$out/element-sizes.md"
fi

if has cub-sizes; then
  nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_scan_sizes .gpu/peers/cub_scan_sizes.cu && /tmp/cub_scan_sizes | tee "$out/cub-sizes.txt"
fi

if has cold; then
  # A fresh process to its first scan result: empty kernel cache, then the warm disk cache.
  "$tool" bench --cold-start --op add,affine,mat2 --type i32 2>&1 | tee "$out/cold-start.md"
fi
