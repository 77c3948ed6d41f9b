//! An SVG line plot of throughput against n: one line per (algorithm, op, type) and the
//! device-to-device copy as the reference line. Written by hand: no plotting dependency.

use super::report::BenchRow;
use std::collections::BTreeMap;
use std::fmt::Write;

const W: f64 = 900.0;
const H: f64 = 540.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 230.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
];

pub fn to_svg(title: &str, rows: &[BenchRow]) -> String {
    // Series: one per (algorithm, op, type); the copy is the median over rows at each n.
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut copy: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.n > 0) {
        let key = format!("{} {} {}", r.algorithm, r.op, r.ty);
        series
            .entry(key)
            .or_default()
            .push(((r.n as f64).log2(), r.scan_gbps()));
        copy.entry(r.n * r.elem_bytes as u64)
            .or_default()
            .push(r.copy_gbps());
    }
    let copy_line: Vec<(f64, f64)> = {
        // The copy depends on bytes, not elements; plot it against the smallest element size's n.
        let min_elem = rows.iter().map(|r| r.elem_bytes).min().unwrap_or(4) as u64;
        copy.into_iter()
            .map(|(bytes, mut g)| {
                g.sort_by(|a, b| a.total_cmp(b));
                (((bytes / min_elem).max(1) as f64).log2(), g[g.len() / 2])
            })
            .collect()
    };
    let all = series.values().flatten().chain(copy_line.iter());
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        (x0, x1, y1) = (0.0, 1.0, 1.0);
    }
    if x1 - x0 < 1.0 {
        x1 = x0 + 1.0;
    }
    let y1 = (y1 * 1.1 / 500.0).ceil() * 500.0;
    let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * (W - LEFT - RIGHT);
    let py = |y: f64| H - BOTTOM - y / y1 * (H - TOP - BOTTOM);

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="15">{}</text>"#,
        LEFT,
        xml(title)
    );
    // Axes and grid.
    let mut tick = y1 / 5.0;
    if tick <= 0.0 {
        tick = 1.0;
    }
    for i in 0..=5 {
        let y = tick * i as f64;
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" x2="{0}" y1="{1:.1}" y2="{1:.1}" stroke="#ddd"/><text x="{2}" y="{3:.1}" text-anchor="end">{4:.0}</text>"##,
            W - RIGHT,
            py(y),
            LEFT - 6.0,
            py(y) + 4.0,
            y
        );
    }
    let mut lx = x0.ceil();
    while lx <= x1 {
        let _ = writeln!(
            s,
            r##"<line x1="{0:.1}" x2="{0:.1}" y1="{1}" y2="{2}" stroke="#eee"/><text x="{0:.1}" y="{3}" text-anchor="middle">2^{4}</text>"##,
            px(lx),
            TOP,
            H - BOTTOM,
            H - BOTTOM + 18.0,
            lx as i64
        );
        lx += if x1 - x0 > 12.0 { 2.0 } else { 1.0 };
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">elements (n)</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 15.0
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{0}" transform="rotate(-90 18 {0})" text-anchor="middle">GB/s (n reads + n writes)</text>"#,
        (TOP + H - BOTTOM) / 2.0
    );

    let mut legend_y = TOP + 10.0;
    let mut line = |s: &mut String, name: &str, pts: &[(f64, f64)], color: &str, dash: &str| {
        let mut pts = pts.to_vec();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}" points="{}"/>"#,
            path.join(" ")
        );
        let _ = writeln!(
            s,
            r#"<line x1="{0}" x2="{1}" y1="{2:.1}" y2="{2:.1}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{3}" y="{4:.1}">{5}</text>"#,
            W - RIGHT + 10.0,
            W - RIGHT + 34.0,
            legend_y,
            W - RIGHT + 40.0,
            legend_y + 4.0,
            xml(name)
        );
        legend_y += 18.0;
    };
    line(&mut s, "device-to-device copy", &copy_line, "#000", "6 4");
    for (i, (name, pts)) in series.iter().enumerate() {
        line(&mut s, name, pts, COLORS[i % COLORS.len()], "none");
    }
    s.push_str("</svg>\n");
    s
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_has_a_line_per_series_and_the_copy() {
        let rows: Vec<BenchRow> = [10u32, 20, 28]
            .iter()
            .flat_map(|&k| {
                ["single-pass", "blelloch"].map(|a| BenchRow {
                    algorithm: a.into(),
                    op: "add".into(),
                    ty: "i32".into(),
                    mode: "inclusive".into(),
                    n: 1 << k,
                    elem_bytes: 4,
                    scan_ms: 0.01 * k as f64,
                    copy_ms: 0.009 * k as f64,
                })
            })
            .collect();
        let svg = to_svg("t", &rows);
        assert_eq!(svg.matches("<polyline").count(), 3);
        assert!(svg.contains("device-to-device copy"));
        assert!(svg.ends_with("</svg>\n"));
    }
}
