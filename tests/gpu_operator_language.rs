//! The operator language on the GPU: the lowered C of every operator of
//! `tests/operator_language/ops.rs` and of every example, run on the GPU,
//! against the Rust functions on random elements. Ignored by default (CI has no GPU); the GPU
//! bundle (scripts/build-gpu-bundle.sh) runs it in release mode, where Rust's integer
//! arithmetic wraps as the lowered C does.

#[path = "operator_language/ops.rs"]
mod ops;

#[path = "operator_language/examples.rs"]
mod examples;
use examples::*;

use scangen::laws::{check, CpuLaws, GpuLaws, LawConfig, Verdict};
use scangen::runtime::cudarc::driver::DeviceRepr;
use scangen::runtime::{auto, Gpu, ScanOptions};
use scangen::{ElementType, ScanOp};

const GPU: &str =
    "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine";

fn has_float(element: &ElementType) -> bool {
    match element {
        ElementType::Prim(p) => p.is_float(),
        ElementType::Struct(s) => s.leaves().iter().any(|l| l.ty.is_float()),
    }
}

/// `combine` and `identity` on random elements (a third of them edge values: MIN, MAX, 0,
/// NaN, ...), on the CPU (Rust) and on the GPU (the lowered C): bit for bit where the element
/// has no floats, up to rounding where it has (the GPU may fuse a multiply and an add).
fn agrees_on_gpu<Op: ScanOp>(gpu: &Gpu) -> Result<(), String> {
    let spec = Op::device_op();
    let mut cpu = CpuLaws::<Op>::new();
    let mut dev = GpuLaws::new(gpu, spec.clone());
    let report = check(
        &spec.name,
        &mut [&mut cpu, &mut dev],
        &LawConfig {
            samples: 20_000,
            seed: 19,
            ..Default::default()
        },
    )
    .map_err(|e| format!("{}: {e}", spec.name))?;
    for c in &report.cross_checks {
        match (&c.verdict, has_float(&spec.element)) {
            (Verdict::Holds, _) | (Verdict::HoldsUpToRounding { .. }, true) => {}
            (v, _) => return Err(format!("{}: CPU and GPU differ: {v}", spec.name)),
        }
    }
    println!("{}: the GPU agrees with Rust on 20000 samples", spec.name);
    Ok(())
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn lowered_operators_agree_with_rust_on_the_gpu() {
    let gpu = Gpu::new(0).expect(GPU);
    let results = [
        agrees_on_gpu::<ops::runs::Runs>(&gpu),
        agrees_on_gpu::<ops::fill::ForwardFill>(&gpu),
        agrees_on_gpu::<ops::mix::Mixer>(&gpu),
        agrees_on_gpu::<ops::bounds::Bound>(&gpu),
        agrees_on_gpu::<ops::matrix::MatMul>(&gpu),
        agrees_on_gpu::<ops::hash::Hash>(&gpu),
        // Every example operator.
        agrees_on_gpu::<argmax::ArgMax>(&gpu),
        agrees_on_gpu::<classify_runs::Runs>(&gpu),
        agrees_on_gpu::<forward_fill::FillForward>(&gpu),
        agrees_on_gpu::<linear_recurrence::Compose>(&gpu),
        agrees_on_gpu::<polynomial::Concat>(&gpu),
        agrees_on_gpu::<running_max::RunningMax>(&gpu),
        agrees_on_gpu::<segmented_sum::SegmentedSum>(&gpu),
        agrees_on_gpu::<sum::Sum>(&gpu),
        agrees_on_gpu::<vector_ops::Mat3Product>(&gpu),
        agrees_on_gpu::<vector_ops::Vec4Sum>(&gpu),
    ];
    let failed: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    println!(
        "gpu suite (operator language): {} cases passed, {} failed",
        results.len() - failed.len(),
        failed.len()
    );
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Whole scans of the associative ones, every algorithm, against the CPU backend: elements
/// without float arithmetic must match bit for bit.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn scans_of_bool_array_and_nested_elements_match_the_cpu() {
    use rand::SeedableRng;
    // A missing GPU is a failure here, not a fallback to the CPU backend.
    std::env::set_var("SCANGEN_BACKEND", "gpu");
    fn scan_matches<Op: ScanOp>(sample: fn(&mut rand::rngs::StdRng) -> Op::Elem)
    where
        Op::Elem: DeviceRepr,
    {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let input: Vec<Op::Elem> = (0..200_003).map(|_| sample(&mut rng)).collect();
        // An inclusive scan: out[0] is in[0] itself (a scan never combines the identity in,
        // and ForwardFill's identity is one only up to the value of an invalid reading).
        let mut expected: Vec<Op::Elem> = Vec::with_capacity(input.len());
        for x in &input {
            let next = match expected.last() {
                Some(&acc) => Op::combine(acc, *x),
                None => *x,
            };
            expected.push(next);
        }
        for algorithm in scangen::Algorithm::ALL {
            let mut scanner = auto::<Op>(ScanOptions::default().algorithm(algorithm)).expect(GPU);
            let got = scanner.scan(&input).expect("scan");
            let first_diff = got.iter().zip(&expected).position(|(g, e)| g != e);
            assert_eq!(
                first_diff,
                None,
                "{} ({algorithm:?}) differs from the CPU at {first_diff:?}",
                Op::device_op().name
            );
        }
    }
    scan_matches::<ops::fill::ForwardFill>(ops::fill::sample);
    scan_matches::<ops::bounds::Bound>(ops::bounds::sample);
    scan_matches::<ops::matrix::MatMul>(ops::matrix::sample);
}

/// The operator-language examples verify themselves on the GPU.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn operator_language_examples_verify_themselves_on_the_gpu() {
    std::env::set_var("SCANGEN_BACKEND", "gpu");
    forward_fill::main().expect("forward_fill");
    vector_ops::main().expect("vector_ops");
    classify_runs::main().expect("classify_runs");
}
