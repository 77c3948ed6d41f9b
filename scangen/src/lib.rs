//! scangen: specialized GPU scan (prefix-sum) kernels for any associative operator written in
//! Rust.
//!
//! Write the operator once, as Rust: `#[scan_op]` lowers its body to CUDA C++ at compile time,
//! the runtime specializes a device-wide scan for it, compiles it with NVRTC (cached in memory
//! and on disk) and runs it on the GPU; the same Rust runs on the CPU backend where there is no
//! GPU. This example runs anywhere (the CPU backend, on the calling thread):
//!
//! ```
//! use scangen::runtime::{CpuScanner, ScanOptions};
//! use scangen::{scan_op, ScanElement, ScanOp};
//!
//! /// x -> a*x + b
//! #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
//! #[repr(C)]
//! pub struct Affine {
//!     pub a: f32,
//!     pub b: f32,
//! }
//!
//! /// Composition of affine maps: scanning them gives every prefix of a linear recurrence.
//! pub struct Compose;
//!
//! #[scan_op]
//! impl ScanOp for Compose {
//!     type Elem = Affine;
//!     fn identity() -> Affine {
//!         Affine { a: 1.0, b: 0.0 }
//!     }
//!     fn combine(l: Affine, r: Affine) -> Affine {
//!         Affine { a: l.a * r.a, b: r.a * l.b + r.b }
//!     }
//! }
//!
//! # fn main() -> Result<(), scangen::runtime::ScanError> {
//! // x[i] = 2 * x[i-1] + 1 from x[-1] = 0: 1, 3, 7, 15.
//! let steps = [Affine { a: 2.0, b: 1.0 }; 4];
//! let mut scanner = CpuScanner::<Compose>::new(ScanOptions::default().cpu_sequential());
//! let prefixes = scanner.scan(&steps)?;
//! let xs: Vec<f32> = prefixes.iter().map(|m| m.a * 0.0 + m.b).collect();
//! assert_eq!(xs, [1.0, 3.0, 7.0, 15.0]);
//!
//! // The operator as the GPU sees it: the combine lowered to CUDA C++ (nothing is compiled
//! // until a GPU scanner is built).
//! let op = Compose::device_op();
//! assert_eq!(op.name, "Compose");
//! assert!(!op.combine_body.is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! On a machine with a GPU, [`runtime::auto`] picks the GPU (or the CPU backend, saying why),
//! and [`runtime::Gpu::scanner`] builds a GPU scanner that also scans device buffers on your own
//! CUDA stream:
//!
//! ```no_run
//! # use scangen::builtin::Add;
//! use scangen::runtime::{auto, ScanOptions};
//! # fn main() -> Result<(), scangen::runtime::ScanError> {
//! let mut scanner = auto::<Add<u32>>(ScanOptions::default().exclusive())?;
//! assert_eq!(scanner.scan(&[1, 2, 3])?, vec![0, 1, 3]);
//! println!("{}", scanner.backend_name());
//! # Ok(())
//! # }
//! ```
//!
//! The facade re-exports the operator model ([`scan_core`]: [`ScanOp`], [`ScanElement`], the
//! built-in operators), code generation ([`codegen`]), the runtime ([`runtime`]), the macros,
//! the law checker ([`laws`]) and, with the `lower` feature, the lowering of operator source at
//! run time (`lower`). It has none of the `scangen` command-line tool's dependencies (that is
//! the `scangen-cli` package).

pub use scan_core::*;
pub use scan_macros::{scan_op, ScanElement};

pub use scan_codegen::{Algorithm, ScanMode, TuningPolicy};

/// Code generation: render the CUDA source for an operator.
pub mod codegen {
    pub use scan_codegen::*;
}

/// Lowering of Rust operator source to the operator model at run time (used by
/// `scangen emit --file`). Feature `lower`.
#[cfg(feature = "lower")]
pub mod lower {
    pub use scan_lower::*;
}

/// The runtime: GPU scanners, the CPU backend and their errors.
pub mod runtime {
    pub use scan_runtime::*;
}

pub mod laws;

/// Paths used by code the macros generate. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use scan_core;
    pub use scan_runtime::cudarc;
}
