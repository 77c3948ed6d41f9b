//! A randomized soak of the GPU scans: a seeded RNG picks op x type among the built-in typed
//! ops, the algorithm, the mode, the entry point (host or device memory, in place or not) and
//! a size from a skewed distribution, and every result is checked against
//! `cpu::scan_sequential`. Integer cases run twice and must agree bit for bit (determinism).
//!
//! Float cases only use values every evaluation order computes exactly (min/max of anything,
//! sums of small integers, products of +-1, 2 and 1/2), so they are compared exactly too.
//!
//! Bounded by count and time: `SCANGEN_SOAK_CASES` (default 2000) and `SCANGEN_SOAK_SECONDS`
//! (default 90; the parallel kernel builds before the loop are not counted). The seed is
//! printed; `SCANGEN_SOAK_SEED=<seed>` replays a run. Each failure prints its case.
//!
//! Needs an NVIDIA GPU, so `#[ignore]`d: run with `--ignored` on a GPU machine.

mod common;

use common::{first_mismatch, gpu, opts, Build, Rng, TestValue};
use scan_core::BuiltinOp;
use scan_runtime::builtin::{Add, And, Max, Min, Mul, Or, Xor};
use scan_runtime::cpu;
use scan_runtime::cudarc::driver::{CudaSlice, CudaStream};
use scan_runtime::{Algorithm, Gpu, ScanError, ScanMode, ScanOp, ScanOptions, Scanner};
use std::collections::hash_map::Entry as Slot;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Largest input of the soak.
const MAX_N: u64 = 1 << 22;

/// Which entry point a case scans through.
#[derive(Clone, Copy, Debug)]
enum Entry {
    /// `Scanner::scan_in_place_host`.
    HostInPlace,
    /// `Scanner::scan_into` (host to host, separate output).
    HostInto,
    /// `Scanner::scan_device` with separate device buffers (the input must stay untouched).
    DeviceOutOfPlace,
    /// `Scanner::scan_device_in_place`.
    DeviceInPlace,
}

const ENTRIES: [Entry; 4] = [
    Entry::HostInPlace,
    Entry::HostInto,
    Entry::DeviceOutOfPlace,
    Entry::DeviceInPlace,
];

fn scan_via<Op: ScanOp>(
    s: &mut Scanner<Op>,
    stream: &Arc<CudaStream>,
    input: &[Op::Elem],
    entry: Entry,
) -> Result<Vec<Op::Elem>, String>
where
    Op::Elem: TestValue,
{
    let scan_err = |e: ScanError| e.to_string();
    match entry {
        Entry::HostInPlace => {
            let mut data = input.to_vec();
            s.scan_in_place_host(&mut data).map_err(scan_err)?;
            Ok(data)
        }
        Entry::HostInto => {
            let mut out = vec![Op::identity(); input.len()];
            s.scan_into(input, &mut out).map_err(scan_err)?;
            Ok(out)
        }
        // No zero-length device buffers: the host paths cover n = 0.
        _ if input.is_empty() => s.scan(input).map_err(scan_err),
        Entry::DeviceOutOfPlace => {
            let d_in = stream
                .clone_htod(input)
                .map_err(|e| format!("upload: {e}"))?;
            let mut d_out: CudaSlice<Op::Elem> =
                unsafe { stream.alloc(input.len()) }.map_err(|e| format!("alloc: {e}"))?;
            s.scan_device(stream, &d_in, &mut d_out).map_err(scan_err)?;
            let got = stream
                .clone_dtoh(&d_out)
                .map_err(|e| format!("download: {e}"))?;
            stream
                .synchronize()
                .map_err(|e| format!("synchronize: {e}"))?;
            if input.len() <= 1 << 20 {
                let after = stream
                    .clone_dtoh(&d_in)
                    .map_err(|e| format!("download: {e}"))?;
                stream
                    .synchronize()
                    .map_err(|e| format!("synchronize: {e}"))?;
                if after != input {
                    return Err("out-of-place scan modified its input".into());
                }
            }
            Ok(got)
        }
        Entry::DeviceInPlace => {
            let mut d = stream
                .clone_htod(input)
                .map_err(|e| format!("upload: {e}"))?;
            s.scan_device_in_place(stream, &mut d).map_err(scan_err)?;
            let got = stream
                .clone_dtoh(&d)
                .map_err(|e| format!("download: {e}"))?;
            stream
                .synchronize()
                .map_err(|e| format!("synchronize: {e}"))?;
            Ok(got)
        }
    }
}

/// Runs one case of a built scanner: random input of `n` elements through `entry`.
type Runner = Box<dyn FnMut(&mut Rng, u64, Entry) -> Result<(), String>>;

/// A scanner for `Op` with `o` and the closure that runs cases on it; also its tile.
fn runner<Op: ScanOp>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    op: BuiltinOp,
    o: ScanOptions,
) -> Result<(Runner, u64), ScanError>
where
    Op::Elem: TestValue,
{
    let mut scanner = gpu.scanner::<Op>(o)?;
    let tile = scanner.tile_items();
    let stream = stream.clone();
    let mode = o.mode;
    let run = move |rng: &mut Rng, n: u64, entry: Entry| -> Result<(), String> {
        let input: Vec<Op::Elem> = (0..n).map(|_| Op::Elem::random(rng, op)).collect();
        let mut expected = vec![Op::identity(); input.len()];
        cpu::scan_sequential::<Op>(&input, &mut expected, mode);
        let got = scan_via(&mut scanner, &stream, &input, entry)?;
        first_mismatch(&expected, &got)?;
        if <Op::Elem as TestValue>::INTEGER {
            let again = scan_via(&mut scanner, &stream, &input, entry)?;
            first_mismatch(&got, &again)
                .map_err(|e| format!("not deterministic: the second run differs: {e}"))?;
        }
        Ok(())
    };
    Ok((Box::new(run), tile))
}

/// Builds the scanner and scans one element, so that its kernels (the small-input variant
/// included) are compiled and loaded before the timed loop.
fn prebuild<Op: ScanOp>(gpu: &Gpu, o: ScanOptions) -> Result<(), ScanError>
where
    Op::Elem: TestValue,
{
    let mut s = gpu.scanner::<Op>(o)?;
    s.scan(&[Op::identity()]).map(drop)
}

type MakeRunner =
    fn(&Gpu, &Arc<CudaStream>, BuiltinOp, ScanOptions) -> Result<(Runner, u64), ScanError>;

struct Case {
    label: &'static str,
    op: BuiltinOp,
    prebuild: Build,
    runner: MakeRunner,
}

macro_rules! cases {
    ($($op:ident: [$($t:ty),*];)*) => {
        vec![$($(Case {
            label: concat!(stringify!($op), " ", stringify!($t)),
            op: $op::<$t>::OP,
            prebuild: prebuild::<$op<$t>>,
            runner: runner::<$op<$t>>,
        },)*)*]
    };
}

fn builtin_cases() -> Vec<Case> {
    cases! {
        Add: [i8, i16, i32, i64, u8, u16, u32, u64, f32, f64];
        Mul: [i8, i16, i32, i64, u8, u16, u32, u64, f32, f64];
        Min: [i8, i16, i32, i64, u8, u16, u32, u64, f32, f64];
        Max: [i8, i16, i32, i64, u8, u16, u32, u64, f32, f64];
        And: [i8, i16, i32, i64, u8, u16, u32, u64];
        Or: [i8, i16, i32, i64, u8, u16, u32, u64];
        Xor: [i8, i16, i32, i64, u8, u16, u32, u64];
    }
}

fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    let mut d = 2;
    while d * d <= n {
        if n.is_multiple_of(d) {
            return false;
        }
        d += 1;
    }
    true
}

/// The largest prime <= `n` (n >= 2).
fn prime_at_most(mut n: u64) -> u64 {
    while !is_prime(n) {
        n -= 1;
    }
    n
}

/// In [1, MAX_N], about uniform in log scale.
fn log_uniform(rng: &mut Rng) -> u64 {
    let low = 1u64 << rng.below(22);
    (low + rng.below(low)).min(MAX_N)
}

/// A size in 0..=MAX_N, skewed towards the edges: tiny sizes around warp and block bounds,
/// whole tiles and tile +-1, primes, then log-uniform and uniform sizes.
fn pick_size(rng: &mut Rng, tile: u64) -> u64 {
    const SMALL: [u64; 19] = [
        0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025,
    ];
    match rng.below(100) {
        0..=14 => SMALL[rng.below(SMALL.len() as u64) as usize],
        15..=39 => {
            let tiles = match rng.below(4) {
                0 => 1,
                1 => 2 + rng.below(3),
                2 => 1 + rng.below(200),
                _ => 1 + rng.below((MAX_N / tile).max(1)),
            };
            (tiles * tile + rng.below(3)).saturating_sub(1).min(MAX_N)
        }
        40..=49 => prime_at_most(log_uniform(rng).max(2)),
        50..=74 => log_uniform(rng),
        _ => rng.below(MAX_N + 1),
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => {
            let v = v.trim();
            let parsed = match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
        }
        Err(_) => default,
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn randomized_soak() {
    let gpu = gpu("soak");
    let seconds = env_u64("SCANGEN_SOAK_SECONDS", 90);
    let max_cases = env_u64("SCANGEN_SOAK_CASES", 2000);
    let seed = env_u64(
        "SCANGEN_SOAK_SEED",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ u64::from(std::process::id()),
    );
    println!(
        "soak: seed {seed:#x} (replay with SCANGEN_SOAK_SEED={seed:#x}), up to {max_cases} cases \
         or {seconds} s"
    );
    let cases = builtin_cases();
    assert_eq!(cases.len(), 7 * 8 + 4 * 2);

    let builds: Vec<(&str, Build)> = cases.iter().map(|c| (c.label, c.prebuild)).collect();
    let mut failures = common::build_in_parallel(&gpu, &builds, "soak: ");
    for f in &failures {
        println!("FAIL {f}");
    }
    let stream = gpu.new_stream().expect("stream");
    let mut runners: HashMap<(usize, Algorithm, ScanMode), (Runner, u64)> = HashMap::new();
    let mut rng = Rng::from_seed(seed);
    let budget = Duration::from_secs(seconds);
    let started = Instant::now();
    let (mut passed, mut run) = (0u64, 0u64);
    while run < max_cases && started.elapsed() < budget && failures.len() < 10 {
        let index = rng.below(cases.len() as u64) as usize;
        let case = &cases[index];
        let algorithm = Algorithm::ALL[rng.below(Algorithm::ALL.len() as u64) as usize];
        let mode = ScanMode::ALL[rng.below(ScanMode::ALL.len() as u64) as usize];
        let entry = ENTRIES[rng.below(ENTRIES.len() as u64) as usize];
        // Each case's data comes from its own seed, printed with a failure.
        let case_seed = rng.next();
        let key = (index, algorithm, mode);
        let (runner, tile) = match runners.entry(key) {
            Slot::Occupied(built) => built.into_mut(),
            Slot::Vacant(slot) => {
                match (case.runner)(&gpu, &stream, case.op, opts(algorithm, mode)) {
                    Ok(built) => slot.insert(built),
                    Err(e) => {
                        let what = format!(
                            "{} {algorithm} {mode}: building the scanner failed: {e}",
                            case.label
                        );
                        println!("FAIL {what}");
                        failures.push(what);
                        run += 1;
                        continue;
                    }
                }
            }
        };
        let n = pick_size(&mut rng, *tile);
        let what = format!(
            "case {run}: {} {algorithm} {mode} n={n} {entry:?} (tile {tile}, case seed {case_seed:#x})",
            case.label
        );
        match runner(&mut Rng::from_seed(case_seed), n, entry) {
            Ok(()) => passed += 1,
            Err(why) => {
                let what = format!("{what}: {why}");
                println!("FAIL {what}");
                failures.push(what);
            }
        }
        run += 1;
        if run % 500 == 0 {
            println!(
                "soak: {run} cases, {} failed, {:.1} s",
                failures.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    if failures.len() >= 10 {
        println!("soak: stopped after {} failures", failures.len());
    }
    println!(
        "gpu suite (soak): {passed} cases passed, {} failed ({:.1} s, seed {seed:#x}, {} scanners)",
        failures.len(),
        started.elapsed().as_secs_f64(),
        runners.len()
    );
    assert!(
        failures.is_empty(),
        "{} soak cases failed (seed {seed:#x}); first: {}",
        failures.len(),
        failures[0]
    );
}

/// The size distribution itself (no GPU): in range, and it hits the edges the soak is for.
#[test]
fn soak_sizes_cover_the_edges() {
    let tile = 4096;
    let mut rng = Rng::from_seed(7);
    let sizes: std::collections::HashSet<u64> =
        (0..100_000).map(|_| pick_size(&mut rng, tile)).collect();
    assert!(sizes.iter().all(|&n| n <= MAX_N));
    for n in [0, 1, 31, 32, 33, tile - 1, tile, tile + 1, 2 * tile + 1] {
        assert!(sizes.contains(&n), "size {n} never drawn");
    }
    assert!(sizes.iter().any(|&n| n > 100_000 && is_prime(n)));
    assert!(sizes.iter().any(|&n| n > MAX_N / 2));
    assert_eq!(prime_at_most(MAX_N), 4_194_301);
}
