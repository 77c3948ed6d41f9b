//! `#[needs(...)]`: a test that needs something from the machine is *ignored*, with the
//! reason, when that was missing when the tests were built, instead of passing without
//! checking anything.
//!
//! ```ignore
//! #[scan_testenv::needs(nvrtc)]
//! #[test]
//! fn kernels_compile() { /* ... */ }
//! ```
//!
//! shows `test kernels_compile ... ignored, needs NVRTC: ...` on a machine without NVRTC.
//! What each need means:
//!
//! - `nvrtc`: libnvrtc loads. With `SCANGEN_REQUIRE_NVRTC=1` (CI, the GPU bundle) it is never
//!   ignored, so a missing NVRTC fails the test, loudly.
//! - `ptxas`: `ptxas` is on `PATH` (same rule as `nvrtc` under `SCANGEN_REQUIRE_NVRTC=1`).
//! - `no_cuda_driver`: libcuda does *not* load (tests of what happens without a driver).
//!
//! The probe is this crate's build script, rerun when `LD_LIBRARY_PATH`, `PATH` or the loader
//! cache change. `--include-ignored` runs the tests anyway; each keeps its own check at run
//! time (a test binary may run on another machine than the one that built it).

use proc_macro::TokenStream;

/// Marks the test `#[ignore]`d when one of the listed needs is not met (see the crate docs).
#[proc_macro_attribute]
pub fn needs(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut missing = Vec::new();
    for need in attr
        .to_string()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let unmet = match need {
            "nvrtc" => (!cfg!(scan_testenv_nvrtc) && !cfg!(scan_testenv_require_nvrtc))
                .then_some("NVRTC (libnvrtc not found; run `. scripts/cuda-tools.sh`)"),
            "ptxas" => (!cfg!(scan_testenv_ptxas) && !cfg!(scan_testenv_require_nvrtc))
                .then_some("ptxas (not on PATH; run `. scripts/cuda-tools.sh`)"),
            "no_cuda_driver" => cfg!(scan_testenv_cuda_driver)
                .then_some("a machine without a CUDA driver (libcuda loads here)"),
            other => {
                let msg =
                    format!("unknown need `{other}`: expected nvrtc, ptxas or no_cuda_driver");
                return format!("::core::compile_error!({msg:?});").parse().unwrap();
            }
        };
        missing.extend(unmet);
    }
    if missing.is_empty() {
        return item;
    }
    let reason = format!("needs {}", missing.join(" and "));
    let mut out: TokenStream = format!("#[ignore = {reason:?}]").parse().unwrap();
    out.extend(item);
    out
}
