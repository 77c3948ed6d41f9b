//! Every example, run on the GPU: each checks its own result against a CPU computation.
//! Ignored by default (CI has no GPU); the GPU bundle runs it with --include-ignored, where a
//! missing GPU is a failure, not a silent CPU fallback.

macro_rules! examples {
    ($($name:ident = $path:literal),* $(,)?) => {
        $(
            #[path = $path]
            mod $name;
        )*

        #[test]
        #[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
        fn every_example_verifies_itself_on_the_gpu() {
            // Make a missing GPU an error instead of a fallback to the CPU backend.
            std::env::set_var("SCANGEN_BACKEND", "gpu");
            let mut failed = Vec::new();
            let mut passed = 0;
            $(
                println!("--- example {}", stringify!($name));
                match $name::main() {
                    Ok(()) => passed += 1,
                    Err(e) => {
                        println!("example {} FAILED: {e}", stringify!($name));
                        failed.push(stringify!($name));
                    }
                }
            )*
            println!("gpu suite (examples): {passed} cases passed, {} failed", failed.len());
            assert!(failed.is_empty(), "examples failed: {failed:?}");
        }
    };
}

examples!(
    running_max = "../examples/running_max.rs",
    sum = "../examples/sum.rs",
    linear_recurrence = "../examples/linear_recurrence.rs",
    segmented_sum = "../examples/segmented_sum.rs",
    argmax = "../examples/argmax.rs",
    stream_compaction = "../examples/stream_compaction.rs",
    polynomial = "../examples/polynomial.rs",
    graph_pipeline = "../examples/graph_pipeline.rs",
    kadane = "../examples/kadane.rs",
    running_argmin = "../examples/running_argmin.rs",
    recurrence_arrays = "../examples/recurrence_arrays.rs",
);
