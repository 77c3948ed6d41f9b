#![warn(missing_docs)]

//! Rust source -> scangen operator IR ([`scan_core::OpSpec`]).
//!
//! Shared by the `#[scan_op]`/`#[derive(ScanElement)]` macros and `scangen emit --file`.
//! The pipeline is: syn -> a span-carrying IR (unsupported constructs are reported here, at
//! their spans) -> a shape/signature check (its own pass) -> C++ text. Errors are collected,
//! never returned one at a time, so a user sees every mistake in one compile.
//!
//! The emitted C++ calls the helpers of `scan-core/templates/rust_semantics.cu.tera` (`rs_add`,
//! `rs_max`, `rs_cast<T>`, ...), which give the Rust meaning of a release build.
//!
//! Most users never call this crate: `#[scan_op]` runs it at compile time. It is what
//! `scangen emit --file` uses to take operators from a source file, as here; the same file's
//! operators also run on the CPU without rustc ([`OpsFile::evaluator`], [`EvalOp`]):
//!
//! ```
//! use scan_lower::parse_ops_file;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let file = parse_ops_file(
//!     r#"
//!     #[derive(Clone, Copy, ScanElement)]
//!     #[repr(C)]
//!     pub struct Range { pub lo: i32, pub hi: i32 }
//!
//!     pub struct Span;
//!
//!     #[scan_op]
//!     impl ScanOp for Span {
//!         type Elem = Range;
//!         fn identity() -> Range { Range { lo: i32::MAX, hi: i32::MIN } }
//!         fn combine(l: Range, r: Range) -> Range {
//!             Range { lo: l.lo.min(r.lo), hi: l.hi.max(r.hi) }
//!         }
//!     }
//!     "#,
//! )?;
//! assert_eq!(file.op_names(), ["Span"]);
//!
//! // The operator model code generation takes: the element's layout and C++ bodies.
//! let spec = file.op_spec("Span")?;
//! assert_eq!(spec.element.size(), 8);
//! println!("{}", spec.combine_body);
//!
//! // The same operator evaluated on the CPU, on elements as the bytes of their layout.
//! let op = file.evaluator("Span")?;
//! let range = |lo: i32, hi: i32| [lo.to_ne_bytes(), hi.to_ne_bytes()].concat();
//! assert_eq!(op.combine(&range(1, 5), &range(-2, 3))?, range(-2, 5));
//!
//! // Mistakes are collected, each at its line and column, not reported one at a time.
//! let bad = parse_ops_file(
//!     "pub struct Bad;\n\
//!      #[scan_op]\n\
//!      impl ScanOp for Bad {\n\
//!          type Elem = u128;\n\
//!          fn identity() -> u128 { 0 }\n\
//!      }\n",
//! )?;
//! let errors = bad.op_spec("Bad").unwrap_err();
//! assert!(errors.diagnostics.len() >= 2, "{errors}");
//! # Ok(())
//! # }
//! ```

mod debug;
mod element;
mod emit;
mod error;
mod eval;
mod file;
mod ir;
mod methods;
mod names;
mod op;

pub use element::{element_struct, ElementStruct, FieldShape};
pub use emit::ElemRef;
pub use error::{Error, Errors};
pub use eval::{EvalError, EvalOp, ValueLayout};
pub use file::{parse_ops_file, FileDiagnostic, FileError, OpsFile};
pub use names::struct_name;
pub use op::{
    check_impl, is_scan_op_attr, lower_impl, lower_impl_in, ImplShape, LoweredOp, LoweredTransform,
    Scope, MAX_LIFT_INPUTS,
};

/// The Rust-semantics C++ helpers every generated kernel includes.
pub use scan_core::RUST_SEMANTICS_CU;

/// What a host C++ compiler needs to compile [`RUST_SEMANTICS_CU`] and lowered operators
/// (the prelude's typedefs, the CUDA qualifiers as nothing, the intrinsics the helpers call):
/// the differential tests compile lowered code for the host and compare it with the Rust.
#[doc(hidden)]
pub const HOST_CXX_SHIM: &str = r#"
#include <stdio.h>
#include <string.h>
#include <math.h>
#define __device__
#define __forceinline__ inline
typedef signed char i8; typedef short i16; typedef int i32; typedef long long i64;
typedef unsigned char u8; typedef unsigned short u16; typedef unsigned int u32; typedef unsigned long long u64;
typedef float f32; typedef double f64;
static inline float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
static inline int __float_as_int(float f) { int x; memcpy(&x, &f, 4); return x; }
static inline double __longlong_as_double(long long x) { double d; memcpy(&d, &x, 8); return d; }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) { return (unsigned long long)(((unsigned __int128)a * b) >> 64); }
"#;
