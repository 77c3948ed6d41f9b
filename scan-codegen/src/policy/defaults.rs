//! The default launch shape of a scan: per architecture and element size
//! ([`TuningPolicy::for_target`], measured with `scangen tune`), per scan shape (segmented,
//! column scans: [`TuningPolicy::for_variant`]) and per operator where its combine needs it
//! ([`TuningPolicy::for_scan`]).

use super::{prev_power_of_two, TuningPolicy};
use crate::layout;
use crate::Algorithm;

impl TuningPolicy {
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
            // the tile's end was tested in 32 bits: tile_layout.cu.tera, span_edge, session 42.)
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
                let mut policy = Self::for_variant(sm, algorithm, size, align, variant);
                let deferred_words = variant.segments == crate::Segments::None
                    && policy.defer_tile_prefix
                    && layout::packs_items(size, policy.items_per_thread);
                if deferred_words
                    && op
                        .word_form
                        .is_some_and(|form| Self::deferred_words_need_a_block(form, size))
                {
                    policy.min_blocks_per_sm =
                        policy.min_blocks_per_sm.min(Self::DEFERRED_MIN_BLOCKS);
                }
                policy
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
    /// asking for it spares an empty cache a round of NVRTC compiles (u8 max at 2^28: 5.7-6.1 s
    /// to the first result, 2.8-3.0 asking for 5; u8 products at 2^25 5.2-6.4 -> 2.0-2.2 s; H200,
    /// BENCHMARKS.md session 51), and the shapes that depend on the default's cap
    /// (`for_few_waves_input`, `for_many_waves_input`) know it before the default is built.
    /// Sums, bitwise forms and half max/min fit at 6.
    pub fn deferred_words_need_a_block(form: scan_core::WordForm, elem_size: usize) -> bool {
        use scan_core::WordForm;
        match form {
            WordForm::WrappingMul => elem_size <= 2,
            WordForm::Max | WordForm::Min => elem_size == 1,
            _ => false,
        }
    }

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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Algorithm;

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
}
