//! Samples of an operator with a `lift`, from a file: folds of lifted raw inputs, the elements a
//! scan of real data ever combines. Every bit pattern of a lifted element is not that domain:
//! Kadane's identity sentinels, or an argmin's index, are never met at those values, and the
//! checker would report lawful operators unlawful on them.

use super::sampler::{ElementSampler, Folds};
use super::values::{moderate_input, Rng};
use scan_lower::{EvalError, EvalOp, ValueLayout};
use std::cell::RefCell;

/// Raw inputs drawn per input array of `lift` (integers within ±2^20, or 0..2^20 unsigned;
/// floats within ±1000; a third of them 0, 1 or -1), lifted with a random index by the
/// evaluator. Sums of many such inputs stay far from overflow, as real data's do; an operator
/// that needs other inputs takes a user sampler (`laws::from_fn`).
pub struct LiftedInputs<'o> {
    op: &'o EvalOp,
    inputs: Vec<ValueLayout>,
    /// The first evaluator error while lifting (sampling cannot fail; [`LiftedInputs::error`]
    /// says afterwards).
    error: RefCell<Option<EvalError>>,
}

impl<'o> LiftedInputs<'o> {
    /// A sampler of `op`'s lifted inputs; an error when its inputs cannot be read.
    pub fn new(op: &'o EvalOp) -> Result<LiftedInputs<'o>, EvalError> {
        let inputs = op.input_layouts()?;
        // One lift up front: what the evaluator cannot run is an error here, not zero samples.
        let zeros: Vec<Vec<u8>> = inputs.iter().map(|l| vec![0u8; l.size]).collect();
        let views: Vec<&[u8]> = zeros.iter().map(Vec::as_slice).collect();
        op.lift_into(&views, 0, &mut vec![0u8; op.element().size()])?;
        Ok(LiftedInputs {
            op,
            inputs,
            error: RefCell::new(None),
        })
    }

    /// Folds of up to `max_len` lifted inputs under the operator.
    pub fn folds(self, max_len: usize) -> Folds<'o, LiftedInputs<'o>> {
        let op = self.op;
        // A combine error shows again (and is reported) when the checker evaluates the laws.
        Folds::new(
            self,
            Box::new(move |a: &[u8], b: &[u8]| op.combine(a, b).unwrap_or_else(|_| a.to_vec())),
            max_len,
        )
    }

    /// The first error `lift` returned while sampling, if any.
    pub fn error(&self) -> Option<EvalError> {
        self.error.borrow().clone()
    }
}

impl ElementSampler for LiftedInputs<'_> {
    fn sample(&mut self, rng: &mut Rng) -> Vec<u8> {
        let values: Vec<Vec<u8>> = self
            .inputs
            .iter()
            .map(|l| match l.prim {
                Some(p) => moderate_input(p, rng),
                // Not a primitive: random bytes.
                None => (0..l.size).map(|_| rng.next() as u8).collect(),
            })
            .collect();
        let views: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
        let mut out = vec![0u8; self.op.element().size()];
        let index = rng.below(1 << 32);
        if let Err(e) = self.op.lift_into(&views, index, &mut out) {
            self.error.borrow_mut().get_or_insert(e);
        }
        out
    }
    fn describe(&self) -> String {
        "lifted inputs (integers within ±2^20, floats within ±1000, a third 0/±1)".into()
    }
}
