//! The CPU backend: a sequential scan (also the reference the GPU is tested against) and a
//! rayon three-phase parallel scan.
//!
//! Both combine in sequence order, `combine(earlier, later)`, like the GPU kernels, so they are
//! correct for non-commutative operators.

use crate::error::ScanError;
use crate::options::ScanOptions;
use rayon::prelude::*;
use scan_codegen::ScanMode;
use scan_core::ScanOp;
use std::marker::PhantomData;

/// Below this many elements per thread, splitting costs more than it saves.
const MIN_CHUNK: usize = 1 << 14;

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

/// Scans `input` into `output` on the rayon pool: (1) reduce chunks in parallel, (2) scan the
/// chunk totals sequentially into chunk prefixes, (3) scan chunks in parallel, each seeded with
/// its prefix. About 2n combines; sequential for small inputs.
///
/// # Panics
/// If `input` and `output` differ in length.
pub fn scan_parallel<Op: ScanOp>(input: &[Op::Elem], output: &mut [Op::Elem], mode: ScanMode) {
    scan_parallel_chunked::<Op>(input, output, mode, MIN_CHUNK);
}

/// Scans `data` in place on the rayon pool (see [`scan_parallel`]).
pub fn scan_parallel_in_place<Op: ScanOp>(data: &mut [Op::Elem], mode: ScanMode) {
    scan_parallel_in_place_chunked::<Op>(data, mode, MIN_CHUNK);
}

fn assert_same_len(input: usize, output: usize) {
    assert_eq!(
        input, output,
        "scan input has {input} elements but output has {output}"
    );
}

/// Chunk length for `n` elements: a few chunks per thread (so an unlucky slow thread costs
/// little), none shorter than `min_chunk`. `None`: scan sequentially.
fn chunk_len(n: usize, min_chunk: usize) -> Option<usize> {
    let threads = rayon::current_num_threads();
    let chunks = (threads * 4).min(n / min_chunk.max(1));
    (threads > 1 && chunks > 1).then(|| n.div_ceil(chunks))
}

fn reduce<Op: ScanOp>(chunk: &[Op::Elem]) -> Op::Elem {
    chunk
        .iter()
        .fold(Op::identity(), |acc, &x| Op::combine(acc, x))
}

/// Exclusive prefixes of the chunk totals: the seed of each chunk.
fn chunk_seeds<Op: ScanOp>(totals: Vec<Op::Elem>) -> Vec<Op::Elem> {
    let mut acc = Op::identity();
    totals
        .into_iter()
        .map(|t| {
            let seed = acc;
            acc = Op::combine(acc, t);
            seed
        })
        .collect()
}

fn scan_seeded<Op: ScanOp>(
    input: &[Op::Elem],
    output: &mut [Op::Elem],
    seed: Op::Elem,
    mode: ScanMode,
) {
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
}

fn scan_seeded_in_place<Op: ScanOp>(data: &mut [Op::Elem], seed: Op::Elem, mode: ScanMode) {
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
}

fn scan_parallel_chunked<Op: ScanOp>(
    input: &[Op::Elem],
    output: &mut [Op::Elem],
    mode: ScanMode,
    min_chunk: usize,
) {
    assert_same_len(input.len(), output.len());
    let Some(len) = chunk_len(input.len(), min_chunk) else {
        return scan_seeded::<Op>(input, output, Op::identity(), mode);
    };
    let totals: Vec<_> = input.par_chunks(len).map(reduce::<Op>).collect();
    let seeds = chunk_seeds::<Op>(totals);
    input
        .par_chunks(len)
        .zip(output.par_chunks_mut(len))
        .zip(seeds)
        .for_each(|((i, o), seed)| scan_seeded::<Op>(i, o, seed, mode));
}

fn scan_parallel_in_place_chunked<Op: ScanOp>(
    data: &mut [Op::Elem],
    mode: ScanMode,
    min_chunk: usize,
) {
    let Some(len) = chunk_len(data.len(), min_chunk) else {
        return scan_seeded_in_place::<Op>(data, Op::identity(), mode);
    };
    let totals: Vec<_> = data.par_chunks(len).map(reduce::<Op>).collect();
    let seeds = chunk_seeds::<Op>(totals);
    data.par_chunks_mut(len)
        .zip(seeds)
        .for_each(|(chunk, seed)| scan_seeded_in_place::<Op>(chunk, seed, mode));
}

/// A CPU scanner with the same interface as the GPU [`crate::Scanner`].
pub struct CpuScanner<Op: ScanOp> {
    mode: ScanMode,
    /// Why the CPU is used, when it stands in for a GPU ("no CUDA driver found").
    reason: Option<String>,
    _op: PhantomData<fn() -> Op>,
}

impl<Op: ScanOp> std::fmt::Debug for CpuScanner<Op> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuScanner")
            .field("mode", &self.mode)
            .field("reason", &self.reason)
            .finish()
    }
}

impl<Op: ScanOp> CpuScanner<Op> {
    /// A scanner for `opts.mode` (the algorithm and policy only concern the GPU).
    pub fn new(opts: ScanOptions) -> CpuScanner<Op> {
        CpuScanner {
            mode: opts.mode,
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

    pub fn mode(&self) -> ScanMode {
        self.mode
    }

    /// Why the CPU is used in place of a GPU, if it is.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// `"cpu: rayon, 16 threads"`, plus the fallback reason in parentheses.
    pub fn backend_name(&self) -> String {
        let base = format!("cpu: rayon, {} threads", rayon::current_num_threads());
        match &self.reason {
            Some(why) => format!("{base} ({why})"),
            None => base,
        }
    }

    pub fn scan(&mut self, input: &[Op::Elem]) -> Result<Vec<Op::Elem>, ScanError> {
        let mut out = input.to_vec();
        scan_parallel_in_place::<Op>(&mut out, self.mode);
        Ok(out)
    }

    pub fn scan_into(
        &mut self,
        input: &[Op::Elem],
        output: &mut [Op::Elem],
    ) -> Result<(), ScanError> {
        if input.len() != output.len() {
            return Err(ScanError::LengthMismatch {
                input: input.len() as u64,
                output: output.len() as u64,
            });
        }
        scan_parallel::<Op>(input, output, self.mode);
        Ok(())
    }

    pub fn scan_in_place(&mut self, data: &mut [Op::Elem]) -> Result<(), ScanError> {
        scan_parallel_in_place::<Op>(data, self.mode);
        Ok(())
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
                for min_chunk in [MIN_CHUNK, 1, 7] {
                    let mut par = vec![Op::identity(); n];
                    scan_parallel_chunked::<Op>(&input, &mut par, mode, min_chunk);
                    assert_eq!(
                        par, expected,
                        "{name} parallel n={n} {mode} min_chunk={min_chunk}"
                    );
                    let mut in_place = input.clone();
                    scan_parallel_in_place_chunked::<Op>(&mut in_place, mode, min_chunk);
                    assert_eq!(in_place, expected, "{name} parallel in place n={n} {mode}");
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
                ty: PrimType::U32,
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
}
