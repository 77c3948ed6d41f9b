//! Typing a `let` of an untyped literal by its uses, as rustc does: `let mut acc = 0.0;`
//! followed by `acc += x.v[i];` makes `acc` the type of `x.v[i]`.
//!
//! The uses are found in the rest of the block (at any depth), and the type of the expression
//! beside each is learned by lowering it "dry": with what it emits, declares and reports thrown
//! away, and with names not yet bound (a `for` variable further down) read as integers.

use super::{CTy, Lowerer};
use crate::ir::{BinOp, Expr, ExprKind, Stmt};

/// Whether an expression's value is an untyped literal whatever path it takes: a literal, or an
/// `if`, `match` or block whose every value is one (`if c { 0.5 } else { 2.0 }`), or
/// arithmetic on those.
pub(super) fn literal_valued(e: &Expr) -> bool {
    let block = |b: &crate::ir::Block| match &b.tail {
        Some(t) => literal_valued(t),
        None => false,
    };
    match &e.kind {
        _ if super::literal::is_untyped_literal(e) => true,
        ExprKind::If(_, then, Some(els)) => block(then) && literal_valued(els),
        ExprKind::Block(b) => block(b),
        ExprKind::Match(_, arms) => arms.iter().all(|a| literal_valued(&a.body)),
        ExprKind::Binary(op, l, r)
            if !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or) =>
        {
            literal_valued(l) && literal_valued(r)
        }
        ExprKind::Unary(crate::ir::UnOp::Neg, x) => literal_valued(x),
        ExprKind::Repeat(x, _) => literal_valued(x),
        ExprKind::Array(xs) => xs.iter().all(literal_valued),
        _ => false,
    }
}

/// The rest of the block after a `let`: its statements and its tail.
pub(super) type Rest<'a> = (&'a [Stmt], Option<&'a Expr>);

impl Lowerer<'_> {
    /// The type rustc would give `name` from its uses in `rest`, if one says.
    pub(super) fn infer_from_uses(&mut self, name: &str, rest: Rest<'_>) -> Option<CTy> {
        let mut partners: Vec<Expr> = Vec::new();
        // Helper calls taking the name as an argument: (helper, owner, argument position).
        let mut calls: Vec<(String, Option<crate::ir::StructRef>, usize)> = Vec::new();
        // Struct literals with the name as a field's value: (struct, field).
        let mut fields: Vec<(crate::ir::StructRef, String)> = Vec::new();
        let mut look = |e: &Expr| {
            let is_name = |x: &Expr| matches!(&x.kind, ExprKind::Var(n) if n == name);
            match &e.kind {
                ExprKind::Assign(t, _, v) if is_name(t) => partners.push((**v).clone()),
                ExprKind::Assign(t, None, v) if is_name(v) => partners.push((**t).clone()),
                ExprKind::Binary(op, l, r)
                    if !matches!(op, BinOp::And | BinOp::Or | BinOp::Shl | BinOp::Shr) =>
                {
                    if is_name(l) {
                        partners.push((**r).clone());
                    } else if is_name(r) {
                        partners.push((**l).clone());
                    }
                }
                ExprKind::Struct { ty, fields: fs, .. } => {
                    for (f, v) in fs {
                        if is_name(v) {
                            fields.push((ty.clone(), f.clone()));
                        }
                    }
                }
                ExprKind::Call {
                    owner,
                    name: f,
                    args,
                } => {
                    if let Some(k) = args.iter().position(is_name) {
                        calls.push((f.clone(), owner.clone(), k));
                    }
                }
                ExprKind::MethodCall { recv, args, .. } if args.len() == 1 => {
                    if is_name(recv) {
                        partners.push(args[0].clone());
                    } else if is_name(&args[0]) {
                        partners.push((**recv).clone());
                    }
                }
                _ => {}
            }
        };
        let (stmts, tail) = rest;
        for s in stmts {
            match s {
                Stmt::Let(l) => l.init.walk(&mut look),
                Stmt::Expr(e) => e.walk(&mut look),
            }
        }
        if let Some(t) = tail {
            t.walk(&mut look);
        }
        if let Some(t) = partners
            .iter()
            .find_map(|p| self.dry_type(p).filter(|t| t.is_concrete()))
        {
            return Some(t);
        }
        let span = proc_macro2::Span::call_site();
        for (ty, f) in fields {
            let before = self.ctx.errors.len();
            let t = self
                .struct_of(&ty, span)
                .and_then(|s| self.field_ty(&CTy::Struct(s), &f));
            self.ctx.errors.truncate(before);
            if t.is_some() {
                return t;
            }
        }
        calls
            .into_iter()
            .find_map(|(f, owner, k)| self.param_type(&f, owner.as_ref(), k))
    }

    /// The type of a helper's `k`-th parameter, found without lowering it.
    fn param_type(
        &mut self,
        f: &str,
        owner: Option<&crate::ir::StructRef>,
        k: usize,
    ) -> Option<CTy> {
        let before = self.ctx.errors.len();
        let key = match owner {
            Some(o) => format!(
                "{}::{f}",
                self.struct_of(o, proc_macro2::Span::call_site())?
            ),
            None => f.to_string(),
        };
        let Some(super::Binding::Fn { item, .. }) = self.lookup(&key) else {
            self.ctx.errors.truncate(before);
            return None;
        };
        let mut scratch = crate::error::Errors::new();
        let sig = crate::ir::Builder {
            errors: &mut scratch,
            elem_name: None,
        }
        .fn_sig(&item);
        let self_ty = std::mem::replace(&mut self.self_ty, item.owner.clone());
        let t = sig.params.get(k).and_then(|(_, t)| t.clone());
        let ty = t.and_then(|t| self.ty_cty(&t, item.sig.ident.span()));
        self.self_ty = self_ty;
        self.ctx.errors.truncate(before);
        ty
    }

    /// The type `e` lowers to here, with nothing emitted or reported.
    pub(super) fn dry_type(&mut self, e: &Expr) -> Option<CTy> {
        let saved = (
            self.out.len(),
            self.declared.len(),
            self.used.clone(),
            self.asserts.clone(),
            self.calls.clone(),
            self.ctx.errors.len(),
            self.dry,
        );
        self.dry = true;
        let v = self.expr(e, None);
        self.out.truncate(saved.0);
        self.declared.truncate(saved.1);
        self.used = saved.2;
        self.asserts = saved.3;
        self.calls = saved.4;
        self.ctx.errors.truncate(saved.5);
        self.dry = saved.6;
        (v.ty != CTy::Never).then_some(v.ty)
    }
}
