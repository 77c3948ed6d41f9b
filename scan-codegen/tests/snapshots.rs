//! Snapshots of the generated CUDA for every built-in op x algorithm x mode over i32, u64, f32
//! and f64 (bitwise ops on the integers only), plus a struct operator. Default sm_90 policy.
//!
//! Review changes with `cargo insta review`, or accept with `INSTA_UPDATE=always`.
//!
//! The Rust-semantics helpers (`scan-core/templates/rust_semantics.cu.tera`, owned by scan-lower) are
//! elided from the snapshots, so editing them does not churn every snapshot here; they are
//! compiled by the NVRTC test like everything else.

mod common;

use scan_codegen::{generate, snapshot_name, snapshot_source, Algorithm, ScanMode, TuningPolicy};
use scan_core::{BuiltinOp, OpSpec, PrimType};

const TYPES: [PrimType; 4] = [PrimType::I32, PrimType::U64, PrimType::F32, PrimType::F64];

fn check(op: &OpSpec, type_name: &str) {
    for algorithm in Algorithm::ALL {
        for mode in ScanMode::ALL {
            let policy = TuningPolicy::for_target(90, algorithm, op.element.size());
            let generated = generate(op, algorithm, mode, policy).expect("generates");
            insta::assert_snapshot!(
                snapshot_name(&op.name, type_name, algorithm, mode),
                snapshot_source(&generated.source)
            );
        }
    }
}

#[test]
fn builtin_ops() {
    for op in BuiltinOp::ALL {
        for ty in TYPES.into_iter().filter(|t| op.supports(*t)) {
            check(&op.spec(ty).unwrap(), ty.name());
        }
    }
}

/// The 2-byte floats: an f16 sum and a bf16 maximum (the other half built-ins differ only in
/// the combine line).
#[test]
fn half_builtin_ops() {
    for (op, ty) in [
        (BuiltinOp::Add, PrimType::F16),
        (BuiltinOp::Max, PrimType::BF16),
    ] {
        check(&op.spec(ty).unwrap(), ty.name());
    }
}

/// Packed sub-word items: u8 sums, i16 maxima and u8 xor fold and scan whole words (words.rs,
/// tile_words.cu.tera); u8 products unpack item by item.
#[test]
fn packed_builtin_ops() {
    for (op, ty) in [
        (BuiltinOp::Add, PrimType::U8),
        (BuiltinOp::Max, PrimType::I16),
        (BuiltinOp::Xor, PrimType::U8),
        (BuiltinOp::Mul, PrimType::U8),
    ] {
        check(&op.spec(ty).unwrap(), ty.name());
    }
}

/// A deferred packed tile whose scan reads its run back from shared memory (policy
/// deferred_scan_rereads_run), as the register ladder builds half max/min on sm_90: bf16 max,
/// single-pass, inclusive and exclusive, at 5 blocks per SM.
#[test]
fn deferred_scan_rereads_run() {
    let ty = PrimType::BF16;
    let op = BuiltinOp::Max.spec(ty).unwrap();
    for mode in ScanMode::ALL {
        let policy = TuningPolicy {
            min_blocks_per_sm: 5,
            deferred_scan_rereads_run: true,
            ..TuningPolicy::for_target(90, Algorithm::SinglePass, op.element.size())
        };
        let generated = generate(&op, Algorithm::SinglePass, mode, policy).expect("generates");
        assert!(generated
            .source
            .contains("scan_run_read<SPLITS>(smem, scan_thread_run_part(), items)"));
        let name = snapshot_name(&op.name, ty.name(), Algorithm::SinglePass, mode);
        insta::assert_snapshot!(
            format!("{name}__run-reread"),
            snapshot_source(&generated.source)
        );
    }
}

/// A 1-byte deferred tile reading its run back at the default's 6 blocks per SM, as the
/// many-waves shape builds byte max, min and products on sm_90 (policy
/// for_many_waves_input): the partial tile splits its run addresses too (render/context.rs,
/// `partial_runs_split`).
#[test]
fn byte_scan_of_many_waves_rereads_run() {
    let ty = PrimType::U8;
    let op = BuiltinOp::Max.spec(ty).unwrap();
    let policy = TuningPolicy::for_many_waves_input(
        90,
        Algorithm::SinglePass,
        op.element.size(),
        scan_codegen::Direction::Forward,
    )
    .expect("1-byte prefix scans have a many-waves shape");
    assert_eq!(policy.min_blocks_per_sm, 6);
    let generated =
        generate(&op, Algorithm::SinglePass, ScanMode::Inclusive, policy).expect("generates");
    assert!(generated
        .source
        .contains("static constexpr bool blocked = scan_smem_blocked_splits();"));
    let name = snapshot_name(
        &op.name,
        ty.name(),
        Algorithm::SinglePass,
        ScanMode::Inclusive,
    );
    insta::assert_snapshot!(
        format!("{name}__many-waves"),
        snapshot_source(&generated.source)
    );
}

#[test]
fn struct_op() {
    let op = common::affine_f32();
    check(&op, op.element.c_name());
}

/// Elements wider than 8 bytes, which full tiles move as whole vectors (policy element_vectors):
/// a 32-byte one (two 16-byte vectors, whole padded steps) and a 24-byte one (three 8-byte
/// vectors, unpadded), single-pass, forward and reverse.
#[test]
fn wide_struct_ops() {
    use scan_codegen::{generate_variant, ScanVariant};
    for op in [common::mat2_f32(), common::mixed_24()] {
        for variant in [ScanVariant::FLAT, ScanVariant::FLAT.reverse()] {
            let policy = TuningPolicy::for_target(90, Algorithm::SinglePass, op.element.size());
            let generated = generate_variant(
                &op,
                Algorithm::SinglePass,
                ScanMode::Inclusive,
                variant,
                policy,
            )
            .expect("generates");
            let name = snapshot_name(
                &op.name,
                op.element.c_name(),
                Algorithm::SinglePass,
                ScanMode::Inclusive,
            );
            insta::assert_snapshot!(
                format!("{name}{}", variant.name_suffix()),
                snapshot_source(&generated.source)
            );
        }
    }
}

/// Every scan shape (reverse; flags, keys, offsets, rows, strided rows; each reversed), inclusive
/// and exclusive, for an i32 sum and the non-commutative affine struct; hierarchical where the
/// variant allows (reverse). Named `<op>__<type>__<algo>__<mode>__<variant>`.
#[test]
fn variants() {
    use scan_codegen::{generate_variant, TuningPolicy};
    for (op, ty) in [
        (
            BuiltinOp::Add.spec(PrimType::I32).unwrap(),
            "i32".to_string(),
        ),
        {
            let a = common::affine_f32();
            let name = a.element.c_name().to_string();
            (a, name)
        },
    ] {
        for variant in common::variants() {
            for algorithm in Algorithm::ALL {
                if variant.supported_by(algorithm).is_err() {
                    continue;
                }
                for mode in ScanMode::ALL {
                    let policy = TuningPolicy::for_variant(
                        90,
                        algorithm,
                        op.element.size(),
                        op.element.align(),
                        variant,
                    );
                    let generated =
                        generate_variant(&op, algorithm, mode, variant, policy).expect("generates");
                    insta::assert_snapshot!(
                        format!(
                            "{}{}",
                            snapshot_name(&op.name, &ty, algorithm, mode),
                            variant.name_suffix()
                        ),
                        snapshot_source(&generated.source)
                    );
                }
            }
        }
    }
}

/// Fused lift/project (common::fused_ops: Kadane from i64, argmin from f32 with the index, an
/// affine recurrence from two f32 arrays) for every algorithm and mode, plus the recurrence
/// reversed and segmented by flags (single-pass). Named `<op>__<type>__<algo>__<mode>__fused...`.
#[test]
fn fused() {
    use scan_codegen::{generate_fused, ScanVariant, Segments};
    for (op, t) in common::fused_ops() {
        let ty = op.element.c_name().to_string();
        let mut variants = vec![ScanVariant::FLAT];
        if op.name == "affine_compose" {
            variants.push(ScanVariant::FLAT.reverse());
            variants.push(ScanVariant::FLAT.segments(Segments::Flags));
        }
        for variant in variants {
            for algorithm in Algorithm::ALL {
                if variant.supported_by(algorithm).is_err() {
                    continue;
                }
                for mode in ScanMode::ALL {
                    let policy = TuningPolicy::for_scan(90, algorithm, &op, variant, Some(&t));
                    let g = generate_fused(&op, &t, algorithm, mode, variant, policy)
                        .expect("generates");
                    assert_eq!(g.input_arrays(), t.inputs.len());
                    if algorithm == Algorithm::SinglePass {
                        // The L2 prefetch of a later tile asks for every input array's share.
                        assert!(g.policy.l2_prefetch_tiles > 0);
                        for k in 0..t.inputs.len() {
                            let call = format!("scan_prefetch_tile_l2(in.in{k}, n, tile);");
                            assert!(g.source.contains(&call), "{}: {call}", op.name);
                        }
                    }
                    insta::assert_snapshot!(
                        format!(
                            "{}__fused{}",
                            snapshot_name(&op.name, &ty, algorithm, mode),
                            variant.name_suffix()
                        ),
                        snapshot_source(&g.source)
                    );
                }
            }
        }
    }
}

/// A fused transform is checked before rendering: columns are refused with the reason, and
/// input arrays of a struct other than the element are refused.
#[test]
fn fused_refusals_are_typed() {
    use scan_codegen::{generate_fused, CodegenError, ScanVariant, Segments};
    let (op, t) = common::fused_ops().remove(2);
    let p = TuningPolicy::for_target(90, Algorithm::SinglePass, op.element.size());
    let e = generate_fused(
        &op,
        &t,
        Algorithm::SinglePass,
        ScanMode::Inclusive,
        ScanVariant::FLAT.segments(Segments::Columns),
        p,
    )
    .unwrap_err();
    assert!(matches!(e, CodegenError::InvalidVariant(_)), "{e}");
    let mut bad = t.clone();
    bad.inputs[0] = common::stats_12().element;
    let e = generate_fused(
        &op,
        &bad,
        Algorithm::SinglePass,
        ScanMode::Inclusive,
        ScanVariant::FLAT,
        p,
    )
    .unwrap_err();
    assert!(e.to_string().contains("primitive or the element"), "{e}");
    let mut bad = t;
    bad.lift_params.pop();
    let e = generate_fused(
        &op,
        &bad,
        Algorithm::SinglePass,
        ScanMode::Inclusive,
        ScanVariant::FLAT,
        p,
    )
    .unwrap_err();
    assert!(matches!(e, CodegenError::InvalidOp(_)), "{e}");
}
