# Source this: installs NVRTC and ptxas from PyPI (once) and puts them on the paths.
# No GPU or CUDA install is needed; this is how CI compiles every generated kernel.
#   . scripts/cuda-tools.sh                              # CUDA 12.9 into .nvrtc/ (CI's)
#   SCANGEN_CUDA_TOOLS=13 . scripts/cuda-tools.sh        # CUDA 13.0 into .nvrtc13/
# 13.0 is what the GPU machines' driver bundle compiles with: their register ladders can differ
# from 12.9's (BENCHMARKS.md, session 47), so read the device's with it, e.g.
#   SCANGEN_NVRTC_LADDER=1 cargo test --release -p scangen-codegen --test nvrtc_compile
_scangen_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "${SCANGEN_CUDA_TOOLS:-12}" = 13 ]; then
  _scangen_tools="$_scangen_root/.nvrtc13"
  if [ ! -e "$_scangen_tools/nvidia/cu13/lib/libnvrtc.so.13" ] || [ ! -x "$_scangen_tools/nvidia/cu13/bin/ptxas" ]; then
    echo "scangen: installing NVRTC and ptxas 13.0 (PyPI nvidia-cuda-nvrtc, nvidia-cuda-nvcc) into .nvrtc13/" >&2
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$_scangen_tools" \
      "nvidia-cuda-nvrtc==13.0.*" "nvidia-cuda-nvcc==13.0.*" >&2 || return 1
  fi
  # cudarc (built for CUDA 12) loads libnvrtc.so or libnvrtc.so.12: a link names 13's so.
  mkdir -p "$_scangen_tools/link"
  ln -sf "$_scangen_tools/nvidia/cu13/lib/libnvrtc.so.13" "$_scangen_tools/link/libnvrtc.so"
  export LD_LIBRARY_PATH="$_scangen_tools/link:$_scangen_tools/nvidia/cu13/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PATH="$_scangen_tools/nvidia/cu13/bin:$PATH"
else
  _scangen_tools="$_scangen_root/.nvrtc"
  if [ ! -e "$_scangen_tools/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" ] || [ ! -x "$_scangen_tools/nvidia/cuda_nvcc/bin/ptxas" ]; then
    echo "scangen: installing NVRTC and ptxas (PyPI nvidia-cuda-nvrtc-cu12, nvidia-cuda-nvcc-cu12) into .nvrtc/" >&2
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$_scangen_tools" \
      "nvidia-cuda-nvrtc-cu12==12.9.*" "nvidia-cuda-nvcc-cu12==12.9.*" >&2 || return 1
  fi
  export LD_LIBRARY_PATH="$_scangen_tools/nvidia/cuda_nvrtc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PATH="$_scangen_tools/nvidia/cuda_nvcc/bin:$PATH"
fi
unset _scangen_root _scangen_tools
