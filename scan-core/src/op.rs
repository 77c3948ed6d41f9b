//! The trait that ties an operator's Rust (CPU) definition to its C (GPU) lowering.

use crate::element::ScanElement;
use crate::spec::OpSpec;

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
