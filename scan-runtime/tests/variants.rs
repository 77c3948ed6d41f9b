//! Reverse and segmented scans (flags, keys, CSR offsets, rows with and without a stride), each
//! also reversed, inclusive and exclusive, with and without an initial value and a total, for
//! primitive and non-commutative struct ops (8, 12 and 32 bytes), at awkward sizes and segment
//! structures (one segment, every element its own, empty segments, boundaries at warp and tile
//! edges, long segments), against a plain per-segment CPU reference; the reverse flat scan on
//! every algorithm; a single segment longer than 2^31 elements; and the typed errors.
//!
//! Needs an NVIDIA GPU: every test is `#[ignore]`d (see gpu_suite.rs).

use scan_core::PrimType;
use scan_runtime::builtin::{Add, Max};
use scan_runtime::{
    Algorithm, DeviceSegments, Gpu, HostSegments, OffsetWidth, ScanError, ScanExtras, ScanMode,
    ScanOp, ScanOptions, Segments, TuningPolicy,
};
use std::sync::Mutex;

mod common;
use common::ops::{Compose, ComposeBytes, ComposeCounted, LastOfRun, MatMul};
use common::segments::{ranges, reference, starts};
use common::{awkward_sizes, download, first_mismatch, random_values, upload, Rng, TestValue};

fn gpu() -> Gpu {
    common::gpu("variants")
}

/// One case: a scanner for `rule`, data of `n` elements with a segment structure, checked
/// against the reference; through the host call or through device buffers with init/total.
#[allow(clippy::too_many_arguments)]
fn case<Op: ScanOp>(
    gpu: &Gpu,
    scanner: &mut scan_runtime::Scanner<Op>,
    rule: Segments,
    mode: ScanMode,
    reverse: bool,
    n: usize,
    kind: usize,
    rng: &mut Rng,
) -> Result<(), String>
where
    Op::Elem: TestValue,
{
    let tile = scanner.tile_items() as usize;
    let stream = gpu.new_stream().map_err(|e| e.to_string())?;
    let with_extras = kind % 2 == 1;
    let init = if with_extras {
        Some(random_values::<Op::Elem>(rng, 1)[0])
    } else {
        None
    };
    // Rows: n is rows x cols, with a stride for the strided rule.
    let (len, segs, host_rows) = match rule {
        Segments::Rows { strided } => {
            let cols = [1usize, 31, 32, 33, tile - 1, tile + 1, 7, 100][kind % 8].max(1);
            let rows = n.div_ceil(cols).max(usize::from(n > 0));
            let stride = if strided { cols + 1 + kind % 5 } else { cols };
            let len = if rows == 0 {
                0
            } else {
                (rows - 1) * stride + cols
            };
            let segs: Vec<(usize, usize)> =
                (0..rows).map(|r| (r * stride, r * stride + cols)).collect();
            (len, segs, Some((rows as u64, cols as u64, stride as u64)))
        }
        _ => {
            let st = starts(kind, n, tile, rng);
            (n, ranges(&st, n), None)
        }
    };
    let input = random_values::<Op::Elem>(rng, len);
    let mut expected = input.clone();
    let expected_total = reference::<Op>(&input, &segs, mode, reverse, init, &mut expected);
    let starts: Vec<usize> = segs.iter().map(|&(a, _)| a).collect();
    // The segment data of the rule.
    let flags: Vec<u8> = {
        let mut f: Vec<u8> = (0..len).map(|_| 0).collect();
        for (i, x) in f.iter_mut().enumerate() {
            // noise that is not a start: only 0 counts as "no start"
            *x = if starts.binary_search(&i).is_ok() {
                1 + (rng.below(255) as u8)
            } else {
                0
            };
        }
        f
    };
    let seg_index = |p: usize| starts.partition_point(|&s| s <= p);
    let mut offsets: Vec<u64> = Vec::new();
    for &s in &starts {
        offsets.push(s as u64);
        if rng.below(4) == 0 {
            offsets.push(s as u64); // an empty segment
        }
    }
    if offsets.first() != Some(&0) || len == 0 {
        offsets.insert(0, 0);
    }
    offsets.push(len as u64);
    let host: HostSegments<'_>;
    let keys_u8: Vec<u8>;
    let keys_i32: Vec<i32>;
    let keys_u64: Vec<u64>;
    let offs32: Vec<u32>;
    match rule {
        Segments::Flags => host = HostSegments::Flags(&flags),
        Segments::Keys(PrimType::U8) => {
            keys_u8 = (0..len).map(|p| (seg_index(p) % 200) as u8).collect();
            host = HostSegments::keys(&keys_u8);
        }
        Segments::Keys(PrimType::I32) => {
            keys_i32 = (0..len).map(|p| -(seg_index(p) as i32) * 7).collect();
            host = HostSegments::keys(&keys_i32);
        }
        Segments::Keys(_) => {
            keys_u64 = (0..len).map(|p| (seg_index(p) as u64) << 40).collect();
            host = HostSegments::keys(&keys_u64);
        }
        Segments::Offsets(OffsetWidth::U32) => {
            offs32 = offsets.iter().map(|&o| o as u32).collect();
            host = HostSegments::Offsets32(&offs32);
        }
        Segments::Offsets(OffsetWidth::U64) => host = HostSegments::Offsets64(&offsets),
        Segments::Rows { .. } => {
            let (rows, cols, row_stride) = host_rows.unwrap();
            host = HostSegments::Rows {
                rows,
                cols,
                row_stride,
            };
        }
        Segments::None | Segments::Columns => unreachable!("columns: tests/columns.rs"),
    }
    if !with_extras {
        let got = scanner
            .scan_segmented(&input, host)
            .map_err(|e| e.to_string())?;
        return first_mismatch(&expected, &got);
    }
    // Device buffers, init and total.
    let d_in = upload(&stream, &input);
    let mut d_out = upload(&stream, &input);
    let d_init = upload(&stream, &[init.unwrap()]);
    let mut d_total = upload(&stream, &random_values::<Op::Elem>(rng, 1));
    let d_flags;
    let d_k8;
    let d_k32;
    let d_k64;
    let d_o32;
    let d_o64;
    let segments = match host {
        HostSegments::Flags(f) => {
            d_flags = upload(&stream, f);
            DeviceSegments::flags(&d_flags)
        }
        HostSegments::Keys(scan_runtime::HostKeys::U8(k)) => {
            d_k8 = upload(&stream, k);
            DeviceSegments::keys(&d_k8)
        }
        HostSegments::Keys(scan_runtime::HostKeys::I32(k)) => {
            d_k32 = upload(&stream, k);
            DeviceSegments::keys(&d_k32)
        }
        HostSegments::Keys(scan_runtime::HostKeys::U64(k)) => {
            d_k64 = upload(&stream, k);
            DeviceSegments::keys(&d_k64)
        }
        HostSegments::Keys(_) => unreachable!(),
        HostSegments::Offsets32(o) => {
            d_o32 = upload(&stream, o);
            DeviceSegments::offsets(&d_o32)
        }
        HostSegments::Offsets64(o) => {
            d_o64 = upload(&stream, o);
            DeviceSegments::offsets(&d_o64)
        }
        HostSegments::Rows {
            rows,
            cols,
            row_stride,
        } => DeviceSegments::rows(rows, cols, row_stride),
        HostSegments::Columns { .. } => unreachable!("columns: tests/columns.rs"),
    };
    let ex = ScanExtras::new()
        .init(&d_init)
        .total(&mut d_total)
        .segments(segments);
    scanner
        .scan_device_with(&stream, &d_in, &mut d_out, ex)
        .map_err(|e| e.to_string())?;
    first_mismatch(&expected, &download(&stream, &d_out, &input))?;
    let got = download(&stream, &d_total, &[expected_total])[0];
    if !Op::Elem::same(got, expected_total) {
        return Err(format!("total {got:?}, expected {expected_total:?}"));
    }
    Ok(())
}

fn rules() -> Vec<Segments> {
    vec![
        Segments::Flags,
        Segments::Keys(PrimType::U8),
        Segments::Keys(PrimType::I32),
        Segments::Keys(PrimType::U64),
        Segments::Offsets(OffsetWidth::U32),
        Segments::Offsets(OffsetWidth::U64),
        Segments::Rows { strided: false },
        Segments::Rows { strided: true },
    ]
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: Vec<String>,
}

impl Tally {
    /// Counts one case: a pass, or a failure printed with its name.
    fn record(&mut self, name: String, result: Result<(), String>) {
        match result {
            Ok(()) => self.passed += 1,
            Err(why) => {
                println!("FAIL {name}: {why}");
                self.failed.push(name);
            }
        }
    }

    /// Prints the summary line and fails the test if any case failed.
    fn finish(self, label: &str) {
        println!(
            "variants ({label}): {} cases passed, {} failed",
            self.passed,
            self.failed.len()
        );
        assert!(self.failed.is_empty(), "{:?}", self.failed);
    }
}

/// Whether the cases of `group` ("label rule direction mode") run: all of them, or with
/// SCANGEN_TEST_ONLY set, those whose group contains it (to rerun one failing group alone, e.g.
/// under compute-sanitizer).
fn selected(group: &str) -> bool {
    std::env::var("SCANGEN_TEST_ONLY").map_or(true, |only| group.contains(&only))
}

/// Every rule, direction and mode of `Op` at the awkward sizes (the last `sizes_cut` left out),
/// with `policy` where given (else the defaults).
fn matrix<Op: ScanOp>(
    gpu: &Gpu,
    label: &str,
    sizes_cut: usize,
    policy: Option<TuningPolicy>,
    tally: &Mutex<Tally>,
) where
    Op::Elem: TestValue,
{
    matrix_of_rules::<Op>(gpu, label, &rules(), sizes_cut, policy, tally);
}

/// [`matrix`] over the given rules only.
fn matrix_of_rules<Op: ScanOp>(
    gpu: &Gpu,
    label: &str,
    rules: &[Segments],
    sizes_cut: usize,
    policy: Option<TuningPolicy>,
    tally: &Mutex<Tally>,
) where
    Op::Elem: TestValue,
{
    std::thread::scope(|scope| {
        for &rule in rules {
            for reverse in [false, true] {
                for mode in ScanMode::ALL {
                    let dir = if reverse { "reverse" } else { "forward" };
                    if !selected(&format!("{label} {rule} {dir} {mode}")) {
                        continue;
                    }
                    scope.spawn(move || {
                        let mut opts = ScanOptions::default().segmented(rule);
                        if let Some(policy) = policy {
                            opts = opts.policy(policy);
                        }
                        opts.mode = mode;
                        if reverse {
                            opts = opts.reverse();
                        }
                        let mut rng = Rng::new(&format!("{label} {rule} {dir} {mode}"));
                        let mut scanner = match gpu.scanner::<Op>(opts) {
                            Ok(s) => s,
                            Err(e) => {
                                let mut t = tally.lock().unwrap();
                                t.failed
                                    .push(format!("{label} {rule} {dir} {mode}: build: {e}"));
                                return;
                            }
                        };
                        let tile = scanner.tile_items() as usize;
                        let sizes = awkward_sizes(tile);
                        for (i, &n) in sizes.iter().enumerate().take(sizes.len() - sizes_cut) {
                            for kind in [i, i + 1, i + 2] {
                                let name = format!("{label} {rule} {dir} {mode} n={n} kind={kind}");
                                let r = case::<Op>(
                                    gpu,
                                    &mut scanner,
                                    rule,
                                    mode,
                                    reverse,
                                    n,
                                    kind,
                                    &mut rng,
                                );
                                tally.lock().unwrap().record(name, r);
                            }
                        }
                    });
                }
            }
        }
    });
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn segmented_scans_for_every_rule_direction_mode_and_op() {
    let gpu = gpu();
    let tally = Mutex::new(Tally::default());
    matrix::<Add<u32>>(&gpu, "add u32", 0, None, &tally);
    matrix::<Compose>(&gpu, "compose Affine", 0, None, &tally);
    matrix::<LastOfRun>(&gpu, "last_of_run Tally", 1, None, &tally);
    matrix::<MatMul>(&gpu, "matmul Mat2", 1, None, &tally);
    // Sub-word values, packed in registers (1 and 2 bytes).
    matrix::<ComposeBytes>(&gpu, "compose_bytes ByteAffine", 1, None, &tally);
    matrix::<Add<u8>>(&gpu, "add u8", 1, None, &tally);
    tally.into_inner().unwrap().finish("segmented");
}

/// Segmented tiles whose storage is past the 48 KiB of static shared memory (dynamic shared
/// memory, kernel ABI): 64-item i64 tiles with 8-byte keys staged beside them (about 130 KiB), and
/// 32-byte matrices at 32 items (about 130 KiB with their 8-byte keys), every rule, direction and
/// mode.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn segmented_scans_with_tiles_past_static_shared_memory() {
    let gpu = gpu();
    let tally = Mutex::new(Tally::default());
    let big = |items| TuningPolicy {
        min_blocks_per_sm: 1,
        ..TuningPolicy::new(128, items)
    };
    matrix::<Add<u64>>(&gpu, "add u64 128x64", 1, Some(big(64)), &tally);
    matrix::<MatMul>(&gpu, "matmul Mat2 128x32", 2, Some(big(32)), &tally);
    tally
        .into_inner()
        .unwrap()
        .finish("segmented, dynamic shared memory");
}

/// Packed (sub-word) segmented tiles in each shape the register ladder can give them
/// (`TuningPolicy::relaxed_register_cap`: the default 128 x 64, and twice the threads with half
/// the items once a spill has taken the cap to an odd number of blocks), every rule, direction
/// and mode, for a non-commutative 2-byte op and a 1-byte sum. Which shape a kernel ends up in
/// depends on how many registers ptxas gives it, so each is pinned here.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn packed_segmented_tiles_in_every_shape_of_the_register_ladder() {
    let gpu = gpu();
    let tally = Mutex::new(Tally::default());
    for (threads, items, blocks) in [(128, 64, 3), (256, 32, 3), (256, 16, 2)] {
        let policy = TuningPolicy {
            min_blocks_per_sm: blocks,
            ..TuningPolicy::new(threads, items)
        };
        let label = format!("compose_bytes ByteAffine {threads}x{items}");
        matrix::<ComposeBytes>(&gpu, &label, 1, Some(policy), &tally);
        flat_in_shape::<ComposeBytes>(&gpu, &label, policy, &tally);
        let label = format!("add u8 {threads}x{items}");
        matrix::<Add<u8>>(&gpu, &label, 1, Some(policy), &tally);
        flat_in_shape::<Add<u8>>(&gpu, &label, policy, &tally);
    }
    tally
        .into_inner()
        .unwrap()
        .finish("packed segmented, register ladder shapes");
}

/// One flat case: `n` random elements scanned with a random init (its total checked too), then
/// without one, each beside the CPU reference.
fn flat_case<Op: ScanOp>(
    scanner: &mut scan_runtime::Scanner<Op>,
    rng: &mut Rng,
    mode: ScanMode,
    reverse: bool,
    n: usize,
) -> Result<(), String>
where
    Op::Elem: TestValue,
{
    let input = random_values::<Op::Elem>(rng, n);
    let init = random_values::<Op::Elem>(rng, 1)[0];
    let mut expected = input.clone();
    let total = reference::<Op>(&input, &[(0, n)], mode, reverse, Some(init), &mut expected);
    let (got, t) = scanner
        .scan_with_init(&input, init)
        .map_err(|e| e.to_string())?;
    first_mismatch(&expected, &got)?;
    if n > 0 && !Op::Elem::same(t, total) {
        return Err(format!("total {t:?}, expected {total:?}"));
    }
    let mut plain = input.clone();
    reference::<Op>(&input, &[(0, n)], mode, reverse, None, &mut plain);
    first_mismatch(&plain, &scanner.scan(&input).map_err(|e| e.to_string())?)
}

/// Flat scans (both directions and modes, with and without init) of `Op` in the shape `policy`
/// at the awkward sizes.
fn flat_in_shape<Op: ScanOp>(gpu: &Gpu, label: &str, policy: TuningPolicy, tally: &Mutex<Tally>)
where
    Op::Elem: TestValue,
{
    for reverse in [false, true] {
        for mode in ScanMode::ALL {
            let dir = if reverse { "reverse" } else { "forward" };
            let group = format!("{label} flat {dir} {mode}");
            if !selected(&group) {
                continue;
            }
            let mut opts = ScanOptions::default().policy(policy);
            opts.mode = mode;
            if reverse {
                opts = opts.reverse();
            }
            let mut rng = Rng::new(&group);
            let mut scanner = match gpu.scanner::<Op>(opts) {
                Ok(s) => s,
                Err(e) => {
                    tally
                        .lock()
                        .unwrap()
                        .failed
                        .push(format!("{group}: build: {e}"));
                    continue;
                }
            };
            let tile = scanner.tile_items() as usize;
            for n in awkward_sizes(tile) {
                let r = flat_case(&mut scanner, &mut rng, mode, reverse, n);
                tally.lock().unwrap().record(format!("{group} n={n}"), r);
            }
        }
    }
}

/// Offsets mark a tile's heads in shared memory and each thread reads its run of them as whole
/// words: runs of 64 and 32 items are word-aligned, other lengths start anywhere in a word and
/// span up to three. Every run length class, both offset widths, every direction and mode.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn offsets_heads_for_every_run_length() {
    let gpu = gpu();
    let tally = Mutex::new(Tally::default());
    let offsets = [
        Segments::Offsets(OffsetWidth::U32),
        Segments::Offsets(OffsetWidth::U64),
    ];
    for (threads, items) in [(128, 64), (64, 48), (128, 24), (96, 7), (32, 1)] {
        let policy = TuningPolicy::new(threads, items);
        let label = format!("add u32 {threads}x{items}");
        matrix_of_rules::<Add<u32>>(&gpu, &label, &offsets, 0, Some(policy), &tally);
    }
    let policy = TuningPolicy::new(64, 48);
    matrix_of_rules::<Compose>(
        &gpu,
        "compose Affine 64x48",
        &offsets,
        1,
        Some(policy),
        &tally,
    );
    tally.into_inner().unwrap().finish("offsets, run lengths");
}

/// One flags case: `n` random elements, about one segment start in 16 (so segments cross
/// threads, warps and tiles) with flag bytes of every value (only 0 is "no start"), the flags
/// `shift` bytes into their device buffer.
fn flags_case<Op: ScanOp>(
    scanner: &mut scan_runtime::Scanner<Op>,
    stream: &std::sync::Arc<scan_runtime::cudarc::driver::CudaStream>,
    (mode, reverse): (ScanMode, bool),
    n: usize,
    shift: usize,
    rng: &mut Rng,
) -> Result<(), String>
where
    Op::Elem: TestValue,
{
    let input = random_values::<Op::Elem>(rng, n);
    let flags: Vec<u8> = (0..n)
        .map(|_| match rng.below(16) {
            0 => 1 + rng.below(255) as u8,
            _ => 0,
        })
        .collect();
    let mut starts: Vec<usize> = vec![0];
    starts.extend((1..n).filter(|&p| flags[p] != 0));
    let mut expected = input.clone();
    reference::<Op>(
        &input,
        &ranges(&starts, n),
        mode,
        reverse,
        None,
        &mut expected,
    );
    let mut padded: Vec<u8> = (0..shift).map(|_| rng.below(256) as u8).collect();
    padded.extend_from_slice(&flags);
    let d_all = upload(stream, &padded);
    let d_flags = d_all.slice(shift..shift + n);
    let d_in = upload(stream, &input);
    let mut d_out = upload(stream, &input);
    let extras = ScanExtras::new().segments(DeviceSegments::flags(&d_flags));
    scanner
        .scan_device_with(stream, &d_in, &mut d_out, extras)
        .map_err(|e| e.to_string())?;
    first_mismatch(&expected, &download(stream, &d_out, &input))
}

/// Device flags at every byte offset from a 16-byte boundary: forward full tiles read 16-byte
/// aligned flags straight from global memory as vectors and stage every other case (reverse,
/// misaligned, the partial last tile) through shared memory; both paths against the reference.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn flags_from_device_buffers_at_every_alignment() {
    fn run<Op: ScanOp>(gpu: &Gpu, label: &str, tally: &mut Tally)
    where
        Op::Elem: TestValue,
    {
        let stream = gpu.new_stream().expect("stream");
        let mut rng = Rng::new(label);
        for reverse in [false, true] {
            for mode in ScanMode::ALL {
                let mut opts = ScanOptions::default().segmented(Segments::Flags);
                opts.mode = mode;
                if reverse {
                    opts = opts.reverse();
                }
                let mut scanner = gpu.scanner::<Op>(opts).expect("build");
                let tile = scanner.tile_items() as usize;
                for n in [tile, 3 * tile + 5, 17 * tile] {
                    for shift in [0usize, 1, 2, 3, 4, 7, 8, 12, 15, 16] {
                        let name = format!("{label} reverse={reverse} {mode} n={n} shift={shift}");
                        let r =
                            flags_case(&mut scanner, &stream, (mode, reverse), n, shift, &mut rng);
                        tally.record(name, r);
                    }
                }
            }
        }
    }
    let gpu = gpu();
    let mut tally = Tally::default();
    run::<Add<u32>>(&gpu, "add u32", &mut tally);
    run::<Compose>(&gpu, "compose Affine", &mut tally);
    run::<Add<u8>>(&gpu, "add u8", &mut tally);
    tally.finish("flags alignment");
}

/// The reverse flat scan on every algorithm, with and without init/total.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn reverse_scans_on_every_algorithm() {
    let gpu = gpu();
    let mut tally = Tally::default();
    fn run<Op: ScanOp>(gpu: &Gpu, label: &str, tally: &mut Tally)
    where
        Op::Elem: TestValue,
    {
        let mut rng = Rng::new(label);
        for algorithm in Algorithm::ALL {
            for mode in ScanMode::ALL {
                let mut opts = ScanOptions::default().algorithm(algorithm).reverse();
                opts.mode = mode;
                let mut scanner = gpu.scanner::<Op>(opts).expect("build");
                let tile = scanner.tile_items() as usize;
                // Three hierarchy levels: the level of tile totals is reduced again, forward,
                // though the scan runs backwards.
                for n in awkward_sizes(tile).into_iter().chain([tile * tile + 3]) {
                    let name = format!("{label} {algorithm} {mode} n={n}");
                    tally.record(name, flat_case(&mut scanner, &mut rng, mode, true, n));
                }
            }
        }
    }
    run::<Add<u32>>(&gpu, "add u32", &mut tally);
    run::<Max<i64>>(&gpu, "max i64", &mut tally);
    run::<Compose>(&gpu, "compose Affine", &mut tally);
    run::<MatMul>(&gpu, "matmul Mat2", &mut tally);
    // 12 and 24 bytes: three 4- or 8-byte vectors per element, reversed element by element.
    run::<LastOfRun>(&gpu, "last_of_run Tally", &mut tally);
    run::<ComposeCounted>(&gpu, "compose_counted CountedAffine", &mut tally);
    // Sub-word elements: packed in registers, reversed within each word.
    run::<Add<u8>>(&gpu, "add u8", &mut tally);
    run::<Max<i16>>(&gpu, "max i16", &mut tally);
    run::<ComposeBytes>(&gpu, "compose_bytes ByteAffine", &mut tally);
    tally.finish("reverse");
}

/// One segment of 2^31 + 17 `u8`s (wrapping sums), given by offsets [0, n], and flags at the
/// same places: 64-bit positions end to end.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn a_segment_longer_than_2_pow_31() {
    let gpu = gpu();
    let n: usize = (1 << 31) + 17;
    let mut rng = Rng::new("huge");
    let input: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
    let mut expected = input.clone();
    let mut acc = 0u8;
    for x in expected.iter_mut() {
        acc = acc.wrapping_add(*x);
        *x = acc;
    }
    let mut scanner = gpu
        .scanner::<Add<u8>>(ScanOptions::default().segmented(Segments::Offsets(OffsetWidth::U64)))
        .expect("build");
    let got = scanner
        .scan_segmented(&input, HostSegments::Offsets64(&[0, n as u64]))
        .expect("scan");
    first_mismatch(&expected, &got).unwrap();
    // Two segments, the second starting past 2^31.
    let cut = (1u64 << 31) + 5;
    let got = scanner
        .scan_segmented(&input, HostSegments::Offsets64(&[0, cut, n as u64]))
        .expect("scan");
    let mut acc = 0u8;
    for (p, x) in input.iter().enumerate() {
        if p as u64 == cut {
            acc = 0;
        }
        acc = acc.wrapping_add(*x);
        assert_eq!(got[p], acc, "position {p}");
    }
    println!("variants (huge): 2 cases passed, 0 failed");
}

/// Bad segment data is a typed error before any launch.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn bad_segment_data_is_a_typed_error() {
    let gpu = gpu();
    let mut by_offsets = gpu
        .scanner::<Add<u32>>(ScanOptions::default().segmented(Segments::Offsets(OffsetWidth::U32)))
        .unwrap();
    let data = [1u32, 2, 3, 4];
    let e = by_offsets
        .scan_segmented(&data, HostSegments::Offsets32(&[0, 3, 2, 4]))
        .unwrap_err();
    assert!(matches!(e, ScanError::BadOffsets { index: 2, .. }), "{e}");
    let e = by_offsets
        .scan_segmented(&data, HostSegments::Offsets32(&[0, 5]))
        .unwrap_err();
    assert!(matches!(e, ScanError::BadOffsets { .. }), "{e}");
    let e = by_offsets
        .scan_segmented(&data, HostSegments::Flags(&[1, 0, 0, 0]))
        .unwrap_err();
    assert!(matches!(e, ScanError::SegmentsMismatch { .. }), "{e}");
    assert!(by_offsets.scan(&data).is_err());
    let mut by_keys = gpu
        .scanner::<Add<u32>>(ScanOptions::default().segmented(Segments::Keys(PrimType::U32)))
        .unwrap();
    let e = by_keys
        .scan_segmented(&data, HostSegments::keys(&[1u32, 1, 2]))
        .unwrap_err();
    assert!(matches!(e, ScanError::SegmentLength { .. }), "{e}");
    let mut rows = gpu
        .scanner::<Add<u32>>(ScanOptions::default().segmented(Segments::Rows { strided: true }))
        .unwrap();
    let e = rows
        .scan_segmented(
            &data,
            HostSegments::Rows {
                rows: 2,
                cols: 3,
                row_stride: 2,
            },
        )
        .unwrap_err();
    assert!(matches!(e, ScanError::BadRows { .. }), "{e}");
    let e = rows
        .scan_segmented(
            &data,
            HostSegments::Rows {
                rows: 2,
                cols: 2,
                row_stride: 3,
            },
        )
        .unwrap_err();
    assert!(matches!(e, ScanError::BadRows { .. }), "{e}");
    let e = gpu
        .scanner::<Add<u32>>(
            ScanOptions::default()
                .algorithm(Algorithm::Blelloch)
                .segmented(Segments::Flags),
        )
        .unwrap_err();
    assert!(e.to_string().contains("single-pass"), "{e}");
    println!("variants (errors): 8 cases passed, 0 failed");
}
