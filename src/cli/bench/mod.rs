//! `scangen bench`: throughput of generated scans against a device-to-device copy of the same
//! bytes, timed in the same run with CUDA events (median after warm-up). `--backend cpu` times
//! the CPU backend (sequential against rayon) against a host memcpy instead.

mod cold_start;
mod cpu;
mod element_sizes;
mod file_op;
pub(crate) mod gpu;
mod graph;
pub(crate) mod hold;
mod plot;
pub(crate) mod report;
pub(crate) mod sample;
mod variants;

use super::CliResult;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use scan_codegen::Algorithm;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    Gpu,
    Cpu,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Algorithms to time (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "single-pass,kogge-stone,blelloch"
    )]
    pub algo: Vec<String>,
    /// Operators: built-ins (add, max, ...) and `affine` (the {a, b} f32 composition).
    #[arg(long, value_delimiter = ',', default_value = "add,max,affine")]
    pub op: Vec<String>,
    /// Element types for built-in operators (comma-separated).
    #[arg(
        long = "type",
        value_delimiter = ',',
        default_value = "i32,f32,i64,f64"
    )]
    pub ty: Vec<String>,
    /// Sizes: log2 values (`28`) or element counts (`n=1000003`); default 2^10..2^30 plus
    /// some non-powers of two.
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<String>,
    /// Largest total device memory (GiB) a case may use; larger cases are skipped.
    #[arg(long, default_value_t = 40.0)]
    pub max_gib: f64,
    /// Exclusive instead of inclusive scans.
    #[arg(long)]
    pub exclusive: bool,
    /// Suffix scans (last element to first) instead of prefix scans: the --op x --type grid and
    /// --element-sizes on the GPU. (--variants times its own reverse cases.)
    #[arg(long)]
    pub reverse: bool,
    /// Scan from and into buffers this many elements past their start (the --op x --type grid
    /// on the GPU): 1 puts both off every vector boundary, as a sub-slice of a byte buffer
    /// does. The copy moves the same bytes.
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// The output's offset where it differs from the input's (--offset): `--offset 1
    /// --out-offset 0` scans a sub-slice into a buffer of its own.
    #[arg(long, value_name = "K")]
    pub out_offset: Option<usize>,
    /// Timed repetitions per case (the median is reported).
    #[arg(long, default_value_t = 25)]
    pub reps: usize,
    /// Untimed warm-up runs per case.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write an SVG plot of throughput against n to FILE.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// gpu (default) or cpu.
    #[arg(long, value_enum, default_value = "gpu")]
    pub backend: BackendArg,
    /// Time the GPU's own work only: each timed scan and copy waits in the stream behind a
    /// short spinning kernel, so the host's enqueue cost falls outside the events (it counts by
    /// default, as a caller that waits for each scan sees it). Not with --graph, which times
    /// batches of back-to-back launches.
    #[arg(long)]
    pub device_time: bool,
    /// Time the host's side of each launch instead: the wall time of the call that enqueues a
    /// scan (or the copy), with the GPU held busy behind a spinning kernel so the call never
    /// waits on it. What our code and the driver cost before the work is in the queue; the
    /// table's times are those calls' (fraction: copy call over scan call). Same runs as
    /// --device-time.
    #[arg(long, conflicts_with = "device_time")]
    pub host_time: bool,
    /// Instead of throughput: the latency of a scan launched directly against the same scan
    /// replayed from a CUDA graph (microseconds per scan over back-to-back launches), beside a
    /// device copy. Default sizes 2^10, 2^16, 2^20.
    #[arg(long)]
    pub graph: bool,
    /// Instead of flat scans: batched rows (the rows x cols shapes of 2^N elements), by-key,
    /// by-flags, by-offsets (2^10 to 2^24 segments) and reverse scans of i32, f32 and the
    /// affine struct, beside a copy of every byte they move. N is the first of --sizes (a log2),
    /// 28 by default.
    #[arg(long)]
    pub variants: bool,
    /// With --variants: only the cases whose kind is listed (flat, reverse, rows, columns, keys,
    /// flags, offsets); all by default.
    #[arg(long, value_delimiter = ',')]
    pub cases: Vec<String>,
    /// With --variants: also time every case but the flat and reverse ones under these launch
    /// shapes, `THREADSxITEMSxBLOCKS` (blocks per SM the register cap allows), beside the
    /// default; the variant's default policy gives the other settings. A fourth number,
    /// `THREADSxITEMSxBLOCKSxREADS`, sets the offsets entries a thread reads per round, and a
    /// `pTILES` suffix the L2 prefetch distance in tiles (`128x64x5p0`: no prefetch).
    #[arg(long, value_delimiter = ',', alias = "column-shapes")]
    pub shapes: Vec<String>,
    /// Instead of the --op x --type grid: the single-pass scan over element sizes 1 to 32 bytes
    /// (u8, u16, i32 and i64 sums, and struct ops of 8, 12, 16, 24 and 32 bytes) and input sizes
    /// (default 2^16 to 2^30 in steps of 4x), as one table of fractions of a copy.
    #[arg(long)]
    pub element_sizes: bool,
    /// Instead of throughput: the time from a fresh process to the first scan result of --op x
    /// --type on the GPU, with an empty kernel cache and with a warm disk cache (n = the first
    /// of --sizes, 2^20 by default).
    #[arg(long)]
    pub cold_start: bool,
    /// The child process of --cold-start (one operator, one size).
    #[arg(long, hide = true)]
    pub first_scan: bool,
    /// Time the `#[scan_op]` operator --op of this Rust file (with --backend cpu: on the CPU
    /// evaluator of its IR) beside a copy.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

pub fn run(args: BenchArgs) -> CliResult {
    if args.device_time {
        check_held_ruler(&args, "--device-time")?;
        hold::set_ruler(hold::Ruler::DeviceTime);
    }
    if args.host_time {
        check_held_ruler(&args, "--host-time")?;
        hold::set_ruler(hold::Ruler::HostTime);
    }
    if args.reverse {
        check_reverse(&args)?;
    }
    if args.offset > 0 || args.out_offset.is_some() {
        check_offset(&args)?;
    }
    let algorithms: Vec<Algorithm> = args
        .algo
        .iter()
        .map(|a| Algorithm::from_name(a).ok_or_else(|| format!("unknown algorithm `{a}`")))
        .collect::<Result<_, _>>()?;
    if args.variants {
        let sizes = if args.sizes.is_empty() {
            Vec::new()
        } else {
            parse_sizes(&args.sizes)?
        };
        let log2n = match sizes.first() {
            Some(&n) if n.is_power_of_two() => n.trailing_zeros(),
            Some(&n) => return Err(format!("--variants takes a power of two size, not {n}").into()),
            None => 28,
        };
        let (device, rows) = variants::run(&args, log2n)?;
        println!("device: {device}");
        print!("{}", variants::to_table(&rows));
        return Ok(());
    }
    if args.cold_start || args.first_scan {
        let n = match parse_sizes(&args.sizes)?.first() {
            Some(&n) if !args.sizes.is_empty() => n,
            _ => 1 << 20,
        };
        if args.first_scan {
            return cold_start::first_scan(&args, n);
        }
        print!("{}", cold_start::run(&args, n)?);
        return Ok(());
    }
    if args.element_sizes {
        let sizes = if args.sizes.is_empty() {
            element_sizes::default_sizes()
        } else {
            parse_sizes(&args.sizes)?
        };
        let (device, rows) = element_sizes::run(&args, &sizes)?;
        println!("device: {device}");
        print!("{}", element_sizes::to_table(&rows, &sizes));
        if let Some(path) = &args.json {
            std::fs::write(path, report::to_json(&device, &rows))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        return Ok(());
    }
    if args.graph {
        let sizes = if args.sizes.is_empty() {
            vec![1 << 10, 1 << 16, 1 << 20]
        } else {
            parse_sizes(&args.sizes)?
        };
        let (device, rows) = graph::run(&args, &algorithms, &sizes)?;
        println!("device: {device}");
        print!("{}", graph::to_table(&rows));
        return Ok(());
    }
    let sizes = if args.file.is_some() && args.sizes.is_empty() && args.backend == BackendArg::Cpu {
        // The evaluator does a few million elements a second.
        vec![1 << 10, 1 << 16, 1 << 20]
    } else {
        parse_sizes(&args.sizes)?
    };
    let (device, rows) = match args.backend {
        _ if args.file.is_some() => file_op::run(&args, &algorithms, &sizes)?,
        BackendArg::Gpu => gpu::run(&args, &algorithms, &sizes)?,
        BackendArg::Cpu => cpu::run(&args, &sizes)?,
    };
    println!("device: {device}");
    print!("{}", report::to_table(&rows));
    if let Some(path) = &args.json {
        std::fs::write(path, report::to_json(&device, &rows))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(path) = &args.plot {
        std::fs::write(
            path,
            plot::to_svg(&format!("scangen scan throughput, {device}"), &rows),
        )
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

fn parse_sizes(specs: &[String]) -> Result<Vec<u64>, String> {
    if specs.is_empty() {
        let mut sizes: Vec<u64> = (10..=30).map(|k| 1u64 << k).collect();
        // Non-powers of two: a prime, a 1.5x size and one just past a power of two.
        sizes.extend([1_000_003, 3 << 22, (1 << 26) + 1]);
        sizes.sort_unstable();
        return Ok(sizes);
    }
    specs
        .iter()
        .map(|s| {
            let s = s.trim();
            if let Some(n) = s.strip_prefix("n=") {
                n.parse::<u64>().map_err(|_| format!("bad size `{s}`"))
            } else {
                match s.parse::<u32>() {
                    Ok(k) if k < 40 => Ok(1u64 << k),
                    _ => Err(format!("bad size `{s}`: give log2 n (e.g. 28) or n=COUNT")),
                }
            }
        })
        .collect()
}

/// The progress line on stderr (indicatif): a bar redrawn in place on a terminal; elsewhere,
/// where indicatif draws nothing, a line per case (so logs stay readable).
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let bar = ProgressBar::new(total as u64);
        bar.set_style(
            ProgressStyle::with_template("[{bar:30}] {pos}/{len} {elapsed} {wide_msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        Progress { bar }
    }

    /// Starts the next case, `what`.
    pub fn step(&mut self, what: &str) {
        self.bar.inc(1);
        if self.bar.is_hidden() {
            let len = self.bar.length().unwrap_or(0);
            eprintln!("[{}/{len}] {what}", self.bar.position());
        }
        self.bar.set_message(what.to_string());
        if Some(self.bar.position()) == self.bar.length() {
            self.bar.finish();
        }
    }
}

/// `--device-time` and `--host-time` (`flag`) hold the GPU stream before each timed launch: they
/// mean nothing for the runs that do not time single GPU launches, so they are refused there
/// before anything runs.
fn check_held_ruler(args: &BenchArgs, flag: &str) -> Result<(), String> {
    let not_with = if args.backend == BackendArg::Cpu {
        Some("--backend cpu (there is no GPU stream to hold)")
    } else if args.graph {
        Some("--graph (it times batches of back-to-back launches, where the host's cost is the point)")
    } else if args.cold_start || args.first_scan {
        Some("--cold-start (it times a whole process)")
    } else {
        None
    };
    refuse_with(flag, not_with)
}

/// `flag` refused where it meets `not_with` (a flag it does not apply to, and why).
fn refuse_with(flag: &str, not_with: Option<&str>) -> Result<(), String> {
    not_with.map_or(Ok(()), |what| {
        Err(format!("{flag} does not apply to {what}"))
    })
}

/// The mode `args` selects where a flag of the --op x --type grid (and --element-sizes) would be
/// silently ignored; None on the grid.
fn beside_the_grid(args: &BenchArgs) -> Option<&'static str> {
    if args.backend == BackendArg::Cpu {
        Some("--backend cpu")
    } else if args.variants {
        Some("--variants")
    } else if args.graph {
        Some("--graph")
    } else if args.cold_start || args.first_scan {
        Some("--cold-start")
    } else if args.file.is_some() {
        Some("--file")
    } else {
        None
    }
}

/// `--reverse` reaches the GPU grid and `--element-sizes` only: it is refused where it would be
/// silently ignored.
fn check_reverse(args: &BenchArgs) -> Result<(), String> {
    let not_with = beside_the_grid(args).map(|mode| match mode {
        "--variants" => {
            "--variants (it times reverse scans as cases of their own: --cases reverse)"
        }
        other => other,
    });
    refuse_with("--reverse", not_with)
}

/// `--offset` (and `--out-offset`) reaches the GPU grid and `--element-sizes` only, as
/// `--reverse` does.
fn check_offset(args: &BenchArgs) -> Result<(), String> {
    let flag = if args.offset > 0 {
        "--offset"
    } else {
        "--out-offset"
    };
    refuse_with(flag, beside_the_grid(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_log2_and_counts() {
        assert_eq!(
            parse_sizes(&["10".into(), "n=17".into()]).unwrap(),
            vec![1024, 17]
        );
        assert!(parse_sizes(&["n=x".into()]).is_err());
        let default = parse_sizes(&[]).unwrap();
        assert_eq!(default.first(), Some(&1024));
        assert_eq!(default.last(), Some(&(1 << 30)));
        assert!(default.contains(&1_000_003));
    }

    /// `scangen bench` arguments `flag` and `extra`, parsed.
    fn bench_args(flag: &str, extra: &[&str]) -> BenchArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            bench: BenchArgs,
        }
        Cli::parse_from(["bench", flag].iter().chain(extra)).bench
    }

    #[test]
    fn device_and_host_time_are_refused_where_they_mean_nothing() {
        for flag in ["--device-time", "--host-time"] {
            let check = |extra: &[&str]| check_held_ruler(&bench_args(flag, extra), flag);
            assert_eq!(check(&[]), Ok(()));
            assert_eq!(check(&["--element-sizes"]), Ok(()));
            assert_eq!(check(&["--variants"]), Ok(()));
            for refused in [&["--backend", "cpu"][..], &["--graph"], &["--cold-start"]] {
                let err = check(refused).expect_err("refused");
                assert!(
                    err.starts_with(&format!("{flag} does not apply to")),
                    "{err}"
                );
            }
        }
    }

    #[test]
    fn reverse_and_offset_are_refused_where_they_would_be_ignored() {
        type Check = fn(&BenchArgs) -> Result<(), String>;
        for (flag, check_flag) in [
            ("--reverse", check_reverse as Check),
            ("--offset=1", check_offset as Check),
            ("--out-offset=0", check_offset as Check),
        ] {
            let check = |extra: &[&str]| check_flag(&bench_args(flag, extra));
            assert_eq!(check(&[]), Ok(()));
            assert_eq!(check(&["--element-sizes"]), Ok(()));
            for refused in [
                &["--backend", "cpu"][..],
                &["--variants"],
                &["--graph"],
                &["--cold-start"],
                &["--file", "ops.rs"],
            ] {
                let err = check(refused).expect_err("refused");
                let name = flag.split('=').next().unwrap_or(flag);
                assert!(
                    err.starts_with(&format!("{name} does not apply to")),
                    "{err}"
                );
            }
        }
    }
}
