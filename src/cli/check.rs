//! `scangen check`: the law checker on a built-in operator or one from a Rust file.

use super::op_source::OpSource;
use super::typed_ops::with_op;
use super::CliResult;
use clap::Args;
use scangen::laws::{
    check, check_with, CpuLaws, EvalLaws, GpuLaws, LawConfig, LawEvaluator, LiftedInputs, Tolerance,
};
use scangen::runtime::Gpu;
use scangen::ScanOp;

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub source: OpSource,
    /// Random sample triples (a third of each field's values are edge values).
    #[arg(long, default_value_t = LawConfig::default().samples)]
    pub samples: usize,
    /// Seed of the sampler.
    #[arg(long, default_value_t = LawConfig::default().seed)]
    pub seed: u64,
    /// Check on the CPU only, even when a GPU is present.
    #[arg(long)]
    pub cpu_only: bool,
    /// Largest float error still counted as rounding: relative to the computation's scale
    /// (`1e-5`) or in ulps of the narrowest float field (`64ulps`). Default 1024ulps.
    #[arg(long, value_name = "TOL")]
    pub tolerance: Option<Tolerance>,
}

pub fn run(args: CheckArgs) -> CliResult {
    let config = LawConfig {
        samples: args.samples,
        seed: args.seed,
        tolerance: args.tolerance.unwrap_or_default(),
    };
    let spec = args.source.resolve()?;
    let gpu = if args.cpu_only {
        None
    } else {
        match Gpu::new(0) {
            Ok(gpu) => Some(gpu),
            Err(e) if e.is_unavailable() => {
                eprintln!("note: no GPU ({e}); checking on the CPU only");
                None
            }
            Err(e) => return Err(e.into()),
        }
    };
    let mut gpu_laws = gpu.as_ref().map(|g| GpuLaws::new(g, spec.clone()));

    let report = if args.source.file.is_some() {
        // The Rust of an operator in a file is never compiled: the evaluator of its lowered IR
        // runs it on the CPU, and the generated CUDA on the GPU when there is one.
        let op = args.source.evaluator()?;
        let mut cpu = EvalLaws::new(&op);
        let mut evaluators: Vec<&mut dyn LawEvaluator> = vec![&mut cpu];
        if let Some(gpu) = gpu_laws.as_mut() {
            evaluators.push(gpu);
        }
        if op.has_lift() {
            // An operator with a lift only ever combines folds of lifted inputs: check it on
            // those (its elements' other bit patterns are never met).
            let inputs = LiftedInputs::new(&op)?;
            let mut sampler = inputs.folds(8);
            check_with(&spec.name, &mut evaluators, &config, &mut sampler)?
        } else {
            check(&spec.name, &mut evaluators, &config)?
        }
    } else {
        let op = spec.name.clone();
        let ty = args.source.ty.clone();
        with_op!(op.as_str(), ty.as_str(), O => run_builtin::<O>(&op, gpu_laws.as_mut(), &config)?, unreachable!("resolved above"))
    };
    println!("{report}");
    if report.passed() {
        Ok(())
    } else {
        Err(format!("`{}` is not a valid scan operator", spec.name).into())
    }
}

fn run_builtin<O: ScanOp>(
    op: &str,
    gpu: Option<&mut GpuLaws>,
    config: &LawConfig,
) -> Result<scangen::laws::LawReport, Box<dyn std::error::Error>> {
    let mut cpu = CpuLaws::<O>::new();
    let mut evaluators: Vec<&mut dyn LawEvaluator> = vec![&mut cpu];
    if let Some(gpu) = gpu {
        evaluators.push(gpu);
    }
    check(op, &mut evaluators, config)
}
