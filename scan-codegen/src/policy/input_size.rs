//! Launch shapes by input size: the tiny, small, mid-size, few-waves and many-waves shapes
//! beside the default, and which of them an input of so many default tiles takes
//! ([`TuningPolicy::input_size`]).

use super::{prev_power_of_two, TuningPolicy};
use crate::layout;
use crate::Algorithm;

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
    /// compile that spills (an f16 max scan of 2^23 elements, empty cache: 4.8-4.9 s to the
    /// first result, 2.0-2.5 s asking for 5; i32 sums at 2^22 1.4-1.5 -> 0.7-1.0 s; H200,
    /// BENCHMARKS.md session 51), and the mid-size shape's one wave the same before and after it
    /// is built. 16-byte elements fit at the default's cap.
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Algorithm, Direction};

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
}
