#![warn(missing_docs)]

//! The operator model shared by every part of scangen.
//!
//! Every operator source (the built-ins in [`builtin`], `#[scan_op]` impls, `scangen emit --file`)
//! ends as one [`OpSpec`]: a name, an element type and two C++ function bodies (combine and
//! identity). Code generation only ever sees an `OpSpec`; the CPU backend only ever sees a
//! [`ScanOp`]. A `ScanOp` carries both, so one Rust definition serves the CPU and the GPU.

pub mod builtin;
/// The `half` crate, whose `f16` and `bf16` are element types (re-exported so that operators
/// can name them without a dependency of their own).
pub use half;
mod element;
mod op;
mod spec;
mod word_form;

pub use builtin::{BuiltinOp, UnsupportedBuiltin};
pub use element::{field_type_of, FieldType, Leaf, PrimType, ScanElement, StructDecl, StructField};
pub use op::{ScanOp, Transform};
pub use spec::{ElementType, OpSpec, TransformSpec};
pub use word_form::WordForm;

/// The Rust-semantics C++ helpers every generated kernel includes (`rs_wrapping_add`, `rs_shl`,
/// `rs_max`, ...): what lowered operators call so that the CUDA keeps Rust's meaning. Lives here,
/// below both the lowering (which emits calls to them) and the code generator (which renders them
/// into every kernel), so neither depends on the other.
pub const RUST_SEMANTICS_CU: &str = include_str!("../templates/rust_semantics.cu.tera");
