"""How close can any single-pass scan get to a copy at mid sizes? Kernels that move a scan's
bytes with a scan's dependencies but do no scanning, timed beside a copy.

A single-pass scan tile cannot store before its predecessors' aggregates are known, and its
own aggregate cannot be published before its loads arrive. These kernels keep exactly that and
drop everything else (no block scan, no look-back chain: a tile waits until *every*
predecessor has published, one parallel poll, which a real look-back can only match):

* `tile`      one tile per block: load it into registers, reduce it (an xor, so the loads must
              land), store it. No dependency between tiles: the price of holding a tile.
* `tile+dep`  as `tile`, and between reduce and store the tile publishes a flag and waits for
              all its predecessors' flags: the one-round single-pass floor. Relaxed flags, as
              the scan's tagged status words; `tile+dep fenced` with release and acquire.
* `pipe+dep`  persistent blocks (one per SM, or two) that claim tiles in order and load the
              next tile before waiting on the current one's predecessors: the overlapped
              schedule session 28 named as a candidate.

Each is timed in device time (behind a spinning kernel, as tile_timeline.py does) beside the
driver's device-to-device copy of the same bytes, and printed as a fraction of that copy.

Above 2^24 bytes a tile waits on its last 32 predecessors only (a look-back's window).

Usage (on a GPU machine): python3 schedule_floor.py [LOG2_BYTES ...]   (default 16 18 20 21 22 24)
"""
import sys

import numpy as np

import tile_timeline as tt

cp = None

KERNELS = r"""
typedef unsigned int u32;
typedef unsigned long long u64;

// FENCED 0: relaxed flags, as the scan's tagged status words are (a status and its value in
// one word need no fence); FENCED 1: release and acquire, as a flag beside its value needs.
__device__ __forceinline__ u32 load_acquire(const u32* p) {
    u32 v;
#if FENCED
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
#else
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
#endif
    return v;
}

__device__ __forceinline__ void store_release(u32* p, u32 v) {
#if FENCED
    asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
#else
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
#endif
}

// Tile `tile` of VPT 16-byte vectors per thread, striped (coalesced), into registers.
__device__ __forceinline__ void load_tile(const uint4* in, u64 vectors, u32 tile, uint4 (&v)[VPT]) {
    const u64 base = (u64)tile * VPT * blockDim.x;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
        const u64 k = base + (u64)i * blockDim.x + threadIdx.x;
        v[i] = k < vectors ? __ldcs(in + k) : make_uint4(0, 0, 0, 0);
    }
}

__device__ __forceinline__ void store_tile(uint4* out, u64 vectors, u32 tile, const uint4 (&v)[VPT]) {
    const u64 base = (u64)tile * VPT * blockDim.x;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
        const u64 k = base + (u64)i * blockDim.x + threadIdx.x;
        if (k < vectors) out[k] = v[i];
    }
}

// The tile's "aggregate": an xor of every word into shared memory, then a barrier, so every
// load has landed before the flag goes out (the value itself is not published).
__device__ __forceinline__ void reduce_tile(const uint4 (&v)[VPT], u32* smem) {
    u32 x = 0;
#pragma unroll
    for (int i = 0; i < VPT; ++i) x ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
    for (int o = 16; o > 0; o >>= 1) x ^= __shfl_xor_sync(0xffffffffu, x, o);
    if ((threadIdx.x & 31) == 0) atomicXor(smem, x);
    __syncthreads();
}

// Waits until tiles [tile - window, tile) have published this launch's epoch: every thread polls
// its share of the flags at once (one round trip when they are all there). A window of at least
// `tile` is every predecessor; at large sizes a look-back's window (32) stands for the scan's
// steady state, where tiles further back are long done.
__device__ __forceinline__ void wait_predecessors(const u32* flags, u32 tile, u32 epoch, u32 window) {
    for (u32 j = (tile > window ? tile - window : 0) + threadIdx.x; j < tile; j += blockDim.x) {
        while (load_acquire(flags + j) != epoch) {
        }
    }
    __syncthreads();
}

// Tiles in launch order (a monotonic counter, so no reset between launches).
__device__ __forceinline__ u32 claim(u32* counter, u32 tile_base, u32* slot) {
    __syncthreads();
    if (threadIdx.x == 0) *slot = atomicAdd(counter, 1u) - tile_base;
    __syncthreads();
    return *slot;
}

extern "C" __global__ void __launch_bounds__(256) tile_pass(const uint4* in, uint4* out, u64 vectors,
        u32* flags, u32* counter, u32 tile_base, u32 epoch, u32 tiles, int dependent, u32 window) {
    __shared__ u32 smem[2];
    if (threadIdx.x == 0) smem[0] = 0;
    const u32 tile = claim(counter, tile_base, smem + 1);
    uint4 v[VPT];
    load_tile(in, vectors, tile, v);
    reduce_tile(v, smem);
    if (dependent) {
        if (threadIdx.x == 0) store_release(flags + tile, epoch);
        wait_predecessors(flags, tile, epoch, window);
    }
    store_tile(out, vectors, tile, v);
}

extern "C" __global__ void __launch_bounds__(256) pipe_pass(const uint4* in, uint4* out, u64 vectors,
        u32* flags, u32* counter, u32 tile_base, u32 epoch, u32 tiles, int dependent, u32 window) {
    __shared__ u32 smem[2];
    u32 tile = claim(counter, tile_base, smem + 1);
    uint4 a[VPT], b[VPT];
    if (tile < tiles) load_tile(in, vectors, tile, a);
    while (tile < tiles) {
        if (threadIdx.x == 0) smem[0] = 0;
        __syncthreads();
        reduce_tile(a, smem);
        if (threadIdx.x == 0) store_release(flags + tile, epoch);
        // The next tile's loads go out before this one waits on its predecessors.
        const u32 next = claim(counter, tile_base, smem + 1);
        if (next < tiles) load_tile(in, vectors, next, b);
        if (dependent) wait_predecessors(flags, tile, epoch, window);
        store_tile(out, vectors, tile, a);
#pragma unroll
        for (int i = 0; i < VPT; ++i) a[i] = b[i];
        tile = next;
    }
}
"""


def buffers_and_copy(log2):
    """2^log2 bytes: (16-byte vectors, the source, the destination, the driver's device-to-device
    copy of the one into the other, enqueued)."""
    nbytes = 1 << log2
    vectors = nbytes // 16
    x = cp.arange(vectors * 4, dtype=cp.uint32)
    y = cp.empty_like(x)

    def copy():
        cp.cuda.runtime.memcpyAsync(y.data.ptr, x.data.ptr, nbytes, 3, cp.cuda.get_current_stream().ptr)

    return vectors, x, y, copy


def time_beside_copy(name, launch, copy, x, y, spin):
    """Runs `launch` once and checks that it copied `x` to `y`, then times it and `copy` in
    device time, two rounds of 25: (the kernel's us, the copy's us), each its faster round."""
    launch()
    cp.cuda.Device().synchronize()
    assert cp.array_equal(x, y), f"{name} did not copy"
    y.fill(0)
    rounds = [(tt.device_time(launch, spin, 25), tt.device_time(copy, spin, 25)) for _ in range(2)]
    return min(r[0] for r in rounds), min(r[1] for r in rounds)


def main():
    global cp
    import cupy

    cp = cupy
    tt.cp = cupy
    sizes = [int(a) for a in sys.argv[1:]] or [16, 18, 20, 21, 22, 24]
    spin_module = cp.RawModule(code=tt.SPIN)
    spin = spin_module.get_function("spin")
    tt.SPIN_END = cp.zeros(1, dtype=cp.uint64)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    modules = {(vpt, fenced): cp.RawModule(code=f"#define VPT {vpt}\n#define FENCED {fenced}\n" + KERNELS,
                                           options=("--std=c++17",))
               for vpt in (2, 4, 8) for fenced in (0, 1)}
    flags = cp.zeros(1 << 20, dtype=cp.uint32)
    counter = cp.zeros(1, dtype=cp.uint32)
    launches = [0, 0]  # [tiles claimed so far, epoch]

    print("| bytes | kernel | tile bytes | blocks | device time (us) | copy (us) | fraction of copy |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for log2 in sizes:
        vectors, x, y, copy = buffers_and_copy(log2)

        window = 0xffffffff if log2 <= 24 else 32  # every predecessor, or a look-back's window
        cases = []
        for vpt in (2, 8):
            tiles = -(-vectors // (vpt * 256))
            cases.append(("tile", vpt, tiles, tiles, 0, 0))
            cases.append(("tile+dep", vpt, tiles, tiles, 1, 0))
            cases.append(("tile+dep fenced", vpt, tiles, tiles, 1, 1))
        for vpt in (2, 4):
            tiles = -(-vectors // (vpt * 256))
            for per_sm in ((1, 2) if log2 <= 24 else (1, 2, 3, 4)):
                cases.append(("pipe+dep", vpt, tiles, min(tiles, per_sm * sms), 1, 0))
        for name, vpt, tiles, blocks, dep, fenced in cases:
            f = modules[vpt, fenced].get_function("pipe_pass" if name.startswith("pipe") else "tile_pass")

            def launch():
                launches[1] += 1
                base = launches[0]
                launches[0] += tiles if name.startswith("tile") else tiles + blocks
                f((blocks,), (256,), (x, y, np.uint64(vectors), flags, counter, np.uint32(base & 0xffffffff),
                                      np.uint32(launches[1]), np.uint32(tiles), np.int32(dep), np.uint32(window)))

            t, c = time_beside_copy(name, launch, copy, x, y, spin)
            print(f"| 2^{log2} | {name} | {vpt * 4096} | {blocks} | {t:.2f} | {c:.2f} | {c / t:.3f} |")


if __name__ == "__main__":
    main()
