# Source this on the GPU machine before running executables built with cudarc's `dynamic-linking`
# (scangen-candle's `cuda` feature; see scripts/candle-cuda-env.sh): they need libcublas.so,
# libcublasLt.so, libcurand.so, libcudart.so and libnvrtc.so (unversioned names: they were linked
# against stubs) and libcuda.so.1 (the driver's). This links each unversioned name, in a shim
# directory, to the library found in Python's site-packages (the nvidia-* wheels torch installs:
# nvidia/*/lib, nvidia/cu13/lib, ...) or a CUDA install, preferring CUDA 12's libraries (what
# cudarc was bound to) and then the newest, and appends the shim and the libraries' directories to
# LD_LIBRARY_PATH. Names already on LD_LIBRARY_PATH (run-all.sh's libnvrtc.so) are left alone.
#   . scripts/cuda-libs-env.sh            # or SCANGEN_CUDA_SHIM=<dir> to choose the shim directory
_scangen_shim="${SCANGEN_CUDA_SHIM:-$(mktemp -d)}"
mkdir -p "$_scangen_shim"
_scangen_dirs="$(python3 - "$_scangen_shim" <<'PY'
import glob, os, re, site, sys
shim = sys.argv[1]
roots = set(sys.path)
try:
    roots |= set(site.getsitepackages() + [site.getusersitepackages()])
except AttributeError:
    pass
dirs = []
for r in sorted(roots):
    dirs += sorted(glob.glob(os.path.join(r, "nvidia", "*", "lib")))
dirs += [os.path.join(os.environ.get("CUDA_HOME", "/nonexistent"), "lib64"), "/usr/local/cuda/lib64",
         "/usr/lib/x86_64-linux-gnu"]
on_path = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
used = []
# library: preferred major versions, in order (then the newest).
for lib, prefer in [("cublas", [12]), ("cublasLt", [12]), ("curand", [10]), ("cudart", [12]),
                    ("nvrtc", [])]:
    name = f"lib{lib}.so"
    if any(os.path.exists(os.path.join(d, name)) for d in on_path):
        continue
    found = []
    for d in dirs:
        for f in glob.glob(os.path.join(d, name + ".*")):
            m = re.fullmatch(re.escape(name) + r"\.(\d+)", os.path.basename(f))
            if m:
                found.append((int(m.group(1)), f))
    if not found:
        print(f"cuda-libs-env: {name}.N not found", file=sys.stderr)
        continue
    found.sort(key=lambda vf: (vf[0] not in prefer, prefer.index(vf[0]) if vf[0] in prefer else 0, -vf[0]))
    real = os.path.realpath(found[0][1])
    link = os.path.join(shim, name)
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(real, link)
    print(f"cuda-libs-env: {name} -> {real}", file=sys.stderr)
    if os.path.dirname(found[0][1]) not in used:
        used.append(os.path.dirname(found[0][1]))
print(":".join(used))
PY
)"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$_scangen_shim${_scangen_dirs:+:$_scangen_dirs}"
unset _scangen_shim _scangen_dirs
