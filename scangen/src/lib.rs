//! scangen: specialized GPU scan (prefix-sum) kernels for any associative operator written in Rust.
//!
//! ```ignore
//! use scangen::{scan_op, ScanElement, ScanOp};
//!
//! #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
//! #[repr(C)]
//! pub struct Affine { pub a: f32, pub b: f32 }
//!
//! pub struct Compose;
//!
//! #[scan_op]
//! impl ScanOp for Compose {
//!     type Elem = Affine;
//!     fn identity() -> Affine { Affine { a: 1.0, b: 0.0 } }
//!     fn combine(l: Affine, r: Affine) -> Affine { Affine { a: l.a * r.a, b: r.a * l.b + r.b } }
//! }
//! ```
//!
//! The facade re-exports the operator model ([`scan_core`]), code generation ([`codegen`]), the
//! runtime ([`runtime`]) and the macros.

pub use scan_core::*;
pub use scan_macros::{scan_op, ScanElement};

pub use scan_codegen::{Algorithm, ScanMode, TuningPolicy};

/// Code generation: render the CUDA source for an operator.
pub mod codegen {
    pub use scan_codegen::*;
}

/// Lowering of Rust operator source to the operator model (used by `scangen emit --file`).
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
