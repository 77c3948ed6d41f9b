//! The kernel templates (embedded at build time) and their tera engine, and the text helpers
//! that keep rendered sources tidy and deterministic.

use super::*;

pub(super) const TEMPLATES: [(&str, &str); 17] = [
    ("rust_semantics.cu.tera", scan_core::RUST_SEMANTICS_CU),
    (
        "prelude.cu.tera",
        include_str!("../../templates/prelude.cu.tera"),
    ),
    (
        "warp_scan.cu.tera",
        include_str!("../../templates/warp_scan.cu.tera"),
    ),
    (
        "block_scan_kogge_stone.cu.tera",
        include_str!("../../templates/block_scan_kogge_stone.cu.tera"),
    ),
    (
        "block_scan_blelloch.cu.tera",
        include_str!("../../templates/block_scan_blelloch.cu.tera"),
    ),
    ("tile.cu.tera", include_str!("../../templates/tile.cu.tera")),
    (
        "tile_words.cu.tera",
        include_str!("../../templates/tile_words.cu.tera"),
    ),
    (
        "tile_vectors.cu.tera",
        include_str!("../../templates/tile_vectors.cu.tera"),
    ),
    (
        "tile_layout.cu.tera",
        include_str!("../../templates/tile_layout.cu.tera"),
    ),
    (
        "tile_shifted.cu.tera",
        include_str!("../../templates/tile_shifted.cu.tera"),
    ),
    (
        "fused.cu.tera",
        include_str!("../../templates/fused.cu.tera"),
    ),
    (
        "segments.cu.tera",
        include_str!("../../templates/segments.cu.tera"),
    ),
    (
        "look_back.cu.tera",
        include_str!("../../templates/look_back.cu.tera"),
    ),
    (
        "single_pass.cu.tera",
        include_str!("../../templates/single_pass.cu.tera"),
    ),
    (
        "hierarchical.cu.tera",
        include_str!("../../templates/hierarchical.cu.tera"),
    ),
    (
        "columns.cu.tera",
        include_str!("../../templates/columns.cu.tera"),
    ),
    ("scan.cu.tera", include_str!("../../templates/scan.cu.tera")),
];

pub(super) fn engine() -> Result<&'static tera::Tera, CodegenError> {
    static ENGINE: OnceLock<Result<tera::Tera, String>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut t = tera::Tera::default();
            t.autoescape_on(vec![]);
            t.add_raw_templates(TEMPLATES.to_vec())
                .map_err(|e| error_chain(&e))?;
            Ok(t)
        })
        .as_ref()
        .map_err(|e| CodegenError::Template(e.clone()))
}

pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

/// Indents every line of a function body and drops trailing whitespace.
pub(super) fn indent_body(body: &str) -> String {
    body.trim()
        .lines()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                format!("    {}", l.trim_end())
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Deterministic layout: no trailing whitespace, at most one blank line in a row, no blank line
/// right after an opening brace or before a closing one, exactly one final newline.
pub(super) fn normalize(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut blank_pending = false;
    let mut last_opens = true; // start of file: drop leading blank lines
    for line in raw.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_pending = true;
            continue;
        }
        let closes = line.trim_start().starts_with('}');
        if blank_pending && !last_opens && !closes {
            out.push('\n');
        }
        blank_pending = false;
        out.push_str(line);
        out.push('\n');
        last_opens = line.ends_with('{');
    }
    out
}
