//! An SVG line plot of throughput against n: one line per (algorithm, op, type) and the
//! device-to-device copy as the reference line (plotters, SVG backend only).

use super::report::BenchRow;
use plotters::prelude::*;
use std::collections::BTreeMap;

const SIZE: (u32, u32) = (900, 540);

/// The plot as an SVG document.
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
    for pts in series.values_mut() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
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
    let y1 = ((y1 * 1.1 / 500.0).ceil() * 500.0).max(1.0);

    let mut svg = String::new();
    draw(&mut svg, title, (x0, x1, y1), &copy_line, &series)
        .expect("drawing into a string cannot fail");
    svg
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn draw(
    svg: &mut String,
    title: &str,
    (x0, x1, y1): (f64, f64, f64),
    copy_line: &[(f64, f64)],
    series: &BTreeMap<String, Vec<(f64, f64)>>,
) -> DrawResult {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, 0.0..y1)?;
    // One label per power of two (every other one over a wide range).
    let step = if x1 - x0 > 12.0 { 2.0 } else { 1.0 };
    chart
        .configure_mesh()
        .x_labels(((x1 - x0) / step) as usize + 1)
        .x_label_formatter(&|x| format!("2^{}", x.round() as i64))
        .y_labels(6)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_desc("elements (n)")
        .y_desc("GB/s (n reads + n writes)")
        .max_light_lines(0)
        .bold_line_style(BLACK.mix(0.12))
        .draw()?;
    chart
        .draw_series(DashedLineSeries::new(
            copy_line.iter().copied(),
            6,
            4,
            BLACK.stroke_width(2),
        ))?
        .label("device-to-device copy")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 24, y)], BLACK.stroke_width(2)));
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).stroke_width(2);
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color))?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], color));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    root.present()?;
    Ok(())
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
        // The two scan lines (one polyline each) and the copy (dashed: many short segments).
        assert!(svg.matches("<polyline").count() >= 2, "{svg}");
        assert!(svg.contains("device-to-device copy"));
        assert!(svg.contains("single-pass add i32") && svg.contains("blelloch add i32"));
        assert!(svg.contains("2^20"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
    }
}
