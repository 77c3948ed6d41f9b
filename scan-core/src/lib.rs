//! The operator model shared by every part of scangen.
//!
//! Every operator source (the built-ins in [`builtin`], `#[scan_op]` impls, `scangen emit --file`)
//! ends as one [`OpSpec`]: a name, an element type and two C++ function bodies (combine and
//! identity). Code generation only ever sees an `OpSpec`; the CPU backend only ever sees a
//! [`ScanOp`]. A `ScanOp` carries both, so one Rust definition serves the CPU and the GPU.

pub mod builtin;
mod element;
mod op;
mod spec;

pub use builtin::{BuiltinOp, UnsupportedBuiltin};
pub use element::{field_type_of, FieldType, Leaf, PrimType, ScanElement, StructDecl, StructField};
pub use op::ScanOp;
pub use spec::{ElementType, OpSpec};
