//! Blocks, `let`, `if`, `match`, loops, assignment and `return`.

use super::arith;
use super::error::{line_of, unsupported, EvalError};
use super::interp::{Flow, Frame, Interp, R};
use super::value::{Target, Value};
use crate::ir::{Block, Expr, ExprKind, ForLoop, Stmt};

/// One step of a place expression (`a.f[i].0 = v`).
enum Step<'a> {
    Field(&'a str),
    Tuple(usize),
    Index(i128),
}

impl Interp<'_> {
    pub(super) fn control<'a>(&mut self, f: &mut Frame<'a>, e: &'a Expr) -> R<Value> {
        let span = e.span;
        match &e.kind {
            ExprKind::Block(b) => self.block(f, b),
            ExprKind::If(cond, then, els) => match self.eval(f, cond)? {
                Value::Bool(true) => self.block(f, then),
                Value::Bool(false) => match els {
                    Some(x) => self.eval(f, x),
                    None => Ok(Value::Unit),
                },
                other => Err(unsupported(span, format!("`if` on {}", other.kind())).into()),
            },
            ExprKind::IfLet(pat, value, then, els) => {
                let v = self.eval(f, value)?;
                let scope = f.scope();
                let result = match self.try_match(f, pat, &v) {
                    Ok(true) => self.block(f, then),
                    Ok(false) => match els {
                        Some(x) => self.eval(f, x),
                        None => Ok(Value::Unit),
                    },
                    Err(e) => Err(e),
                };
                f.end_scope(scope);
                result
            }
            ExprKind::Match(scrutinee, arms) => {
                let v = self.eval(f, scrutinee)?;
                for (k, arm) in arms.iter().enumerate() {
                    let scope = f.scope();
                    // The lowering makes the last arm the `else` of its chain: values no arm
                    // names (a match rustc has not checked) take it, so they do here.
                    let last = k + 1 == arms.len();
                    let chosen = match self.try_match(f, &arm.pat, &v) {
                        Ok(true) => match &arm.guard {
                            Some(g) => matches!(self.eval(f, g), Ok(Value::Bool(true))) || last,
                            None => true,
                        },
                        Ok(false) if last => {
                            self.bind_irrefutable(f, &arm.pat, v.clone())?;
                            true
                        }
                        Ok(false) => false,
                        Err(e) => {
                            f.end_scope(scope);
                            return Err(e);
                        }
                    };
                    if chosen {
                        let r = self.eval(f, &arm.body);
                        f.end_scope(scope);
                        return r;
                    }
                    f.end_scope(scope);
                }
                Err(unsupported(span, "a `match` without arms").into())
            }
            ExprKind::While(cond, body) => {
                loop {
                    self.step(span)?;
                    match self.eval(f, cond)? {
                        Value::Bool(true) => {}
                        Value::Bool(false) => break,
                        other => {
                            return Err(
                                unsupported(span, format!("`while` on {}", other.kind())).into()
                            )
                        }
                    }
                    match self.block(f, body) {
                        Ok(_) | Err(Flow::Continue) => {}
                        Err(Flow::Break) => break,
                        Err(e) => return Err(e),
                    }
                }
                Ok(Value::Unit)
            }
            ExprKind::Loop(body) => {
                loop {
                    self.step(span)?;
                    match self.block(f, body) {
                        Ok(_) | Err(Flow::Continue) => {}
                        Err(Flow::Break) => break,
                        Err(e) => return Err(e),
                    }
                }
                Ok(Value::Unit)
            }
            ExprKind::For(l) => self.for_loop(f, l),
            ExprKind::Break => Err(Flow::Break),
            ExprKind::Continue => Err(Flow::Continue),
            ExprKind::Return(x) => {
                let v = self.eval(f, x)?;
                Err(Flow::Return(Box::new(v)))
            }
            ExprKind::Assign(target, op, value) => {
                let v = self.eval(f, value)?;
                let v = match op {
                    Some(op) => {
                        let old = self.eval(f, target)?;
                        arith::binary(*op, old, v, span)?
                    }
                    None => v,
                };
                self.assign(f, target, v)?;
                Ok(Value::Unit)
            }
            ExprKind::Alias { name, value, body } => {
                let v = self.eval(f, value)?;
                let scope = f.scope();
                f.bind(name, v);
                let r = self.eval(f, body);
                f.end_scope(scope);
                r
            }
            _ => Err(unsupported(span, "this expression").into()),
        }
    }

    /// A block in its own scope (locals and the items it declares).
    pub(super) fn block<'a>(&mut self, f: &mut Frame<'a>, b: &'a Block) -> R<Value> {
        let scope = f.scope();
        let with_items = !b.items.is_empty();
        if with_items {
            f.items.push(&b.items);
        }
        let r = self.block_body(f, b);
        if with_items {
            f.items.pop();
        }
        f.end_scope(scope);
        r
    }

    fn block_body<'a>(&mut self, f: &mut Frame<'a>, b: &'a Block) -> R<Value> {
        for s in &b.stmts {
            match s {
                Stmt::Let(l) => {
                    let mut v = self.eval(f, &l.init)?;
                    if let Some(t) = &l.ty {
                        let t = self.target(f, t, l.span)?;
                        v = v.coerce(&t);
                    }
                    self.bind_irrefutable(f, &l.pat, v)?;
                }
                Stmt::Expr(e) => {
                    self.eval(f, e)?;
                }
            }
        }
        match &b.tail {
            Some(t) => self.eval(f, t),
            None => Ok(Value::Unit),
        }
    }

    /// `for v in a..b` (`..=`, `.rev()`, `.step_by(k)`), the values the lowering's C++ loop
    /// takes; the variable is an untyped integer, typed by each use.
    fn for_loop<'a>(&mut self, f: &mut Frame<'a>, l: &'a ForLoop) -> R<Value> {
        let start = self.eval(f, &l.start)?.as_int();
        let end = self.eval(f, &l.end)?.as_int();
        let step = match &l.step {
            Some(s) => self.eval(f, s)?.as_int(),
            None => Some(1),
        };
        let (Some(start), Some(end), Some(step)) = (start, end, step.filter(|&k| k > 0)) else {
            return Err(unsupported(l.span, "a `for` range that is not integers").into());
        };
        let last = if l.inclusive { end } else { end - 1 };
        let mut i = if l.rev { last } else { start };
        while (!l.rev && i <= last) || (l.rev && i >= start) {
            self.step(l.span)?;
            let scope = f.scope();
            if let Some(v) = &l.var {
                f.bind(v, Value::IntLit(i));
            }
            let r = self.block(f, &l.body);
            f.end_scope(scope);
            match r {
                Ok(_) | Err(Flow::Continue) => {}
                Err(Flow::Break) => break,
                Err(e) => return Err(e),
            }
            i = if l.rev { i - step } else { i + step };
        }
        Ok(Value::Unit)
    }

    /// `place = v`; a tuple of places takes a tuple's parts (every value was read first).
    fn assign<'a>(&mut self, f: &mut Frame<'a>, target: &'a Expr, v: Value) -> R<()> {
        if let ExprKind::Tuple(places) = &target.kind {
            let Value::Tuple(vs) = v else {
                return Err(unsupported(target.span, "a tuple assignment of a non-tuple").into());
            };
            for (p, v) in places.iter().zip(vs) {
                self.assign(f, p, v)?;
            }
            return Ok(());
        }
        let mut steps = Vec::new();
        let name = self.place(f, target, &mut steps)?;
        if name == "_" {
            return Ok(());
        }
        let span = target.span;
        let Some(root) = f.local_mut(name) else {
            return Err(unsupported(span, format!("assigning `{name}`")).into());
        };
        let slot = walk(root, &steps, span)?;
        // The place keeps its type: a literal assigned to an `i64` is an `i64`.
        let v = match slot.prim() {
            Some(p) => v.coerce(&Target::Prim(p)),
            None => v,
        };
        *slot = v;
        Ok(())
    }

    /// The local a place expression starts from, and the steps into it (indices evaluated).
    fn place<'a>(
        &mut self,
        f: &mut Frame<'a>,
        e: &'a Expr,
        steps: &mut Vec<Step<'a>>,
    ) -> R<&'a str> {
        match &e.kind {
            ExprKind::Var(n) => Ok(n),
            ExprKind::Field(b, n) => {
                let root = self.place(f, b, steps)?;
                steps.push(Step::Field(n));
                Ok(root)
            }
            ExprKind::TupleField(b, i) => {
                let root = self.place(f, b, steps)?;
                steps.push(Step::Tuple(*i));
                Ok(root)
            }
            ExprKind::Index(b, i) => {
                let root = self.place(f, b, steps)?;
                let i = self.eval(f, i)?;
                let i = i
                    .as_int()
                    .ok_or_else(|| unsupported(e.span, format!("an index of {}", i.kind())))?;
                steps.push(Step::Index(i));
                Ok(root)
            }
            _ => Err(unsupported(e.span, "assigning to this expression").into()),
        }
    }
}

/// The part of `slot` that `steps` lead to.
fn walk<'v>(slot: &'v mut Value, steps: &[Step], span: proc_macro2::Span) -> R<&'v mut Value> {
    let Some((step, rest)) = steps.split_first() else {
        return Ok(slot);
    };
    let (parts, k): (&mut [Value], Option<usize>) = match (step, slot) {
        (Step::Field(n), Value::Struct(d, fs)) => {
            let k = d.field(n);
            (fs, k)
        }
        (Step::Tuple(i), Value::Tuple(xs)) => (xs, Some(*i)),
        (Step::Index(i), Value::Array(xs)) => {
            let k = usize::try_from(*i).ok().filter(|&k| k < xs.len());
            if k.is_none() {
                return Err(EvalError::IndexOutOfBounds {
                    line: line_of(span),
                    index: *i,
                    len: xs.len(),
                }
                .into());
            }
            (xs, k)
        }
        _ => return Err(unsupported(span, "this assignment").into()),
    };
    match k.and_then(|k| parts.get_mut(k)) {
        Some(next) => walk(next, rest, span),
        None => Err(unsupported(span, "this assignment").into()),
    }
}
