//! `scangen bench --cold-start`: the time from a fresh process to the first scan result, with an
//! empty kernel cache (NVRTC compiles every kernel the scan needs) and again with the disk cache
//! it left (a warm start). Each measurement runs this executable again as a child
//! (`bench --first-scan`), so process start, driver initialisation and context creation are
//! counted as a user would see them; the child reports where its time went.

use super::sample::Sample;
use super::BenchArgs;
use crate::cli::struct_ops::op_type_pairs;
use crate::cli::typed_ops::with_op;
use scangen::runtime::{Gpu, ScanOptions};
use scangen::ScanOp;
use std::process::Command;
use std::time::Instant;

/// One child's report: a line `first-scan: context_ms=.. build_ms=.. first_scan_ms=..
/// second_scan_ms=..`.
const REPORT_PREFIX: &str = "first-scan:";

pub fn run(args: &BenchArgs, n: u64) -> Result<String, Box<dyn std::error::Error>> {
    let exe = std::env::current_exe()?;
    let cache = std::env::temp_dir().join(format!("scangen-cold-start-{}", std::process::id()));
    let mut table = String::from(
        "| op | type | n | cache | process wall ms | context ms | scanner ms | first scan ms | second scan ms |\n\
         | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for (op, ty) in op_type_pairs(&args.op, &args.ty) {
        // A fresh directory: nothing cached.
        let _ = std::fs::remove_dir_all(&cache);
        for state in ["empty", "warm disk"] {
            let started = Instant::now();
            let out = Command::new(&exe)
                .args(["bench", "--first-scan", "--op", &op, "--type", &ty])
                .args(["--sizes", &format!("n={n}")])
                .env("SCANGEN_CACHE_DIR", &cache)
                .output()?;
            let wall_ms = started.elapsed().as_secs_f64() * 1e3;
            let stdout = String::from_utf8_lossy(&out.stdout);
            let Some(report) = stdout.lines().find_map(|l| l.strip_prefix(REPORT_PREFIX)) else {
                return Err(format!(
                    "`{} bench --first-scan --op {op} --type {ty}` reported nothing: {}",
                    exe.display(),
                    String::from_utf8_lossy(&out.stderr)
                )
                .into());
            };
            let field = |name: &str| {
                report
                    .split_whitespace()
                    .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
                    .unwrap_or("?")
                    .to_string()
            };
            table.push_str(&format!(
                "| {op} | {ty} | {n} | {state} | {wall_ms:.0} | {} | {} | {} | {} |\n",
                field("context_ms"),
                field("build_ms"),
                field("first_scan_ms"),
                field("second_scan_ms"),
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&cache);
    Ok(table)
}

/// The child: times the steps to a first scan of `n` host elements and prints one report line.
pub fn first_scan(args: &BenchArgs, n: u64) -> Result<(), Box<dyn std::error::Error>> {
    let pairs = op_type_pairs(&args.op, &args.ty);
    let [(op, ty)] = pairs.as_slice() else {
        return Err("--first-scan times one operator: give one --op and one --type".into());
    };
    with_op!(op.as_str(), ty.as_str(), O => first_scan_of::<O>(n), Err(format!("no operator {op} on {ty}").into()))
}

fn first_scan_of<O: ScanOp>(n: u64) -> Result<(), Box<dyn std::error::Error>>
where
    O::Elem: Sample,
{
    let input: Vec<O::Elem> = (0..n).map(O::Elem::sample).collect();
    let t0 = Instant::now();
    let gpu = Gpu::new(0)?;
    let t1 = Instant::now();
    let mut scanner = gpu.scanner::<O>(ScanOptions::default())?;
    let t2 = Instant::now();
    let first = scanner.scan(&input)?;
    let t3 = Instant::now();
    let second = scanner.scan(&input)?;
    let t4 = Instant::now();
    if first.len() != input.len() || second.len() != input.len() {
        return Err("a scan returned the wrong number of elements".into());
    }
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
    println!(
        "{REPORT_PREFIX} context_ms={:.0} build_ms={:.0} first_scan_ms={:.1} second_scan_ms={:.1}",
        ms(t0, t1),
        ms(t1, t2),
        ms(t2, t3),
        ms(t3, t4)
    );
    Ok(())
}
