#!/usr/bin/env bash
# On the GPU machine: build the harness and every variant in .gpu/exp, run them (results to $OUT).
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp}"
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/harness bench/experiments/harness.cu -lcuda || exit 1
ls .gpu/exp/*.cu | xargs -P 16 -I{} sh -c 'nvcc -cubin -arch=sm_90 -std=c++17 -o "${1%.cu}.cubin" "$1" 2>&1 | grep -v "^$" | head -5' _ {}
run() { # cubin op log2n threads tile dyn [persistent]
  /tmp/harness "$@" 2>&1 | tee -a "$out/exp.txt"
}
for log2n in ${LOG2NS:-28}; do
  for op in add max; do
    run .gpu/exp/${op}_base.cubin $op $log2n 128 8192 0
    run .gpu/exp/${op}_base_lb6.cubin $op $log2n 128 8192 0
    run .gpu/exp/${op}_persist.cubin $op $log2n 128 8192 0 -1
    run .gpu/exp/${op}_persist_lb3.cubin $op $log2n 128 8192 0 -1
    run .gpu/exp/${op}_pasync.cubin $op $log2n 128 8192 67700 -1
    run .gpu/exp/${op}_pasync.cubin $op $log2n 128 8192 67700 0
    run .gpu/exp/${op}_pasync_lb3.cubin $op $log2n 128 8192 67700 -1
    run .gpu/exp/${op}_pasync_128x32.cubin $op $log2n 128 4096 33900 -1
    run .gpu/exp/${op}_pasync_128x32_lb6.cubin $op $log2n 128 4096 33900 -1
    run .gpu/exp/${op}_pasync_128x16_lb8.cubin $op $log2n 128 2048 17000 -1
  done
done
