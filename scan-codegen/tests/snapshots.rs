//! Snapshots of the generated CUDA for every built-in op x algorithm x mode over i32, u64, f32
//! and f64 (bitwise ops on the integers only), plus a struct operator. Default sm_90 policy.
//!
//! Review changes with `cargo insta review`, or accept with `INSTA_UPDATE=always`.
//!
//! The Rust-semantics helpers (`templates/rust_semantics.cu.tera`, owned by scan-lower) are
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

#[test]
fn struct_op() {
    let op = common::affine_f32();
    check(&op, op.element.c_name());
}
