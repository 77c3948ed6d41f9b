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
/// Unpacked ([`tile_padding`]): one padding element after each thread's run, or after each
/// 128-byte bank row where a run is shorter, so the blocked accesses (lane `l` at element
/// `l * items + i`) spread over the banks and the warp-striped ones stay within a row.
///
/// Packed ([`packs_items`]): lanes read their runs in accesses of [`packed_run_access_words`]
/// words (`packed_access_bytes`, the policy's, asks for them), lane `l` at word
/// `l * run_words + k`; that many padding words after each run make the stride an odd number
/// of accesses (conflict-free) when the run is an even number of them, and none is needed when
/// it is odd.
pub fn smem_padding(
    elem_size: usize,
    items_per_thread: u32,
    packed_access_bytes: u32,
) -> (u32, u32) {
    if packs_items(elem_size, items_per_thread) {
        let access_words =
            packed_run_access_words(elem_size, items_per_thread, packed_access_bytes);
        let run_words = items_per_thread as usize * elem_size / 4;
        return if (run_words / access_words).is_multiple_of(2) {
            (items_per_thread, (access_words * 4 / elem_size) as u32)
        } else {
            (0, 0)
        };
    }
    match tile_padding(elem_size, items_per_thread) {
        0 => (0, 0),
        every => (every, 1),
    }
}

/// Words per shared-memory access of a packed thread's run (tile.cu.tera,
/// `SCAN_RUN_ACCESS_WORDS`) for `items_per_thread` packed items of `elem_size` bytes, when the
/// policy asks for accesses of `packed_access_bytes`: 4 (16-byte accesses) where it asks for 16
/// and the run is a multiple of 32 words, one otherwise.
///
/// Word by word, a u16 thread's two transposes took 256 shared-memory instructions a tile:
/// 16-byte blocked accesses move the same bytes in a quarter of them, and the warp-striped side
/// then moves each lane's global vector whole (half of them, at 8-byte vectors), 96 in all.
/// Four padding words keep both conflict-free only when a run holds whole 32-word stretches: a
/// warp-striped half warp (16 lanes x 8 bytes) or quarter warp (8 x 16) then writes 32
/// consecutive words of one run. Shorter runs (the smaller shapes) would cross a padding run in
/// the middle of such a stretch, so they keep one word.
pub fn packed_run_access_words(
    elem_size: usize,
    items_per_thread: u32,
    packed_access_bytes: u32,
) -> usize {
    let run_words = items_per_thread as usize * elem_size / 4;
    if packs_items(elem_size, items_per_thread)
        && packed_access_bytes >= 16
        && run_words >= 32
        && run_words.is_multiple_of(32)
    {
        4
    } else {
        1
    }
}

/// Widest shared-memory access (4, 8 or 16 bytes) an element of `size` bytes is read with: the
/// largest power of two, at most 16, that divides it (1 or 2 for the smallest elements).
pub fn smem_access_bytes(size: usize) -> usize {
    1 << size.max(1).trailing_zeros().min(4)
}

/// One padding element after every how many elements (0: none) of an unpacked tile's transpose
/// buffer ([`smem_padding`]).
///
/// A warp instruction of the blocked order reads element `i` of each lane's run: accesses a run
/// apart. A 16-byte access is served a quarter warp at a time (8 lanes x 16 bytes = one bank
/// row), an 8-byte one a half warp at a time, and lanes whose accesses are a multiple of a bank
/// row apart collide. They never do when the padded run is an odd number of accesses, which one
/// padding element per run gives for power-of-two runs of elements that are an odd number of
/// accesses themselves: every power of two up to 16 bytes, and the 12-, 20-, 24-, 40- and
/// 48-byte structs. The warp-striped accesses (32 consecutive elements per instruction) cross at
/// most one padding element. Where a run is shorter than a bank row, one element per row does
/// the same (and keeps the striped rows whole).
///
/// Before, every power-of-two element took one element per bank row and the others none: runs
/// of two or more rows had lanes l and l + 16 on one bank (i32 at 64 items, i64 at 32, 16-byte
/// elements at 16: 2-way conflicts), and 24-byte elements at 8 items 8-way ones, 12-byte at 16
/// items 16-way (the `blocked_accesses_are_conflict_free` test's model). A 32-byte element
/// (two 16-byte accesses) can only halve its conflicts with whole padding elements: 4-way to
/// 2-way at 8 items.
pub fn tile_padding(size: usize, items_per_thread: u32) -> u32 {
    if items_per_thread < 2 || !items_per_thread.is_power_of_two() {
        // Odd runs of elements already spread over the banks; padding would add conflicts.
        return 0;
    }
    let accesses = size / smem_access_bytes(size);
    if size.is_power_of_two() && size <= BANK_ROW_BYTES / 2 {
        ((BANK_ROW_BYTES / size) as u32).max(items_per_thread)
    } else if !size.is_power_of_two() && accesses % 2 == 1 {
        items_per_thread
    } else {
        0
    }
}

/// One value of padding after every how many values (0: none) when a fused scan stages values of
/// `size` bytes, unpacked, between warp-striped and blocked order: [`tile_padding`]'s rule for
/// power-of-two values (one per thread's run, or per 128-byte bank row where a run is shorter),
/// whose period fused.cu.tera's slots need to nest with a warp's 32 positions.
pub fn stage_padding(size: usize, items_per_thread: u32) -> u32 {
    if size.is_power_of_two() {
        tile_padding(size, items_per_thread)
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
    smem_index(
        tile - 1,
        smem_padding(
            elem_size,
            policy.items_per_thread,
            policy.packed_access_bytes,
        ),
    ) + 1
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
        // Each warp total has a word of its own (block_scan_kogge_stone.cu.tera).
        _ => u64::from(policy.block_threads / 32) * round_up(size, align.max(4)),
    };
    // The tile is declared 16-byte aligned where it moves as vectors (packed, fused and wide
    // elements), which also makes the storage a multiple of 16: count both roundings. (A 64 KiB
    // packed tile's storage came out 32 bytes over the old estimate, and its kernel failed the
    // static_assert against SCAN_DYNAMIC_SHARED_BYTES.)
    // + prefix, tile id, epoch and alignment slack.
    round_up(
        round_up(tile, 16) + round_up(block, align) + size + 8 + 2 * align,
        16,
    )
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

    /// Shared-memory wavefronts of one warp instruction whose lane `l` accesses `width` bytes at
    /// byte `addrs[l]`, over the fewest a conflict-free access of that width takes: 8-byte
    /// accesses are served a half warp at a time, 16-byte ones a quarter warp, and within each
    /// group every bank serves one 4-byte word per wavefront (1 = conflict free).
    fn access_conflicts(addrs: &[usize], width: usize) -> usize {
        let group = (BANK_ROW_BYTES / width.max(4)).min(32);
        addrs
            .chunks(group)
            .map(|lanes| {
                let mut banks: Vec<Vec<usize>> = vec![Vec::new(); 32];
                for &a in lanes {
                    for word in a / 4..(a + width.max(4)) / 4 {
                        if !banks[word % 32].contains(&word) {
                            banks[word % 32].push(word);
                        }
                    }
                }
                banks.iter().map(Vec::len).max().unwrap()
            })
            .max()
            .unwrap()
    }

    /// Worst conflicts of the blocked order's accesses (lane `l`, element `l * items + i`, each
    /// read as `size / smem_access_bytes(size)` accesses).
    fn blocked_conflicts(size: usize, items: u32) -> usize {
        blocked_conflicts_padded(size, items, smem_padding(size, items, 4))
    }

    /// [`blocked_conflicts`] under padding `pad` (`smem_padding`'s `(every, elems)`).
    fn blocked_conflicts_padded(size: usize, items: u32, pad: (u32, u32)) -> usize {
        let width = smem_access_bytes(size).max(4).min(size);
        (0..items)
            .flat_map(|i| (0..size / width).map(move |part| (i, part)))
            .map(|(i, part)| {
                let addrs: Vec<usize> = (0..32)
                    .map(|l| smem_index(l * items + i, pad) as usize * size + part * width)
                    .collect();
                access_conflicts(&addrs, width)
            })
            .max()
            .unwrap()
    }

    /// Worst conflicts of the warp-striped order's accesses (lane `l`, element `i * 32 + l`; an
    /// element over 8 bytes moves as vectors, lane `l` taking vector `i * 32 + l` of the slice,
    /// as tile_vectors.cu.tera's `scan_slice_vector`).
    fn striped_conflicts(size: usize, items: u32) -> usize {
        let pad = smem_padding(size, items, 4);
        let vector = if size > 8 {
            smem_access_bytes(size)
        } else {
            size
        };
        let vectors = size / vector;
        (0..items as usize * vectors)
            .map(|i| {
                let addrs: Vec<usize> = (0..32)
                    .map(|l| {
                        let j = i * 32 + l;
                        smem_index((j / vectors) as u32, pad) as usize * size + j % vectors * vector
                    })
                    .collect();
                access_conflicts(&addrs, vector)
            })
            .max()
            .unwrap()
    }

    #[test]
    fn blocked_accesses_are_conflict_free() {
        // Every unpacked element size of the structs and primitives at every power-of-two run
        // a policy gives them, odd runs included.
        for size in [4usize, 8, 12, 16, 20, 24, 40, 48] {
            for items in [1u32, 2, 4, 8, 16, 32, 64, 7, 15] {
                if size * items as usize > 512 {
                    continue;
                }
                assert_eq!(blocked_conflicts(size, items), 1, "{size}B x {items} items");
                // A striped instruction crosses at most one padding element.
                assert!(
                    striped_conflicts(size, items) <= 2,
                    "{size}B x {items} items"
                );
                if size.is_power_of_two() {
                    assert_eq!(striped_conflicts(size, items), 1, "{size}B x {items} items");
                }
            }
        }
        // 32-byte elements: whole padding elements can only halve the conflicts of the
        // per-row padding (4-way at 8 items, 8-way at 16).
        assert_eq!(blocked_conflicts(32, 8), 2);
        assert_eq!(blocked_conflicts(32, 16), 2);
        assert_eq!(striped_conflicts(32, 8), 1);
        // The rule before (one element per bank row for powers of two, none otherwise), for
        // the defaults of sm_90: i32 x 64, i64 x 32, 16 B x 16, 24 B x 8, 12 B x 16.
        let per_row = |size: usize, items: u32| {
            let every = if size.is_power_of_two() {
                (BANK_ROW_BYTES / size) as u32
            } else {
                0
            };
            blocked_conflicts_padded(size, items, (every, 1))
        };
        assert_eq!(
            [
                per_row(4, 64),
                per_row(8, 32),
                per_row(16, 16),
                per_row(24, 8),
                per_row(12, 16)
            ],
            [2, 2, 2, 8, 16]
        );
    }

    #[test]
    fn packed_runs_are_read_as_words_without_conflicts() {
        // Lane l reads word k of its run: element l * items + k * per_word.
        for (size, items) in [(1usize, 256u32), (1, 64), (1, 16), (1, 12)] {
            let pad = smem_padding(size, items, 4);
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
    fn packed_runs_move_as_16_byte_accesses_without_conflicts() {
        // Runs of whole 32-word stretches: u8 and u16 at 128 and 256 bytes a thread (the
        // sm_90 defaults), and longer ones.
        for (size, items) in [(1usize, 128u32), (1, 256), (2, 64), (2, 128), (1, 512)] {
            assert_eq!(
                packed_run_access_words(size, items, 16),
                4,
                "{size}B x {items}"
            );
            assert_eq!(
                packed_run_access_words(size, items, 4),
                1,
                "{size}B x {items}"
            );
            let pad = smem_padding(size, items, 16);
            assert_eq!(pad, (items, 16 / size as u32), "{size}B x {items}");
            let per_access = 16 / size as u32;
            // Blocked: lane l reads 16 bytes at element l * items + k * per_access.
            for k in 0..items / per_access {
                let addrs: Vec<usize> = (0..32)
                    .map(|l| smem_index(l * items + k * per_access, pad) as usize * size)
                    .collect();
                assert!(
                    addrs.iter().all(|a| a % 16 == 0),
                    "{size}B x {items}: aligned"
                );
                assert_eq!(
                    access_conflicts(&addrs, 16),
                    1,
                    "{size}B x {items}, access {k}"
                );
            }
            // Warp-striped: lane l moves its 8- or 16-byte global vector i whole, at element
            // (i * 32 + l) * vector items of its warp's slice.
            for vector in [8usize, 16] {
                let vector_items = (vector / size) as u32;
                for i in 0..items / vector_items {
                    let addrs: Vec<usize> = (0..32)
                        .map(|l| smem_index((i * 32 + l) * vector_items, pad) as usize * size)
                        .collect();
                    assert!(addrs.iter().all(|a| a % vector == 0), "aligned vectors");
                    assert_eq!(
                        access_conflicts(&addrs, vector),
                        1,
                        "{size}B x {items} v{vector}"
                    );
                }
            }
        }
        // Shorter runs would cross padding mid-stretch: they keep words, and so do unpacked
        // elements.
        for (size, items) in [(1usize, 64u32), (1, 16), (2, 32), (1, 12), (4, 64), (1, 2)] {
            assert_eq!(
                packed_run_access_words(size, items, 16),
                1,
                "{size}B x {items}"
            );
            assert_eq!(smem_padding(size, items, 16), smem_padding(size, items, 4));
        }
    }

    #[test]
    fn padding_keeps_striped_writes_conflict_free() {
        // Lane l writes element i * 32 + l: a padded run of 32 consecutive elements.
        for size in [4usize, 8] {
            let pad = smem_padding(size, 16 / size as u32, 4);
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
        assert_eq!(smem_padding(4, 16, 4), (32, 1));
        assert_eq!(smem_padding(8, 8, 4), (16, 1));
        assert_eq!(smem_padding(8, 7, 4), (0, 0));
        assert_eq!(smem_padding(8, 1, 4), (0, 0));
        assert_eq!(smem_padding(4, 64, 4), (64, 1)); // a run of two bank rows: one per run
        assert_eq!(smem_padding(12, 4, 4), (4, 1)); // 3 accesses of 4 bytes: odd, padded per run
        assert_eq!(smem_padding(24, 8, 4), (8, 1));
        assert_eq!(smem_padding(32, 8, 4), (8, 1));
        assert_eq!(smem_padding(96, 2, 4), (0, 0)); // 6 accesses of 16 bytes: padding cannot help
        assert_eq!(smem_padding(64, 2, 4), (2, 1));
        assert_eq!(smem_padding(128, 2, 4), (0, 0));
        // Packed sub-word runs: a word after each thread's run of an even number of words.
        assert_eq!(smem_padding(1, 16, 4), (16, 4));
        assert_eq!(smem_padding(1, 256, 4), (256, 4));
        assert_eq!(smem_padding(1, 12, 4), (0, 0)); // 3 words: odd stride already
        assert_eq!(smem_padding(1, 2, 4), (128, 1)); // half a word: unpacked, padded per bank row
        assert_eq!(smem_padding(1, 6, 4), (0, 0)); // not whole words: unpacked
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
