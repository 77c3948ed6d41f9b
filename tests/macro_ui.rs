//! `#[scan_op]` and `#[derive(ScanElement)]` from a user's crate: compile-fail cases with their
//! exact diagnostics (`tests/ui/*.rs` + `.stderr`) and cases that must compile and run
//! (`tests/pass/*.rs`). Regenerate the `.stderr` files with `TRYBUILD=overwrite` and read them.

#[test]
fn macro_ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/pass/*.rs");
}
