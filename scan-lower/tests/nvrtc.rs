//! Lowers several operators and compiles each, with `scan-core/templates/rust_semantics.cu.tera`, with
//! NVRTC (`--std=c++17`, no includes), requiring an empty compile log (no warnings).
//!
//! Skipped when libnvrtc cannot be loaded (`. scripts/cuda-tools.sh` provides it), unless
//! `SCANGEN_REQUIRE_NVRTC=1`.

mod common;

use common::{compile, harness, numbered, nvrtc_available, PRELUDE};

const OPS: &str = r#"
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Affine { pub a: f32, pub b: f32 }
pub struct Compose;
#[scan_op]
impl ScanOp for Compose {
    type Elem = Affine;
    fn identity() -> Affine { Affine { a: 1.0, b: 0.0 } }
    fn combine(l: Affine, r: Affine) -> Affine { Affine { b: r.a * l.b + r.b, a: l.a * r.a } }
}

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Seg { pub flag: u32, pub value: i64 }
pub struct SegSum;
#[scan_op]
impl ScanOp for SegSum {
    type Elem = Seg;
    fn identity() -> Seg { Seg { flag: 0, value: 0 } }
    fn combine(l: Seg, r: Seg) -> Seg {
        if r.flag != 0 { r } else { Seg { flag: l.flag | r.flag, value: l.value + r.value } }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Arg { pub value: f32, pub index: u32 }
pub struct ArgMax;
#[scan_op]
impl ScanOp for ArgMax {
    type Elem = Arg;
    fn identity() -> Arg { Arg { value: f32::NEG_INFINITY, index: u32::MAX } }
    fn combine(l: Arg, r: Arg) -> Arg {
        if r.value > l.value || (r.value == l.value && r.index < l.index) { r } else { l }
    }
}

pub struct RunMax;
#[scan_op]
impl ScanOp for RunMax {
    type Elem = i64;
    fn identity() -> i64 { i64::MIN }
    fn combine(a: i64, b: i64) -> i64 { a.max(b) }
}

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Mixed { pub x: f64, pub y: f32, pub n: i8, pub m: u16, pub bits: u64 }
pub struct Kitchen;
#[scan_op]
impl ScanOp for Kitchen {
    type Elem = Mixed;
    fn identity() -> Mixed { Mixed { x: 0.1, y: -0.0, n: 0, m: 0, bits: 0 } }
    fn combine(l: Mixed, r: Mixed) -> Mixed {
        let half = 0.5;
        let mut t = l;
        t.x = (l.x * half).mul_add(r.x, 1e-3).max(f64::MIN_POSITIVE).sqrt();
        t.y = f32::min(l.y, r.y).abs().floor() + (r.x as f32).powi(2) - 1.25;
        let k: i32 = (l.y * 3.5) as i32;
        let s = if k > 2 { let q = k.wrapping_mul(k); q >> 1 } else if k < -7 { -k } else { k % 3 / 2 };
        t.n = (s as i8).wrapping_add(r.n).saturating_sub(1);
        t.m = l.m.rotate_left(3) ^ (r.m << 2u32) | (l.m >> 9) & !r.m;
        t.m += r.m * 3;
        t.bits = l.bits.wrapping_mul(r.bits).saturating_add(l.bits.count_ones() as u64)
            + (r.bits.leading_zeros() + r.bits.trailing_zeros()) as u64;
        if l.x.is_nan() || !(r.y < 0.0) && true {
            t.bits = u64::MAX;
        }
        t
    }
}

// Every name here is a C++ keyword, a CUDA built-in or one of the generated code's own names.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct template { pub int: f32, pub auto: u32, pub threadIdx: u32, pub register_: u32, pub T: u8 }
pub struct unsigned;
#[scan_op]
impl ScanOp for unsigned {
    type Elem = template;
    fn identity() -> template { template { int: 0.0, auto: 0, threadIdx: 0, register_: 0, T: 0 } }
    fn combine(float: template, r#double: template) -> template {
        let NULL = float.int + r#double.int;
        let register = float.auto ^ r#double.auto;
        let blockIdx = register.wrapping_add(float.threadIdx);
        let rs_add = blockIdx | 1;
        let scan_combine = rs_add;
        let i32 = float.T.max(r#double.T);
        template { int: NULL, auto: register, threadIdx: scan_combine, register_: r#double.register_, T: i32 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct float4 { pub x: f32 }
pub struct dim3;
#[scan_op]
impl ScanOp for dim3 {
    type Elem = float4;
    fn identity() -> float4 { float4 { x: 0.0 } }
    fn combine(warpSize: float4, size_t: float4) -> float4 { float4 { x: warpSize.x + size_t.x } }
}

// The 2-byte floats: fields, arrays of them, their operators, methods and constants.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Halves { pub h: half::f16, pub b: half::bf16, pub v: [half::f16; 3], pub n: u8 }
pub struct HalfMix;
#[scan_op]
impl ScanOp for HalfMix {
    type Elem = Halves;
    fn identity() -> Halves {
        Halves { h: half::f16::ZERO, b: half::bf16::NEG_INFINITY, v: [half::f16::ONE; 3], n: 0 }
    }
    fn combine(l: Halves, r: Halves) -> Halves {
        let mut v = l.v;
        for i in 0..3 { v[i] *= r.v[i]; }
        let wide = l.h.to_f32() * 0.5 + r.b.to_f64() as f32;
        let h = if l.h < r.h || l.h.is_nan() { half::f16::from_f32(wide) } else { -(l.h % r.h) };
        let b = l.b.max(r.b).clamp(half::bf16::MIN, half::bf16::from_bits(0x7f00));
        Halves { h, b, v, n: l.n ^ (r.h.to_bits() as u8) }
    }
}

pub struct Wide;
#[scan_op]
impl ScanOp for Wide {
    type Elem = u8;
    fn identity() -> u8 { 0 }
    fn combine(a: u8, b: u8) -> u8 {
        let prod = a * b;
        let w = (prod as u16).saturating_mul(300) as i16;
        if w < 0 { return 255; }
        (a.wrapping_sub(b) / (b | 1) + (w as u8) % 7) as u8
    }
}
"#;

#[scan_testenv::needs(nvrtc)]
#[test]
fn lowered_ops_compile_with_nvrtc() {
    let file = scan_lower::parse_ops_file(OPS).expect("parses");
    let names = file.op_names();
    assert_eq!(
        names,
        [
            "Compose", "SegSum", "ArgMax", "RunMax", "Kitchen", "unsigned", "dim3", "HalfMix",
            "Wide"
        ]
    );
    let specs: Vec<_> = names
        .iter()
        .map(|n| file.op_spec(n).unwrap_or_else(|e| panic!("{n}: {e}")))
        .collect();
    if !nvrtc_available() {
        return;
    }
    for spec in &specs {
        let src = harness(spec);
        let log = compile(&src);
        assert!(
            log.is_empty(),
            "{}: NVRTC warnings:\n{log}\n---- source ----\n{}",
            spec.name,
            numbered(&src)
        );
    }
}

/// The operators of the operator-language tests (helpers, `match`, loops, tuples, arrays,
/// `bool`s, nested structs), read as `scangen emit --file` reads them.
#[scan_testenv::needs(nvrtc)]
#[test]
fn operator_language_ops_compile_without_warnings() {
    let text = include_str!("../../tests/operator_language/ops.rs");
    let file = scan_lower::parse_ops_file(text).expect("parses");
    let names = file.op_names();
    assert_eq!(
        names,
        ["Runs", "ForwardFill", "Mixer", "Bound", "MatMul", "Hash"]
    );
    let specs: Vec<_> = names
        .iter()
        .map(|n| file.op_spec(n).unwrap_or_else(|e| panic!("{n}: {e}")))
        .collect();
    if !nvrtc_available() {
        return;
    }
    for spec in &specs {
        let src = harness(spec);
        let log = compile(&src);
        assert!(
            log.is_empty(),
            "{}: NVRTC warnings:\n{log}\n---- source ----\n{}",
            spec.name,
            numbered(&src)
        );
    }
}

#[scan_testenv::needs(nvrtc)]
#[test]
fn every_helper_instantiates_without_warnings() {
    if !nvrtc_available() {
        return;
    }
    let mut src = String::from(PRELUDE);
    src.push_str(scan_lower::RUST_SEMANTICS_CU);
    src.push_str("template <class T> __device__ void ints(T* o, T a, T b) {\n");
    for f in [
        "rs_add",
        "rs_sub",
        "rs_mul",
        "rs_div",
        "rs_rem",
        "rs_wrapping_add",
        "rs_wrapping_sub",
        "rs_wrapping_mul",
        "rs_saturating_add",
        "rs_saturating_sub",
        "rs_saturating_mul",
        "rs_min",
        "rs_max",
        "rs_bitand",
        "rs_bitor",
        "rs_bitxor",
        "rs_shl",
        "rs_shr",
        "rs_wrapping_div",
        "rs_wrapping_rem",
    ] {
        src.push_str(&format!("    *o++ = {f}(a, b);\n"));
    }
    for f in [
        "rs_neg",
        "rs_not",
        "rs_abs",
        "rs_wrapping_neg",
        "rs_wrapping_abs",
    ] {
        src.push_str(&format!("    *o++ = {f}(a);\n"));
    }
    src.push_str("    *o++ = rs_rotate_left(a, 3u) + rs_rotate_right(b, 5u) + rs_wrapping_shl(a, 9u) + rs_wrapping_shr(a, 9u);\n");
    src.push_str("    *o++ = (T)(rs_count_ones(a) + rs_count_zeros(a) + rs_leading_zeros(a) + rs_trailing_zeros(b));\n");
    src.push_str("    *o++ = rs_clamp(a, rs_min_value<T>(), rs_max_value<T>());\n");
    src.push_str("    *o++ = rs_cast<T>(1.5f) + rs_cast<T>(2.5) + rs_cast<T>((i8)1) + rs_cast<T>((u64)7) + rs_cast<T>(true);\n");
    src.push_str("}\ntemplate <class T> __device__ void floats(T* o, T a, T b) {\n");
    for f in [
        "rs_add", "rs_sub", "rs_mul", "rs_div", "rs_rem", "rs_min", "rs_max", "rs_powf",
    ] {
        src.push_str(&format!("    *o++ = {f}(a, b);\n"));
    }
    for f in [
        "rs_neg", "rs_abs", "rs_sqrt", "rs_cbrt", "rs_exp", "rs_exp2", "rs_ln", "rs_log2",
        "rs_log10", "rs_floor", "rs_ceil", "rs_round", "rs_trunc", "rs_sin", "rs_cos", "rs_tan",
        "rs_tanh",
    ] {
        src.push_str(&format!("    *o++ = {f}(a);\n"));
    }
    src.push_str("    *o++ = rs_mul_add(a, b, a) + rs_powi(a, -3) + rs_clamp(a, b, b);\n");
    src.push_str("    *o++ = rs_infinity<T>() + rs_neg_infinity<T>() + rs_nan<T>() + rs_epsilon<T>() + rs_min_positive<T>() + rs_max_value<T>() + rs_min_value<T>();\n");
    src.push_str("    *o++ = (rs_is_nan(a) || rs_is_finite(b)) ? rs_float_lit<T>(0.1f, 0.1) : rs_cast<T>(3) + rs_cast<T>(2.5) + rs_cast<T>(1.5f);\n");
    src.push_str("}\nextern \"C\" __global__ void k(void* p) {\n");
    for t in ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"] {
        src.push_str(&format!("    ints<{t}>(({t}*)p, ({t})1, ({t})2);\n"));
    }
    for t in ["f32", "f64"] {
        src.push_str(&format!("    floats<{t}>(({t}*)p, ({t})1, ({t})2);\n"));
    }
    src.push_str("}\n");
    let log = compile(&src);
    assert!(log.is_empty(), "NVRTC warnings:\n{log}");
}
