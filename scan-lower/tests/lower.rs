//! Lowering: the C++ text of several operators and the text of the errors, as inline
//! snapshots. Positions in error texts are line:column in the snippet.

use scan_lower::{lower_impl, parse_ops_file};

/// The lowered bodies, or the errors as `line:column: message`.
fn lower(src: &str) -> String {
    let item: syn::ItemImpl = syn::parse_str(src).expect("valid Rust");
    match lower_impl(&item) {
        Ok(op) => format!(
            "combine({}, {}):\n{}\nidentity():\n{}",
            op.lhs, op.rhs, op.combine_body, op.identity_body
        ),
        Err(e) => e.render(),
    }
}

fn element_errors(src: &str) -> String {
    let input: syn::DeriveInput = syn::parse_str(src).expect("valid Rust");
    match scan_lower::element_struct(&input) {
        Ok(el) => format!("{:?}", el.decl),
        Err(e) => e.render(),
    }
}

#[test]
fn affine_compose() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Compose {
        type Elem = Affine;
        fn identity() -> Affine { Affine { a: 1.0, b: 0.0 } }
        fn combine(l: Affine, r: Affine) -> Affine {
            Affine { b: r.a * l.b + r.b, a: l.a * r.a }
        }
    }"#), @r#"
        combine(l, r):
        Affine out0;
        out0.b = rs_add(rs_mul(r.a, l.b), r.b);
        out0.a = rs_mul(l.a, r.a);
        return out0;
        identity():
        Affine out0;
        out0.a = 1.0f;
        out0.b = 0.0f;
        return out0;
    "#);
}

#[test]
fn argmax_with_ties_is_a_ternary() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for ArgMax {
        type Elem = Arg;
        fn identity() -> Arg { Arg { value: f32::NEG_INFINITY, index: u32::MAX } }
        fn combine(l: Arg, r: Arg) -> Arg {
            if r.value > l.value || (r.value == l.value && r.index < l.index) { r } else { l }
        }
    }"#), @r#"
        combine(l, r):
        return (r.value > l.value || (r.value == l.value && r.index < l.index)) ? r : l;
        identity():
        Arg out0;
        out0.value = rs_neg_infinity<f32>();
        out0.index = rs_max_value<u32>();
        return out0;
    "#);
}

#[test]
fn segmented_sum_branches_with_statements() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for SegSum {
        type Elem = Seg;
        fn identity() -> Seg { Seg { flag: 0, value: 0 } }
        fn combine(l: Seg, r: Seg) -> Seg {
            if r.flag != 0 {
                r
            } else if l.flag == 2 {
                Seg { flag: 2, ..r }
            } else {
                let v = l.value.wrapping_add(r.value);
                Seg { flag: l.flag | r.flag, value: v }
            }
        }
    }"#), @r#"
        combine(l, r):
        if (r.flag != 0) {
            return r;
        } else if (l.flag == 2) {
            Seg out0 = r;
            out0.flag = 2;
            return out0;
        } else {
            auto v = rs_wrapping_add(l.value, r.value);
            Seg out1;
            out1.flag = rs_bitor(l.flag, r.flag);
            out1.value = v;
            return out1;
        }
        identity():
        Seg out0;
        out0.flag = 0;
        out0.value = 0;
        return out0;
    "#);
}

#[test]
fn primitive_element_and_literal_types() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Odd {
        type Elem = f32;
        fn identity() -> f32 { -0.0 }
        fn combine(a: f32, b: f32) -> f32 {
            let tenth = 0.1;
            let n: i64 = -9223372036854775808;
            let big = 18446744073709551615u64;
            let k = (a * tenth) as i32 + 1;
            let s = (k << 3) >> 1u8;
            if a.is_nan() { return b; }
            let y = if k > 2 { let z = a + 1.5; z * z } else if a < 0.0 { -b } else { 2.0 };
            (y.mul_add(tenth, -0.5) + (n as f32) + (big % 7) as f32 + s as f32).max(f32::EPSILON)
        }
    }"#), @r#"
        combine(a, b):
        i64 n = rs_min_value<i64>();
        u64 big = (u64)18446744073709551615ull;
        i32 k = rs_add(rs_cast<i32>(a * 0.1f), 1);
        i32 s = rs_shr(rs_shl(k, 3), (u8)1);
        if (rs_is_nan(a)) {
            return b;
        }
        f32 tmp0;
        if (k > 2) {
            f32 z = a + 1.5f;
            tmp0 = z * z;
        } else {
            tmp0 = (a < 0.0f) ? (-b) : 2.0f;
        }
        f32 y = tmp0;
        return rs_max(((rs_mul_add(y, 0.1f, -0.5f) + rs_cast<f32>(n)) + rs_cast<f32>(rs_rem(big, (u64)7))) + rs_cast<f32>(s), rs_epsilon<f32>());
        identity():
        return -0.0f;
    "#);
}

#[test]
fn struct_field_literals_take_the_field_type() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for M {
        type Elem = Mixed;
        fn identity() -> Mixed { Mixed { x: 0.1, y: 0.5, n: -1, bits: 5000000000 } }
        fn combine(l: Mixed, r: Mixed) -> Mixed {
            let mut t = r;
            t.x = l.x * 0.5 + 0.1;
            t.n += 1;
            t.bits = l.bits.rotate_left(7) ^ 3;
            t
        }
    }"#), @r#"
        combine(l, r):
        Mixed t = r;
        t.x = rs_add(rs_mul(l.x, (decltype(Mixed::x))0.5f), rs_float_lit<decltype(Mixed::x)>(0.1f, 0.1));
        t.n = rs_add(t.n, (decltype(Mixed::n))1);
        t.bits = rs_bitxor(rs_rotate_left(l.bits, (u32)7), (decltype(Mixed::bits))3);
        return t;
        identity():
        Mixed out0;
        out0.x = rs_float_lit<decltype(Mixed::x)>(0.1f, 0.1);
        out0.y = 0.5f;
        out0.n = -1;
        out0.bits = (decltype(Mixed::bits))5000000000ll;
        return out0;
    "#);
}

#[test]
fn names_are_made_valid_cpp() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Names {
        type Elem = u32;
        fn identity() -> u32 { 0 }
        fn combine(int: u32, new: u32) -> u32 {
            let x = int ^ new;
            let x = x.count_ones() + 1;
            let tmp0 = x;
            let double: u32 = tmp0 * 2;
            { let x = double; x + tmp0 }
        }
    }"#), @r#"
        combine(int_, new_):
        u32 x = rs_bitxor(int_, new_);
        u32 x_1 = rs_add(rs_count_ones(x), (u32)1);
        u32 tmp0 = x_1;
        u32 double_ = rs_mul(tmp0, (u32)2);
        u32 x_2 = double_;
        return rs_add(x_2, tmp0);
        identity():
        return 0;
    "#);
}

#[test]
fn short_circuit_and_evaluation_order() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Sc {
        type Elem = i32;
        fn identity() -> i32 { 0 }
        fn combine(a: i32, b: i32) -> i32 {
            let mut m = a;
            let c = a > 0 && { let q = b / a; q > 2 };
            let d = m + { m = 5; m };
            if c { d } else { m }
        }
    }"#), @r#"
        combine(a, b):
        i32 m = a;
        bool tmp0 = a > 0;
        if (tmp0) {
            i32 q = rs_div(b, a);
            tmp0 = q > 2;
        }
        bool c = tmp0;
        const i32 tmp1 = m;
        m = 5;
        i32 d = rs_add(tmp1, m);
        return c ? d : m;
        identity():
        return 0;
    "#);
}

#[test]
fn unsupported_constructs_are_all_reported() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Bad {
        type Elem = f32;
        fn identity() -> f32 { 0.0 }
        fn combine(a: f32, b: f32) -> f32 {
            let v = match a as i32 { 0 => 1.0, _ => 2.0 };
            for i in 0..3 {}
            loop {}
            let r = &a;
            let t = (a, b);
            let s = "text";
            let mut n = 0;
            let q = if a > b { a };
            std::f32::consts::PI + foo(a) + a.hypot(b) + [1.0][0] + (|x| x)(1.0) + println!("x") + GLOBAL
        }
    }"#), @r#"
        5:21: `match` cannot be lowered to CUDA: use `if`/`else`
        6:13: `for` loops cannot be lowered to CUDA: a scan operator combines two elements in constant time; write the steps out or restructure the element
        7:13: `loop` cannot be lowered to CUDA: a scan operator combines two elements in constant time; write the steps out or restructure the element
        8:21: references cannot be lowered to CUDA: scan elements are passed by value; remove the `&`
        9:21: tuples cannot be lowered to CUDA: use a #[derive(ScanElement)] struct with named fields
        10:21: string literals cannot be lowered to CUDA
        11:13: cannot infer the type of `n` for CUDA: annotate it (`let mut n: i64 = ...;`) or suffix the literal
        12:21: an `if` without `else` has no value: add an `else` branch, or use it as a statement
        13:13: `std::f32::consts::PI` cannot be lowered to CUDA: only parameters, locals and primitive constants (`i32::MAX`, `u64::MIN`, `f32::INFINITY`, `f32::NEG_INFINITY`, `f32::NAN`, `f32::EPSILON`, `f32::MIN_POSITIVE`) can be used; write other constants' values inline
        13:36: cannot call `foo` in a lowered operator: functions are not lowered to CUDA (inline the function's body), only these: `f32::max(a, b)`-style calls of the supported methods on a primitive type (`i64::wrapping_add(a, b)`, `f64::sqrt(x)`, ...), and `std::cmp::min`/`std::cmp::max`
        13:47: method `.hypot()` cannot be lowered to CUDA; supported methods: `min`, `max`, `clamp`, `abs`, `mul_add`, `sqrt`, `cbrt`, `exp`, `exp2`, `ln`, `log2`, `log10`, `powi`, `powf`, `floor`, `ceil`, `round`, `trunc`, `sin`, `cos`, `tan`, `tanh`, `is_nan`, `is_finite`, `wrapping_add`, `wrapping_sub`, `wrapping_mul`, `wrapping_div`, `wrapping_rem`, `wrapping_neg`, `wrapping_abs`, `wrapping_shl`, `wrapping_shr`, `saturating_add`, `saturating_sub`, `saturating_mul`, `rotate_left`, `rotate_right`, `count_ones`, `count_zeros`, `leading_zeros`, `trailing_zeros`
        13:63: indexing cannot be lowered to CUDA: use a #[derive(ScanElement)] struct with one field per value
        13:70: closures cannot be lowered to CUDA: write the expression inline
        13:84: macro `println!` cannot be lowered to CUDA: write the expression without macros (`assert!`, `println!` and `panic!` have no GPU equivalent)
        13:100: `GLOBAL` cannot be lowered to CUDA: only the operator's parameters and its own `let` bindings can be used (write constants' values inline)
    "#);
}

#[test]
fn signature_mistakes() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Sig {
        type Elem = Pair;
        fn identity(seed: Pair) -> Pair { seed }
        fn combine(&self, a: &Pair) -> Option<Pair> { None }
        fn device_op() -> OpSpec { todo!() }
    }"#), @r#"
        3:21: `identity` takes no arguments: `fn identity() -> Pair`
        4:20: `combine` takes no `self`: `fn combine(lhs: Elem, rhs: Elem) -> Elem`
        4:30: `combine` takes its elements by value: expected `Pair`, found `&Pair`
        4:40: `combine` must return the element type `Pair`, found `Option<Pair>`
        5:12: `device_op` is generated by #[scan_op]: remove this definition
    "#);
    insta::assert_snapshot!(lower(r#"impl ScanOp for Nothing {
        fn helper() {}
    }"#), @r#"
        1:1: missing `type Elem = ...;`: the element type of the scan (a primitive or a #[derive(ScanElement)] struct)
        1:1: missing `fn identity() -> Elem`: the operator's identity element (combine(identity(), x) == x)
        1:1: missing `fn combine(lhs: Elem, rhs: Elem) -> Elem`: the associative operator
    "#);
    insta::assert_snapshot!(lower(r#"impl<T> Other for Gen<T> {
        type Elem = (f32, f32);
        fn identity() -> (f32, f32) { (0.0, 0.0) }
        fn combine(a: (f32, f32), b: (f32, f32)) -> (f32, f32) { a }
    }"#), @r#"
        1:5: #[scan_op] cannot lower a generic impl: the GPU code is generated for one concrete element type (write one impl per type)
        1:9: #[scan_op] goes on `impl ScanOp for YourOp { ... }`
        2:21: `type Elem = (f32, f32);` cannot be a GPU element: use a primitive or a #[derive(ScanElement)] #[repr(C)] struct
        3:39: tuples cannot be lowered to CUDA: use a #[derive(ScanElement)] struct with named fields
    "#);
}

#[test]
fn element_struct_checks() {
    insta::assert_snapshot!(element_errors("#[repr(C)] struct Mixed { flag: u8, value: f64, tag: u16 }"), @r#"StructDecl { name: "Mixed", fields: [StructField { name: "flag", ty: U8 }, StructField { name: "value", ty: F64 }, StructField { name: "tag", ty: U16 }], size: 24, align: 8 }"#);
    insta::assert_snapshot!(element_errors("#[derive(Clone)] #[repr(C, packed)] struct P<T> { a: T, b: bool, c: [u8; 4] }"), @r#"
        1:28: ScanElement does not support `repr(packed)`: the generated C struct uses the plain `repr(C)` layout
        1:45: ScanElement cannot be derived for a generic struct: the GPU needs one concrete layout
        1:54: field `a` has type `T`, which a ScanElement cannot hold: use one of i8, i16, i32, i64, u8, u16, u32, u64, f32, f64 (nest structs by flattening their fields)
        1:60: field `b` has type `bool`, which a ScanElement cannot hold: use one of i8, i16, i32, i64, u8, u16, u32, u64, f32, f64 (nest structs by flattening their fields)
        1:69: field `c` has type `[u8; 4]`, which a ScanElement cannot hold: use one of i8, i16, i32, i64, u8, u16, u32, u64, f32, f64 (nest structs by flattening their fields)
    "#);
    insta::assert_snapshot!(element_errors("#[repr(C)] struct Tuple(f32, f32);"), @r"1:24: ScanElement needs named fields: write `struct Tuple { a: f32, b: f32 }`");
    insta::assert_snapshot!(element_errors("#[repr(C)] enum E { A }"), @r"1:12: ScanElement can only be derived for a struct with named fields, not an enum");
}

const OPS: &str = r#"use scangen::{scan_op, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Affine { pub a: f32, pub b: f32 }

pub struct Compose;

#[scan_op]
impl ScanOp for Compose {
    type Elem = Affine;
    fn identity() -> Affine { Affine { a: 1.0, b: 0.0 } }
    fn combine(l: Affine, r: Affine) -> Affine { Affine { a: l.a * r.a, b: r.a * l.b + r.b } }
}

mod more {
    pub struct Broken;
    #[scangen::scan_op]
    impl ScanOp for Broken {
        type Elem = u64;
        fn identity() -> u64 { 0 }
        fn combine(a: u64, b: u64) -> u64 {
            match a { _ => b }
        }
    }

    pub struct Lost;
    #[scan_op]
    impl ScanOp for Lost {
        type Elem = Missing;
        fn identity() -> Missing { Missing { a: 0 } }
        fn combine(a: Missing, b: Missing) -> Missing { a }
    }
}
"#;

#[test]
fn ops_file() {
    let file = parse_ops_file(OPS).unwrap();
    assert_eq!(file.op_names(), ["Compose", "Broken", "Lost"]);
    assert_eq!(file.element_names(), ["Affine"]);
    let spec = file.op_spec("Compose").unwrap();
    assert_eq!(spec.name, "Compose");
    assert_eq!(spec.element.size(), 8);
    assert_eq!(spec.element.c_name(), "Affine");
    insta::assert_snapshot!(spec.combine_body, @r#"
        Affine out0;
        out0.a = rs_mul(l.a, r.a);
        out0.b = rs_add(rs_mul(r.a, l.b), r.b);
        return out0;
    "#);
    insta::assert_snapshot!(file.op_spec("Broken").unwrap_err().render("ops.rs"), @r"ops.rs:23:13: `match` cannot be lowered to CUDA: use `if`/`else`");
    insta::assert_snapshot!(file.op_spec("Lost").unwrap_err().render("ops.rs"), @r"ops.rs:30:21: element type `Missing` is neither a primitive nor a `#[derive(ScanElement)] #[repr(C)]` struct in this file");
    insta::assert_snapshot!(file.op_spec("Nope").unwrap_err().to_string(), @r"1:1: no `#[scan_op] impl ScanOp for Nope` in the file; operators in the file: Compose, Broken, Lost");
    insta::assert_snapshot!(parse_ops_file("fn main() {\n    let x = ;\n}\n").err().unwrap().render("bad.rs"), @r"bad.rs:2:13: expected an expression");
}

#[test]
fn ops_file_element_must_be_copy() {
    let src = r#"
#[derive(Clone, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct NotCopy { pub a: f32 }

#[derive(Clone, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct HandCopy { pub a: f32 }
impl Copy for HandCopy {}

pub struct A;
#[scan_op]
impl ScanOp for A {
    type Elem = NotCopy;
    fn identity() -> NotCopy { NotCopy { a: 0.0 } }
    fn combine(l: NotCopy, r: NotCopy) -> NotCopy { NotCopy { a: l.a + r.a } }
}

pub struct B;
#[scan_op]
impl ScanOp for B {
    type Elem = HandCopy;
    fn identity() -> HandCopy { HandCopy { a: 0.0 } }
    fn combine(l: HandCopy, r: HandCopy) -> HandCopy { HandCopy { a: l.a + r.a } }
}
"#;
    let file = parse_ops_file(src).unwrap();
    insta::assert_snapshot!(file.op_spec("A").unwrap_err().render("ops.rs"), @r"ops.rs:4:12: ScanElement requires Copy: add #[derive(Clone, Copy)] to `NotCopy`");
    assert_eq!(file.op_spec("B").unwrap().element.size(), 4);
}

#[test]
fn literals_out_of_range_are_errors_as_in_rustc() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Lits {
        type Elem = i8;
        fn identity() -> i8 { -128 }
        fn combine(a: i8, b: i8) -> i8 {
            let ok = -128i8;
            let x: f32 = 1e400;
            let y = 1e39f32;
            let z: f64 = -1e309;
            let u = -1u32;
            let w = 0xffu8 as i8;
            if a == 300 { return b; }
            let big: u64 = 18446744073709551615;
            let bigger = 18446744073709551616u128;
            a.wrapping_add(300) + ok + 127 + (-129)
        }
    }"#), @r#"
        6:26: literal out of range for `f32`: `1e400` is beyond `f32::MAX` and would become infinity (write `f32::INFINITY` if that is meant)
        7:21: literal out of range for `f32`: `1e39` is beyond `f32::MAX` and would become infinity (write `f32::INFINITY` if that is meant)
        8:26: literal out of range for `f64`: `-1e309` is beyond `f64::MAX` and would become infinity (write `f64::INFINITY` if that is meant)
        9:21: cannot negate `1` of type `u32`: unsigned literals cannot be negative
        11:21: literal out of range for `i8`: `300` does not fit into `i8`, whose range is `-128..=127`
        13:26: `u128` is not supported on the GPU: scangen's integers are at most 64 bits wide; use `u64`, or a struct of two `u64` halves combined with explicit carries
        14:28: literal out of range for `i8`: `300` does not fit into `i8`, whose range is `-128..=127`
        14:47: literal out of range for `i8`: `-129` does not fit into `i8`, whose range is `-128..=127`
    "#);
}

#[test]
fn wide_and_host_sized_integers_say_what_to_use() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Wide {
        type Elem = u128;
        fn identity() -> u128 { 0 }
        fn combine(a: u128, b: u128) -> u128 { a + b }
    }"#), @"2:21: `type Elem = u128;`: `u128` is not supported on the GPU: scangen's integers are at most 64 bits wide; use `u64`, or a struct of two `u64` halves combined with explicit carries");
    insta::assert_snapshot!(lower(r#"impl ScanOp for Index {
        type Elem = u64;
        fn identity() -> u64 { 0 }
        fn combine(a: u64, b: u64) -> u64 {
            let i: usize = 3;
            let c = 'x' as u32;
            (a as isize + 2isize) as u64 + b as i128 as u64 + i as u64
        }
    }"#), @r#"
        5:20: `usize` is not supported on the GPU: its width is the host's, and an element must have one layout on both sides; use `u64`
        6:21: character literals cannot be lowered to CUDA: use an integer (`b'a'` is `97u8`)
        7:19: `isize` is not supported on the GPU: its width is the host's, and an element must have one layout on both sides; use `i64`
        7:27: `isize` is not supported on the GPU: its width is the host's, and an element must have one layout on both sides; use `i64`
        7:49: `i128` is not supported on the GPU: scangen's integers are at most 64 bits wide; use `i64`, or a struct of two `u64` halves combined with explicit carries
    "#);
    insta::assert_snapshot!(element_errors("#[repr(C)] struct Big { a: u128, b: usize, c: char }"), @r#"
        1:28: field `a`: `u128` is not supported on the GPU: scangen's integers are at most 64 bits wide; use `u64`, or a struct of two `u64` halves combined with explicit carries
        1:37: field `b`: `usize` is not supported on the GPU: its width is the host's, and an element must have one layout on both sides; use `u64`
        1:47: field `c`: `char` is not supported on the GPU: use `u32` (`c as u32`)
    "#);
}

#[test]
fn struct_and_field_names_are_made_valid_cpp() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for unsigned {
        type Elem = template;
        fn identity() -> template { template { int: 0, auto: 1, value_: 2 } }
        fn combine(threadIdx: template, r#double: template) -> template {
            let NULL = threadIdx.int + r#double.auto;
            template { int: NULL, ..r#double }
        }
    }"#), @r#"
        combine(threadIdx_, double_):
        auto NULL_ = rs_add(threadIdx_.int_, double_.auto_);
        template_ out0 = double_;
        out0.int_ = NULL_;
        return out0;
        identity():
        template_ out0;
        out0.int_ = 0;
        out0.auto_ = 1;
        out0.value__ = 2;
        return out0;
    "#);
    insta::assert_snapshot!(element_errors("#[repr(C)] struct template { int: u32, auto: u8, value_: u8, threadIdx: u16 }"), @r#"StructDecl { name: "template_", fields: [StructField { name: "int_", ty: U32 }, StructField { name: "auto_", ty: U8 }, StructField { name: "value__", ty: U8 }, StructField { name: "threadIdx_", ty: U16 }], size: 8, align: 4 }"#);
}

#[test]
fn literal_zero_divisors_are_errors_as_in_rustc() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Div {
        type Elem = i32;
        fn identity() -> i32 { 1 }
        fn combine(a: i32, b: i32) -> i32 {
            let f = 1.0f32 / 0.0;
            a / 0 + b % 0 + a / b + (f as i32)
        }
    }"#), @r#"
        6:13: this operation will panic at run time in Rust: attempt to divide by zero
        6:21: this operation will panic at run time in Rust: attempt to calculate the remainder with a divisor of zero
    "#);
}

#[test]
fn empty_statements_are_nothing_to_lower() {
    // A lone `;` (leading, or doubled) is an empty statement in Rust; it lowers to nothing, as
    // the same body without it does. (It used to be an error with no position.)
    let with = lower(
        r#"impl ScanOp for Op {
        type Elem = f32;
        fn identity() -> f32 { ; 0.0 }
        fn combine(l: f32, r: f32) -> f32 { let x = l;; x + r }
    }"#,
    );
    let without = lower(
        r#"impl ScanOp for Op {
        type Elem = f32;
        fn identity() -> f32 { 0.0 }
        fn combine(l: f32, r: f32) -> f32 { let x = l; x + r }
    }"#,
    );
    assert!(!with.contains("cannot be lowered"), "{with}");
    assert_eq!(with, without);
}
