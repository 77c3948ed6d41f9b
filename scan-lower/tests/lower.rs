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
        Ok(el) => format!("{:?}", el.decl.expect("a layout of its own")),
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
        } else if (a < 0.0f) {
            tmp0 = -b;
        } else {
            tmp0 = 2.0f;
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
            let v = match Some(a) { Some(x) => x, None => 2.0 };
            'outer: for i in 0..3 { break 'outer; }
            while let x = 1 {}
            let r = &mut a;
            let t = [a, b][0..1];
            let s = "text";
            let mut n = 0;
            let q = if a > b { a };
            std::f32::consts::PI + foo(a) + a.hypot(b) + [1.0][0] + (|x| x)(1.0) + println!("x") + GLOBAL
        }
    }"#), @r#"
        5:27: `Option` cannot be lowered to CUDA (its layout is not defined): use a struct with a `bool` flag (`valid: bool`) beside the value
        5:37: the pattern `Some(..)` cannot be lowered to CUDA: enums (and `Option`) are not GPU elements; use a struct with a `bool` flag (`valid: bool`) and match on it
        5:51: the pattern `None` cannot be lowered to CUDA: enums (and `Option`) are not GPU elements; use a struct with a `bool` flag (`valid: bool`) and match on it
        6:13: loop labels cannot be lowered to CUDA: restructure the loop, or set a flag and `break` once per level
        7:19: `while let` cannot be lowered to CUDA: use `while` with a condition, or a `for` loop over a constant range
        8:22: `&mut` cannot be lowered to CUDA: a lowered operator has no references to mutate through; return the new value instead
        9:28: slicing cannot be lowered to CUDA: index one element at a time
        10:21: string literals cannot be lowered to CUDA
        11:13: cannot infer the type of `n` for CUDA: annotate it (`let mut n: i64 = ...;`) or suffix the literal
        12:21: an `if` without `else` has no value: add an `else` branch, or use it as a statement
        13:36: `foo` is not visible to #[scan_op]: a helper function must be declared inside the operator's bodies or in the `#[scan_op] mod` that holds it
        13:47: method `.hypot()` cannot be lowered to CUDA; supported methods: `min`, `max`, `clamp`, `abs`, `mul_add`, `sqrt`, `cbrt`, `exp`, `exp2`, `ln`, `log2`, `log10`, `powi`, `powf`, `floor`, `ceil`, `round`, `trunc`, `sin`, `cos`, `tan`, `tanh`, `is_nan`, `is_finite`, `is_infinite`, `is_sign_negative`, `is_sign_positive`, `to_f32`, `to_f64`, `to_bits`, `from_f32`, `from_bits`, `wrapping_add`, `wrapping_sub`, `wrapping_mul`, `wrapping_div`, `wrapping_rem`, `wrapping_neg`, `wrapping_abs`, `wrapping_shl`, `wrapping_shr`, `saturating_add`, `saturating_sub`, `saturating_mul`, `rotate_left`, `rotate_right`, `count_ones`, `count_zeros`, `leading_zeros`, `trailing_zeros`
        13:70: closures cannot be lowered to CUDA: write a helper `fn` beside the operator, or the expression inline
        13:84: macro `println!` cannot be lowered to CUDA: write the expression without macros (`assert!`, `println!` and `panic!` have no GPU equivalent)
        13:100: `GLOBAL` is not visible to #[scan_op]: a lowered operator sees its parameters, its `let`s, and the `const`s and `fn`s declared inside its bodies or in the `#[scan_op] mod` that holds it
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
    "#);
}

#[test]
fn element_struct_checks() {
    insta::assert_snapshot!(element_errors("#[repr(C)] struct Mixed { flag: u8, value: f64, tag: u16 }"), @r#"StructDecl { name: "Mixed", fields: [StructField { name: "flag", ty: Prim(U8) }, StructField { name: "value", ty: Prim(F64) }, StructField { name: "tag", ty: Prim(U16) }], size: 24, align: 8 }"#);
    insta::assert_snapshot!(element_errors("#[derive(Clone)] #[repr(C, packed)] struct P<T> { a: T, b: bool, c: [u8; 4], d: Option<f32>, e: (f32, f32), f: &'static str, g: [usize; 2] }"), @r#"
        1:28: ScanElement does not support `repr(packed)`: the generated C struct uses the plain `repr(C)` layout
        1:45: ScanElement cannot be derived for a generic struct: the GPU needs one concrete layout
        1:81: field `d` has type `Option<f32>`: `Option` has no layout Rust defines for the GPU to share; write the value and a `bool` beside it (`d: T, d_valid: bool`) and test the flag where Rust would match on `Some`
        1:97: field `e` has type `(f32, f32)`, which a ScanElement cannot hold: use one of i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, f16, bf16 (`half::f16`, `half::bf16`), `bool`, an array `[T; N]` of those, or another #[derive(ScanElement)] struct
        1:112: field `f` has type `&'static str`, which a ScanElement cannot hold: use one of i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, f16, bf16 (`half::f16`, `half::bf16`), `bool`, an array `[T; N]` of those, or another #[derive(ScanElement)] struct
        1:130: field `g`: `usize` is not supported on the GPU: its width is the host's, and an element must have one layout on both sides; use `u64`
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
            let f = |x: u64| x;
            f(b)
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
    insta::assert_snapshot!(file.op_spec("Broken").unwrap_err().render("ops.rs"), @r#"
        ops.rs:23:21: closures cannot be lowered to CUDA: write a helper `fn` beside the operator, or the expression inline
        ops.rs:24:13: `f` is not visible to #[scan_op]: a helper function must be declared inside the operator's bodies or in the `#[scan_op] mod` that holds it
    "#);
    insta::assert_snapshot!(file.op_spec("Lost").unwrap_err().render("ops.rs"), @"ops.rs:31:21: element type `Missing` is neither a primitive nor a `#[derive(ScanElement)] #[repr(C)]` struct in this file");
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
        6:21: character literals cannot be lowered to CUDA: use an integer (`b'a'` is `97u8`)
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
    insta::assert_snapshot!(element_errors("#[repr(C)] struct template { int: u32, auto: u8, value_: u8, threadIdx: u16 }"), @r#"StructDecl { name: "template_", fields: [StructField { name: "int_", ty: Prim(U32) }, StructField { name: "auto_", ty: Prim(U8) }, StructField { name: "value__", ty: Prim(U8) }, StructField { name: "threadIdx_", ty: Prim(U16) }], size: 8, align: 4 }"#);
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

/// The lowered bodies of operator `name` in a file, or the file's errors.
fn lower_file(src: &str, name: &str) -> String {
    let file = parse_ops_file(src).expect("parses");
    match file.op_spec(name) {
        Ok(op) => format!(
            "combine({}, {}):\n{}\nidentity():\n{}",
            op.lhs, op.rhs, op.combine_body, op.identity_body
        ),
        Err(e) => e.to_string(),
    }
}

#[test]
fn consts_and_helpers_declared_in_the_body() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Mix {
        type Elem = u64;
        fn identity() -> u64 { 0 }
        fn combine(a: u64, b: u64) -> u64 {
            const K: u64 = 0x9e37_79b9_7f4a_7c15;
            const HALF: u32 = u64::BITS / 2;
            fn mix(x: u64) -> u64 { (x ^ (x >> HALF)).wrapping_mul(K) }
            let scale = std::f32::consts::PI * f32::EPSILON;
            mix(a) ^ b.rotate_left(u8::BITS) ^ (scale as u64) ^ (f64::MANTISSA_DIGITS as u64)
        }
    }"#), @r#"
        combine(a, b):
        struct scan_fns {
            // fn mix
            static __device__ __forceinline__ u64 mix(u64 x) {
                return rs_wrapping_mul(rs_bitxor(x, rs_shr(x, rs_div((u32)64, (u32)2))), (u64)11400714819323198485ull);
            }
        };
        f32 scale = 3.1415927e0f * rs_epsilon<f32>();
        return rs_bitxor(rs_bitxor(rs_bitxor(scan_fns::mix(a), rs_rotate_left(b, (u32)8)), rs_cast<u64>(scale)), rs_cast<u64>((u32)53));
        identity():
        return 0;
    "#);
}

const MODULE: &str = r#"
#[scan_op]
mod ops {
    const LIMIT: u32 = 1000;

    #[derive(Clone, Copy, ScanElement)]
    #[repr(C)]
    pub struct Run { pub value: i64, pub len: u32 }

    impl Run {
        fn weight(self) -> i64 { self.value * Self::SCALE }
        const SCALE: i64 = 2;
        fn empty() -> Run { Run { value: 0, len: 0 } }
    }

    fn clamp_len(len: u32) -> u32 { if len > LIMIT { LIMIT } else { len } }
    fn split(v: i64) -> (i64, i64) { (v / 2, v % 2) }

    pub struct Runs;
    impl ScanOp for Runs {
        type Elem = Run;
        fn identity() -> Run { Run::empty() }
        fn combine(l: Run, r: Run) -> Run {
            let (half, rest) = split(l.value + r.weight());
            Run { value: half + rest, len: clamp_len(l.len + r.len) }
        }
    }

    fn fact(n: u32) -> u32 { if n == 0 { 1 } else { n * twice(n - 1) } }
    fn twice(n: u32) -> u32 { fact(n) * 2 }
    fn pick<T: Copy>(a: T, _b: T) -> T { a }
    fn touch(x: &mut u32) -> u32 { *x }

    pub struct Bad;
    impl ScanOp for Bad {
        type Elem = u32;
        fn identity() -> u32 { 0 }
        fn combine(a: u32, b: u32) -> u32 { fact(a) + pick(a, b) + missing(b) + touch(&mut 0) }
    }
}

pub struct Lone;
#[scan_op]
impl ScanOp for Lone {
    type Elem = u32;
    fn identity() -> u32 { 0 }
    fn combine(a: u32, b: u32) -> u32 { ops::clamp_len(a) + LIMIT }
}
"#;

#[test]
fn module_helpers_methods_and_consts() {
    insta::assert_snapshot!(lower_file(MODULE, "Runs"), @r#"
        combine(l, r):
        struct scan_fns {
            // fn split
            static __device__ __forceinline__ rs_tuple2<i64, i64> split(i64 v) {
                return rs_tuple2<i64, i64>{rs_div(v, (i64)2), rs_rem(v, (i64)2)};
            }
            // fn Run::weight
            static __device__ __forceinline__ i64 Run_weight(Run self_) {
                return rs_mul(self_.value, (i64)2);
            }
            // fn clamp_len
            static __device__ __forceinline__ u32 clamp_len(u32 len) {
                return (len > (u32)1000) ? (u32)1000 : len;
            }
        };
        const rs_tuple2<i64, i64> tmp0 = scan_fns::split(rs_add(l.value, scan_fns::Run_weight(r)));
        i64 half = tmp0._0;
        i64 rest = tmp0._1;
        Run out0;
        out0.value = rs_add(half, rest);
        out0.len = scan_fns::clamp_len(rs_add(l.len, r.len));
        return out0;
        identity():
        struct scan_fns {
            // fn Run::empty
            static __device__ __forceinline__ Run Run_empty() {
                Run out0;
                out0.value = 0;
                out0.len = 0;
                return out0;
            }
        };
        return scan_fns::Run_empty();
    "#);
}

#[test]
fn helper_mistakes() {
    insta::assert_snapshot!(lower_file(MODULE, "Bad"), @r#"
        30:31: `fact` calls itself (directly or through other helpers): recursion cannot be lowered to CUDA; write it as a loop
        31:12: helper `pick` cannot be generic: the GPU code is generated for concrete types; write one function per type
        32:17: helper `touch` cannot take `&mut` parameters: return the new value instead
        38:68: `missing` is not visible to #[scan_op]: a helper function must be declared inside the operator's bodies or in the `#[scan_op] mod` that holds it
        38:88: `&mut` cannot be lowered to CUDA: a lowered operator has no references to mutate through; return the new value instead
    "#);
    // A lone impl sees only itself, as the macro does.
    insta::assert_snapshot!(lower_file(MODULE, "Lone"), @r#"
        47:41: `ops::clamp_len` is not visible to #[scan_op]: a helper function must be declared inside the operator's bodies or in the `#[scan_op] mod` that holds it
        47:61: `LIMIT` is not visible to #[scan_op]: a lowered operator sees its parameters, its `let`s, and the `const`s and `fn`s declared inside its bodies or in the `#[scan_op] mod` that holds it
    "#);
}

#[test]
fn match_patterns_guards_and_bindings() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for M {
        type Elem = i32;
        fn identity() -> i32 { 0 }
        fn combine(a: i32, b: i32) -> i32 {
            const ZERO: i32 = 0;
            let k = match a {
                ZERO => 10,
                -5..=-1 | 1 => 20,
                i32::MIN..-5 => 30,
                x @ 2..=9 if x % 2 == 0 => x * 2,
                _ => 40,
            };
            let small = match (a > 0, b) {
                (true, 0) => 1,
                (false, n) if n > 100 => n - 100,
                _ => 0,
            };
            match b { 0 => { return k; } _ => {} }
            k + small
        }
    }"#), @r#"
        combine(a, b):
        i32 tmp0;
        if (a == 0) {
            tmp0 = 10;
        } else if ((a >= (-5) && a <= (-1)) || a == 1) {
            tmp0 = 20;
        } else if (a >= rs_min_value<i32>() && a < (-5)) {
            tmp0 = 30;
        } else if ((a >= 2 && a <= 9) && rs_rem(a, 2) == 0) {
            i32 x = a;
            tmp0 = rs_mul(x, 2);
        } else {
            tmp0 = 40;
        }
        i32 k = tmp0;
        const rs_tuple2<bool, i32> m = rs_tuple2<bool, i32>{a > 0, b};
        i32 tmp1;
        if (m._0 && m._1 == 0) {
            tmp1 = 1;
        } else if ((!m._0) && m._1 > 100) {
            i32 n = m._1;
            tmp1 = rs_sub(n, 100);
        } else {
            tmp1 = 0;
        }
        i32 small = tmp1;
        if (b == 0) {
            return k;
        }
        return rs_add(k, small);
        identity():
        return 0;
    "#);
}

#[test]
fn if_let_and_destructuring() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for P {
        type Elem = Pair;
        fn identity() -> Pair { Pair { a: 0, b: 0 } }
        fn combine(l: Pair, r: Pair) -> Pair {
            let Pair { a, b: rb } = r;
            let (x, y) = (l.a + a, 2);
            let (mut x, mut z) = (y, x);
            z += 1;
            let t = (x, z);
            let [p, q] = [t.0, t.1];
            if let Pair { a: 0, .. } = l {
                return Pair { a: p, b: q };
            }
            (x, z) = (z, x);
            Pair { a: x + rb, b: z }
        }
    }"#), @r#"
        combine(l, r):
        auto a = r.a;
        auto rb = r.b;
        auto x = rs_add(l.a, a);
        decltype(Pair::b) x_1 = 2;
        auto z = x;
        z = rs_add(z, (decltype(Pair::a))1);
        rs_tuple2<decltype(Pair::b), decltype(Pair::a)> t = rs_tuple2<decltype(Pair::b), decltype(Pair::a)>{x_1, z};
        const rs_array<decltype(Pair::b), 2> tmp0 = rs_array<decltype(Pair::b), 2>{{t._0, t._1}};
        auto p = tmp0[0];
        auto q = tmp0[1];
        if (l.a == 0) {
            Pair out0;
            out0.a = p;
            out0.b = q;
            return out0;
        }
        auto tmp1 = z;
        auto tmp2 = x_1;
        x_1 = tmp1;
        z = tmp2;
        Pair out1;
        out1.a = rs_add(x_1, rb);
        out1.b = z;
        return out1;
        identity():
        Pair out0;
        out0.a = 0;
        out0.b = 0;
        return out0;
    "#);
}

#[test]
fn loops() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for L {
        type Elem = u32;
        fn identity() -> u32 { 0 }
        fn combine(a: u32, b: u32) -> u32 {
            const N: usize = 4;
            let mut acc = a;
            for i in 0..N { acc = acc.rotate_left(i as u32) ^ b; }
            for i in (1..=3).rev() { acc += i; }
            for i in (0..10).step_by(3) { if i == 6 { continue; } acc ^= i; }
            let mut n = 0u32;
            while n < 8 && acc > 5 { n += 1; acc /= 2; }
            loop { if acc % 3 == 0 { break; } acc += 1; }
            acc + n
        }
    }"#), @r#"
        combine(a, b):
        u32 acc = a;
        for (i64 i = 0; i < 4; ++i) {
            acc = rs_bitxor(rs_rotate_left(acc, rs_cast<u32>(i)), b);
        }
        for (i64 i_1 = 3; i_1 >= 1; --i_1) {
            acc = rs_add(acc, (u32)i_1);
        }
        for (i64 i_2 = 0; i_2 < 10; i_2 += 3) {
            if (i_2 == 6) {
                continue;
            }
            acc = rs_bitxor(acc, (u32)i_2);
        }
        u32 n = 0;
        while (n < 8 && acc > 5) {
            n = rs_add(n, (u32)1);
            acc = rs_div(acc, (u32)2);
        }
        while (true) {
            if (rs_rem(acc, (u32)3) == 0) {
                break;
            }
            acc = rs_add(acc, (u32)1);
        }
        return rs_add(acc, n);
        identity():
        return 0;
    "#);
    insta::assert_snapshot!(lower(r#"impl ScanOp for L {
        type Elem = u32;
        fn identity() -> u32 { 0 }
        fn combine(a: u32, b: u32) -> u32 {
            for _ in 0..b {}
            for i in 0..4 { i = 2; }
            let v = for _ in 0..2 {};
            break;
            a
        }
    }"#), @r#"
        5:25: the end of a `for` loop must be a constant (a literal or a `const`) in a lowered operator: an operator takes the same time for every pair of elements
        6:29: cannot assign to the `for` variable `i`
        7:21: a loop has no value: use it as a statement, and read what it computed from a `let mut` declared before it
        8:13: `break` outside a loop
    "#);
}

#[test]
fn arrays_tuples_and_index_checks() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for A {
        type Elem = f32;
        fn identity() -> f32 { 0.0 }
        fn combine(a: f32, b: f32) -> f32 {
            let w = [0.25f32, 0.5, 0.25];
            let mut acc = [0.0f32; 3];
            for i in 0..3 { acc[i] = w[i] * a + w[2 - i] * b; }
            let (lo, hi): (f32, f32) = if a < b { (a, b) } else { (b, a) };
            acc[0] + acc[1] + acc[2] + lo * hi
        }
    }"#), @r#"
        combine(a, b):
        rs_array<f32, 3> w = rs_array<f32, 3>{{0.25f, 0.5f, 0.25f}};
        rs_array<f32, 3> acc = rs_fill<rs_array<f32, 3>>(0.0f);
        for (i64 i = 0; i < 3; ++i) {
            acc[i] = (w[i] * a) + (w[rs_sub((i64)2, i)] * b);
        }
        const rs_tuple2<f32, f32> tmp0 = (a < b) ? rs_tuple2<f32, f32>{a, b} : rs_tuple2<f32, f32>{b, a};
        f32 lo = tmp0._0;
        f32 hi = tmp0._1;
        return ((acc[0] + acc[1]) + acc[2]) + (lo * hi);
        identity():
        return 0.0f;
    "#);
    insta::assert_snapshot!(lower(r#"impl ScanOp for A {
        type Elem = u32;
        fn identity() -> u32 { 0 }
        fn combine(a: u32, b: u32) -> u32 {
            let t = [1u32, 2, 3, 4];
            let mut s = t[4] + t[b as usize];
            for i in 0..=4 { s += t[i]; }
            for i in 0..4 { s += t[i + 1] + t[(i + 1) % 4]; }
            let z = [0; 3];
            s
        }
    }"#), @r#"
        6:27: index out of bounds: the length is 4 but the index is 4
        6:34: this index cannot be checked before the kernel runs: index an array with a constant, a `for` variable over a constant range (plus or times constants, `% N`), or `x & MASK`; an index out of bounds panics in Rust and has no GPU equivalent
        7:37: index out of bounds: the length is 4 but the index reaches 4
        8:36: index out of bounds: the length is 4 but the index reaches 4
        9:22: cannot infer the element type of this array for CUDA: annotate it (`let a: [f32; 4] = [0.0; 4];`) or suffix the literal
    "#);
}

const ELEMENTS: &str = r#"
#[scan_op]
mod elements {
    const N: usize = 4;

    #[derive(Clone, Copy, ScanElement)]
    #[repr(C)]
    pub struct Point { pub x: f32, pub y: f32 }

    #[derive(Clone, Copy, ScanElement)]
    #[repr(C)]
    pub struct Body { pub pos: Point, pub v: [f32; N], pub alive: bool, pub tags: [[u8; 2]; 2] }

    #[derive(Clone, Copy, ScanElement)]
    #[repr(C)]
    pub struct Loop { pub me: Outer }
    #[derive(Clone, Copy, ScanElement)]
    #[repr(C)]
    pub struct Outer { pub inner: Loop }

    pub struct Move;
    impl ScanOp for Move {
        type Elem = Body;
        fn identity() -> Body {
            Body { pos: Point { x: 0.0, y: 0.0 }, v: [0.0; N], alive: false, tags: [[0; 2]; 2] }
        }
        fn combine(l: Body, r: Body) -> Body {
            let mut v = l.v;
            for i in 0..N { v[i] += r.v[i]; }
            Body {
                pos: Point { x: l.pos.x + r.pos.x, y: l.pos.y.max(r.pos.y) },
                v,
                alive: l.alive || !r.alive,
                tags: [[l.tags[0][0] ^ r.tags[0][0], r.tags[0][1]], r.tags[1]],
            }
        }
    }

    pub struct Past;
    impl ScanOp for Past {
        type Elem = Body;
        fn identity() -> Body { Body { pos: Point { x: 0.0, y: 0.0 }, v: [0.0; N], alive: false, tags: [[0; 2]; 2] } }
        fn combine(l: Body, r: Body) -> Body {
            let mut b = l;
            b.v[4] = 1.0;
            for i in 0..5 { b.v[i] = r.v[i]; }
            b.tags[1][2] = 300;
            b
        }
    }

}
"#;

#[test]
fn bool_array_and_nested_struct_fields() {
    let file = parse_ops_file(ELEMENTS).unwrap();
    let spec = file.op_spec("Move").unwrap();
    let scan_core::ElementType::Struct(decl) = &spec.element else {
        panic!("a struct")
    };
    insta::assert_snapshot!(
        decl.nested_structs()
            .iter()
            .map(|s| s.c_declaration())
            .chain([decl.c_declaration(), format!("size {}, align {}", decl.size, decl.align)])
            .collect::<Vec<_>>()
            .join("\n"),
        @r#"
        struct Point {
            f32 x;
            f32 y;
        };
        struct Body {
            Point pos;
            rs_array<f32, 4> v;
            bool alive;
            rs_array<rs_array<u8, 2>, 2> tags;
        };
        size 32, align 4
    "#
    );
    insta::assert_snapshot!(lower_file(ELEMENTS, "Move"), @r#"
        combine(l, r):
        auto v = l.v;
        for (i64 i = 0; i < 4; ++i) {
            static_assert(3 < rs_array_len<decltype(Body::v)>::value, "index out of bounds: the index reaches 3");
            v[i] = rs_add(v[i], r.v[i]);
        }
        Body out0;
        Point tmp0;
        tmp0.x = rs_add(l.pos.x, r.pos.x);
        tmp0.y = rs_max(l.pos.y, r.pos.y);
        out0.pos = tmp0;
        out0.v = v;
        out0.alive = l.alive || (!r.alive);
        out0.tags = decltype(Body::tags){{decltype(Body::tags)::elem{{rs_bitxor(l.tags[0][0], r.tags[0][0]), r.tags[0][1]}}, r.tags[1]}};
        return out0;
        identity():
        Body out0;
        Point tmp0;
        tmp0.x = 0.0f;
        tmp0.y = 0.0f;
        out0.pos = tmp0;
        out0.v = rs_fill<decltype(Body::v)>(0.0f);
        out0.alive = false;
        out0.tags = rs_fill<decltype(Body::tags)>(rs_fill<decltype(Body::tags)::elem>(0));
        return out0;
    "#);
    // The file declares the structs: an index past a field array's end is found here.
    insta::assert_snapshot!(lower_file(ELEMENTS, "Past"), @r#"
        45:17: index out of bounds: the length is 4 but the index is 4
        46:33: index out of bounds: the length is 4 but the index reaches 4
        46:42: index out of bounds: the length is 4 but the index reaches 4
        47:23: index out of bounds: the length is 2 but the index is 2
    "#);
    let cyclic = syn::parse_str::<syn::Type>("Loop").unwrap();
    insta::assert_snapshot!(file.element_type(&cyclic).unwrap_err().to_string(), @"19:35: `Loop` contains itself");
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
