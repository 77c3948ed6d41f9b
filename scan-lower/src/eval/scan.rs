//! Sequential scans of a buffer of elements with the evaluator: what `scangen scan --cpu`
//! runs, and a reference for the GPU's result.

use super::{EvalError, EvalOp};

impl EvalOp {
    /// Scans `input` (whole elements, back to back) into `output` (the same length), in
    /// sequence order: `out[i] = in[0] ⊕ … ⊕ in[i]` (inclusive) or `e ⊕ in[0] ⊕ … ⊕ in[i-1]`
    /// (exclusive). `progress` is called with the number of elements done, every
    /// `progress_every` elements and at the end. Returns the total.
    pub fn scan(
        &self,
        input: &[u8],
        output: &mut [u8],
        exclusive: bool,
        progress_every: usize,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Vec<u8>, EvalError> {
        let size = self.element.size();
        if input.len().checked_rem(size) != Some(0) || output.len() != input.len() {
            return Err(EvalError::WrongSize {
                expected: input.len().div_ceil(size.max(1)) * size,
                got: output.len(),
            });
        }
        let n = input.len() / size;
        let mut acc = self.identity()?;
        let mut next = vec![0u8; size];
        let mut runner = self.runner();
        for i in 0..n {
            let x = &input[i * size..(i + 1) * size];
            let out = &mut output[i * size..(i + 1) * size];
            if exclusive {
                out.copy_from_slice(&acc);
            }
            // The first element of an inclusive scan is the element itself, as every
            // backend gives it (not `e ⊕ x`, which differs for an identity only up to -0.0).
            if i == 0 && !exclusive {
                next.copy_from_slice(x);
            } else {
                self.combine_in(&mut runner, &acc, x, &mut next)?;
            }
            std::mem::swap(&mut acc, &mut next);
            if !exclusive {
                out.copy_from_slice(&acc);
            }
            if (i + 1).checked_rem(progress_every) == Some(0) {
                progress(i + 1);
            }
        }
        progress(n);
        Ok(acc)
    }
}
