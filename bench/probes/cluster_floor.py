"""Would thread-block clusters shorten a small scan's wait on its predecessors? The schedule
floor of schedule_floor.py with the dependency carried through a cluster's distributed shared
memory instead of global flags.

A small single-pass scan (the small-input shape: 2^16 4-byte elements are 16 tiles of 4096)
fills less than one wave, so every tile is resident at once, and each waits on every
predecessor's aggregate: published to global memory and polled back through L2. On sm_90 up to
8 blocks (16 with a non-portable size) of one cluster share their shared memory, and a cluster
barrier orders it. These kernels move a scan's bytes with its dependencies and do no scanning:

* `tile`        load a tile into registers, reduce it, store it: no dependency.
* `tile+flags`  tile t = block t (resident, as the small shape's); between reduce and store the
                tile publishes a flag and waits for every predecessor's (the global floor).
* `cluster`     clusters of CLUSTER blocks: after the reduce, a cluster barrier, then each tile
                reads its lower-ranked tiles' aggregates from their shared memory (one lane a
                rank); across clusters the last rank publishes a cluster flag once the barrier
                is passed and every tile waits for the predecessor clusters' flags. A second
                barrier keeps each block's shared memory alive until its readers are done.

Each is timed in device time (behind a spinning kernel, as tile_timeline.py does) beside the
driver's device-to-device copy of the same bytes, and printed as a fraction of that copy and as
the kernel's time over the copy's (issue 16's target at 2^16 elements is 1.3x).

Usage (on a GPU machine with sm_90): python3 cluster_floor.py [LOG2_BYTES ...]  (default 16 18 20)
"""
import sys

import numpy as np

import schedule_floor
import tile_timeline as tt

cp = None

# The device helpers are schedule_floor.py's (load_tile, store_tile, reduce_tile,
# wait_predecessors with relaxed flags: FENCED 0); these kernels take tile t = block t.
KERNELS = schedule_floor.KERNELS + r"""
extern "C" __global__ void __launch_bounds__(256) tile_flags(const uint4* in, uint4* out, u64 vectors,
        u32* flags, u32 epoch, int dependent) {
    __shared__ u32 smem[1];
    if (threadIdx.x == 0) smem[0] = 0;
    __syncthreads();
    const u32 tile = blockIdx.x;
    uint4 v[VPT];
    load_tile(in, vectors, tile, v);
    reduce_tile(v, smem);
    if (dependent) {
        if (threadIdx.x == 0) store_release(flags + tile, epoch);
        wait_predecessors(flags, tile, epoch, 0xffffffffu);
    }
    store_tile(out, vectors, tile, v);
}

__device__ __forceinline__ void cluster_barrier() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__device__ __forceinline__ u32 cluster_rank() {
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// `p` (this block's shared memory) as block `rank` of the cluster holds it, read.
__device__ __forceinline__ u32 load_cluster_shared(const u32* p, u32 rank) {
    const u32 local = (u32)__cvta_generic_to_shared(p);
    u32 remote, v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(remote) : "memory");
    return v;
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(256) cluster_pass(const uint4* in,
        uint4* out, u64 vectors, u32* flags, u32 epoch, u32* sink) {
    __shared__ u32 smem[1];
    if (threadIdx.x == 0) smem[0] = 0;
    __syncthreads();
    const u32 tile = blockIdx.x;
    const u32 rank = cluster_rank();
    const u32 cluster = tile / CLUSTER;
    uint4 v[VPT];
    load_tile(in, vectors, tile, v);
    reduce_tile(v, smem);
    cluster_barrier();  // every aggregate of the cluster is in its block's shared memory
    if (rank == CLUSTER - 1 && threadIdx.x == 0) store_release(flags + cluster, epoch);
    u32 prefix = 0;
    if (threadIdx.x < 32) {
        u32 x = threadIdx.x < rank ? load_cluster_shared(smem, threadIdx.x) : 0u;
        for (int o = 16; o > 0; o >>= 1) x ^= __shfl_xor_sync(0xffffffffu, x, o);
        prefix = x;
    }
    wait_predecessors(flags, cluster, epoch, 0xffffffffu);
    if (threadIdx.x == 0 && prefix == 0x9e3779b9u) *sink = tile;  // keeps the reads
    store_tile(out, vectors, tile, v);
    cluster_barrier();  // no block leaves while another may still read its shared memory
}
"""


def main():
    global cp
    import cupy

    cp = cupy
    tt.cp = cupy
    schedule_floor.cp = cupy
    sizes = [int(a) for a in sys.argv[1:]] or [16, 18, 20]
    spin = cp.RawModule(code=tt.SPIN).get_function("spin")
    tt.SPIN_END = cp.zeros(1, dtype=cp.uint64)
    modules = {(vpt, c): cp.RawModule(code=f"#define VPT {vpt}\n#define CLUSTER {c}\n#define FENCED 0\n" + KERNELS,
                                      options=("--std=c++17",))
               for vpt in (1, 2, 4, 8) for c in (2, 4, 8)}
    flags = cp.zeros(1 << 16, dtype=cp.uint32)
    sink = cp.zeros(1, dtype=cp.uint32)
    epoch = [0]

    print("| bytes | kernel | tile bytes | blocks | cluster | device time (us) | copy (us) | fraction of copy | time over copy |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for log2 in sizes:
        vectors, x, y, copy = schedule_floor.buffers_and_copy(log2)

        cases = []
        for vpt in (1, 2, 4, 8):
            tiles = -(-vectors // (vpt * 256))
            cases.append(("tile", vpt, tiles, 0))
            cases.append(("tile+flags", vpt, tiles, 0))
            for c in (2, 4, 8):
                if tiles % c == 0:
                    cases.append(("cluster", vpt, tiles, c))
        for name, vpt, tiles, c in cases:
            if name == "cluster":
                f = modules[vpt, c].get_function("cluster_pass")
            else:
                f = modules[vpt, 2].get_function("tile_flags")

            def launch():
                epoch[0] += 1
                e = np.uint32(epoch[0])
                if name == "cluster":
                    f((tiles,), (256,), (x, y, np.uint64(vectors), flags, e, sink))
                else:
                    f((tiles,), (256,), (x, y, np.uint64(vectors), flags, e, np.int32(name == "tile+flags")))

            t, k = schedule_floor.time_beside_copy(name, launch, copy, x, y, spin)
            print(f"| 2^{log2} | {name} | {vpt * 4096} | {tiles} | {c or '-'} | {t:.2f} | {k:.2f} | {k / t:.3f} | {t / k:.2f}x |")


if __name__ == "__main__":
    main()
