//! The trait that ties an operator's Rust (CPU) definition to its C (GPU) lowering.

use crate::element::ScanElement;
use crate::spec::{OpSpec, TransformSpec};

/// An associative operator with an identity element.
///
/// Laws (checked by `scangen check`, assumed by every algorithm):
/// `combine(combine(a, b), c) == combine(a, combine(b, c))` and
/// `combine(identity(), a) == a == combine(a, identity())`. Commutativity is *not* assumed:
/// every algorithm combines in sequence order, `combine(earlier, later)`.
///
/// Users write the impl with `#[scan_op]` on it, which lowers `combine` and `identity` to C and
/// fills in [`ScanOp::device_op`]; the built-ins in [`crate::builtin`] implement it by hand.
pub trait ScanOp: 'static {
    /// The element type the operator combines.
    type Elem: ScanElement;

    /// The identity element `e`: `combine(e, a) == a == combine(a, e)` for every `a`.
    fn identity() -> Self::Elem;

    /// Combines two elements, `lhs` the earlier in sequence order and `rhs` the later.
    fn combine(lhs: Self::Elem, rhs: Self::Elem) -> Self::Elem;

    /// The operator lowered to C, for code generation.
    fn device_op() -> OpSpec;
}

/// How an operator's input values become elements and its elements become outputs, so that a
/// scan (or a reduction) reads the inputs and writes the outputs of their own types, fused into
/// the kernels: nothing lifted is ever stored.
///
/// Users write `fn lift` and/or `fn project` inside their `#[scan_op] impl ScanOp`, which
/// generates this impl (a missing side is the identity): `lift(a: A, b: B, index: u64) -> Elem`
/// reads one value from each input array (`Input = (A, B)`; one array: `Input = A`) with the
/// position `index` of those values in their arrays; `project(e: Elem) -> Out`.
pub trait Transform: ScanOp {
    /// What one position of the input arrays holds: a primitive or the element for one array,
    /// a tuple of them for several (structure of arrays).
    type Input: Copy + Send + Sync + 'static;
    /// What the scan writes: a primitive or the element.
    type Output: ScanElement;

    /// The element of the input values at position `index`.
    fn lift(input: Self::Input, index: u64) -> Self::Elem;

    /// The output of an element (a scan's result at one position).
    fn project(elem: Self::Elem) -> Self::Output;

    /// `lift` and `project` lowered to C, for code generation.
    fn device_transform() -> TransformSpec;

    /// `lift` of one position given as bytes: one slice per input array (`repr(C)` layout, in
    /// [`TransformSpec::inputs`] order). It lets a tool that knows only the layouts (the law
    /// checker's samplers) run the Rust `lift`. `None` when the slices do not fit the inputs,
    /// or for a hand-written `Transform` that does not provide it (`#[scan_op]` does).
    ///
    /// # Safety
    /// Each slice of its input's size must hold a valid value of that type (every `bool` field
    /// 0 or 1).
    unsafe fn lift_bytes(inputs: &[&[u8]], index: u64) -> Option<Self::Elem> {
        let _ = (inputs, index);
        None
    }
}
