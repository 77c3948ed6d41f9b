"""What the host pays to enqueue a launch: single driver calls, timed one by one.

`scangen bench --host-time` gives the wall time of a whole `Scanner::scan_device` call (and of
a device copy's). This probe splits that into the driver calls it is made of, each timed on its
own through ctypes with the GPU held busy by a spinning kernel (so no call waits on the GPU):

* `cuCtxGetCurrent` (what cudarc's bind_to_thread costs; also the ctypes floor of this probe),
* `cuStreamIsCapturing` (the capture check before every scan),
* `cuLaunchKernel` of a kernel with a plain scan's argument list, at a small and a one-wave grid,
* `cuLaunchCooperativeKernel` of the same (resident tiles' launches),
* `cuMemcpyDtoDAsync` (the copy the benchmarks compare with) and `cuEventRecord`.

Usage (on a GPU machine): python3 launch_cost.py [REPS]
Prints the median and the 10th/90th percentile of each call in microseconds.
"""
import ctypes
import sys
import time

import cupy as cp
import numpy as np

SRC = r"""
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
}
// A plain single-pass scan's arguments (in, out, n, tile state, slots, init, total); does
// nothing with them but keep them live.
extern "C" __global__ void __launch_bounds__(256, 4) scan_like(const int* in, int* out, unsigned long long n,
        unsigned long long* state, unsigned long long slots, const int* init, int* total) {
    if (n == 0xFFFFFFFFFFFFFFFFull) { out[threadIdx.x] = in[threadIdx.x] + (int)slots + (int)(size_t)state + (init ? 1 : 0) + (total ? 1 : 0); }
}
"""

CU = ctypes.CDLL("libcuda.so.1")
CU.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
CU.cuLaunchCooperativeKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
    ctypes.c_void_p, ctypes.c_void_p]
CU.cuMemcpyDtoDAsync_v2.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p]
CU.cuStreamIsCapturing.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
CU.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
CU.cuEventRecord.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
CU.cuEventCreate.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]


def check(rc, what):
    if rc != 0:
        raise SystemExit(f"{what}: CUDA error {rc}")


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    module = cp.RawModule(code=SRC)
    spin = module.get_function("spin")
    scan_like = module.get_function("scan_like")
    stream = cp.cuda.Stream(non_blocking=True)
    n = 1 << 20
    src = cp.arange(n, dtype=cp.int32)
    dst = cp.empty_like(src)
    state = cp.zeros(1 << 16, dtype=cp.uint64)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]

    # The kernel's arguments as cuLaunchKernel takes them: an array of pointers to the values.
    values = [ctypes.c_uint64(src.data.ptr), ctypes.c_uint64(dst.data.ptr), ctypes.c_uint64(n),
              ctypes.c_uint64(state.data.ptr), ctypes.c_uint64(1 << 16), ctypes.c_uint64(0),
              ctypes.c_uint64(0)]
    params = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values])
    fn = ctypes.c_void_p(scan_like.kernel.ptr)  # the CUfunction under CuPy's RawKernel
    hstream = ctypes.c_void_p(stream.ptr)
    ctx = ctypes.c_void_p()
    capturing = ctypes.c_int()
    event = ctypes.c_void_p()
    check(CU.cuEventCreate(ctypes.byref(event), 0), "cuEventCreate")

    calls = {
        "cuCtxGetCurrent": lambda: CU.cuCtxGetCurrent(ctypes.byref(ctx)),
        "cuStreamIsCapturing": lambda: CU.cuStreamIsCapturing(hstream, ctypes.byref(capturing)),
        "cuEventRecord": lambda: CU.cuEventRecord(event, hstream),
        "cuLaunchKernel 64 x 256": lambda: CU.cuLaunchKernel(fn, 64, 1, 1, 256, 1, 1, 0, hstream, params, None),
        f"cuLaunchKernel {4 * sms} x 256": lambda: CU.cuLaunchKernel(fn, 4 * sms, 1, 1, 256, 1, 1, 0, hstream, params, None),
        "cuLaunchCooperativeKernel 64 x 256": lambda: CU.cuLaunchCooperativeKernel(fn, 64, 1, 1, 256, 1, 1, 0, hstream, params),
        f"cuLaunchCooperativeKernel {4 * sms} x 256": lambda: CU.cuLaunchCooperativeKernel(fn, 4 * sms, 1, 1, 256, 1, 1, 0, hstream, params),
        "cuMemcpyDtoDAsync 4 MB": lambda: CU.cuMemcpyDtoDAsync_v2(dst.data.ptr, src.data.ptr, 4 * n, hstream),
    }
    burst = 16  # calls timed behind one hold
    with stream:
        for name, call in calls.items():
            check(call(), name)
            stream.synchronize()
            samples = []
            for _ in range(max(1, reps // burst)):
                spin((1,), (1,), (np.uint64(400_000),), stream=stream)
                for _ in range(burst):
                    t0 = time.perf_counter_ns()
                    rc = call()
                    t1 = time.perf_counter_ns()
                    check(rc, name)
                    samples.append((t1 - t0) / 1e3)
                stream.synchronize()
            s = np.array(samples)
            print(f"{name:42s} median {np.median(s):6.2f} us   p10 {np.percentile(s, 10):6.2f}   p90 {np.percentile(s, 90):6.2f}")


if __name__ == "__main__":
    main()
