//! Law evaluation with the operator's Rust combine, on the CPU.

use super::values::field_layout;
use super::{LawEvaluator, LawResults};
use scan_core::{ElementType, ScanElement, ScanOp};
use std::marker::PhantomData;

/// Evaluates the laws with `Op::combine` and `Op::identity`.
pub struct CpuLaws<Op: ScanOp> {
    element: ElementType,
    _op: PhantomData<Op>,
}

impl<Op: ScanOp> Default for CpuLaws<Op> {
    fn default() -> Self {
        CpuLaws {
            element: <Op::Elem as ScanElement>::element_type(),
            _op: PhantomData,
        }
    }
}

impl<Op: ScanOp> CpuLaws<Op> {
    /// An evaluator for `Op` (nothing to build: the combine is compiled into the program).
    pub fn new() -> Self {
        Self::default()
    }

    fn decode(&self, bytes: &[u8]) -> Op::Elem {
        assert_eq!(bytes.len(), std::mem::size_of::<Op::Elem>(), "element size");
        // SAFETY: ScanElement guarantees the described layout and that any field bit pattern is
        // a valid value; `bytes` has the element's size (padding bytes are zero).
        unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<Op::Elem>()) }
    }

    fn encode(&self, value: &Op::Elem) -> Vec<u8> {
        // Copy field by field: padding bytes of `value` are uninitialized and must not be read.
        let mut out = vec![0u8; std::mem::size_of::<Op::Elem>()];
        let base = (value as *const Op::Elem).cast::<u8>();
        for (_, ty, offset) in field_layout(&self.element) {
            // SAFETY: [offset, offset + size) is an initialized field inside `value`.
            let field = unsafe { std::slice::from_raw_parts(base.add(offset), ty.size()) };
            out[offset..offset + ty.size()].copy_from_slice(field);
        }
        out
    }
}

impl<Op: ScanOp> LawEvaluator for CpuLaws<Op> {
    fn name(&self) -> String {
        "cpu (the Rust combine)".into()
    }

    fn element(&self) -> &ElementType {
        &self.element
    }

    fn evaluate(
        &mut self,
        triples: &[[Vec<u8>; 3]],
    ) -> Result<Vec<LawResults>, Box<dyn std::error::Error>> {
        let e = Op::identity();
        triples
            .iter()
            .enumerate()
            .map(|(k, [a, b, c])| {
                let (a, b, c) = (self.decode(a), self.decode(b), self.decode(c));
                // A combine that panics (an overflow in a debug build) on a sample is the
                // checker's finding, not its crash.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    [
                        Op::combine(Op::combine(a, b), c),
                        Op::combine(a, Op::combine(b, c)),
                        Op::combine(e, a),
                        Op::combine(a, e),
                    ]
                }))
                .map(|r| r.map(|x| self.encode(&x)))
                .map_err(|panic| {
                    let why = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a panic".into());
                    format!(
                        "the Rust combine panicked on sample triple {k}: {why} (an overflow in a \
                         debug build is a law failure on this domain; sample the operator's \
                         real domain with laws::check_with)"
                    )
                    .into()
                })
            })
            .collect()
    }

    fn identity(&mut self) -> Result<Option<Vec<u8>>, Box<dyn std::error::Error>> {
        Ok(Some(self.encode(&Op::identity())))
    }
}
