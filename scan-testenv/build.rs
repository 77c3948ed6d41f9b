//! Probes, once per build, for what scangen's tests need from the machine: libnvrtc and
//! libcuda (loaded the way cudarc loads them: `dlopen` by name), and `ptxas` on `PATH`. Each
//! one found becomes a `cfg` of this crate, read by the `needs` attribute. Rerun when the
//! library search path, `PATH` or the loader cache changes, so installing the tools
//! (`. scripts/cuda-tools.sh`) is seen by the next `cargo test`.

use std::path::Path;

fn main() {
    for var in [
        "LD_LIBRARY_PATH",
        "DYLD_LIBRARY_PATH",
        "PATH",
        "SCANGEN_REQUIRE_NVRTC",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    if Path::new("/etc/ld.so.cache").exists() {
        println!("cargo::rerun-if-changed=/etc/ld.so.cache");
    }
    for cfg in ["nvrtc", "ptxas", "cuda_driver", "require_nvrtc"] {
        println!("cargo::rustc-check-cfg=cfg(scan_testenv_{cfg})");
    }
    let found = [
        ("nvrtc", loadable(&["nvrtc"])),
        ("ptxas", on_path("ptxas")),
        ("cuda_driver", loadable(&["cuda", "nvcuda"])),
        (
            "require_nvrtc",
            std::env::var("SCANGEN_REQUIRE_NVRTC").as_deref() == Ok("1"),
        ),
    ];
    for (cfg, present) in found {
        if present {
            println!("cargo::rustc-cfg=scan_testenv_{cfg}");
        }
    }
}

/// Whether any of cudarc's candidate names for these libraries (CUDA 12.8 bindings) loads.
fn loadable(libs: &[&str]) -> bool {
    use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};
    let w = if cfg!(target_pointer_width = "32") {
        "32"
    } else {
        "64"
    };
    libs.iter().any(|lib| {
        let names = [
            format!("{DLL_PREFIX}{lib}{DLL_SUFFIX}"),
            format!("{DLL_PREFIX}{lib}{w}{DLL_SUFFIX}"),
            format!("{DLL_PREFIX}{lib}{w}_12{DLL_SUFFIX}"),
            format!("{DLL_PREFIX}{lib}{w}_128{DLL_SUFFIX}"),
            format!("{DLL_PREFIX}{lib}{w}_128_0{DLL_SUFFIX}"),
            format!("{DLL_PREFIX}{lib}{w}_120_0{DLL_SUFFIX}"),
            format!("{DLL_PREFIX}{lib}{w}_120_8{DLL_SUFFIX}"),
            format!("{DLL_PREFIX}{lib}{w}_11{DLL_SUFFIX}"),
            format!("{DLL_PREFIX}{lib}{w}_10{DLL_SUFFIX}"),
            format!("{DLL_PREFIX}{lib}{DLL_SUFFIX}.12"),
            format!("{DLL_PREFIX}{lib}{DLL_SUFFIX}.11"),
            format!("{DLL_PREFIX}{lib}{DLL_SUFFIX}.10"),
            format!("{DLL_PREFIX}{lib}{DLL_SUFFIX}.9"),
            format!("{DLL_PREFIX}{lib}{DLL_SUFFIX}.1"),
        ];
        // SAFETY: loading runs the library's initialisers; these are NVIDIA's own libraries,
        // which the tests load the same way.
        names
            .iter()
            .any(|name| unsafe { libloading::Library::new(name) }.is_ok())
    })
}

fn on_path(tool: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| dir.join(tool).is_file())
}
