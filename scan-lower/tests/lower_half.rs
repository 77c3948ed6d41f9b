//! Lowering of `half::f16` / `half::bf16`: elements, fields, their operators, methods and
//! constants, and the errors for what Rust does not allow on them (literals, `as`) or the
//! lowering does not support. Positions in error texts are line:column in the snippet.

use scan_lower::{lower_impl, parse_ops_file};

fn lower(src: &str) -> String {
    let item: syn::ItemImpl = syn::parse_str(src).expect("valid Rust");
    match lower_impl(&item) {
        Ok(op) => format!(
            "element: {:?}\ncombine({}, {}):\n{}\nidentity():\n{}",
            op.elem, op.lhs, op.rhs, op.combine_body, op.identity_body
        ),
        Err(e) => e.render(),
    }
}

#[test]
fn f16_sum_through_the_half_paths() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Sum {
        type Elem = half::f16;
        fn identity() -> half::f16 { half::f16::NEG_ZERO }
        fn combine(a: half::f16, b: half::f16) -> half::f16 { a + b }
    }"#), @r#"
    element: Prim(F16)
    combine(a, b):
    return a + b;
    identity():
    return rs_from_bits<f16>((u16)0x8000u);
    "#);
}

#[test]
fn bf16_methods_constants_and_conversions() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Clipped {
        type Elem = bf16;
        fn identity() -> bf16 { bf16::ZERO }
        fn combine(a: bf16, b: bf16) -> bf16 {
            let m = a.max(b).min(bf16::MAX);
            let mut s = m - -a;
            s *= bf16::from_f32(0.5);
            if s.is_nan() || !s.is_finite() || s.is_sign_negative() { return bf16::from_bits(0x3f80); }
            let wide: f32 = s.to_f32() + b.to_f64() as f32;
            let c = bf16::clamp(bf16::from_f32(wide), bf16::NEG_ONE, bf16::ONE);
            if c >= a && c != b { c } else { bf16::from_f32(c.to_bits() as f32) }
        }
    }"#), @r#"
    element: Prim(BF16)
    combine(a, b):
    bf16 m = rs_min(rs_max(a, b), rs_from_bits<bf16>((u16)0x7f7fu));
    bf16 s = m - (-a);
    s = s * rs_from_f32<bf16>(0.5f);
    if ((rs_is_nan(s) || (!rs_is_finite(s))) || rs_is_sign_negative(s)) {
        return rs_from_bits<bf16>((u16)16256);
    }
    f32 wide = rs_to_f32(s) + rs_cast<f32>(rs_to_f64(b));
    bf16 c = rs_clamp(rs_from_f32<bf16>(wide), rs_from_bits<bf16>((u16)0xbf80u), rs_from_bits<bf16>((u16)0x3f80u));
    return (c >= a && c != b) ? c : rs_from_f32<bf16>(rs_cast<f32>(rs_to_bits(c)));
    identity():
    return rs_from_bits<bf16>((u16)0x0000u);
    "#);
}

#[test]
fn half_fields_in_a_module() {
    let file = parse_ops_file(
        r#"
        use half::{bf16, f16};
        #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
        #[repr(C)]
        pub struct Mixed { pub h: f16, pub b: half::bf16, pub v: [f16; 3], pub n: u8 }
        pub struct Acc;
        #[scan_op]
        impl ScanOp for Acc {
            type Elem = Mixed;
            fn identity() -> Mixed { Mixed { h: f16::ZERO, b: bf16::ZERO, v: [f16::ZERO; 3], n: 0 } }
            fn combine(l: Mixed, r: Mixed) -> Mixed {
                let mut v = l.v;
                for i in 0..3 { v[i] += r.v[i]; }
                Mixed { h: l.h * r.h, b: l.b.max(r.b), v, n: l.n ^ r.n }
            }
        }
    "#,
    )
    .expect("parses");
    let spec = file.op_spec("Acc").expect("lowers");
    let scan_core::ElementType::Struct(s) = &spec.element else {
        panic!("a struct element")
    };
    #[repr(C)]
    struct Rust {
        _h: half::f16,
        _b: half::bf16,
        _v: [half::f16; 3],
        _n: u8,
    }
    assert_eq!(s.size, std::mem::size_of::<Rust>());
    assert_eq!(s.align, std::mem::align_of::<Rust>());
    assert_eq!(
        s.c_declaration(),
        "struct Mixed {\n    f16 h;\n    bf16 b;\n    rs_array<f16, 3> v;\n    u8 n;\n};"
    );
    assert!(
        spec.combine_body.contains("v[i] = rs_add(v[i], r.v[i]);"),
        "{}",
        spec.combine_body
    );
    assert!(
        spec.combine_body.contains("rs_mul(l.h, r.h)"),
        "{}",
        spec.combine_body
    );
}

#[test]
fn what_rust_or_the_lowering_rejects_on_half() {
    insta::assert_snapshot!(lower(r#"impl ScanOp for Bad {
        type Elem = f16;
        fn identity() -> f16 { 0.0 }
        fn combine(a: f16, b: f16) -> f16 {
            let x = a.to_f32() as f16;
            let y = b as f32;
            let z = a.sqrt();
            let w = f16::from_f64(1.0);
            let q = a.wrapping_add(b);
            let t = 1.5f32.to_f32();
            let u = a.from_f32();
            a + 1.0
        }
    }"#), @r#"
    3:32: `f16` has no literals (`half::f16` is a struct): write `f16::from_f32(1.5)`, or a constant such as `f16::ONE`
    5:35: `as f16` is not Rust (`half::f16` is a struct): write `f16::from_f32(x)`
    6:21: `as` cannot convert a `f16` (`half::f16` is a struct): write `.to_f32()` (or `.to_f64()`), then cast that
    7:23: `sqrt` cannot be lowered on `f16` (`half::f16` has no such method, or it is not supported): the methods of `f16` and `bf16` that lower are `min`, `max`, `clamp`, `is_nan`, `is_finite`, `is_infinite`, `is_sign_negative`, `is_sign_positive`, `to_f32`, `to_f64`, `to_bits`, `f16::from_f32`, `f16::from_bits`; or convert with `.to_f32()`, compute in `f32`, and round back with `f16::from_f32`
    8:21: `f16::from_f64` cannot be lowered to CUDA: `half` rounds an f64 to f16 differently depending on the host CPU (through f32 where the CPU converts in hardware); write `f16::from_f32(x as f32)`
    9:23: `wrapping_add` cannot be lowered on `f16` (`half::f16` has no such method, or it is not supported): the methods of `f16` and `bf16` that lower are `min`, `max`, `clamp`, `is_nan`, `is_finite`, `is_infinite`, `is_sign_negative`, `is_sign_positive`, `to_f32`, `to_f64`, `to_bits`, `f16::from_f32`, `f16::from_bits`; or convert with `.to_f32()`, compute in `f32`, and round back with `f16::from_f32`
    10:28: `to_f32` lowers on `f16` and `bf16` (`half`) only, not on `f32`
    11:23: `from_f32` is an associated function: call it as `f16::from_f32(x)`
    12:17: `f16` has no literals (`half::f16` is a struct): write `f16::from_f32(1.5)`, or a constant such as `f16::ONE`
    "#);
}
