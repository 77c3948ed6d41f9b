//! Tuning numbers, chosen in Rust per architecture and element size; templates only see them as
//! parameters (and `static_assert` them).
//!
//! [`TuningPolicy`] is one kernel's launch shape. Where its numbers come from, by file: the
//! default shape per architecture, element size, scan shape and operator (`defaults.rs`), the
//! fused scans' staged tiles (`fused.rs`), the shapes of smaller and larger inputs and which
//! one an input takes (`input_size.rs`), the register ladder the runtime climbs where ptxas
//! spills (`register_ladder.rs`), and the checks every policy passes before generation
//! (`validate.rs`). This file holds the type, its limits and what a policy says of itself
//! (tile items, vector widths, the first wave's stagger).

mod defaults;
mod fused;
mod input_size;
mod register_ladder;
mod validate;

pub use fused::FusedTile;
pub use input_size::{InputSize, InputSizeLimits, SizedShapes};

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
    /// shifted into place from its own vector and its neighbour's (tile_shifted.cu.tera,
    /// `scan_load_shifted`, `scan_store_shifted`); off, such a tile moves item by item. With
    /// [`TuningPolicy::lead_tiles`], so does the lead's first tile (short by less than a
    /// vector), and a suffix scan's whole tiles load so from an input at another offset than
    /// the output their tiles sit on. Like
    /// [`TuningPolicy::partial_tile_vectors`] its code is in every kernel though only tiles of
    /// unaligned buffers run it, and the register ladder gives it up after the lead's tiles, then those.
    pub shifted_tile_vectors: bool,
    /// How a shifted store gets the vector before a lane's own (tile_shifted.cu.tera,
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
    /// sits on whole tiles of memory (tile_layout.cu.tera, `first_tile_shortfall`); off, a suffix
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
}

/// The largest power of two at most `x` (1 for 0).
fn prev_power_of_two(x: u32) -> u32 {
    1 << (31 - x.max(1).leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Algorithm;

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
}
