#!/usr/bin/env bash
# On the GPU machine: build the harness and every variant in .gpu/exp, run them (results to $OUT).
# The `timeline` variant also leaves its per-tile records in $OUT/timeline_<log2n>.bin
# (read them with timeline.py). TILE and DYN: tile items and dynamic shared memory of the
# variants (the `dynamic` ones need DYN).
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp}"
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/harness bench/experiments/harness.cu -lcuda || exit 1
ls .gpu/exp/*.cu | xargs -P 16 -I{} sh -c 'nvcc -cubin -arch=sm_90 -std=c++17 -o "${1%.cu}.cubin" "$1" 2>&1 | grep -v "^$" | head -5' _ {}
run() { # cubin op log2n threads tile dyn [persistent]
  /tmp/harness "$@" 2>&1 | tee -a "$out/exp.txt"
}
for log2n in ${LOG2NS:-28}; do
  for v in ${VARIANTS:-base}; do
    if [[ "$v" == deferred* || "$v" == pf* ]]; then
      for lag in ${LAGS:-256}; do LAG=$lag run .gpu/exp/add_$v.cubin add $log2n 128 ${TILE:-8192} ${DYN:-0}; done
    elif [ "$v" = timeline ]; then
      TIMELINE="$out/timeline_$log2n.bin" run .gpu/exp/add_$v.cubin add $log2n 128 8192 0
    else
      run .gpu/exp/add_$v.cubin add $log2n 128 ${TILE:-8192} ${DYN:-0}
    fi
  done
done
