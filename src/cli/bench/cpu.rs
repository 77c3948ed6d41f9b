//! CPU backend timing: sequential against the rayon parallel scan (three-phase over chained
//! chunks), beside a host memcpy of the same bytes. Wall-clock medians; the machine's other load
//! shows up as noise.

use super::report::{median, BenchRow};
use super::sample::Sample;
use super::{BenchArgs, Progress};
use crate::cli::typed_ops::with_op;
use scangen::runtime::cpu;
use scangen::{ScanMode, ScanOp};
use std::time::Instant;

pub fn run(
    args: &BenchArgs,
    sizes: &[u64],
) -> Result<(String, Vec<BenchRow>), Box<dyn std::error::Error>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let device = format!("CPU, {threads} hardware threads");
    let mode = if args.exclusive {
        ScanMode::Exclusive
    } else {
        ScanMode::Inclusive
    };
    let pairs = crate::cli::struct_ops::op_type_pairs(&args.op, &args.ty);
    let mut progress = Progress::new(pairs.len() * sizes.len());
    let mut rows = Vec::new();
    for (op, ty) in &pairs {
        let found = with_op!(op.as_str(), ty.as_str(), O => {
            bench_op::<O>(args, sizes, mode, op, ty, &mut progress, &mut rows);
            true
        }, false);
        if !found {
            eprintln!("skipping {op} on {ty}: no such operator");
        }
    }
    Ok((device, rows))
}

fn bench_op<O: ScanOp>(
    args: &BenchArgs,
    sizes: &[u64],
    mode: ScanMode,
    op: &str,
    ty: &str,
    progress: &mut Progress,
    rows: &mut Vec<BenchRow>,
) where
    O::Elem: Sample + Sync + Send,
{
    let elem = std::mem::size_of::<O::Elem>();
    for &n in sizes {
        progress.step(&format!("cpu {op} {ty} n={n}"));
        if n == 0 || 2 * n * elem as u64 > (args.max_gib * (1u64 << 30) as f64) as u64 {
            continue;
        }
        let input: Vec<O::Elem> = (0..n).map(O::Elem::sample).collect();
        let mut output = input.clone();
        let reps = args.reps.clamp(1, 11);
        let mut copy = Vec::new();
        let mut seq = Vec::new();
        let mut par = Vec::new();
        for _ in 0..args.warmup.min(1) {
            cpu::scan_parallel::<O>(&input, &mut output, mode);
        }
        for _ in 0..reps {
            let t = Instant::now();
            output.copy_from_slice(&input);
            copy.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            cpu::scan_sequential::<O>(&input, &mut output, mode);
            seq.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            cpu::scan_parallel::<O>(&input, &mut output, mode);
            par.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let copy_ms = median(&mut copy);
        for (name, times) in [("cpu-sequential", &mut seq), ("cpu-rayon", &mut par)] {
            rows.push(BenchRow {
                algorithm: name.into(),
                op: op.into(),
                ty: ty.into(),
                mode: mode.name().into(),
                n,
                elem_bytes: elem,
                scan_ms: median(times),
                copy_ms,
            });
        }
    }
}
