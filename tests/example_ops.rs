//! The operators of every example, read from the example sources the way
//! `scangen emit --file` reads them: their generated CUDA is snapshotted for every algorithm and
//! mode, and compiled with NVRTC (skipped without NVRTC unless SCANGEN_REQUIRE_NVRTC=1).

use scangen::codegen::{
    generate, generate_fused, snapshot_name, snapshot_source, Algorithm, ScanMode, ScanVariant,
    TuningPolicy,
};
use scangen::runtime::compile::{compile, compile_options, nvrtc_available};

const EXAMPLES: [(&str, &str); 12] = [
    ("running_max", include_str!("../examples/running_max.rs")),
    ("sum", include_str!("../examples/sum.rs")),
    (
        "linear_recurrence",
        include_str!("../examples/linear_recurrence.rs"),
    ),
    (
        "segmented_sum",
        include_str!("../examples/segmented_sum.rs"),
    ),
    ("argmax", include_str!("../examples/argmax.rs")),
    ("polynomial", include_str!("../examples/polynomial.rs")),
    ("forward_fill", include_str!("../examples/forward_fill.rs")),
    ("vector_ops", include_str!("../examples/vector_ops.rs")),
    (
        "classify_runs",
        include_str!("../examples/classify_runs.rs"),
    ),
    ("kadane", include_str!("../examples/kadane.rs")),
    (
        "running_argmin",
        include_str!("../examples/running_argmin.rs"),
    ),
    (
        "recurrence_arrays",
        include_str!("../examples/recurrence_arrays.rs"),
    ),
];

/// Every (example, operator, algorithm, mode) with its generated source; operators with
/// `lift`/`project` also as fused scans (`...__fused`, forward and reverse).
fn generated() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (example, text) in EXAMPLES {
        let file = scangen::lower::parse_ops_file(text)
            .unwrap_or_else(|e| panic!("{example}: {}", e.render(example)));
        let names = file.op_names();
        assert!(
            !names.is_empty(),
            "{example} defines no #[scan_op] operator"
        );
        for name in names {
            let (spec, transform) = file
                .op_transform(&name)
                .unwrap_or_else(|e| panic!("{example}: {}", e.render(example)));
            for algorithm in Algorithm::ALL {
                for mode in ScanMode::ALL {
                    let policy = TuningPolicy::for_target(90, algorithm, spec.element.size());
                    let g = generate(&spec, algorithm, mode, policy).expect("generates");
                    let name = snapshot_name(&spec.name, spec.element.c_name(), algorithm, mode);
                    out.push((name.clone(), g.source));
                    if let Some(t) = &transform {
                        for variant in [ScanVariant::FLAT, ScanVariant::FLAT.reverse()] {
                            let policy =
                                TuningPolicy::for_scan(90, algorithm, &spec, variant, Some(t));
                            let g = generate_fused(&spec, t, algorithm, mode, variant, policy)
                                .expect("generates fused");
                            out.push((format!("{name}__fused{}", variant.name_suffix()), g.source));
                        }
                    }
                }
            }
        }
    }
    out
}

#[test]
fn example_operators_generate_reviewed_cuda() {
    let all = generated();
    assert_eq!(
        all.len(),
        13 * 6 + 3 * 6 * 2,
        "thirteen example operators x three algorithms x two modes, and the three with lift/project fused (forward, reverse)"
    );
    for (name, source) in all {
        insta::assert_snapshot!(name, snapshot_source(&source));
    }
}

#[scan_testenv::needs(nvrtc)]
#[test]
fn example_operators_compile_with_nvrtc() {
    if let Err(e) = nvrtc_available() {
        if std::env::var("SCANGEN_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!("SCANGEN_REQUIRE_NVRTC=1 but {e}");
        }
        println!("skipped: {e} (install it with `. scripts/cuda-tools.sh`)");
        return;
    }
    let all = generated();
    let mut compiled = 0;
    for sm in [80, 90] {
        for (name, source) in &all {
            compile(source, &compile_options(sm))
                .unwrap_or_else(|e| panic!("{name} for sm_{sm}: {e}"));
            compiled += 1;
        }
    }
    println!("compiled {compiled} example-operator kernels with NVRTC (sm_80, sm_90)");
}
