"""Prints the NVRTC log and ptxas resource report for a CUDA source, compiled the way
scan-runtime compiles (cubin for sm_90, --warn-on-spills). Usage: nvrtc_log.py file.cu [libnvrtc]"""
import ctypes, glob, sys
lib = sys.argv[2] if len(sys.argv) > 2 else (glob.glob('/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13') + glob.glob('/usr/local/cuda/lib64/libnvrtc.so*'))[0]
nv = ctypes.CDLL(lib)
src = open(sys.argv[1]).read()
for opts in ([b"--std=c++17", b"--gpu-architecture=sm_90", b"--ptxas-options=--warn-on-spills"],
             [b"--std=c++17", b"--gpu-architecture=sm_90", b"--ptxas-options=-v"]):
    prog = ctypes.c_void_p()
    nv.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"scangen.cu", 0, None, None)
    arr = (ctypes.c_char_p * len(opts))(*opts)
    r = nv.nvrtcCompileProgram(prog, len(opts), arr)
    sz = ctypes.c_size_t(); nv.nvrtcGetProgramLogSize(prog, ctypes.byref(sz))
    log = ctypes.create_string_buffer(sz.value); nv.nvrtcGetProgramLog(prog, log)
    print(opts[-1].decode(), "rc", r)
    print("\n".join(l for l in log.value.decode().splitlines() if "spill" in l or "Used" in l))
