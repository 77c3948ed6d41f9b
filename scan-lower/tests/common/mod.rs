//! NVRTC for the lowering tests: compiling a lowered operator with the Rust-semantics helpers
//! (`--std=c++17`, no includes) and reading the log.

#![allow(dead_code)]

use cudarc::nvrtc::result;
use std::ffi::{CStr, CString};

pub const PRELUDE: &str = "typedef signed char i8;\ntypedef short i16;\ntypedef int i32;\ntypedef long long i64;\n\
typedef unsigned char u8;\ntypedef unsigned short u16;\ntypedef unsigned int u32;\ntypedef unsigned long long u64;\n\
typedef float f32;\ntypedef double f64;\n";

pub fn nvrtc_available() -> bool {
    let present = std::panic::catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() })
        .unwrap_or(false);
    if !present {
        if std::env::var("SCANGEN_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!("SCANGEN_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded: run `. scripts/cuda-tools.sh`");
        }
        eprintln!("skipping: libnvrtc not found (run `. scripts/cuda-tools.sh` to install it)");
    }
    present
}

/// Compiles `src`; returns the log (empty on a clean compile) or panics with it on failure.
pub fn compile(src: &str) -> String {
    let csrc = CString::new(src).unwrap();
    let prog = result::create_program(&csrc, None).unwrap();
    let opts: Vec<String> = vec!["--std=c++17".into(), "-arch=compute_80".into()];
    let res = unsafe { result::compile_program(prog, &opts) };
    let log = unsafe { result::get_program_log(prog) }.unwrap();
    let log = unsafe { CStr::from_ptr(log.as_ptr()) }
        .to_string_lossy()
        .trim()
        .to_string();
    unsafe { result::destroy_program(prog) }.unwrap();
    if res.is_err() {
        panic!("NVRTC failed:\n{log}\n---- source ----\n{}", numbered(src));
    }
    log
}

pub fn numbered(src: &str) -> String {
    src.lines()
        .enumerate()
        .map(|(i, l)| format!("{:4} {l}\n", i + 1))
        .collect()
}

pub fn harness(op: &scan_core::OpSpec) -> String {
    let mut s = String::from(PRELUDE);
    s.push_str(scan_lower::RUST_SEMANTICS_CU);
    let t = op.element.c_name().to_string();
    if let scan_core::ElementType::Struct(d) = &op.element {
        for n in d.nested_structs() {
            s.push_str(&n.c_declaration());
            s.push('\n');
        }
        s.push_str(&d.c_declaration());
        s.push('\n');
        s.push_str(&format!(
            "static_assert(sizeof({}) == {}, \"size\");\n",
            d.name, d.size
        ));
    }
    s.push_str(&format!(
        "__device__ __forceinline__ {t} scan_combine({t} {}, {t} {}) {{\n{}\n}}\n",
        op.lhs, op.rhs, op.combine_body
    ));
    s.push_str(&format!(
        "__device__ __forceinline__ {t} scan_identity() {{\n{}\n}}\n",
        op.identity_body
    ));
    s.push_str(&format!(
        "extern \"C\" __global__ void k(const {t}* in, {t}* out, unsigned long long n) {{\n    \
         unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n    \
         if (i + 1 < n) out[i] = scan_combine(in[i], in[i + 1]);\n    \
         if (i == 0) out[n - 1] = scan_identity();\n}}\n"
    ));
    s
}
