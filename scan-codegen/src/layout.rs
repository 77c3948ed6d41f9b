//! Host-side arithmetic the templates rely on: shared-memory padding, Blelloch tree sizes, the
//! single-pass tile-state layout. The generated code `static_assert`s what it can of these, so
//! the host and the device cannot silently disagree.

use crate::policy::TuningPolicy;
use crate::Algorithm;

/// Bytes of one row of shared-memory banks (32 banks x 4 bytes).
pub const BANK_ROW_BYTES: usize = 128;

/// Whether a thread's items are held packed, several to a 32-bit register: 1- and 2-byte elements
/// whose items per thread fill whole words. A packed thread holds as many bytes as a 4-byte
/// scan's thread in as many registers, and moves its run to and from shared memory as words
/// (scan-codegen/templates/tile.cu.tera, `ScanItems`).
///
/// 2-byte elements were held back for two sessions: packed `u16`/`i16` products at 64 and 128
/// items under the 80-register cap came out 0 from a tile's third warp on. The cause was ptxas
/// (12.9, and the driver's 13.0 JIT), not the packing: the block scan's 2-byte warp totals sat
/// side by side, NVVM read two at once (`ld.shared.v2.u16`), and under the cap ptxas took the
/// second from a uniform register it had never written. Each warp total now has a word of its
/// own (block_scan_kogge_stone.cu.tera). Packed, `u16`/`i16` sums reached 0.94 of a copy at
/// 2^28 against 0.80 unpacked (bench/results/h100-packed-u16-experiment-session14.md).
pub fn packs_items(elem_size: usize, items_per_thread: u32) -> bool {
    PACKED_ELEMENT_SIZES.contains(&elem_size)
        && (items_per_thread as usize * elem_size).is_multiple_of(4)
}

/// Element sizes whose items are packed ([`packs_items`]).
pub const PACKED_ELEMENT_SIZES: &[usize] = &[1, 2];

/// How many items of `elem_size` bytes a 32-bit register holds when a thread's items fill whole
/// words ([`packs_items`]): 4 / size for the packed sizes, one otherwise. Policies count a
/// thread's items in registers with it.
pub fn items_per_register(elem_size: usize) -> usize {
    if PACKED_ELEMENT_SIZES.contains(&elem_size) {
        4 / elem_size
    } else {
        1
    }
}

/// Padding of the tile transpose buffer: `(every, elems)`, `elems` padding elements after each
/// run of `every` elements (`every` 0: no padding).
///
/// Unpacked: one padding element after every 128-byte bank row, so the blocked read (lane `l`
/// reads `l * items + i`) spreads over all banks. As in CUB's `BlockExchange`, padding only pays
/// when `items_per_thread` is a power of two (then every lane of a half row would hit the same
/// banks); with odd counts the unpadded stride is already conflict-free and padding would add
/// conflicts. Elements bigger than half a row, or of a size that is not a power of two, gain
/// nothing from it.
///
/// Packed ([`packs_items`]): lanes read their runs as words, lane `l` word `k` at
/// `l * run_words + k`; one padding word after each run makes the stride odd (conflict-free)
/// when the run is an even number of words, and none is needed when it is odd.
pub fn smem_padding(elem_size: usize, items_per_thread: u32) -> (u32, u32) {
    if packs_items(elem_size, items_per_thread) {
        let run_words = items_per_thread as usize * elem_size / 4;
        return if run_words.is_multiple_of(2) {
            (items_per_thread, (4 / elem_size) as u32)
        } else {
            (0, 0)
        };
    }
    match stage_padding(elem_size, items_per_thread) {
        0 => (0, 0),
        every => (every, 1),
    }
}

/// One value of padding after every how many values (0: none) when values of `size` bytes,
/// unpacked, move between warp-striped and blocked order ([`smem_padding`]'s rule for unpacked
/// elements; also the fused exchange's rule for each input array and the output).
pub fn stage_padding(size: usize, items_per_thread: u32) -> u32 {
    let pow2_items = items_per_thread >= 2 && items_per_thread.is_power_of_two();
    if pow2_items && size.is_power_of_two() && size <= BANK_ROW_BYTES / 2 {
        (BANK_ROW_BYTES / size) as u32
    } else {
        0
    }
}

/// Where a fused scan stages its arrays in each warp's slice of the tile exchange
/// (scan-codegen/templates/fused.cu.tera).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FusedStaging {
    /// Byte offset of each input array's staged values in the slice.
    pub input_offsets: Vec<u32>,
    /// Bytes of one warp's slice, a multiple of 16 so every slice is aligned for any value.
    pub warp_bytes: u32,
    /// The inputs stay staged, and are one array of values the output's size: each output
    /// slot is its own item's input slot, so a thread reads each input just before its result
    /// replaces it, and holds none in registers.
    pub output_in_place: bool,
}

/// Bytes a warp's share of an array of `size`-byte values takes when staged, padded by
/// [`stage_padding`] and rounded up to 16 bytes.
fn staged_array_bytes(items_per_thread: u32, size: usize) -> u32 {
    let warp_items = 32 * items_per_thread;
    let every = stage_padding(size, items_per_thread);
    let bytes = smem_index(warp_items - 1, (every, u32::from(every > 0))) as usize * size + size;
    bytes.div_ceil(16) as u32 * 16
}

/// The fused exchange's staging. Where the inputs stay staged from the load to the finish of a
/// tile (`inputs_stay_staged`: the unsegmented fused tile keeps no lifted items in registers),
/// each input array has its own region and the output reuses the slice once they are read back:
/// the slice holds the sum of the inputs or the output, whichever is larger. Otherwise every
/// array uses the whole slice in turn: it holds the widest.
pub fn fused_staging(
    items_per_thread: u32,
    input_sizes: &[usize],
    output_size: usize,
    inputs_stay_staged: bool,
) -> FusedStaging {
    let inputs: Vec<u32> = input_sizes
        .iter()
        .map(|&size| staged_array_bytes(items_per_thread, size))
        .collect();
    let output = staged_array_bytes(items_per_thread, output_size);
    if inputs_stay_staged {
        let input_offsets = inputs
            .iter()
            .scan(0u32, |offset, &bytes| {
                let start = *offset;
                *offset += bytes;
                Some(start)
            })
            .collect();
        FusedStaging {
            input_offsets,
            warp_bytes: inputs.iter().sum::<u32>().max(output),
            output_in_place: input_sizes == [output_size],
        }
    } else {
        FusedStaging {
            input_offsets: vec![0; inputs.len()],
            warp_bytes: inputs.into_iter().max().unwrap_or(0).max(output),
            output_in_place: false,
        }
    }
}

/// Elements of the tile transpose buffer of a fused scan: room for the warps' slices of the
/// fused exchange ([`fused_staging`]), and for the plain tile where a kernel of the module
/// still exchanges elements (the hierarchy's spine kernels scan levels of elements; the
/// single-pass kernel only exchanges the arrays' own values).
pub fn fused_smem_tile_elems(
    policy: &TuningPolicy,
    algorithm: Algorithm,
    elem_size: usize,
    warp_bytes: u32,
) -> u32 {
    let warps = policy.block_threads / 32;
    let needed = (warps * warp_bytes) as usize;
    let fused = needed.div_ceil(elem_size) as u32;
    if algorithm == Algorithm::SinglePass {
        fused
    } else {
        fused.max(smem_tile_elems(policy, elem_size))
    }
}

/// Padded index of element `i` of the transpose buffer ([`smem_padding`]'s `(every, elems)`).
pub fn smem_index(i: u32, (every, elems): (u32, u32)) -> u32 {
    // every == 0: no padding.
    i.checked_div(every).map_or(i, |runs| i + runs * elems)
}

/// Elements in the tile transpose buffer, padding included.
pub fn smem_tile_elems(policy: &TuningPolicy, elem_size: usize) -> u32 {
    let tile = policy.tile_items();
    smem_index(tile - 1, smem_padding(elem_size, policy.items_per_thread)) + 1
}

/// GPU Gems 3 `LOG_NUM_BANKS`.
pub const LOG_NUM_BANKS: u32 = 5;

/// The bank-conflict padding of GPU Gems 3 ch. 39, with the book's precedence bug fixed.
pub fn conflict_free_offset(n: u32) -> u32 {
    (n >> LOG_NUM_BANKS) + (n >> (2 * LOG_NUM_BANKS))
}

/// Leaves of the Blelloch tree: `block_threads` rounded up to a power of two.
pub fn blelloch_leaves(block_threads: u32) -> u32 {
    block_threads.next_power_of_two()
}

/// Shared elements of the Blelloch tree, conflict-free padding included.
pub fn blelloch_smem_elems(block_threads: u32) -> u32 {
    let n = blelloch_leaves(block_threads);
    n + conflict_free_offset(n - 1)
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

/// Size of the segmented scan's `(value, head)` pair: the element, then a `u32` head flag, in a
/// struct aligned to both.
pub fn segmented_size(elem_size: usize, elem_align: usize) -> usize {
    let align = elem_align.max(4);
    (elem_size.div_ceil(4) * 4 + 4).div_ceil(align) * align
}

/// Shared memory a variant adds to [`static_shared_bytes`]: the bigger scanned element in the
/// block scan's storage, and for offsets one head bit per tile element, a probe entry per
/// thread, a probe ballot per warp and the first entry.
pub fn variant_shared_bytes(
    policy: &TuningPolicy,
    variant: crate::ScanVariant,
    elem_size: usize,
    scanned_size: usize,
) -> u64 {
    let grow = (scanned_size - elem_size) as u64;
    let block = u64::from(policy.block_threads / 32 + 2) * grow;
    let tile = u64::from(policy.tile_items());
    // Keys and flags are staged in shared memory, one padding element per 128 bytes.
    let staged = |size: u64| (tile + tile / (128 / size) + 1) * size + size;
    let heads = match variant.segments {
        crate::Segments::Offsets(width) => {
            let threads = u64::from(policy.block_threads);
            tile.div_ceil(32) * 4 + threads * width.prim().size() as u64 + threads / 32 * 4 + 16
        }
        crate::Segments::Keys(k) => staged(k.size() as u64),
        crate::Segments::Flags => staged(1),
        _ => 0,
    };
    block + heads
}

/// Chunks a column scan's look-back window covers (scan-codegen/templates/columns.cu.tera): a
/// warp's 32 where the window's values (32 columns of each chunk) fit in 16 KiB of shared
/// memory, fewer for wider elements.
pub fn column_look_back_window(elem_size: usize) -> u32 {
    let per_chunk = 32 * elem_size.max(1) as u64;
    let fit = (16 * 1024 / per_chunk).clamp(1, 32) as u32;
    1 << fit.ilog2()
}

/// Static shared memory of one block of the column kernel (scan-codegen/templates/columns.cu.tera):
/// a total per unit and column, a prefix per column, the look-back window's values and states
/// (one per chunk and column, at most one per thread), its found flag, the tile id and epoch
/// (upper bound, with alignment slack). The tile itself stays in registers.
pub fn column_shared_bytes(policy: &TuningPolicy, elem_size: usize, elem_align: usize) -> u64 {
    let size = elem_size as u64;
    let threads = u64::from(policy.block_threads);
    let cells = (u64::from(column_look_back_window(elem_size)) * 32).min(threads);
    2 * threads * size + cells * (size + 4) + 16 + 4 * elem_align.max(1) as u64
}

/// Static shared memory of one block (upper bound: C may add a little alignment padding).
pub fn static_shared_bytes(
    policy: &TuningPolicy,
    algorithm: Algorithm,
    elem_size: usize,
    elem_align: usize,
) -> u64 {
    let size = elem_size as u64;
    let align = elem_align.max(1) as u64;
    let tile = u64::from(smem_tile_elems(policy, elem_size)) * size;
    let block = match algorithm {
        Algorithm::Blelloch => (u64::from(blelloch_smem_elems(policy.block_threads)) + 1) * size,
        _ => u64::from(policy.block_threads / 32) * size,
    };
    // + prefix, tile id and alignment slack.
    round_up(tile, align) + round_up(block, align) + size + 4 + 2 * align
}

/// Tile-state header: the launch word and the sweep cursor, padded so the per-tile arrays stay
/// aligned.
pub const TILE_STATE_HEADER_BYTES: u64 = 128;
/// 32-bit words an element occupies (`SCAN_T_WORDS`), which is also the number of tagged 64-bit
/// words per tile in the single-pass tile state (each carries a copy of the status word beside
/// one word of the value).
pub fn elem_words(elem_size: usize) -> u64 {
    (elem_size.max(1) as u64).div_ceil(4)
}

/// Bytes of single-pass tile state for `num_tiles` tiles (see `scan-codegen/templates/look_back.cu.tera`).
/// The layout does not depend on `num_tiles` beyond the length: a larger state serves any
/// smaller launch.
pub fn tile_state_bytes(elem_size: usize, num_tiles: u64) -> u64 {
    TILE_STATE_HEADER_BYTES + 8 * elem_words(elem_size) * num_tiles.max(1)
}

/// Tile slots in a tile state of `bytes` bytes (the inverse of [`tile_state_bytes`]).
pub fn tile_state_slots(elem_size: usize, bytes: u64) -> u64 {
    bytes.saturating_sub(TILE_STATE_HEADER_BYTES) / (8 * elem_words(elem_size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_free_offset_is_the_corrected_macro() {
        assert_eq!(conflict_free_offset(0), 0);
        assert_eq!(conflict_free_offset(31), 0);
        assert_eq!(conflict_free_offset(32), 1);
        assert_eq!(conflict_free_offset(1023), 31);
        assert_eq!(conflict_free_offset(1024), 33);
        // The book's macro, `n >> NUM_BANKS + n >> (2 * LOG_NUM_BANKS)`, would parse as
        // `n >> (32 + n) >> 10`, which is 0 (or undefined) for every n: no padding at all.
        assert_eq!(blelloch_smem_elems(256), 256 + 7);
        assert_eq!(blelloch_smem_elems(96), 128 + 3);
        assert_eq!(blelloch_leaves(96), 128);
        assert_eq!(blelloch_smem_elems(1024), 1024 + 31);
    }

    /// Bank of each 4-byte word a warp touches in one blocked read step; returns the worst
    /// number of distinct words mapped to one bank (1 = conflict free).
    fn blocked_read_conflicts(elem_size: usize, items: u32, i: u32) -> usize {
        let pad = smem_padding(elem_size, items);
        let words_per_elem = elem_words(elem_size) as usize;
        // 8-byte accesses are served per half warp, 16-byte per quarter warp.
        let group = (32 / words_per_elem.clamp(1, 4)) as u32;
        let mut worst = 1;
        for g in 0..32 / group {
            let mut banks: Vec<Vec<usize>> = vec![Vec::new(); 32];
            for lane in g * group..(g + 1) * group {
                let e = smem_index(lane * items + i, pad) as usize;
                for w in 0..words_per_elem {
                    let word = (e * elem_size) / 4 + w;
                    if !banks[word % 32].contains(&word) {
                        banks[word % 32].push(word);
                    }
                }
            }
            worst = worst.max(banks.iter().map(|b| b.len()).max().unwrap());
        }
        worst
    }

    #[test]
    fn padding_makes_blocked_reads_conflict_free() {
        for (size, items) in [
            (4usize, 16u32),
            (4, 15),
            (4, 8),
            (4, 2),
            (8, 8),
            (8, 7),
            (8, 4),
            (16, 4),
            (16, 1),
        ] {
            for i in 0..items {
                assert_eq!(
                    blocked_read_conflicts(size, items, i),
                    1,
                    "{size}B x {items} items, item {i}"
                );
            }
        }
    }

    #[test]
    fn packed_runs_are_read_as_words_without_conflicts() {
        // Lane l reads word k of its run: element l * items + k * per_word.
        for (size, items) in [(1usize, 256u32), (1, 64), (1, 16), (1, 12)] {
            let pad = smem_padding(size, items);
            let per_word = (4 / size) as u32;
            for k in 0..items / per_word {
                let banks: std::collections::HashSet<u32> = (0..32)
                    .map(|l| smem_index(l * items + k * per_word, pad) * size as u32 / 4 % 32)
                    .collect();
                assert_eq!(banks.len(), 32, "{size}B x {items} items, word {k}");
            }
        }
    }

    #[test]
    fn padding_keeps_striped_writes_conflict_free() {
        // Lane l writes element i * 32 + l: a padded run of 32 consecutive elements.
        for size in [4usize, 8] {
            let pad = smem_padding(size, 16 / size as u32);
            for i in 0..16u32 {
                let idx: Vec<u32> = (0..32).map(|l| smem_index(i * 32 + l, pad)).collect();
                let banks: std::collections::HashSet<u32> =
                    idx.iter().map(|e| (e * size as u32 / 4) % 32).collect();
                assert_eq!(
                    banks.len(),
                    if size == 4 { 32 } else { 16 },
                    "{size}B step {i}"
                );
            }
        }
    }

    #[test]
    fn pad_every_and_buffer_sizes() {
        assert_eq!(smem_padding(4, 16), (32, 1));
        assert_eq!(smem_padding(8, 8), (16, 1));
        assert_eq!(smem_padding(8, 7), (0, 0));
        assert_eq!(smem_padding(8, 1), (0, 0));
        assert_eq!(smem_padding(12, 4), (0, 0));
        assert_eq!(smem_padding(64, 2), (2, 1));
        assert_eq!(smem_padding(128, 2), (0, 0));
        // Packed sub-word runs: a word after each thread's run of an even number of words.
        assert_eq!(smem_padding(1, 16), (16, 4));
        assert_eq!(smem_padding(1, 256), (256, 4));
        assert_eq!(smem_padding(1, 12), (0, 0)); // 3 words: odd stride already
        assert_eq!(smem_padding(1, 2), (128, 1)); // half a word: unpacked, padded per bank row
        assert_eq!(smem_padding(1, 6), (0, 0)); // not whole words: unpacked
        assert!(
            packs_items(1, 4)
                && !packs_items(1, 2)
                && packs_items(2, 2)
                && !packs_items(2, 1)
                && !packs_items(4, 16)
        );
        assert_eq!(
            smem_tile_elems(&TuningPolicy::new(128, 256), 1),
            128 * 256 + 127 * 4
        );
        let p = TuningPolicy::new(256, 16);
        assert_eq!(smem_tile_elems(&p, 4), 4096 + 127);
        let p = TuningPolicy::new(256, 1);
        assert_eq!(smem_tile_elems(&p, 128), 256);
    }

    #[test]
    fn tile_state_sizes() {
        assert_eq!(tile_state_bytes(4, 10), 128 + 80);
        assert_eq!(tile_state_bytes(1, 1), 136);
        assert_eq!(elem_words(1), 1);
        assert_eq!(elem_words(4), 1);
        assert_eq!(elem_words(6), 2);
        assert_eq!(elem_words(8), 2);
        assert_eq!(elem_words(12), 3);
        assert_eq!(tile_state_bytes(8, 10), 128 + 160);
        assert_eq!(tile_state_bytes(12, 0), tile_state_bytes(12, 1));
        for size in [1, 4, 8, 12, 32] {
            for tiles in [1, 2, 1000, 1 << 31] {
                assert_eq!(tile_state_slots(size, tile_state_bytes(size, tiles)), tiles);
            }
        }
    }
}
