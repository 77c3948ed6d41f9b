//! A CPU evaluator of the operator IR: runs an operator of an ops file without rustc or a
//! GPU, on elements as the bytes of their `#[repr(C)]` layout.
//!
//! It walks the same span-carrying IR the lowering emits C++ from (`crate::ir`), with the
//! lowering's meaning, which is a release build's: integers wrap, a zero divisor gives 0,
//! shift amounts are masked, float operations round once each (no contraction), casts
//! saturate, `f32::min`/`max` ignore a NaN. Float functions (`exp`, `sin`, `powf`, ...) are
//! Rust's own, so they equal the Rust combine bit for bit and may differ from the GPU's by a
//! few ulp. `f16`/`bf16` values are `half`'s types, computed with `half`'s operators and
//! methods (through `f32`, rounded back to nearest, ties to even), the Rust combine's own. Untyped literals are typed where they meet a typed value, an annotation, a field,
//! a parameter or a return (rustc's inference, applied late).
//!
//! Files: `value.rs` (values, coercion), `arith.rs` (operators, casts), `methods.rs`
//! (built-in methods), `interp.rs` (expressions), `control.rs` (blocks, loops, assignment),
//! `pattern.rs`, `names.rs` (locals, `const`s, helpers), `program.rs` (the operator's IR and
//! items), `bytes.rs` (layout), `build.rs` (from an ops file), `scan.rs` (sequential scans).
//!
//! Speed: the crate is built unoptimised in release too (the workspace's `Cargo.toml`: it
//! parses a file once per command), yet a scan evaluates the bodies once per element. So the
//! per-element paths are written for unoptimised code: each expression kind is evaluated by a
//! function of its own (an unoptimised stack frame holds the locals of every arm), loops over
//! fields and locals index instead of chaining `zip`/`enumerate`/`rev` (each step of an
//! adapter is several calls), locals borrow their names from the IR, and a scan runs every
//! element in one reused `Frame`. `cargo run --release -p scangen-lower --example eval_speed`
//! times it.

mod arith;
mod build;
mod bytes;
mod control;
mod error;
mod interp;
mod methods;
mod names;
mod pattern;
mod program;
mod scan;
mod transform;
mod value;

pub use error::EvalError;
pub use transform::ValueLayout;

use interp::{Flow, Frame, Interp};
use program::Program;
use scan_core::ElementType;

/// An operator of an ops file, ready to evaluate on the CPU ([`crate::OpsFile::evaluator`]).
///
/// Not `Send`: it holds the syn items its helpers are converted from on first use.
pub struct EvalOp {
    prog: Program,
    element: ElementType,
}

impl EvalOp {
    /// The operator's name.
    pub fn name(&self) -> &str {
        &self.prog.op_name
    }

    /// The element type (layout of the bytes [`EvalOp::combine`] takes and returns).
    pub fn element(&self) -> &ElementType {
        &self.element
    }

    /// `identity()`, as bytes.
    pub fn identity(&self) -> Result<Vec<u8>, EvalError> {
        let mut out = vec![0u8; self.element.size()];
        self.identity_into(&mut out)?;
        Ok(out)
    }

    /// `identity()` into `out` (the element's size).
    pub fn identity_into(&self, out: &mut [u8]) -> Result<(), EvalError> {
        let mut runner = self.runner();
        let v = self.run(&mut runner, &self.prog.identity)?;
        self.store(v, out)
    }

    /// `combine(lhs, rhs)` of two elements as bytes.
    pub fn combine(&self, lhs: &[u8], rhs: &[u8]) -> Result<Vec<u8>, EvalError> {
        let mut out = vec![0u8; self.element.size()];
        self.combine_into(lhs, rhs, &mut out)?;
        Ok(out)
    }

    /// `combine(lhs, rhs)` into `out`; all three are the element's size. Padding bytes of
    /// `out` are written as zero.
    pub fn combine_into(&self, lhs: &[u8], rhs: &[u8], out: &mut [u8]) -> Result<(), EvalError> {
        let size = self.element.size();
        for b in [lhs, rhs, &*out] {
            if b.len() != size {
                return Err(EvalError::WrongSize {
                    expected: size,
                    got: b.len(),
                });
            }
        }
        self.combine_in(&mut self.runner(), lhs, rhs, out)
    }

    /// [`EvalOp::combine_into`] (sizes checked) in `runner`, which a scan reuses for every
    /// element.
    fn combine_in<'a>(
        &'a self,
        runner: &mut Runner<'a>,
        lhs: &[u8],
        rhs: &[u8],
        out: &mut [u8],
    ) -> Result<(), EvalError> {
        let frame = runner.start();
        let [l, r] = &self.prog.combine_params;
        if let Some(name) = l {
            frame.bind(name, bytes::decode(&self.prog.elem, lhs, 0));
        }
        if let Some(name) = r {
            frame.bind(name, bytes::decode(&self.prog.elem, rhs, 0));
        }
        let v = self.run(runner, &self.prog.combine)?;
        self.store(v, out)
    }

    /// What the operator's own bodies run in: the module's items in scope, `Self` the
    /// operator.
    fn runner(&self) -> Runner<'_> {
        Runner {
            interp: Interp::new(&self.prog),
            frame: Frame::new(vec![&self.prog.module], Some(&self.prog.op_name)),
        }
    }

    /// Runs one of the operator's bodies in `runner`, whose frame holds its parameters.
    fn run<'a>(
        &'a self,
        runner: &mut Runner<'a>,
        body: &'a crate::ir::Block,
    ) -> Result<value::Value, EvalError> {
        match runner.interp.block(&mut runner.frame, body) {
            Ok(v) => Ok(v),
            Err(Flow::Return(v)) => Ok(*v),
            Err(Flow::Error(e)) => Err(*e),
            Err(Flow::Break | Flow::Continue) => Err(error::unsupported(
                body.span,
                "`break` or `continue` outside a loop",
            )),
        }
    }

    fn store(&self, v: value::Value, out: &mut [u8]) -> Result<(), EvalError> {
        let v = v.coerce(&self.prog.elem);
        out.fill(0);
        if bytes::encode(&self.prog.elem, &v, out, 0) {
            Ok(())
        } else {
            Err(error::unsupported(
                self.prog.combine.span,
                format!(
                    "a result of {} where the element is {}",
                    v.kind(),
                    self.element.c_name()
                ),
            ))
        }
    }
}

/// The interpreter and the frame an operator's own bodies run in. A scan runs every element's
/// bodies in one, reusing its storage.
struct Runner<'a> {
    interp: Interp<'a>,
    frame: Frame<'a>,
}

impl<'a> Runner<'a> {
    /// Makes the runner ready to run a body (the step limit applies to each); returns the
    /// frame to bind its parameters in.
    fn start(&mut self) -> &mut Frame<'a> {
        self.interp.start();
        self.frame.reuse();
        &mut self.frame
    }
}

impl std::fmt::Debug for EvalOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalOp")
            .field("name", &self.prog.op_name)
            .field("element", &self.element)
            .finish()
    }
}
