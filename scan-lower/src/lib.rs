//! Rust source -> scangen operator IR ([`scan_core::OpSpec`]).
//!
//! Shared by the `#[scan_op]`/`#[derive(ScanElement)]` macros and `scangen emit --file`.
//! The pipeline is: syn -> a span-carrying IR (unsupported constructs are reported here, at
//! their spans) -> a shape/signature check (its own pass) -> C++ text. Errors are collected,
//! never returned one at a time, so a user sees every mistake in one compile.
//!
//! The emitted C++ calls the helpers of `templates/rust_semantics.cu.tera` (`rs_add`,
//! `rs_max`, `rs_cast<T>`, ...), which give the Rust meaning of a release build.

mod element;
mod emit;
mod error;
mod file;
mod ir;
mod methods;
mod names;
mod op;

pub use element::{element_struct, prim_of_type, ElementStruct};
pub use emit::ElemRef;
pub use error::{Error, Errors};
pub use file::{parse_ops_file, FileDiagnostic, FileError, OpsFile};
pub use names::{field_name, struct_name};
pub use op::{check_impl, elem_ref, is_scan_op_attr, lower_impl, ImplShape, LoweredOp};

/// The Rust-semantics C++ helpers every generated kernel includes.
pub const RUST_SEMANTICS_CU: &str = include_str!("../../templates/rust_semantics.cu.tera");

/// The names of the methods (and `T::method` functions) that lower to CUDA.
pub fn supported_methods() -> Vec<&'static str> {
    methods::METHODS.iter().map(|m| m.name).collect()
}
