#!/usr/bin/env bash
# Source this (`. scripts/nccl-env.sh`) to let scangen's NCCL feature find libnccl from the Python
# `nvidia-nccl` wheel (site-packages/nvidia/nccl/lib/libnccl.so.2): cudarc dlopens `libnccl.so`
# (and .so.1, .so.9 to .so.12), never `libnccl.so.2`, so this links `libnccl.so` to it in a
# private directory and puts that directory first on LD_LIBRARY_PATH. Also sets
# NCCL_NVLS_ENABLE=0 (NVLink multicast off, as shared machines require).
# SCANGEN_NCCL_LIB=/path/to/libnccl.so.2 picks the library yourself.
_scangen_nccl_find() {
  if [ -n "${SCANGEN_NCCL_LIB:-}" ]; then echo "$SCANGEN_NCCL_LIB"; return; fi
  command -v python3 >/dev/null 2>&1 || return 0
  python3 - <<'PY' 2>/dev/null
import glob, os, site, sys
roots = set(site.getsitepackages() + [site.getusersitepackages()] + sys.path)
for r in sorted(roots):
    for f in sorted(glob.glob(os.path.join(r, "nvidia", "nccl", "lib", "libnccl.so*"))):
        print(f); raise SystemExit
PY
}
_scangen_nccl_lib="$(_scangen_nccl_find)"
if [ -n "$_scangen_nccl_lib" ] && [ -e "$_scangen_nccl_lib" ]; then
  _scangen_nccl_dir="${XDG_CACHE_HOME:-$HOME/.cache}/scangen/nccl-lib"
  mkdir -p "$_scangen_nccl_dir"
  ln -sf "$(readlink -f "$_scangen_nccl_lib")" "$_scangen_nccl_dir/libnccl.so"
  export LD_LIBRARY_PATH="$_scangen_nccl_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "nccl-env: libnccl.so -> $(readlink -f "$_scangen_nccl_lib")" >&2
else
  echo "nccl-env: no libnccl found (pip install nvidia-nccl-cu12, or set SCANGEN_NCCL_LIB)" >&2
fi
export NCCL_NVLS_ENABLE=0
unset _scangen_nccl_lib _scangen_nccl_dir
unset -f _scangen_nccl_find
