//! The CPU backend: a sequential scan (also the reference the GPU is tested against) and a
//! rayon parallel scan.
//!
//! Both combine in sequence order, `combine(earlier, later)`, like the GPU kernels, so they are
//! correct for non-commutative operators.
//!
//! # The parallel scan
//! It is the three-phase scheme (reduce chunks, scan the chunk totals, scan each chunk from its
//! seed), run chunk by chunk so that it reads memory once, like the GPU's single-pass kernel:
//! - The input is cut into chunks small enough to stay in a core's L2 cache (256 KiB).
//!   The reduce phase pulls a chunk into cache; the scan phase then re-reads it from cache, not
//!   from DRAM. A textbook three-phase scan over whole per-thread halves reads the input from
//!   DRAM twice, and on two cores that second read cost all the second core gained.
//! - Workers claim chunks in order from an atomic counter (dynamic chunk IDs). A worker waits
//!   only for the inclusive prefix of the chunk before its own, which an earlier claimant is
//!   already computing, so the chain always progresses, however few pool threads actually run.
//! - Inside a chunk both phases run four (`LANES`) independent dependency chains over contiguous
//!   quarters, interleaved. A scan is one long chain of combines; a float add has a latency of
//!   several cycles, so one chain leaves the core mostly idle.

use crate::error::ScanError;
use crate::options::{CpuThreads, ScanOptions};
use scan_codegen::ScanMode;
use scan_core::ScanOp;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Bytes of input per chunk: a quarter of a core's L2 on current x86 and Arm server parts, so the
/// chunk is still cached when the scan phase reads it again (and its output fits beside it).
const CHUNK_BYTES: usize = 256 << 10;

/// Independent combine chains inside a chunk.
const LANES: usize = 4;

/// Below this many elements, starting threads costs more than it saves.
const MIN_PARALLEL_LEN: usize = 1 << 15;

/// Scans `input` into `output` on this thread.
///
/// # Panics
/// If `input` and `output` differ in length.
pub fn scan_sequential<Op: ScanOp>(input: &[Op::Elem], output: &mut [Op::Elem], mode: ScanMode) {
    assert_same_len(input.len(), output.len());
    scan_seeded::<Op>(input, output, Op::identity(), mode);
}

/// Scans `data` in place on this thread.
pub fn scan_sequential_in_place<Op: ScanOp>(data: &mut [Op::Elem], mode: ScanMode) {
    scan_seeded_in_place::<Op>(data, Op::identity(), mode);
}

/// Scans `input` into `output` on the rayon pool (see the module docs): about 2n combines and one
/// pass over memory; sequential for small inputs.
///
/// # Panics
/// If `input` and `output` differ in length.
pub fn scan_parallel<Op: ScanOp>(input: &[Op::Elem], output: &mut [Op::Elem], mode: ScanMode) {
    assert_same_len(input.len(), output.len());
    let plan = ChunkPlan::new::<Op::Elem>(input.len(), MIN_PARALLEL_LEN, CHUNK_BYTES);
    scan_chained::<Op>(Chunks::Separate(input, output), Op::identity(), mode, plan);
}

/// Scans `data` in place on the rayon pool (see [`scan_parallel`]).
pub fn scan_parallel_in_place<Op: ScanOp>(data: &mut [Op::Elem], mode: ScanMode) {
    let plan = ChunkPlan::new::<Op::Elem>(data.len(), MIN_PARALLEL_LEN, CHUNK_BYTES);
    scan_chained::<Op>(Chunks::InPlace(data), Op::identity(), mode, plan);
}

/// [`scan_parallel`] after an initial value: `output[i]` is `init ⊕ input[0] ⊕ … ⊕ input[i]`
/// (inclusive) or `init ⊕ input[0] ⊕ … ⊕ input[i-1]` (exclusive). Returns the total,
/// `init ⊕ input[0] ⊕ … ⊕ input[n-1]` (`init` when empty).
///
/// # Panics
/// If `input` and `output` differ in length.
pub fn scan_parallel_with_init<Op: ScanOp>(
    input: &[Op::Elem],
    output: &mut [Op::Elem],
    init: Op::Elem,
    mode: ScanMode,
) -> Op::Elem {
    assert_same_len(input.len(), output.len());
    let plan = ChunkPlan::new::<Op::Elem>(input.len(), MIN_PARALLEL_LEN, CHUNK_BYTES);
    scan_chained::<Op>(Chunks::Separate(input, output), init, mode, plan)
}

/// [`scan_parallel_with_init`] on this thread: the reference the GPU's seeded scans are tested
/// against.
///
/// # Panics
/// If `input` and `output` differ in length.
pub fn scan_sequential_with_init<Op: ScanOp>(
    input: &[Op::Elem],
    output: &mut [Op::Elem],
    init: Op::Elem,
    mode: ScanMode,
) -> Op::Elem {
    assert_same_len(input.len(), output.len());
    scan_seeded::<Op>(input, output, init, mode)
}

fn assert_same_len(input: usize, output: usize) {
    assert_eq!(
        input, output,
        "scan input has {input} elements but output has {output}"
    );
}

/// How a parallel scan cuts its input.
#[derive(Clone, Copy, Debug)]
struct ChunkPlan {
    /// Elements per chunk (the last may be shorter).
    chunk_len: usize,
    /// Threads to use; 1 means scan sequentially.
    workers: usize,
}

impl ChunkPlan {
    fn new<T>(n: usize, min_parallel_len: usize, chunk_bytes: usize) -> ChunkPlan {
        let chunk_len = (chunk_bytes / std::mem::size_of::<T>().max(1)).max(LANES);
        let chunks = n.div_ceil(chunk_len);
        let workers = if n < min_parallel_len {
            1
        } else {
            rayon::current_num_threads().min(chunks)
        };
        ChunkPlan { chunk_len, workers }
    }
}

/// The data of a parallel scan: separate input and output, or one buffer scanned in place.
enum Chunks<'a, T> {
    Separate(&'a [T], &'a mut [T]),
    InPlace(&'a mut [T]),
}

/// One chunk, claimed by exactly one worker.
enum Chunk<'a, T> {
    Separate(&'a [T], &'a mut [T]),
    InPlace(&'a mut [T]),
}

impl<T> Chunk<'_, T> {
    fn input(&self) -> &[T] {
        match self {
            Chunk::Separate(input, _) => input,
            Chunk::InPlace(data) => data,
        }
    }
}

/// Scans `data` after `seed` (the identity, or the caller's initial value); returns the total,
/// `seed` combined with every element.
fn scan_chained<Op: ScanOp>(
    data: Chunks<'_, Op::Elem>,
    seed: Op::Elem,
    mode: ScanMode,
    plan: ChunkPlan,
) -> Op::Elem {
    if plan.workers <= 1 {
        return match data {
            Chunks::Separate(input, output) => scan_seeded::<Op>(input, output, seed, mode),
            Chunks::InPlace(data) => scan_seeded_in_place::<Op>(data, seed, mode),
        };
    }
    let first_seed = seed;
    // Each chunk sits behind an uncontended mutex: the worker that claims index k is the only
    // one that ever locks it, and this keeps the hand-out of `&mut` chunks free of `unsafe`.
    let chunks: Vec<Mutex<Chunk<'_, Op::Elem>>> = match data {
        Chunks::Separate(input, output) => input
            .chunks(plan.chunk_len)
            .zip(output.chunks_mut(plan.chunk_len))
            .map(|(i, o)| Mutex::new(Chunk::Separate(i, o)))
            .collect(),
        Chunks::InPlace(data) => data
            .chunks_mut(plan.chunk_len)
            .map(|c| Mutex::new(Chunk::InPlace(c)))
            .collect(),
    };
    // `inclusive[k]`: everything up to and including chunk k, published once by its claimant.
    let inclusive: Vec<OnceLock<Op::Elem>> = (0..chunks.len()).map(|_| OnceLock::new()).collect();
    let next_chunk = AtomicUsize::new(0);
    let worker = || loop {
        let k = next_chunk.fetch_add(1, Ordering::Relaxed);
        let Some(slot) = chunks.get(k) else { break };
        let mut chunk = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let lane_totals = reduce_lanes::<Op>(chunk.input());
        let total = lane_totals
            .iter()
            .fold(Op::identity(), |acc, &t| Op::combine(acc, t));
        let seed = match k.checked_sub(1) {
            Some(prev) => *wait_for(&inclusive[prev]),
            None => first_seed,
        };
        // Publish before scanning, so the next chunk's worker waits for a reduce, not a scan.
        let _ = inclusive[k].set(Op::combine(seed, total));
        scan_lanes::<Op>(&mut chunk, seed, &lane_totals, mode);
    };
    rayon::scope(|s| {
        for _ in 1..plan.workers {
            s.spawn(|_| worker());
        }
        worker();
    });
    inclusive
        .last()
        .and_then(|total| total.get().copied())
        .unwrap_or(first_seed)
}

/// Waits until another worker publishes `cell`: spins briefly (the usual wait is one chunk's
/// reduce), then yields so an oversubscribed machine can run the thread being waited for.
fn wait_for<T>(cell: &OnceLock<T>) -> &T {
    let mut spins = 0u32;
    loop {
        if let Some(value) = cell.get() {
            return value;
        }
        if spins < 1 << 12 {
            spins += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// A chunk split into [`LANES`] equal contiguous lanes plus a short tail (`len % LANES`).
fn split_lanes<T>(chunk: &[T]) -> ([&[T]; LANES], &[T]) {
    let q = chunk.len() / LANES;
    let (l0, rest) = chunk.split_at(q);
    let (l1, rest) = rest.split_at(q);
    let (l2, rest) = rest.split_at(q);
    let (l3, tail) = rest.split_at(q);
    ([l0, l1, l2, l3], tail)
}

/// [`split_lanes`] of a mutable chunk.
fn split_lanes_mut<T>(chunk: &mut [T]) -> ([&mut [T]; LANES], &mut [T]) {
    let q = chunk.len() / LANES;
    let (l0, rest) = chunk.split_at_mut(q);
    let (l1, rest) = rest.split_at_mut(q);
    let (l2, rest) = rest.split_at_mut(q);
    let (l3, tail) = rest.split_at_mut(q);
    ([l0, l1, l2, l3], tail)
}

/// Totals of the [`LANES`] lanes and the tail, in order: the lanes' folds run interleaved, as
/// independent dependency chains.
fn reduce_lanes<Op: ScanOp>(chunk: &[Op::Elem]) -> [Op::Elem; LANES + 1] {
    let ([l0, l1, l2, l3], tail) = split_lanes(chunk);
    let id = Op::identity();
    let mut acc = [id; LANES + 1];
    for (((&a, &b), &c), &d) in l0.iter().zip(l1).zip(l2).zip(l3) {
        acc[0] = Op::combine(acc[0], a);
        acc[1] = Op::combine(acc[1], b);
        acc[2] = Op::combine(acc[2], c);
        acc[3] = Op::combine(acc[3], d);
    }
    acc[LANES] = tail.iter().fold(id, |t, &x| Op::combine(t, x));
    acc
}

/// Scans a chunk from `seed`, each lane (and the tail) seeded with the totals of what precedes it.
fn scan_lanes<Op: ScanOp>(
    chunk: &mut Chunk<'_, Op::Elem>,
    seed: Op::Elem,
    lane_totals: &[Op::Elem; LANES + 1],
    mode: ScanMode,
) {
    let mut seeds = [seed; LANES + 1];
    for l in 1..=LANES {
        seeds[l] = Op::combine(seeds[l - 1], lane_totals[l - 1]);
    }
    match (chunk, mode) {
        (Chunk::Separate(i, o), ScanMode::Inclusive) => {
            scan_lanes_separate::<Op, true>(i, o, seeds)
        }
        (Chunk::Separate(i, o), ScanMode::Exclusive) => {
            scan_lanes_separate::<Op, false>(i, o, seeds)
        }
        (Chunk::InPlace(d), ScanMode::Inclusive) => scan_lanes_in_place::<Op, true>(d, seeds),
        (Chunk::InPlace(d), ScanMode::Exclusive) => scan_lanes_in_place::<Op, false>(d, seeds),
    }
}

/// One step of a running scan: returns what to store and advances `acc`.
#[inline(always)]
fn step<Op: ScanOp, const INCLUSIVE: bool>(acc: &mut Op::Elem, x: Op::Elem) -> Op::Elem {
    let before = *acc;
    *acc = Op::combine(before, x);
    if INCLUSIVE {
        *acc
    } else {
        before
    }
}

fn scan_lanes_separate<Op: ScanOp, const INCLUSIVE: bool>(
    input: &[Op::Elem],
    output: &mut [Op::Elem],
    seeds: [Op::Elem; LANES + 1],
) {
    let ([i0, i1, i2, i3], i_tail) = split_lanes(input);
    let ([o0, o1, o2, o3], o_tail) = split_lanes_mut(output);
    let [mut a0, mut a1, mut a2, mut a3, tail_seed] = seeds;
    let lanes = (i0.iter().zip(i1).zip(i2).zip(i3)).zip(
        o0.iter_mut()
            .zip(o1.iter_mut())
            .zip(o2.iter_mut())
            .zip(o3.iter_mut()),
    );
    for ((((&x0, &x1), &x2), &x3), (((y0, y1), y2), y3)) in lanes {
        *y0 = step::<Op, INCLUSIVE>(&mut a0, x0);
        *y1 = step::<Op, INCLUSIVE>(&mut a1, x1);
        *y2 = step::<Op, INCLUSIVE>(&mut a2, x2);
        *y3 = step::<Op, INCLUSIVE>(&mut a3, x3);
    }
    let mut acc = tail_seed;
    for (y, &x) in o_tail.iter_mut().zip(i_tail) {
        *y = step::<Op, INCLUSIVE>(&mut acc, x);
    }
}

fn scan_lanes_in_place<Op: ScanOp, const INCLUSIVE: bool>(
    data: &mut [Op::Elem],
    seeds: [Op::Elem; LANES + 1],
) {
    let ([d0, d1, d2, d3], tail) = split_lanes_mut(data);
    let [mut a0, mut a1, mut a2, mut a3, tail_seed] = seeds;
    let lanes = d0
        .iter_mut()
        .zip(d1.iter_mut())
        .zip(d2.iter_mut())
        .zip(d3.iter_mut());
    for (((x0, x1), x2), x3) in lanes {
        *x0 = step::<Op, INCLUSIVE>(&mut a0, *x0);
        *x1 = step::<Op, INCLUSIVE>(&mut a1, *x1);
        *x2 = step::<Op, INCLUSIVE>(&mut a2, *x2);
        *x3 = step::<Op, INCLUSIVE>(&mut a3, *x3);
    }
    let mut acc = tail_seed;
    for x in tail.iter_mut() {
        *x = step::<Op, INCLUSIVE>(&mut acc, *x);
    }
}

fn scan_seeded<Op: ScanOp>(
    input: &[Op::Elem],
    output: &mut [Op::Elem],
    seed: Op::Elem,
    mode: ScanMode,
) -> Op::Elem {
    let mut acc = seed;
    match mode {
        ScanMode::Inclusive => {
            for (o, &x) in output.iter_mut().zip(input) {
                acc = Op::combine(acc, x);
                *o = acc;
            }
        }
        ScanMode::Exclusive => {
            for (o, &x) in output.iter_mut().zip(input) {
                *o = acc;
                acc = Op::combine(acc, x);
            }
        }
    }
    acc
}

fn scan_seeded_in_place<Op: ScanOp>(
    data: &mut [Op::Elem],
    seed: Op::Elem,
    mode: ScanMode,
) -> Op::Elem {
    let mut acc = seed;
    match mode {
        ScanMode::Inclusive => {
            for x in data.iter_mut() {
                acc = Op::combine(acc, *x);
                *x = acc;
            }
        }
        ScanMode::Exclusive => {
            for x in data.iter_mut() {
                let next = Op::combine(acc, *x);
                *x = acc;
                acc = next;
            }
        }
    }
    acc
}

/// [`scan_parallel`] with an explicit plan, for tests that need many tiny chunks.
#[cfg(test)]
fn scan_parallel_planned<Op: ScanOp>(
    data: Chunks<'_, Op::Elem>,
    seed: Op::Elem,
    mode: ScanMode,
    chunk_len: usize,
    workers: usize,
) -> Op::Elem {
    scan_chained::<Op>(
        data,
        seed,
        mode,
        ChunkPlan {
            chunk_len: chunk_len.max(1),
            workers,
        },
    )
}

/// A CPU scanner with the same interface as the GPU [`crate::Scanner`]. Where it runs is
/// [`ScanOptions::cpu`]: rayon's global pool (the default), the calling thread, or a pool of
/// its own.
pub struct CpuScanner<Op: ScanOp> {
    mode: ScanMode,
    variant: scan_codegen::ScanVariant,
    runner: Runner,
    /// Why the CPU is used, when it stands in for a GPU ("no CUDA driver found").
    reason: Option<String>,
    _op: PhantomData<fn() -> Op>,
}

/// Where a [`CpuScanner`] runs its scans.
#[derive(Debug)]
enum Runner {
    Global,
    Sequential,
    Pool(Arc<rayon::ThreadPool>),
}

impl<Op: ScanOp> std::fmt::Debug for CpuScanner<Op> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuScanner")
            .field("mode", &self.mode)
            .field("runner", &self.runner)
            .field("reason", &self.reason)
            .finish()
    }
}

impl<Op: ScanOp> CpuScanner<Op> {
    /// A scanner for `opts.mode` on `opts.cpu` (the algorithm and policy only concern the
    /// GPU). A pool of its own ([`CpuThreads::Pool`]) is started here; if the system refuses
    /// the threads, the scanner uses rayon's global pool and warns.
    pub fn new(opts: ScanOptions) -> CpuScanner<Op> {
        let runner = match opts.cpu {
            CpuThreads::Global => Runner::Global,
            CpuThreads::Sequential | CpuThreads::Pool(0 | 1) => Runner::Sequential,
            CpuThreads::Pool(threads) => match rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("scangen-cpu-{i}"))
                .build()
            {
                Ok(pool) => Runner::Pool(Arc::new(pool)),
                Err(err) => {
                    tracing::warn!(
                        threads,
                        %err,
                        "could not start a CPU scan pool; using rayon's global pool"
                    );
                    Runner::Global
                }
            },
        };
        CpuScanner {
            mode: opts.mode,
            variant: opts.variant,
            runner,
            reason: None,
            _op: PhantomData,
        }
    }

    /// A scanner that records why it stands in for a GPU.
    pub fn fallback(opts: ScanOptions, reason: impl Into<String>) -> CpuScanner<Op> {
        CpuScanner {
            reason: Some(reason.into()),
            ..CpuScanner::new(opts)
        }
    }

    /// Inclusive or exclusive.
    pub fn mode(&self) -> ScanMode {
        self.mode
    }

    /// Why the CPU is used in place of a GPU, if it is.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// `"cpu: rayon, 16 threads"` (`"cpu: rayon, 4 threads (own pool)"`, `"cpu: sequential"`),
    /// plus the fallback reason in parentheses.
    pub fn backend_name(&self) -> String {
        let base = match &self.runner {
            Runner::Global => format!("cpu: rayon, {} threads", rayon::current_num_threads()),
            Runner::Sequential => "cpu: sequential".to_string(),
            Runner::Pool(pool) => {
                format!(
                    "cpu: rayon, {} threads (own pool)",
                    pool.current_num_threads()
                )
            }
        };
        match &self.reason {
            Some(why) => format!("{base} ({why})"),
            None => base,
        }
    }

    /// Scans `input` into a new vector.
    pub fn scan(&mut self, input: &[Op::Elem]) -> Result<Vec<Op::Elem>, ScanError> {
        let mut out = input.to_vec();
        self.scan_in_place(&mut out)?;
        Ok(out)
    }

    /// Scans `input` into `output` (of the same length).
    pub fn scan_into(
        &mut self,
        input: &[Op::Elem],
        output: &mut [Op::Elem],
    ) -> Result<(), ScanError> {
        ScanError::check_lengths(input.len(), output.len())?;
        output.copy_from_slice(input);
        self.scan_in_place(output)
    }

    /// Scans `data` in place.
    pub fn scan_in_place(&mut self, data: &mut [Op::Elem]) -> Result<(), ScanError> {
        self.check_unsegmented()?;
        if self.variant.direction == scan_codegen::Direction::Reverse {
            // A suffix scan is the scan of the reversed sequence.
            data.reverse();
            self.run_in_place(data);
            data.reverse();
        } else {
            self.run_in_place(data);
        }
        Ok(())
    }

    /// Scans segment by segment (the rule of `ScanOptions::segmented`), as the GPU scanner's
    /// `scan_segmented` does.
    pub fn scan_segmented(
        &mut self,
        input: &[Op::Elem],
        segments: crate::HostSegments<'_>,
    ) -> Result<Vec<Op::Elem>, ScanError> {
        ScanError::check_rule(self.variant.segments, segments.rule())?;
        let mut out = input.to_vec();
        crate::cpu_variant::scan_variant_in_place::<Op>(
            &mut out,
            self.mode,
            self.variant.direction,
            Some(segments),
            None,
        )?;
        Ok(out)
    }

    /// The forward scan of `data` in place, on the configured threads.
    fn run_in_place(&self, data: &mut [Op::Elem]) {
        let mode = self.mode;
        match &self.runner {
            Runner::Sequential => scan_sequential_in_place::<Op>(data, mode),
            Runner::Global => scan_parallel_in_place::<Op>(data, mode),
            Runner::Pool(pool) => pool.install(|| scan_parallel_in_place::<Op>(data, mode)),
        }
    }

    fn check_unsegmented(&self) -> Result<(), ScanError> {
        ScanError::check_rule(self.variant.segments, scan_codegen::Segments::None)
    }

    /// Scans after the initial value `init`; returns the scan and its total, as the GPU
    /// scanner's `scan_with_init` does.
    pub fn scan_with_init(
        &mut self,
        input: &[Op::Elem],
        init: Op::Elem,
    ) -> Result<(Vec<Op::Elem>, Op::Elem), ScanError> {
        self.check_unsegmented()?;
        let mut out = input.to_vec();
        if self.variant.direction == scan_codegen::Direction::Reverse {
            let total = crate::cpu_variant::scan_variant_in_place::<Op>(
                &mut out,
                self.mode,
                self.variant.direction,
                None,
                Some(init),
            )?;
            return Ok((out, total));
        }
        let mode = self.mode;
        let total = {
            let out = &mut out;
            match &self.runner {
                Runner::Sequential => scan_sequential_with_init::<Op>(input, out, init, mode),
                Runner::Global => scan_parallel_with_init::<Op>(input, out, init, mode),
                Runner::Pool(pool) => {
                    pool.install(|| scan_parallel_with_init::<Op>(input, out, init, mode))
                }
            }
        };
        Ok((out, total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_core::builtin::{Add, And, Max, Min, Mul, Or, Xor};
    use scan_core::{ElementType, OpSpec, PrimType, ScanElement, StructDecl, StructField};

    const SIZES: &[usize] = &[0, 1, 2, 31, 32, 33, 97, 1000, 997, 65537, (1 << 20) + 7];

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            // splitmix64
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    /// Random non-zero test values. Floats are small integers, so every summation order gives
    /// the same exact result and parallel can be compared bit for bit with sequential.
    trait TestValue: Copy {
        fn random(rng: &mut Rng) -> Self;
    }
    macro_rules! int_value {
        ($($t:ty),*) => {$(impl TestValue for $t {
            fn random(rng: &mut Rng) -> Self { (rng.next() as $t) | 1 }
        })*};
    }
    int_value!(i8, i16, i32, i64, u8, u16, u32, u64);
    impl TestValue for f32 {
        fn random(rng: &mut Rng) -> Self {
            // -8..=8 without 0.
            let v = (rng.next() % 16) as i32 - 8;
            (if v >= 0 { v + 1 } else { v }) as f32
        }
    }
    impl TestValue for f64 {
        fn random(rng: &mut Rng) -> Self {
            f32::random(rng) as f64
        }
    }

    /// The obvious definition: out[i] combines input[..=i] (or input[..i]) from the identity.
    fn naive<Op: ScanOp>(input: &[Op::Elem], mode: ScanMode) -> Vec<Op::Elem> {
        if input.len() > 2000 {
            // Quadratic beyond this; fall back to a running fold written independently.
            let mut out = Vec::with_capacity(input.len());
            let mut acc = Op::identity();
            for &x in input {
                if mode == ScanMode::Exclusive {
                    out.push(acc);
                }
                acc = Op::combine(acc, x);
                if mode == ScanMode::Inclusive {
                    out.push(acc);
                }
            }
            return out;
        }
        (0..input.len())
            .map(|i| {
                let end = if mode == ScanMode::Inclusive {
                    i + 1
                } else {
                    i
                };
                input[..end]
                    .iter()
                    .fold(Op::identity(), |a, &x| Op::combine(a, x))
            })
            .collect()
    }

    /// Scans after an initial value, on every plan, against a fold that starts from it; the
    /// returned total too.
    fn check_with_init<Op: ScanOp>(name: &str, input: &[Op::Elem], mode: ScanMode, init: Op::Elem)
    where
        Op::Elem: TestValue,
    {
        let mut acc = init;
        let mut expected = Vec::with_capacity(input.len());
        for &x in input {
            let next = Op::combine(acc, x);
            expected.push(if mode == ScanMode::Inclusive {
                next
            } else {
                acc
            });
            acc = next;
        }
        let n = input.len();
        let mut seq = vec![Op::identity(); n];
        let total = scan_sequential_with_init::<Op>(input, &mut seq, init, mode);
        assert_eq!(
            (seq, total),
            (expected.clone(), acc),
            "{name} with init, sequential n={n}"
        );
        for (chunk_len, workers) in [(usize::MAX, 0), (3, 2), (97, 3)] {
            if chunk_len < 97 && n > 100_000 {
                continue;
            }
            let mut par = vec![Op::identity(); n];
            let total = if chunk_len == usize::MAX {
                scan_parallel_with_init::<Op>(input, &mut par, init, mode)
            } else {
                let sep = Chunks::Separate(input, &mut par);
                scan_parallel_planned::<Op>(sep, init, mode, chunk_len, workers)
            };
            assert_eq!(
                (par, total),
                (expected.clone(), acc),
                "{name} with init, parallel n={n} {mode} chunk_len={chunk_len}"
            );
        }
    }

    fn check<Op: ScanOp>(name: &str)
    where
        Op::Elem: TestValue,
    {
        let mut rng = Rng(0x5eed ^ name.len() as u64);
        for &n in SIZES {
            let input: Vec<Op::Elem> = (0..n).map(|_| Op::Elem::random(&mut rng)).collect();
            for mode in ScanMode::ALL {
                let expected = naive::<Op>(&input, mode);
                if mode == ScanMode::Exclusive && n > 0 {
                    assert_eq!(expected[0], Op::identity());
                }
                let mut seq = vec![Op::identity(); n];
                scan_sequential::<Op>(&input, &mut seq, mode);
                assert_eq!(seq, expected, "{name} sequential n={n} {mode}");
                // Default plan, then many tiny chunks (tails, empty lanes, long chains) with
                // more workers than the pool has threads.
                let plans = [(usize::MAX, 0), (1, 3), (3, 2), (7, 4), (97, 3), (4096, 2)];
                for (chunk_len, workers) in plans {
                    if chunk_len < 97 && n > 100_000 {
                        continue; // a million one-element hand-offs prove nothing more
                    }
                    let mut par = vec![Op::identity(); n];
                    let mut in_place = input.clone();
                    if chunk_len == usize::MAX {
                        scan_parallel::<Op>(&input, &mut par, mode);
                        scan_parallel_in_place::<Op>(&mut in_place, mode);
                    } else {
                        let sep = Chunks::Separate(&input, &mut par);
                        scan_parallel_planned::<Op>(sep, Op::identity(), mode, chunk_len, workers);
                        let inp = Chunks::InPlace(&mut in_place);
                        scan_parallel_planned::<Op>(inp, Op::identity(), mode, chunk_len, workers);
                    }
                    assert_eq!(
                        par, expected,
                        "{name} parallel n={n} {mode} chunk_len={chunk_len} workers={workers}"
                    );
                    assert_eq!(
                        in_place, expected,
                        "{name} parallel in place n={n} {mode} chunk_len={chunk_len}"
                    );
                }
                // The seed only changes the first chunk's start and the total: small sizes with
                // many chunks show it as well as a million elements would.
                if n <= 65_537 {
                    check_with_init::<Op>(name, &input, mode, Op::Elem::random(&mut rng));
                }
                let mut seq_in_place = input.clone();
                scan_sequential_in_place::<Op>(&mut seq_in_place, mode);
                assert_eq!(
                    seq_in_place, expected,
                    "{name} sequential in place n={n} {mode}"
                );
            }
        }
    }

    #[test]
    fn builtin_integer_ops() {
        check::<Add<i32>>("add i32");
        check::<Add<u8>>("add u8");
        check::<Mul<u64>>("mul u64");
        check::<Mul<i16>>("mul i16");
        check::<Min<i64>>("min i64");
        check::<Max<u16>>("max u16");
        check::<And<u32>>("and u32");
        check::<Or<i8>>("or i8");
        check::<Xor<u64>>("xor u64");
    }

    #[test]
    fn builtin_float_ops() {
        check::<Add<f32>>("add f32");
        check::<Add<f64>>("add f64");
        check::<Min<f32>>("min f32");
        check::<Max<f64>>("max f64");
    }

    /// 2x2 matrices over wrapping u32, multiplied in sequence order: not commutative.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Mat2 {
        m: [u32; 4],
    }

    // SAFETY: repr(C), four u32s, every bit pattern valid.
    unsafe impl ScanElement for Mat2 {
        fn element_type() -> ElementType {
            let f = |n: &str| StructField {
                name: n.into(),
                ty: PrimType::U32.into(),
            };
            ElementType::Struct(StructDecl::new(
                "Mat2",
                vec![f("a"), f("b"), f("c"), f("d")],
            ))
        }
    }

    impl TestValue for Mat2 {
        fn random(rng: &mut Rng) -> Self {
            Mat2 {
                m: [
                    rng.next() as u32,
                    rng.next() as u32,
                    rng.next() as u32,
                    rng.next() as u32,
                ],
            }
        }
    }

    struct MatMul;
    impl ScanOp for MatMul {
        type Elem = Mat2;
        fn identity() -> Mat2 {
            Mat2 { m: [1, 0, 0, 1] }
        }
        fn combine(x: Mat2, y: Mat2) -> Mat2 {
            let [a, b, c, d] = x.m;
            let [e, f, g, h] = y.m;
            let mul_add =
                |p: u32, q: u32, r: u32, s: u32| p.wrapping_mul(q).wrapping_add(r.wrapping_mul(s));
            Mat2 {
                m: [
                    mul_add(a, e, b, g),
                    mul_add(a, f, b, h),
                    mul_add(c, e, d, g),
                    mul_add(c, f, d, h),
                ],
            }
        }
        fn device_op() -> OpSpec {
            unreachable!("CPU only")
        }
    }

    #[test]
    fn non_commutative_op_keeps_order() {
        let x = Mat2 { m: [1, 2, 3, 4] };
        let y = Mat2 { m: [0, 1, 1, 0] };
        assert_ne!(MatMul::combine(x, y), MatMul::combine(y, x));
        check::<MatMul>("matmul");
    }

    #[test]
    fn cpu_scanner_interface() {
        let opts = ScanOptions::default().exclusive();
        let mut s = CpuScanner::<Add<u32>>::fallback(opts, "no CUDA driver found");
        assert!(
            s.backend_name().starts_with("cpu: rayon, "),
            "{}",
            s.backend_name()
        );
        assert!(
            s.backend_name().ends_with("threads (no CUDA driver found)"),
            "{}",
            s.backend_name()
        );
        assert_eq!(s.scan(&[1, 2, 3]).unwrap(), vec![0, 1, 3]);
        assert!(s.scan(&[]).unwrap().is_empty());
        let mut out = [0; 2];
        match s.scan_into(&[1, 2, 3], &mut out) {
            Err(ScanError::LengthMismatch {
                input: 3,
                output: 2,
            }) => {}
            other => panic!("{other:?}"),
        }
        let mut data = [5, 5, 5];
        s.scan_in_place(&mut data).unwrap();
        assert_eq!(data, [0, 5, 10]);
    }

    #[test]
    fn cpu_threads_choose_where_the_scan_runs() {
        // Large enough to be cut into chunks and run in parallel on a pool.
        let input: Vec<u64> = (0..(MIN_PARALLEL_LEN as u64 * 4 + 13)).collect();
        let mut expected = vec![0; input.len()];
        scan_sequential::<Add<u64>>(&input, &mut expected, ScanMode::Inclusive);
        let cases = [
            (ScanOptions::default(), "cpu: rayon, "),
            (ScanOptions::default().cpu_sequential(), "cpu: sequential"),
            (ScanOptions::default().cpu_threads(1), "cpu: sequential"),
            (
                ScanOptions::default().cpu_threads(3),
                "cpu: rayon, 3 threads (own pool)",
            ),
            (
                ScanOptions::default().cpu(CpuThreads::Pool(2)),
                "cpu: rayon, 2 threads (own pool)",
            ),
        ];
        for (opts, name) in cases {
            let mut s = CpuScanner::<Add<u64>>::new(opts);
            assert!(s.backend_name().starts_with(name), "{}", s.backend_name());
            assert_eq!(s.scan(&input).unwrap(), expected, "{name}");
            let mut out = vec![0; input.len()];
            s.scan_into(&input, &mut out).unwrap();
            assert_eq!(out, expected, "{name}");
            let (seeded, total) = s.scan_with_init(&input, 7).unwrap();
            assert_eq!(seeded[0], 7);
            assert_eq!(total, 7 + expected.last().unwrap(), "{name}");
        }
        assert_eq!(
            ScanOptions::default().cpu_threads(0).cpu,
            CpuThreads::Global
        );
    }
}
