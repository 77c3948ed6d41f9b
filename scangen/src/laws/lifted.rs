//! Samples of an operator with a `lift`, from a file: folds of lifted raw inputs, the elements a
//! scan of real data ever combines. Every bit pattern of a lifted element is not that domain:
//! Kadane's identity sentinels, or an argmin's index, are never met at those values, and the
//! checker would report lawful operators unlawful on them.

use super::sampler::{ElementSampler, Folds};
use super::values::Rng;
use scan_core::half::{bf16, f16};
use scan_core::PrimType;
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
        let values: Vec<Vec<u8>> = self.inputs.iter().map(|l| raw_input(*l, rng)).collect();
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

/// One raw input value of `layout`: moderate magnitudes (see [`LiftedInputs`]); a value that
/// is not a primitive gets random bytes.
fn raw_input(layout: ValueLayout, rng: &mut Rng) -> Vec<u8> {
    let Some(p) = layout.prim else {
        return (0..layout.size).map(|_| rng.next() as u8).collect();
    };
    let edge = rng.below(3) == 0;
    let signed = matches!(
        p,
        PrimType::I8 | PrimType::I16 | PrimType::I32 | PrimType::I64
    );
    let int: i64 = if edge {
        [0, 1, -1][rng.below(if signed { 3 } else { 2 }) as usize]
    } else if signed {
        rng.below(1 << 21) as i64 - (1 << 20)
    } else {
        rng.below(1 << 20) as i64
    };
    let float = if edge {
        int as f64
    } else {
        (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * 2000.0 - 1000.0
    };
    match p {
        PrimType::F32 => (float as f32).to_le_bytes().to_vec(),
        PrimType::F64 => float.to_le_bytes().to_vec(),
        PrimType::F16 => f16::from_f64(float / 100.0).to_le_bytes().to_vec(),
        PrimType::BF16 => bf16::from_f64(float / 100.0).to_le_bytes().to_vec(),
        // Integers: truncated to the type (8- and 16-bit types wrap within their range).
        _ => int.to_le_bytes()[..p.size()].to_vec(),
    }
}
