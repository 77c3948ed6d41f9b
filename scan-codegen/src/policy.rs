//! Tuning numbers, chosen in Rust per architecture and element size; templates only see them as
//! parameters (and `static_assert` them).

use crate::layout;
use crate::render::CodegenError;
use crate::Algorithm;

/// Launch shape of the generated kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct TuningPolicy {
    /// Threads per block; a multiple of 32, at most 1024.
    pub block_threads: u32,
    /// Elements each thread holds in registers.
    pub items_per_thread: u32,
    /// Blocks per multiprocessor the compiler must leave room for (the second argument of
    /// `__launch_bounds__`): caps registers per thread, so occupancy does not fall with an
    /// operator whose combine keeps many values live. 1 = no cap.
    pub min_blocks_per_sm: u32,
    /// Bytes each lane moves per global load or store of a full tile (1, 2, 4, 8 or 16): the
    /// tile's warp-striped accesses use vectors of `vector_bytes / element size` elements
    /// where that divides evenly ([`TuningPolicy::vector_items`]), and elements wider than 8
    /// bytes move as several vectors of up to this size ([`TuningPolicy::element_vectors`]);
    /// 1 element otherwise.
    pub vector_bytes: u32,
    /// Predecessor statuses a single-pass look-back reads at once (1 to 32, one per lane of
    /// the looking-back warp); the window slides back by this many tiles.
    pub look_back_window: u32,
    /// Single-pass, plain tiles (no segments, columns or fused map): the thread scans run
    /// before the look-back, seeded with the block-exclusive prefixes alone, and the tile's
    /// prefix joins every result after it, so the scans overlap the wait on the predecessors.
    /// Packed 1- and 2-byte items join as the store reads them back (tile.cu.tera,
    /// `ScanPrefixJoin`), others in the thread's run before the store
    /// (`scan_join_tile_prefix`). Half-float sums keep the seeded scan (their rounding would
    /// change). Ignored by other tiles.
    pub defer_tile_prefix: bool,
    /// With a deferred tile prefix: the thread scan reads the thread's run back from the
    /// tile's transpose buffer (where the load left it) instead of scanning the words it
    /// reduced. ptxas otherwise kept the reduction's unpacked items for the scan, across the
    /// block scan (f16 max, 128 x 128 at 5 blocks per SM: 376 bytes of spill, none with the
    /// read). A rung of the register ladder ([`TuningPolicy::relaxed_register_cap`]), not a
    /// default: it gave sums a spill they did not have. Ignored by other tiles.
    pub deferred_scan_rereads_run: bool,
    /// Single-pass only: how many tiles ahead of its own a block asks L2 to fetch (0 = off).
    /// The block that claims tile t issues one bulk L2 prefetch (`cp.async.bulk.prefetch`,
    /// sm_90+; a no-op on older archs) for tile t + this, so DRAM reads go out that many tiles
    /// before the loads that need them, without holding registers or shared memory. Tiles of
    /// the first wave (`min_blocks_per_sm` x SMs) are not prefetched: their blocks load them
    /// at once.
    pub l2_prefetch_tiles: u32,
    /// Single-pass, claimed tiles only: the byte rate (bytes per ns) at which the launch's first
    /// wave starts loading its tiles (0 = all at once). Every block of the first wave starts
    /// together; loading all their tiles at once leaves DRAM reading with nothing to write
    /// until their look-backs resolve, and each tile waits on the slowest of its predecessors'
    /// loads. Tile t of the first wave waits `t * tile bytes / rate` ns
    /// ([`TuningPolicy::first_wave_stagger_ns`]) before its loads, so the first tiles store
    /// while later ones load. Only where later waves follow (decided on the device): a single
    /// wave's tiles only wait longer.
    pub first_wave_bytes_per_ns: u32,
    /// Single-pass only: launches after which the epoch in the tile state's status words wraps
    /// back to 1 ([`TuningPolicy::MAX_EPOCH`] by default, the most 30 bits hold). Not a tuning
    /// knob: tests lower it so that replays cross the wrap many times (each launch then clears
    /// `ceil(slots / (max_epoch - 1))` stale tile slots, ARCHITECTURE.md).
    pub max_epoch: u32,
    /// Single-pass, unsegmented: the tile's items stay staged in shared memory from its load to
    /// its finish, and across the block scan and the look-back a thread holds only its
    /// reduction, not its items. A tile is then bounded by shared memory, not registers. A
    /// plain scan keeps its items in its own transpose buffer (scan-codegen/templates/tile.cu.tera,
    /// `items_in_tile`); a fused scan stages its input arrays in their own types
    /// (fused.cu.tera) and always does ([`TuningPolicy::for_transform`] reports it). On sm_90
    /// the default stages elements of 9 to 32 bytes ([`TuningPolicy::for_target`] says what it
    /// gained). Ignored by other shapes: segmented, column and hierarchical scans, and packed
    /// 1- and 2-byte items (a quarter or half of a register each already).
    pub stage_items: bool,
    /// Single-pass, not column scans: tile t is block t, and the host launches the grid
    /// cooperatively (every block resident at once, `cuLaunchCooperativeKernel`), so a tile's
    /// loads need not wait for a tile claim's round trip (ARCHITECTURE.md, kernel ABI). Only
    /// for grids the GPU holds at once: the small- and mid-size shapes
    /// ([`TuningPolicy::for_small_input`], [`TuningPolicy::for_mid_input`]) set it. One wave
    /// has no later tile to prefetch for: `l2_prefetch_tiles` is then ignored.
    pub resident_tiles: bool,
    /// Contiguous runs a thread splits its items into, folded and scanned as that many
    /// interleaved chains of combines (1 to `items_per_thread`, dividing it): where one chain
    /// waits on each combine's latency, several keep combines in flight (each run after the
    /// first costs one more combine, for its seed). Unsegmented scans; segmented and column
    /// scans fold one chain.
    pub thread_runs: u32,
    /// Segmented by offsets only: entries each thread reads per round of marking a tile's
    /// segment heads (scan-codegen/templates/segments.cu.tera, `SCAN_OFFSET_READS`), all issued
    /// before any is looked at; a round covers `block_threads * offset_reads` entries.
    pub offset_reads: u32,
    /// How a warp step of the block scan joins a lane's value with the one `d` lanes before it
    /// (scan-codegen/templates/warp_scan.cu.tera): every lane combines and the first `d` keep
    /// their own by a select (false), or only the lanes that need it combine, behind a branch
    /// (true). The same work either way (SIMT); the form changes ptxas's register allocation.
    /// The branch made it spill f32 rows and by-flags tiles at 5 blocks per SM (160 and 296
    /// bytes; the runtime then runs 4), the select costs by-key f32 tiles (32 items, 6 blocks)
    /// 0.04 of a copy (H100, BENCHMARKS.md session 21), so by-key scans keep the branch, as do
    /// archs before sm_90 (not measured there; the select spilled a fused sm_80 kernel).
    pub warp_scan_branches: bool,
    /// Packed 1- and 2-byte items ([`crate::layout::packs_items`]): bytes a thread's run moves
    /// per shared-memory access, 4 or 16. 16 takes effect where the run is whole 32-word
    /// stretches ([`crate::layout::packed_run_access_words`]; its padding is four words then),
    /// and the thread's scan then writes its results back as it goes (tile.cu.tera,
    /// `SCAN_SCAN_WRITES_RUNS`). The default policy of sm_90's single-pass scan asks for 16
    /// ([`TuningPolicy::for_target`] says what it gained); where ptxas spills with them, the
    /// runtime rebuilds with 4 first ([`TuningPolicy::relaxed_register_cap`]).
    pub packed_access_bytes: u32,
    /// Tiles whose accesses move several elements a vector ([`TuningPolicy::vector_items`]
    /// over 1): a partial tile of vector-aligned buffers moves its whole vectors as a full tile
    /// does, each access predicated on its vector being whole, and the one vector its end cuts
    /// item by item (tile.cu.tera, `scan_load_cut_vector`); off, that tile moves every item
    /// alone. [`TuningPolicy::for_target`] says where it is on; its code is in every kernel
    /// though only the last tile (and a suffix scan's first) runs it, so the register ladder
    /// turns it off first where a kernel spills ([`TuningPolicy::relaxed_register_cap`]).
    pub partial_tile_vectors: bool,
    /// Packed 1- and 2-byte items of a prefix scan: a whole tile of buffers off a vector
    /// boundary (a sub-slice of a byte buffer) still moves aligned vectors, each lane's items
    /// shifted into place from its own vector and its neighbour's (tile.cu.tera,
    /// `scan_load_shifted`, `scan_store_shifted`); off, such a tile moves item by item. With
    /// [`TuningPolicy::lead_tiles`], so does the lead's first tile (short by less than a
    /// vector), and a suffix scan's whole tiles load so from an input at another offset than
    /// the output their tiles sit on. Like
    /// [`TuningPolicy::partial_tile_vectors`] its code is in every kernel though only tiles of
    /// unaligned buffers run it, and the register ladder gives it up after the lead's tiles, then those.
    pub shifted_tile_vectors: bool,
    /// How a shifted store gets the vector before a lane's own (tile.cu.tera,
    /// `scan_store_shifted`): read from the transpose buffer again, or (off) shuffled from the
    /// lane before and lane 31's carried to the next step. [`TuningPolicy::for_target`] says
    /// where each fits its registers.
    pub shifted_store_rereads: bool,
    /// How many items of the item-by-item path of a vector tile are unrolled (tile.cu.tera,
    /// `SCAN_ITEM_PATH_UNROLL`; 0 = all of a thread's items): the path of the tile the end of
    /// n cuts, and of unaligned buffers' tiles without shifted vectors. Through all of a 1-byte
    /// tile's 256 items a thread, it was most of what NVRTC spent on a byte kernel (u8 max 1.65
    /// s -> 0.6 s with 16, BENCHMARKS.md, session 44). Some kernels keep a few bytes of spill
    /// with the loop rolled up that they do not have unrolled (byte products at mid sizes, and
    /// half max/min at 16 or 32), so the register ladder gives it up with the shifted vectors
    /// of unaligned tiles, and those kernels are built as before.
    pub item_path_unroll: u32,
    /// Suffix scans whose accesses move several elements a vector: where n is not whole
    /// tiles, the first tile is short by n's part-tile so that every later tile is whole and
    /// sits on whole tiles of memory (tile.cu.tera, `first_tile_shortfall`); off, a suffix
    /// scan's tiles end at n - base, the last is partial, and where n is not whole vectors
    /// every tile moves item by item.
    /// [`TuningPolicy::for_target`] says where it is on. The register ladder leaves it: the
    /// tiles it saves are most of the launch.
    pub aligned_tiles: bool,
    /// With [`TuningPolicy::aligned_tiles`], a buffer off a vector boundary (a sub-slice, a
    /// tensor view) takes its lead off the first tile too, in either direction, so that every
    /// later tile sits on its vectors: the single-pass output's, the hierarchy's input's (off,
    /// every tile of such a buffer moves shifted vectors, packed prefix scans, or item by
    /// item). That can take one tile more than ceil(n / tile), which the runtime launches
    /// (`GeneratedScan::single_pass_tiles`). A prefix scan's tiles then start at a runtime
    /// offset, which costs registers, so the register ladder gives it up first
    /// ([`TuningPolicy::relaxed_register_cap`]).
    pub lead_tiles: bool,
    /// The register ladder of this policy loosens the cap (and gives up what a rung of a
    /// packed tile gives up for registers) but keeps the paths of buffers off a vector
    /// boundary: [`TuningPolicy::lead_tiles`], [`TuningPolicy::shifted_tile_vectors`] with the
    /// item path's short loop, and [`TuningPolicy::partial_tile_vectors`]. The default ladder
    /// gives those up first, because a kernel serves aligned buffers far more often and each
    /// rung costs them; where it did, the runtime builds this policy's kernel as a twin for
    /// buffers off a vector boundary ([`TuningPolicy::unaligned_twin`]). It does not change the
    /// code a rung generates, only which rungs the ladder tries.
    pub keeps_unaligned_paths: bool,
    /// The kernel for aligned buffers is built without [`TuningPolicy::lead_tiles`] and
    /// [`TuningPolicy::shifted_tile_vectors`] (the first rung of its register ladder,
    /// [`TuningPolicy::first_rung`]), though it spills nothing with them: they cost this shape's
    /// aligned scans time, and its twin ([`TuningPolicy::unaligned_twin`]) has them for buffers
    /// off a vector boundary. [`TuningPolicy::for_small_input`] says where it is on.
    pub unaligned_paths_in_twin: bool,
}

/// The block a fused single-pass tile stages its arrays in ([`TuningPolicy::for_transform`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FusedTile {
    /// Threads per block.
    pub block_threads: u32,
    /// Blocks per SM of the register cap.
    pub min_blocks_per_sm: u32,
    /// Shared memory the warps' staged slices may take, together.
    pub exchange_bytes: usize,
    /// The L2 prefetch distance in tiles (0 = off).
    pub l2_prefetch_tiles: u32,
}

/// The size class of an input, which picks among a scan's launch shapes
/// ([`TuningPolicy::input_size`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputSize {
    /// 1- and 2-byte elements, at most [`TuningPolicy::TINY_INPUT_SMS_PER_TILE`] SMs' worth of
    /// default tiles: [`TuningPolicy::for_tiny_input`].
    Tiny,
    /// Too few default tiles for half the SMs: [`TuningPolicy::for_small_input`].
    Small,
    /// Up to one wave of default tiles: [`TuningPolicy::for_mid_input`].
    Mid,
    /// 1-byte elements, from there to a few waves: [`TuningPolicy::for_few_waves_input`].
    FewWaves,
    /// The default shape.
    Large,
    /// 1-byte prefix scans of many waves: [`TuningPolicy::for_many_waves_input`].
    ManyWaves,
}

/// Which smaller shapes a scan has beside its default ([`TuningPolicy::input_size`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SizedShapes {
    /// A tiny-input shape ([`TuningPolicy::for_tiny_input`]).
    pub tiny: bool,
    /// A small-input shape ([`TuningPolicy::for_small_input`], or
    /// [`TuningPolicy::for_small_transform`] for a fused scan).
    pub small: bool,
    /// A mid-size shape ([`TuningPolicy::for_mid_input`]).
    pub mid: bool,
    /// A few-waves shape ([`TuningPolicy::for_few_waves_input`]).
    pub few_waves: bool,
    /// A many-waves shape ([`TuningPolicy::for_many_waves_input`]).
    pub many_waves: bool,
    /// A fused scan: its small shape serves inputs up to the SM count in default tiles, where
    /// a plain scan's serves fewer than half of it.
    pub fused: bool,
}

/// The largest inputs, in default tiles, that a scan's smaller shapes serve
/// ([`TuningPolicy::input_size_limits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputSizeLimits {
    /// Inputs of at most this many default tiles take the tiny-input shape.
    pub tiny: Option<u64>,
    /// Inputs above `tiny` and of at most this many default tiles take the small-input shape.
    pub small: Option<u64>,
    /// Inputs above `small` and of at most this many default tiles take the mid-size shape.
    pub mid: Option<u64>,
    /// Inputs above `mid` (or `small`) and of at most this many default tiles take the
    /// few-waves shape.
    pub few_waves: Option<u64>,
    /// Inputs of more than this many default tiles take the many-waves shape.
    pub many_waves_above: Option<u64>,
}

impl TuningPolicy {
    /// Largest `items_per_thread` accepted for elements of 4 bytes or more: the items live in
    /// registers, fully unrolled. Packed sub-word items ([`crate::layout::packs_items`]) may
    /// fill as many registers: [`TuningPolicy::max_items_per_thread`].
    pub const MAX_ITEMS_PER_THREAD: u32 = 64;

    /// Largest `items_per_thread` accepted for `items_per_thread` items of `elem_size` bytes:
    /// [`TuningPolicy::MAX_ITEMS_PER_THREAD`] registers' worth (4 / size items to a register
    /// when the items are packed, one otherwise).
    pub fn max_items_per_thread(&self, elem_size: usize) -> u32 {
        if crate::layout::packs_items(elem_size, self.items_per_thread) {
            Self::MAX_ITEMS_PER_THREAD * crate::layout::items_per_register(elem_size) as u32
        } else {
            Self::MAX_ITEMS_PER_THREAD
        }
    }

    /// Static shared memory a block may use without opting in to more (48 KiB on every arch).
    pub const MAX_STATIC_SHARED_BYTES: u64 = 48 * 1024;

    /// Shared memory a single-pass block may use at most: past
    /// [`TuningPolicy::MAX_STATIC_SHARED_BYTES`] its storage is dynamic shared memory
    /// ([`crate::GeneratedScan::dynamic_shared_bytes`]), up to sm_90's opt-in limit of 227 KiB
    /// (sm_80: 163 KiB, sm_86/89: 99 KiB; the runtime checks the device's own limit before it
    /// launches). The hierarchical kernels and the column kernel keep static storage.
    pub const MAX_SHARED_BYTES: u64 = 227 * 1024;

    /// The most shared memory a block of `algorithm`'s flat kernels may use: dynamic shared
    /// memory for the single-pass kernel, static for the hierarchical ones (they move 3n and
    /// are tuned well under 48 KiB).
    pub fn max_shared_bytes(algorithm: Algorithm) -> u64 {
        match algorithm {
            Algorithm::SinglePass => Self::MAX_SHARED_BYTES,
            _ => Self::MAX_STATIC_SHARED_BYTES,
        }
    }

    /// `__nanosleep` (ns) of a single-pass look-back between two reads of a window of
    /// predecessor statuses that is not ready yet. Short, because predecessors are usually a
    /// few hundred cycles from publishing; constant, because a variable sleep gives the kernel
    /// a stack frame on sm_80.
    pub const LOOK_BACK_SLEEP_NS: u32 = 64;

    /// A shape with no register cap, 16-byte vectors, a full-warp look-back window and no L2
    /// prefetch.
    ///
    /// The window is 32: every lane of the looking-back warp reads a status, so one L2 round
    /// trip examines 32 predecessors. (A narrower window only reads fewer; the wait is for the
    /// slowest predecessor either way, BENCHMARKS.md. `for_target` narrows it for elements
    /// over 16 bytes on sm_90, whose statuses make each poll of a window costly.)
    pub fn new(block_threads: u32, items_per_thread: u32) -> TuningPolicy {
        TuningPolicy {
            block_threads,
            items_per_thread,
            min_blocks_per_sm: 1,
            vector_bytes: Self::MAX_VECTOR_BYTES,
            look_back_window: 32,
            defer_tile_prefix: false,
            deferred_scan_rereads_run: false,
            l2_prefetch_tiles: 0,
            first_wave_bytes_per_ns: 0,
            max_epoch: Self::MAX_EPOCH,
            stage_items: false,
            resident_tiles: false,
            thread_runs: 1,
            offset_reads: 2,
            warp_scan_branches: false,
            packed_access_bytes: 4,
            partial_tile_vectors: false,
            shifted_tile_vectors: false,
            shifted_store_rereads: false,
            item_path_unroll: 0,
            aligned_tiles: false,
            lead_tiles: false,
            keeps_unaligned_paths: false,
            unaligned_paths_in_twin: false,
        }
    }

    /// The largest epoch a status word holds (30 bits beside the 2-bit state).
    pub const MAX_EPOCH: u32 = (1 << 30) - 1;

    /// Largest `l2_prefetch_tiles` accepted: further ahead, L2 evicts a tile before its block
    /// loads it (BENCHMARKS.md: 384 tiles ahead already lost 0.16 of a copy on an H100).
    pub const MAX_L2_PREFETCH_TILES: u32 = 4096;

    /// The first wave's load rate of the sm_90 single-pass default
    /// ([`TuningPolicy::first_wave_bytes_per_ns`]): a 32 KiB tile every 10 ns, about the
    /// H100's DRAM bandwidth ([`TuningPolicy::for_target`] says what it gained).
    pub const SM90_FIRST_WAVE_BYTES_PER_NS: u32 = 3277;

    /// Largest element whose first wave the sm_90 default staggers ([`TuningPolicy::for_target`]).
    pub const FIRST_WAVE_STAGGER_MAX_BYTES: usize = 24;

    /// Largest wait between two first-wave tiles' loads ([`TuningPolicy::first_wave_stagger_ns`]).
    pub const MAX_FIRST_WAVE_STAGGER_NS: u32 = 1000;

    /// Nanoseconds between the loads of two consecutive first-wave tiles of `tile_bytes` bytes
    /// at [`TuningPolicy::first_wave_bytes_per_ns`] (0 where the rate is 0), rounded up, at most
    /// [`Self::MAX_FIRST_WAVE_STAGGER_NS`].
    pub fn first_wave_stagger_ns(&self, tile_bytes: u64) -> u32 {
        if self.first_wave_bytes_per_ns == 0 {
            return 0;
        }
        tile_bytes
            .div_ceil(u64::from(self.first_wave_bytes_per_ns))
            .min(u64::from(Self::MAX_FIRST_WAVE_STAGGER_NS)) as u32
    }

    /// Largest `offset_reads`: each one holds an entry in registers beside the tile's items.
    pub const MAX_OFFSET_READS: u32 = 16;

    /// Largest vector a lane moves per access: 16 bytes (`ld.global.v4.u32`).
    pub const MAX_VECTOR_BYTES: u32 = 16;

    /// Elements per tile (one block's share).
    pub fn tile_items(&self) -> u32 {
        self.block_threads * self.items_per_thread
    }

    /// Elements per vector access for an element of `elem_size` bytes: the most (a power of
    /// two) that fit in `vector_bytes`, divide `items_per_thread` and make a 4-, 8- or 16-byte
    /// word. 1 where none does (scalar accesses; e.g. 12-byte structs). Elements of 8 bytes or
    /// more always move one per access: they already fill 256 bytes per warp instruction, and
    /// splitting a vector into 8-byte elements gave sm_80 kernels a stack frame.
    pub fn vector_items(&self, elem_size: usize) -> u32 {
        let size = elem_size.max(1) as u32;
        if !size.is_power_of_two() || size > 4 {
            return 1;
        }
        let mut items = self.vector_bytes / size;
        while items > 1 {
            if self.items_per_thread.is_multiple_of(items) && matches!(items * size, 4 | 8 | 16) {
                return items;
            }
            items /= 2;
        }
        1
    }

    /// Vectors per element for an element wider than 8 bytes that moves between global and
    /// shared memory as vectors (tile.cu.tera, "wide elements"): each vector is the largest
    /// power of two of at most `vector_bytes` (and 16) that divides the element, of at least 4
    /// bytes. An 8-byte element aligned to less than 8 (a struct of two 4-byte fields) moves as
    /// one 8-byte vector: copied as a struct it moves as two 4-byte accesses, each touching the
    /// warp's 256 bytes for half of them. 0 where elements move whole, one per lane per access:
    /// other elements of 8 bytes or less (an 8-byte element already fills 256 bytes per warp
    /// instruction) and vectors under 4 bytes.
    pub fn element_vectors(&self, elem_size: usize, elem_align: usize) -> u32 {
        if elem_size == 8 && elem_align < 8 && self.vector_bytes >= 8 {
            return 1;
        }
        if elem_size <= 8 {
            return 0;
        }
        let largest_dividing = 1u32 << elem_size.trailing_zeros().min(4);
        let vector = largest_dividing.min(self.vector_bytes);
        if vector < 4 {
            return 0;
        }
        elem_size as u32 / vector
    }

    /// The default policy for compute capability `sm` (e.g. 90) and an element of `elem_size` bytes.
    ///
    /// Per thread, the policy keeps a budget of element bytes in registers: enough independent
    /// loads in flight to cover memory latency, not so many that the items spill. Hopper has the
    /// most bandwidth to cover, so it gets the biggest budget.
    pub fn for_target(sm: u32, algorithm: Algorithm, elem_size: usize) -> TuningPolicy {
        // (threads per block, element bytes per thread, max items per thread, shared-memory
        // budget of the tile transpose).
        //
        // sm_90 single-pass: measured with `scangen tune` on an H100 at n = 2^28 (BENCHMARKS.md,
        // "Tuning"): the fraction of a device copy grows with the bytes a thread holds, because
        // each tile pays a fixed cost (barriers, publishing its status, the look-back) that a
        // bigger tile spreads over more bytes. 128 threads x 256 bytes (i32: 64 items, f64 and
        // 8-byte structs: 32) was the best or within noise of it for every element tried; 256
        // and 512 threads with as many bytes need more shared memory than the 48 KiB static
        // limit. The hierarchical scans move 3n and were not retuned: 256 x 64 bytes.
        //
        //
        // Single-pass asks ptxas to fit 6 blocks per SM (an 80-register cap). Uncapped, ptxas
        // gave max 154 to 167 registers against add's 80, so 3 blocks fit and max reached 0.72
        // of a copy; with the cap, max i32 reached 0.86 like add, with no spills (H100, 2^28,
        // bench/experiments). Shared memory allows 6 blocks of a 32 KiB tile as well. Where the
        // cap makes ptxas spill (8-byte elements, small-integer min/max, 64-bit mul),
        // the runtime rebuilds with `relaxed_register_cap` (scan-runtime's gpu.rs).
        //
        // 1-byte elements take that shape too: 128 threads of 256 items. (From session 25 to 31
        // they took the same tile as 256 threads of 128 items under a 5-block cap, which had
        // shortened a byte thread's chains of combines before the tiles folded whole words, ran
        // 4 runs a thread and deferred the tile prefix. H100, 2^28, `scangen tune`, two rounds
        // beside it, bench/results/h100-session32.md: u8 sums 0.939/0.929 -> 0.950/0.937, xor
        // 0.923/0.931 -> 0.949/0.943, i8 sums 0.937/0.934 -> 0.949/0.948, u8 max 0.906/0.916 ->
        // 0.930/0.931, i8 min 0.914/0.913 -> 0.929/0.928; products at 5 blocks, where their
        // deferred scan fits, `relaxed_register_cap`: 0.913/0.918 -> 0.927/0.932.) Their
        // mid-size shape keeps the old one (`for_mid_input`).
        //
        // Elements of 9 to 32 bytes that have no mid-size shape (over 16 bytes, or of a size that
        // is not a power of two: `for_mid_input`) hold 512 bytes a thread, 16 items of 24 and 32
        // bytes and 32 of 12, in a tile of dynamic shared memory, under a 4-block cap (128
        // registers, 512 bytes): each tile pays a fixed cost (barriers, a block scan and a
        // look-back of a wide element's words), which twice the items spread over twice the bytes
        // (the likely reason; not measured apart). H100, 2^28, `scangen tune`, once the
        // blocked accesses were conflict-free (layout::tile_padding): f64x3 sums 0.881 (128 x 8,
        // 5 blocks) -> 0.951 (128 x 16, 3 blocks), the u64 2x2 matrix product 0.861 (128 x 8,
        // 4) -> 0.889 (128 x 16, 2), f32x3 sums 0.948 (128 x 16, 6) -> 0.965 (128 x 32, 4).
        // 16-byte elements keep 256 bytes: f32x4 sums gained 0.959 -> 0.968 at 32 items but
        // f64x2 affine maps lost 0.976 -> 0.958, and their mid-size shape (the default tile held
        // by 256 threads) must fit static shared memory.
        //
        // Elements of 9 to 32 bytes keep their items in the tile's shared memory from its load
        // to its store (`stage_items`): a thread then holds its reduction across the block scan
        // and the look-back, not 256 to 512 bytes of items, so registers stop bounding the
        // blocks per SM (the 32-byte matrix product ran 2 blocks of 8 warps, 12.5% occupancy,
        // a third of its stalls at a barrier; ncu). H100, 2^28, `scangen tune --staged`, the
        // same shapes: u64 2x2 product 0.889 -> 0.938 (3 blocks, as shared memory allows),
        // f64x3 sums 0.951 -> 0.970, f32x4 0.957 -> 0.975, f64x2 affine 0.974 -> 0.977, f32x3
        // 0.965-0.968 -> 0.969. 4- and 8-byte elements did not move (i32 0.963 / 0.956, i64
        // 0.988 / 0.987), so they keep their items in registers.
        let size = elem_size.max(1);
        // (Measured up to 32 bytes; past that the items alone would fill the cap's registers.)
        let wide_run = (9..=32).contains(&size) && (size > 16 || !size.is_power_of_two());
        let (block_threads, bytes_per_thread, max_items, smem_budget, min_blocks): (
            u32,
            usize,
            u32,
            usize,
            u32,
        ) = match (sm, algorithm) {
            (90.., Algorithm::SinglePass) if wide_run => (128, 512, 64, 64 * 1024, 4),
            (90.., Algorithm::SinglePass) => (128, 256, 64, 32 * 1024, 6),
            (90.., _) => (256, 64, 16, 16 * 1024, 1),
            (80..=89, _) => (128, 64, 16, 16 * 1024, 1),
            _ => (128, 32, 16, 16 * 1024, 1),
        };
        // Packed items sit 4 / size to a register (layout::packs_items), so the cap on registers
        // allows that many more of them: a u8 thread holds its 256 bytes in 64 registers, as an
        // i32 thread does (one register per item held only 64 bytes, and u8 reached 0.44 of a
        // copy on an H100 at 2^26).
        let per_register = crate::layout::items_per_register(size);
        // A power of two: the transpose buffer's padding then makes it conflict-free
        // (layout::smem_padding).
        let items = prev_power_of_two(
            (bytes_per_thread / size).clamp(1, max_items as usize * per_register) as u32,
        );
        // Big elements: fewer threads, so a tile's shared-memory transpose stays within budget
        // (several blocks per SM).
        let max_threads = ((smem_budget / (size * items as usize)) as u32 / 32 * 32).max(32);
        // Vector width. Hierarchical tiles (16 items) take 16-byte vectors. The sm_90
        // single-pass tile holds 256 bytes per thread under an 80-register cap, and a 16-byte
        // vector needs four aligned consecutive registers: ptxas then spilled (i32 sum: 32
        // bytes at 16-byte vectors, 48 at 8, none at 4), which would cost the kernel a block
        // per SM. So 4-byte and wider elements keep one element per access there, and 1- and
        // 2-byte elements move 8-byte words (8 or 4 elements per instruction, no spill for
        // sums), where scalar accesses moved only 32 or 64 bytes per warp instruction. 8-byte
        // elements may take 8-byte vectors (only those aligned to 4 use them:
        // `element_vectors`).
        let vector_bytes = match (sm, algorithm) {
            (90.., Algorithm::SinglePass) if size < 4 => 8,
            (90.., Algorithm::SinglePass) if size >= 8 => 16,
            (90.., Algorithm::SinglePass) => 4,
            _ => Self::MAX_VECTOR_BYTES,
        };
        // L2 prefetch distance. A tile can only finish once every earlier tile has loaded, so
        // the single-pass scan runs at the pace of its slowest loads (BENCHMARKS.md, "A block's
        // timeline"). Asking L2 for the tile 48 ahead of a block's own (1.5 MiB at 32 KiB tiles,
        // about a microsecond of traffic) starts every DRAM read that much earlier at no
        // register cost: i32 sum 0.855 -> 0.952 of a copy at 2^28 on an H100, with a plateau
        // from 24 to 64 tiles (bench/experiments, `pf`). Bulk prefetch is sm_90's.
        let l2_prefetch_tiles = match (sm, algorithm) {
            (90.., Algorithm::SinglePass) => 48,
            _ => 0,
        };
        // Look-back window: each lane of the window polls a predecessor's status, twice the
        // element's bytes in tagged words, until the whole window is ready. For 24- and 32-byte
        // elements a 32-lane window reads 1.5-2 KB of L2 per poll and waits on 32 predecessors;
        // 16 lanes halve both (the likely reason, not measured apart), and their fold takes
        // four shuffle-and-combine steps, not five (the matrix product 0.956 -> 0.961 at 2^28
        // from that alone). 16 lanes were faster for them (H100, device time,
        // `scangen bench --element-sizes`, two rounds, bench/results/h100-session29.md): f64x3
        // sums 0.46-0.48 -> 0.51 of a copy at 2^19, 0.58-0.59 -> 0.63-0.65 at 2^20, 0.72 ->
        // 0.74-0.77 at 2^21, and 0.970 -> 0.982 at 2^28; the u64 2x2 product 0.42-0.44 -> 0.48-0.49
        // at 2^19 and 0.934 -> 0.957 at 2^28, but 0.43 -> 0.41-0.42 at 2^18. 16-byte elements
        // moved within noise at 2^22 and 2^28 and lost up to 0.03 at 2^19 in their mid-size
        // shape (which inherits the window), so they and smaller elements keep 32. (Elements
        // over 32 bytes, not measured, take 16 too: their statuses are wider still.)
        let look_back_window = match (sm, algorithm) {
            (90.., Algorithm::SinglePass) if size > Self::HALF_WINDOW_ABOVE_BYTES => 16,
            _ => 32,
        };
        // The first wave's loads, staggered. H100, a 32 KiB tile every 10 ns, beside session
        // 34's kernels (BENCHMARKS.md, session 35, where a tile's time goes), four rounds: i32
        // sums 0.83-0.85 -> 0.86-0.92 of a copy at 2^24, 0.92-0.93 -> 0.93-0.95 at 2^26; u8 sums
        // 0.936-0.939 -> 0.944-0.957 at 2^28; segmented by offsets +0.01-0.02 at 2^26; 8- to
        // 24-byte elements +0.00-0.03. At 20 ns a tile u8 and i32 lost 0.005-0.02 (device
        // time); at 2^22 (one wave, in L2) 10 ns lost 0.09, so a tile waits only where later
        // waves follow. The 32-byte matrix product lost 0.002-0.010 at 2^24-2^28: elements
        // over FIRST_WAVE_STAGGER_MAX_BYTES load at once.
        let first_wave_bytes_per_ns = match (sm, algorithm) {
            (90.., Algorithm::SinglePass) if size <= Self::FIRST_WAVE_STAGGER_MAX_BYTES => {
                Self::SM90_FIRST_WAVE_BYTES_PER_NS
            }
            _ => 0,
        };
        let mut policy = TuningPolicy {
            min_blocks_per_sm: min_blocks,
            vector_bytes,
            l2_prefetch_tiles,
            first_wave_bytes_per_ns,
            look_back_window,
            stage_items: matches!((sm, algorithm), (90.., Algorithm::SinglePass))
                && (9..=32).contains(&size),
            // The select was measured on sm_90 only; on sm_80 it gave a fused strided-rows
            // affine kernel 4 bytes of spill (ptxas 12.9), so older archs keep the branch.
            warp_scan_branches: sm < 90,
            // Packed sub-word runs move 16 bytes per shared-memory access (where their runs are
            // whole 32-word stretches: the default tiles, 128 and 256 bytes a thread). H100,
            // 2^28, `scangen bench`, two rounds each, words -> 16 bytes: u16/i16 sums, max, min
            // and xor 0.950-0.958 -> 0.960-0.970, f16/bf16 sums 0.936-0.947 -> 0.958-0.963; at
            // 2^24 the 2-byte ones gained 0.02-0.07 (bench/results/h100-session30.md). Half
            // max/min, byte sums and products spill with them at 4 runs a thread, so the ladder
            // builds those with words (at 2 runs, 16 bytes had gained them 0.00-0.01 at most).
            // Other archs and algorithms were not measured and keep words.
            packed_access_bytes: match (sm, algorithm) {
                (90.., Algorithm::SinglePass) => 16,
                _ => 4,
            },
            // Tiles of elements up to 8 bytes scan before the look-back and join the prefix
            // after it. H100, 2^28, packed u8 sums (a hand-edited kernel first,
            // tile_timeline.py): 0.894-0.898 -> 0.921-0.924 of a copy in device time, the scan
            // and store after the prefix 1.8 -> 1.0 us a tile (BENCHMARKS.md, session 31). H200,
            // 4- and 8-byte elements in registers (session 41, device time, two rounds): f32
            // sums 0.844-0.847 -> 0.853-0.856 and max 0.834-0.839 -> 0.851 at 2^28, max 0.71 ->
            // 0.73 at 2^24; i32, i64, f64 and the 8-byte affine struct within 0.003 at 2^28.
            // Staged wide elements lost to it (the join reads and writes their runs in shared
            // memory again, one more combine an item): f32x4 0.861 -> 0.848, f64x2 0.866 ->
            // 0.849, the u64 2x2 matrix 0.790 -> 0.741 at 2^28. Other archs were not measured.
            defer_tile_prefix: matches!((sm, algorithm), (90.., Algorithm::SinglePass))
                && size <= 8,
            // A 1-byte partial tile read item by item (256 loads a thread, batched only as far
            // as the register cap allows) took about 15 us on an H100: u8 sums of 2^28 - 1
            // elements read 0.87 of a copy against 0.95 at 2^28 (BENCHMARKS.md, session 38).
            // 2-byte elements lost 0.015 (u16) or nothing (f16) to it, and f16 sums spilled
            // with the vectors at the default cap, so they keep the item path.
            partial_tile_vectors: size == 1,
            // Item by item, every tile of a buffer off a vector boundary took 256 one-byte loads
            // and stores a thread: u8 sums at 2^28 read 0.36 of a copy, u8 max 0.43, f16 max
            // 0.54, u16 sums 0.59 (input at +1 element, H200, device time). With shifted vectors
            // 0.72, 0.75, 0.71, 0.76; aligned scans unchanged (BENCHMARKS.md, session 44).
            shifted_tile_vectors: size <= 2,
            // Shuffled, half max/min and u16 max/min spilled 44-60 bytes at 6 blocks per SM with
            // the shifted vectors and were built without them (f16 max at +1 element: 0.54 of a
            // copy; 0.84 reading back, with the lead's tiles, H200); their first rung now fits,
            // and an empty-cache f16 max starts in 5.1-5.6 s, not 9.2-10.5 (BENCHMARKS.md,
            // session 45). Read back, byte max/min at the mid-size shape spilled where the
            // shuffled store fits, and gave up their partial tile's vectors (u8 max of 2^22 - 3
            // elements 0.74 -> 0.60), so bytes shuffle.
            shifted_store_rereads: size == 2,
            item_path_unroll: if size == 1 { 16 } else { 0 },
            // Every tile of a 1- or 2-byte suffix scan moved item by item where n was not whole
            // vectors: reversed u8 sums of 2^28 - 1 elements read 0.42 of a copy (0.93 at
            // 2^28; BENCHMARKS.md, session 38), u16 sums and max 0.59 and f16 max 0.54 on an
            // H200 (session 41). Cut by n's part-tile rather than its part-vector, tiles also
            // sit on whole tiles of memory where n is whole vectors: reversed byte products of
            // 2^28 - 16 elements 0.78-0.80 -> 0.83-0.84 (H200, session 40), u16 sums 0.81 ->
            // 0.87 (session 41). With it, 2-byte suffix scans of 2^28 - 1 read 0.84-0.87, as at
            // 2^28. (Half max/min suffix scans spilled 20 bytes at the default cap with it until
            // the tile's end was tested in 32 bits: tile.cu.tera, span_edge, session 42.)
            aligned_tiles: size <= 2,
            // A sub-slice's tiles move aligned vectors, where input and output share the
            // offset: at +1 element, 2^28, H200, u8 sums 0.72 -> 0.80, u16 max 0.59 -> 0.86,
            // f16 max 0.54 -> 0.84; reversed u8 sums 0.27 -> 0.84, u16 sums 0.59 -> 0.86
            // (BENCHMARKS.md, session 45). 4-byte elements gained nothing (f32 sums at +1: 0.84
            // either way; their item-by-item path moves whole words, coalesced).
            lead_tiles: size <= 2,
            ..TuningPolicy::new(block_threads.min(max_threads), items)
        };
        // The transpose padding can still push a big element past the shared-memory limit:
        // static, unless the tile's budget is over it (then the tile is dynamic shared memory).
        // Halve threads, then items, until the shape is valid.
        let smem_limit = if smem_budget as u64 > Self::MAX_STATIC_SHARED_BYTES {
            Self::max_shared_bytes(algorithm)
        } else {
            Self::MAX_STATIC_SHARED_BYTES
        };
        let fits = |p: &TuningPolicy| {
            layout::static_shared_bytes(p, algorithm, size, size.min(8)) <= smem_limit
        };
        while policy.validate(algorithm, size, size.min(8)).is_err() || !fits(&policy) {
            if policy.block_threads > 32 {
                policy.block_threads = (policy.block_threads / 2).max(32) / 32 * 32;
            } else if policy.items_per_thread > 1 {
                policy.items_per_thread /= 2;
            } else {
                break;
            }
        }
        // Packed sub-word tiles fold and scan their items as 4 interleaved chains: a thread
        // combines 128 or 256 of them, one after another in a single chain, and a sub-word
        // combine carries its unpacking and sign or zero extension on that chain. H100, 2^28,
        // `scangen tune --thread-runs 1,2,4`: f16 sums 0.895 -> 0.937 of a copy, f16 and bf16
        // max 0.883-0.887 -> 0.914-0.915, i8 min/max 0.822 -> 0.847, u8 products 0.824 -> 0.848,
        // u8 max 0.860 -> 0.865, u8 sums 0.893 -> 0.885 (within noise).
        if matches!((sm, algorithm), (90.., Algorithm::SinglePass))
            && layout::packs_items(size, policy.items_per_thread)
            && policy
                .items_per_thread
                .is_multiple_of(Self::PACKED_THREAD_RUNS)
        {
            policy.thread_runs = Self::PACKED_THREAD_RUNS;
        }
        policy
    }

    /// Element bytes above which the sm_90 single-pass default folds a 16-lane look-back
    /// window ([`TuningPolicy::for_target`]).
    pub const HALF_WINDOW_ABOVE_BYTES: usize = 16;

    /// Interleaved runs of a packed tile's thread on sm_90 ([`TuningPolicy::for_target`]).
    pub const PACKED_THREAD_RUNS: u32 = 4;

    /// The fewest blocks per SM that the register ladder gives a deferred tile prefix before
    /// it drops the deferral ([`TuningPolicy::relaxed_register_cap`]); measured at 6 -> 5.
    pub const DEFERRED_MIN_BLOCKS: u32 = 5;

    /// The default policy for a scan of shape `variant` ([`TuningPolicy::for_target`] for the
    /// flat and the reverse scan).
    ///
    /// A segmented scan keeps its items as elements with a 64-bit head mask and lifts one item
    /// at a time into a `(value, head)` pair (scan-codegen/templates/tile.cu.tera), so it takes the element's
    /// shape; its block scan and look-back move the pair
    /// ([`crate::layout::segmented_size`]). Strided rows have no contiguous tile for the L2
    /// prefetch to ask for; staged keys and flags need shared memory beside the tile.
    pub fn for_variant(
        sm: u32,
        algorithm: Algorithm,
        elem_size: usize,
        elem_align: usize,
        variant: crate::ScanVariant,
    ) -> TuningPolicy {
        if variant.segments == crate::Segments::Columns {
            return Self::for_columns(sm, elem_size);
        }
        if !variant.segments.is_segmented() {
            return TuningPolicy::for_target(sm, algorithm, elem_size);
        }
        let scanned = crate::layout::segmented_size(elem_size, elem_align);
        let mut policy = TuningPolicy::for_target(sm, algorithm, elem_size);
        // One head bit per item in a 64-bit mask. Head rules that test a byte per item (staged
        // flags, 1- and 2-byte keys) keep 32: at 64, ptxas gave their head loops 168 to 220
        // registers (2 to 3 blocks per SM), and 32 items measured flags 0.76-0.87 of a copy
        // against 0.62-0.83 at 64 (H100, 2^28, bench/results/h100-variants-session6-32-items.md).
        //
        // Forward flags are read as vectors straight into the head mask (segments.cu.tera,
        // scan_flags_direct), and offsets' head bits as whole words: no per-item loop, so 64
        // items as for rows.
        let head_items = match variant.segments {
            crate::Segments::Flags if variant.direction == crate::Direction::Forward => 64,
            crate::Segments::Flags => 32,
            crate::Segments::Keys(k) if k.size() <= 2 => 32,
            _ => 64,
        };
        policy.items_per_thread = policy.items_per_thread.min(head_items);
        // A segmented tile lifts its items into pairs as it folds them: one chain
        // (scan_codegen::render forces it; said here so that the register ladder does not step
        // down runs the kernel never had).
        policy.thread_runs = 1;
        // Offsets: a round of marking reads (scan-codegen/templates/segments.cu.tera) covers the
        // entries of a tile whose segments average 16 elements, plus two block-widths: the
        // probes' bracket starts up to a stride (about a block-width at 2^24 entries) early, and
        // random lengths spill past the mean. One round then marks most tiles; a second round is
        // a dependent read. H100, 2^28 i32 in 2^24 random segments (128 x 64 tiles): 2 reads a
        // thread 0.836 of a copy, 4: 0.897, 5: 0.903, 6: 0.918; the 8-byte affine op (128 x 32)
        // 0.853 at 2 and 3, 0.861 at 4; fewer segments took no harm from more reads.
        if let crate::Segments::Keys(_) = variant.segments {
            policy.warp_scan_branches = true;
        }
        if let crate::Segments::Offsets(_) = variant.segments {
            let dense = policy.tile_items() / (16 * policy.block_threads);
            policy.offset_reads = (dense + 2).clamp(2, 6);
        }
        if matches!(variant.segments, crate::Segments::Rows { strided: true }) {
            policy.l2_prefetch_tiles = 0;
        }
        // Staged keys (8-byte ones beside 8-byte values) can outgrow the static shared-memory
        // limit: halve the items until the tile fits.
        let fits = |p: &TuningPolicy| {
            crate::layout::static_shared_bytes(p, algorithm, elem_size, elem_align)
                + crate::layout::variant_shared_bytes(p, variant, elem_size, scanned)
                <= Self::MAX_STATIC_SHARED_BYTES
        };
        while !fits(&policy) && policy.items_per_thread > 1 {
            policy.items_per_thread /= 2;
        }
        policy
    }

    /// The default policy for a scan by `op` in shape `variant`, fused with `transform` when
    /// given: [`Self::for_transform`] for a fused scan, [`Self::for_variant`] otherwise, with
    /// the deferral's floor of blocks per SM where `op`'s word combine needs it
    /// ([`Self::deferred_words_need_a_block`]).
    pub fn for_scan(
        sm: u32,
        algorithm: Algorithm,
        op: &scan_core::OpSpec,
        variant: crate::ScanVariant,
        transform: Option<&scan_core::TransformSpec>,
    ) -> TuningPolicy {
        let (size, align) = (op.element.size(), op.element.align());
        match transform {
            Some(t) => Self::for_transform(
                sm,
                algorithm,
                size,
                align,
                variant,
                &t.input_sizes(),
                t.output.size(),
            ),
            None => {
                let policy = Self::for_variant(sm, algorithm, size, align, variant);
                let plain = variant.segments == crate::Segments::None;
                let needs_a_block = plain
                    && policy.defer_tile_prefix
                    && layout::packs_items(size, policy.items_per_thread)
                    && op
                        .word_form
                        .is_some_and(|form| Self::deferred_words_need_a_block(form, size));
                TuningPolicy {
                    min_blocks_per_sm: if needs_a_block {
                        policy.min_blocks_per_sm.min(Self::DEFERRED_MIN_BLOCKS)
                    } else {
                        policy.min_blocks_per_sm
                    },
                    ..policy
                }
            }
        }
    }

    /// Whether a deferred tile prefix ([`TuningPolicy::defer_tile_prefix`]) of packed items of
    /// `elem_size` bytes combined a word at a time by `form` keeps more registers than the
    /// default's 6 blocks per SM leave, so that the scan asks for
    /// [`Self::DEFERRED_MIN_BLOCKS`] from the start ([`Self::for_scan`]). Byte max and min
    /// (two words of 16-bit lanes a word) and 1- and 2-byte products: every default kernel of
    /// theirs spilled at 6 blocks (88-152 bytes for bytes, 44-56 for 2-byte products; prefix
    /// and suffix, inclusive and exclusive, with and without the paths of unaligned buffers)
    /// and fit at 5, under NVRTC 12.9 and 13.0 alike (every generated kernel's register
    /// ladder, `SCANGEN_NVRTC_LADDER=1`, session 50). The register ladder ended there anyway;
    /// asking for it spares an empty cache one NVRTC compile that spills, and the shapes that
    /// depend on the default's cap (`for_few_waves_input`, `for_many_waves_input`) know it
    /// before the default is built. Sums, bitwise forms and half max/min fit at 6.
    pub fn deferred_words_need_a_block(form: scan_core::WordForm, elem_size: usize) -> bool {
        use scan_core::WordForm;
        match form {
            WordForm::WrappingMul => elem_size <= 2,
            WordForm::Max | WordForm::Min => elem_size == 1,
            _ => false,
        }
    }

    /// The default policy for a fused scan ([`crate::generate_fused`]) of shape `variant`
    /// whose lift reads arrays of `input_sizes` bytes and whose project writes `output_size`.
    ///
    /// An unsegmented single-pass tile keeps its inputs staged in shared memory from its load to
    /// its finish, and a thread holds only its reduction across the block scan and the look-back
    /// (scan-codegen/templates/fused.cu.tera): the tile is sized by the staged arrays, not by
    /// the element. Each tile pays a fixed cost (barriers, publishing a status of the element's
    /// size, the look-back), which a bigger tile spreads over more bytes; on an H100 the fused
    /// Kadane scan ran at 0.23 and 0.40 of a copy with 512- and 1024-item tiles of lifted items
    /// in registers, 0.78 with 4096-item tiles of staged inputs
    /// (bench/results/h100-fused-session12.txt), and 0.88 with those tiles prefetched into L2.
    /// The block's shape and its shared-memory budget: [`Self::FUSED_SM90_TILE`] where the
    /// architecture has the bulk L2 prefetch, [`Self::FUSED_TILE`] before; items are halved
    /// from [`Self::MAX_ITEMS_PER_THREAD`] until the warps' staged slices fit the budget and a
    /// thread's read-back inputs fit [`Self::FUSED_HELD_BYTES`]. Segmented and hierarchical
    /// fused scans keep elements in registers: [`Self::for_variant`].
    pub fn for_transform(
        sm: u32,
        algorithm: Algorithm,
        elem_size: usize,
        elem_align: usize,
        variant: crate::ScanVariant,
        input_sizes: &[usize],
        output_size: usize,
    ) -> TuningPolicy {
        if !Self::stages_fused_tile(algorithm, variant) {
            return Self::for_variant(sm, algorithm, elem_size, elem_align, variant);
        }
        // The bulk L2 prefetch's architectures (as in for_target) get the bigger block.
        let tile = if sm >= 90 {
            Self::FUSED_SM90_TILE
        } else {
            Self::FUSED_TILE
        };
        Self::staged_tile(tile, input_sizes, output_size)
    }

    /// Whether a fused scan of this shape stages its tile's inputs ([`Self::for_transform`]):
    /// single-pass, unsegmented, not columns. Other shapes keep lifted elements in registers
    /// under the element's policy.
    fn stages_fused_tile(algorithm: Algorithm, variant: crate::ScanVariant) -> bool {
        algorithm == Algorithm::SinglePass
            && !variant.segments.lifts_elements()
            && variant.segments != crate::Segments::Columns
    }

    /// A staged tile ([`TuningPolicy::stage_items`]) in the block `tile`: items from
    /// [`Self::MAX_ITEMS_PER_THREAD`] halved until the warps' slices of the staged arrays fit
    /// the tile's exchange and a thread's read-back inputs fit [`Self::FUSED_HELD_BYTES`] (none
    /// where the output is written in place of the single input:
    /// [`crate::layout::FusedStaging::output_in_place`]).
    fn staged_tile(tile: FusedTile, input_sizes: &[usize], output_size: usize) -> TuningPolicy {
        let exchange_bytes = tile.exchange_bytes;
        let mut policy = TuningPolicy {
            min_blocks_per_sm: tile.min_blocks_per_sm,
            l2_prefetch_tiles: tile.l2_prefetch_tiles,
            vector_bytes: 1,
            stage_items: true,
            ..TuningPolicy::new(tile.block_threads, Self::MAX_ITEMS_PER_THREAD)
        };
        let fits = |p: &TuningPolicy| {
            let staging =
                crate::layout::fused_staging(p.items_per_thread, input_sizes, output_size, true);
            let held = if staging.output_in_place {
                0
            } else {
                input_sizes.iter().sum::<usize>() * p.items_per_thread as usize
            };
            p.block_threads as usize / 32 * staging.warp_bytes as usize <= exchange_bytes
                && held <= Self::FUSED_HELD_BYTES
        };
        while !fits(&policy) && policy.items_per_thread > 1 {
            policy.items_per_thread /= 2;
        }
        policy
    }

    /// A fused single-pass block on sm_90 and later: 256 threads, three blocks per SM (an
    /// 80-register cap), a 72 KiB exchange (three fit an SM's 228 KiB, from dynamic shared
    /// memory), the L2 prefetch 48 tiles ahead. Kadane's tile doubles to 8192 items
    /// against [`Self::FUSED_TILE`]'s 4096, and the same bytes ahead are prefetched:
    /// H100, 2^28, Kadane 0.913 of a copy against 0.877-0.884 (bench/results).
    pub const FUSED_SM90_TILE: FusedTile = FusedTile {
        block_threads: 256,
        min_blocks_per_sm: 3,
        exchange_bytes: 72 * 1024,
        l2_prefetch_tiles: 48,
    };

    /// The fused single-pass block for inputs too small to give every SM a tile of
    /// [`Self::FUSED_SM90_TILE`] (sm_90): session 13's default, 128 threads, cap 5, a 36 KiB
    /// exchange, 96 tiles ahead. H100, Kadane at 2^20 (128 tiles of 8192 items): 0.31 of a copy
    /// with the large tile, 0.51 with this one; the element's small-input shape
    /// ([`Self::for_small_input`], 512 lifted items) is built for plain tiles.
    pub const FUSED_SM90_SMALL_TILE: FusedTile = FusedTile {
        block_threads: 128,
        min_blocks_per_sm: 5,
        exchange_bytes: 36 * 1024,
        l2_prefetch_tiles: 96,
    };

    /// The second shape of a fused scan for inputs too small for the default one to give
    /// every SM a tile ([`Self::FUSED_SM90_SMALL_TILE`] staged as in
    /// [`Self::for_transform`]); `None` where no such shape is tuned (before sm_90, and for
    /// shapes whose fused tile is the element's: segmented, column and hierarchical scans).
    pub fn for_small_transform(
        sm: u32,
        algorithm: Algorithm,
        variant: crate::ScanVariant,
        input_sizes: &[usize],
        output_size: usize,
    ) -> Option<TuningPolicy> {
        (sm >= 90 && Self::stages_fused_tile(algorithm, variant))
            .then(|| Self::staged_tile(Self::FUSED_SM90_SMALL_TILE, input_sizes, output_size))
    }

    /// The shape of a scan by `op` in shape `variant` (fused with `transform` when
    /// given) for inputs of size class `size` ([`Self::input_size`]): the default
    /// ([`Self::for_scan`]) for large inputs, the small-input shape ([`Self::for_small_input`],
    /// or [`Self::for_small_transform`] for a fused scan), the mid-size one
    /// ([`Self::for_mid_input`]), the few-waves one ([`Self::for_few_waves_input`]) or the
    /// many-waves one ([`Self::for_many_waves_input`]) otherwise. `None` where that shape is
    /// not tuned: segmented scans have none of them, fused scans only a small one.
    pub fn for_input_size(
        size: InputSize,
        sm: u32,
        algorithm: Algorithm,
        op: &scan_core::OpSpec,
        variant: crate::ScanVariant,
        transform: Option<&scan_core::TransformSpec>,
    ) -> Option<TuningPolicy> {
        if size == InputSize::Large {
            return Some(Self::for_scan(sm, algorithm, op, variant, transform));
        }
        let element = &op.element;
        if variant.segments.is_segmented() {
            return None;
        }
        match (size, transform) {
            (InputSize::Small, Some(t)) => {
                Self::for_small_transform(sm, algorithm, variant, &t.input_sizes(), t.output.size())
            }
            (InputSize::Small, None) => Self::for_small_input(sm, algorithm, element.size()),
            (InputSize::Tiny, None) => Self::for_tiny_input(sm, algorithm, element.size()),
            (InputSize::Tiny, Some(_)) => None,
            (InputSize::FewWaves, None) => Self::for_few_waves_input(sm, algorithm, element.size()),
            (InputSize::ManyWaves, None) => {
                Self::for_many_waves_input(sm, algorithm, element.size(), variant.direction)
            }
            (_, None) => Self::for_mid_input(sm, algorithm, element.size()),
            (_, Some(_)) => None,
        }
    }

    /// A fused single-pass block before sm_90 (no bulk L2 prefetch): 128 threads, five blocks
    /// per SM (96 registers: Kadane 0.835 of a copy against 0.781 at 6 blocks and 0.809 at 4
    /// on an H100), and the flat scan's 32 KiB tile with its bank padding as the exchange.
    pub const FUSED_TILE: FusedTile = FusedTile {
        block_threads: 128,
        min_blocks_per_sm: 5,
        exchange_bytes: 36 * 1024,
        l2_prefetch_tiles: 0,
    };

    /// Input bytes a fused thread may read back into registers for its finish (beside the
    /// look-back's registers, under the 80-register cap of 6 blocks per SM): 32 registers.
    pub const FUSED_HELD_BYTES: usize = 128;

    /// Column scans (scan-codegen/templates/columns.cu.tera): 256 threads under a 2-block cap,
    /// each holding a run of one column's rows in registers (read straight from global memory,
    /// so no shared-memory tile bounds it). A tall matrix's tiles chain down each strip and
    /// every link costs a look-back, so tiles are as big as two blocks' registers allow:
    /// [`Self::COLUMN_BYTES_PER_THREAD`] of items (4-byte elements 64, 8-byte 32, 16-byte 16,
    /// 32-byte 8), and 32 items of 1- and 2-byte ones (a register each). On an H100 at 2^28,
    /// i32 at 64 items against 32 went from 0.48 to 0.60 of a copy on 2^24 x 16
    /// (bench/results/h100-columns-session16.md), and the 8-byte affine struct at 32 items
    /// against 64 (which spilled at the 2-block cap and ran at one block per SM) from
    /// 0.68-0.96 to 0.87-0.99 on every shape (bench/results/h100-columns-flags-session17.md,
    /// run 3). On sm_90, the flat scan's L2 prefetch (48 tiles ahead), which the column kernel
    /// asks for where a chunk's rows are a few strips of one contiguous band (tall matrices).
    fn for_columns(sm: u32, elem_size: usize) -> TuningPolicy {
        let size = elem_size.max(1);
        let items = match size {
            1..=3 => 32,
            _ => (Self::COLUMN_BYTES_PER_THREAD / size).max(1) as u32,
        };
        TuningPolicy {
            min_blocks_per_sm: 2,
            // Column threads move one element per access; 8 lets an 8-byte struct of two
            // 4-byte fields move as one word (element_vectors), as the flat tiles' do.
            vector_bytes: 8,
            l2_prefetch_tiles: if sm >= 90 { 48 } else { 0 },
            ..TuningPolicy::new(256, prev_power_of_two(items))
        }
    }

    /// Bytes of items a column-scan thread holds (elements of 4 bytes or more).
    pub const COLUMN_BYTES_PER_THREAD: usize = 256;

    /// A second shape for inputs too small to give every multiprocessor a tile of the default
    /// shape, where the single-pass scan is latency-bound: smaller tiles let more blocks share
    /// the work. `None` where no such shape is tuned (the default is then used for every n).
    ///
    /// sm_90: measured with `scangen tune --log2n 16` on an H100 (BENCHMARKS.md): 128 x 16
    /// reached 0.96 of a copy for i32 (the default shape 0.78), 0.81 for f64 (0.68) and 0.82
    /// for the 8-byte affine struct (0.65). A thread holds up to 16 registers of items, which
    /// packed sub-word items fill 4 / size at a time (layout::packs_items): u8 64 items and u16
    /// 32, where 16 had them at 2^20 take 1.12x and 1.09x as long (equal at 2^16 and 2^18;
    /// bench/results/h100-sub-word-session15.md, run 10). Elements over 16 bytes hold 8 items
    /// (256 bytes), below which their tiles lost.
    pub fn for_small_input(
        sm: u32,
        algorithm: Algorithm,
        elem_size: usize,
    ) -> Option<TuningPolicy> {
        if sm < 90 || algorithm != Algorithm::SinglePass {
            return None;
        }
        let size = elem_size.max(1);
        let per_register = crate::layout::items_per_register(size);
        // At least 8 items: 24- and 32-byte elements at 4 (512-item tiles) took 7.8 and 10.3 us
        // at 2^16 against 7.5 and 9.2 at 8 (H100, device time).
        let items = prev_power_of_two((128 / size).clamp(8, 16 * per_register) as u32);
        let large = TuningPolicy::for_target(sm, algorithm, elem_size);
        let policy = TuningPolicy {
            resident_tiles: Self::resident_in_one_wave(size),
            // As the default tile (elements up to 8 bytes). H200, 2^16, deferred (session 41):
            // within 0.01 of a copy either way, i32 max 0.685-0.688 -> 0.689-0.718.
            defer_tile_prefix: large.defer_tile_prefix,
            // The default tile's paths for buffers off a vector boundary and for a suffix scan
            // whose n is not whole vectors: without them, every such tile went item by item,
            // and a u8 sum of a sub-slice at +1 took 1.4x the aligned scan's time at 2^16-2^18
            // (0.0066-0.0068 ms against 0.0048-0.0049), 0.0057-0.0060 with them; at 2^20
            // 0.0075-0.0077 -> 0.0059-0.0062, the aligned scan's 0.0056-0.0059 (u16 1.15x ->
            // 1.05-1.1x; H200, session 47).
            partial_tile_vectors: large.partial_tile_vectors,
            shifted_tile_vectors: large.shifted_tile_vectors,
            shifted_store_rereads: large.shifted_store_rereads,
            // Every item of a thread's unrolled (the default tile unrolls 16 of 256 to cut
            // NVRTC's time): the item path holds a suffix scan's first tile where n is not whole
            // vectors, which every later tile waits on, and rolled 16 at a time its loads took
            // four round trips: reversed u8 sums of 2^16 - 1 and 2^20 - 1 elements took 0.0099
            // ms, 0.0068 unrolled, and u8 max 0.0094-0.0095 -> 0.0064 (H200, session 47).
            item_path_unroll: 0,
            aligned_tiles: large.aligned_tiles,
            lead_tiles: large.lead_tiles,
            // Built for aligned buffers without the lead's tiles and the shifted vectors, which
            // its twin has: with them, aligned u16 scans at 2^20 took 0.0068-0.0069 ms (sums)
            // and 0.0071-0.0073 (max) against 0.0066-0.0067 and 0.0068 without (H200, session
            // 48, call 1).
            unaligned_paths_in_twin: true,
            ..TuningPolicy::new(128, items)
        };
        (policy.tile_items() < large.tile_items()
            && policy.validate(algorithm, size, size.min(8)).is_ok())
        .then_some(policy)
    }

    /// The small shape ([`Self::for_small_input`]) with half its items a thread, for the
    /// shortest inputs of 1- and 2-byte elements: at most [`Self::TINY_INPUT_SMS_PER_TILE`] SMs'
    /// worth of default tiles ([`Self::input_size`]; 2^17 1-byte or 2^16 2-byte elements on an
    /// H100 or H200), where the small shape's tiles leave most SMs idle. `None` for other
    /// elements and wherever there is no small shape.
    ///
    /// sm_90, H200, `scangen tune --device-time`, the small shape -> half its items (ms;
    /// bench/results/h200-session49.md, call 4, and session 46's calls 5-6): u8 sums at 2^16
    /// 0.0048 -> 0.0045, max 0.0050 -> 0.0046, products 0.0051 -> 0.0046; at 2^17 sums 0.0048
    /// -> 0.0047, max 0.0050 -> 0.0047, products 0.0052 -> 0.0048; u16 sums at 2^16 0.0048 ->
    /// 0.0046, f16 max 0.0052 -> 0.0049. Past that (u8 at 2^18, u16 at 2^17) the small shape's
    /// own tile was as fast or faster (u8 sums 0.0048 against 0.0050-0.0052 at 2^18, session
    /// 46; u16 sums 0.0049 against 0.0052 at 2^17). 4- and 8-byte elements gained nothing
    /// there (i32 sums at 2^16: 0.0049-0.0050 with 16 items, 0.0052-0.0053 with 8; i64 and the
    /// 8-byte affine map within 0.0002 either way), nor 16-byte ones (f32x4, f64x2 at 2^16
    /// 0.0063-0.0064 with 8 items, 0.0068 with 4).
    pub fn for_tiny_input(sm: u32, algorithm: Algorithm, elem_size: usize) -> Option<TuningPolicy> {
        if !layout::PACKED_ELEMENT_SIZES.contains(&elem_size) {
            return None;
        }
        let small = Self::for_small_input(sm, algorithm, elem_size)?;
        let policy = TuningPolicy {
            items_per_thread: small.items_per_thread / 2,
            ..small
        };
        policy
            .validate(algorithm, elem_size, elem_size)
            .is_ok()
            .then_some(policy)
    }

    /// SMs per default tile up to which an input takes the tiny-input shape
    /// ([`Self::for_tiny_input`], [`Self::input_size`]): 4 default tiles on 132 SMs, a quarter of
    /// the SMs in the tiny shape's tiles (an eighth of a default tile).
    pub const TINY_INPUT_SMS_PER_TILE: u64 = 32;

    /// A third shape for inputs between the small and the default ones
    /// ([`Self::input_size`]): the default tile, held by [`Self::MID_INPUT_THREADS`] threads
    /// (twice the default's 128, with half the items each). Such an input fills at most one
    /// wave of tiles, so each SM runs a block or a few
    /// rather than many, and a tile's serial steps (its loads, its thread fold, the look-back
    /// wait) are the scan's time: more threads per tile shorten each. `None` before sm_90, for
    /// hierarchical scans, and for elements over 16 bytes (whose wider blocks lose occupancy:
    /// the 32-byte matrix took 1.1x as long at 2^20 and 2^22) or of sizes that are not powers
    /// of two.
    ///
    /// sm_90, on an H100 (bench/results/h100-mid-size-session19.md; `scangen bench
    /// --element-sizes --device-time`, fraction of a copy, the build before it -> with it): i32
    /// 0.51 -> 0.58 at 2^20 and 0.65 -> 0.69 at 2^22; the 8-byte affine struct 0.51 -> 0.59 at
    /// 2^20 and 0.58 -> 0.69 at 2^21; u16 0.48 -> 0.56 at 2^21; u8 0.47 -> 0.52 at 2^22; f32x4
    /// 0.45 -> 0.52 and f64x2 0.48 -> 0.53 at 2^18. `scangen tune` found this shape (256 x 32
    /// for i32) the best or within noise of it among 128, 256 and 512 threads at 2^20 and 2^22.
    pub fn for_mid_input(sm: u32, algorithm: Algorithm, elem_size: usize) -> Option<TuningPolicy> {
        // Power-of-two sizes only: 12-byte elements (three 4-byte vectors each) took 1.03-1.05x
        // as long at 2^19 and 2^20.
        if sm < 90
            || algorithm != Algorithm::SinglePass
            || elem_size > 16
            || !elem_size.is_power_of_two()
        {
            return None;
        }
        let large = TuningPolicy::for_target(sm, algorithm, elem_size);
        let threads = Self::MID_INPUT_THREADS.max(large.block_threads);
        if !large.tile_items().is_multiple_of(threads) {
            return None;
        }
        let min_blocks_per_sm = Self::mid_input_blocks(elem_size)
            .map_or(large.min_blocks_per_sm, |cap| {
                cap.min(large.min_blocks_per_sm)
            });
        // (Generation turns a resident shape's L2 prefetch off: one wave has no later tile.)
        // The range ends at one wave of this shape's blocks, so its first wave is its only one
        // and loads at once (packed tiles are claimed: without the stagger's test, u8 sums ran
        // 0.686 of a copy at 2^24, device time, and 0.671 with it).
        let items_per_thread = large.tile_items() / threads;
        let policy = TuningPolicy {
            block_threads: threads,
            items_per_thread,
            min_blocks_per_sm,
            resident_tiles: Self::resident_in_one_wave(elem_size),
            first_wave_bytes_per_ns: 0,
            // Unpacked one-wave tiles keep seeding their scans: deferred, f32 max lost 0.02-0.03
            // of a copy at 2^20 and i32 and f32 sums up to 0.02 (H200, session 41), where the
            // look-back of one wave has no other tile's work to overlap.
            defer_tile_prefix: large.defer_tile_prefix
                && layout::packs_items(elem_size, items_per_thread),
            ..large
        };
        let align = elem_size.min(8);
        let fits = policy.validate(algorithm, elem_size, align).is_ok()
            && layout::static_shared_bytes(&policy, algorithm, elem_size, align)
                <= Self::MAX_STATIC_SHARED_BYTES;
        fits.then_some(policy)
    }

    /// The default tile at the deferral's floor of blocks per SM
    /// ([`Self::DEFERRED_MIN_BLOCKS`], where the default asks for 6), for inputs of 1-byte
    /// elements past the mid-size shape's one wave and up to [`Self::FEW_WAVES_INPUT_WAVES`]
    /// waves of this shape's blocks ([`Self::input_size`]). sm_90 single-pass scans of 1-byte
    /// elements only (as the mid-size shape it follows).
    ///
    /// How many blocks per SM suit a 1-byte tile depends on how many waves the input makes,
    /// not on the operator: on an H100 (device time, `tile_timeline.py`,
    /// bench/results/h100-session37.md, calls 10-12), u8 sums at 2^25 (1024 default tiles, 1.3
    /// waves of 6-block tiles) ran 0.810-0.822 of a copy at 5 blocks against 0.774-0.787 at 6
    /// (and 0.779-0.783 in the mid-size shape, 256 x 128 at 5 blocks); at 2^26 (2048 tiles) the
    /// two agreed (0.873-0.877 / 0.874-0.875), and from 2^27 6 blocks led (0.926-0.929 against
    /// 0.915-0.916; 0.946-0.948 against 0.933-0.935 at 2^28); beside the build before it (call
    /// 13), u8 and i8 sums and xor at 2^25 went from 0.781-0.797 to 0.822-0.847. Byte max, min
    /// and products fit 6 blocks only reading their run back, which lost them 0.03-0.05 at 2^25
    /// for 0.01 at 2^28 (call 9), so the register ladder builds their default at 5 already and
    /// the runtime keeps the default for them (`ScanEngine::few_waves_takes_a_block`).
    pub fn for_few_waves_input(
        sm: u32,
        algorithm: Algorithm,
        elem_size: usize,
    ) -> Option<TuningPolicy> {
        if sm < 90 || algorithm != Algorithm::SinglePass || elem_size != 1 {
            return None;
        }
        let large = Self::for_target(sm, algorithm, elem_size);
        (large.min_blocks_per_sm > Self::DEFERRED_MIN_BLOCKS).then_some(TuningPolicy {
            min_blocks_per_sm: Self::DEFERRED_MIN_BLOCKS,
            ..large
        })
    }

    /// Waves of the few-waves shape's blocks (the [`Self::DEFERRED_MIN_BLOCKS`] it asks for, on
    /// every SM) up to which an input takes that shape ([`Self::input_size`]): 1980 default
    /// tiles on an H100, just below 2^26 1-byte elements, where 5 and 6 blocks per SM measured
    /// alike.
    pub const FEW_WAVES_INPUT_WAVES: u64 = 3;

    /// The default tile at the default's cap of blocks per SM (6 on sm_90), its deferred scan
    /// reading its run back ([`Self::deferred_scan_rereads_run`]), for 1-byte prefix scans of
    /// more than [`Self::MANY_WAVES_INPUT_TILES_PER_SM`] default tiles an SM
    /// ([`Self::input_size`]). sm_90 single-pass only.
    ///
    /// Byte max, min and products spill at 6 blocks unless their deferred scan reads its run
    /// back, so the register ladder builds their default at 5 (byte sums and xor need no
    /// read-back and hold 6). The sixth block is what separates them from byte sums on long
    /// inputs, and it costs on shorter ones (H100, device time, bench/results/h100-session37.md,
    /// `tile_timeline.py`, two or three rounds): at 2^28, u8 sums ran 0.946-0.948 of a copy at
    /// 6 blocks and 0.933-0.935 at 5, u8 max 0.929-0.934 at 5 (call 4); the default reading
    /// back at 6 took byte max/min/products from 0.929-0.942 to 0.940-0.948 at 2^28 and by
    /// +0.000-0.008 at 2^27, but lost 0.005-0.015 at 2^26 and 0.03-0.05 at 2^25 (calls 8-9).
    /// As this size class, beside the build before it (bench/results/h100-session38.md, call
    /// 1, `scangen bench --device-time`, two rounds): byte max, min and products 0.931-0.938
    /// -> 0.938-0.948 at 2^28, -0.002 to +0.012 at 2^27.
    ///
    /// Suffix scans keep the default: reading back at 6 blocks lost there (H200, device time,
    /// bench/results/h200-session42.md, call 5, three rounds: reversed u8 max and min
    /// 0.811-0.819 -> 0.803-0.809 at 2^28 and 0.778-0.792 -> 0.768-0.775 at 2^27, byte
    /// products -0.005, i8 max exclusive 0.810 -> 0.801; sums within the rounds' spread).
    /// Where the ladder gives the block up anyway (a kernel that spills reading back at 6),
    /// the runtime keeps the default (`ScanEngine::many_waves_adds_a_block`).
    pub fn for_many_waves_input(
        sm: u32,
        algorithm: Algorithm,
        elem_size: usize,
        direction: crate::Direction,
    ) -> Option<TuningPolicy> {
        if sm < 90
            || algorithm != Algorithm::SinglePass
            || elem_size != 1
            || direction != crate::Direction::Forward
        {
            return None;
        }
        let large = Self::for_target(sm, algorithm, elem_size);
        (large.defer_tile_prefix && large.min_blocks_per_sm > Self::DEFERRED_MIN_BLOCKS).then_some(
            TuningPolicy {
                deferred_scan_rereads_run: true,
                ..large
            },
        )
    }

    /// Default tiles an SM past which a 1-byte prefix scan takes the many-waves shape
    /// ([`Self::for_many_waves_input`], [`Self::input_size`]): four waves of the default's 6
    /// blocks per SM, 3168 tiles (2^26.6 elements) on an H100, between 2^26, where reading back
    /// at 6 blocks lost, and 2^27, where it no longer did.
    pub const MANY_WAVES_INPUT_TILES_PER_SM: u64 = 24;

    /// Whether the small- and mid-size shapes of `elem_size`-byte elements (one wave of tiles)
    /// take resident tiles ([`TuningPolicy::resident_tiles`]): every element but the packed 1-
    /// and 2-byte ones. H100, device time, fraction of a copy, claimed -> resident
    /// (bench/results/h100-mid-size-session28.md): i64 sums 0.58
    /// -> 0.62 at 2^18, 0.59 -> 0.63 at 2^20, 0.71 -> 0.74 at 2^21; f32x4 0.51 -> 0.57 at 2^19,
    /// 0.60 -> 0.65 at 2^20; f64x2 0.49 -> 0.55 at 2^19, 0.58 -> 0.64 at 2^20; i32 0.585 ->
    /// 0.61 at 2^18, within noise at 2^19-2^22. Packed u8 sums: within noise from 2^16 to 2^20
    /// and at 2^22, 0.55 -> 0.51 at 2^21; u16 within 0.03 either way.
    fn resident_in_one_wave(elem_size: usize) -> bool {
        !layout::PACKED_ELEMENT_SIZES.contains(&elem_size)
    }

    /// Threads of the mid-size shape's blocks ([`Self::for_mid_input`]).
    pub const MID_INPUT_THREADS: u32 = 256;

    /// The register cap (blocks per SM) of the mid-size shape ([`Self::for_mid_input`]) for
    /// elements of `elem_size` bytes, where it is tighter than the default shape's (`None`: the
    /// default's).
    ///
    /// Twice the default's threads leave half the registers a block: 256 threads at sm_90's 6
    /// blocks per SM leave 40 registers a thread, 48 at 5, 64 at 4. Every 1-, 2- and 4-byte
    /// mid-size kernel spilled at 6 blocks (1-byte ones were measured at 5 from the start, their
    /// default until session 32; 2- and 4-byte ones 32-684 bytes, f16 and bf16 max and min the
    /// most), and all 4-byte and half-float ones fit at 5; every 8-byte one spilled at 5 as
    /// well (8-28 bytes) and fit at 4 (u64 products at 3). NVRTC 12.9 and 13.0 alike, every
    /// generated kernel's register ladder (`SCANGEN_NVRTC_LADDER=1`, session 50). The register
    /// ladder ended on these caps anyway: asking for them keeps its first rung from being a
    /// compile that spills (an f16 max scan of 2^23 elements waited a whole extra NVRTC compile
    /// of 1.7-2.0 s on an empty cache), and the mid-size shape's one wave the same before and
    /// after it is built. 16-byte elements fit at the default's cap.
    pub const fn mid_input_blocks(elem_size: usize) -> Option<u32> {
        match elem_size {
            1 | 2 | 4 => Some(5),
            8 => Some(4),
            _ => None,
        }
    }

    /// Waves of the mid-size shape's blocks (its register cap's blocks on every SM) up to which
    /// an input takes that shape ([`Self::input_size`]).
    pub const MID_INPUT_WAVES: u64 = 1;

    /// Which shape serves an input that the default shape cuts into `tiles` tiles, on a GPU of
    /// `sm_count` multiprocessors where the mid-size shape fits `mid_blocks_per_sm` blocks (its
    /// register cap as built; before it is built, the cap it asks for), given which of the
    /// smaller shapes exist ([`Self::for_small_input`], [`Self::for_mid_input`],
    /// [`Self::for_few_waves_input`]).
    ///
    /// A plain scan's small shape serves inputs of fewer tiles than half the SMs; of those, 1-
    /// and 2-byte inputs of at most [`Self::TINY_INPUT_SMS_PER_TILE`] SMs' worth take the tiny
    /// shape ([`Self::for_tiny_input`]). From there
    /// to one wave of its blocks, the mid-size shape did better than many small tiles (H100:
    /// i32 at 2^20, 128 tiles of 8192, 7.2 us against 8.8 with 512 tiles of 2048; the 8-byte
    /// sum at 2^18, 64 tiles, 7.0 us against the small tiles' 6.4); past one wave it did worse
    /// (u16 at 2^23, whose mid-size shape fits 3 blocks per SM where the default fits 5: 0.54
    /// of a copy against 0.63). Elements with no mid-size shape take the default there: 24-
    /// and 32-byte elements at 2^18 (128 default tiles) took 10.2 and 13.7 us with it against
    /// 14.5 and 20.4 with their small tiles of 512 (H100, device time,
    /// bench/results/h100-mid-size-session28.md). A fused scan (no mid-size shape) takes its
    /// small shape up to the SM count. Past the mid-size shape, 1-byte elements take the
    /// few-waves shape up to [`Self::FEW_WAVES_INPUT_WAVES`] waves of its blocks, and 1-byte
    /// prefix scans the many-waves shape past [`Self::MANY_WAVES_INPUT_TILES_PER_SM`] tiles an
    /// SM.
    pub fn input_size(
        tiles: u64,
        sm_count: u32,
        mid_blocks_per_sm: u32,
        shapes: SizedShapes,
    ) -> InputSize {
        let limits = Self::input_size_limits(sm_count, mid_blocks_per_sm, shapes);
        if limits.tiny.is_some_and(|last| tiles <= last) {
            InputSize::Tiny
        } else if limits.small.is_some_and(|last| tiles <= last) {
            InputSize::Small
        } else if limits.mid.is_some_and(|last| tiles <= last) {
            InputSize::Mid
        } else if limits.few_waves.is_some_and(|last| tiles <= last) {
            InputSize::FewWaves
        } else if limits.many_waves_above.is_some_and(|first| tiles > first) {
            InputSize::ManyWaves
        } else {
            InputSize::Large
        }
    }

    /// The largest default-tile counts the small, the mid-size and the few-waves shape serve,
    /// and the count past which the many-waves shape serves, under [`Self::input_size`]'s rule
    /// (`None`: that shape serves no input).
    pub fn input_size_limits(
        sm_count: u32,
        mid_blocks_per_sm: u32,
        shapes: SizedShapes,
    ) -> InputSizeLimits {
        let sms = u64::from(sm_count.max(1));
        let small_below = if shapes.fused { sms } else { sms.div_ceil(2) };
        let small = (shapes.small && small_below > 1).then_some(small_below - 1);
        // Only below the small shape's inputs (the tiny shape is the small one at half its items).
        let tiny = shapes
            .tiny
            .then_some(sms / Self::TINY_INPUT_SMS_PER_TILE)
            .filter(|&last| last > 0 && small.is_some_and(|s| last < s));
        let one_wave = sms * u64::from(mid_blocks_per_sm.max(1)) * Self::MID_INPUT_WAVES;
        let mid = (shapes.mid && one_wave > small.unwrap_or(0)).then_some(one_wave);
        let few_waves_last =
            sms * u64::from(Self::DEFERRED_MIN_BLOCKS) * Self::FEW_WAVES_INPUT_WAVES;
        let few_waves = (shapes.few_waves && few_waves_last > mid.or(small).unwrap_or(0))
            .then_some(few_waves_last);
        let many_waves_above = shapes.many_waves.then(|| {
            (sms * Self::MANY_WAVES_INPUT_TILES_PER_SM)
                .max(few_waves.or(mid).or(small).unwrap_or(0))
        });
        InputSizeLimits {
            tiny,
            small,
            mid,
            few_waves,
            many_waves_above,
        }
    }

    /// The next shape to try when ptxas had to spill registers to local memory to meet this
    /// one's register cap, for elements of `elem_size` bytes, on a ladder that started at
    /// `first` (the policy asked for). `None`: no cap left to loosen.
    ///
    /// Usually the same shape with a cap one block per SM looser. Any spill counts. On an H100 at
    /// 2^28 (6 blocks per SM asked for): f64 add spilled only 12 bytes and still gained (0.82 of
    /// a copy against 0.76 uncapped), but f32 max spilling 32 bytes at 4 blocks fell to 0.55
    /// against 0.72 uncapped; the spill's cost depends on where it lands, so the runtime does not
    /// bet on it. Stepping down one block at a time finds the tightest cap that does not spill:
    /// 5 blocks (96 registers) for 8-byte sums and min/max.
    ///
    /// Packed sub-word tiles ([`crate::layout::packs_items`]) hold 4 / size items to a register,
    /// and their heavier combines need far more than one block's worth of registers: f16 and
    /// bf16 sums and u8 products went down to 2 blocks (0.71, 0.71 and 0.56 of a copy). At an
    /// odd cap of 3 blocks or more (one block below sm_90's 6, where a small spill has gone: u16
    /// max spilled 4 bytes at 6 blocks, none at 5) such a tile trades items for threads instead:
    /// twice the threads with half the items, at (cap + 1) / 2 blocks. The tile and the threads
    /// per SM stay, each thread's registers hold half the items: 0.82, 0.82 and 0.69 of a copy
    /// (bench/results/h100-sub-word-session15.md).
    ///
    /// A tile folded in several interleaved runs ([`TuningPolicy::thread_runs`]) first halves
    /// its runs at the same cap: the runs shorten the chains of combines, the cap buys
    /// occupancy, and the runs cost registers (u16 products spilled 4 bytes at 6 blocks with the
    /// packed default of 4 runs, none with 2; H100, 2^28: 0.945 of a copy with 2 runs at 6
    /// blocks, 0.932 with 4 at 5).
    ///
    /// A deferred tile prefix ([`TuningPolicy::defer_tile_prefix`]) comes first: byte max/min
    /// and products, 2-byte products and half max/min spill with it at 6 blocks per SM. It may
    /// cost one block, once, down to [`TuningPolicy::DEFERRED_MIN_BLOCKS`]; then the scan
    /// reads its run back from shared memory ([`TuningPolicy::deferred_scan_rereads_run`]);
    /// if the kernel still spills, the deferral goes and the first policy's cap comes back,
    /// and the ladder goes on from there as before deferrals. H100, 2^28, `scangen tune`, two
    /// rounds (bench/results/h100-session32.md), seeded at 6 blocks -> deferred at 5: u8
    /// products 0.894/0.894 -> 0.927/0.932, i8 products 0.886/0.887 -> 0.931/0.931, u16 products
    /// 0.945/0.945 -> 0.962/0.958, i16 0.939/0.946 -> 0.952/0.958; byte max and min within noise
    /// (0.919-0.941 either way). Half max/min still spill deferred at 5 blocks (376 bytes) and
    /// lost 0.01 there seeded (0.918-0.921 -> 0.907-0.908); reading the run back, they fit, and
    /// gained 0.005-0.014 at 2^28 and 0.06-0.11 at 2^24. A suffix scan (`direction`) skips the
    /// read-back when it has given up a block for the deferral: reversed, half max/min lost
    /// 0.004-0.013 with it in session 32, and in session 33 (`scangen tune --reverse`, two
    /// rounds, bench/results/h100-session33.md, call 4) the seeded scan at 6 blocks beat it in
    /// all eight pairs, 0.913-0.926 -> 0.920-0.933. Where the first cap is already the floor
    /// (the mid-size shapes) seeding wins no block back, and a reversed scan reads back as a
    /// forward one does: u8/i8 products at 2^22 took 0.0076-0.0077 ms reading back against
    /// 0.0083-0.0085 seeded (session 34, bench/results/h100-session34.md, call 1).
    ///
    /// Each of those rungs is tried with tiles cut to a buffer's lead
    /// ([`TuningPolicy::lead_tiles`]), the shifted vectors of unaligned buffers and the item
    /// path's short loop ([`TuningPolicy::shifted_tile_vectors`],
    /// [`TuningPolicy::item_path_unroll`]) where the first policy has them; then without the
    /// lead's tiles (the kernel as it was before them: a prefix scan's tiles start at a runtime
    /// offset with them, which can cost registers, and where it does the ladder keeps what the
    /// kernel had before); then without the shifted vectors and the short loop too; then also
    /// without the partial tile's vectors ([`TuningPolicy::partial_tile_vectors`]):
    /// they serve the tiles that are not whole and aligned (one or two of a launch, unless the
    /// buffers are unaligned), and a spill (or a rung further down) costs every tile, so they
    /// are the first things a rung gives up, and the next rung asks for them again. (Given up
    /// together, the shifted vectors took the partial tile's from byte max/min exclusive scans.)
    pub fn relaxed_register_cap(
        &self,
        first: &TuningPolicy,
        elem_size: usize,
        direction: crate::Direction,
    ) -> Option<TuningPolicy> {
        // A twin for unaligned buffers goes straight to the next cap (restoring nothing: it
        // never gave anything up).
        let vectors = self.vector_items(elem_size) > 1 && !self.keeps_unaligned_paths;
        if self.lead_tiles && self.aligned_tiles && vectors {
            return Some(TuningPolicy {
                lead_tiles: false,
                ..*self
            });
        }
        if (self.shifted_tile_vectors || self.item_path_unroll != 0) && vectors {
            return Some(TuningPolicy {
                shifted_tile_vectors: false,
                item_path_unroll: 0,
                ..*self
            });
        }
        if self.partial_tile_vectors && vectors {
            return Some(TuningPolicy {
                partial_tile_vectors: false,
                ..*self
            });
        }
        let next = self
            .with_unaligned_paths_of(first)
            .next_register_rung(first, elem_size, direction)?;
        Some(next)
    }

    /// Every rung of the register ladder that starts at this policy, in the order the runtime
    /// tries them: its first rung ([`TuningPolicy::first_rung`]: this policy, unless it leaves
    /// paths to its twin), then [`TuningPolicy::relaxed_register_cap`] again and again until
    /// nothing is left to loosen. The runtime builds the rungs after the first side by side
    /// (scan-runtime's register_ladder.rs), so it needs them all up front.
    pub fn register_ladder(
        &self,
        elem_size: usize,
        direction: crate::Direction,
    ) -> Vec<TuningPolicy> {
        let first = self.first_rung();
        let mut rungs = vec![first];
        while let Some(next) =
            rungs[rungs.len() - 1].relaxed_register_cap(&first, elem_size, direction)
        {
            rungs.push(next);
        }
        rungs
    }

    /// The policy the register ladder starts at: this one, without the paths it leaves to its
    /// twin ([`TuningPolicy::unaligned_paths_in_twin`]; a twin, which has them, is built with
    /// that off).
    pub fn first_rung(&self) -> TuningPolicy {
        if !self.unaligned_paths_in_twin {
            return *self;
        }
        TuningPolicy {
            lead_tiles: false,
            shifted_tile_vectors: false,
            ..*self
        }
    }

    /// Local memory (bytes per thread) that giving up the paths of buffers off a vector boundary
    /// does not close. In every generated kernel's ladder (`SCANGEN_NVRTC_LADDER=1`, NVRTC 12.9
    /// and 13.0, session 50) those rungs closed no spill over 72 bytes (reversed byte and/or/xor
    /// keep 68-72 bytes with the lead's tiles, none without) and moved larger ones by at most 92
    /// (2-byte products' 400-500), where a deferred byte max/min tile keeps 120-152 bytes until
    /// the run is read back from shared memory or the cap loosens.
    pub const SPILL_PAST_PATHS_BYTES: u32 = 96;

    /// The index of the rung of `ladder` ([`TuningPolicy::register_ladder`]) to try after rung
    /// `tried` kept `local_bytes` of local memory; `None` where it kept none or was the last.
    ///
    /// Where `tried` spilled more than [`TuningPolicy::SPILL_PAST_PATHS_BYTES`], the rungs
    /// after it that only give up paths of unaligned buffers are passed over for the next rung
    /// that changes anything else (they would spill as well), so that rung is built in the
    /// first batch of side-by-side compiles rather than a later one (scan-runtime's
    /// register_ladder.rs): the mid-size byte max ladder took three rounds of NVRTC compiles
    /// (NVRTC 13.0: its 10th rung fits, compiled 8 at a time), and takes two. A ladder whose
    /// last rungs all give up paths still tries them.
    pub fn next_rung_to_try(
        ladder: &[TuningPolicy],
        tried: usize,
        local_bytes: u32,
    ) -> Option<usize> {
        let next = tried + 1;
        if local_bytes == 0 || next >= ladder.len() {
            return None;
        }
        let past_paths = (local_bytes > Self::SPILL_PAST_PATHS_BYTES)
            .then(|| {
                (next..ladder.len())
                    .find(|&j| !ladder[j].differs_only_in_unaligned_paths(&ladder[tried]))
            })
            .flatten();
        Some(past_paths.unwrap_or(next))
    }

    /// Whether this policy is `other` but for the paths of buffers off a vector boundary.
    fn differs_only_in_unaligned_paths(&self, other: &TuningPolicy) -> bool {
        self.with_unaligned_paths_of(other) == *other
    }

    /// This policy with `other`'s paths of buffers off a vector boundary (the lead's tiles, the
    /// shifted vectors and the item path's short loop, the partial tile's vectors): the rungs
    /// of one cap differ in these alone.
    fn with_unaligned_paths_of(&self, other: &TuningPolicy) -> TuningPolicy {
        TuningPolicy {
            lead_tiles: other.lead_tiles,
            shifted_tile_vectors: other.shifted_tile_vectors,
            item_path_unroll: other.item_path_unroll,
            partial_tile_vectors: other.partial_tile_vectors,
            ..*self
        }
    }

    /// The policy of this kernel's twin for buffers off a vector boundary, for `algorithm`'s
    /// kernels of elements of `elem_size` bytes: the same shape, whose register ladder keeps the
    /// paths of such buffers and loosens the cap instead
    /// ([`TuningPolicy::keeps_unaligned_paths`]). `None` where this policy has none of those
    /// paths (elements moved one at a time, or of 4 bytes and more) or is a twin already, and
    /// for the hierarchical algorithms: their byte products' and min/max's kernels still spill
    /// with the paths at one block per SM (NVRTC 12.9: 4 bytes in the spine's and the tiles'
    /// scans), where the single-pass kernel is the fast scan anyway.
    pub fn unaligned_twin(&self, algorithm: Algorithm, elem_size: usize) -> Option<TuningPolicy> {
        let paths = self.lead_tiles && self.aligned_tiles
            || self.shifted_tile_vectors
            || self.partial_tile_vectors;
        let twin = paths
            && algorithm == Algorithm::SinglePass
            && self.vector_items(elem_size) > 1
            && !self.keeps_unaligned_paths;
        twin.then_some(TuningPolicy {
            keeps_unaligned_paths: true,
            unaligned_paths_in_twin: false,
            ..*self
        })
    }

    /// Whether `built`, a rung of this policy's register ladder, gave up a path of buffers off a
    /// vector boundary that this policy asks for (the lead's tiles, shifted vectors, the partial
    /// tile's vectors): then the twin ([`TuningPolicy::unaligned_twin`]) serves such buffers.
    pub fn unaligned_paths_given_up(&self, built: &TuningPolicy) -> bool {
        (self.lead_tiles && !built.lead_tiles)
            || (self.shifted_tile_vectors && !built.shifted_tile_vectors)
            || (self.partial_tile_vectors && !built.partial_tile_vectors)
    }

    /// The rung of [`TuningPolicy::relaxed_register_cap`] below this one, the partial tile's
    /// vectors left as they are.
    fn next_register_rung(
        &self,
        first: &TuningPolicy,
        elem_size: usize,
        direction: crate::Direction,
    ) -> Option<TuningPolicy> {
        let packed = crate::layout::packs_items(elem_size, self.items_per_thread);
        if self.defer_tile_prefix && !packed {
            // Unpacked tiles give the deferral up first: seeded, the kernel is the one tuned
            // before deferrals, at the same cap.
            return Some(TuningPolicy {
                defer_tile_prefix: false,
                ..*self
            });
        }
        if self.defer_tile_prefix && packed {
            let gives_a_block = self.min_blocks_per_sm == first.min_blocks_per_sm
                && self.min_blocks_per_sm > Self::DEFERRED_MIN_BLOCKS;
            // A suffix scan reads back only where seeding would not win a block back: at the
            // 2^28 shape the seeded scan at 6 blocks beat reading back at 5 (half max/min), at
            // the mid-size shape (first cap 5) reading back beat seeding at 5 (byte products).
            let rereads = direction == crate::Direction::Forward
                || self.min_blocks_per_sm == first.min_blocks_per_sm;
            return Some(if gives_a_block {
                TuningPolicy {
                    min_blocks_per_sm: self.min_blocks_per_sm - 1,
                    ..*self
                }
            } else if !self.deferred_scan_rereads_run && rereads {
                TuningPolicy {
                    deferred_scan_rereads_run: true,
                    ..*self
                }
            } else {
                TuningPolicy {
                    defer_tile_prefix: false,
                    deferred_scan_rereads_run: false,
                    min_blocks_per_sm: first.min_blocks_per_sm,
                    ..*self
                }
            });
        }
        // Wide packed accesses go next: with words, the kernel is the one that was tuned before
        // them (products and 4-run byte sums spill with 16-byte groups of registers).
        if crate::layout::packed_run_access_words(
            elem_size,
            self.items_per_thread,
            self.packed_access_bytes,
        ) > 1
        {
            return Some(TuningPolicy {
                packed_access_bytes: 4,
                ..*self
            });
        }
        if self.thread_runs > 1 {
            return Some(TuningPolicy {
                thread_runs: self.thread_runs / 2,
                ..*self
            });
        }
        let items = self.items_per_thread;
        let widens = crate::layout::packs_items(elem_size, items)
            && self.min_blocks_per_sm >= 3
            && self.min_blocks_per_sm % 2 == 1
            && self.block_threads * 2 <= 1024
            && items.is_multiple_of(2)
            && crate::layout::packs_items(elem_size, items / 2);
        if widens {
            return Some(TuningPolicy {
                block_threads: self.block_threads * 2,
                items_per_thread: items / 2,
                min_blocks_per_sm: self.min_blocks_per_sm.div_ceil(2),
                ..*self
            });
        }
        (self.min_blocks_per_sm > 1).then(|| TuningPolicy {
            min_blocks_per_sm: self.min_blocks_per_sm - 1,
            ..*self
        })
    }

    /// Checks that the generated code can be built and launched with this policy for an element
    /// of `elem_size` bytes (alignment `elem_align`).
    pub fn validate(
        &self,
        algorithm: Algorithm,
        elem_size: usize,
        elem_align: usize,
    ) -> Result<(), CodegenError> {
        self.validate_shape(elem_size)?;
        if self.resident_tiles && algorithm != Algorithm::SinglePass {
            return Err(CodegenError::InvalidPolicy(format!(
                "resident_tiles is a single-pass launch shape, not one of {algorithm}"
            )));
        }
        let smem = layout::static_shared_bytes(self, algorithm, elem_size, elem_align);
        let limit = Self::max_shared_bytes(algorithm);
        if smem > limit {
            return Err(CodegenError::InvalidPolicy(format!(
                "a block would need {smem} bytes of shared memory ({} threads x {} items of {elem_size} bytes), \
                 over the {limit} bytes a {algorithm} block may use; lower block_threads or items_per_thread",
                self.block_threads,
                self.items_per_thread,
            )));
        }
        Ok(())
    }

    /// [`TuningPolicy::validate`] without the shared-memory bound: what a kernel whose tile
    /// exchange is not the element's (a fused scan stages its arrays' own values,
    /// [`crate::layout::fused_smem_tile_elems`]) checks first, sizing its shared memory itself.
    pub fn validate_shape(&self, elem_size: usize) -> Result<(), CodegenError> {
        let bad = |msg: String| Err(CodegenError::InvalidPolicy(msg));
        if self.block_threads == 0 || self.block_threads & 31 != 0 {
            return bad(format!(
                "block_threads = {} must be a positive multiple of 32 (the warp size)",
                self.block_threads
            ));
        }
        if self.block_threads > 1024 {
            return bad(format!(
                "block_threads = {} exceeds the CUDA limit of 1024 threads per block",
                self.block_threads
            ));
        }
        let max_items = self.max_items_per_thread(elem_size);
        if self.items_per_thread == 0 || self.items_per_thread > max_items {
            return bad(format!(
                "items_per_thread = {} must be between 1 and {max_items} for {elem_size}-byte elements (items are held in registers)",
                self.items_per_thread,
            ));
        }
        if self.min_blocks_per_sm == 0 || self.min_blocks_per_sm > 32 {
            return bad(format!(
                "min_blocks_per_sm = {} must be between 1 (no register cap) and 32 (the most blocks an SM holds)",
                self.min_blocks_per_sm
            ));
        }
        if !self.vector_bytes.is_power_of_two() || self.vector_bytes > Self::MAX_VECTOR_BYTES {
            return bad(format!(
                "vector_bytes = {} must be 1, 2, 4, 8 or 16 (the widest global access is 16 bytes)",
                self.vector_bytes
            ));
        }
        if self.look_back_window == 0 || self.look_back_window > 32 {
            return bad(format!(
                "look_back_window = {} must be between 1 and 32 (one status per lane of a warp)",
                self.look_back_window
            ));
        }
        if self.l2_prefetch_tiles > Self::MAX_L2_PREFETCH_TILES {
            return bad(format!(
                "l2_prefetch_tiles = {} must be at most {} (L2 would evict a tile fetched that far ahead before its block reads it)",
                self.l2_prefetch_tiles,
                Self::MAX_L2_PREFETCH_TILES
            ));
        }
        if self.max_epoch < 2 || self.max_epoch > Self::MAX_EPOCH {
            return bad(format!(
                "max_epoch = {} must be between 2 and {} (30 bits of a status word; the tile state is swept every max_epoch - 1 launches)",
                self.max_epoch,
                Self::MAX_EPOCH
            ));
        }
        if self.thread_runs == 0 || !self.items_per_thread.is_multiple_of(self.thread_runs) {
            return bad(format!(
                "thread_runs = {} must divide items_per_thread = {} (a thread's items split into runs of equal length)",
                self.thread_runs, self.items_per_thread
            ));
        }
        if !matches!(self.packed_access_bytes, 4 | 16) {
            return bad(format!(
                "packed_access_bytes = {} must be 4 or 16 (bytes a packed thread's run moves per shared-memory access)",
                self.packed_access_bytes
            ));
        }
        if self.offset_reads == 0 || self.offset_reads > Self::MAX_OFFSET_READS {
            return bad(format!(
                "offset_reads = {} must be between 1 and {} (entries a thread holds in registers per round of marking segment heads)",
                self.offset_reads,
                Self::MAX_OFFSET_READS
            ));
        }
        if elem_size == 0 {
            return bad(
                "the element has size 0; scan elements must occupy at least one byte".into(),
            );
        }
        Ok(())
    }
}

fn prev_power_of_two(x: u32) -> u32 {
    1 << (31 - x.max(1).leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Direction;

    #[test]
    fn wide_elements_fold_a_narrower_look_back_window_on_sm_90() {
        let window =
            |sm, size| TuningPolicy::for_target(sm, Algorithm::SinglePass, size).look_back_window;
        assert_eq!((window(90, 24), window(90, 32)), (16, 16));
        assert_eq!((window(90, 4), window(90, 8), window(90, 16)), (32, 32, 32));
        assert_eq!(window(80, 32), 32);
        assert_eq!(
            TuningPolicy::for_target(90, Algorithm::Blelloch, 32).look_back_window,
            32
        );
        // The small-input shape (one wave of tiles, a window reaches every predecessor) keeps 32.
        let small = TuningPolicy::for_small_input(90, Algorithm::SinglePass, 32).unwrap();
        assert_eq!(small.look_back_window, 32);
    }

    #[test]
    fn register_cap_loosens_one_block_at_a_time_down_to_none() {
        let first = TuningPolicy::for_target(90, Algorithm::SinglePass, 4);
        let mut policy = first;
        assert_eq!(policy.min_blocks_per_sm, 6);
        // The deferred prefix goes first, at the same cap; then the cap loosens.
        assert!(first.defer_tile_prefix);
        let mut rungs = vec![(policy.min_blocks_per_sm, policy.defer_tile_prefix)];
        while let Some(relaxed) = policy.relaxed_register_cap(&first, 4, Direction::Forward) {
            assert_eq!(
                (relaxed.block_threads, relaxed.items_per_thread),
                (policy.block_threads, policy.items_per_thread)
            );
            policy = relaxed;
            rungs.push((policy.min_blocks_per_sm, policy.defer_tile_prefix));
        }
        assert_eq!(
            rungs,
            [
                (6, true),
                (6, false),
                (5, false),
                (4, false),
                (3, false),
                (2, false),
                (1, false)
            ]
        );
        let uncapped = TuningPolicy::for_target(90, Algorithm::KoggeStone, 4);
        assert_eq!(
            uncapped.relaxed_register_cap(&uncapped, 4, Direction::Forward),
            None
        );
    }

    #[test]
    fn register_ladder_lists_every_relaxation_in_order() {
        for (size, direction) in [
            (1, Direction::Forward),
            (1, Direction::Reverse),
            (2, Direction::Forward),
            (4, Direction::Forward),
            (32, Direction::Reverse),
        ] {
            let first = TuningPolicy::for_target(90, Algorithm::SinglePass, size);
            let mut expected = vec![first];
            let mut policy = first;
            while let Some(relaxed) = policy.relaxed_register_cap(&first, size, direction) {
                expected.push(relaxed);
                policy = relaxed;
            }
            assert_eq!(
                first.register_ladder(size, direction),
                expected,
                "{size} bytes, {direction:?}"
            );
        }
        let uncapped = TuningPolicy::for_target(90, Algorithm::KoggeStone, 4);
        assert_eq!(uncapped.register_ladder(4, Direction::Forward), [uncapped]);
    }

    #[test]
    fn a_large_spill_passes_over_the_rungs_that_only_give_up_paths() {
        let mid = TuningPolicy::for_mid_input(90, Algorithm::SinglePass, 1).unwrap();
        let ladder = mid.register_ladder(1, Direction::Forward);
        let next = |tried, local| TuningPolicy::next_rung_to_try(&ladder, tried, local);
        // The mid-size byte tile's first rungs: deferred, then without the lead's tiles, the
        // shifted vectors, the partial tile's vectors; then the run read back, with them all.
        let paths_only = |rung: usize| ladder[rung].differs_only_in_unaligned_paths(&ladder[0]);
        assert!(ladder[0].defer_tile_prefix && !ladder[0].deferred_scan_rereads_run);
        assert!((1..=3).all(paths_only), "{ladder:#?}");
        assert!(!paths_only(4) && ladder[4].deferred_scan_rereads_run);
        assert!(ladder[4].lead_tiles && ladder[4].partial_tile_vectors);
        // A spill the paths could close tries the next rung; a larger one the read-back.
        assert_eq!(next(0, 8), Some(1));
        assert_eq!(next(0, TuningPolicy::SPILL_PAST_PATHS_BYTES), Some(1));
        assert_eq!(next(0, TuningPolicy::SPILL_PAST_PATHS_BYTES + 1), Some(4));
        assert_eq!(next(1, 124), Some(4));
        // Nothing after a rung that fits, or after the last.
        assert_eq!(next(0, 0), None);
        assert_eq!(next(ladder.len() - 1, 124), None);
        // Where only rungs that give up paths are left, they are tried.
        assert_eq!(
            TuningPolicy::next_rung_to_try(&ladder[..4], 0, 124),
            Some(1)
        );
        // Twins never give up paths: every rung after a spill is the next one.
        let twin = mid.unaligned_twin(Algorithm::SinglePass, 1).unwrap();
        let twin_ladder = twin.register_ladder(1, Direction::Forward);
        for rung in 0..twin_ladder.len() - 1 {
            assert_eq!(
                TuningPolicy::next_rung_to_try(&twin_ladder, rung, 124),
                Some(rung + 1)
            );
        }
    }

    #[test]
    fn packed_tiles_trade_items_for_threads_one_block_below_the_cap() {
        let ladder = |first: TuningPolicy, size: usize, direction: Direction| {
            let shape = |p: &TuningPolicy| {
                (
                    p.block_threads,
                    p.min_blocks_per_sm,
                    p.thread_runs,
                    p.packed_access_bytes,
                    p.defer_tile_prefix,
                    p.deferred_scan_rereads_run,
                )
            };
            let mut policy = first;
            let mut shapes = vec![shape(&policy)];
            while let Some(relaxed) = policy.relaxed_register_cap(&first, size, direction) {
                assert_eq!(relaxed.tile_items(), first.tile_items(), "the tile stays");
                assert_eq!(
                    relaxed.aligned_tiles, first.aligned_tiles,
                    "the ladder leaves a suffix scan's tiles where they are"
                );
                relaxed.validate(Algorithm::SinglePass, size, size).unwrap();
                policy = relaxed;
                shapes.push(shape(&policy));
            }
            shapes
        };
        // The deferred scan at one block fewer first, then reading its run back; then the seeded
        // scan (the prefix no longer deferred) back at the first cap; then word accesses (the
        // shape tuned before 16-byte ones); then fewer runs; then 768 threads per SM at 6, 5 and
        // 3 blocks; the wide tile then widens once more.
        type Shape = (u32, u32, u32, u32, bool, bool);
        let default: &[Shape] = &[
            (128, 6, 4, 16, true, false),
            (128, 5, 4, 16, true, false),
            (128, 5, 4, 16, true, true),
            (128, 6, 4, 16, false, false),
            (128, 6, 4, 4, false, false),
            (128, 6, 2, 4, false, false),
            (128, 6, 1, 4, false, false),
            (128, 5, 1, 4, false, false),
            (256, 3, 1, 4, false, false),
            (512, 2, 1, 4, false, false),
            (512, 1, 1, 4, false, false),
        ];
        for size in [1, 2] {
            let first = TuningPolicy::for_target(90, Algorithm::SinglePass, size);
            // Packed tiles try each rung with the lead's tiles, the vectors of unaligned tiles
            // (and the short item loop of 1-byte ones), then without the lead's tiles, then
            // without those vectors too, then (1 byte) without the partial tile's vectors too.
            assert_eq!(first.partial_tile_vectors, size == 1);
            assert!(first.shifted_tile_vectors);
            assert!(first.aligned_tiles);
            assert!(first.lead_tiles);
            let tries = if size == 1 { 4 } else { 3 };
            let default: Vec<Shape> = default
                .iter()
                .flat_map(|&shape| std::iter::repeat_n(shape, tries))
                .collect();
            assert_eq!(
                ladder(first, size, Direction::Forward),
                default,
                "{size}-byte elements"
            );
            // A suffix scan skips the read-back: one block fewer, then seeded at the first cap.
            let reversed: Vec<Shape> = default
                .iter()
                .copied()
                .filter(|&(_, _, _, _, _, rereads)| !rereads)
                .collect();
            assert_eq!(
                ladder(first, size, Direction::Reverse),
                reversed,
                "{size}-byte elements, reversed"
            );
        }
        // 1-byte elements' mid-size shape starts at 5 blocks, the deferral's floor: it reads its
        // run back next, then seeds its scan.
        let mid = TuningPolicy::for_mid_input(90, Algorithm::SinglePass, 1).unwrap();
        let expected: &[Shape] = &[
            (256, 5, 4, 16, true, false),
            (256, 5, 4, 16, true, true),
            (256, 5, 4, 16, false, false),
            (256, 5, 4, 4, false, false),
            (256, 5, 2, 4, false, false),
            (256, 5, 1, 4, false, false),
            (512, 3, 1, 4, false, false),
            (1024, 2, 1, 4, false, false),
            (1024, 1, 1, 4, false, false),
        ];
        let tries = 1
            + usize::from(mid.shifted_tile_vectors || mid.item_path_unroll != 0)
            + usize::from(mid.lead_tiles && mid.aligned_tiles)
            + usize::from(mid.partial_tile_vectors);
        let expected: Vec<Shape> = expected
            .iter()
            .flat_map(|&shape| std::iter::repeat_n(shape, tries))
            .collect();
        // Reversed too: seeding there wins no block back.
        for direction in [Direction::Forward, Direction::Reverse] {
            assert_eq!(
                ladder(mid, 1, direction),
                expected,
                "1-byte mid-size shape, {direction:?}"
            );
        }
        // Twins for unaligned buffers climb the same shapes, one rung each, never giving up a
        // path of such buffers.
        for (first, size) in [
            (TuningPolicy::for_target(90, Algorithm::SinglePass, 1), 1),
            (TuningPolicy::for_target(90, Algorithm::SinglePass, 2), 2),
            (mid, 1),
        ] {
            let twin = first
                .unaligned_twin(Algorithm::SinglePass, size)
                .expect("packed tiles have a twin");
            assert_eq!(
                twin.unaligned_twin(Algorithm::SinglePass, size),
                None,
                "a twin has no twin"
            );
            assert_eq!(first.unaligned_twin(Algorithm::Blelloch, size), None);
            let rungs = twin.register_ladder(size, Direction::Forward);
            let mut shapes: Vec<Shape> = ladder(first, size, Direction::Forward);
            shapes.dedup();
            assert_eq!(ladder(twin, size, Direction::Forward), shapes);
            for rung in &rungs {
                assert!(!first.unaligned_paths_given_up(rung), "{rung:?}");
            }
            let given_up = first.register_ladder(size, Direction::Forward)[1];
            assert!(first.unaligned_paths_given_up(&given_up));
        }
        // The small-input shape leaves the lead's tiles and the shifted vectors to its twin
        // from the first rung on.
        for size in [1, 2] {
            let small = TuningPolicy::for_small_input(90, Algorithm::SinglePass, size).unwrap();
            let built = small.register_ladder(size, Direction::Forward)[0];
            assert!(
                !built.lead_tiles && !built.shifted_tile_vectors,
                "{built:?}"
            );
            assert_eq!(
                (built.aligned_tiles, built.partial_tile_vectors),
                (small.aligned_tiles, small.partial_tile_vectors)
            );
            assert!(small.unaligned_paths_given_up(&built));
            let twin = small
                .unaligned_twin(Algorithm::SinglePass, size)
                .expect("packed tiles have a twin");
            assert_eq!(twin.register_ladder(size, Direction::Forward)[0], twin);
            assert!(twin.lead_tiles && twin.shifted_tile_vectors, "{twin:?}");
        }
        // Elements of 4 bytes and more have no unaligned paths to keep.
        for size in [4, 8, 16] {
            let first = TuningPolicy::for_target(90, Algorithm::SinglePass, size);
            assert_eq!(
                first.unaligned_twin(Algorithm::SinglePass, size),
                None,
                "{size}-byte elements"
            );
        }
    }

    #[test]
    fn fused_tiles_are_sized_by_the_staged_arrays() {
        use crate::{ScanVariant, Segments};
        let flat = ScanVariant::FLAT;
        let fused = |sm, variant, inputs: &[usize], output| {
            TuningPolicy::for_transform(sm, Algorithm::SinglePass, 32, 8, variant, inputs, output)
        };
        // Kadane (i64 in place of i64 out): the exchange's budget alone bounds the tile.
        let kadane = fused(90, flat, &[8], 8);
        assert_eq!((kadane.block_threads, kadane.items_per_thread), (256, 32));
        assert_eq!(kadane.min_blocks_per_sm, 3);
        assert_eq!(kadane.vector_bytes, 1);
        assert!(kadane.stage_items);
        assert_eq!(kadane.l2_prefetch_tiles, 48);
        // Before sm_90: no bulk prefetch, half the block.
        let kadane80 = fused(80, flat, &[8], 8);
        assert_eq!(
            (kadane80.block_threads, kadane80.items_per_thread),
            (128, 32)
        );
        assert_eq!(
            (kadane80.l2_prefetch_tiles, kadane80.min_blocks_per_sm),
            (0, 5)
        );
        // argmin (f32 in, u64 out): 32 read-back f32 registers and the u64 output's slice.
        assert_eq!(fused(90, flat, &[4], 8).items_per_thread, 32);
        // Two arrays of 12 bytes an item: 8 items keep 96 bytes in registers.
        assert_eq!(fused(90, flat, &[4, 8], 4).items_per_thread, 8);
        assert_eq!(fused(90, flat.reverse(), &[8], 8), kadane);
        for sm in [80, 90] {
            for (inputs, output) in [(&[8usize][..], 8), (&[4], 8), (&[4, 8], 4), (&[1], 32)] {
                let p = fused(sm, flat, inputs, output);
                let staging =
                    crate::layout::fused_staging(p.items_per_thread, inputs, output, true);
                let budget = if sm >= 90 {
                    TuningPolicy::FUSED_SM90_TILE.exchange_bytes
                } else {
                    TuningPolicy::FUSED_TILE.exchange_bytes
                };
                assert!((p.block_threads / 32 * staging.warp_bytes) as usize <= budget);
                assert!(p.validate_shape(32).is_ok());
            }
        }
        // Small inputs on sm_90: half the block and tile.
        let small =
            TuningPolicy::for_small_transform(90, Algorithm::SinglePass, flat, &[8], 8).unwrap();
        assert_eq!((small.block_threads, small.items_per_thread), (128, 32));
        assert_eq!((small.min_blocks_per_sm, small.l2_prefetch_tiles), (5, 96));
        assert!(small.stage_items && small.vector_bytes == 1);
        assert_eq!(
            TuningPolicy::for_small_transform(80, Algorithm::SinglePass, flat, &[8], 8),
            None
        );
        // Segmented and hierarchical fused scans keep lifted elements: the element's policy.
        let flags = flat.segments(Segments::Flags);
        assert_eq!(
            fused(90, flags, &[8], 8),
            TuningPolicy::for_variant(90, Algorithm::SinglePass, 32, 8, flags)
        );
        assert_eq!(
            TuningPolicy::for_transform(90, Algorithm::KoggeStone, 32, 8, flat, &[8], 8),
            TuningPolicy::for_target(90, Algorithm::KoggeStone, 32)
        );
    }

    #[test]
    fn offsets_read_a_dense_tile_in_one_round() {
        use crate::Segments;
        let offsets = crate::ScanVariant::FLAT.segments(Segments::Offsets(crate::OffsetWidth::U64));
        // 128 x 64 tiles of 4-byte elements: 512 entries at 16 elements a segment, + 2 rounds.
        let i32s = TuningPolicy::for_variant(90, Algorithm::SinglePass, 4, 4, offsets);
        assert_eq!((i32s.tile_items(), i32s.offset_reads), (128 * 64, 6));
        // 8-byte elements take 32 items: 256 entries.
        let pairs = TuningPolicy::for_variant(90, Algorithm::SinglePass, 8, 4, offsets);
        assert_eq!((pairs.tile_items(), pairs.offset_reads), (128 * 32, 4));
        // Other shapes keep the default (their kernels have no offsets).
        let flags = crate::ScanVariant::FLAT.segments(Segments::Flags);
        let flag_policy = TuningPolicy::for_variant(90, Algorithm::SinglePass, 4, 4, flags);
        assert_eq!(flag_policy.offset_reads, 2);
        // By-key tiles keep the branching warp step; the others select.
        let keys = crate::ScanVariant::FLAT.segments(Segments::Keys(scan_core::PrimType::I32));
        assert!(
            TuningPolicy::for_variant(90, Algorithm::SinglePass, 4, 4, keys).warp_scan_branches
        );
        assert!(!flag_policy.warp_scan_branches && !i32s.warp_scan_branches);
        for reads in [0, TuningPolicy::MAX_OFFSET_READS + 1] {
            let bad = TuningPolicy {
                offset_reads: reads,
                ..i32s
            };
            assert!(
                bad.validate(Algorithm::SinglePass, 4, 4).is_err(),
                "{reads}"
            );
        }
        assert!(i32s.validate(Algorithm::SinglePass, 4, 4).is_ok());
    }

    #[test]
    fn defaults_are_valid_for_every_size() {
        for sm in [70, 75, 80, 86, 89, 90, 100] {
            for alg in Algorithm::ALL {
                for size in [1usize, 2, 4, 8, 12, 16, 24, 32, 64, 100, 128, 256, 512] {
                    let align = size
                        .min(8)
                        .next_power_of_two()
                        .min(size.next_power_of_two());
                    let align = if size % align == 0 { align } else { 1 };
                    let p = TuningPolicy::for_target(sm, alg, size);
                    p.validate(alg, size, align)
                        .unwrap_or_else(|e| panic!("sm{sm} {alg} {size}B: {e}"));
                }
            }
        }
    }

    #[test]
    fn mid_input_shapes_keep_the_default_tile_with_twice_the_threads() {
        let bytes = TuningPolicy::for_mid_input(90, Algorithm::SinglePass, 1).unwrap();
        assert_eq!((bytes.block_threads, bytes.items_per_thread), (256, 128));
        // Half the registers a block: a tighter cap than the default's, but for 16 bytes.
        for (size, blocks) in [(1usize, 5u32), (2, 5), (4, 5), (8, 4), (16, 6)] {
            let large = TuningPolicy::for_target(90, Algorithm::SinglePass, size);
            let mid = TuningPolicy::for_mid_input(90, Algorithm::SinglePass, size).unwrap();
            assert_eq!(
                mid.min_blocks_per_sm,
                blocks.min(large.min_blocks_per_sm),
                "{size} B"
            );
        }
        for size in [2usize, 4, 8, 16] {
            let large = TuningPolicy::for_target(90, Algorithm::SinglePass, size);
            let mid = TuningPolicy::for_mid_input(90, Algorithm::SinglePass, size)
                .unwrap_or_else(|| panic!("{size}-byte elements have a mid-size shape"));
            assert_eq!(mid.tile_items(), large.tile_items(), "{size} B");
            assert_eq!(mid.block_threads, 2 * large.block_threads, "{size} B");
            // Resident tiles in one wave, except packed ones.
            assert_eq!(mid.resident_tiles, size >= 4, "{size} B");
            assert!(!large.resident_tiles, "{size} B");
            // One wave: its loads are not staggered; the default shape's later waves are.
            assert_eq!(mid.first_wave_bytes_per_ns, 0, "{size} B");
            assert!(large.first_wave_bytes_per_ns > 0, "{size} B");
        }
        let p = TuningPolicy::for_mid_input(90, Algorithm::SinglePass, 4).unwrap();
        assert_eq!((p.block_threads, p.items_per_thread), (256, 32));
        // Wider elements, sizes that are not powers of two, other algorithms and older GPUs
        // have none.
        assert!(TuningPolicy::for_mid_input(90, Algorithm::SinglePass, 12).is_none());
        assert!(TuningPolicy::for_mid_input(90, Algorithm::SinglePass, 24).is_none());
        assert!(TuningPolicy::for_mid_input(90, Algorithm::SinglePass, 32).is_none());
        assert!(TuningPolicy::for_mid_input(90, Algorithm::Blelloch, 4).is_none());
        assert!(TuningPolicy::for_mid_input(80, Algorithm::SinglePass, 4).is_none());
    }

    #[test]
    fn each_input_size_class_has_its_shape_where_one_is_tuned() {
        use crate::{ScanVariant, Segments};
        let i32_elem = scan_core::ElementType::Prim(scan_core::PrimType::I32);
        let i32_sums = scan_core::BuiltinOp::Add
            .spec(scan_core::PrimType::I32)
            .unwrap();
        let shape = |size, variant, transform| {
            TuningPolicy::for_input_size(
                size,
                90,
                Algorithm::SinglePass,
                &i32_sums,
                variant,
                transform,
            )
        };
        let flat = ScanVariant::FLAT;
        assert_eq!(
            shape(InputSize::Large, flat, None),
            Some(TuningPolicy::for_target(90, Algorithm::SinglePass, 4))
        );
        assert_eq!(
            shape(InputSize::Small, flat.reverse(), None),
            TuningPolicy::for_small_input(90, Algorithm::SinglePass, 4)
        );
        assert_eq!(
            shape(InputSize::Mid, flat, None),
            TuningPolicy::for_mid_input(90, Algorithm::SinglePass, 4)
        );
        // The few-waves shape: 1-byte elements only.
        assert!(shape(InputSize::FewWaves, flat, None).is_none());
        let u8_elem = scan_core::ElementType::Prim(scan_core::PrimType::U8);
        let u8_sums = scan_core::BuiltinOp::Add
            .spec(scan_core::PrimType::U8)
            .unwrap();
        assert_eq!(
            TuningPolicy::for_input_size(
                InputSize::FewWaves,
                90,
                Algorithm::SinglePass,
                &u8_sums,
                flat.reverse(),
                None
            ),
            TuningPolicy::for_few_waves_input(90, Algorithm::SinglePass, 1)
        );
        // The tiny shape: 1- and 2-byte elements only.
        assert!(shape(InputSize::Tiny, flat, None).is_none());
        assert_eq!(
            TuningPolicy::for_input_size(
                InputSize::Tiny,
                90,
                Algorithm::SinglePass,
                &u8_sums,
                flat.reverse(),
                None
            ),
            TuningPolicy::for_tiny_input(90, Algorithm::SinglePass, 1)
        );
        // Segmented scans: the default only.
        let flags = flat.segments(Segments::Flags);
        assert!(shape(InputSize::Large, flags, None).is_some());
        assert!(shape(InputSize::Tiny, flags, None).is_none());
        assert!(shape(InputSize::Small, flags, None).is_none());
        assert!(shape(InputSize::Mid, flags, None).is_none());
        assert!(shape(InputSize::FewWaves, flags, None).is_none());
        // Fused scans: a fused small shape, no mid-size one.
        let lift = scan_core::TransformSpec::identity(&i32_elem);
        let small_fused = shape(InputSize::Small, flat, Some(&lift)).expect("a fused small shape");
        assert!(small_fused.stage_items);
        assert!(shape(InputSize::Mid, flat, Some(&lift)).is_none());
        let u8_lift = scan_core::TransformSpec::identity(&u8_elem);
        assert!(TuningPolicy::for_input_size(
            InputSize::Tiny,
            90,
            Algorithm::SinglePass,
            &u8_sums,
            flat,
            Some(&u8_lift)
        )
        .is_none());
    }

    #[test]
    fn tiny_inputs_of_packed_elements_take_half_the_small_shapes_items() {
        for size in [1, 2] {
            let small = TuningPolicy::for_small_input(90, Algorithm::SinglePass, size).unwrap();
            let tiny = TuningPolicy::for_tiny_input(90, Algorithm::SinglePass, size).unwrap();
            assert_eq!(
                tiny,
                TuningPolicy {
                    items_per_thread: small.items_per_thread / 2,
                    ..small
                },
                "{size} B"
            );
            // Its ladder starts without the paths its twin keeps, as the small shape's does.
            assert!(tiny.unaligned_paths_in_twin);
            assert!(tiny.unaligned_twin(Algorithm::SinglePass, size).is_some());
        }
        for size in [4, 8, 16, 32] {
            assert!(TuningPolicy::for_tiny_input(90, Algorithm::SinglePass, size).is_none());
        }
        assert!(TuningPolicy::for_tiny_input(80, Algorithm::SinglePass, 1).is_none());
        assert!(TuningPolicy::for_tiny_input(90, Algorithm::Blelloch, 1).is_none());

        // 2^17 bytes (4 default tiles of 128 x 256) on 132 SMs are tiny, 2^17 + 1 small.
        let shapes = SizedShapes {
            tiny: true,
            small: true,
            mid: true,
            ..SizedShapes::default()
        };
        let class = |tiles| TuningPolicy::input_size(tiles, 132, 5, shapes);
        assert_eq!(class(1), InputSize::Tiny);
        assert_eq!(class(4), InputSize::Tiny);
        assert_eq!(class(5), InputSize::Small);
        assert_eq!(class(65), InputSize::Small);
        let limits = TuningPolicy::input_size_limits(132, 5, shapes);
        assert_eq!((limits.tiny, limits.small), (Some(4), Some(65)));
        // Not where it would serve every small input, nor on a GPU too small for a tile.
        assert_eq!(TuningPolicy::input_size_limits(8, 5, shapes).tiny, None);
        assert_eq!(TuningPolicy::input_size_limits(16, 5, shapes).tiny, None);
        assert_eq!(TuningPolicy::input_size_limits(64, 5, shapes).tiny, Some(2));
        let no_small = SizedShapes {
            small: false,
            ..shapes
        };
        assert_eq!(
            TuningPolicy::input_size(1, 132, 5, no_small),
            InputSize::Mid
        );
    }

    #[test]
    fn input_size_classes_follow_the_default_tiles() {
        use InputSize::*;
        let shapes = |small, mid, fused| SizedShapes {
            tiny: false,
            small,
            mid,
            few_waves: false,
            many_waves: false,
            fused,
        };
        let class =
            |tiles, small, mid| TuningPolicy::input_size(tiles, 132, 6, shapes(small, mid, false));
        // With both extra shapes: small below half the SMs, mid-size up to one wave.
        assert_eq!(class(1, true, true), Small);
        assert_eq!(class(65, true, true), Small);
        assert_eq!(class(66, true, true), Mid);
        assert_eq!(class(132 * 6, true, true), Mid);
        assert_eq!(class(132 * 6 + 1, true, true), Large);
        // Without a mid-size shape the default serves from half the SMs.
        assert_eq!(class(65, true, false), Small);
        assert_eq!(class(66, true, false), Large);
        // A fused scan's small shape serves up to the SM count.
        let fused = |tiles| TuningPolicy::input_size(tiles, 132, 6, shapes(true, false, true));
        assert_eq!(fused(131), Small);
        assert_eq!(fused(132), Large);
        // Without a small one, the mid-size shape serves from one tile.
        assert_eq!(class(1, false, true), Mid);
        assert_eq!(class(1, false, false), Large);
        // The limits are the last tile counts of each class.
        let limits = TuningPolicy::input_size_limits(132, 6, shapes(true, true, false));
        assert_eq!((limits.small, limits.mid), (Some(65), Some(132 * 6)));
        let limits = TuningPolicy::input_size_limits(132, 6, shapes(true, false, false));
        assert_eq!((limits.small, limits.mid), (Some(65), None));
        let limits = TuningPolicy::input_size_limits(132, 6, shapes(true, false, true));
        assert_eq!((limits.small, limits.mid), (Some(131), None));
        assert_eq!(limits.few_waves, None);
        // 1-byte elements: the few-waves shape from one wave of mid-size blocks (5 per SM) to
        // three waves of its own 5.
        let bytes = SizedShapes {
            few_waves: true,
            ..shapes(true, true, false)
        };
        let class = |tiles| TuningPolicy::input_size(tiles, 132, 5, bytes);
        assert_eq!(class(132 * 5), Mid);
        assert_eq!(class(132 * 5 + 1), FewWaves);
        assert_eq!(class(132 * 5 * 3), FewWaves);
        assert_eq!(class(132 * 5 * 3 + 1), Large);
        let limits = TuningPolicy::input_size_limits(132, 5, bytes);
        assert_eq!(limits.few_waves, Some(132 * 5 * 3));
        // Without a mid-size shape it starts past the small one.
        let no_mid = SizedShapes {
            few_waves: true,
            ..shapes(true, false, false)
        };
        assert_eq!(TuningPolicy::input_size(66, 132, 5, no_mid), FewWaves);
        assert_eq!(limits.many_waves_above, None);
        // 1-byte prefix scans: the default from there to 24 tiles an SM, the many-waves shape
        // past it.
        let long = SizedShapes {
            many_waves: true,
            ..bytes
        };
        let class = |tiles| TuningPolicy::input_size(tiles, 132, 5, long);
        assert_eq!(class(132 * 5 * 3), FewWaves);
        assert_eq!(class(132 * 5 * 3 + 1), Large);
        assert_eq!(class(132 * 24), Large);
        assert_eq!(class(132 * 24 + 1), ManyWaves);
        assert_eq!(class(1 << 40), ManyWaves);
        let limits = TuningPolicy::input_size_limits(132, 5, long);
        assert_eq!(limits.many_waves_above, Some(132 * 24));
        // It never takes an input a smaller shape serves (a GPU of one SM).
        let limits = TuningPolicy::input_size_limits(1, 5, long);
        assert_eq!(limits.few_waves, Some(15));
        assert_eq!(limits.many_waves_above, Some(24));
        let tiny_mid = TuningPolicy::input_size_limits(1, 30, long);
        assert_eq!(tiny_mid.mid, Some(30));
        assert_eq!(tiny_mid.many_waves_above, Some(30));
    }

    #[test]
    fn byte_max_min_and_products_ask_for_the_deferral_floor_from_the_start() {
        use crate::{ScanVariant, Segments};
        use scan_core::{BuiltinOp, PrimType};
        let default_of = |op: BuiltinOp, ty: PrimType, variant: ScanVariant| {
            let spec = op.spec(ty).unwrap();
            TuningPolicy::for_scan(90, Algorithm::SinglePass, &spec, variant, None)
        };
        let flat = ScanVariant::FLAT;
        for (op, ty) in [
            (BuiltinOp::Max, PrimType::U8),
            (BuiltinOp::Min, PrimType::I8),
            (BuiltinOp::Mul, PrimType::U8),
            (BuiltinOp::Mul, PrimType::I16),
            (BuiltinOp::Mul, PrimType::U16),
        ] {
            for variant in [flat, flat.reverse()] {
                let policy = default_of(op, ty, variant);
                let large = TuningPolicy::for_variant(
                    90,
                    Algorithm::SinglePass,
                    ty.size(),
                    ty.size(),
                    variant,
                );
                // Only the cap differs from the element size's default.
                assert_eq!(
                    policy.min_blocks_per_sm,
                    TuningPolicy::DEFERRED_MIN_BLOCKS,
                    "{op:?} {ty:?}"
                );
                assert_eq!(
                    TuningPolicy {
                        min_blocks_per_sm: large.min_blocks_per_sm,
                        ..policy
                    },
                    large
                );
                // Its ladder has no rung at 6 blocks; the seeded rungs keep 5.
                let ladder = policy.register_ladder(ty.size(), variant.direction);
                assert!(
                    ladder.iter().all(|rung| rung.min_blocks_per_sm <= 5),
                    "{op:?} {ty:?}"
                );
            }
        }
        // Forms that fit at 6, and every 2-byte max/min, keep the default's cap.
        for (op, ty) in [
            (BuiltinOp::Add, PrimType::U8),
            (BuiltinOp::Xor, PrimType::I8),
            (BuiltinOp::Max, PrimType::U16),
            (BuiltinOp::Max, PrimType::F16),
            (BuiltinOp::Min, PrimType::BF16),
            (BuiltinOp::Add, PrimType::F16),
            (BuiltinOp::Mul, PrimType::I32),
        ] {
            let policy = default_of(op, ty, flat);
            assert_eq!(
                policy,
                TuningPolicy::for_target(90, Algorithm::SinglePass, ty.size()),
                "{op:?} {ty:?}"
            );
        }
        // Not where the tile does not defer: segmented scans, older archs.
        let flags = ScanVariant {
            segments: Segments::Flags,
            ..flat
        };
        assert_eq!(
            default_of(BuiltinOp::Max, PrimType::U8, flags),
            TuningPolicy::for_variant(90, Algorithm::SinglePass, 1, 1, flags)
        );
        let max = BuiltinOp::Max.spec(PrimType::U8).unwrap();
        assert_eq!(
            TuningPolicy::for_scan(80, Algorithm::SinglePass, &max, flat, None),
            TuningPolicy::for_target(80, Algorithm::SinglePass, 1)
        );
    }

    #[test]
    fn many_waves_shapes_read_the_byte_run_back_at_the_first_cap() {
        let large = TuningPolicy::for_target(90, Algorithm::SinglePass, 1);
        let many =
            TuningPolicy::for_many_waves_input(90, Algorithm::SinglePass, 1, Direction::Forward)
                .unwrap();
        assert_eq!(many.min_blocks_per_sm, 6);
        assert!(many.defer_tile_prefix && many.deferred_scan_rereads_run);
        assert_eq!(
            TuningPolicy {
                deferred_scan_rereads_run: false,
                ..many
            },
            large,
            "only the read-back differs"
        );
        // Suffix scans, other elements, algorithms and older GPUs have none.
        let none = |sm, algorithm, size, direction| {
            TuningPolicy::for_many_waves_input(sm, algorithm, size, direction).is_none()
        };
        assert!(none(90, Algorithm::SinglePass, 1, Direction::Reverse));
        for size in [2usize, 4, 8, 16] {
            assert!(none(90, Algorithm::SinglePass, size, Direction::Forward));
        }
        assert!(none(90, Algorithm::Blelloch, 1, Direction::Forward));
        assert!(none(80, Algorithm::SinglePass, 1, Direction::Forward));
        // Through the size class: a flat prefix scan, not a reversed or a segmented one.
        let u8_sums = scan_core::BuiltinOp::Add
            .spec(scan_core::PrimType::U8)
            .unwrap();
        let shape = |variant| {
            TuningPolicy::for_input_size(
                InputSize::ManyWaves,
                90,
                Algorithm::SinglePass,
                &u8_sums,
                variant,
                None,
            )
        };
        assert_eq!(shape(crate::ScanVariant::FLAT), Some(many));
        assert_eq!(shape(crate::ScanVariant::FLAT.reverse()), None);
        assert_eq!(
            shape(crate::ScanVariant::FLAT.segments(crate::Segments::Flags)),
            None
        );
    }

    #[test]
    fn few_waves_shapes_take_the_default_byte_tile_at_the_deferral_floor() {
        let large = TuningPolicy::for_target(90, Algorithm::SinglePass, 1);
        let few = TuningPolicy::for_few_waves_input(90, Algorithm::SinglePass, 1).unwrap();
        assert_eq!(large.min_blocks_per_sm, 6);
        assert_eq!(few.min_blocks_per_sm, TuningPolicy::DEFERRED_MIN_BLOCKS);
        assert_eq!(
            TuningPolicy {
                min_blocks_per_sm: large.min_blocks_per_sm,
                ..few
            },
            large,
            "only the cap differs"
        );
        // Other elements, algorithms and older GPUs have none.
        for size in [2usize, 4, 8, 16] {
            assert!(TuningPolicy::for_few_waves_input(90, Algorithm::SinglePass, size).is_none());
        }
        assert!(TuningPolicy::for_few_waves_input(90, Algorithm::Blelloch, 1).is_none());
        assert!(TuningPolicy::for_few_waves_input(80, Algorithm::SinglePass, 1).is_none());
    }

    #[test]
    fn small_input_shapes_have_smaller_tiles() {
        let p = TuningPolicy::for_small_input(90, Algorithm::SinglePass, 4).unwrap();
        assert_eq!((p.block_threads, p.items_per_thread), (128, 16));
        let p = TuningPolicy::for_small_input(90, Algorithm::SinglePass, 8).unwrap();
        assert_eq!((p.block_threads, p.items_per_thread), (128, 16));
        // Elements over 16 bytes: 8 items, in resident tiles (one wave).
        for size in [24, 32] {
            let p = TuningPolicy::for_small_input(90, Algorithm::SinglePass, size).unwrap();
            assert_eq!((p.block_threads, p.items_per_thread), (128, 8));
            assert!(p.resident_tiles);
        }
        // Packed sub-word items: as many registers, 4 / size items to each.
        for (size, items) in [(1, 64), (2, 32)] {
            let p = TuningPolicy::for_small_input(90, Algorithm::SinglePass, size).unwrap();
            assert_eq!((p.block_threads, p.items_per_thread), (128, items));
            assert!(crate::layout::packs_items(size, items));
        }
        assert_eq!(
            TuningPolicy::for_small_input(80, Algorithm::SinglePass, 4),
            None
        );
        assert_eq!(
            TuningPolicy::for_small_input(90, Algorithm::Blelloch, 4),
            None
        );
    }

    #[test]
    fn first_wave_stagger_follows_the_tile_bytes() {
        // sm_90 single-pass: a 32 KiB tile every 10 ns, whatever the element.
        for size in [1, 2, 4, 8] {
            let p = TuningPolicy::for_target(90, Algorithm::SinglePass, size);
            let tile_bytes = u64::from(p.tile_items()) * size as u64;
            assert_eq!(tile_bytes, 32 * 1024, "{size}-byte elements");
            assert_eq!(p.first_wave_stagger_ns(tile_bytes), 10);
        }
        let p = TuningPolicy::for_target(90, Algorithm::SinglePass, 4);
        assert_eq!(p.first_wave_stagger_ns(8 * 1024), 3, "rounded up");
        assert_eq!(
            p.first_wave_stagger_ns(u64::MAX),
            TuningPolicy::MAX_FIRST_WAVE_STAGGER_NS
        );
        // 24-byte elements stagger, 32-byte ones load at once.
        assert!(
            TuningPolicy::for_target(90, Algorithm::SinglePass, 24).first_wave_bytes_per_ns > 0
        );
        assert_eq!(
            TuningPolicy::for_target(90, Algorithm::SinglePass, 32).first_wave_bytes_per_ns,
            0
        );
        // Not measured elsewhere: off.
        for (sm, algorithm) in [
            (80, Algorithm::SinglePass),
            (90, Algorithm::Blelloch),
            (90, Algorithm::KoggeStone),
        ] {
            let p = TuningPolicy::for_target(sm, algorithm, 4);
            assert_eq!(
                (p.first_wave_bytes_per_ns, p.first_wave_stagger_ns(32768)),
                (0, 0)
            );
        }
    }

    #[test]
    fn default_shapes() {
        let p = TuningPolicy::for_target(90, Algorithm::SinglePass, 4);
        assert_eq!((p.block_threads, p.items_per_thread), (128, 64));
        assert_eq!(p.l2_prefetch_tiles, 48);
        let p = TuningPolicy::for_target(90, Algorithm::SinglePass, 8);
        assert_eq!((p.block_threads, p.items_per_thread), (128, 32));
        assert_eq!(
            TuningPolicy::for_target(80, Algorithm::SinglePass, 4).l2_prefetch_tiles,
            0
        );
        assert_eq!(
            TuningPolicy::for_target(90, Algorithm::Blelloch, 4).l2_prefetch_tiles,
            0
        );
        let p = TuningPolicy::for_target(80, Algorithm::KoggeStone, 4);
        assert_eq!((p.block_threads, p.items_per_thread), (128, 16));
        let p = TuningPolicy::for_target(90, Algorithm::KoggeStone, 12);
        assert_eq!((p.block_threads, p.items_per_thread), (256, 4));
        let p = TuningPolicy::for_target(75, Algorithm::Blelloch, 8);
        assert_eq!((p.block_threads, p.items_per_thread), (128, 4));
        // 12-, 24- and 32-byte elements hold 512 bytes a thread (a power of two of items) in a
        // tile of dynamic shared memory under a 4-block cap; 16-byte ones 256 bytes.
        for (size, items, cap) in [(12, 32, 4), (24, 16, 4), (32, 16, 4), (16, 16, 6)] {
            let p = TuningPolicy::for_target(90, Algorithm::SinglePass, size);
            assert_eq!(
                (p.block_threads, p.items_per_thread, p.min_blocks_per_sm),
                (128, items, cap),
                "{size} bytes"
            );
            let smem = crate::layout::static_shared_bytes(&p, Algorithm::SinglePass, size, 8);
            assert_eq!(
                smem > TuningPolicy::MAX_STATIC_SHARED_BYTES,
                size != 16,
                "{size} bytes"
            );
        }
        // Elements of 9 to 32 bytes keep their items in the tile on sm_90 single-pass only.
        for size in [1, 2, 4, 8, 9, 12, 16, 24, 32, 40] {
            let staged = TuningPolicy::for_target(90, Algorithm::SinglePass, size).stage_items;
            assert_eq!(staged, (9..=32).contains(&size), "{size} bytes");
            assert!(!TuningPolicy::for_target(80, Algorithm::SinglePass, size).stage_items);
            assert!(!TuningPolicy::for_target(90, Algorithm::Blelloch, size).stage_items);
        }
        // 256-byte elements: one item per thread, 128 threads = a 32 KiB tile.
        let p = TuningPolicy::for_target(90, Algorithm::SinglePass, 256);
        assert_eq!((p.block_threads, p.items_per_thread), (128, 1));
    }

    #[test]
    fn vector_items_fit_the_element_and_the_thread_items() {
        let p = |vector_bytes, items| TuningPolicy {
            vector_bytes,
            ..TuningPolicy::new(128, items)
        };
        assert_eq!(p(16, 64).vector_items(4), 4);
        assert_eq!(p(16, 32).vector_items(8), 1); // 8-byte elements: one per access
        assert_eq!(p(16, 16).vector_items(1), 16);
        assert_eq!(p(16, 8).vector_items(1), 8); // 8 bytes: still a word
        assert_eq!(p(16, 2).vector_items(1), 1); // 2 bytes: no 4-byte word
        assert_eq!(p(8, 64).vector_items(4), 2);
        assert_eq!(p(4, 64).vector_items(4), 1);
        assert_eq!(p(16, 64).vector_items(12), 1); // not a power of two
        assert_eq!(p(16, 64).vector_items(16), 1); // one element already fills it
        assert_eq!(p(16, 6).vector_items(4), 2); // 4 does not divide 6, 2 does
    }

    #[test]
    fn wide_elements_move_as_the_widest_vectors_that_divide_them() {
        let p = |vector_bytes| TuningPolicy {
            vector_bytes,
            ..TuningPolicy::new(128, 8)
        };
        assert_eq!(p(16).element_vectors(32, 8), 2);
        assert_eq!(p(16).element_vectors(24, 8), 3); // 8-byte vectors: 16 does not divide 24
        assert_eq!(p(16).element_vectors(12, 4), 3); // 4-byte vectors
        assert_eq!(p(16).element_vectors(16, 8), 1); // one 16-byte vector
        assert_eq!(p(16).element_vectors(64, 8), 4);
        assert_eq!(p(8).element_vectors(32, 8), 4);
        assert_eq!(p(4).element_vectors(32, 8), 8);
        assert_eq!(p(2).element_vectors(32, 8), 0); // no vector of 4 bytes or more: whole elements
        assert_eq!(p(16).element_vectors(8, 8), 0); // 8 bytes and less: whole elements
        assert_eq!(p(16).element_vectors(8, 4), 1); // but two 4-byte fields as one 8-byte vector
        assert_eq!(p(4).element_vectors(8, 4), 0); // (no 8-byte vector allowed)
        assert_eq!(p(16).element_vectors(4, 4), 0);
        assert_eq!(p(16).element_vectors(10, 2), 0); // only a 2-byte vector divides it

        // The sm_90 single-pass default asks for 16-byte vectors for wide elements.
        let sm90 = |size| TuningPolicy::for_target(90, Algorithm::SinglePass, size);
        assert_eq!(sm90(32).element_vectors(32, 8), 2);
        assert_eq!(sm90(24).element_vectors(24, 8), 3);
        assert_eq!(sm90(4).element_vectors(4, 4), 0);
    }

    fn err(p: TuningPolicy, size: usize) -> String {
        p.validate(Algorithm::SinglePass, size, size.min(8))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn invalid_policies_are_rejected_with_a_reason() {
        let p = TuningPolicy::new;
        assert!(
            err(p(100, 4), 4).contains("multiple of 32"),
            "{}",
            err(p(100, 4), 4)
        );
        assert!(err(p(0, 4), 4).contains("multiple of 32"));
        assert!(err(p(2048, 4), 4).contains("1024"));
        assert!(err(p(256, 0), 4).contains("items_per_thread = 0"));
        assert!(err(p(256, 65), 4).contains("between 1 and 64"));
        assert!(
            err(p(1024, 64), 8).contains("shared memory"),
            "{}",
            err(p(1024, 64), 8)
        );
        // Past the static limit: dynamic shared memory for single-pass blocks only.
        assert!(p(1024, 16).validate(Algorithm::SinglePass, 8, 8).is_ok());
        assert!(p(1024, 16)
            .validate(Algorithm::Blelloch, 8, 8)
            .unwrap_err()
            .to_string()
            .contains("shared memory"));
        assert!(err(p(256, 4), 0).contains("size 0"));
        let with = |vector_bytes, look_back_window| TuningPolicy {
            vector_bytes,
            look_back_window,
            ..p(128, 8)
        };
        assert!(err(with(12, 32), 4).contains("vector_bytes = 12"));
        assert!(err(with(32, 32), 4).contains("vector_bytes = 32"));
        assert!(err(with(16, 0), 4).contains("look_back_window = 0"));
        assert!(err(with(16, 33), 4).contains("between 1 and 32"));
        let prefetch = |l2_prefetch_tiles| TuningPolicy {
            l2_prefetch_tiles,
            ..p(128, 8)
        };
        assert!(err(prefetch(4097), 4).contains("l2_prefetch_tiles = 4097"));
        let cap = |min_blocks_per_sm| TuningPolicy {
            min_blocks_per_sm,
            ..p(128, 8)
        };
        let runs = |thread_runs| TuningPolicy {
            thread_runs,
            ..p(128, 8)
        };
        assert!(err(runs(0), 4).contains("thread_runs = 0"));
        assert!(err(runs(3), 4).contains("must divide"));
        assert!(runs(8).validate(Algorithm::SinglePass, 4, 4).is_ok());
        assert!(err(cap(0), 4).contains("min_blocks_per_sm = 0"));
        assert!(err(cap(33), 4).contains("between 1"));
        assert!(prefetch(4096).validate(Algorithm::SinglePass, 4, 4).is_ok());
        assert!(with(1, 1).validate(Algorithm::SinglePass, 4, 4).is_ok());
        assert!(p(1024, 1).validate(Algorithm::Blelloch, 4, 4).is_ok());
        assert!(p(32, 1).validate(Algorithm::KoggeStone, 1, 1).is_ok());
    }
}
