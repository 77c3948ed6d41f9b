//! Patterns of `match`, `if let`, `let` and parameters.

use super::arith;
use super::error::unsupported;
use super::interp::{Frame, Interp, R};
use super::value::Value;
use crate::ir::{BinOp, Pat, PatKind};

impl Interp<'_> {
    /// Whether `v` matches `p`; on a match its bindings are added to the current scope.
    pub(super) fn try_match<'a>(&mut self, f: &mut Frame<'a>, p: &'a Pat, v: &Value) -> R<bool> {
        let mut binds = Vec::new();
        let ok = self.matches(f, p, v, &mut binds, true)?;
        if ok {
            for (n, v) in binds {
                f.bind(n, v);
            }
        }
        Ok(ok)
    }

    /// Binds the names of `p` to the parts of `v` without testing anything (a `let`, a
    /// parameter, or the last arm of a `match`, which the lowering makes its `else`).
    pub(super) fn bind_irrefutable<'a>(
        &mut self,
        f: &mut Frame<'a>,
        p: &'a Pat,
        v: Value,
    ) -> R<()> {
        let mut binds = Vec::new();
        self.matches(f, p, &v, &mut binds, false)?;
        for (n, v) in binds {
            f.bind(n, v);
        }
        Ok(())
    }

    /// `test`: whether literal, range and `|` parts are compared (else every part matches).
    fn matches<'a>(
        &mut self,
        f: &mut Frame<'a>,
        p: &'a Pat,
        v: &Value,
        binds: &mut Vec<(&'a str, Value)>,
        test: bool,
    ) -> R<bool> {
        let span = p.span;
        match &p.kind {
            PatKind::Wild => Ok(true),
            PatKind::Bind { name, sub, .. } => {
                if let Some(sub) = sub {
                    if !self.matches(f, sub, v, binds, test)? {
                        return Ok(false);
                    }
                }
                binds.push((name, v.clone()));
                Ok(true)
            }
            PatKind::Value(_) | PatKind::Range { .. } if !test => Ok(true),
            PatKind::Value(x) => {
                let want = self.eval(f, x)?;
                Ok(matches!(
                    arith::binary(BinOp::Eq, v.clone(), want, span)?,
                    Value::Bool(true)
                ))
            }
            PatKind::Range { lo, hi, inclusive } => {
                if let Some(lo) = lo {
                    let lo = self.eval(f, lo)?;
                    if !matches!(
                        arith::binary(BinOp::Ge, v.clone(), lo, span)?,
                        Value::Bool(true)
                    ) {
                        return Ok(false);
                    }
                }
                if let Some(hi) = hi {
                    let hi = self.eval(f, hi)?;
                    let op = if *inclusive { BinOp::Le } else { BinOp::Lt };
                    if !matches!(arith::binary(op, v.clone(), hi, span)?, Value::Bool(true)) {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            PatKind::Or(alts) => {
                for alt in alts {
                    let mark = binds.len();
                    // Untested, the first alternative matches and binds (every alternative
                    // binds the same names).
                    if self.matches(f, alt, v, binds, test)? {
                        return Ok(true);
                    }
                    binds.truncate(mark);
                }
                Ok(false)
            }
            PatKind::Tuple(ps) | PatKind::Array(ps) => {
                let parts = match v {
                    Value::Tuple(xs) | Value::Array(xs) if xs.len() == ps.len() => xs,
                    other => {
                        return Err(
                            unsupported(span, format!("this pattern on {}", other.kind())).into(),
                        )
                    }
                };
                for (p, x) in ps.iter().zip(parts) {
                    if !self.matches(f, p, x, binds, test)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            PatKind::Struct { fields, .. } => {
                let Value::Struct(d, xs) = v else {
                    return Err(
                        unsupported(span, format!("a struct pattern on {}", v.kind())).into(),
                    );
                };
                for (name, p) in fields {
                    let Some(i) = d.field(name) else {
                        return Err(unsupported(
                            span,
                            format!("field `{name}` of `{}`", d.rust_name),
                        )
                        .into());
                    };
                    if !self.matches(f, p, &xs[i], binds, test)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            PatKind::Error(_) => Err(unsupported(span, "a pattern the lowering reported").into()),
        }
    }
}
