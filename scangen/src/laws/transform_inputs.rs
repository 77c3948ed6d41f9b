//! Samples of an in-Rust operator with a `lift` (`#[scan_op]`'s `Transform`): folds of its Rust
//! `lift` of raw inputs, the elements a scan of real data combines (see `lifted.rs` for the
//! same from a file, through the evaluator).

use super::sampler::{element_bytes, ElementSampler, Folds};
use super::values::{moderate_input, sample_element, Rng};
use scan_core::{ElementType, ScanElement, Transform};
use std::marker::PhantomData;

/// Raw inputs of each of `Op`'s input arrays (primitives as in `laws::LiftedInputs`; an
/// element-typed input over every bit pattern), lifted with a random index by `Op::lift`.
pub struct TransformInputs<Op: Transform> {
    inputs: Vec<ElementType>,
    _op: PhantomData<fn() -> Op>,
}

impl<Op: Transform> TransformInputs<Op>
where
    Op::Elem: ScanElement,
{
    /// A sampler of `Op`'s lifted inputs; `None` when `Op` cannot lift from bytes (a
    /// hand-written `Transform` without `lift_bytes`).
    pub fn new() -> Option<TransformInputs<Op>> {
        let inputs = Op::device_transform().inputs;
        let zeros: Vec<Vec<u8>> = inputs.iter().map(|t| vec![0u8; t.size()]).collect();
        let views: Vec<&[u8]> = zeros.iter().map(Vec::as_slice).collect();
        // SAFETY: all-zero bytes are a valid value of every input type (primitives, and
        // elements whose `bool` fields read as false).
        unsafe { Op::lift_bytes(&views, 0) }?;
        Some(TransformInputs {
            inputs,
            _op: PhantomData,
        })
    }

    /// Folds of up to `max_len` lifted inputs under `Op::combine`.
    pub fn folds(self, max_len: usize) -> Folds<'static, TransformInputs<Op>> {
        Folds::new(
            self,
            Box::new(|a: &[u8], b: &[u8]| {
                element_bytes(&Op::combine(read_elem::<Op>(a), read_elem::<Op>(b)))
            }),
            max_len,
        )
    }
}

/// An element from bytes this module wrote (`element_bytes` of a valid element).
fn read_elem<Op: Transform>(bytes: &[u8]) -> Op::Elem {
    assert_eq!(
        bytes.len(),
        std::mem::size_of::<Op::Elem>(),
        "an element's bytes"
    );
    // SAFETY: the bytes are a valid element (written by `element_bytes` from one), sized above.
    unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<Op::Elem>()) }
}

impl<Op: Transform> ElementSampler for TransformInputs<Op>
where
    Op::Elem: ScanElement,
{
    fn sample(&mut self, rng: &mut Rng) -> Vec<u8> {
        let values: Vec<Vec<u8>> = self
            .inputs
            .iter()
            .map(|t| match t {
                ElementType::Prim(p) => moderate_input(*p, rng),
                element => sample_element(element, rng),
            })
            .collect();
        let views: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
        let index = rng.below(1 << 32);
        // SAFETY: each value was drawn as a valid value of its input type (sample_element
        // writes bools as 0 or 1).
        match unsafe { Op::lift_bytes(&views, index) } {
            Some(e) => element_bytes(&e),
            // `new` checked that Op lifts from bytes of these sizes; a hand-written
            // `lift_bytes` that refuses some anyway gets the identity sampled there.
            None => element_bytes(&Op::identity()),
        }
    }
    fn describe(&self) -> String {
        "lifted inputs (integers within ±2^20, floats within ±1000, a third 0/±1)".into()
    }
}
