//! Fused scans' tiles ([`TuningPolicy::for_transform`]): an unsegmented single-pass fused tile
//! stages its input arrays in shared memory, so its shape follows the staged bytes, not the
//! element.

use super::TuningPolicy;
use crate::Algorithm;

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

impl TuningPolicy {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Algorithm;

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
}
