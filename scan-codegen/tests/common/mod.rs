//! Hand-built operators over `#[repr(C)]` structs, shared by the snapshot and NVRTC tests.
#![allow(dead_code)]

use scan_core::{ElementType, OpSpec, PrimType, StructDecl, StructField};

fn decl(name: &str, fields: &[(&str, PrimType)]) -> ElementType {
    ElementType::Struct(StructDecl::new(
        name,
        fields
            .iter()
            .map(|(n, t)| StructField {
                name: (*n).into(),
                ty: (*t).into(),
            })
            .collect(),
    ))
}

fn op(name: &str, element: ElementType, combine: &str, identity: &str) -> OpSpec {
    OpSpec {
        name: name.into(),
        element,
        lhs: "lhs".into(),
        rhs: "rhs".into(),
        combine_body: combine.into(),
        identity_body: identity.into(),
        word_form: None,
    }
}

/// Composition of affine maps x -> a*x + b, earlier map applied first (not commutative);
/// 8 bytes.
pub fn affine_f32() -> OpSpec {
    op(
        "affine_compose",
        decl("Affine", &[("a", PrimType::F32), ("b", PrimType::F32)]),
        "f32 a = lhs.a * rhs.a;\nf32 b = rhs.a * lhs.b + rhs.b;\nAffine r;\nr.a = a;\nr.b = b;\nreturn r;",
        "Affine r;\nr.a = 1.0f;\nr.b = 0.0f;\nreturn r;",
    )
}

/// 12 bytes: count, sum and maximum in one pass.
pub fn stats_12() -> OpSpec {
    op(
        "stats",
        decl("Stats", &[("count", PrimType::U32), ("sum", PrimType::F32), ("max", PrimType::F32)]),
        "Stats r;\nr.count = lhs.count + rhs.count;\nr.sum = lhs.sum + rhs.sum;\nr.max = fmaxf(lhs.max, rhs.max);\nreturn r;",
        "Stats r;\nr.count = 0u;\nr.sum = -0.0f;\nr.max = __int_as_float((int)0xff800000u);\nreturn r;",
    )
}

/// 2 bytes: a wrapping byte sum and a byte maximum.
pub fn byte_pair() -> OpSpec {
    op(
        "byte_pair",
        decl("BytePair", &[("sum", PrimType::U8), ("max", PrimType::U8)]),
        "BytePair r;\nr.sum = (u8)((u32)lhs.sum + (u32)rhs.sum);\nr.max = lhs.max < rhs.max ? rhs.max : lhs.max;\nreturn r;",
        "BytePair r;\nr.sum = (u8)0;\nr.max = (u8)0;\nreturn r;",
    )
}

/// 16 bytes, 4-byte aligned: 2x2 matrix product, earlier on the left (not commutative).
pub fn mat2_f32() -> OpSpec {
    op(
        "mat2_mul",
        decl("Mat2", &[("m00", PrimType::F32), ("m01", PrimType::F32), ("m10", PrimType::F32), ("m11", PrimType::F32)]),
        "Mat2 r;\nr.m00 = lhs.m00 * rhs.m00 + lhs.m01 * rhs.m10;\nr.m01 = lhs.m00 * rhs.m01 + lhs.m01 * rhs.m11;\n\
         r.m10 = lhs.m10 * rhs.m00 + lhs.m11 * rhs.m10;\nr.m11 = lhs.m10 * rhs.m01 + lhs.m11 * rhs.m11;\nreturn r;",
        "Mat2 r;\nr.m00 = 1.0f;\nr.m01 = 0.0f;\nr.m10 = 0.0f;\nr.m11 = 1.0f;\nreturn r;",
    )
}

/// 16 bytes, 8-byte aligned: affine composition in f64.
pub fn affine_f64() -> OpSpec {
    op(
        "affine_compose_f64",
        decl("AffineF64", &[("a", PrimType::F64), ("b", PrimType::F64)]),
        "AffineF64 r;\nr.a = lhs.a * rhs.a;\nr.b = rhs.a * lhs.b + rhs.b;\nreturn r;",
        "AffineF64 r;\nr.a = 1.0;\nr.b = 0.0;\nreturn r;",
    )
}

/// 24 bytes with interior padding (u8, f64, u16).
pub fn mixed_24() -> OpSpec {
    op(
        "mixed",
        decl("Mixed", &[("flag", PrimType::U8), ("value", PrimType::F64), ("tag", PrimType::U16)]),
        "Mixed r;\nr.flag = (u8)(lhs.flag | rhs.flag);\nr.value = lhs.value + rhs.value;\nr.tag = lhs.tag < rhs.tag ? rhs.tag : lhs.tag;\nreturn r;",
        "Mixed r;\nr.flag = (u8)0;\nr.value = -0.0;\nr.tag = (u16)0;\nreturn r;",
    )
}

/// 4 bytes of 2-byte floats: an f16 sum beside a bf16 maximum (rust_semantics.cu.tera's
/// operators on `f16`/`bf16`). Not in `struct_ops` yet: its exclusive single-pass kernel keeps
/// an 8-byte stack frame on sm_80 even at one block per SM (follow-up of the sub-word work);
/// `SCANGEN_NVRTC_FILTER=half_pair` after adding it back shows it.
pub fn half_pair() -> OpSpec {
    op(
        "half_pair",
        decl("HalfPair", &[("sum", PrimType::F16), ("max", PrimType::BF16)]),
        "HalfPair r;\nr.sum = lhs.sum + rhs.sum;\nr.max = rs_max(lhs.max, rhs.max);\nreturn r;",
        "HalfPair r;\nr.sum = rs_from_bits<f16>((u16)0x8000u);\nr.max = rs_from_bits<bf16>((u16)0xff80u);\nreturn r;",
    )
}

pub fn struct_ops() -> Vec<OpSpec> {
    vec![
        affine_f32(),
        stats_12(),
        byte_pair(),
        mat2_f32(),
        affine_f64(),
        mixed_24(),
    ]
}

/// Every scan shape beyond the flat forward scan: reverse, each segment rule (keys of several
/// widths, both offset widths, contiguous and strided rows), and each segment rule reversed.
#[allow(dead_code)]
pub fn variants() -> Vec<scan_codegen::ScanVariant> {
    use scan_codegen::{OffsetWidth, ScanVariant, Segments};
    use scan_core::PrimType;
    let segments = [
        Segments::Flags,
        Segments::Keys(PrimType::U8),
        Segments::Keys(PrimType::I32),
        Segments::Keys(PrimType::U64),
        Segments::Offsets(OffsetWidth::U32),
        Segments::Offsets(OffsetWidth::U64),
        Segments::Rows { strided: false },
        Segments::Rows { strided: true },
        Segments::Columns,
    ];
    let mut out = vec![ScanVariant::FLAT.reverse()];
    for s in segments {
        out.push(ScanVariant::FLAT.segments(s));
        out.push(ScanVariant::FLAT.segments(s).reverse());
    }
    out
}

/// Fused operators: an operator, its lift/project, and the name of the output type (snapshot
/// and job names). Hand-written C, as the lowering would give it.
#[allow(dead_code)]
pub fn fused_ops() -> Vec<(OpSpec, scan_core::TransformSpec)> {
    use scan_core::TransformSpec;
    let kad = decl(
        "Kad",
        &[
            ("best", PrimType::I64),
            ("prefix", PrimType::I64),
            ("suffix", PrimType::I64),
            ("total", PrimType::I64),
        ],
    );
    let kadane = op(
        "kadane",
        kad.clone(),
        "Kad r;\nr.best = rs_max(rs_max(lhs.best, rhs.best), rs_wrapping_add(lhs.suffix, rhs.prefix));\n\
         r.prefix = rs_max(lhs.prefix, rs_wrapping_add(lhs.total, rhs.prefix));\n\
         r.suffix = rs_max(rhs.suffix, rs_wrapping_add(lhs.suffix, rhs.total));\n\
         r.total = rs_wrapping_add(lhs.total, rhs.total);\nreturn r;",
        "Kad r;\nr.best = (i64)(-4611686018427387904ll);\nr.prefix = r.best;\nr.suffix = r.best;\nr.total = (i64)0;\nreturn r;",
    );
    let kadane_t = TransformSpec {
        inputs: vec![ElementType::Prim(PrimType::I64)],
        lift_params: vec!["x".into(), "index".into()],
        lift_body: "(void)index;\nKad r;\nr.best = x;\nr.prefix = x;\nr.suffix = x;\nr.total = x;\nreturn r;".into(),
        output: ElementType::Prim(PrimType::I64),
        project_param: "e".into(),
        project_body: "return e.best;".into(),
    };
    let arg = decl(
        "ArgMin",
        &[("value", PrimType::F32), ("index", PrimType::U64)],
    );
    let argmin = op(
        "argmin",
        arg,
        "if (rhs.value < lhs.value) {\n    return rhs;\n}\nreturn lhs;",
        "ArgMin r;\nr.value = __int_as_float((int)0x7f800000u);\nr.index = (u64)18446744073709551615ull;\nreturn r;",
    );
    let argmin_t = TransformSpec {
        inputs: vec![ElementType::Prim(PrimType::F32)],
        lift_params: vec!["value".into(), "index".into()],
        lift_body: "ArgMin r;\nr.value = value;\nr.index = index;\nreturn r;".into(),
        output: ElementType::Prim(PrimType::U64),
        project_param: "e".into(),
        project_body: "return e.index;".into(),
    };
    let recurrence_t = TransformSpec {
        inputs: vec![
            ElementType::Prim(PrimType::F32),
            ElementType::Prim(PrimType::F32),
        ],
        lift_params: vec!["a".into(), "b".into(), "index".into()],
        lift_body: "(void)index;\nAffine r;\nr.a = a;\nr.b = b;\nreturn r;".into(),
        output: ElementType::Prim(PrimType::F32),
        project_param: "m".into(),
        project_body: "return m.b;".into(),
    };
    vec![
        (kadane, kadane_t),
        (argmin, argmin_t),
        (affine_f32(), recurrence_t),
    ]
}
