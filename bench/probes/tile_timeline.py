"""Where a single-pass scan's time goes at mid sizes: a per-tile timeline.

Takes kernels printed by `scangen emit` (plain single-pass, no segments), adds %globaltimer
probes at the tile's phase boundaries (thread 0 of each block: entry, tile claimed, tile reduced,
prefix known, prefix shared, stores issued), launches them through CuPy, and prints

* the scan's device time (behind a spinning kernel, so the events bracket only GPU work) beside
  a device-to-device copy of the same bytes, and
* per phase, the median and the slowest tile's duration, and when the last tile started and
  ended relative to the first one's start.

Usage (on a GPU machine): python3 tile_timeline.py LOG2N KERNEL.cu[+spec] [...]
The element type is read from the kernel (`typedef ... V;` comes from the emitted op); struct
ops are timed and traced but not checked. A `+spec`
suffix runs the kernel changed to load tile blockIdx.x while its tile claim is in flight (kept
when the claim returns that tile, reloaded otherwise): an experiment on hiding the claim.
Kernels with resident tiles (`scangen emit --resident true`) launch cooperatively.
`+sleepN` sets the look-back's pause between polls to N ns; `+unrollN` the item path's unroll; `+staggerN` makes the first wave's
tile t wait t * N ns before loading; `+ownpf` has the first wave's tiles ask L2 for their own
tile in one bulk request. `+inoffN` / `+outoffN` put the input / output N elements past
an allocation's start (a sub-slice; the grid as the runtime's for such an output), `+nminusN`
scans 2^LOG2N - N elements; kernels from `scangen emit --reverse` or of other built-in integer
ops (max, min, mul, and, or, xor; exclusive too) are checked against NumPy. On kernels that stagger their first wave already (policy
first_wave_bytes_per_ns): `+nostagger` takes it out, `+nstaggerN` sets it to N ns a tile, and
`+tstaggerN` waits exactly t * N ns on %globaltimer instead of `__nanosleep` (which PTX bounds
only to [0, 2t]). `+bulk` loads a full tile with bulk copies (cp.async.bulk) straight into
shared memory, each lane its own run (forward scans whose padded rows are 16-byte multiples).
`+gradedR` gives the first R tiles half a tile each (a graded schedule; those go through the
bounds-checked path); `+vgradedR` keeps them on the vector path, the tile's last warps idle.
`+lbN` (N a multiple of 32) makes the look-back read N predecessors' statuses a round trip, in
windows of 32 used nearest first, and prints how many polls found a window not ready and how
many windows a tile folded (`+lb32` is the emitted algorithm, counted). `+split` publishes a
tile's aggregate and its inclusive prefix in two sets of tagged words, each written once a
launch, and polls both (no read can see one publish's words beside the other's).
"""
import os
import re
import sys

import numpy as np

cp = None  # CuPy, imported by main (instrument() runs without it)

PROBE_SLOTS = 8
PHASES = ["claim", "load+reduce", "look-back", "share prefix", "scan+store issue"]

SPIN = r"""
extern "C" __global__ void spin(unsigned long long ns, unsigned long long* end) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    for (;;) {
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > ns) {
            *end = now;
            break;
        }
    }
}

// A plain copy of 16-byte vectors, grid-stride, with each block's start and end times.
extern "C" __global__ void probed_copy(const uint4* in, uint4* out, unsigned long long n, unsigned long long* probe) {
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x) {
        out[i] = in[i];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t1;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
        probe[2 * blockIdx.x] = t0;
        probe[2 * blockIdx.x + 1] = t1;
    }
}
"""

BULK_LOAD = r"""    if (!IS_PARTIAL) {
        static_assert(SCAN_ITEMS_PER_THREAD % SCAN_SMEM_PAD_EVERY == 0, "whole padded rows per run");
        static_assert(SCAN_SMEM_PAD_EVERY * sizeof(V) % 16 == 0 && SCAN_SMEM_PAD_ELEMS * sizeof(V) % 16 == 0, "16-byte rows");
        __shared__ alignas(8) unsigned long long scan_bulk_bar[SCAN_WARPS];
        const u32 bar = (u32)__cvta_generic_to_shared(&scan_bulk_bar[threadIdx.x / SCAN_WARP_THREADS]);
        if (lane == 0) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        }
        __syncwarp();
        const u32 run = warp_base + lane * SCAN_ITEMS_PER_THREAD;
#pragma unroll
        for (u32 r = 0; r < SCAN_ITEMS_PER_THREAD / SCAN_SMEM_PAD_EVERY; ++r) {
            const u32 first = run + r * SCAN_SMEM_PAD_EVERY;
            const u32 dst = (u32)__cvta_generic_to_shared(smem + scan_smem_index(first));
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         :: "r"(dst), "l"(in + base + first), "r"(SCAN_SMEM_PAD_EVERY * (u32)sizeof(V)), "r"(bar) : "memory");
        }
        if (lane == 0) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(SCAN_WARP_ITEMS * (u32)sizeof(V)) : "memory");
        }
        u32 done = 0;
        do {
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(bar) : "memory");
        } while (!done);
    } else {"""

DEEP_LOOK_BACK = r"""
// Probe (+lbD): the look-back polls D windows of 32 predecessors at once (one round trip reads
// 32 * D statuses) and uses them nearest first while each is wholly ready. Probed builds count,
// per tile, the polls that found a window not ready and the windows folded.
#ifdef SCAN_PROBED
extern "C" __device__ unsigned int scan_lb_stats[2 * 65536];
#endif
template <u32 D>
__device__ __forceinline__ T scan_look_back_deep(const ScanTileState& ts, u32 tile, u32 epoch, u32 lane) {
    i64 window_end = (i64)tile;
    T prefix = scan_identity();
    bool have_prefix = false;
    u32 not_ready = 0, windows = 0;
    for (;;) {
        ScanPolledStatus word[D];
        u32 state[D];
        i64 pred[D];
#pragma unroll
        for (u32 d = 0; d < D; ++d) {
            pred[d] = window_end - (i64)(SCAN_WARP_THREADS * (d + 1)) + (i64)lane;
            const u32 slot = pred[d] >= 0 ? (u32)pred[d] : 0u;
            const u32 polled = ts.poll(slot, epoch, word[d]);
            state[d] = pred[d] >= 0 ? polled : SCAN_STATUS_INCLUSIVE;
        }
        if (!__all_sync(0xffffffffu, state[0] != SCAN_STATUS_NOT_READY)) {
            ++not_ready;
            scan_look_back_pause();
            continue;
        }
        bool done = false;
#pragma unroll
        for (u32 d = 0; d < D; ++d) {
            if (d > 0 && !__all_sync(0xffffffffu, state[d] != SCAN_STATUS_NOT_READY)) {
                break;
            }
            const T v = ts.value(word[d]);
            const T value = pred[d] >= 0 ? v : scan_identity();
            const u32 inclusive_lanes = __ballot_sync(0xffffffffu, state[d] == SCAN_STATUS_INCLUSIVE);
            const u32 nearest = inclusive_lanes != 0 ? 31 - __clz(inclusive_lanes) : 0u;
            const T window = scan_shfl_idx(scan_warp_suffix_reduce<SCAN_WARP_THREADS>(value, lane), nearest);
            prefix = have_prefix ? scan_combine(window, prefix) : window;
            have_prefix = true;
            ++windows;
            if (inclusive_lanes != 0) {
                done = true;
                break;
            }
            window_end -= SCAN_WARP_THREADS;
        }
        if (done) {
#ifdef SCAN_PROBED
            if (lane == 0 && tile < 65536) {
                scan_lb_stats[2 * tile] = not_ready;
                scan_lb_stats[2 * tile + 1] = windows;
            }
#endif
            return prefix;
        }
    }
}
"""

SPIN_END = None  # device buffer the spin kernel writes its end time to (main)


def spin_then(spin):
    spin((1,), (1,), (np.uint64(60_000), SPIN_END))


def instrument(src: str) -> str:
    kernel_at = src.index('extern "C" __global__ void SCAN_LAUNCH_BOUNDS')
    head, body = "#define SCAN_PROBED 1\n" + src[:kernel_at], src[kernel_at:]
    head += (
        'extern "C" __device__ unsigned long long scan_probe[8 * 65536];\n'
        "__device__ __forceinline__ unsigned long long scan_probe_now() {\n"
        "    unsigned long long t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t;\n"
        "}\n"
    )

    def put(marker, text, after=False):
        nonlocal body
        if marker not in body:
            raise SystemExit(f"marker not found: {marker!r}")
        at = body.index(marker) + (len(marker) if after else 0)
        body = body[:at] + text + body[at:]

    # (The layout takes the output too where tiles sit on its vectors: `layout(n, out)`.)
    layout = re.search(r"\n    const ScanLayout layout\([^\n]*\n", body)
    if layout is None:
        raise SystemExit("marker not found: the tile layout")
    put(layout.group(0)[1:], "    const unsigned long long _p0 = scan_probe_now();\n")
    # Tile known: after the claim's barrier, or at once for resident tiles (`scangen emit
    # --resident true`).
    claimed = "    const u32 epoch = storage.epoch;\n"
    resident = "    const u32 tile = blockIdx.x;\n"
    put(claimed if claimed in body else resident, "    const unsigned long long _p1 = scan_probe_now();\n", after=True)
    m = re.search(r"\n    scan_block_exclusive\([^\n]*\n", body)
    body = body[: m.end()] + "    const unsigned long long _p2 = scan_probe_now();\n" + body[m.end():]
    put("    // Every tile but an unseeded tile 0 has a prefix", "    const unsigned long long _p3 = scan_probe_now();\n")
    put("        tile_prefix = storage.exclusive_prefix;\n    }\n", "    const unsigned long long _p4 = scan_probe_now();\n", after=True)
    put(
        "    // The last tile writes the scan's total",
        "    if (threadIdx.x == 0) {\n"
        "        unsigned long long* p = scan_probe + (unsigned long long)tile * 8;\n"
        "        unsigned int smid; asm(\"mov.u32 %0, %%smid;\" : \"=r\"(smid));\n"
        "        p[0] = _p0; p[1] = _p1; p[2] = _p2; p[3] = _p3; p[4] = _p4; p[5] = scan_probe_now(); p[6] = smid; p[7] = blockIdx.x;\n"
        "    }\n",
    )
    return head + body


def speculate(src: str) -> str:
    """Loads tile blockIdx.x while thread 0's claim is in flight; reloads where the claim differs."""
    old_claim = """    if (threadIdx.x == 0) {
        u32 tile;
        u32 epoch;
        ts.claim(num_tiles, tile, epoch);
        storage.tile_id = tile;
        storage.epoch = epoch;
"""
    new_claim = """    unsigned long long claim_word = 0;
    if (threadIdx.x == 0) {
        claim_word = atomicAdd(ts.launch, 1ull);
    }
    const u64 guess_base = (u64)blockIdx.x * SCAN_TILE_ITEMS;
    const bool guess_full = guess_base + SCAN_TILE_ITEMS <= n && layout.vectors_fit(in, out);
    ScanItemsFor<decltype(in)>::type values;
    if (guess_full) {
        scan_load_tile<false>(in, layout, guess_base, SCAN_TILE_ITEMS, values, storage.tile);
    }
    if (threadIdx.x == 0) {
        const u32 tile = (u32)claim_word;
        const u32 previous = (u32)(claim_word >> 32);
        const u32 epoch = previous >= SCAN_MAX_EPOCH ? 1u : previous + 1u;
        if ((u64)tile + 1 == num_tiles) {
            atomicExch(ts.launch, (unsigned long long)epoch << 32);
        }
        storage.tile_id = tile;
        storage.epoch = epoch;
"""
    old_load = """    ScanItemsFor<decltype(in)>::type values;
    if (full) {"""
    new_load = """    if (!(guess_full && tile == blockIdx.x)) {
    __syncwarp();
    if (full) {"""
    for old, new in ((old_claim, new_claim), (old_load, new_load)):
        if old not in src:
            raise SystemExit(f"speculate: not found: {old[:60]!r}")
        src = src.replace(old, new, 1)
    # close the extra brace after the load's else branch
    marker = "        scan_load_tile<true>(in, layout, base, valid, values, storage.tile);\n    }\n"
    if marker not in src:
        raise SystemExit("speculate: load's else branch not found")
    return src.replace(marker, marker + "    }\n", 1)


def constant(src, name):
    return int(re.search(rf"constexpr u\d+ {name} = (\d+)", src).group(1))


def element_dtype(src):
    """The element's NumPy type, or for a struct op a byte string of its size (`sizeof(V)` from
    the kernel's static_assert): its scan is timed and traced, not checked."""
    v = re.search(r"typedef (\w+) V;", src) or re.search(r"using V = (\w+);", src)
    prims = {"i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "u8": np.uint8,
             "i8": np.int8, "u16": np.uint16, "i16": np.int16, "f32": np.float32, "f64": np.float64}
    if v.group(1) in prims:
        return prims[v.group(1)]
    return np.dtype((np.void, int(re.search(r"static_assert\(sizeof\(V\) == (\d+)", src).group(1))))


def reference(host, src):
    """The emitted scan of `host` computed with NumPy (built-in integer ops, `add` on any
    primitive; the kernel's first line names the op and the mode, `SCAN_REVERSE` the direction),
    or None where there is none to compare with."""
    head = re.match(r"// scangen: (inclusive|exclusive) single-pass scan of `(\w+)` over `(\w+)`", src)
    if head is None or host.dtype.kind == "V":
        return None
    mode, op, _ = head.groups()
    ints = host.dtype.kind in "iu"
    info = np.iinfo(host.dtype) if ints else None
    ufuncs = {"add": (np.add, 0), "mul": (np.multiply, 1), "max": (np.maximum, info and info.min),
              "min": (np.minimum, info and info.max), "and": (np.bitwise_and, -1),
              "or": (np.bitwise_or, 0), "xor": (np.bitwise_xor, 0)}
    if op not in ufuncs or (op != "add" and not ints):
        return None
    ufunc, identity = ufuncs[op]
    reverse = "constexpr bool SCAN_REVERSE = true;" in src
    x = host[::-1] if reverse else host
    with np.errstate(over="ignore"):
        scanned = ufunc.accumulate(x, dtype=host.dtype)
    if mode == "exclusive":
        scanned = np.concatenate([np.array([identity]).astype(host.dtype), scanned[:-1]])
    return scanned[::-1] if reverse else scanned


def change_number(changes, name, default=0):
    """N of a `+nameN` change (element counts: `inoffN`, `outoffN`, `nminusN`), else `default`."""
    for c in changes:
        if re.fullmatch(rf"{name}\d+", c):
            return int(c[len(name):])
    return default


def device_time(launch, spin, reps):
    times = []
    for _ in range(reps):
        spin_then(spin)
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        launch()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) * 1000.0)
    return float(np.median(times))


def transform(src, changes):
    """The emitted kernel `src` with the probe's `+changes` applied (see the module's doc)."""
    if "spec" in changes:
        src = speculate(src)
    for change in changes:
        if change.startswith("stagger"):
            # The first wave's tiles start their loads in tile order, N ns apart, so that the
            # first tiles store while later ones load (an experiment on the launch's ramp).
            marker = "    const u32 epoch = storage.epoch;\n"
            src = src.replace(marker, marker + (
                "    if ((u64)tile < SCAN_FIRST_WAVE_BLOCKS_PER_SM * scan_sm_count()) {\n"
                f"        __nanosleep(tile * {int(change[7:])}u);\n"
                "    }\n"), 1)
        if change == "nostagger":
            # The kernel's own first-wave stagger (policy first_wave_bytes_per_ns) taken out.
            call = "        scan_stagger_first_wave(tile, num_tiles);\n"
            assert call in src, "nostagger: the kernel has no stagger"
            src = src.replace(call, "", 1)
        if change.startswith("nstagger") or change.startswith("tstagger"):
            # The kernel's own stagger at N ns a tile: `n` as emitted (__nanosleep, whose sleep
            # PTX bounds only to [0, 2t]), `t` waiting on %globaltimer for exactly t * N ns after
            # the block got past its claim.
            sleep = "        __nanosleep(tile * SCAN_FIRST_WAVE_STAGGER_NS);\n"
            assert sleep in src, f"{change}: the kernel has no stagger"
            ns = int(change[8:])
            if change[0] == "n":
                wait = f"        __nanosleep(tile * {ns}u);\n"
            else:
                wait = ("        u64 scan_t0; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(scan_t0));\n"
                        f"        for (u64 t = scan_t0; t - scan_t0 < (u64)tile * {ns}u;) {{\n"
                        "            __nanosleep(32);\n"
                        "            asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
                        "        }\n")
            src = src.replace(sleep, wait, 1)
        if change.startswith("vgraded"):
            # `+gradedR` on the vector path: a half tile takes the full path with its second half
            # of warps idle (identity items in shared memory, no global stores).
            load = "    if (!IS_PARTIAL) {\n#pragma unroll\n        for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD / SCAN_VECTOR_ITEMS; ++i) {\n"
            at = src.index(load)
            end = src.index("\n    } else {", at)
            body = src[at + len("    if (!IS_PARTIAL) {\n"):end]
            src = src[:at] + ("    if (!IS_PARTIAL) {\n    if (warp_base < valid) {\n" + body +
                              "\n    } else {\n#pragma unroll\n        for (u32 i = 0; i < SCAN_ITEMS_PER_THREAD; ++i) {\n"
                              "            smem[scan_smem_index(warp_base + i * SCAN_WARP_THREADS + lane)] = scan_value_identity();\n"
                              "        }\n    }") + src[end:]
            store = src.index("    __syncwarp();  // the warp's blocked writes are visible to its striped reads\n    if (!IS_PARTIAL) {\n")
            at = src.index("    if (!IS_PARTIAL) {\n", store)
            end = src.index("\n    } else {", at)
            body = src[at + len("    if (!IS_PARTIAL) {\n"):end]
            src = src[:at] + "    if (!IS_PARTIAL) {\n    if (warp_base < valid) {\n" + body + "\n    }" + src[end:]
            full = "    const bool full = valid == SCAN_TILE_ITEMS && layout.vectors_fit(in, out);\n"
            assert full in src, "vgraded: the full-tile test not found"
            src = src.replace(full, "    const bool full = valid == span && layout.vectors_fit(in, out);\n", 1)
            change = change[1:]
        if change.startswith("graded"):
            # A graded tile schedule: the first R tiles hold half a tile each (through the
            # bounds-checked path, `valid` = half), every later tile a whole one, so the first wave
            # holds half the bytes. Tile t < R starts at t * T/2, later ones at R * T/2 +
            # (t - R) * T; the stagger's wait halves with the tile.
            graded = int(change[6:])
            defs = re.search(r"constexpr u32 SCAN_TILE_ITEMS = \d+;\n", src).group(0)
            src = src.replace(defs, defs + (
                f"constexpr u64 SCAN_GRADED_TILES = {graded};\n"
                "constexpr u64 SCAN_GRADED_ITEMS = SCAN_TILE_ITEMS / 2;\n"
                "__host__ __device__ constexpr u64 scan_graded_base(u64 t) {\n"
                "    return t < SCAN_GRADED_TILES ? t * SCAN_GRADED_ITEMS\n"
                "                                 : SCAN_GRADED_TILES * SCAN_GRADED_ITEMS + (t - SCAN_GRADED_TILES) * SCAN_TILE_ITEMS;\n"
                "}\n"), 1)
            for old_text, new_text in [
                ("    const u64 num_tiles = n / SCAN_TILE_ITEMS + (n % SCAN_TILE_ITEMS != 0 ? 1 : 0);\n",
                 "    const u64 scan_head = SCAN_GRADED_TILES * SCAN_GRADED_ITEMS;\n"
                 "    const u64 num_tiles = n <= scan_head ? (n + SCAN_GRADED_ITEMS - 1) / SCAN_GRADED_ITEMS\n"
                 "                                         : SCAN_GRADED_TILES + (n - scan_head + SCAN_TILE_ITEMS - 1) / SCAN_TILE_ITEMS;\n"),
                ("    const u64 base = (u64)tile * SCAN_TILE_ITEMS;\n", "    const u64 base = scan_graded_base(tile);\n"),
                ("    const u32 valid = remaining >= SCAN_TILE_ITEMS ? SCAN_TILE_ITEMS : (u32)remaining;\n",
                 "    const u32 span = (u64)tile < SCAN_GRADED_TILES ? (u32)SCAN_GRADED_ITEMS : SCAN_TILE_ITEMS;\n"
                 "    const u32 valid = remaining >= span ? span : (u32)remaining;\n"),
                ("    u64 first = tile * SCAN_TILE_ITEMS;\n", "    u64 first = scan_graded_base(tile);\n"),
                ("        const u64 wait = (u64)tile * SCAN_FIRST_WAVE_STAGGER_NS;\n",
                 "        const u64 wait = (u64)tile * SCAN_FIRST_WAVE_STAGGER_NS / ((u64)tile < SCAN_GRADED_TILES ? 2 : 1);\n"),
            ]:
                assert old_text in src, f"graded: not found: {old_text[:50]!r}"
                src = src.replace(old_text, new_text)
        if change == "bulk":
            # A full tile's loads as Hopper bulk copies (cp.async.bulk, the TMA's 1-D form): each
            # lane copies its own run, a padded row of the transpose buffer at a time, straight
            # into shared memory, and the warp waits on one mbarrier for its 32 runs. No
            # registers hold loads in flight, so a tile's whole 32 KB is requested at once.
            loop = re.search(r"    if \(!IS_PARTIAL\) \{\n#pragma unroll\n        for \(u32 i = 0; i < SCAN_ITEMS_PER_THREAD / SCAN_VECTOR_ITEMS; \+\+i\) \{\n.*?\n        \}\n    \} else \{", src, re.S)
            assert loop, "bulk: the full tile's load loop not found"
            src = src.replace(loop.group(0), BULK_LOAD, 1)
        if change == "ownpf":
            # The first wave's tiles ask L2 for their own tile in one bulk request before loading
            # it (later tiles' were asked for by the tile SCAN_L2_PREFETCH_TILES before them).
            fn = re.search(r"template <class U>\n__device__ __forceinline__ void scan_prefetch_tile_l2\(.*?\n}\n", src, re.S).group(0)
            own = fn.replace("scan_prefetch_tile_l2", "scan_prefetch_own_l2").replace(
                "if (first >= n || tile < SCAN_FIRST_WAVE_BLOCKS_PER_SM * scan_sm_count()) {", "if (first >= n) {")
            src = src.replace(fn, fn + own, 1)
            call = "        scan_prefetch_tile_l2(in, n, (u64)tile + SCAN_L2_PREFETCH_TILES);\n"
            assert call in src
            src = src.replace(call, call + "        if ((u64)tile < SCAN_FIRST_WAVE_BLOCKS_PER_SM * scan_sm_count()) {\n"
                              "            scan_prefetch_own_l2(in, n, (u64)tile);\n        }\n", 1)
        if re.fullmatch(r"lb\d+", change):
            # The look-back reads N predecessors' statuses a round trip (N = 32 * D; +lb32 is
            # the emitted algorithm, counted).
            assert "constexpr u32 SCAN_LOOK_BACK_WINDOW = 32;" in src, "lb: windows of 32 lanes only"
            depth = int(change[2:]) // 32
            call = "        const T prefix = scan_look_back(ts, tile, epoch, lane);\n"
            assert call in src, "lb: the look-back's call not found"
            src = src.replace(call, call.replace("scan_look_back(", f"scan_look_back_deep<{depth}>("), 1)
            at = src.index('extern "C" __global__ void SCAN_LAUNCH_BOUNDS')
            src = src[:at] + DEEP_LOOK_BACK + src[at:]
        if change == "split":
            # A tile's aggregate and inclusive publishes go to two sets of tagged words, each
            # written once per launch, and a poll reads both: a reader can no longer see words of
            # the aggregate's publish beside words of the inclusive's (a torn read, which the
            # emitted poll reads as NOT_READY and the look-back waits out).
            src = split_statuses(src)
        if change.startswith("sleep"):
            # The look-back's pause between polls of a window that is not ready.
            src = re.sub(r"__nanosleep\(\d+\)", f"__nanosleep({int(change[5:])})", src)
        if change.startswith("unroll"):
            # The item path's unroll (policy item_path_unroll): whether a suffix scan's tile 0,
            # where n's end is off a vector, loses its 7-9 us to the item loop's code or to its
            # work (BENCHMARKS.md, session 51).
            unroll = re.compile(r"constexpr u32 SCAN_ITEM_PATH_UNROLL = \d+;")
            assert unroll.search(src), f"{change}: the kernel has no item path"
            src = unroll.sub(f"constexpr u32 SCAN_ITEM_PATH_UNROLL = {int(change[6:])};", src, count=1)
    return src


def split_statuses(src: str) -> str:
    """`+split`: separate word sets for a tile's aggregate and inclusive publishes."""
    edits = [
        ("                    scan_store_relaxed_u64(words + slot * SCAN_STATUS_WORDS + k, 0);\n",
         "                    scan_store_relaxed_u64(words + slot * 2 * SCAN_STATUS_WORDS + k, 0);\n"
         "                    scan_store_relaxed_u64(words + slot * 2 * SCAN_STATUS_WORDS + SCAN_STATUS_WORDS + k, 0);\n"),
        ("        u64* w = words + (u64)tile * SCAN_STATUS_WORDS;\n",
         "        u64* w = words + ((u64)tile * 2 + (state == SCAN_STATUS_INCLUSIVE ? 1 : 0)) * SCAN_STATUS_WORDS;\n"),
    ]
    for old_text, new_text in edits:
        assert old_text in src, f"split: not found: {old_text[:60]!r}"
        src = src.replace(old_text, new_text, 1)
    poll = re.search(r"    __device__ __forceinline__ u32 poll\(u32 tile, u32 epoch, ScanPolledStatus& polled\) const \{\n.*?\n    \}\n", src, re.S)
    assert poll, "split: poll not found"
    src = src.replace(poll.group(0), """    __device__ __forceinline__ u32 poll(u32 tile, u32 epoch, ScanPolledStatus& polled) const {
        const u64* w = words + (u64)tile * 2 * SCAN_STATUS_WORDS;
        u64 aggregate[SCAN_STATUS_WORDS];
#pragma unroll
        for (u32 k = 0; k < SCAN_STATUS_WORDS; ++k) {
            aggregate[k] = scan_load_relaxed_u64(w + k);
            polled.words[k] = scan_load_relaxed_u64(w + SCAN_STATUS_WORDS + k);
        }
        bool inclusive = true, partial = true;
#pragma unroll
        for (u32 k = 0; k < SCAN_STATUS_WORDS; ++k) {
            inclusive = inclusive && (u32)polled.words[k] == scan_status_word(epoch, SCAN_STATUS_INCLUSIVE);
            partial = partial && (u32)aggregate[k] == scan_status_word(epoch, SCAN_STATUS_AGGREGATE);
        }
        if (!inclusive) {
#pragma unroll
            for (u32 k = 0; k < SCAN_STATUS_WORDS; ++k) {
                polled.words[k] = aggregate[k];
            }
        }
        return inclusive ? SCAN_STATUS_INCLUSIVE : partial ? SCAN_STATUS_AGGREGATE : SCAN_STATUS_NOT_READY;
    }
""", 1)
    return src


def run(path, log2n, spin):
    path, *changes = path.split("+")
    src = open(path).read()
    src = transform(src, changes)
    # Resident tiles (tile t in block t) must launch cooperatively: every block resident at once.
    coop = "    const u32 tile = blockIdx.x;\n" in src
    threads = constant(src, "SCAN_BLOCK_THREADS")
    tile_items = constant(src, "SCAN_TILE_ITEMS")
    words = constant(src, "SCAN_STATUS_WORDS")
    dyn = re.search(r"constexpr u32 SCAN_DYNAMIC_SHARED_BYTES = (\d+)", src)
    dyn = int(dyn.group(1)) if dyn else 0
    dtype = element_dtype(src)
    isz = np.dtype(dtype).itemsize
    n = (1 << log2n) - change_number(changes, "nminus")
    in_off, out_off = change_number(changes, "inoff"), change_number(changes, "outoff")
    tiles = -(-n // tile_items)
    if "constexpr bool LEAD_TILES = true;" in src and out_off:
        # The runtime's grid for an output off the vectors its tiles sit on
        # (GeneratedScan::single_pass_tiles): one tile more where the first one falls short.
        lead = out_off * isz % constant(src, "SCAN_VECTOR_BYTES") // isz
        reverse = "constexpr bool SCAN_REVERSE = true;" in src
        shortfall = (tile_items - (n + lead) % tile_items) % tile_items if reverse else lead
        tiles = -(-(n + shortfall) // tile_items) if lead else tiles
    graded = [int(c.lstrip("v")[6:]) for c in changes if c.lstrip("v").startswith("graded")]
    if graded:
        head = graded[0] * (tile_items // 2)
        tiles = -(-n // (tile_items // 2)) if n <= head else graded[0] + -(-(n - head) // tile_items)
    opts = ("--std=c++17", "--gpu-architecture=sm_90", "--fmad=false")
    # A cooperative module's kernels launch cooperatively: every block resident at once.
    plain = cp.RawModule(code=src, options=opts, enable_cooperative_groups=coop).get_function("scangen_single_pass")
    probed_mod = cp.RawModule(code=instrument(src), options=opts, enable_cooperative_groups=coop)
    probed = probed_mod.get_function("scangen_single_pass")
    if dyn:
        for f in (plain, probed):
            f.max_dynamic_shared_size_bytes = dyn
    rng = np.random.default_rng(7)
    struct = np.dtype(dtype).kind == "V"
    if struct:
        # Small odd integers in every byte: no NaN or infinity in float fields.
        host = (rng.integers(0, 8, n * np.dtype(dtype).itemsize, dtype=np.uint8) * 2 + 1).view(dtype)
    else:
        host = rng.integers(0, 100, n).astype(dtype)
    # Buffers `+inoffN` / `+outoffN` elements past an allocation's start (a sub-slice).
    x = cp.zeros((n + in_off) * isz, dtype=cp.uint8)
    x[in_off * isz:] = cp.asarray(host.view(np.uint8))
    y = cp.zeros((n + out_off) * isz, dtype=cp.uint8)
    x_at, y_at = x.data.ptr + in_off * isz, y.data.ptr + out_off * isz
    state = cp.zeros(128 + 8 * words * tiles * (2 if "split" in changes else 1), dtype=cp.uint8)
    null = np.uint64(0)
    args = (np.uint64(x_at), np.uint64(y_at), np.uint64(n), state, np.uint64(tiles), null, null)

    def scan(f=plain):
        f((tiles,), (threads,), args, shared_mem=dyn)

    def copy():
        cp.cuda.runtime.memcpyAsync(y_at, x_at, n * isz, 3, cp.cuda.get_current_stream().ptr)

    for _ in range(5):
        scan()
    cp.cuda.Device().synchronize()
    expected = reference(host, src)
    out = cp.asnumpy(y)[out_off * isz:].view(dtype)
    ok = "n/a (no reference for this op)" if expected is None else np.array_equal(out, expected)
    rounds = [(device_time(scan, spin, 30), device_time(copy, spin, 30)) for _ in range(2)]
    # Probed launch, behind a spin as the timed ones are.
    spin_then(spin)
    scan(probed)
    cp.cuda.Device().synchronize()
    probe = probed_mod.get_global("scan_probe")
    after_copy = int(cp.asnumpy(cp.ndarray((8 * 65536,), dtype=cp.uint64, memptr=probe))[: tiles * 8].reshape(tiles, 8)[:, 0].min())
    after_copy -= int(cp.asnumpy(SPIN_END)[0])
    # The same launch right after a scan (a copy ran before the first): the SMs' shared-memory
    # carve-out is already the scan's.
    scan(probed)
    spin_then(spin)
    scan(probed)
    cp.cuda.Device().synchronize()
    print(f"first tile starts after the launch's wait: {after_copy / 1e3:.2f} us after a copy, ", end="")
    p = cp.asnumpy(cp.ndarray((8 * 65536,), dtype=cp.uint64, memptr=probe))[: tiles * 8].reshape(tiles, 8)
    t = p[:, :6].astype(np.int64)
    t0 = t[:, 0].min()
    spin_end = int(cp.asnumpy(SPIN_END)[0])
    name = "+".join([path.split("/")[-1], *changes])
    print(f"{(t0 - spin_end) / 1e3:.2f} us after a scan")
    print(f"## {name}: n = {n} (2^{log2n} - {(1 << log2n) - n}), buffers at +{in_off}/+{out_off}, "
          f"{threads} x {tile_items // threads}, {tiles} tiles, correct: {ok}")
    for s, c in rounds:
        print(f"device time: scan {s:.2f} us, copy {c:.2f} us, fraction {c / s:.3f}")
    print(f"claimed tile == blockIdx.x for {np.mean(p[:, 7] == np.arange(tiles)):.2f} of the tiles")
    print(f"blocks on {len(set(p[:, 6].tolist()))} SMs; start of tiles (us after the first): "
          f"median {np.median(t[:, 0] - t0) / 1e3:.2f}, last {(t[:, 0].max() - t0) / 1e3:.2f}; "
          f"end of the last tile {(t[:, 5].max() - t0) / 1e3:.2f}")
    print(f"  after the launch's wait (us): first tile starts {(t0 - spin_end) / 1e3:.2f}, last tile ends {(t[:, 5].max() - spin_end) / 1e3:.2f}")
    for k, phase in enumerate(PHASES):
        d = (t[:, k + 1] - t[:, k]) / 1e3
        print(f"  {phase:18s} median {np.median(d):6.2f} us  max {d.max():6.2f} us (tile {int(d.argmax())})")
    steady_state(t, rounds, spin_end)
    if any(re.fullmatch(r"lb\d+", c) for c in changes):
        stats = cp.asnumpy(cp.ndarray((2 * 65536,), dtype=cp.uint32, memptr=probed_mod.get_global("scan_lb_stats")))
        stats = stats[: 2 * min(tiles, 65536)].reshape(-1, 2)[1:]
        ends = t[1: len(stats) + 1, 5]
        middle = np.argsort(ends)[len(ends) // 4: (3 * len(ends)) // 4]
        first = np.argsort(t[1: len(stats) + 1, 0])[: max(1, len(ends) // 16)]
        for label, rows in (("first sixteenth", first), ("middle half", middle)):
            nr, w = stats[rows, 0], stats[rows, 1]
            print(f"  look-back {label}: not-ready polls median {np.median(nr):.0f} p90 {np.percentile(nr, 90):.0f}; "
                  f"windows of 32 median {np.median(w):.0f} p90 {np.percentile(w, 90):.0f} max {w.max()}")
    if os.environ.get("TIMELINE_SAVE"):
        # Every tile's probes (ns; columns as PHASES' boundaries, then SM and block), less the
        # launch's wait, for offline study.
        rel = p.astype(np.int64)
        rel[:, :6] -= spin_end
        np.save(os.path.join(os.environ["TIMELINE_SAVE"], f"{name}.{log2n}.npy"), rel)
    deltas = np.diff(np.unique(t.ravel()))
    print(f"  (timer step: smallest nonzero difference {deltas[deltas > 0].min()} ns)")
    # A few tiles' whole timelines, relative to the first start.
    for i in sorted({0, 1, tiles // 2, tiles - 1}):
        print(f"  tile {i:5d} sm {p[i, 6]:3d}: " + " ".join(f"{(v - t0) / 1e3:6.2f}" for v in t[i]))


def steady_state(t, rounds, spin_end):
    """Splits the scan's time into the ramp, the steady stream of tiles and the tail.

    Tiles finish (issue their stores) at a steady rate in the middle half of the launch; the
    ramp is the time from the launch's wait to the first quarter of the tiles finishing, less
    what that quarter takes at the steady rate, and the tail likewise for the last quarter. A
    long scan's fixed cost beside a copy is ramp + tail; its per-byte cost is the steady rate.
    """
    ends = np.sort(t[:, 5])
    tiles = len(ends)
    if tiles < 64:
        return
    q1, q3 = ends[tiles // 4], ends[(3 * tiles) // 4]
    per_quarter = (q3 - q1) / 2 / 1e3
    ramp = (q1 - spin_end) / 1e3 - per_quarter
    tail = (ends[-1] - q3) / 1e3 - per_quarter
    steady = 4 * per_quarter
    copy = float(np.median([c for _, c in rounds]))
    print(f"  steady stream {steady:.2f} us for all tiles (copy {copy:.2f} us: {copy / steady:.3f} of its rate); "
          f"ramp {ramp:.2f} us, tail {tail:.2f} us")
    # Where the ramp goes: the first tiles' phases, beside the middle half's.
    first = np.argsort(t[:, 0])[: max(1, tiles // 16)]
    middle = np.argsort(t[:, 5])[tiles // 4: (3 * tiles) // 4]
    for name, rows in (("first sixteenth", first), ("middle half", middle)):
        d = np.median((t[rows, 1:6] - t[rows, 0:5]) / 1e3, axis=0)
        print(f"  {name:15s} phases (us): " + " ".join(f"{v:5.2f}" for v in d))


def copy_baseline(module, spin, nbytes):
    """Our own copy kernel's device time and timeline, beside the driver's copy."""
    copy = module.get_function("probed_copy")
    vectors = nbytes // 16
    x = cp.arange(vectors * 4, dtype=cp.uint32)
    y = cp.empty_like(x)
    probe = cp.zeros(2 * 132 * 8, dtype=cp.uint64)
    for blocks in (132, 132 * 4):
        def launch():
            copy((blocks,), (256,), (x, y, np.uint64(vectors), probe))
        launch()
        t = device_time(launch, spin, 30)
        spin_then(spin)
        launch()
        cp.cuda.Device().synchronize()
        p = cp.asnumpy(probe)[: 2 * blocks].reshape(blocks, 2).astype(np.int64)
        end = int(cp.asnumpy(SPIN_END)[0])
        print(f"copy kernel, {blocks} x 256, {nbytes} bytes: device time {t:.2f} us; first block starts "
              f"{(p[:, 0].min() - end) / 1e3:.2f}, last ends {(p[:, 1].max() - end) / 1e3:.2f} us after the wait")


def main():
    global cp, SPIN_END
    import cupy

    cp = cupy
    log2n = int(sys.argv[1])
    module = cp.RawModule(code=SPIN)
    spin = module.get_function("spin")
    SPIN_END = cp.zeros(1, dtype=cp.uint64)
    copy_baseline(module, spin, 4 << log2n)
    for path in sys.argv[2:]:
        run(path, log2n, spin)


if __name__ == "__main__":
    main()
