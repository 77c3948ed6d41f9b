//! Law evaluation with the CPU evaluator of the operator IR (feature `lower`): an operator
//! from a file, checked without rustc or a GPU.

use super::{LawEvaluator, LawResults};
use scan_core::ElementType;
use scan_lower::EvalOp;

/// Evaluates the laws with [`EvalOp`] (`scangen check --file` on any machine).
pub struct EvalLaws<'o> {
    op: &'o EvalOp,
}

impl<'o> EvalLaws<'o> {
    /// An evaluator running `op` (from [`OpsFile::evaluator`](scan_lower::OpsFile::evaluator)).
    pub fn new(op: &'o EvalOp) -> Self {
        EvalLaws { op }
    }
}

impl LawEvaluator for EvalLaws<'_> {
    fn name(&self) -> String {
        "cpu (the operator IR, evaluated)".into()
    }

    fn element(&self) -> &ElementType {
        self.op.element()
    }

    fn evaluate(
        &mut self,
        triples: &[[Vec<u8>; 3]],
    ) -> Result<Vec<LawResults>, Box<dyn std::error::Error>> {
        let op = self.op;
        let e = op.identity()?;
        triples
            .iter()
            .map(|[a, b, c]| {
                Ok([
                    op.combine(&op.combine(a, b)?, c)?,
                    op.combine(a, &op.combine(b, c)?)?,
                    op.combine(&e, a)?,
                    op.combine(a, &e)?,
                ])
            })
            .collect()
    }

    fn identity(&mut self) -> Result<Option<Vec<u8>>, Box<dyn std::error::Error>> {
        Ok(Some(self.op.identity()?))
    }
}
