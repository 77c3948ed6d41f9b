# Source this: installs NVRTC and ptxas from PyPI into .nvrtc/ (once) and puts them on the paths.
# No GPU or CUDA install is needed; this is how CI compiles every generated kernel.
#   . scripts/cuda-tools.sh
_scangen_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_scangen_tools="$_scangen_root/.nvrtc"
if [ ! -e "$_scangen_tools/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" ] || [ ! -x "$_scangen_tools/nvidia/cuda_nvcc/bin/ptxas" ]; then
  echo "scangen: installing NVRTC and ptxas (PyPI nvidia-cuda-nvrtc-cu12, nvidia-cuda-nvcc-cu12) into .nvrtc/" >&2
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$_scangen_tools" \
    "nvidia-cuda-nvrtc-cu12==12.9.*" "nvidia-cuda-nvcc-cu12==12.9.*" >&2 || return 1
fi
export LD_LIBRARY_PATH="$_scangen_tools/nvidia/cuda_nvrtc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$_scangen_tools/nvidia/cuda_nvcc/bin:$PATH"
unset _scangen_root _scangen_tools
