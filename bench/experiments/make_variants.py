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

def publish_and_look_back(storage="storage", prefix="tile_prefix", indent=8):
    # Publish the aggregate, look back (warp 0), broadcast the prefix: the step every variant
    # with its own kernel body shares.
    code = f"""if (threadIdx.x == 0) {{
    ts.publish(tile, tile == 0 ? SCAN_STATUS_INCLUSIVE : SCAN_STATUS_AGGREGATE, aggregate, epoch);
}}
if (tile > 0 && threadIdx.x < SCAN_WARP_THREADS) {{
    const u32 lane = threadIdx.x;
    const T prefix = scan_look_back(ts, tile, epoch, lane);
    if (lane == 0) {{
        ts.publish(tile, SCAN_STATUS_INCLUSIVE, scan_combine(prefix, aggregate), epoch);
        {storage}.exclusive_prefix = prefix;
    }}
}}
T {prefix} = scan_identity();
if (tile > 0) {{
    __syncthreads();
    {prefix} = {storage}.exclusive_prefix;
}}"""
    return "\n".join(" " * indent + line for line in code.split("\n"))

PUBLISH_AND_LOOK_BACK = publish_and_look_back()

def claim_tile_code(storage):
    # The block's tile id, broadcast through `storage.tile_id`; blocks past the end leave.
    return f"""    if (threadIdx.x == 0) {{
        {storage}.tile_id = scan_claim_tile(ts, epoch);
    }}
    __syncthreads();
    const u32 tile = {storage}.tile_id;
    if ((u64)tile >= num_tiles) {{
        return;
    }}"""

def with_claim(kernel):
    # Substitutes CLAIM_TILE("<storage>") placeholders; prepends scan_claim_tile.
    kernel = re.sub(r'CLAIM_TILE\("(\w+)"\)', lambda m: claim_tile_code(m.group(1)), kernel)
    return CLAIM_TILE_FN + "\n" + kernel

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

def timeline(s):
    # Instrumented (results still checked): thread 0 of every block records its SM, the global
    # timer at start and end, and clock64 offsets of each phase, into the tile state past the
    # statuses (the harness sizes it and dumps it with TIMELINE=<file>). Also counts look-back
    # window reads and window slides.
    timer = """__device__ __forceinline__ long long tl_clock() {
    long long c;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c) : : "memory");
    return c;
}
__device__ __forceinline__ unsigned long long tl_gtimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
    return t;
}
__device__ __forceinline__ u32 tl_smid() {
    u32 r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}
"""
    s = must(s, "__device__ __forceinline__ T scan_look_back(const ScanTileState& ts, u32 tile, u32 epoch, u32 lane) {",
             timer + "__device__ __forceinline__ T scan_look_back(const ScanTileState& ts, u32 tile, u32 epoch, u32 lane, u32& polls, u32& slides) {")
    s = must(s, "        const u32 polled = ts.poll(slot, epoch, word);", "        ++polls;\n        const u32 polled = ts.poll(slot, epoch, word);")
    s = must(s, "        window_end -= SCAN_LOOK_BACK_WINDOW;\n", "        ++slides;\n        window_end -= SCAN_LOOK_BACK_WINDOW;\n")
    s = must(s, "    __shared__ ScanTileStorage storage;\n    const u64 num_tiles",
             "    __shared__ ScanTileStorage storage;\n    const unsigned long long g0 = tl_gtimer();\n    const long long c0 = tl_clock();\n    u32 polls = 0, slides = 0;\n    long long c4 = 0;\n    const u64 num_tiles")
    s = must(s, "    const u32 tile = storage.tile_id;\n    const u64 base", "    const u32 tile = storage.tile_id;\n    const long long c1 = tl_clock();\n    const u64 base")
    s = must(s, "    T thread_exclusive;\n    T aggregate;\n    scan_block_exclusive(scan_thread_reduce(items), thread_exclusive, aggregate, storage.block);\n",
             "    const long long c2 = tl_clock();\n    T thread_exclusive;\n    T aggregate;\n    scan_block_exclusive(scan_thread_reduce(items), thread_exclusive, aggregate, storage.block);\n    const long long c3 = tl_clock();\n")
    s = must(s, "scan_look_back(ts, tile, epoch, lane);\n        if (lane == 0) {", "scan_look_back(ts, tile, epoch, lane, polls, slides);\n        c4 = tl_clock();\n        if (lane == 0) {")
    s = must(s, "        tile_prefix = storage.exclusive_prefix;\n    }\n", "        tile_prefix = storage.exclusive_prefix;\n    }\n    const long long c5 = tl_clock();\n")
    end = s.rindex("\n}")
    rec = """
    const long long c6 = tl_clock();
    if (threadIdx.x == 0) {
        unsigned long long* r = (unsigned long long*)((char*)tile_state + SCAN_TILE_STATE_HEADER + 8 * num_tiles) + 8 * (u64)tile;
        r[0] = tl_smid();
        r[1] = g0;
        r[2] = tl_gtimer();
        r[3] = (u64)(c1 - c0) | ((u64)(c2 - c0) << 32);
        r[4] = (u64)(c3 - c0) | ((u64)(c4 ? c4 - c0 : 0) << 32);
        r[5] = (u64)(c5 - c0) | ((u64)(c6 - c0) << 32);
        r[6] = (u64)polls | ((u64)slides << 32);
        r[7] = blockIdx.x;
    }"""
    return s[:end] + rec + s[end:]

def sleep(s, ns):
    return must(s, "    __nanosleep(64);", f"    __nanosleep({ns});" if ns else "    // spin")

DFR_LOOK_BACK = """// Exclusive prefix of tile f, once f itself has published (so its block has read its input).
// has_prefix = false for f == 0.
__device__ __forceinline__ T dfr_look_back(const ScanTileState& ts, u32 f, u32 epoch, u32 lane) {
    i64 window_end = (i64)f;
    T prefix = scan_identity();
    bool have_prefix = false;
    bool self_ready = false;
    for (;;) {
        const i64 pred = window_end - (i64)SCAN_WARP_THREADS + (i64)lane;
        const u32 slot = pred >= 0 ? (u32)pred : 0u;
        ScanPolledStatus word, self_word;
        const u32 polled = ts.poll(slot, epoch, word);
        const u32 self_state = self_ready ? SCAN_STATUS_AGGREGATE : ts.poll(f, epoch, self_word);
        const u32 state = pred >= 0 ? polled : SCAN_STATUS_INCLUSIVE;
        if (!__all_sync(0xffffffffu, state != SCAN_STATUS_NOT_READY && self_state != SCAN_STATUS_NOT_READY)) {
            scan_look_back_pause();
            continue;
        }
        self_ready = true;
        if (f == 0) {
            return prefix;
        }
        const T v = ts.value(word);
        const T value = pred >= 0 ? v : scan_identity();
        const u32 inclusive_lanes = __ballot_sync(0xffffffffu, state == SCAN_STATUS_INCLUSIVE);
        const u32 nearest = inclusive_lanes != 0 ? 31 - __clz(inclusive_lanes) : 0;
        const T window = scan_shfl_idx(scan_warp_suffix_reduce(value, lane), nearest);
        prefix = have_prefix ? scan_combine(window, prefix) : window;
        have_prefix = true;
        if (inclusive_lanes != 0) {
            return prefix;
        }
        window_end -= SCAN_WARP_THREADS;
    }
}
"""

def deferred_seq(s):
    # Deferred finishing, one tile after the other: the block that claims tile k loads and
    # reduces it, publishes its aggregate and (unless k is among the last `lag` tiles) leaves it
    # to block k + lag; then it finishes tile f = k - lag, whose predecessors published long ago,
    # re-reading it (from L2) with the ordinary tile path. Inclusive only.
    start = s.index("extern \"C\" __global__ void SCAN_LAUNCH_BOUNDS\nscangen_single_pass")
    k = """extern "C" __global__ void SCAN_LAUNCH_BOUNDS
scangen_single_pass(const T* in, T* out, unsigned long long n, void* tile_state, unsigned int epoch, unsigned int lag) {
    __shared__ ScanTileStorage storage;
    __shared__ ScanBlockStorage finish_block;
    const u64 num_tiles = n / SCAN_TILE_ITEMS + (n % SCAN_TILE_ITEMS != 0 ? 1 : 0);
    const ScanTileState ts(tile_state);
CLAIM_TILE("storage")
    const u64 base = (u64)tile * SCAN_TILE_ITEMS;
    const u64 remaining = n - base;
    const bool full = remaining >= SCAN_TILE_ITEMS;
    const u32 valid = full ? SCAN_TILE_ITEMS : (u32)remaining;
    T items[SCAN_ITEMS_PER_THREAD];
    if (full) {
        scan_load_tile<false>(in + base, valid, items, storage.tile);
    } else {
        scan_load_tile<true>(in + base, valid, items, storage.tile);
    }
    T thread_exclusive;
    T aggregate;
    scan_block_exclusive(scan_thread_reduce(items), thread_exclusive, aggregate, storage.block);
    if (threadIdx.x == 0) {
        ts.publish(tile, tile == 0 ? SCAN_STATUS_INCLUSIVE : SCAN_STATUS_AGGREGATE, aggregate, epoch);
    }
    // Finish tile - lag (if any), then this tile itself if no block comes `lag` tiles after it
    // (re-read from L2 rather than kept in registers: one copy of the finishing code).
    const u32 none = 0xffffffffu;
    const u32 todo0 = tile >= lag ? tile - lag : none;
    const u32 todo1 = (u64)tile + lag >= num_tiles ? tile : none;
#pragma unroll 1
    for (u32 pass = 0; pass < 2; ++pass) {
        const u32 f = pass == 0 ? todo0 : todo1;
        if (f == none) {
            continue;  // uniform across the block
        }
        const u64 fbase = (u64)f * SCAN_TILE_ITEMS;
        const u64 frem = n - fbase;
        const bool ffull = frem >= SCAN_TILE_ITEMS;
        const u32 fvalid = ffull ? SCAN_TILE_ITEMS : (u32)frem;
        __syncwarp();  // this warp's reads of its slice are done before it is refilled
        if (ffull) {
            scan_load_tile<false>(in + fbase, fvalid, items, storage.tile);
        } else {
            scan_load_tile<true>(in + fbase, fvalid, items, storage.tile);
        }
        T f_aggregate;
        scan_block_exclusive(scan_thread_reduce(items), thread_exclusive, f_aggregate, finish_block);
        if (threadIdx.x < SCAN_WARP_THREADS) {
            const T prefix = dfr_look_back(ts, f, epoch, threadIdx.x);
            if (threadIdx.x == 0) {
                ts.publish(f, SCAN_STATUS_INCLUSIVE, f > 0 ? scan_combine(prefix, f_aggregate) : f_aggregate, epoch);
                storage.exclusive_prefix = prefix;
            }
        }
        __syncthreads();
        if (ffull) {
            scan_finish_tile<false, false>(items, thread_exclusive, f > 0, storage.exclusive_prefix, out + fbase, fvalid, storage);
        } else {
            scan_finish_tile<true, false>(items, thread_exclusive, f > 0, storage.exclusive_prefix, out + fbase, fvalid, storage);
        }
    }
}
"""
    return s[:start] + with_claim(DFR_LOOK_BACK + k)

def hybrid(s, smem_half):
    # Each thread holds 64 items (256 bytes) in registers, loaded and stored directly in blocked
    # order with 16-byte vectors (no transpose buffer). With smem_half, the tile is twice as big:
    # its second half goes global -> shared with 16-byte cp.async (swizzled so each thread's own
    # blocked reads are conflict-free) and never occupies registers, so a block keeps 64 KiB in
    # flight at 6 blocks per SM. i32 only, inclusive.
    start = s.index("extern \"C\" __global__ void SCAN_LAUNCH_BOUNDS\nscangen_single_pass")
    tile_expr = "(2 * SCAN_TILE_ITEMS)" if smem_half else "SCAN_TILE_ITEMS"
    k = """
constexpr u32 HY_VEC = 16 / sizeof(T);                       // items per 16-byte vector
constexpr u32 HY_VECS = SCAN_ITEMS_PER_THREAD / HY_VEC;      // vectors per thread
constexpr u64 HY_TILE = TILE_EXPR;
struct HyStorage {
    int4 half[SMEM_HALF ? SCAN_TILE_ITEMS / HY_VEC : 1];
    ScanBlockStorage block_a;
    ScanBlockStorage block_b;
    T exclusive_prefix;
    u32 tile_id;
};
__device__ __forceinline__ u32 hy_slot(u32 t, u32 j) {
    return t * HY_VECS + (j ^ (t & 7u));
}
__device__ __forceinline__ void hy_cp_async16(void* smem, const void* g) {
    const u32 a = (u32)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" : : "r"(a), "l"(g) : "memory");
}
union HyVec {
    int4 v;
    T e[HY_VEC];
};
extern "C" __global__ void SCAN_LAUNCH_BOUNDS
scangen_single_pass(const T* in, T* out, unsigned long long n, void* tile_state, unsigned int epoch) {
    __shared__ HyStorage storage;
    const u64 num_tiles = n / HY_TILE;   // experiment: n is a multiple of the tile
    const ScanTileState ts(tile_state);
CLAIM_TILE("storage")
    const u32 t = threadIdx.x;
    const T* tin = in + (u64)tile * HY_TILE;
    T* tout = out + (u64)tile * HY_TILE;
    if (SMEM_HALF) {
        const int4* src = (const int4*)(tin + SCAN_TILE_ITEMS + t * SCAN_ITEMS_PER_THREAD);
#pragma unroll
        for (u32 j = 0; j < HY_VECS; ++j) {
            hy_cp_async16(&storage.half[hy_slot(t, j)], src + j);
        }
        asm volatile("cp.async.commit_group;" : : : "memory");
    }
    T items[SCAN_ITEMS_PER_THREAD];
    {
        const int4* src = (const int4*)(tin + t * SCAN_ITEMS_PER_THREAD);
#pragma unroll
        for (u32 j = 0; j < HY_VECS; ++j) {
            HyVec v;
            v.v = src[j];
#pragma unroll
            for (u32 e = 0; e < HY_VEC; ++e) {
                items[j * HY_VEC + e] = v.e[e];
            }
        }
    }
    T excl_a, agg_a, excl_b, agg_b, aggregate;
    if (SMEM_HALF) {
        const T red_a = scan_thread_reduce(items);
        asm volatile("cp.async.wait_all;" : : : "memory");  // this thread's own copies
        HyVec v;
        v.v = storage.half[hy_slot(t, 0)];
        T acc = v.e[0];
#pragma unroll
        for (u32 e = 1; e < HY_VEC; ++e) acc = scan_combine(acc, v.e[e]);
#pragma unroll
        for (u32 j = 1; j < HY_VECS; ++j) {
            v.v = storage.half[hy_slot(t, j)];
#pragma unroll
            for (u32 e = 0; e < HY_VEC; ++e) acc = scan_combine(acc, v.e[e]);
        }
        // both halves' block scans with one barrier
        const u32 lane = t % SCAN_WARP_THREADS;
        const u32 warp = t / SCAN_WARP_THREADS;
        const T inc_a = scan_warp_inclusive(red_a, lane);
        const T inc_b = scan_warp_inclusive(acc, lane);
        const T wex_a = scan_shfl_up(inc_a, 1);
        const T wex_b = scan_shfl_up(inc_b, 1);
        if (lane == SCAN_WARP_THREADS - 1) {
            storage.block_a.warp_totals[warp] = inc_a;
            storage.block_b.warp_totals[warp] = inc_b;
        }
        __syncthreads();
        T wp_a = scan_identity(), wp_b = scan_identity();
        T run_a = storage.block_a.warp_totals[0], run_b = storage.block_b.warp_totals[0];
#pragma unroll
        for (u32 w = 1; w < SCAN_WARPS; ++w) {
            if (warp == w) { wp_a = run_a; wp_b = run_b; }
            run_a = scan_combine(run_a, storage.block_a.warp_totals[w]);
            run_b = scan_combine(run_b, storage.block_b.warp_totals[w]);
        }
        agg_a = run_a;
        agg_b = run_b;
        if (lane == 0) { excl_a = wp_a; excl_b = wp_b; }
        else if (warp == 0) { excl_a = wex_a; excl_b = wex_b; }
        else { excl_a = scan_combine(wp_a, wex_a); excl_b = scan_combine(wp_b, wex_b); }
        aggregate = scan_combine(agg_a, agg_b);
    } else {
        scan_block_exclusive(scan_thread_reduce(items), excl_a, agg_a, storage.block_a);
        excl_b = agg_b = aggregate = agg_a;
    }
PUBLISH_AND_LOOK_BACK_4
    const bool first_thread = t == 0;
    // first half: registers
    {
        T seed;
        if (first_thread) seed = tile_prefix;
        else if (tile > 0) seed = scan_combine(tile_prefix, excl_a);
        else seed = excl_a;
        scan_thread_scan<false>(items, seed, tile > 0 || !first_thread);
        int4* dst = (int4*)(tout + t * SCAN_ITEMS_PER_THREAD);
#pragma unroll
        for (u32 j = 0; j < HY_VECS; ++j) {
            HyVec v;
#pragma unroll
            for (u32 e = 0; e < HY_VEC; ++e) v.e[e] = items[j * HY_VEC + e];
            dst[j] = v.v;
        }
    }
    if (SMEM_HALF) {
        // seed = prefix (+) first half (+) threads before t in the second half
        T run = tile > 0 ? scan_combine(tile_prefix, agg_a) : agg_a;
        if (!first_thread) run = scan_combine(run, excl_b);
        int4* dst = (int4*)(tout + SCAN_TILE_ITEMS + t * SCAN_ITEMS_PER_THREAD);
#pragma unroll
        for (u32 j = 0; j < HY_VECS; ++j) {
            HyVec v;
            v.v = storage.half[hy_slot(t, j)];
#pragma unroll
            for (u32 e = 0; e < HY_VEC; ++e) {
                run = scan_combine(run, v.e[e]);
                v.e[e] = run;
            }
            dst[j] = v.v;
        }
    }
}
"""
    k = k.replace("PUBLISH_AND_LOOK_BACK_4", publish_and_look_back(indent=4))
    return s[:start] + with_claim(k.replace("TILE_EXPR", tile_expr).replace("SMEM_HALF", "true" if smem_half else "false"))

def hybrid2(s, a_items=64, b_items=64):
    # Tile of 2 x 8192 i32 (64 KiB), all global accesses coalesced 16-byte vectors:
    #  half A (registers): warp-striped vector loads, transposed in 8 rounds of 1 KiB through a
    #    per-warp scratch (a thread owns 8 runs of 8 contiguous items);
    #  half B (shared memory, never in registers): cp.async 16-byte, warp-striped, to swizzled
    #    slots so each thread's blocked 64 items are read conflict-free.
    # 6 blocks per SM keep 64 KiB each in flight. Inclusive, n a multiple of the tile.
    start = s.index("extern \"C\" __global__ void SCAN_LAUNCH_BOUNDS\nscangen_single_pass")
    k = r"""
constexpr u32 H_VEC = 4;                                   // i32 per 16-byte chunk
constexpr u32 H_A_ITEMS = @A@;                         // per thread, registers
constexpr u32 H_B_ITEMS = @B@;                         // per thread, shared memory
constexpr u32 H_HALF = SCAN_BLOCK_THREADS * H_A_ITEMS;     // items in half A
constexpr u64 H_TILE = (u64)SCAN_BLOCK_THREADS * (H_A_ITEMS + H_B_ITEMS);
constexpr u32 H_ROUNDS = H_A_ITEMS / 8;                    // half A: rounds of 256 items per warp
constexpr u32 H_A_CHUNKS = 32 * H_A_ITEMS / H_VEC;         // chunks per warp in half A
constexpr u32 H_WARP_CHUNKS = 32 * H_B_ITEMS / H_VEC;      // chunks per warp in half B
constexpr u32 H_BCH = H_B_ITEMS / H_VEC;                   // chunks per thread in half B
constexpr u32 H_ROUND_CHUNKS = 64;
struct H2Storage {
    int4 b[SCAN_WARPS * H_WARP_CHUNKS];          // half B, 32 KiB
    int4 scratch[SCAN_WARPS][H_ROUND_CHUNKS];    // half A transposes, 1 KiB per warp
    T a_tot[SCAN_WARPS];
    T b_tot[SCAN_WARPS];
    T exclusive_prefix;
    u32 tile_id;
};
// half B: chunk j (0..15) of in-warp thread o lives at o * 16 + (j ^ (o & 7))
__device__ __forceinline__ u32 h_bslot(u32 o, u32 j) { return o * H_BCH + (j ^ (o & 7u)); }
// scratch: chunk c (0..63) at c ^ ((c >> 3) & 1)
__device__ __forceinline__ u32 h_sslot(u32 c) { return c ^ ((c >> 3) & 1u); }
__device__ __forceinline__ void h_cp16(void* smem, const void* g) {
    const u32 a = (u32)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" : : "r"(a), "l"(g) : "memory");
}
union HV { int4 v; T e[H_VEC]; };

extern "C" __global__ void SCAN_LAUNCH_BOUNDS
scangen_single_pass(const T* in, T* out, unsigned long long n, void* tile_state, unsigned int epoch) {
    __shared__ H2Storage st;
    const u64 num_tiles = n / H_TILE;
    const ScanTileState ts(tile_state);
CLAIM_TILE("st")
    const u32 lane = threadIdx.x % SCAN_WARP_THREADS;
    const u32 warp = threadIdx.x / SCAN_WARP_THREADS;
    const int4* ga = (const int4*)(in + (u64)tile * H_TILE) + warp * H_A_CHUNKS;
    const int4* gb = (const int4*)(in + (u64)tile * H_TILE + H_HALF) + warp * H_WARP_CHUNKS;
    int4* oa = (int4*)(out + (u64)tile * H_TILE) + warp * H_A_CHUNKS;
    int4* ob = (int4*)(out + (u64)tile * H_TILE + H_HALF) + warp * H_WARP_CHUNKS;
    int4* bw = st.b + warp * H_WARP_CHUNKS;
    // half B: global -> shared, no registers
#pragma unroll
    for (u32 i = 0; i < H_WARP_CHUNKS / 32; ++i) {
        const u32 c = i * 32 + lane;
        h_cp16(&bw[h_bslot(c / H_BCH, c % H_BCH)], gb + c);
    }
    asm volatile("cp.async.commit_group;" : : : "memory");
    // half A: striped vector loads into registers
    HV a[H_A_CHUNKS / 32];
#pragma unroll
    for (u32 i = 0; i < H_A_CHUNKS / 32; ++i) {
        a[i].v = ga[i * 32 + lane];
    }
    // transpose A in rounds: round r = striped chunks 2r, 2r+1 (64 chunks) -> lane l's run =
    // chunks 2l, 2l+1 of the round
    int4* sw = st.scratch[warp];
    T ex_a[H_ROUNDS];      // exclusive within the warp's A region (not for lane 0 of round 0)
    T wa;                  // the warp's A total so far
#pragma unroll
    for (u32 r = 0; r < H_ROUNDS; ++r) {
        sw[h_sslot(lane)] = a[2 * r].v;
        sw[h_sslot(32 + lane)] = a[2 * r + 1].v;
        __syncwarp();
        a[2 * r].v = sw[h_sslot(2 * lane)];
        a[2 * r + 1].v = sw[h_sslot(2 * lane + 1)];
        __syncwarp();
        T acc = a[2 * r].e[0];
#pragma unroll
        for (u32 e = 1; e < H_VEC; ++e) acc = scan_combine(acc, a[2 * r].e[e]);
#pragma unroll
        for (u32 e = 0; e < H_VEC; ++e) acc = scan_combine(acc, a[2 * r + 1].e[e]);
        const T inc = scan_warp_inclusive(acc, lane);
        const T up = scan_shfl_up(inc, 1);
        const T tot = scan_shfl_idx(inc, 31);
        if (r == 0) {
            ex_a[0] = up;
            wa = tot;
        } else {
            ex_a[r] = lane == 0 ? wa : scan_combine(wa, up);
            wa = scan_combine(wa, tot);
        }
    }
    // half B: this warp's copies are done; each thread reduces its blocked 64 items
    asm volatile("cp.async.wait_all;" : : : "memory");
    __syncwarp();
    T pb;
    {
        HV v;
        v.v = bw[h_bslot(lane, 0)];
        pb = v.e[0];
#pragma unroll
        for (u32 e = 1; e < H_VEC; ++e) pb = scan_combine(pb, v.e[e]);
#pragma unroll
        for (u32 j = 1; j < H_BCH; ++j) {
            v.v = bw[h_bslot(lane, j)];
#pragma unroll
            for (u32 e = 0; e < H_VEC; ++e) pb = scan_combine(pb, v.e[e]);
        }
    }
    const T inc_b = scan_warp_inclusive(pb, lane);
    const T ex_b = scan_shfl_up(inc_b, 1);
    if (lane == 31) {
        st.b_tot[warp] = inc_b;
    }
    if (lane == 0) {
        st.a_tot[warp] = wa;
    }
    __syncthreads();
    T a_prefix = scan_identity(), b_prefix = scan_identity();   // warp's prefix in each half
    T ra = st.a_tot[0], rb = st.b_tot[0];
#pragma unroll
    for (u32 w = 1; w < SCAN_WARPS; ++w) {
        if (warp == w) { a_prefix = ra; b_prefix = rb; }
        ra = scan_combine(ra, st.a_tot[w]);
        rb = scan_combine(rb, st.b_tot[w]);
    }
    const T agg_a = ra;
    const T aggregate = scan_combine(ra, rb);
PUBLISH_AND_LOOK_BACK_ST
    const bool has_tp = tile > 0;
    // half A: seeds per round, scan, transpose back, store
#pragma unroll
    for (u32 r = 0; r < H_ROUNDS; ++r) {
        // everything before (warp, r, lane): tile prefix, earlier warps, earlier rounds/lanes
        const bool first_seg = warp == 0 && r == 0 && lane == 0;
        T seed = tp;
        bool has_seed = has_tp;
        if (warp > 0) { seed = has_seed ? scan_combine(seed, a_prefix) : a_prefix; has_seed = true; }
        if (r > 0 || lane > 0) { seed = has_seed ? scan_combine(seed, ex_a[r]) : ex_a[r]; has_seed = true; }
        (void)first_seg;
        T run = has_seed ? scan_combine(seed, a[2 * r].e[0]) : a[2 * r].e[0];
        a[2 * r].e[0] = run;
#pragma unroll
        for (u32 e = 1; e < H_VEC; ++e) { run = scan_combine(run, a[2 * r].e[e]); a[2 * r].e[e] = run; }
#pragma unroll
        for (u32 e = 0; e < H_VEC; ++e) { run = scan_combine(run, a[2 * r + 1].e[e]); a[2 * r + 1].e[e] = run; }
        sw[h_sslot(2 * lane)] = a[2 * r].v;
        sw[h_sslot(2 * lane + 1)] = a[2 * r + 1].v;
        __syncwarp();
        oa[(2 * r) * 32 + lane] = sw[h_sslot(lane)];
        oa[(2 * r + 1) * 32 + lane] = sw[h_sslot(32 + lane)];
        __syncwarp();
    }
    // half B: scan in place in shared memory, then striped vector stores
    {
        T run = has_tp ? scan_combine(tp, agg_a) : agg_a;
        if (warp > 0) run = scan_combine(run, b_prefix);
        if (lane > 0) run = scan_combine(run, ex_b);
#pragma unroll
        for (u32 j = 0; j < H_BCH; ++j) {
            HV v;
            v.v = bw[h_bslot(lane, j)];
#pragma unroll
            for (u32 e = 0; e < H_VEC; ++e) { run = scan_combine(run, v.e[e]); v.e[e] = run; }
            bw[h_bslot(lane, j)] = v.v;
        }
        __syncwarp();
#pragma unroll
        for (u32 i = 0; i < H_WARP_CHUNKS / 32; ++i) {
            const u32 c = i * 32 + lane;
            ob[c] = bw[h_bslot(c / H_BCH, c % H_BCH)];
        }
    }
}
"""
    k = k.replace("PUBLISH_AND_LOOK_BACK_ST", publish_and_look_back("st", "tp", indent=4))
    return s[:start] + with_claim(k.replace("@A@", str(a_items)).replace("@B@", str(b_items)))

# ---- L2 staging: data for later tiles requested ahead, without registers -------------------------
SIG5 = "scangen_single_pass(const T* in, T* out, unsigned long long n, void* tile_state, unsigned int epoch) {"
SIG6 = "scangen_single_pass(const T* in, T* out, unsigned long long n, void* tile_state, unsigned int epoch, unsigned int ahead) {"
PF_FN = """// One bulk request (sm_90) asks L2 to fetch tile `t` (if it is whole); no registers, no wait.
__device__ __forceinline__ void pf_tile(const T* in, unsigned long long n, u64 t, u64 policy, bool hinted) {
    if ((t + 1) * SCAN_TILE_ITEMS <= n) {
        const T* p = in + t * SCAN_TILE_ITEMS;
        if (hinted) {
            asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" : : "l"(p), "r"((u32)(SCAN_TILE_ITEMS * sizeof(T))), "l"(policy) : "memory");
        } else {
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" : : "l"(p), "r"((u32)(SCAN_TILE_ITEMS * sizeof(T))) : "memory");
        }
    }
}
__device__ __forceinline__ u64 pf_policy_evict_last() {
    u64 p;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    return p;
}
__device__ __forceinline__ u64 pf_policy_evict_first() {
    u64 p;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    return p;
}
"""

def prefetch_ahead(s, hint_last=False, k=1):
    # After claiming tile t, thread 0 asks L2 for tiles t + ahead .. t + ahead + k - 1 (harness
    # LAG = ahead): by the time a block claims one of them its bytes are in L2 or on their way,
    # so DRAM requests go out `ahead` tiles earlier than the loads that need them.
    s = must(s, SIG5, SIG6)
    s = must(s, "        storage.tile_id = tile;\n    }\n", """        storage.tile_id = tile;
        if (ahead != 0) {
            const u64 pol = pf_policy_evict_last();
#pragma unroll
            for (u32 j = 0; j < %d; ++j) {
                pf_tile(in, n, (u64)tile + ahead + j, pol, %s);
            }
        }
    }
""" % (k, "true" if hint_last else "false"))
    return must(s, "extern \"C\" __global__ void SCAN_LAUNCH_BOUNDS\nscangen_single_pass", PF_FN + "\nextern \"C\" __global__ void SCAN_LAUNCH_BOUNDS\nscangen_single_pass")

def prefetch_self(s):
    # Small inputs: thread 0 asks L2 for tile blockIdx.x before the tile-id atomic returns (the
    # block usually gets that id), so the atomic's round trip overlaps the DRAM latency.
    s = must(s, "    if (threadIdx.x == 0) {\n        const u32 tile = atomicAdd", """    if (threadIdx.x == 0) {
        pf_tile(in, n, blockIdx.x, 0, false);
    }
    if (threadIdx.x == 0) {
        const u32 tile = atomicAdd""")
    return must(s, "extern \"C\" __global__ void SCAN_LAUNCH_BOUNDS\nscangen_single_pass", PF_FN + "\nextern \"C\" __global__ void SCAN_LAUNCH_BOUNDS\nscangen_single_pass")

def evict_first_loads(s, stores=False):
    # The tile's own loads (and stores) tell L2 their lines are dead after this access, so the
    # lines requested ahead stay.
    s = must(s, "template <bool IS_PARTIAL>\n__device__ __forceinline__ void scan_load_tile(", """__device__ __forceinline__ T ld_ef(const T* p, u64 pol) {
    T v;
    asm volatile("ld.global.L2::cache_hint.b32 %0, [%1], %2;" : "=r"(v) : "l"(p), "l"(pol));
    return v;
}
__device__ __forceinline__ void st_ef(T* p, T v, u64 pol) {
    asm volatile("st.global.L2::cache_hint.b32 [%0], %1, %2;" : : "l"(p), "r"(v), "l"(pol) : "memory");
}
template <bool IS_PARTIAL>
__device__ __forceinline__ void scan_load_tile(""")
    s = must(s, LOAD, """            u64 pol;
            asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
            v = ld_ef(tile_in + idx, pol);""")
    if stores:
        s = must(s, STORE, """            u64 pol;
            asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
            st_ef(tile_out + idx, smem[scan_smem_index(idx)], pol);""")
    return s

# ---- 8-byte elements (emitted with --type i64; harness op add64) ---------------------------------
if prefix.startswith("i64"):
    # (The status-protocol variants measured in session 4, acquire polls with a fence or a
    # 32-bit packed status, edited the kernel before its tile state became tagged words;
    # BENCHMARKS.md has their numbers.)
    for name, text in {"base": base, "tilecopy": tilecopy(base)}.items():
        open(os.path.join(outdir, f"{prefix}_{name}.cu"), "w").write(text)
        print(f"{prefix}_{name}")
    sys.exit(0)

variants = {
    "base": base,
    "timeline": timeline(base),
    "spin": sleep(base, 0),
    "direct": hybrid(base, False),
    "hybrid": hybrid(base, True),
    "hybrid_lb5": lb(hybrid(base, True), 5),
    "hybrid2": hybrid2(base),
    "hybrid2_lb5": lb(hybrid2(base), 5),
    "hybrid2_32_lb7": lb(hybrid2(base, 32, 32), 7),
    "hybrid2_32_lb8": lb(hybrid2(base, 32, 32), 8),
    "hybrid2_32_lb9": lb(hybrid2(base, 32, 32), 9),
    "hybrid2_32_lb10": lb(hybrid2(base, 32, 32), 10),
    "hybrid_32_lb8": lb(dynamic2(hybrid(base, True), 128, 32), 8),
    "hybrid_32_lb7": lb(dynamic2(hybrid(base, True), 128, 32), 7),
    "hybrid_32_lb6": lb(dynamic2(hybrid(base, True), 128, 32), 6),
    "deferred_seq": deferred_seq(base),
    "sleep16": sleep(base, 16),
    "sleep256": sleep(base, 256),
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
    "pf": prefetch_ahead(base),
    "pf2": prefetch_ahead(base, k=2),
    "pfl": prefetch_ahead(base, hint_last=True),
    "pf_ef": evict_first_loads(prefetch_ahead(base)),
    "pfl_ef": evict_first_loads(prefetch_ahead(base, hint_last=True)),
    "pfl_efst": evict_first_loads(prefetch_ahead(base, hint_last=True), stores=True),
    "pfself_128x16": dynamic(prefetch_self(base), 128, 16),
    "base_128x16": dynamic(base, 128, 16),
}
for name, text in variants.items():
    open(os.path.join(outdir, f"{prefix}_{name}.cu"), "w").write(text)
    print(f"{prefix}_{name}")
