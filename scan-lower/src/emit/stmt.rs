//! Statements: `let`, assignments, `return`, `if`/`match` whose value is dropped or returned,
//! and loops.
//!
//! Loops stay loops: `for i in a..b` over constant bounds is a C++ `for` over an `i64`
//! (ptxas unrolls short ones itself), `while` and `loop` are C++ `while`s, and `break` and
//! `continue` keep their meaning since lowering adds no loops of its own.

use super::expr::needs_stmts;
use super::literal::is_untyped_literal;
use super::{Binding, CTy, Lowerer, Val};
use crate::ir::{BinOp, Block, Expr, ExprKind, ForLoop, Pat, PatKind, Stmt, Ty};
use proc_macro2::Span;

impl Lowerer<'_> {
    /// A block's statements (its tail is the caller's): each `let` can look at the rest of the
    /// block to type a literal the way rustc does, by its uses.
    pub(super) fn stmts(&mut self, b: &Block) {
        for (i, s) in b.stmts.iter().enumerate() {
            match s {
                Stmt::Let(l) => {
                    let rest = (&b.stmts[i + 1..], b.tail.as_deref());
                    self.let_stmt(&l.pat, l.ty.as_ref(), &l.init, l.span, rest)
                }
                Stmt::Expr(e) => self.stmt_expr(e),
            }
        }
    }

    pub(super) fn ends_in_return(b: &Block) -> bool {
        b.tail.is_none()
            && matches!(
                b.stmts.last(),
                Some(Stmt::Expr(Expr {
                    kind: ExprKind::Return(_),
                    ..
                }))
            )
    }

    fn let_stmt(
        &mut self,
        pat: &Pat,
        ty: Option<&Ty>,
        init: &Expr,
        span: Span,
        rest: super::infer::Rest<'_>,
    ) {
        let ann = match ty {
            Some(t) => match self.ty_cty(t, span) {
                Some(c) => Some(c),
                // Reported; lowering the value would only add follow-up errors.
                None => return,
            },
            None => None,
        };
        match &pat.kind {
            PatKind::Wild => {
                // `let _ = e;`: pure, nothing to emit, but still check it.
                let mark = self.out.len();
                self.expr(init, ann.as_ref());
                self.out.truncate(mark);
            }
            PatKind::Bind {
                name,
                mutable,
                sub: None,
            } if self.const_named(name).is_none() => {
                self.let_name(name, *mutable, ann, init, span, rest)
            }
            _ => self.let_pattern(pat, ann, init, rest),
        }
    }

    /// `let name = init;`
    pub(super) fn let_name(
        &mut self,
        name: &str,
        mutable: bool,
        ann: Option<CTy>,
        init: &Expr,
        span: Span,
        rest: super::infer::Rest<'_>,
    ) {
        if ann.is_none() && !mutable && is_untyped_literal(init) {
            self.bind(name, Binding::Alias(init.clone()));
            return;
        }
        // `let mut acc = 0.0;`: rustc types it by its uses; so does this.
        let ann = match ann {
            Some(t) => Some(t),
            None if super::infer::literal_valued(init) => self.infer_from_uses(name, rest),
            None => None,
        };
        if let ExprKind::Struct { ty, fields, base } = &init.kind {
            if let Some(s) = self.struct_of(ty, init.span) {
                let cpp = self.declare_name(name);
                self.struct_into(&cpp, &s, fields, base.as_deref());
                self.bind(
                    name,
                    Binding::Var {
                        cpp,
                        ty: CTy::Struct(s),
                    },
                );
            }
            return;
        }
        let v = self.expr(init, ann.as_ref());
        let ty = match ann {
            Some(t) => t,
            None if v.ty.is_lit() => {
                let example = if v.ty == CTy::IntLit { "i64" } else { "f32" };
                self.ctx.errors.push(
                    span,
                    format!(
                        "cannot infer the type of `{name}` for CUDA: annotate it (`let mut {name}: {example} = ...;`) or suffix the literal"
                    ),
                );
                CTy::Never
            }
            None if v.ty == CTy::Index => CTy::Prim(scan_core::PrimType::I32),
            None => v.ty.clone(),
        };
        if ty == CTy::Never {
            // Reported: later uses of the name add nothing.
            self.bind(
                name,
                Binding::Var {
                    cpp: "0".into(),
                    ty: CTy::Never,
                },
            );
            return;
        }
        self.bind_value(name, v, ty);
    }

    /// Declares `name` in C++ with the value `v` stored as `ty`.
    pub(super) fn bind_value(&mut self, name: &str, v: Val, ty: CTy) {
        // `auto x = 0.5f;` would not take a field's type: a literal needs it spelled.
        let decl = if v.lit.is_some() {
            self.cpp_type(&ty)
        } else {
            self.decl_type(&ty)
        };
        let v = self.store(v, &ty);
        let cpp = self.declare_name(name);
        self.line(format!("{decl} {cpp} = {};", v.code));
        self.bind(name, Binding::Var { cpp, ty });
    }

    /// An expression whose value is dropped: `if`/`match` with statements, assignments,
    /// `return`, loops.
    pub(super) fn stmt_expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::If(c, then, els) => {
                let cond = self.expr(c, Some(&CTy::Bool));
                self.line(format!("if ({}) {{", cond.code));
                self.stmt_branch(then);
                let mut els = els.as_deref();
                while let Some(e) = els {
                    match &e.kind {
                        ExprKind::If(c2, then2, els2) if !needs_stmts(c2, self) => {
                            let cond = self.expr(c2, Some(&CTy::Bool));
                            self.line(format!("}} else if ({}) {{", cond.code));
                            self.stmt_branch(then2);
                            els = els2.as_deref();
                        }
                        // `else {}` (a `match` arm `_ => {}`): nothing to write.
                        ExprKind::Block(b)
                            if b.stmts.is_empty() && b.tail.is_none() && b.items.is_empty() =>
                        {
                            els = None;
                        }
                        _ => {
                            self.line("} else {");
                            self.indent += 1;
                            self.push_scope();
                            self.stmt_expr(e);
                            self.pop_scope();
                            self.indent -= 1;
                            els = None;
                        }
                    }
                }
                self.line("}");
            }
            ExprKind::Match(..) | ExprKind::IfLet(..) => {
                self.with_match(e, |lw, chain| lw.stmt_expr(chain));
            }
            ExprKind::Block(b) => {
                self.push_block_scope(b);
                self.stmts(b);
                if let Some(t) = &b.tail {
                    self.stmt_expr(t);
                }
                self.pop_scope();
            }
            ExprKind::Assign(target, op, value) => self.assign(target, *op, value),
            ExprKind::Return(v) => self.ret(v),
            ExprKind::While(cond, body) => self.while_loop(Some(cond), body),
            ExprKind::Loop(body) => self.while_loop(None, body),
            ExprKind::For(f) => self.for_loop(f),
            ExprKind::Break | ExprKind::Continue => {
                let word = if matches!(e.kind, ExprKind::Break) {
                    "break"
                } else {
                    "continue"
                };
                if self.loops == 0 {
                    self.error(e.span, format!("`{word}` outside a loop"));
                } else {
                    self.line(format!("{word};"));
                }
            }
            _ => {
                // A value nobody uses: pure, so only check it.
                let mark = self.out.len();
                self.expr(e, None);
                self.out.truncate(mark);
            }
        }
    }

    pub(super) fn stmt_branch(&mut self, b: &Block) {
        self.indent += 1;
        self.push_block_scope(b);
        self.stmts(b);
        if let Some(t) = &b.tail {
            self.stmt_expr(t);
        }
        self.pop_scope();
        self.indent -= 1;
    }

    pub(super) fn ret(&mut self, v: &Expr) {
        let ty = self.ret.clone();
        if let ExprKind::Struct {
            ty: sr,
            fields,
            base,
        } = &v.kind
        {
            if let Some(s) = self.struct_of(sr, v.span) {
                let tmp = self.fresh("out");
                self.struct_into(&tmp, &s, fields, base.as_deref());
                self.line(format!("return {tmp};"));
            }
            return;
        }
        let val = self.expr(v, Some(&ty));
        if val.ty == CTy::Never {
            return;
        }
        let val = self.store(val, &ty);
        self.line(format!("return {};", val.code));
    }

    fn assign(&mut self, target: &Expr, op: Option<BinOp>, value: &Expr) {
        if let (ExprKind::Tuple(targets), None) = (&target.kind, op) {
            return self.assign_tuple(targets, value);
        }
        let t = self.expr(target, None);
        if t.ty == CTy::Never {
            self.expr(value, None);
            return;
        }
        if let Some(crate::ir::ExprKind::Var(name)) = Some(&target.kind) {
            match self.lookup(name) {
                Some(Binding::Index { .. }) => {
                    self.error(
                        target.span,
                        format!("cannot assign to the `for` variable `{name}`"),
                    );
                    return;
                }
                Some(Binding::Alias(_) | Binding::Const { .. }) => {
                    self.error(
                        target.span,
                        format!("cannot assign twice to immutable variable `{name}`: declare it `let mut`"),
                    );
                    return;
                }
                _ => {}
            }
        }
        let v = match op {
            None => self.expr(value, Some(&t.ty)),
            Some(op) => self.binary(op, target, value, Some(&t.ty), value.span),
        };
        if v.ty == CTy::Never {
            return;
        }
        let v = self.store(v, &t.ty);
        self.line(format!("{} = {};", t.code, v.code));
    }

    /// `(a, b) = (b, a);`: every value is read before any place is written.
    fn assign_tuple(&mut self, targets: &[Expr], value: &Expr) {
        let places: Vec<Val> = targets.iter().map(|t| self.expr(t, None)).collect();
        let values: Vec<Val> = match &value.kind {
            ExprKind::Tuple(vs) if vs.len() == targets.len() => vs
                .iter()
                .zip(&places)
                .map(|(v, p)| {
                    let v = self.expr(v, Some(&p.ty));
                    self.store(v, &p.ty)
                })
                .collect(),
            _ => {
                let v = self.expr(value, None);
                let CTy::Tuple(ts) = v.ty.clone() else {
                    if v.ty != CTy::Never {
                        self.error(value.span, "a tuple assignment needs a tuple value");
                    }
                    return;
                };
                (0..ts.len())
                    .map(|k| Val::new(format!("{}._{k}", v.operand()), ts[k].clone(), true))
                    .collect()
            }
        };
        let mut temps = Vec::new();
        for (p, v) in places.iter().zip(values) {
            if p.ty == CTy::Never || v.ty == CTy::Never {
                continue;
            }
            let tmp = self.fresh("tmp");
            let decl = self.decl_type(&p.ty);
            self.line(format!("{decl} {tmp} = {};", v.code));
            temps.push((p.code.clone(), tmp));
        }
        for (place, tmp) in temps {
            self.line(format!("{place} = {tmp};"));
        }
    }

    /// The function body: its value is returned.
    pub(super) fn tail_block(&mut self, b: &Block) {
        self.push_block_scope(b);
        self.stmts(b);
        match &b.tail {
            Some(t) => self.tail_expr(t),
            None if Self::ends_in_return(b) => {}
            None => {
                self.ctx.errors.push(
                    b.span,
                    "this block must end with the value it returns (an expression without `;`)",
                );
            }
        }
        self.pop_scope();
    }

    fn tail_expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::If(c, then, Some(els)) if needs_stmts(e, self) => {
                let cond = self.expr(c, Some(&CTy::Bool));
                self.line(format!("if ({}) {{", cond.code));
                self.indent += 1;
                self.tail_block(then);
                self.indent -= 1;
                let mut els: &Expr = els;
                loop {
                    match &els.kind {
                        ExprKind::If(c2, then2, Some(els2)) if !needs_stmts(c2, self) => {
                            let cond = self.expr(c2, Some(&CTy::Bool));
                            self.line(format!("}} else if ({}) {{", cond.code));
                            self.indent += 1;
                            self.tail_block(then2);
                            self.indent -= 1;
                            els = els2;
                        }
                        _ => {
                            self.line("} else {");
                            self.indent += 1;
                            self.push_scope();
                            self.tail_expr(els);
                            self.pop_scope();
                            self.indent -= 1;
                            break;
                        }
                    }
                }
                self.line("}");
            }
            ExprKind::Match(..) | ExprKind::IfLet(..) => {
                self.with_match(e, |lw, chain| lw.tail_expr(chain));
            }
            ExprKind::Block(b) => self.tail_block(b),
            ExprKind::Return(v) => self.ret(v),
            ExprKind::While(..) | ExprKind::Loop(..) | ExprKind::For(..) => {
                self.stmt_expr(e);
                self.error(
                    e.span,
                    "a loop has no value: end the function with the value it returns after the loop",
                );
            }
            _ => self.ret(e),
        }
    }

    /// `while cond { body }` (`loop` when `cond` is `None`).
    fn while_loop(&mut self, cond: Option<&Expr>, body: &Block) {
        match cond {
            Some(c) if !needs_stmts(c, self) => {
                let cv = self.expr(c, Some(&CTy::Bool));
                self.line(format!("while ({}) {{", cv.code));
                self.loop_body(body, None);
            }
            Some(c) => {
                // The condition needs statements: evaluate it at the top of every iteration.
                self.line("while (true) {");
                self.indent += 1;
                self.push_scope();
                let cv = self.expr(c, Some(&CTy::Bool));
                self.line(format!("if (!{}) break;", cv.operand()));
                self.pop_scope();
                self.indent -= 1;
                self.loop_body(body, None);
            }
            None => {
                self.line("while (true) {");
                self.loop_body(body, None);
            }
        }
    }

    /// The body of a loop whose header was just emitted, and its closing brace.
    fn loop_body(&mut self, body: &Block, var: Option<(&str, Binding)>) {
        self.indent += 1;
        self.loops += 1;
        self.push_block_scope(body);
        if let Some((name, b)) = var {
            self.bind(name, b);
        }
        self.stmts(body);
        if let Some(t) = &body.tail {
            self.stmt_expr(t);
        }
        self.pop_scope();
        self.loops -= 1;
        self.indent -= 1;
        self.line("}");
    }

    fn for_loop(&mut self, f: &ForLoop) {
        let bound = |lw: &mut Self, e: &Expr, what: &str| -> Option<i128> {
            let v = lw.const_eval(e);
            if v.is_none() {
                lw.not_constant(
                    e,
                    &format!("the {what} of a `for` loop must be a constant (a literal or a `const`) in a lowered operator: an operator takes the same time for every pair of elements"),
                );
            }
            v
        };
        let start = bound(self, &f.start, "start");
        let end = bound(self, &f.end, "end");
        let step = match &f.step {
            Some(s) => match bound(self, s, "step") {
                Some(k) if k > 0 => Some(k),
                Some(_) => {
                    self.error(s.span, "`step_by` needs a positive step");
                    None
                }
                None => None,
            },
            None => Some(1),
        };
        let (Some(start), Some(end), Some(step)) = (start, end, step) else {
            return;
        };
        let last = if f.inclusive { end } else { end - 1 };
        let fits = |v: i128| i64::try_from(v).is_ok();
        if !fits(start) || !fits(last) {
            self.error(f.span, "a `for` range must fit in an `i64`");
            return;
        }
        // The values the variable takes, for index checks: `lo..=hi` (empty when hi < lo).
        // The values the variable takes, for index checks: `lo..=hi` (none when last < start).
        // `(a..b).rev().step_by(k)` counts down from the last value of `a..b`.
        let (lo, hi) = match (f.rev, last >= start) {
            (_, false) => (start, last),
            (false, true) => (start, start + (last - start) / step * step),
            (true, true) => (last - (last - start) / step * step, last),
        };
        let cpp = self.declare_name(f.var.as_deref().unwrap_or("#i"));
        let by = |dir: &str| {
            if step == 1 {
                format!("{dir}{dir}{cpp}")
            } else {
                format!("{cpp} {dir}= {step}")
            }
        };
        let header = if f.rev {
            format!("for (i64 {cpp} = {last}; {cpp} >= {start}; {}) {{", by("-"))
        } else {
            let cond = if f.inclusive {
                format!("{cpp} <= {end}")
            } else {
                format!("{cpp} < {end}")
            };
            format!("for (i64 {cpp} = {start}; {cond}; {}) {{", by("+"))
        };
        self.line(header);
        let var = f.var.as_deref().map(|v| {
            (
                v,
                Binding::Index {
                    cpp: cpp.clone(),
                    lo,
                    hi,
                },
            )
        });
        self.loop_body(&f.body, var);
    }
}
