"""Experiment variants of an emitted i32 single-pass kernel (text surgery; not product code).
   python3 make_variants.py <emitted.cu> <prefix> <outdir>"""
import re, sys, os
src, prefix, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
base = open(src).read()
os.makedirs(outdir, exist_ok=True)

def must(s, old, new, count=1):
    assert s.count(old) >= 1, old
    return s.replace(old, new) if count == 0 else s.replace(old, new, count)

LOAD = "            v = tile_in[idx];"
STORE = "            tile_out[idx] = smem[scan_smem_index(idx)];"

def cs(s):
    s = must(s, LOAD, "            v = __ldcs(tile_in + idx);")
    return must(s, STORE, "            __stcs(tile_out + idx, smem[scan_smem_index(idx)]);")

RELOAD_AT = "    if (full) {\n        scan_finish_tile<false"
def reload(s):
    code = """    {   // re-read the thread's items from the transpose buffer (still intact): they need not
        // stay in registers across the look-back
        const u32 lane_r = threadIdx.x % SCAN_WARP_THREADS;
        const u32 wb = threadIdx.x / SCAN_WARP_THREADS * SCAN_WARP_ITEMS;
#pragma unroll
        for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {
            items[i] = storage.tile[scan_smem_index(wb + lane_r * SCAN_ITEMS_PER_THREAD + i)];
        }
    }
"""
    return must(s, RELOAD_AT, code + RELOAD_AT)

def cpasync(s):
    old = """        T v;
        if (!IS_PARTIAL || idx < valid) {
            v = tile_in[idx];
        } else {
            v = scan_identity();
        }
        smem[scan_smem_index(idx)] = v;
    }
    __syncwarp();"""
    new = """        if (!IS_PARTIAL) {
            const u32 dst = (u32)__cvta_generic_to_shared(smem + scan_smem_index(idx));
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" : : "r"(dst), "l"(tile_in + idx) : "memory");
        } else {
            T v;
            if (idx < valid) {
                v = tile_in[idx];
            } else {
                v = scan_identity();
            }
            smem[scan_smem_index(idx)] = v;
        }
    }
    if (!IS_PARTIAL) {
        asm volatile("cp.async.wait_all;" : : : "memory");
    }
    __syncwarp();"""
    return must(s, old, new)

def tilecopy(s):
    start = s.index("extern \"C\" __global__ void SCAN_LAUNCH_BOUNDS\nscangen_single_pass")
    body = """extern "C" __global__ void SCAN_LAUNCH_BOUNDS
scangen_single_pass(const T* in, T* out, unsigned long long n, void* tile_state, unsigned int epoch) {
    __shared__ ScanTileStorage storage;
    const u64 base = (u64)blockIdx.x * SCAN_TILE_ITEMS;
    T items[SCAN_ITEMS_PER_THREAD];
    scan_load_tile<false>(in + base, SCAN_TILE_ITEMS, items, storage.tile);
    scan_store_tile<false>(out + base, SCAN_TILE_ITEMS, items, storage.tile);
}
"""
    return s[:start] + body

def dynamic(s, threads, items):
    tile = threads * items
    s = re.sub(r"constexpr u32 SCAN_BLOCK_THREADS = \d+;", f"constexpr u32 SCAN_BLOCK_THREADS = {threads};", s)
    s = re.sub(r"constexpr u32 SCAN_ITEMS_PER_THREAD = \d+;", f"constexpr u32 SCAN_ITEMS_PER_THREAD = {items};", s)
    s = re.sub(r"constexpr u32 SCAN_TILE_ITEMS = \d+;", f"constexpr u32 SCAN_TILE_ITEMS = {tile};", s)
    s = re.sub(r"constexpr u32 SCAN_WARPS = \d+;", f"constexpr u32 SCAN_WARPS = {threads // 32};", s)
    s = re.sub(r"constexpr u32 SCAN_SMEM_TILE_ELEMS = \d+;", f"constexpr u32 SCAN_SMEM_TILE_ELEMS = {tile + (tile - 1) // 32};", s)
    s = must(s, "    __shared__ ScanTileStorage storage;",
             "    extern __shared__ __align__(16) unsigned char scan_dyn_smem[];\n    ScanTileStorage& storage = *reinterpret_cast<ScanTileStorage*>(scan_dyn_smem);")
    return s

def lb(s, blocks):
    out = re.sub(r"#define SCAN_LAUNCH_BOUNDS __launch_bounds__\(SCAN_BLOCK_THREADS[^)]*\)",
                 f"#define SCAN_LAUNCH_BOUNDS __launch_bounds__(SCAN_BLOCK_THREADS, {blocks})", s)
    assert out != s or f"SCAN_BLOCK_THREADS, {blocks})" in s
    return out

def stream_finish(s):
    # The finish phase streams through shared memory: read an item, combine, write the running
    # value back in place (blocked), then the striped store. No item array held in registers.
    old_start = s.index("template <bool IS_PARTIAL, bool EXCLUSIVE>\n__device__ __forceinline__ void scan_finish_tile(")
    old_end = s.index("}\n", s.index("scan_store_tile<IS_PARTIAL>(tile_out, valid, items, storage.tile);", old_start)) + 2
    new = """template <bool IS_PARTIAL, bool EXCLUSIVE>
__device__ __forceinline__ void scan_finish_tile(T (&items)[SCAN_ITEMS_PER_THREAD], T thread_exclusive, bool has_prefix, T tile_prefix, T* tile_out, u32 valid, ScanTileStorage& storage) {
    const bool first_thread = threadIdx.x == 0;
    T seed;
    if (first_thread) {
        seed = tile_prefix;
    } else if (has_prefix) {
        seed = scan_combine(tile_prefix, thread_exclusive);
    } else {
        seed = thread_exclusive;
    }
    const bool has_seed = has_prefix || !first_thread;
    const u32 lane = threadIdx.x % SCAN_WARP_THREADS;
    const u32 warp_base = threadIdx.x / SCAN_WARP_THREADS * SCAN_WARP_ITEMS;
    T* smem = storage.tile;
    const u32 mine = warp_base + lane * SCAN_ITEMS_PER_THREAD;
    T acc;
    {
        const T x = smem[scan_smem_index(mine)];
        acc = has_seed ? scan_combine(seed, x) : x;
        smem[scan_smem_index(mine)] = EXCLUSIVE ? (has_seed ? seed : scan_identity()) : acc;
    }
#pragma unroll
    for (u32 i = 1; i < SCAN_ITEMS_PER_THREAD; ++i) {
        const T x = smem[scan_smem_index(mine + i)];
        const T before = acc;
        acc = scan_combine(acc, x);
        smem[scan_smem_index(mine + i)] = EXCLUSIVE ? before : acc;
    }
    __syncwarp();
#pragma unroll
    for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {
        const u32 idx = warp_base + i * SCAN_WARP_THREADS + lane;
        if (!IS_PARTIAL || idx < valid) {
            tile_out[idx] = smem[scan_smem_index(idx)];
        }
    }
}
"""
    s = s[:old_start] + new + s[old_end:]
    # the block-level reduce streams too: fold the thread's items straight from shared memory
    s = must(s, "scan_block_exclusive(scan_thread_reduce(items), thread_exclusive, aggregate, storage.block);",
             """T thread_total;
    {
        const u32 lane_r = threadIdx.x % SCAN_WARP_THREADS;
        const u32 mine = threadIdx.x / SCAN_WARP_THREADS * SCAN_WARP_ITEMS + lane_r * SCAN_ITEMS_PER_THREAD;
        thread_total = storage.tile[scan_smem_index(mine)];
#pragma unroll
        for (u32 i = 1; i < SCAN_ITEMS_PER_THREAD; ++i) {
            thread_total = scan_combine(thread_total, storage.tile[scan_smem_index(mine + i)]);
        }
    }
    scan_block_exclusive(thread_total, thread_exclusive, aggregate, storage.block);""")
    return s

def cpasync_noregs(s):
    # load phase: cp.async straight to shared memory, and no blocked read into registers
    s = cpasync(s)
    old = """#pragma unroll
    for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {
        items[i] = smem[scan_smem_index(warp_base + lane * SCAN_ITEMS_PER_THREAD + i)];
    }
}"""
    return must(s, old, "    (void)items;\n}")

# Pieces both persistent variants share, substituted for their placeholders.
CLAIM_TILE_FN = """__device__ __forceinline__ u32 scan_claim_tile(const ScanTileState& ts, u32 epoch) {
    const u32 tile = atomicAdd(ts.counters + (epoch & 1u), 1u);
    if (tile == 0) {
        ts.counters[(epoch + 1u) & 1u] = 0u;
    }
    return tile;
}"""

PUBLISH_AND_LOOK_BACK = """        if (threadIdx.x == 0) {
            ts.publish(tile, tile == 0 ? SCAN_STATUS_INCLUSIVE : SCAN_STATUS_AGGREGATE, aggregate, epoch);
        }
        if (tile > 0 && threadIdx.x < SCAN_WARP_THREADS) {
            const u32 lane = threadIdx.x;
            const T prefix = scan_look_back(ts, tile, epoch, lane);
            if (lane == 0) {
                ts.publish(tile, SCAN_STATUS_INCLUSIVE, scan_combine(prefix, aggregate), epoch);
                storage.exclusive_prefix = prefix;
            }
        }
        T tile_prefix = scan_identity();
        if (tile > 0) {
            __syncthreads();
            tile_prefix = storage.exclusive_prefix;
        }"""

def persistent_pieces(kernel):
    return kernel.replace("CLAIM_TILE_FN", CLAIM_TILE_FN).replace("PUBLISH_AND_LOOK_BACK", PUBLISH_AND_LOOK_BACK)

def persist(s):
    # Persistent blocks that claim their next tile and issue its loads (into registers) before
    # the current tile's look-back, so a block always has loads in flight.
    helpers = """
template <bool IS_PARTIAL>
__device__ __forceinline__ void scan_load_striped(const T* tile_in, u32 valid, T (&striped)[SCAN_ITEMS_PER_THREAD]) {
    const u32 lane = threadIdx.x % SCAN_WARP_THREADS;
    const u32 warp_base = threadIdx.x / SCAN_WARP_THREADS * SCAN_WARP_ITEMS;
#pragma unroll
    for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {
        const u32 idx = warp_base + i * SCAN_WARP_THREADS + lane;
        if (!IS_PARTIAL || idx < valid) {
            striped[i] = tile_in[idx];
        } else {
            striped[i] = scan_identity();
        }
    }
}

__device__ __forceinline__ void scan_striped_to_blocked(const T (&striped)[SCAN_ITEMS_PER_THREAD], T (&items)[SCAN_ITEMS_PER_THREAD], T* smem) {
    const u32 lane = threadIdx.x % SCAN_WARP_THREADS;
    const u32 warp_base = threadIdx.x / SCAN_WARP_THREADS * SCAN_WARP_ITEMS;
    __syncwarp();  // the warp's reads of its slice for the previous tile's store are done
#pragma unroll
    for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {
        smem[scan_smem_index(warp_base + i * SCAN_WARP_THREADS + lane)] = striped[i];
    }
    __syncwarp();
#pragma unroll
    for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {
        items[i] = smem[scan_smem_index(warp_base + lane * SCAN_ITEMS_PER_THREAD + i)];
    }
}

CLAIM_TILE_FN

extern "C" __global__ void SCAN_LAUNCH_BOUNDS
scangen_single_pass(const T* in, T* out, unsigned long long n, void* tile_state, unsigned int epoch) {
    __shared__ ScanTileStorage storage;
    __shared__ u32 next_tile_id;
    const u64 num_tiles = n / SCAN_TILE_ITEMS + (n % SCAN_TILE_ITEMS != 0 ? 1 : 0);
    const ScanTileState ts(tile_state);
    if (threadIdx.x == 0) {
        storage.tile_id = scan_claim_tile(ts, epoch);
    }
    __syncthreads();
    u32 tile = storage.tile_id;
    T next[SCAN_ITEMS_PER_THREAD];
    if ((u64)tile < num_tiles) {
        const u64 remaining = n - (u64)tile * SCAN_TILE_ITEMS;
        if (remaining >= SCAN_TILE_ITEMS) {
            scan_load_striped<false>(in + (u64)tile * SCAN_TILE_ITEMS, SCAN_TILE_ITEMS, next);
        } else {
            scan_load_striped<true>(in + (u64)tile * SCAN_TILE_ITEMS, (u32)remaining, next);
        }
    }
    while ((u64)tile < num_tiles) {
        const u64 base = (u64)tile * SCAN_TILE_ITEMS;
        const u64 remaining = n - base;
        const bool full = remaining >= SCAN_TILE_ITEMS;
        const u32 valid = full ? SCAN_TILE_ITEMS : (u32)remaining;
        T items[SCAN_ITEMS_PER_THREAD];
        scan_striped_to_blocked(next, items, storage.tile);
        if (threadIdx.x == 0) {
            next_tile_id = scan_claim_tile(ts, epoch);
        }
        T thread_exclusive;
        T aggregate;
        scan_block_exclusive(scan_thread_reduce(items), thread_exclusive, aggregate, storage.block);
        const u32 following = next_tile_id;  // written before the block scan's barrier
        if ((u64)following < num_tiles) {
            const u64 fbase = (u64)following * SCAN_TILE_ITEMS;
            const u64 frem = n - fbase;
            if (frem >= SCAN_TILE_ITEMS) {
                scan_load_striped<false>(in + fbase, SCAN_TILE_ITEMS, next);
            } else {
                scan_load_striped<true>(in + fbase, (u32)frem, next);
            }
        }
PUBLISH_AND_LOOK_BACK
        if (full) {
            scan_finish_tile<false, EXCL>(items, thread_exclusive, tile > 0, tile_prefix, out + base, valid, storage);
        } else {
            scan_finish_tile<true, EXCL>(items, thread_exclusive, tile > 0, tile_prefix, out + base, valid, storage);
        }
        tile = following;
        __syncthreads();  // shared block storage and next_tile_id are reused by the next tile
    }
}
"""
    start = s.index("extern \"C\" __global__ void SCAN_LAUNCH_BOUNDS\nscangen_single_pass")
    excl = "true" if "scan_finish_tile<false, true>" in s[start:] else "false"
    return s[:start] + persistent_pieces(helpers).replace("EXCL", excl)

def dynamic2(s, threads, items):
    tile = threads * items
    s = re.sub(r"constexpr u32 SCAN_BLOCK_THREADS = \d+;", f"constexpr u32 SCAN_BLOCK_THREADS = {threads};", s)
    s = re.sub(r"constexpr u32 SCAN_ITEMS_PER_THREAD = \d+;", f"constexpr u32 SCAN_ITEMS_PER_THREAD = {items};", s)
    s = re.sub(r"constexpr u32 SCAN_TILE_ITEMS = \d+;", f"constexpr u32 SCAN_TILE_ITEMS = {tile};", s)
    s = re.sub(r"constexpr u32 SCAN_WARPS = \d+;", f"constexpr u32 SCAN_WARPS = {threads // 32};", s)
    s = re.sub(r"constexpr u32 SCAN_SMEM_TILE_ELEMS = \d+;", f"constexpr u32 SCAN_SMEM_TILE_ELEMS = {tile + (tile - 1) // 32};", s)
    return s

def persist_async(s):
    # Persistent blocks; the next tile is copied global -> shared with cp.async (4-byte elements)
    # into a second transpose buffer while the current tile does its look-back.
    k = """
__device__ __forceinline__ void scan_prefetch(const T* tile_in, u32 valid, bool partial, T* smem) {
    const u32 lane = threadIdx.x % SCAN_WARP_THREADS;
    const u32 warp_base = threadIdx.x / SCAN_WARP_THREADS * SCAN_WARP_ITEMS;
    if (!partial) {
#pragma unroll
        for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {
            const u32 idx = warp_base + i * SCAN_WARP_THREADS + lane;
            const u32 dst = (u32)__cvta_generic_to_shared(smem + scan_smem_index(idx));
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" : : "r"(dst), "l"(tile_in + idx) : "memory");
        }
    } else {
#pragma unroll
        for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {
            const u32 idx = warp_base + i * SCAN_WARP_THREADS + lane;
            if (idx < valid) {
                const u32 dst = (u32)__cvta_generic_to_shared(smem + scan_smem_index(idx));
                asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" : : "r"(dst), "l"(tile_in + idx) : "memory");
            } else {
                smem[scan_smem_index(idx)] = scan_identity();
            }
        }
    }
    asm volatile("cp.async.commit_group;" : : : "memory");
}

__device__ __forceinline__ void scan_take_blocked(T (&items)[SCAN_ITEMS_PER_THREAD], const T* smem) {
    const u32 lane = threadIdx.x % SCAN_WARP_THREADS;
    const u32 warp_base = threadIdx.x / SCAN_WARP_THREADS * SCAN_WARP_ITEMS;
    asm volatile("cp.async.wait_all;" : : : "memory");
    __syncwarp();
#pragma unroll
    for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {
        items[i] = smem[scan_smem_index(warp_base + lane * SCAN_ITEMS_PER_THREAD + i)];
    }
}

CLAIM_TILE_FN

extern "C" __global__ void SCAN_LAUNCH_BOUNDS
scangen_single_pass(const T* in, T* out, unsigned long long n, void* tile_state, unsigned int epoch) {
    extern __shared__ __align__(16) unsigned char scan_dyn_smem[];
    ScanTileStorage& storage = *reinterpret_cast<ScanTileStorage*>(scan_dyn_smem);
    T* buffers[2] = {storage.tile, reinterpret_cast<T*>(scan_dyn_smem + (sizeof(ScanTileStorage) + 15) / 16 * 16)};
    __shared__ u32 next_tile_id;
    const u64 num_tiles = n / SCAN_TILE_ITEMS + (n % SCAN_TILE_ITEMS != 0 ? 1 : 0);
    const ScanTileState ts(tile_state);
    if (threadIdx.x == 0) {
        storage.tile_id = scan_claim_tile(ts, epoch);
    }
    __syncthreads();
    u32 tile = storage.tile_id;
    u32 b = 0;
    if ((u64)tile < num_tiles) {
        const u64 remaining = n - (u64)tile * SCAN_TILE_ITEMS;
        scan_prefetch(in + (u64)tile * SCAN_TILE_ITEMS, remaining >= SCAN_TILE_ITEMS ? SCAN_TILE_ITEMS : (u32)remaining, remaining < SCAN_TILE_ITEMS, buffers[0]);
    }
    while ((u64)tile < num_tiles) {
        const u64 base = (u64)tile * SCAN_TILE_ITEMS;
        const u64 remaining = n - base;
        const bool full = remaining >= SCAN_TILE_ITEMS;
        const u32 valid = full ? SCAN_TILE_ITEMS : (u32)remaining;
        T* cur = b ? buffers[1] : buffers[0];
        T* nxt = b ? buffers[0] : buffers[1];
        T items[SCAN_ITEMS_PER_THREAD];
        scan_take_blocked(items, cur);
        if (threadIdx.x == 0) {
            next_tile_id = scan_claim_tile(ts, epoch);
        }
        T thread_exclusive;
        T aggregate;
        scan_block_exclusive(scan_thread_reduce(items), thread_exclusive, aggregate, storage.block);
        const u32 following = next_tile_id;  // written before the block scan's barrier
        if ((u64)following < num_tiles) {
            const u64 fbase = (u64)following * SCAN_TILE_ITEMS;
            const u64 frem = n - fbase;
            scan_prefetch(in + fbase, frem >= SCAN_TILE_ITEMS ? SCAN_TILE_ITEMS : (u32)frem, frem < SCAN_TILE_ITEMS, nxt);
        }
PUBLISH_AND_LOOK_BACK
        const bool first_thread = threadIdx.x == 0;
        T seed;
        if (first_thread) {
            seed = tile_prefix;
        } else if (tile > 0) {
            seed = scan_combine(tile_prefix, thread_exclusive);
        } else {
            seed = thread_exclusive;
        }
        scan_thread_scan<EXCL>(items, seed, tile > 0 || !first_thread);
        if (full) {
            scan_store_tile<false>(out + base, valid, items, cur);
        } else {
            scan_store_tile<true>(out + base, valid, items, cur);
        }
        tile = following;
        b ^= 1u;
        __syncthreads();  // shared block storage and next_tile_id are reused by the next tile
    }
}
"""
    start = s.index("extern \"C\" __global__ void SCAN_LAUNCH_BOUNDS\nscangen_single_pass")
    excl = "true" if "scan_finish_tile<false, true>" in s[start:] else "false"
    return s[:start] + persistent_pieces(k).replace("EXCL", excl)

ATOMIC = """    if (threadIdx.x == 0) {
        const u32 tile = atomicAdd(ts.counters + (epoch & 1u), 1u);
        if (tile == 0) {
            ts.counters[(epoch + 1u) & 1u] = 0u;
        }
        storage.tile_id = tile;
    }
    __syncthreads();
    const u32 tile = storage.tile_id;"""

def noatomic(s):
    # diagnostic only: tile = blockIdx.x (relies on in-order dispatch)
    return must(s, ATOMIC, "    const u32 tile = blockIdx.x;")

def nolookback(s):
    # diagnostic only (wrong results): every tile takes the identity as its prefix
    return must(s, "    if (tile > 0 && threadIdx.x < SCAN_WARP_THREADS) {", "    if (false) {")

def nobarrier_lookback(s):
    # every warp runs its own look-back: no block barrier to broadcast the prefix
    old = s[s.index("    // Warp 0 looks back."):s.index("    if (full) {\n        scan_finish_tile<false")]
    new = """    T tile_prefix = scan_identity();
    if (tile > 0) {
        const u32 lane = threadIdx.x % SCAN_WARP_THREADS;
        tile_prefix = scan_look_back(ts, tile, epoch, lane);
        if (threadIdx.x == 0) {
            ts.publish(tile, SCAN_STATUS_INCLUSIVE, scan_combine(tile_prefix, aggregate), epoch);
        }
    }
"""
    return s.replace(old, new)

def speculative(s):
    # start loading blockIdx.x's tile while the atomic is in flight; reload if the id differs
    new = """    if (threadIdx.x == 0) {
        const u32 t = atomicAdd(ts.counters + (epoch & 1u), 1u);
        if (t == 0) {
            ts.counters[(epoch + 1u) & 1u] = 0u;
        }
        storage.tile_id = t;
    }
    T items[SCAN_ITEMS_PER_THREAD];
    const u32 guess = blockIdx.x;
    const bool guess_full = (u64)(guess + 1) * SCAN_TILE_ITEMS <= n;
    T striped[SCAN_ITEMS_PER_THREAD];
    if (guess_full) {
        const u32 lane = threadIdx.x % SCAN_WARP_THREADS;
        const u32 warp_base = threadIdx.x / SCAN_WARP_THREADS * SCAN_WARP_ITEMS;
        const T* g = in + (u64)guess * SCAN_TILE_ITEMS;
#pragma unroll
        for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {
            striped[i] = g[warp_base + i * SCAN_WARP_THREADS + lane];
        }
    }
    __syncthreads();
    const u32 tile = storage.tile_id;"""
    s = must(s, ATOMIC, new)
    s = must(s, """    T items[SCAN_ITEMS_PER_THREAD];
    if (full) {
        scan_load_tile<false>(in + base, valid, items, storage.tile);""", """    if (full && tile == guess) {
        const u32 lane = threadIdx.x % SCAN_WARP_THREADS;
        const u32 warp_base = threadIdx.x / SCAN_WARP_THREADS * SCAN_WARP_ITEMS;
#pragma unroll
        for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {
            storage.tile[scan_smem_index(warp_base + i * SCAN_WARP_THREADS + lane)] = striped[i];
        }
        __syncwarp();
#pragma unroll
        for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {
            items[i] = storage.tile[scan_smem_index(warp_base + lane * SCAN_ITEMS_PER_THREAD + i)];
        }
    } else if (full) {
        scan_load_tile<false>(in + base, valid, items, storage.tile);""")
    return s

variants = {
    "base": base,
    "cs": cs(base),
    "reload": reload(base),
    "cpasync": cpasync(base),
    "cpasync_reload": reload(cpasync(base)),
    "cpasync_reload_cs": cs(reload(cpasync(base))),
    "tilecopy": tilecopy(base),
    "tilecopy_cpasync": tilecopy(cpasync(base)),
    "dyn256x64_cpasync_reload": dynamic(reload(cpasync(base)), 256, 64),
    "dyn128x128_cpasync_reload": dynamic(reload(cpasync(base)), 128, 128),
    "dyn128x32_cpasync_reload": dynamic(reload(cpasync(base)), 128, 32),
    "stream": stream_finish(cpasync_noregs(base)),
    "stream_lb6": lb(stream_finish(cpasync_noregs(base)), 6),
    "stream_lb6_cs": cs(lb(stream_finish(cpasync_noregs(base)), 6)),
    "dyn256x64_stream": dynamic(stream_finish(cpasync_noregs(base)), 256, 64),
    "dyn128x128_stream": dynamic(stream_finish(cpasync_noregs(base)), 128, 128),
    "dyn128x32_stream": dynamic(stream_finish(cpasync_noregs(base)), 128, 32),
    "base_lb6": lb(base, 6),
    "noatomic": noatomic(base),
    "nolookback": nolookback(base),
    "noatomic_nolookback": nolookback(noatomic(base)),
    "warp_lookback": nobarrier_lookback(base),
    "speculative": speculative(base),
    "speculative_lb6": lb(speculative(base), 6),
    "persist": persist(base),
    "persist_lb3": lb(persist(base), 3),
    "persist_lb4": lb(persist(base), 4),
    "pasync": persist_async(base),
    "pasync_lb3": lb(persist_async(base), 3),
    "pasync_128x32": dynamic2(persist_async(base), 128, 32),
    "pasync_128x32_lb6": lb(dynamic2(persist_async(base), 128, 32), 6),
    "pasync_128x16_lb8": lb(dynamic2(persist_async(base), 128, 16), 8),
}
for name, text in variants.items():
    open(os.path.join(outdir, f"{prefix}_{name}.cu"), "w").write(text)
    print(f"{prefix}_{name}")
