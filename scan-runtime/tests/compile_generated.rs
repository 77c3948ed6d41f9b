//! Generated sources compile with NVRTC and define the entry points the runtime looks up. Needs
//! libnvrtc but no GPU (`. scripts/cuda-tools.sh`); skips, saying so, without it unless
//! `SCANGEN_REQUIRE_NVRTC=1`.

use scan_codegen::{generate, Algorithm, ScanMode, TuningPolicy};
use scan_core::builtin::{Add, Max, Xor};
use scan_core::{OpSpec, PrimType, ScanOp};
use scan_runtime::compile::{compile, compile_options, KernelImage};

mod common;
use common::{nvrtc_or_skip, uniform_struct};

fn affine_op() -> OpSpec {
    OpSpec {
        name: "compose".into(),
        element: uniform_struct("Affine", PrimType::F32, &["a", "b"]),
        lhs: "f".into(),
        rhs: "g".into(),
        combine_body: "Affine r; r.a = g.a * f.a; r.b = g.a * f.b + g.b; return r;".into(),
        identity_body: "Affine r; r.a = 1.0f; r.b = 0.0f; return r;".into(),
        word_form: None,
    }
}

#[scan_testenv::needs(nvrtc)]
#[test]
fn generated_kernels_compile_to_cubins_with_the_abi_entry_points() {
    if !nvrtc_or_skip("generated_kernels_compile_to_cubins_with_the_abi_entry_points") {
        return;
    }
    let ops = [
        Add::<i32>::device_op(),
        Max::<f64>::device_op(),
        Xor::<u8>::device_op(),
        affine_op(),
    ];
    for op in &ops {
        for algorithm in Algorithm::ALL {
            let mode = if algorithm == Algorithm::Blelloch {
                ScanMode::Exclusive
            } else {
                ScanMode::Inclusive
            };
            let policy = TuningPolicy::for_target(90, algorithm, op.element.size());
            let generated = generate(op, algorithm, mode, policy).unwrap();
            let image = compile(&generated.source, &compile_options(90))
                .unwrap_or_else(|e| panic!("{} {algorithm}: {e}", op.name));
            let KernelImage::Cubin(cubin) = image else {
                panic!("expected a CUBIN")
            };
            for name in generated.kernel_names() {
                let found = cubin.windows(name.len()).any(|w| w == name.as_bytes());
                assert!(found, "{} {algorithm}: CUBIN lacks entry `{name}`", op.name);
            }
        }
    }
}
