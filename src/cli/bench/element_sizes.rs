//! `scangen bench --element-sizes`: the single-pass scan's fraction of a copy over element sizes
//! (1 to 32 bytes: built-in sums and the struct ops of struct_ops.rs) and input sizes, as one
//! table with a row per element and a column per input size: the shape of issue 16's targets,
//! and of the CUB table bench/peers/cub_scan_sizes.cu prints.

use super::report::BenchRow;
use super::{gpu, BenchArgs};
use scan_codegen::Algorithm;

/// (operator, type) of each row, smallest element first.
const ROWS: [(&str, &str); 10] = [
    ("add", "u8"),
    ("add", "u16"),
    ("add", "i32"),
    ("add", "i64"),
    ("affine", "f32x2"),
    ("vec3", "f32x3"),
    ("vec4", "f32x4"),
    ("affine64", "f64x2"),
    ("vec3d", "f64x3"),
    ("mat2", "u64x4"),
];

/// Default input sizes: 2^16 to 2^30 in steps of 4x.
pub fn default_sizes() -> Vec<u64> {
    (16..=30).step_by(2).map(|k| 1u64 << k).collect()
}

pub fn run(
    args: &BenchArgs,
    sizes: &[u64],
) -> Result<(String, Vec<BenchRow>), Box<dyn std::error::Error>> {
    let pairs: Vec<(String, String)> = ROWS
        .iter()
        .map(|(op, ty)| (op.to_string(), ty.to_string()))
        .collect();
    gpu::run_pairs(args, &[Algorithm::SinglePass], sizes, &pairs)
}

/// One row per element, one column per input size: the fraction of a copy (for inputs up to
/// 2^16, where a launch's latency dominates, the scan/copy time ratio follows in parentheses).
pub fn to_table(rows: &[BenchRow], sizes: &[u64]) -> String {
    let mut out = String::from("| op | type | bytes |");
    for &n in sizes {
        out.push_str(&format!(" 2^{} |", n.max(1).ilog2()));
    }
    out.push_str("\n| --- | --- | ---: |");
    out.push_str(&" ---: |".repeat(sizes.len()));
    out.push('\n');
    for (op, ty) in ROWS {
        let cells: Vec<Option<&BenchRow>> = sizes
            .iter()
            .map(|&n| rows.iter().find(|r| r.op == op && r.ty == ty && r.n == n))
            .collect();
        let Some(bytes) = cells.iter().flatten().map(|r| r.elem_bytes).next() else {
            continue;
        };
        out.push_str(&format!("| {op} | {ty} | {bytes} |"));
        for cell in cells {
            match cell {
                Some(r) if r.n <= 1 << 16 => out.push_str(&format!(
                    " {:.3} ({:.2}x) |",
                    r.fraction_of_copy(),
                    r.scan_ms / r.copy_ms
                )),
                Some(r) => out.push_str(&format!(" {:.3} |", r.fraction_of_copy())),
                None => out.push_str(" — |"),
            }
        }
        out.push('\n');
    }
    out
}
