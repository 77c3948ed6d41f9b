//! `scangen bench --file ops.rs --op X`: a user's operator timed beside a copy of the same
//! bytes. The operator runs on the CPU evaluator of its lowered IR (`--backend cpu`): the GPU
//! runtime scans typed elements only, and an operator known only at run time has no type, so
//! timing its generated kernel waits for a byte-level scanner in the runtime.

use super::report::{median, BenchRow};
use super::{BackendArg, BenchArgs, Progress};
use crate::cli::op_source::OpSource;
use scangen::laws::{sampler::Rng, BitPatterns, ElementSampler};
use std::time::Instant;

pub fn run(
    args: &BenchArgs,
    sizes: &[u64],
) -> Result<(String, Vec<BenchRow>), Box<dyn std::error::Error>> {
    if args.backend == BackendArg::Gpu {
        return Err(
            "bench --file times the operator on the CPU evaluator: add --backend cpu (the GPU \
             runtime has no scanner for an operator known only at run time yet)"
                .into(),
        );
    }
    let [op] = args.op.as_slice() else {
        return Err("bench --file takes one operator: --op NAME".into());
    };
    let source = OpSource {
        op: op.clone(),
        ty: String::new(),
        file: args.file.clone(),
    };
    let eval = source.evaluator()?;
    let element = eval.element().clone();
    let size = element.size();
    let mut sampler = BitPatterns::new(element.clone());
    let mut rng = Rng::new(0x5eed);
    let mut progress = Progress::new(sizes.len());
    let mut rows = Vec::new();
    for &n in sizes {
        progress.step(&format!("cpu evaluator {op} n={n}"));
        let bytes = n.saturating_mul(size as u64);
        if n == 0 || 2 * bytes > (args.max_gib * (1u64 << 30) as f64) as u64 {
            continue;
        }
        let mut input = Vec::with_capacity(bytes as usize);
        for _ in 0..n {
            input.extend(sampler.sample(&mut rng));
        }
        let mut output = input.clone();
        // The evaluator walks the IR: a few million elements a second, so few repetitions.
        let reps = args.reps.clamp(1, 3);
        let (mut copy, mut scan) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            let t = Instant::now();
            output.copy_from_slice(&input);
            copy.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            eval.scan(&input, &mut output, args.exclusive, 0, &mut |_| {})?;
            scan.push(t.elapsed().as_secs_f64() * 1e3);
        }
        rows.push(BenchRow {
            algorithm: "cpu-evaluator".into(),
            op: op.clone(),
            ty: element.c_name().to_string(),
            mode: if args.exclusive {
                "exclusive"
            } else {
                "inclusive"
            }
            .into(),
            n,
            elem_bytes: size,
            scan_ms: median(&mut scan),
            copy_ms: median(&mut copy),
        });
    }
    Ok((
        "CPU, the evaluator of the operator's IR (one thread)".into(),
        rows,
    ))
}
