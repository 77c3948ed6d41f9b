#![doc = include_str!("crate-docs.md")]
#![warn(missing_docs)]

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
