# Source this to build scangen-candle's `cuda` feature on a machine without a CUDA install:
#   . scripts/candle-cuda-env.sh
#   cargo build --release -p scangen-candle --features cuda --tests --examples
#
# candle-core's `cuda` feature needs, at build time:
# * nvcc (candle-kernels compiles its kernels to PTX and a static library with it): PyPI's CUDA
#   13.0 compiler wheels (nvidia-cuda-nvcc 13.0 has nvcc, cudafe++ and fatbinary; nvidia-nvvm has
#   cicc; nvidia-cuda-runtime/-crt/-cccl the headers and libcudart), installed into .candle-cuda/.
#   13.0, not newer: its PTX (ISA 9.0) loads on drivers from 580 on; 13.1's needs 590.
#   (nvidia-cuda-nvcc-cu12 12.x wheels hold ptxas only.) CUDA_COMPUTE_CAP (default 90, H100) is
#   the architecture candle-kernels compiles for, since there is no nvidia-smi to ask.
# * libcuda, libnvrtc, libcublas, libcublasLt, libcurand and libcudart to link against (cudarc's
#   `dynamic-linking`): stubs made here from the function names cudarc binds, with unversioned
#   sonames (libcublas.so, ...), so the executables run against CUDA 12 or 13 libraries, whichever
#   the GPU machine has; scripts/cuda-libs-env.sh links those names there. libcuda's stub is
#   libcuda.so.1, the driver's own name.
_scangen_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_scangen_cc="$_scangen_root/.candle-cuda"
_scangen_nvcc="$_scangen_cc/cu13/nvidia/cu13/bin/nvcc"
if [ ! -x "$_scangen_nvcc" ] || [ ! -x "$_scangen_cc/cu13/nvidia/cu13/nvvm/bin/cicc" ]; then
  echo "scangen: installing nvcc (PyPI nvidia-cuda-nvcc 13.0 and its parts) into .candle-cuda/" >&2
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$_scangen_cc/cu13" \
    "nvidia-cuda-nvcc==13.0.*" "nvidia-nvvm==13.0.*" "nvidia-cuda-runtime==13.0.*" \
    "nvidia-cuda-crt==13.0.*" "nvidia-cuda-cccl==13.0.*" >&2 || return 1
fi
if [ ! -e "$_scangen_cc/link/lib/libcublas.so" ]; then
  echo "scangen: making link stubs of the CUDA libraries in .candle-cuda/link/lib" >&2
  python3 - "$_scangen_root" "$_scangen_cc/link/lib" <<'PY' >&2 || return 1
import glob, os, re, subprocess, sys, tempfile
root, out = sys.argv[1], sys.argv[2]
# cudarc's sources, the version in Cargo.lock.
lock = open(os.path.join(root, "Cargo.lock")).read()
version = re.search(r'name = "cudarc"\nversion = "([^"]+)"', lock).group(1)
srcs = glob.glob(os.path.expanduser(f"~/.cargo/registry/src/*/cudarc-{version}/src"))
if not srcs:
    subprocess.run(["cargo", "fetch", "--manifest-path", os.path.join(root, "Cargo.toml")], check=True)
    srcs = glob.glob(os.path.expanduser(f"~/.cargo/registry/src/*/cudarc-{version}/src"))
src = srcs[0]
# (cudarc module, library, soname)
libs = [("driver", "cuda", "libcuda.so.1"), ("nvrtc", "nvrtc", "libnvrtc.so"),
        ("cublas", "cublas", "libcublas.so"), ("cublaslt", "cublasLt", "libcublasLt.so"),
        ("curand", "curand", "libcurand.so"), ("runtime", "cudart", "libcudart.so")]
# libcudart is also called by nvcc's host code in candle-kernels' static library
# (__cudaRegisterFatBinary, __cudaLaunchKernel_ptsz, cudaMallocAsync_ptsz, ...): every function
# the installed libcudart.so.13 exports (CUDA 12.9's exports the ones candle-kernels uses too).
cudart = glob.glob(os.path.join(os.path.dirname(os.path.dirname(out)), "cu13", "nvidia", "cu13", "lib", "libcudart.so.*"))
nm = subprocess.run(["nm", "-D", "--defined-only", cudart[0]], check=True, capture_output=True, text=True)
extra = {"cudart": [l.split()[2].split("@")[0] for l in nm.stdout.splitlines()
                    if len(l.split()) == 3 and l.split()[1] in "TW"]}
os.makedirs(out, exist_ok=True)
for module, lib, soname in libs:
    text = open(os.path.join(src, module, "sys", "mod.rs")).read()
    names = sorted(set(re.findall(r'load::<_F>\("([A-Za-z0-9_]+)"\)', text)) | set(extra.get(lib, [])))
    assert names, module
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as c:
        c.write("".join(f"void {n}(void) {{}}\n" for n in names))
    target = os.path.join(out, soname)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", target, f"-Wl,-soname,{soname}", c.name], check=True)
    os.unlink(c.name)
    if soname != f"lib{lib}.so":
        os.symlink(soname, os.path.join(out, f"lib{lib}.so"))
    print(f"stub {soname}: {len(names)} functions")
PY
fi
export PATH="$(dirname "$_scangen_nvcc"):$PATH"
# cudarc's build script adds $CUDA_ROOT/lib to the link search path (and candle-kernels' -lcudart
# finds the stub there too). cudaforge finds nvcc on PATH and its headers beside it.
export CUDA_ROOT="$_scangen_cc/link"
export CUDA_COMPUTE_CAP="${CUDA_COMPUTE_CAP:-90}"
unset _scangen_root _scangen_cc _scangen_nvcc
