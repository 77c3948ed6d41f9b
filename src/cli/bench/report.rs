//! Benchmark results: one row per (algorithm, op, type, n), printed as a table or JSON.

use serde::Serialize;

/// One measured configuration. Times are medians over the timed repetitions.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    pub algorithm: String,
    pub op: String,
    pub ty: String,
    pub mode: String,
    pub n: u64,
    pub elem_bytes: usize,
    pub scan_ms: f64,
    pub copy_ms: f64,
}

impl BenchRow {
    /// Bytes a scan must move: n reads plus n writes, the same as a device-to-device copy.
    pub fn bytes(&self) -> f64 {
        2.0 * self.n as f64 * self.elem_bytes as f64
    }

    pub fn scan_gbps(&self) -> f64 {
        self.bytes() / (self.scan_ms * 1e6)
    }

    pub fn copy_gbps(&self) -> f64 {
        self.bytes() / (self.copy_ms * 1e6)
    }

    /// Scan throughput as a fraction of the copy's, both measured in the same run.
    pub fn fraction_of_copy(&self) -> f64 {
        self.copy_ms / self.scan_ms
    }
}

#[derive(Serialize)]
struct JsonRow<'a> {
    #[serde(flatten)]
    row: &'a BenchRow,
    scan_gbps: f64,
    copy_gbps: f64,
    fraction_of_copy: f64,
}

pub fn to_json(device: &str, rows: &[BenchRow]) -> String {
    let rows: Vec<_> = rows
        .iter()
        .map(|row| JsonRow {
            row,
            scan_gbps: row.scan_gbps(),
            copy_gbps: row.copy_gbps(),
            fraction_of_copy: row.fraction_of_copy(),
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({ "device": device, "rows": rows }))
        .expect("bench rows serialize")
}

/// A Markdown table (pastes straight into BENCHMARKS.md).
pub fn to_table(rows: &[BenchRow]) -> String {
    let mut out = String::new();
    out.push_str("| algorithm | op | type | mode | n | log2 n | scan ms | scan GB/s | copy GB/s | fraction of copy | scan/copy time |\n");
    out.push_str("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.2} | {:.4} | {:.1} | {:.1} | {:.3} | {:.2} |\n",
            r.algorithm,
            r.op,
            r.ty,
            r.mode,
            r.n,
            (r.n.max(1) as f64).log2(),
            r.scan_ms,
            r.scan_gbps(),
            r.copy_gbps(),
            r.fraction_of_copy(),
            r.scan_ms / r.copy_ms,
        ));
    }
    out
}

/// How a row names its scan: the mode, then "reverse" for a suffix scan ("exclusive reverse").
pub fn mode_label(mode: scangen::ScanMode, reverse: bool) -> String {
    if reverse {
        format!("{} reverse", mode.name())
    } else {
        mode.name().to_string()
    }
}

/// Median of a non-empty sample.
pub fn median(samples: &mut [f64]) -> f64 {
    assert!(!samples.is_empty(), "median of no samples");
    samples.sort_by(|a, b| a.total_cmp(b));
    let m = samples.len() / 2;
    if samples.len() % 2 == 1 {
        samples[m]
    } else {
        0.5 * (samples[m - 1] + samples[m])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(scan_ms: f64, copy_ms: f64) -> BenchRow {
        BenchRow {
            algorithm: "single-pass".into(),
            op: "add".into(),
            ty: "i32".into(),
            mode: "inclusive".into(),
            n: 1 << 28,
            elem_bytes: 4,
            scan_ms,
            copy_ms,
        }
    }

    #[test]
    fn fraction_is_copy_time_over_scan_time() {
        let r = row(1.0, 0.9);
        assert!((r.fraction_of_copy() - 0.9).abs() < 1e-12);
        assert!((r.scan_gbps() - 2.0 * (1u64 << 28) as f64 * 4.0 / 1e6).abs() < 1e-6);
    }

    #[test]
    fn median_of_odd_and_even_samples() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn json_has_derived_columns() {
        let j = to_json("test device", &[row(2.0, 1.0)]);
        assert!(j.contains("\"fraction_of_copy\": 0.5"), "{j}");
        assert!(j.contains("\"device\": \"test device\""), "{j}");
    }
}
