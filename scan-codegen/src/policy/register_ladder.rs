//! The register ladder: the rungs the runtime builds, in order, where ptxas spills a kernel under
//! its policy's register cap ([`TuningPolicy::register_ladder`]), and which rung it tries next
//! ([`TuningPolicy::next_rung_to_try`]). scan-runtime's register_ladder.rs climbs it.

use super::TuningPolicy;
use crate::Algorithm;

impl TuningPolicy {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Algorithm, Direction};

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
}
