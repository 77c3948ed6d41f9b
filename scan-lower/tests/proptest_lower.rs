//! Property tests of the lowering, the parser of operator files (`scangen emit --file`,
//! `check --file`) and of what `#[scan_op]`/`#[derive(ScanElement)]` receive: on generated
//! Rust (random `impl ScanOp` items, element structs, whole files, and raw token streams put
//! where the lowering looks) it never panics, and every failure is an error with a span inside
//! the input.
//!
//! Each generated source starts with an empty line, so a position on line 1 did not come from
//! any token of it: an error there was made with no real span (`Span::call_site()`).
//!
//! Bounded for CI (well under a minute in a debug build); `PROPTEST_CASES=20000` runs longer.
//! A failing case is saved under `proptest-regressions/` and replayed first on every later
//! run: commit those files.

mod rust_gen;

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError};
use scan_lower::{check_impl, element_struct, lower_impl, parse_ops_file, Errors, FileError};

/// `cases` unless `PROPTEST_CASES` asks for another number; failures are saved beside this
/// file (`<test>.proptest-regressions`).
fn config(cases: u32) -> Config {
    let mut config = Config {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..Config::default()
    };
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    config
}

/// The last line an error may name: the one after the final newline (end of input).
fn last_line(source: &str) -> usize {
    source.matches('\n').count() + 1
}

/// Every error is at a token of `source` (not on its empty first line) and says something.
fn spans_inside(errors: &Errors, source: &str, stage: &str) -> Result<(), TestCaseError> {
    prop_assert!(!errors.is_empty(), "{stage}: Err with no error\n{source}");
    for e in errors.iter() {
        let (line, column) = e.line_column();
        prop_assert!(
            (2..=last_line(source)).contains(&line),
            "{stage}: error `{}` at {line}:{column}, outside the input:\n{source}",
            e.message
        );
        prop_assert!(!e.message.trim().is_empty(), "{stage}: an empty message");
    }
    // What the macros do with them: neither may panic.
    let _ = errors.to_compile_error();
    let _ = errors.to_syn_error();
    Ok(())
}

/// Diagnostics of the file path are at a real position; `anywhere` admits line 1 (syn reports
/// an unexpected end of a file at the call site, 1:1: see `syn_eof_is_reported_at_1_1`).
fn positions_inside(
    error: &FileError,
    source: &str,
    stage: &str,
    anywhere: bool,
) -> Result<(), TestCaseError> {
    prop_assert!(
        !error.diagnostics.is_empty(),
        "{stage}: Err with no diagnostic"
    );
    let first = if anywhere { 1 } else { 2 };
    for d in &error.diagnostics {
        prop_assert!(
            (first..=last_line(source)).contains(&d.line) && d.column >= 1,
            "{stage}: `{}` at {}:{}, outside the input:\n{source}",
            d.message,
            d.line,
            d.column
        );
    }
    let _ = error.render("ops.rs");
    Ok(())
}

/// What the macros do with an `impl` item: the shape check and the lowering.
fn lower_item(item: &syn::ItemImpl, source: &str) -> Result<(), TestCaseError> {
    let mut errors = Errors::new();
    let _shape = check_impl(item, &mut errors);
    if !errors.is_empty() {
        spans_inside(&errors, source, "check_impl")?;
    }
    match lower_impl(item) {
        Ok(op) => {
            prop_assert!(!op.lhs.is_empty() && !op.rhs.is_empty());
            prop_assert!(!op.name.is_empty());
        }
        Err(errors) => spans_inside(&errors, source, "lower_impl")?,
    }
    Ok(())
}

/// What the derive does with a struct (or enum, or union).
fn derive_item(input: syn::DeriveInput, source: &str) -> Result<(), TestCaseError> {
    match element_struct(&input) {
        Ok(el) => {
            prop_assert!(!el.fields.is_empty());
            // The declaration is known here only when no field names another type.
            if let Some(decl) = &el.decl {
                prop_assert!(decl.size > 0);
            }
        }
        Err(errors) => spans_inside(&errors, source, "element_struct")?,
    }
    Ok(())
}

/// Runs `source` through both users of the lowering: `emit --file` (parse the file, lower
/// every operator in it) and the macros (every impl and struct item, in modules too).
fn exercise_file(source: &str) -> Result<(), TestCaseError> {
    match parse_ops_file(source) {
        Err(e) => positions_inside(&e, source, "parse_ops_file", true)?,
        Ok(file) => {
            for name in file.op_names() {
                if let Err(e) = file.op_spec(&name) {
                    positions_inside(&e, source, "op_spec", false)?;
                }
            }
            // A name the file lacks is a request error, at 1:1 by design.
            let missing = file.op_spec("NoSuchOperatorHere").unwrap_err();
            prop_assert_eq!(missing.diagnostics.len(), 1);
            let _ = file.element_names();
        }
    }
    if let Ok(file) = syn::parse_file(source) {
        exercise_items(&file.items, source)?;
    }
    Ok(())
}

fn exercise_items(items: &[syn::Item], source: &str) -> Result<(), TestCaseError> {
    for item in items {
        match item {
            syn::Item::Impl(i) => lower_item(i, source)?,
            syn::Item::Struct(s) => derive_item(s.clone().into(), source)?,
            syn::Item::Enum(e) => derive_item(e.clone().into(), source)?,
            syn::Item::Union(u) => derive_item(u.clone().into(), source)?,
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    exercise_items(inner, source)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(1024))]

    /// Random `impl ScanOp` items, well-formed or not, straight to the macro's entry points.
    #[test]
    fn impls_lower_or_fail_at_their_spans(text in rust_gen::scan_op_impl()) {
        let source = format!("\n{text}\n");
        if let Ok(item) = syn::parse_str::<syn::ItemImpl>(&source) {
            lower_item(&item, &source)?;
        }
    }

    /// Operators built from supported constructs: most lower, reaching the type checks and
    /// the C++ emission; the macro's path and `emit --file`'s agree on each.
    #[test]
    fn supported_operators_lower_the_same_on_both_paths(text in rust_gen::valid_ish_impl()) {
        let source = format!("\n{text}\n");
        let item = syn::parse_str::<syn::ItemImpl>(&source).expect("generated to parse");
        lower_item(&item, &source)?;
        let by_macro = lower_impl(&item);
        let by_file = parse_ops_file(&source).expect("parses").op_spec("Op");
        if let Err(e) = &by_file {
            positions_inside(e, &source, "op_spec", false)?;
        }
        match (by_macro, by_file) {
            (Ok(op), Ok(spec)) => {
                prop_assert_eq!(&op.combine_body, &spec.combine_body);
                prop_assert!(op.combine_body.contains("return"), "no return in:\n{}", op.combine_body);
                prop_assert!(op.identity_body.contains("return"), "no return in:\n{}", op.identity_body);
            }
            (Err(_), Err(_)) => {}
            (m, f) => prop_assert!(false, "macro path {:?}, file path {:?}", m.is_ok(), f.is_ok()),
        }
    }

    /// Random element structs, enums and unions, straight to the derive's entry point.
    #[test]
    fn elements_validate_or_fail_at_their_spans(text in rust_gen::element_item()) {
        let source = format!("\n{text}\n");
        if let Ok(input) = syn::parse_str::<syn::DeriveInput>(&source) {
            derive_item(input, &source)?;
        }
    }

    /// Random operator files through `emit --file`'s path and the macros'.
    #[test]
    fn ops_files_lower_or_fail_at_their_spans(source in rust_gen::ops_file()) {
        exercise_file(&source)?;
    }

    /// Raw token streams where the lowering looks: bodies, expressions, parameters, the
    /// element type, impl items, struct fields, attribute arguments, a whole file.
    #[test]
    fn token_streams_lower_or_fail_at_their_spans(source in rust_gen::tokens_in_a_hole()) {
        exercise_file(&source)?;
    }
}

/// Guards the generators: if most generated sources stopped parsing (a change of syn or of a
/// strategy), the properties above would hold vacuously.
#[test]
fn generated_sources_mostly_parse() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let parsed =
        |strategy: BoxedStrategy<String>, runner: &mut TestRunner, parse: fn(&str) -> bool| {
            (0..200)
                .filter(|_| parse(&strategy.new_tree(runner).unwrap().current()))
                .count()
        };
    let impls = parsed(rust_gen::scan_op_impl(), &mut runner, |s| {
        syn::parse_str::<syn::ItemImpl>(s).is_ok()
    });
    let elements = parsed(rust_gen::element_item(), &mut runner, |s| {
        syn::parse_str::<syn::DeriveInput>(s).is_ok()
    });
    let files = parsed(rust_gen::ops_file(), &mut runner, |s| {
        syn::parse_file(s).is_ok()
    });
    let lowered = parsed(rust_gen::valid_ish_impl(), &mut runner, |s| {
        syn::parse_str::<syn::ItemImpl>(s).is_ok_and(|i| lower_impl(&i).is_ok())
    });
    println!("of 200: impls {impls} parse; elements {elements}; files {files}; {lowered} mostly valid impls lower");
    assert!(impls > 120, "{impls} of 200 generated impls parse");
    assert!(elements > 120, "{elements} of 200 generated elements parse");
    assert!(files > 60, "{files} of 200 generated files parse");
    assert!(lowered > 120, "{lowered} of 200 mostly valid impls lower");
}

/// Not a property of the lowering but of syn, recorded so a change is noticed: an unexpected
/// end of a file is reported at the call site, which the file path shows as 1:1.
#[test]
fn syn_eof_is_reported_at_1_1() {
    let Err(e) = parse_ops_file("\n\npub struct") else {
        panic!("a truncated file parsed")
    };
    assert_eq!(
        (e.diagnostics[0].line, e.diagnostics[0].column),
        (1, 1),
        "{e}"
    );
    assert!(e.diagnostics[0].message.contains("unexpected end of input"));
}
