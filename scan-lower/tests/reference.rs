//! The reference page and the lowering agree: every example of the "Constructs that lower"
//! table of docs/operator-language.md lowers (and compiles with NVRTC, where it is present),
//! and every example of the "What is rejected" table is rejected at the example.

mod common;

const REFERENCE: &str = include_str!("../../docs/operator-language.md");

/// The operator each example is a statement of (the page describes it above the table).
const TEMPLATE: &str = r#"
#[scan_op]
mod reference {
    const K: u32 = 3;

    #[derive(Clone, Copy, ScanElement)]
    #[repr(C)]
    pub struct P { pub a: f64, pub b: f64 }

    impl P {
        fn sum(self) -> f64 { self.a + self.b }
    }

    #[derive(Clone, Copy, ScanElement)]
    #[repr(C)]
    pub struct E { pub x: i32, pub y: f32, pub n: u8, pub ok: bool, pub v: [u16; 4], pub p: P }

    fn half(x: f32) -> f32 { x * 0.5 }

    pub struct Ref;
    impl ScanOp for Ref {
        type Elem = E;
        fn identity() -> E { E { x: 0, y: 0.0, n: 0, ok: false, v: [0; 4], p: P { a: 0.0, b: 0.0 } } }
        fn combine(l: E, r: E) -> E {
EXAMPLE
            l
        }
    }
}
"#;

/// The examples of the table after `<!-- constructs: {which} -->`: (construct, example).
fn examples(which: &str) -> Vec<(String, String)> {
    let start = REFERENCE
        .find(&format!("<!-- constructs: {which} -->"))
        .unwrap_or_else(|| panic!("no `{which}` table"));
    let table = &REFERENCE[start..];
    let table = &table[..table.find("<!-- end -->").expect("table end")];
    table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Construct") && !l.starts_with("| ---"))
        .map(|row| {
            // Cells are split at `|` not escaped as `\|`.
            let row = row.replace("\\|", "\u{1}");
            let cells: Vec<String> = row
                .split('|')
                .map(|c| c.trim().replace('\u{1}', "|"))
                .collect();
            let example = cells[2]
                .strip_prefix('`')
                .and_then(|c| c.strip_suffix('`'))
                .unwrap_or_else(|| panic!("example of `{}` is not code", cells[1]));
            (cells[1].clone(), example.to_string())
        })
        .collect()
}

fn lower(example: &str) -> Result<scan_core::OpSpec, String> {
    let src = TEMPLATE.replace("EXAMPLE", example);
    let file = scan_lower::parse_ops_file(&src).map_err(|e| e.to_string())?;
    file.op_spec("Ref").map_err(|e| e.to_string())
}

#[test]
fn every_documented_construct_lowers_and_compiles() {
    let examples = examples("lowered");
    assert!(examples.len() >= 30, "the table lost rows");
    let nvrtc = common::nvrtc_available();
    for (construct, example) in examples {
        let op = lower(&example).unwrap_or_else(|e| panic!("{construct}: `{example}`:\n{e}"));
        if nvrtc {
            let src = common::harness(&op);
            common::compile(&src);
        }
    }
}

#[test]
fn every_documented_rejection_is_an_error_at_the_example() {
    let examples = examples("rejected");
    assert!(examples.len() >= 15, "the table lost rows");
    // Every example is one line, in place of `EXAMPLE`: an error on another line would be
    // the template's.
    let line = TEMPLATE
        .lines()
        .position(|l| l == "EXAMPLE")
        .expect("placeholder")
        + 1;
    for (construct, example) in examples {
        match lower(&example) {
            Ok(_) => panic!("{construct}: `{example}` lowers, but the reference says it does not"),
            Err(e) => assert!(
                e.lines().all(|l| l.starts_with(&format!("{line}:"))),
                "{construct}: `{example}`: errors outside the example:\n{e}"
            ),
        }
    }
}
