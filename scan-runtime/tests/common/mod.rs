//! Harness pieces shared by the runtime's integration tests: the GPU or a clear failure, NVRTC
//! or a loud skip, a seeded RNG, exact test values, building many scanners in parallel.

// Each test crate uses a different subset.
#![allow(dead_code)]

pub mod ops;
pub mod segments;

use scan_core::{BuiltinOp, ElementType, PrimType, ScanElement, StructDecl, StructField};
use scan_runtime::cudarc::driver::DeviceRepr;
use scan_runtime::{Algorithm, Gpu, ScanError, ScanMode, ScanOptions};
use std::fmt::Debug;

/// The GPU, or a failure that says what is missing.
pub fn gpu(suite: &str) -> Gpu {
    let gpu = Gpu::new(0).unwrap_or_else(|e| {
        panic!("the {suite} tests were asked to run (--ignored) but no GPU is usable: {e}")
    });
    if let Err(e) = scan_runtime::compile::nvrtc_available() {
        panic!(
            "the {suite} tests were asked to run (--ignored) but kernels cannot be compiled: {e}"
        );
    }
    println!(
        "{suite} on {} with {} SMs",
        gpu.backend_name(),
        gpu.sm_count()
    );
    gpu
}

/// Whether NVRTC tests can run here; without NVRTC they skip, loudly, unless
/// `SCANGEN_REQUIRE_NVRTC=1` makes a missing NVRTC a failure.
pub fn nvrtc_or_skip(test: &str) -> bool {
    if scan_runtime::compile::nvrtc_available().is_ok() {
        return true;
    }
    if std::env::var("SCANGEN_REQUIRE_NVRTC").as_deref() == Ok("1") {
        panic!("{test}: SCANGEN_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded (run `. scripts/cuda-tools.sh`)");
    }
    eprintln!(
        "skipping {test}: libnvrtc not found (run `. scripts/cuda-tools.sh` to test compilation)"
    );
    false
}

/// A `#[repr(C)]` struct element named `name` whose `fields` all have type `ty`, in order.
pub fn uniform_struct(name: &str, ty: PrimType, fields: &[&str]) -> ElementType {
    let fields = fields
        .iter()
        .map(|&field| StructField {
            name: field.into(),
            ty: ty.into(),
        })
        .collect();
    ElementType::Struct(StructDecl::new(name, fields))
}

pub fn opts(algorithm: Algorithm, mode: ScanMode) -> ScanOptions {
    ScanOptions::default().algorithm(algorithm).mode(mode)
}

/// Deterministic splitmix64, so a failure reproduces.
pub struct Rng(pub u64);
impl Rng {
    pub fn new(seed: &str) -> Rng {
        Rng(seed.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        }))
    }
    pub fn from_seed(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// How a test element is generated for an op and compared.
pub trait TestValue: ScanElement + DeviceRepr + Debug {
    /// Whether results are exact in any evaluation order (integers), so that two runs of the
    /// same scan must agree bit for bit.
    const INTEGER: bool;
    /// A random value, never zero, chosen so `op` stays interesting over long inputs and, for
    /// floats, is computed exactly in every order (so results can be compared bit for bit):
    /// add: small integers (every partial sum of < 2^24 magnitude is exact); mul: +-1 and
    /// rarely 2 or 1/2 (products of powers of two are exact while in range); min/max: uniform.
    fn random(rng: &mut Rng, op: BuiltinOp) -> Self;
    fn same(a: Self, b: Self) -> bool {
        a == b
    }
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl TestValue for $t {
            const INTEGER: bool = true;
            fn random(rng: &mut Rng, op: BuiltinOp) -> Self {
                let bits = <$t>::BITS as u64;
                let r = rng.next();
                let v = match op {
                    // Odd factors keep wrapping products odd, so never stuck at zero.
                    BuiltinOp::Mul => (r | 1) as $t,
                    // Mostly ones: `and` clears one random bit per element.
                    BuiltinOp::And => !((1 as $t) << (r % bits)),
                    // One random bit per element.
                    BuiltinOp::Or => (1 as $t) << (r % bits),
                    _ => r as $t,
                };
                if v == 0 { 1 } else { v }
            }
        }
    )*};
}
int_value!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_value {
    ($($t:ty),*) => {$(
        impl TestValue for $t {
            const INTEGER: bool = false;
            fn random(rng: &mut Rng, op: BuiltinOp) -> Self {
                match op {
                    BuiltinOp::Add => {
                        let v = (rng.next() % 16) as i32 - 8;
                        (if v >= 0 { v + 1 } else { v }) as $t
                    }
                    BuiltinOp::Mul => match rng.next() % 8192 {
                        0 => 2.0,
                        1 => 0.5,
                        r if r % 2 == 0 => 1.0,
                        _ => -1.0,
                    },
                    _ => {
                        let v = rng.unit() as $t;
                        if v == 0.0 { 0.25 } else { v }
                    }
                }
            }
            fn same(a: Self, b: Self) -> bool {
                a == b || (a.is_nan() && b.is_nan())
            }
        }
    )*};
}
float_value!(f32, f64);

macro_rules! half_value {
    ($($t:ty),*) => {$(
        impl TestValue for $t {
            const INTEGER: bool = false;
            /// add: small integers (but sums of them leave the exact range of a 2-byte float
            /// soon: use `walk_steps` for long exact sums); min/max: uniform in [-1, 1), never
            /// zero (ties of -0.0 and +0.0, which show the combine order, are gpu_suite's
            /// `half_ties`).
            fn random(rng: &mut Rng, op: BuiltinOp) -> Self {
                match op {
                    BuiltinOp::Add => <$t>::from_f32((rng.below(16) as f32 - 8.0).max(1.0)),
                    _ => {
                        let v = <$t>::from_f32(rng.unit() as f32);
                        if v == <$t>::ZERO { <$t>::from_f32(0.25) } else { v }
                    }
                }
            }
            /// Bit for bit (NaNs aside): min and max keep the first of -0.0 and +0.0, so a
            /// zero's sign says whether the operands were combined in order.
            fn same(a: Self, b: Self) -> bool {
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
            }
        }
    )*};
}
half_value!(scan_core::half::f16, scan_core::half::bf16);

/// Inputs whose sums are exact in every order, even in a 2-byte float: the steps
/// `w[i] - w[i-1]` of a random walk `w` of small integers (|w| <= 8, never repeating, so no step
/// is zero). Any contiguous run of steps sums to `w[b] - w[a-1]`, an integer of magnitude at
/// most 16, which f16 and bf16 hold exactly: no combine of a scan in any order rounds, so every
/// backend must match the sequential reference bit for bit, and the inclusive scan is `w`.
pub fn walk_steps(rng: &mut Rng, n: usize) -> Vec<f32> {
    let mut prev = 0i64;
    (0..n)
        .map(|_| {
            let mut w = rng.below(17) as i64 - 8;
            if w == prev {
                w = if w == 8 { -8 } else { w + 1 };
            }
            let step = w - prev;
            prev = w;
            step as f32
        })
        .collect()
}

/// The lengths a scanner of `tile` items per tile is checked at: empty, one, around a warp,
/// around a tile, a prime, past 2^16, and many tiles with a partial one.
pub fn awkward_sizes(tile: usize) -> [usize; 11] {
    [
        0,
        1,
        31,
        32,
        33,
        tile - 1,
        tile,
        tile + 1,
        997,
        65_537,
        40 * tile + 3,
    ]
}

pub fn first_mismatch<T: TestValue>(expected: &[T], got: &[T]) -> Result<(), String> {
    if expected.len() != got.len() {
        return Err(format!(
            "length {} instead of {}",
            got.len(),
            expected.len()
        ));
    }
    match expected.iter().zip(got).position(|(&e, &g)| !T::same(e, g)) {
        None => Ok(()),
        Some(i) => {
            let count = expected
                .iter()
                .zip(got)
                .filter(|(&e, &g)| !T::same(e, g))
                .count();
            // SCANGEN_TEST_MISMATCHES=N lists the first N mismatches (with the values around
            // them), for finding a pattern in a failure seen only on the GPU machine.
            let listed: usize = std::env::var("SCANGEN_TEST_MISMATCHES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let mut list = String::new();
            let mismatches = (0..expected.len()).filter(|&k| !T::same(expected[k], got[k]));
            for k in mismatches.take(listed) {
                list.push_str(&format!(
                    "\n  [{k}] expected {:?}, got {:?}",
                    expected[k], got[k]
                ));
            }
            Err(format!(
                "first mismatch at index {i}: expected {:?}, got {:?} ({count} mismatches){list}",
                expected[i], got[i]
            ))
        }
    }
}

/// Builds a scanner for some operator with the given options (and may run it), so that its
/// kernels are compiled and loaded.
pub type Build = fn(&Gpu, ScanOptions) -> Result<(), ScanError>;

/// Runs every `(label, build)` for every algorithm and mode on all cores first (NVRTC is
/// thread-safe; the scanners a test builds afterwards hit the module cache), so a suite is not
/// bound by one compile at a time. Prints `{log_prefix}built N scanners ...`; returns the
/// failures, one line each.
pub fn build_in_parallel(gpu: &Gpu, builds: &[(&str, Build)], log_prefix: &str) -> Vec<String> {
    let jobs: Vec<(String, Build, ScanOptions)> = builds
        .iter()
        .flat_map(|&(label, build)| {
            Algorithm::ALL.into_iter().flat_map(move |a| {
                ScanMode::ALL
                    .into_iter()
                    .map(move |m| (format!("{label} {a} {m}"), build, opts(a, m)))
            })
        })
        .collect();
    let started = std::time::Instant::now();
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((label, build, opts)) = jobs.get(i) else {
                    break;
                };
                if let Err(e) = build(gpu, *opts) {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("{label}: building the scanner failed: {e}"));
                }
            });
        }
    });
    println!(
        "{log_prefix}built {} scanners in {:.1} s on {threads} threads",
        jobs.len(),
        started.elapsed().as_secs_f64()
    );
    failures.into_inner().unwrap()
}

/// `n` random test values (the add flavour of `TestValue::random`).
pub fn random_values<T: TestValue>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::random(rng, BuiltinOp::Add)).collect()
}

/// A device copy of `host` (a null buffer for an empty one).
pub fn upload<T: DeviceRepr>(
    stream: &std::sync::Arc<scan_runtime::cudarc::driver::CudaStream>,
    host: &[T],
) -> scan_runtime::cudarc::driver::CudaSlice<T> {
    if host.is_empty() {
        return stream.null::<T>().expect("empty buffer");
    }
    stream.clone_htod(host).expect("upload")
}

/// `device` copied to the host (shaped like `like`), after the stream has finished.
pub fn download<T: DeviceRepr + Clone>(
    stream: &std::sync::Arc<scan_runtime::cudarc::driver::CudaStream>,
    device: &scan_runtime::cudarc::driver::CudaSlice<T>,
    like: &[T],
) -> Vec<T> {
    let mut host = like.to_vec();
    if !host.is_empty() {
        stream.memcpy_dtoh(device, &mut host).expect("download");
    }
    stream.synchronize().expect("scan finished");
    host
}
