#!/usr/bin/env bash
# Builds the GPU test executables (and any extra GPU binaries) in release mode and packs them
# into .gpu/, runnable on a machine with the NVIDIA driver and NVRTC but no Rust toolchain:
#
#   scripts/build-gpu-bundle.sh          # here: build .gpu/
#   SCANGEN_BUNDLE_ONLY="variants graphs" scripts/build-gpu-bundle.sh   # only those tests
#   .gpu/run-all.sh                      # there: run everything, print a summary
#   SCANGEN_BUNDLE_BASE=HEAD~3 scripts/build-gpu-bundle.sh  # also the scangen CLI at that
#                                        # revision, as .gpu/bin/base/scangen, to time beside
#                                        # this build in the same device call
#
# The executables are self-contained: cudarc dlopens libcuda.so.1 and libnvrtc at run time.
# run-all.sh finds NVRTC even when only libnvrtc.so.13 exists (cudarc built for CUDA 12 looks
# for libnvrtc.so / libnvrtc.so.12) by linking it as libnvrtc.so in a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
bundle="$root/.gpu"

# Test executables, as cargo arguments; each runs with --include-ignored --test-threads=1
# --nocapture (GPU tests are #[ignore]d so that machines without a GPU skip them).
GPU_TESTS=(
  "-p scangen-runtime --test gpu_suite"
  "-p scangen-runtime --test graphs"
  "-p scangen-runtime --test seeded"
  "-p scangen-runtime --test variants"
  "-p scangen-runtime --test columns"
  "-p scangen-runtime --test graph_variants"
  "-p scangen-runtime --test compile_generated"
  "-p scangen-runtime --test error_paths"
  "-p scangen-runtime --test soak"
  "-p scangen-cli --test gpu_examples"
  "-p scangen-cli --test gpu_operator_language"
  "-p scangen-cli --test fused"
  "-p scangen-cli --test gpu_file_ops"
  # Sharded scans: thread ranks on one GPU, and NCCL over every GPU (skipped without libnccl
  # unless SCANGEN_REQUIRE_NCCL=1).
  "-p scangen-runtime --features nccl --test gpu_sharded"
)
# Other executables (benchmarks, examples): "cargo build arguments|arguments to run it with".
# Example: "--bin scangen|bench --quick"
GPU_BINARIES=(
  "--bin scangen|check --op add --type i32"
)
# Extra entries from the environment, newline-separated, same formats.
# SCANGEN_BUNDLE_CANDLE=1 adds scangen-candle's CUDA tests and its bench beside candle's cumsum
# (`cuda` feature: needs nvcc and link stubs, which `. scripts/candle-cuda-env.sh` provides; a cold
# release build of candle takes a while). The executables link the CUDA libraries (candle's mode);
# run-all.sh finds them with cuda-libs-env.sh.
if [ "${SCANGEN_BUNDLE_CANDLE:-0}" = 1 ]; then
  # shellcheck source=candle-cuda-env.sh
  . scripts/candle-cuda-env.sh
  GPU_TESTS+=("-p scangen-candle --features cuda --test gpu")
  GPU_BINARIES+=("-p scangen-candle --features cuda --example bench|--cuda")
fi
if [ -n "${SCANGEN_BUNDLE_TESTS:-}" ]; then mapfile -t -O "${#GPU_TESTS[@]}" GPU_TESTS <<<"$SCANGEN_BUNDLE_TESTS"; fi
if [ -n "${SCANGEN_BUNDLE_BINARIES:-}" ]; then mapfile -t -O "${#GPU_BINARIES[@]}" GPU_BINARIES <<<"$SCANGEN_BUNDLE_BINARIES"; fi
# SCANGEN_BUNDLE_ONLY="variants gpu_suite": build only the test executables with those names
# (all of them together outgrow what the device tool carries; one run rarely needs them all).
if [ -n "${SCANGEN_BUNDLE_ONLY:-}" ]; then
  selected=()
  for args in "${GPU_TESTS[@]}"; do
    name="${args##*--test }"
    for want in $SCANGEN_BUNDLE_ONLY; do
      [ "$name" = "$want" ] && selected+=("$args")
    done
  done
  [ "${#selected[@]}" -gt 0 ] || { echo "SCANGEN_BUNDLE_ONLY matches no test: $SCANGEN_BUNDLE_ONLY" >&2; exit 1; }
  GPU_TESTS=("${selected[@]}")
fi

# Prints the executables a cargo --message-format=json build produced; with "test", only test
# harnesses (`cargo test --no-run -p P --test T` also builds P's binaries for CARGO_BIN_EXE_*).
executables() {
  python3 -c '
import json, sys
tests_only = len(sys.argv) > 1 and sys.argv[1] == "test"
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
        continue
    if tests_only and not msg.get("profile", {}).get("test"):
        continue
    print(msg["executable"])
' "$@"
}

# Debug info is most of an executable's size (35 MiB -> 7 MiB); symbols stay, so backtraces
# still name functions. SCANGEN_BUNDLE_KEEP_DEBUG=1 keeps it.
shrink() {
  if [ "${SCANGEN_BUNDLE_KEEP_DEBUG:-0}" != 1 ] && command -v strip >/dev/null 2>&1; then
    strip --strip-debug "$1"
  fi
  # Executables over 1 MiB travel gzipped (a third of their size; scangen-candle's 44 MiB, 32 of
  # them candle's kernels, become about 12 MiB), so that more of them fit in what the device tool
  # carries; run-all.sh unpacks them.
  if [ "$(stat -c %s "$1")" -gt $((1 << 20)) ]; then
    gzip -9 -f "$1"
  fi
}

rm -rf "$bundle"
mkdir -p "$bundle/bin/tests" "$bundle/bin/tools"
: >"$bundle/tools.list"

for args in "${GPU_TESTS[@]}"; do
  [ -n "$args" ] || continue
  echo "building tests: cargo test --release --no-run $args" >&2
  # shellcheck disable=SC2086
  exes=$(cargo test --release --no-run --message-format=json $args | executables test)
  [ -n "$exes" ] || { echo "no test executable from: $args" >&2; exit 1; }
  for exe in $exes; do
    # Drop cargo's hash suffix: gpu_suite-0123abcd -> gpu_suite.
    name=$(basename "$exe" | sed -E 's/-[0-9a-f]{16}$//')
    cp "$exe" "$bundle/bin/tests/$name"
    shrink "$bundle/bin/tests/$name"
  done
done

for entry in "${GPU_BINARIES[@]}"; do
  [ -n "$entry" ] || continue
  build_args=${entry%%|*}
  run_args=""
  [[ "$entry" == *"|"* ]] && run_args=${entry#*|}
  echo "building: cargo build --release $build_args" >&2
  # shellcheck disable=SC2086
  exes=$(cargo build --release --message-format=json $build_args | executables)
  [ -n "$exes" ] || { echo "no executable from: $build_args" >&2; exit 1; }
  for exe in $exes; do
    name=$(basename "$exe")
    cp "$exe" "$bundle/bin/tools/$name"
    shrink "$bundle/bin/tools/$name"
    printf '%s\t%s\n' "$name" "$run_args" >>"$bundle/tools.list"
  done
done

# The scangen CLI at another revision (SCANGEN_BUNDLE_BASE), for A/B timings in one device call:
# built in a detached worktree with its own target directory (a shared one would overwrite this
# checkout's artifacts with the other revision's), then removed.
if [ -n "${SCANGEN_BUNDLE_BASE:-}" ]; then
  base_dir="$root/target/bundle-base"
  base_tree="$base_dir/tree"
  rev=$(git rev-parse --verify "$SCANGEN_BUNDLE_BASE^{commit}")
  git worktree remove --force "$base_tree" 2>/dev/null || rm -rf "$base_tree"
  git worktree prune
  echo "building the base CLI at $rev (SCANGEN_BUNDLE_BASE=$SCANGEN_BUNDLE_BASE)" >&2
  git worktree add --detach --quiet "$base_tree" "$rev"
  (cd "$base_tree" && CARGO_TARGET_DIR="$base_dir/target" cargo build --release --quiet --bin scangen)
  mkdir -p "$bundle/bin/base"
  cp "$base_dir/target/release/scangen" "$bundle/bin/base/scangen"
  shrink "$bundle/bin/base/scangen"
  printf '%s\n' "$rev" >"$bundle/bin/base/REVISION"
  git worktree remove --force "$base_tree"
fi

# The CUB baseline source (built there with nvcc, beside `scangen bench`), when shared/ is here.
# Peers of `scangen bench --variants` (CUB by key, torch/cupy rows), compiled/run there.
mkdir -p "$bundle/peers" && find "$root/bench/peers" -maxdepth 1 -type f -exec cp {} "$bundle/peers/" \;
# Finds the CUDA libraries executables linked against them (scangen-candle's) need there.
cp "$root/scripts/cuda-libs-env.sh" "$bundle/"
for cub in "$root/../shared/bench/cub_scan.cu" "$root/shared/bench/cub_scan.cu"; do
  if [ -f "$cub" ]; then
    mkdir -p "$bundle/cub" && cp "$cub" "$bundle/cub/"
    break
  fi
done

cat >"$bundle/env.sh" <<'ENVSH'
# Source this on the GPU machine (run-all.sh and scripts/device-session.sh do): finds NVRTC, NCCL
# and the CUDA libraries the bundle's executables load, links them under the names cudarc asks
# for, and sets the variables the tests read. No Rust toolchain needed.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Large executables came gzipped (build-gpu-bundle.sh's shrink). Unpacked first: the variables
# below point at them (SCANGEN_BIN is set only where the CLI is there, executable).
for gz in "$here"/bin/tests/*.gz "$here"/bin/tools/*.gz "$here"/bin/base/*.gz; do
  [ -e "$gz" ] && gunzip -f "$gz" && chmod +x "${gz%.gz}"
done
# --- Find NVRTC -------------------------------------------------------------------------------
# cudarc (built for CUDA 12) dlopens libnvrtc.so, libnvrtc.so.12, ...: not libnvrtc.so.13.
find_nvrtc() {
  local candidates=()
  if command -v ldconfig >/dev/null 2>&1; then
    while read -r path; do candidates+=("$path"); done < <(ldconfig -p 2>/dev/null | awk '/libnvrtc\.so/ && !/builtins/ {print $NF}')
  fi
  local dirs=("${CUDA_HOME:-/nonexistent}/lib64" /usr/local/cuda/lib64 /usr/local/cuda*/lib64
              /usr/local/cuda*/targets/*/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /opt/cuda/lib64)
  IFS=: read -r -a ld_dirs <<<"${LD_LIBRARY_PATH:-}"
  dirs+=("${ld_dirs[@]}")
  if command -v python3 >/dev/null 2>&1; then
    while read -r d; do dirs+=("$d"); done < <(python3 - <<'PY' 2>/dev/null
import site, sys, glob, os
roots = set(site.getsitepackages() + [site.getusersitepackages()] + sys.path)
for r in roots:
    for sub in ("nvidia/cuda_nvrtc/lib", "nvidia/cu13/lib", "nvidia/cu12/lib"):
        p = os.path.join(r, sub)
        if os.path.isdir(p):
            print(p)
PY
)
  fi
  for d in "${dirs[@]}"; do
    [ -d "$d" ] || continue
    for f in "$d"/libnvrtc.so*; do
      [ -e "$f" ] && [[ "$f" != *builtins* ]] && candidates+=("$f")
    done
  done
  # Prefer the newest major version (the number after "libnvrtc.so."; none sorts last).
  printf '%s\n' "${candidates[@]}" | awk 'NF {
      v = 0; if (match($0, /libnvrtc\.so\.[0-9]+/)) v = substr($0, RSTART + 12, RLENGTH - 12) + 0
      print v "\t" $0 }' | sort -k1,1nr | head -n 1 | cut -f2
}

nvrtc="$(find_nvrtc || true)"
if [ -z "$nvrtc" ]; then
  echo "run-all: libnvrtc not found (set CUDA_HOME or LD_LIBRARY_PATH to the CUDA lib directory)" >&2
else
  nvrtc_dir="$(dirname "$(readlink -f "$nvrtc")")"
  # A fixed directory inside the bundle (not a temporary one), so that every later step of
  # a session that sources this file finds it.
  shim="$here/shim"
  rm -rf "$shim" && mkdir -p "$shim"
  # A libnvrtc.so cudarc will find, pointing at whatever version is installed; the real
  # directory follows on the path for libnvrtc-builtins.
  ln -s "$(readlink -f "$nvrtc")" "$shim/libnvrtc.so"
  export LD_LIBRARY_PATH="$shim:$nvrtc_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "run-all: NVRTC $(readlink -f "$nvrtc")"
fi
# --- Find NCCL (sharded scans) ------------------------------------------------------------------
# cudarc dlopens libnccl.so (not libnccl.so.2, the name in the nvidia-nccl wheel): link it in the
# shim directory. NVLink multicast stays off on shared machines.
export NCCL_NVLS_ENABLE=0
if [ -n "${shim:-}" ] && command -v python3 >/dev/null 2>&1; then
  nccl="$(python3 - <<'PY' 2>/dev/null
import glob, os, site, sys
roots = set(site.getsitepackages() + [site.getusersitepackages()] + sys.path)
for r in sorted(roots):
    for f in sorted(glob.glob(os.path.join(r, "nvidia", "nccl", "lib", "libnccl.so*"))):
        print(f); raise SystemExit
PY
)"
  if [ -n "$nccl" ]; then
    ln -sf "$(readlink -f "$nccl")" "$shim/libnccl.so"
    echo "run-all: NCCL $(readlink -f "$nccl")"
  fi
fi
# --- Linked CUDA libraries (scangen-candle's executables) ---------------------------------------
# They link libcublas.so, libcurand.so, ... by unversioned names: cuda-libs-env.sh links those in
# the shim directory to the libraries it finds (torch's nvidia-* wheels) and appends it to the path.
if [ -f "$here/cuda-libs-env.sh" ] && [ -n "${shim:-}" ]; then
  SCANGEN_CUDA_SHIM="$shim" . "$here/cuda-libs-env.sh"
fi
export SCANGEN_CACHE_DIR="${SCANGEN_CACHE_DIR:-$here/cache}"
# NVRTC tests must not skip here.
export SCANGEN_REQUIRE_NVRTC=1
# Tests that run the CLI (gpu_file_ops) find this bundle's scangen here, not at the build
# machine's path cargo compiled into them.
[ -x "$here/bin/tools/scangen" ] && export SCANGEN_BIN="$here/bin/tools/scangen"
# The base revision's CLI (SCANGEN_BUNDLE_BASE), for timings beside this build.
[ -x "$here/bin/base/scangen" ] && export SCANGEN_BASE_BIN="$here/bin/base/scangen"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

ENVSH
cat >"$bundle/run-all.sh" <<'RUNALL'
#!/usr/bin/env bash
# Runs every test executable of this bundle (with --include-ignored: GPU tests are ignored by
# default, and fail here, loudly, if the GPU or NVRTC is missing) and every
# extra tool, then prints one summary. Needs the NVIDIA driver and NVRTC; no Rust toolchain.
#   SCANGEN_RUN_ONLY="fused gpu_file_ops"  only these test executables (default: all)
#   SCANGEN_RUN_TIMEOUT=300                 seconds each executable may run (default: no limit)
#   SCANGEN_RUN_TOOLS=0                     skip the extra tools
#   SCANGEN_RUN_JOBS=4                      run that many executables side by side (NVRTC
#                                           compiles, on the CPU, are most of a run's time)
#   SCANGEN_RUN_ARGS_gpu_suite="packed"     extra arguments (a test filter) for one executable
#   SCANGEN_RUN_GROUPS=$'gpu_suite a b\ngpu_suite c'
#                                           instead of each executable once, these groups (one
#                                           a line: EXECUTABLE [TEST FILTERS...]), each its own
#                                           process and kernel cache, all side by side unless
#                                           SCANGEN_RUN_JOBS says fewer; logs NAME.N.log
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=/dev/null
. "$here/env.sh"

# --- Run ----------------------------------------------------------------------------------------
status=0
results=()
log_dir="$here/logs"
mkdir -p "$log_dir"
# Groups of one executable's tests run as their own processes (a whole gpu_suite outlasts one
# device call); each group's kernel cache is its own, so no two processes write one cache.
groups=()
while IFS= read -r group; do
  [ -n "$group" ] && groups+=("$group")
done <<<"${SCANGEN_RUN_GROUPS:-}"
jobs_max="${SCANGEN_RUN_JOBS:-$([ "${#groups[@]}" -gt 0 ] && echo "${#groups[@]}" || echo 1)}"
# Runs one test executable as the run NAME; its log, exit status and seconds go to
# $log_dir/NAME.{log,rc}.
run_test() {
  local name="$1" exe="$2"
  shift 2
  local extra_var="SCANGEN_RUN_ARGS_$(basename "$exe")" extra=()
  # shellcheck disable=SC2206
  [ -n "${!extra_var:-}" ] && extra=(${!extra_var})
  local limit=()
  [ -n "${SCANGEN_RUN_TIMEOUT:-}" ] && limit=(timeout "$SCANGEN_RUN_TIMEOUT")
  local start rc
  start=$(date +%s)
  if [ "$jobs_max" -gt 1 ]; then
    # Side by side: each log stays whole in its file; the summary names where it is.
    "${limit[@]}" "$exe" --include-ignored --test-threads=1 --nocapture "$@" "${extra[@]}" >"$log_dir/$name.log" 2>&1
    rc=$?
  else
    "${limit[@]}" "$exe" --include-ignored --test-threads=1 --nocapture "$@" "${extra[@]}" 2>&1 | tee "$log_dir/$name.log"
    rc=${PIPESTATUS[0]}
  fi
  echo "$rc $(( $(date +%s) - start ))" >"$log_dir/$name.rc"
  [ "$jobs_max" -gt 1 ] && echo "=== $name done: exit $rc"
  return 0
}
# Starts the run NAME of EXE with ARGS, side by side or in turn (SCANGEN_RUN_JOBS).
start_test() {
  names+=("$1")
  echo "=== $1 (${*:3})"
  if [ "$jobs_max" -gt 1 ]; then
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    run_test "$@" &
  else
    run_test "$@"
  fi
}
names=()
if [ "${#groups[@]}" -gt 0 ]; then
  for i in "${!groups[@]}"; do
    read -r -a group <<<"${groups[$i]}"
    SCANGEN_CACHE_DIR="$log_dir/cache.$((i + 1))" \
      start_test "${group[0]}.$((i + 1))" "$here/bin/tests/${group[0]}" "${group[@]:1}" "$@"
  done
else
  for exe in "$here"/bin/tests/*; do
    [ -x "$exe" ] || continue
    name="$(basename "$exe")"
    if [ -n "${SCANGEN_RUN_ONLY:-}" ] && [[ " $SCANGEN_RUN_ONLY " != *" $name "* ]]; then continue; fi
    start_test "$name" "$exe" "$@"
  done
fi
wait
for name in "${names[@]}"; do
  read -r rc secs <"$log_dir/$name.rc" || { rc=1; secs=0; }
  [ "$rc" -eq 0 ] || status=1
  results+=("$name: $([ "$rc" -eq 0 ] && echo ok || echo "FAILED (exit $rc)") in ${secs}s")
done
while IFS=$'\t' read -r name args; do
  [ -n "$name" ] || continue
  [ "${SCANGEN_RUN_TOOLS:-1}" = 0 ] && continue
  echo "=== $name $args"
  # shellcheck disable=SC2086
  "$here/bin/tools/$name" $args 2>&1 | tee "$log_dir/$name.log"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || status=1
  results+=("$name: $([ "$rc" -eq 0 ] && echo ok || echo "FAILED (exit $rc)")")
done <"$here/tools.list"

echo
echo "=== summary"
grep -h "^gpu suite (" "$log_dir"/*.log 2>/dev/null
# Each executable's verdict, and the tests that failed (the logs have the rest).
for name in "${names[@]}"; do
  grep -H -E "^test result|^    [a-z_:0-9]+$|panicked" "$log_dir/$name.log" 2>/dev/null | sed "s|^$log_dir/||" | head -20
done
printf '%s\n' "${results[@]}"
[ "$status" -eq 0 ] && echo "run-all: all passed" || echo "run-all: FAILURES (logs in $log_dir)"
exit "$status"
RUNALL
chmod +x "$bundle/run-all.sh"

size=$(du -sm "$bundle" | cut -f1)
echo "bundle: $bundle (${size} MiB)" >&2
ls -la "$bundle/bin/tests" "$bundle/bin/tools" >&2
# The device tool carries at most 64 MiB, the working tree (about 6 MiB) included.
if [ "$size" -ge 58 ]; then
  echo "bundle is ${size} MiB, over the 58 MiB limit (64 MiB carried, tree included)" >&2
  exit 1
fi
