//! proptest strategies that write Rust source text for the lowering's property tests: types,
//! literals, expressions, statements, `impl ScanOp` items, element structs, whole operator
//! files, and raw token streams with balanced delimiters.
//!
//! The vocabulary leans on what the lowering must judge: every supported method and call form,
//! the element's fields, casts, and the constructs it must refuse (loops, closures, macros,
//! patterns, references, items in bodies, odd literals), mixed at random depth. Text, not
//! `syn` values built in memory: parsing text gives every token a real position, so the tests
//! can tell an error at its construct from one with no real span.

// Each test crate uses a different subset.
#![allow(dead_code)]

use proptest::prelude::*;
use proptest::sample::select;

/// Names a body can use: the parameters in their usual spellings, locals, `self`, junk.
const NAMES: &[&str] = &[
    "l", "r", "lhs", "rhs", "a", "b", "x", "y", "acc", "v", "self", "Self", "Elem", "_", "r#type",
    "identity", "combine", "out0", "rs_add", "std", "core", "f32", "i64", "T",
];

/// Fields of the element structs the generated files declare, and some they do not.
const FIELDS: &[&str] = &[
    "a", "b", "value", "index", "flag", "head", "x", "y", "0", "1", "len", "missing", "r#type",
];

/// Methods: all that lower (a sample of them) and some that do not.
const METHODS: &[&str] = &[
    "min",
    "max",
    "clamp",
    "abs",
    "mul_add",
    "sqrt",
    "powi",
    "powf",
    "floor",
    "is_nan",
    "is_finite",
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "wrapping_div",
    "wrapping_rem",
    "wrapping_neg",
    "wrapping_shl",
    "wrapping_shr",
    "saturating_add",
    "saturating_sub",
    "rotate_left",
    "count_ones",
    "leading_zeros",
    "trailing_zeros",
    "exp",
    "ln",
    "tanh",
    // Not supported:
    "pow",
    "checked_add",
    "to_bits",
    "clone",
    "into",
    "unwrap",
    "signum",
    "hypot",
    "min_by",
    "len",
    "iter",
];

/// Function paths: the supported call forms and lookalikes.
const CALLS: &[&str] = &[
    "f32::max",
    "f64::min",
    "i64::wrapping_add",
    "u32::wrapping_mul",
    "u8::saturating_sub",
    "f64::sqrt",
    "u32::count_ones",
    "i32::rotate_left",
    "f32::mul_add",
    "std::cmp::min",
    "std::cmp::max",
    "core::cmp::max",
    "cmp::min",
    "min",
    "max",
    "Self::combine",
    "Self::identity",
    "Elem::default",
    "<f32>::max",
    "<f32 as Ord>::max",
    "f32::from",
    "i32::pow",
    "Affine",
    "Pair",
    "drop",
    "foo",
    "std::mem::swap",
    "Some",
];

/// Paths used as values: constants that lower and many that do not.
const PATHS: &[&str] = &[
    "f32::MAX",
    "f32::MIN",
    "f64::INFINITY",
    "f32::NEG_INFINITY",
    "f64::NAN",
    "f32::EPSILON",
    "i32::MIN",
    "i64::MAX",
    "u8::MAX",
    "u64::MIN",
    "u32::BITS",
    "f32::MIN_POSITIVE",
    "core::f32::MAX",
    "std::f64::consts::PI",
    "core::primitive::i32::MAX",
    "Self::Elem",
    "Self::ONE",
    "Elem::MAX",
    "None",
    "crate::X",
    "super::Y",
];

/// Literals, well-formed and odd: overflowing, unknown suffixes, huge, other kinds.
const LITERALS: &[&str] = &[
    "0",
    "1",
    "2",
    "7",
    "255",
    "0u8",
    "255u8",
    "256u8",
    "-128i8",
    "128i8",
    "0xFF",
    "0xFFFF_FFFFu32",
    "0x1_0000_0000u32",
    "0b1010",
    "0o17",
    "1_000_000",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "18446744073709551615u64",
    "340282366920938463463374607431768211456",
    "1i128",
    "1u128",
    "1usize",
    "1isize",
    "1u7",
    "1f16",
    "1f128",
    "0.0",
    "-0.0",
    "1.0",
    "1.5f32",
    "1f32",
    "2f64",
    "1e10",
    "1e38f32",
    "1e39f32",
    "1e309",
    "1e-400f64",
    "3.4028236e38f32",
    "1.",
    "0.1_f32",
    "true",
    "false",
    "'a'",
    "b'a'",
    "\"s\"",
    "b\"s\"",
    "c\"s\"",
    "r\"raw\"",
];

/// Types, supported and not.
const TYPES: &[&str] = &[
    "f32",
    "f64",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "bool",
    "char",
    "usize",
    "isize",
    "u128",
    "i128",
    "f16",
    "core::primitive::f32",
    "std::primitive::u64",
    "std::f32",
    "Affine",
    "Pair",
    "crate::Affine",
    "Self",
    "Self::Elem",
    "Elem",
    "Option<f32>",
    "Vec<u8>",
    "&f32",
    "&mut Affine",
    "[u8; 4]",
    "[f32]",
    "(f32, f32)",
    "(f32,)",
    "()",
    "!",
    "_",
    "*const f32",
    "fn(f32) -> f32",
    "dyn Copy",
    "impl Copy",
    "<T as Tr>::Out",
    "(f32)",
    "T",
    "String",
];

const BINARY_OPS: &[&str] = &[
    "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">=", "&&",
    "||",
];
const ASSIGN_OPS: &[&str] = &[
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
];
const UNARY_OPS: &[&str] = &["-", "!", "*", "&", "&mut "];
const MACROS: &[&str] = &[
    "println!(\"{}\", {})",
    "assert!({})",
    "debug_assert!({})",
    "vec![{}]",
    "matches!({}, _)",
    "panic!(\"{}\")",
    "unreachable!()",
    "todo!()",
    "include!(\"/etc/passwd\")",
    "env!(\"HOME\")",
    "concat!(\"a\", {})",
];

pub fn name() -> impl Strategy<Value = String> {
    select(NAMES).prop_map(String::from)
}

pub fn ty() -> impl Strategy<Value = String> {
    select(TYPES).prop_map(String::from)
}

fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        select(LITERALS).prop_map(String::from),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<u64>().prop_map(|v| format!("{v}u64")),
        any::<f32>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| format!("{v:?}f32")),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| format!("{v:e}")),
    ]
}

fn leaf() -> BoxedStrategy<String> {
    prop_oneof![
        3 => name(),
        3 => literal(),
        2 => select(PATHS).prop_map(String::from),
        2 => (name(), select(FIELDS)).prop_map(|(n, f)| format!("{n}.{f}")),
        1 => Just("()".to_string()),
    ]
    .boxed()
}

fn pattern() -> impl Strategy<Value = String> {
    prop_oneof![
        name(),
        Just("_".to_string()),
        name().prop_map(|n| format!("mut {n}")),
        (name(), name()).prop_map(|(a, b)| format!("({a}, {b})")),
        Just("Affine { a, b }".to_string()),
        Just("Affine { a, .. }".to_string()),
        Just("Pair(x, y)".to_string()),
        Just("Some(x)".to_string()),
        Just("ref x".to_string()),
        Just("x @ 1..=3".to_string()),
        literal(),
        Just("[a, b]".to_string()),
        Just("&x".to_string()),
        Just("0 | 1".to_string()),
    ]
}

/// An expression built from `inner` (smaller expressions).
fn compound(inner: BoxedStrategy<String>) -> BoxedStrategy<String> {
    let e = || inner.clone();
    prop_oneof![
        6 => (e(), select(BINARY_OPS), e()).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
        4 => (e(), select(BINARY_OPS), e()).prop_map(|(a, op, b)| format!("({a} {op} {b})")),
        2 => (select(UNARY_OPS), e()).prop_map(|(op, a)| format!("{op}{a}")),
        2 => (e(), ty()).prop_map(|(a, t)| format!("({a} as {t})")),
        2 => (e(), ty()).prop_map(|(a, t)| format!("{a} as {t}")),
        2 => (e(), select(FIELDS)).prop_map(|(a, f)| format!("({a}).{f}")),
        4 => (e(), select(METHODS), proptest::collection::vec(e(), 0..3))
            .prop_map(|(a, m, args)| format!("({a}).{m}({})", args.join(", "))),
        1 => (e(), select(METHODS), e()).prop_map(|(a, m, b)| format!("{a}.{m}::<f32>({b})")),
        3 => (select(CALLS), proptest::collection::vec(e(), 0..4))
            .prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
        3 => (e(), e(), e()).prop_map(|(c, a, b)| format!("if {c} {{ {a} }} else {{ {b} }}")),
        1 => (e(), e(), e(), e()).prop_map(|(c, a, d, b)| {
            format!("if {c} {{ {a} }} else if {d} {{ {b} }} else {{ {a} }}")
        }),
        1 => (e(), e()).prop_map(|(c, a)| format!("if {c} {{ {a} }}")),
        1 => (pattern(), e(), e(), e())
            .prop_map(|(p, v, a, b)| format!("if let {p} = {v} {{ {a} }} else {{ {b} }}")),
        1 => (e(), pattern(), e(), e())
            .prop_map(|(v, p, a, b)| format!("match {v} {{ {p} => {a}, _ => {b} }}")),
        1 => (e(), e(), e()).prop_map(|(v, a, b)| format!("match {v} {{ 0 if {a} => {b}, _ => {a} }}")),
        2 => (proptest::collection::vec(statement(e()), 0..3), e())
            .prop_map(|(stmts, tail)| format!("{{ {} {tail} }}", stmts.concat())),
        3 => (select(&["Affine", "Pair", "Self", "Elem", "Other", "crate::Affine"][..]),
              proptest::collection::vec((select(FIELDS), e()), 0..4), proptest::option::of(e()))
            .prop_map(|(ty, fields, base)| {
                let fields: Vec<String> =
                    fields.into_iter().map(|(f, v)| format!("{f}: {v}")).collect();
                let base = base.map_or(String::new(), |b| format!(", ..{b}"));
                format!("{ty} {{ {}{base} }}", fields.join(", "))
            }),
        1 => Just("Affine { a, b }".to_string()),
        1 => (e(), e()).prop_map(|(a, b)| format!("({a}, {b})")),
        1 => e().prop_map(|a| format!("({a},)")),
        1 => (e(), e()).prop_map(|(a, b)| format!("[{a}, {b}]")),
        1 => e().prop_map(|a| format!("[{a}; 4]")),
        1 => (e(), e()).prop_map(|(a, i)| format!("{a}[{i}]")),
        1 => (e(), e()).prop_map(|(a, b)| format!("{a}..{b}")),
        1 => e().prop_map(|a| format!("(|x| {a})(l)")),
        1 => e().prop_map(|a| format!("move || {a}")),
        1 => e().prop_map(|a| format!("loop {{ break {a}; }}")),
        1 => (e(), e()).prop_map(|(c, a)| format!("while {c} {{ {a}; }}")),
        1 => e().prop_map(|a| format!("for i in 0..4 {{ {a}; }}")),
        1 => e().prop_map(|a| format!("return {a}")),
        1 => e().prop_map(|a| format!("{a}?")),
        1 => e().prop_map(|a| format!("{a}.await")),
        1 => e().prop_map(|a| format!("async {{ {a} }}")),
        1 => e().prop_map(|a| format!("unsafe {{ {a} }}")),
        1 => e().prop_map(|a| format!("const {{ {a} }}")),
        1 => e().prop_map(|a| format!("'label: {{ {a} }}")),
        1 => (select(MACROS), e()).prop_map(|(m, a)| m.replace("{}", &a)),
        1 => (name(), select(ASSIGN_OPS), e()).prop_map(|(n, op, a)| format!("{n} {op} {a}")),
        1 => (e(), e()).prop_map(|(a, b)| format!("if let Some(x) = {a} && {b} {{ x }} else {{ {a} }}")),
    ]
    .boxed()
}

/// An expression, nested up to a few levels.
pub fn expr() -> BoxedStrategy<String> {
    leaf().prop_recursive(4, 48, 4, compound).boxed()
}

/// A statement (with its `;` where it needs one).
fn statement(e: BoxedStrategy<String>) -> BoxedStrategy<String> {
    let e = move || e.clone();
    prop_oneof![
        4 => (name(), e()).prop_map(|(n, v)| format!("let {n} = {v};")),
        2 => (name(), ty(), e()).prop_map(|(n, t, v)| format!("let {n}: {t} = {v};")),
        2 => (name(), e()).prop_map(|(n, v)| format!("let mut {n} = {v};")),
        1 => (pattern(), e()).prop_map(|(p, v)| format!("let {p} = {v};")),
        1 => name().prop_map(|n| format!("let {n};")),
        1 => (name(), ty()).prop_map(|(n, t)| format!("let {n}: {t};")),
        1 => (name(), e(), e()).prop_map(|(n, v, d)| format!("let {n} = {v} else {{ return {d}; }};")),
        2 => e().prop_map(|v| format!("{v};")),
        2 => (name(), select(ASSIGN_OPS), e()).prop_map(|(n, op, v)| format!("{n} {op} {v};")),
        1 => (name(), select(FIELDS), e()).prop_map(|(n, f, v)| format!("{n}.{f} = {v};")),
        1 => e().prop_map(|v| format!("return {v};")),
        1 => Just(";".to_string()),
        1 => Just("fn helper(x: f32) -> f32 { x }".to_string()),
        1 => Just("const C: f32 = 1.0;".to_string()),
        1 => Just("static S: i32 = 0;".to_string()),
        1 => Just("use std::cmp::max;".to_string()),
        1 => Just("struct Local;".to_string()),
        1 => Just("macro_rules! m { () => {} }".to_string()),
        1 => e().prop_map(|v| format!("println!(\"{{}}\", {v});")),
    ]
    .boxed()
}

/// A function body: statements and an optional tail expression, braces included.
pub fn body() -> BoxedStrategy<String> {
    (
        proptest::collection::vec(statement(expr()), 0..4),
        proptest::option::weighted(0.85, expr()),
    )
        .prop_map(|(stmts, tail)| format!("{{ {} {} }}", stmts.concat(), tail.unwrap_or_default()))
        .boxed()
}

/// The element type an operator names (mostly ones the generated files declare).
fn elem_ty() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(&["f32", "f64", "i32", "u8", "i64", "u64", "Affine", "Pair", "Seg"][..])
            .prop_map(String::from),
        1 => ty(),
    ]
}

fn identity_fn(elem: String) -> BoxedStrategy<String> {
    let sig = prop_oneof![
        8 => Just(format!("fn identity() -> {elem}")),
        1 => Just("fn identity() -> Self::Elem".to_string()),
        1 => Just(format!("fn identity(x: {elem}) -> {elem}")),
        1 => Just(format!("fn identity(&self) -> {elem}")),
        1 => Just(format!("const fn identity() -> {elem}")),
        1 => Just(format!("async fn identity() -> {elem}")),
        1 => Just(format!("unsafe fn identity() -> {elem}")),
        1 => Just(format!("extern \"C\" fn identity() -> {elem}")),
        1 => Just("fn identity<T>() -> T".to_string()),
        1 => Just("fn identity()".to_string()),
        1 => ty().prop_map(|t| format!("fn identity() -> {t}")),
        1 => Just(format!("pub fn identity() -> {elem}")),
    ];
    (sig, body()).prop_map(|(s, b)| format!("{s} {b}")).boxed()
}

fn combine_fn(elem: String) -> BoxedStrategy<String> {
    let e = elem.clone();
    let params = prop_oneof![
        8 => (name(), name()).prop_map(move |(p, q)| format!("{p}: {e}, {q}: {e}")),
        1 => Just(format!("mut l: {elem}, mut r: {elem}")),
        1 => Just("l: Self::Elem, r: Elem".to_string()),
        1 => Just(format!("_: {elem}, _: {elem}")),
        1 => Just(format!("(a, b): ({elem}, {elem}), r: {elem}")),
        1 => Just(format!("Affine {{ a, b }}: Affine, r: {elem}")),
        1 => Just(format!("l: &{elem}, r: {elem}")),
        1 => Just(format!("l: {elem}")),
        1 => Just(String::new()),
        1 => Just(format!("l: {elem}, r: {elem}, extra: {elem}")),
        1 => Just(format!("self, r: {elem}")),
        1 => Just(format!("&self, l: {elem}, r: {elem}")),
        1 => Just(format!("l: {elem}, r: {elem},")),
        1 => (ty(), ty()).prop_map(|(a, b)| format!("l: {a}, r: {b}")),
    ];
    let elem2 = elem.clone();
    let ret = prop_oneof![
        8 => Just(format!(" -> {elem2}")),
        1 => Just(" -> Self::Elem".to_string()),
        1 => Just(String::new()),
        1 => ty().prop_map(|t| format!(" -> {t}")),
    ];
    let generics = prop_oneof![8 => Just(""), 1 => Just("<T>"), 1 => Just("<'a>")];
    (generics, params, ret, body())
        .prop_map(|(g, p, r, b)| format!("fn combine{g}({p}){r} {b}"))
        .boxed()
}

/// The items inside an `impl ScanOp` block, in a random order, some missing or doubled.
fn impl_items() -> BoxedStrategy<String> {
    elem_ty()
        .prop_flat_map(|elem| {
            let extra = prop_oneof![
                Just("fn device_op() -> OpSpec { todo!() }".to_string()),
                Just("const ONE: f32 = 1.0;".to_string()),
                Just("type Other = f32;".to_string()),
                Just("fn helper(x: f32) -> f32 { x }".to_string()),
                Just("some_macro!();".to_string()),
                ty().prop_map(|t| format!("type Elem = {t};")),
                Just("type Elem<T> = T;".to_string()),
            ];
            (
                proptest::option::weighted(0.9, Just(format!("type Elem = {elem};"))),
                proptest::option::weighted(0.9, identity_fn(elem.clone())),
                proptest::option::weighted(0.9, combine_fn(elem)),
                proptest::collection::vec(extra, 0..2),
            )
        })
        .prop_flat_map(|(elem, identity, combine, extra)| {
            let mut items: Vec<String> = [elem, identity, combine]
                .into_iter()
                .flatten()
                .chain(extra)
                .collect();
            items.sort();
            Just(items).prop_shuffle()
        })
        .prop_map(|items| items.join("\n    "))
        .boxed()
}

/// `#[scan_op] impl ScanOp for Op { ... }` and its many malformed relatives.
pub fn scan_op_impl() -> BoxedStrategy<String> {
    let attrs = prop_oneof![
        8 => Just("#[scan_op]"),
        1 => Just("#[scangen::scan_op]"),
        1 => Just("#[scan_op(extra)]"),
        1 => Just("#[inline] #[scan_op]"),
        1 => Just(""),
    ];
    let head = prop_oneof![
        8 => Just("impl ScanOp for".to_string()),
        1 => Just("impl scangen::ScanOp for".to_string()),
        1 => Just("impl !ScanOp for".to_string()),
        1 => Just("impl Other for".to_string()),
        1 => Just("impl ScanOp<f32> for".to_string()),
        1 => Just("impl<T> ScanOp for".to_string()),
        1 => Just("impl<T: Copy> ScanOp for".to_string()),
        1 => Just("unsafe impl ScanOp for".to_string()),
        1 => Just("impl".to_string()),
    ];
    let self_ty = prop_oneof![
        8 => select(&["Op", "Compose", "RunningMax", "SegSum"][..]).prop_map(String::from),
        1 => Just("crate::ops::Op".to_string()),
        1 => Just("Op<T>".to_string()),
        1 => Just("r#Op".to_string()),
        1 => ty(),
    ];
    let where_clause = prop_oneof![8 => Just(""), 1 => Just(" where T: Copy")];
    (attrs, head, self_ty, where_clause, impl_items())
        .prop_map(|(a, h, s, w, items)| format!("{a}\n{h} {s}{w} {{\n    {items}\n}}"))
        .boxed()
}

fn field_ty() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => select(&["f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"][..])
            .prop_map(String::from),
        1 => Just("core::primitive::f32".to_string()),
        1 => Just("std::primitive::u8".to_string()),
        2 => ty(),
    ]
}

/// An element struct (or an enum or union in its place) with random attributes and fields.
pub fn element_item() -> BoxedStrategy<String> {
    let repr = prop_oneof![
        6 => Just("#[repr(C)]"),
        1 => Just(""),
        1 => Just("#[repr(C, packed)]"),
        1 => Just("#[repr(C, align(16))]"),
        1 => Just("#[repr(align(8))]"),
        1 => Just("#[repr(transparent)]"),
        1 => Just("#[repr(u8)]"),
        1 => Just("#[repr]"),
        1 => Just("#[repr = \"C\"]"),
        1 => Just("#[repr(C)] #[repr(packed(2))]"),
        1 => Just("#[repr(C(x))]"),
    ];
    let derive = prop_oneof![
        6 => Just("#[derive(Clone, Copy, ScanElement)]"),
        1 => Just("#[derive(Clone, Copy, Debug, PartialEq, scangen::ScanElement)]"),
        1 => Just("#[derive(ScanElement)]"),
        1 => Just("#[derive(ScanElement, Copy, Clone)]"),
        1 => Just("#[derive]"),
        1 => Just("#[derive = \"ScanElement\"]"),
        1 => Just("#[derive(ScanElement(x))]"),
        1 => Just("#[derive(Copy)]"),
        1 => Just("#[derive(Clone, Copy, ScanElement)] #[derive(Debug)]"),
    ];
    let name = select(&["Affine", "Pair", "Seg", "Op", "Arg"][..]);
    let generics = prop_oneof![8 => Just(""), 1 => Just("<T>"), 1 => Just("<const N: usize>")];
    let fields = proptest::collection::vec((select(FIELDS), field_ty()), 0..4).prop_map(|fs| {
        fs.into_iter()
            .filter(|(f, _)| !f.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .map(|(f, t)| format!("pub {f}: {t},"))
            .collect::<Vec<_>>()
            .join(" ")
    });
    let body = prop_oneof![
        6 => fields.prop_map(|f| format!(" {{ {f} }}")),
        1 => (field_ty(), field_ty()).prop_map(|(a, b)| format!("({a}, {b});")),
        1 => Just(";".to_string()),
        1 => Just(" {}".to_string()),
    ];
    let keyword = prop_oneof![8 => Just("struct"), 1 => Just("enum"), 1 => Just("union")];
    (repr, derive, keyword, name, generics, body)
        .prop_map(|(r, d, k, n, g, b)| {
            let b = match k {
                "enum" => " { A, B(f32) }".to_string(),
                _ => b,
            };
            format!("{d}\n{r}\npub {k} {n}{g}{b}")
        })
        .boxed()
}

/// Any item an operator file may hold, including ones that would do something if the file
/// were compiled (`mod x;`, `include!`, build-script lookalikes): the lowering only parses.
fn other_item() -> BoxedStrategy<String> {
    prop_oneof![
        Just("use scangen::{scan_op, ScanElement, ScanOp};".to_string()),
        Just("impl Copy for Affine {}".to_string()),
        Just("impl Clone for Pair { fn clone(&self) -> Self { *self } }".to_string()),
        Just("pub struct Op;".to_string()),
        Just("fn main() { std::process::Command::new(\"sh\").spawn().unwrap(); }".to_string()),
        Just("mod evil;".to_string()),
        Just("include!(\"/etc/passwd\");".to_string()),
        Just("#[path = \"/etc/passwd\"] mod p;".to_string()),
        Just("extern crate std;".to_string()),
        Just("const _: () = { panic!() };".to_string()),
        Just("macro_rules! m { ($x:expr) => { $x } }".to_string()),
        Just("trait ScanOp { type Elem; }".to_string()),
        Just("#![allow(unused)]".to_string()),
    ]
    .boxed()
}

/// A whole operator file. It starts with an empty line, so no construct of it is on line 1:
/// an error reported at 1:1 did not come from the file's text.
pub fn ops_file() -> BoxedStrategy<String> {
    let item = prop_oneof![
        4 => scan_op_impl(),
        3 => element_item(),
        2 => other_item(),
        1 => (scan_op_impl(), element_item())
            .prop_map(|(i, e)| format!("mod inner {{\n{e}\n{i}\n}}")),
    ];
    proptest::collection::vec(item, 0..5)
        .prop_map(|items| format!("\n{}\n", items.join("\n\n")))
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Raw token streams

/// One token, of every kind Rust's lexer produces, weighted towards ones the lowering sees.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => name(),
        2 => select(&[
            "fn", "let", "mut", "if", "else", "match", "loop", "while", "for", "in", "return",
            "as", "impl", "struct", "type", "const", "static", "use", "mod", "pub", "unsafe",
            "async", "await", "move", "ref", "where", "dyn", "break", "continue", "crate",
            "super", "true", "false", "yield", "box", "try", "macro_rules",
        ][..]).prop_map(String::from),
        2 => literal(),
        1 => select(METHODS).prop_map(String::from),
        1 => ty(),
        3 => select(&[
            "+", "-", "*", "/", "%", "^", "!", "&", "|", "&&", "||", "<<", ">>", "+=", "-=",
            "=", "==", "!=", ">", "<", ">=", "<=", "@", "_", ".", "..", "...", "..=", ",", ";",
            ":", "::", "->", "=>", "#", "$", "?", "~", "'a", "'static",
        ][..]).prop_map(String::from),
    ]
}

/// A token stream with balanced delimiters.
pub fn tokens() -> BoxedStrategy<String> {
    let leaf = proptest::collection::vec(token(), 0..8).prop_map(|ts| ts.join(" "));
    leaf.prop_recursive(3, 40, 4, |inner| {
        (
            proptest::collection::vec(token(), 0..4),
            select(&[("(", ")"), ("[", "]"), ("{", "}")][..]),
            inner.clone(),
            proptest::collection::vec(token(), 0..4),
            proptest::option::of(inner),
        )
            .prop_map(|(before, (open, close), within, after, more)| {
                format!(
                    "{} {open} {within} {close} {} {}",
                    before.join(" "),
                    after.join(" "),
                    more.unwrap_or_default()
                )
            })
    })
    .boxed()
}

/// Random tokens put where the lowering looks: a whole body, an expression, the parameters,
/// the element type, the impl's items, a struct's fields, an attribute's arguments.
pub fn tokens_in_a_hole() -> BoxedStrategy<String> {
    let op = |combine_body: &str, params: &str, elem: &str, extra: &str| {
        format!(
            "\n#[scan_op]\nimpl ScanOp for Op {{\n    type Elem = {elem};\n    fn identity() -> {elem} {{ 0 }}\n    fn combine({params}) -> {elem} {{ {combine_body} }}\n    {extra}\n}}\n"
        )
    };
    prop_oneof![
        3 => tokens().prop_map(move |t| op(&t, "l: i32, r: i32", "i32", "")),
        2 => tokens().prop_map(move |t| op(&format!("l + ({t})"), "l: i32, r: i32", "i32", "")),
        1 => tokens().prop_map(move |t| op("l", &t, "i32", "")),
        1 => tokens().prop_map(move |t| op("l", "l: Affine, r: Affine", &t, "")),
        1 => tokens().prop_map(move |t| op("l", "l: i32, r: i32", "i32", &t)),
        1 => tokens().prop_map(|t| format!("\n#[scan_op]\nimpl ScanOp for Op {{ {t} }}\n")),
        1 => tokens().prop_map(|t| format!("\n#[derive(Clone, Copy, ScanElement)]\n#[repr(C)]\npub struct Affine {{ {t} }}\n")),
        1 => tokens().prop_map(|t| format!("\n#[derive(Clone, Copy, ScanElement)]\n#[repr({t})]\npub struct Affine {{ a: f32 }}\n")),
        1 => tokens().prop_map(|t| format!("\n#[derive({t})]\n#[repr(C)]\npub struct Affine {{ a: f32 }}\n")),
        1 => tokens().prop_map(|t| format!("\n{t}\n")),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------------
// Mostly valid operators

const INT_PRIMS: &[&str] = &["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"];
const FLOAT_PRIMS: &[&str] = &["f32", "f64"];

/// An expression of primitive type `t` over `l` and `r`, built from what the lowering
/// supports, so most of them lower: these reach the type checks and the C++ emission that
/// random sources rarely get to.
fn typed_expr(t: &'static str) -> BoxedStrategy<String> {
    let float = FLOAT_PRIMS.contains(&t);
    let signed = float || t.starts_with('i');
    let leaf = prop_oneof![
        4 => select(&["l", "r"][..]).prop_map(String::from),
        2 => (0u8..=100).prop_map(move |v| if float { format!("{v}.5") } else { v.to_string() }),
        1 => (0u8..=100).prop_map(move |v| if float { format!("{v}.0{t}") } else { format!("{v}{t}") }),
        1 => select(&["MAX", "MIN"][..]).prop_map(move |c| format!("{t}::{c}")),
    ];
    leaf.prop_recursive(4, 32, 3, move |inner| {
        let e = || inner.clone();
        let arith = if float { &["+", "-", "*", "/"][..] } else { &["+", "-", "*", "/", "%", "&", "|", "^"][..] };
        let methods = if float {
            &["max", "min", "powf", "abs", "sqrt", "floor", "exp"][..]
        } else {
            &["max", "min", "wrapping_add", "wrapping_mul", "saturating_sub", "wrapping_sub"][..]
        };
        prop_oneof![
            4 => (e(), select(arith), e()).prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            3 => (e(), select(methods), e()).prop_map(|(a, m, b)| {
                match m {
                    "abs" | "sqrt" | "floor" | "exp" => format!("({a}).{m}()"),
                    _ => format!("({a}).{m}({b})"),
                }
            }),
            1 => (e(), e()).prop_map(move |(a, b)| format!("{t}::max({a}, {b})")),
            2 => (e(), select(&["<", "<=", ">", ">=", "==", "!="][..]), e(), e(), e())
                .prop_map(|(a, cmp, b, x, y)| format!("if {a} {cmp} {b} {{ {x} }} else {{ {y} }}")),
            2 => (e(), e()).prop_map(|(a, b)| format!("{{ let t = {a}; t + {b} }}")),
            1 => (e(), e()).prop_map(move |(a, b)| format!("{{ let mut t: {t} = {a}; t = t - {b}; t }}")),
            1 => e().prop_map(move |a| format!("((({a}) as f64) as {t})")),
            1 => e().prop_map(move |a| if signed { format!("-({a})") } else { format!("!({a})") }),
            1 => (e(), 0u8..8).prop_map(move |(a, s)| if float { format!("({a}).powi({s})") } else { format!("({a}).rotate_left({s})") }),
        ]
    })
    .boxed()
}

/// `#[scan_op] impl ScanOp for Op` on a primitive with a supported combine and identity.
pub fn valid_ish_impl() -> BoxedStrategy<String> {
    select([INT_PRIMS, FLOAT_PRIMS].concat())
        .prop_flat_map(|t| {
            let identity = if FLOAT_PRIMS.contains(&t) { "0.0" } else { "0" };
            (Just(t), Just(identity), typed_expr(t))
        })
        .prop_map(|(t, identity, body)| {
            format!(
                "#[scan_op]\nimpl ScanOp for Op {{\n    type Elem = {t};\n    fn identity() -> {t} {{ {identity} }}\n    fn combine(l: {t}, r: {t}) -> {t} {{\n        {body}\n    }}\n}}"
            )
        })
        .boxed()
}
