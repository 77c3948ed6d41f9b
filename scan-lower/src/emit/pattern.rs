//! Patterns: `match` and `if let` lower to an `if`/`else if` chain over the scrutinee (held in
//! a local), each arm's test built from its pattern; `let` and parameters destructure tuples,
//! structs and arrays into locals.
//!
//! The last arm of a `match` is its `else`: rustc has proved the arms exhaustive, so no value
//! reaches past it (an `emit --file` of a non-exhaustive `match` takes the last arm for the
//! values no arm names).

use super::literal::is_untyped_literal;
use super::{Binding, CTy, Lowerer, Val};
use crate::ir::{Arm, BinOp, Block, Expr, ExprKind, Let, Lit, Pat, PatKind, Stmt, UnOp};
use proc_macro2::Span;

fn mk(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

fn and(a: Option<Expr>, b: Option<Expr>, span: Span) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(mk(
            ExprKind::Binary(BinOp::And, Box::new(a), Box::new(b)),
            span,
        )),
        (a, None) => a,
        (None, b) => b,
    }
}

/// A pattern's bindings: (name, mutable, the part of the scrutinee it binds).
type Binds = Vec<(String, bool, Expr)>;

impl Lowerer<'_> {
    /// Lowers a `match` or `if let` by handing `f` the equivalent `if` chain, with the
    /// scrutinee bound for the chain's duration.
    pub(super) fn with_match<R>(&mut self, e: &Expr, f: impl FnOnce(&mut Self, &Expr) -> R) -> R {
        let (scrutinee, arms): (&Expr, Vec<Arm>) = match &e.kind {
            ExprKind::Match(s, arms) => (s, arms.clone()),
            ExprKind::IfLet(pat, value, then, els) => {
                let mut arms = vec![Arm {
                    pat: (**pat).clone(),
                    guard: None,
                    body: mk(ExprKind::Block(then.clone()), then.span),
                    span: e.span,
                }];
                if let Some(els) = els {
                    arms.push(Arm {
                        pat: Pat {
                            kind: PatKind::Wild,
                            span: els.span,
                        },
                        guard: None,
                        body: (**els).clone(),
                        span: els.span,
                    });
                }
                (value, arms)
            }
            _ => unreachable!("with_match takes a match or an if let"),
        };
        let v = self.expr(scrutinee, None);
        let v = self.default_lit(v);
        self.push_scope();
        let name = "#m";
        if v.ty == CTy::Never {
            self.bind(
                name,
                Binding::Var {
                    cpp: "0".into(),
                    ty: CTy::Never,
                },
            );
        } else if is_place(&v) {
            // A local or a part of one: read in place. Every test runs before any arm's body,
            // and bindings copy, so an arm that assigns to it changes nothing seen.
            self.bind(
                name,
                Binding::Var {
                    cpp: v.code.clone(),
                    ty: v.ty.clone(),
                },
            );
        } else {
            let cpp = self.declare_name("#m");
            let decl = self.decl_type(&v.ty);
            self.line(format!("const {decl} {cpp} = {};", v.code));
            self.bind(
                name,
                Binding::Var {
                    cpp,
                    ty: v.ty.clone(),
                },
            );
        }
        let scrut = mk(ExprKind::Var(name.into()), scrutinee.span);
        let is_if_let = matches!(e.kind, ExprKind::IfLet(..));
        let chain = self.arm_chain(&scrut, &arms, e.span, is_if_let);
        let r = f(self, &chain);
        self.pop_scope();
        r
    }

    fn arm_chain(&mut self, scrut: &Expr, arms: &[Arm], span: Span, is_if_let: bool) -> Expr {
        let mut chain: Option<Expr> = None;
        for (i, arm) in arms.iter().enumerate().rev() {
            let last = i + 1 == arms.len();
            let (test, binds) = self.pat_test(&arm.pat, scrut);
            let body = arm_block(&binds, &arm.body, arm.span);
            let cond = match &arm.guard {
                Some(g) => {
                    // The guard reads the bound parts in place: the scrutinee is a local or a
                    // part of one, and a guard cannot assign.
                    let guard = binds.iter().rev().fold(g.clone(), |body, (name, _, part)| {
                        mk(
                            ExprKind::Alias {
                                name: name.clone(),
                                value: Box::new(part.clone()),
                                body: Box::new(body),
                            },
                            g.span,
                        )
                    });
                    and(test, Some(guard), arm.span)
                }
                None => test,
            };
            chain = Some(match (cond, chain) {
                // An arm that always matches: those after it are unreachable.
                (None, _) => mk(ExprKind::Block(body), arm.span),
                (Some(c), Some(rest)) => mk(
                    ExprKind::If(Box::new(c), body, Some(Box::new(rest))),
                    arm.span,
                ),
                // `if let` without `else`: nothing happens when the pattern does not match.
                (Some(c), None) if is_if_let => mk(ExprKind::If(Box::new(c), body, None), arm.span),
                // The last arm of a `match` (see the module comment).
                (Some(_), None) => {
                    debug_assert!(last);
                    mk(ExprKind::Block(body), arm.span)
                }
            });
        }
        chain.unwrap_or_else(|| {
            self.error(span, "a `match` without arms has no value");
            mk(ExprKind::Error, span)
        })
    }

    /// The test a pattern makes on `s` (`None`: always matches) and what it binds.
    fn pat_test(&mut self, p: &Pat, s: &Expr) -> (Option<Expr>, Binds) {
        let sp = p.span;
        match &p.kind {
            PatKind::Wild => (None, Vec::new()),
            PatKind::Error(names) => {
                for n in names {
                    self.bind(
                        n,
                        Binding::Var {
                            cpp: "0".into(),
                            ty: CTy::Never,
                        },
                    );
                }
                (None, Vec::new())
            }
            PatKind::Bind { name, mutable, sub } => {
                if sub.is_none() && self.const_named(name).is_some() {
                    // A `const` in a pattern compares; it binds nothing.
                    let c = mk(ExprKind::Var(name.clone()), sp);
                    return (Some(self.eq_test(s, c, sp)), Vec::new());
                }
                let (test, mut binds) = match sub {
                    Some(sub) => self.pat_test(sub, s),
                    None => (None, Vec::new()),
                };
                binds.insert(0, (name.clone(), *mutable, s.clone()));
                (test, binds)
            }
            PatKind::Value(v) => (Some(self.eq_test(s, v.clone(), sp)), Vec::new()),
            PatKind::Range { lo, hi, inclusive } => {
                let lo = lo.as_ref().map(|lo| {
                    mk(
                        ExprKind::Binary(BinOp::Ge, Box::new(s.clone()), Box::new(lo.clone())),
                        sp,
                    )
                });
                let op = if *inclusive { BinOp::Le } else { BinOp::Lt };
                let hi = hi.as_ref().map(|hi| {
                    mk(
                        ExprKind::Binary(op, Box::new(s.clone()), Box::new(hi.clone())),
                        sp,
                    )
                });
                (and(lo, hi, sp), Vec::new())
            }
            PatKind::Or(alts) => {
                let arms: Vec<(Option<Expr>, Binds)> =
                    alts.iter().map(|a| self.pat_test(a, s)).collect();
                // Rust binds the same names in every alternative; each name reads the part the
                // alternative that matched binds (the first that matches, as in Rust).
                let mut binds = Vec::new();
                for (name, mutable, _) in &arms[0].1 {
                    let mut part: Option<Expr> = None;
                    for (t, bs) in arms.iter().rev() {
                        let Some((_, _, here)) = bs.iter().find(|(n, _, _)| n == name) else {
                            self.error(
                                sp,
                                format!(
                                    "`{name}` is not bound in every alternative of this pattern"
                                ),
                            );
                            return (None, Vec::new());
                        };
                        part = Some(match (t, part) {
                            (Some(t), Some(rest)) => {
                                let block = Block {
                                    stmts: Vec::new(),
                                    tail: Some(Box::new(here.clone())),
                                    items: Vec::new(),
                                    span: sp,
                                };
                                mk(
                                    ExprKind::If(Box::new(t.clone()), block, Some(Box::new(rest))),
                                    sp,
                                )
                            }
                            _ => here.clone(),
                        });
                    }
                    binds.push((name.clone(), *mutable, part.expect("an alternative")));
                }
                let mut test: Option<Expr> = None;
                for (t, _) in arms {
                    let Some(t) = t else {
                        return (None, binds);
                    };
                    test = Some(match test {
                        Some(prev) => {
                            mk(ExprKind::Binary(BinOp::Or, Box::new(prev), Box::new(t)), sp)
                        }
                        None => t,
                    });
                }
                (test, binds)
            }
            PatKind::Tuple(parts) => self.parts_test(
                parts
                    .iter()
                    .enumerate()
                    .map(|(k, p)| (p, mk(ExprKind::TupleField(Box::new(s.clone()), k), p.span))),
            ),
            PatKind::Struct { fields, .. } => self.parts_test(fields.iter().map(|(f, p)| {
                (
                    p,
                    mk(ExprKind::Field(Box::new(s.clone()), f.clone()), p.span),
                )
            })),
            PatKind::Array(parts) => self.parts_test(parts.iter().enumerate().map(|(k, p)| {
                let idx = mk(
                    ExprKind::Lit(Lit::Int {
                        value: k as u128,
                        suffix: None,
                    }),
                    p.span,
                );
                (
                    p,
                    mk(ExprKind::Index(Box::new(s.clone()), Box::new(idx)), p.span),
                )
            })),
        }
    }

    fn parts_test<'p>(
        &mut self,
        parts: impl Iterator<Item = (&'p Pat, Expr)>,
    ) -> (Option<Expr>, Binds) {
        let mut test = None;
        let mut binds = Vec::new();
        for (p, part) in parts {
            let (t, b) = self.pat_test(p, &part);
            test = and(test, t, p.span);
            binds.extend(b);
        }
        (test, binds)
    }

    /// `s == v`, or `s` / `!s` for `true` / `false`.
    fn eq_test(&mut self, s: &Expr, v: Expr, span: Span) -> Expr {
        match &v.kind {
            ExprKind::Lit(Lit::Bool(true)) => s.clone(),
            ExprKind::Lit(Lit::Bool(false)) => {
                mk(ExprKind::Unary(UnOp::Not, Box::new(s.clone())), span)
            }
            _ => mk(
                ExprKind::Binary(BinOp::Eq, Box::new(s.clone()), Box::new(v)),
                span,
            ),
        }
    }

    /// `let pattern = init;` for tuple, struct and array patterns.
    pub(super) fn let_pattern(
        &mut self,
        pat: &Pat,
        ann: Option<CTy>,
        init: &Expr,
        rest: super::infer::Rest<'_>,
    ) {
        if let (PatKind::Tuple(pats), ExprKind::Tuple(inits), None) = (&pat.kind, &init.kind, &ann)
        {
            if pats.len() == inits.len() {
                // `let (a, b) = (x, y);`: every value is computed before any name is bound.
                let mut vals: Vec<Option<(Val, Option<CTy>)>> = Vec::new();
                let inits: Vec<Expr> = inits.iter().map(|e| self.resolve_alias(e)).collect();
                for (p, e) in pats.iter().zip(&inits) {
                    let bind = match &p.kind {
                        PatKind::Bind {
                            name,
                            mutable,
                            sub: None,
                        } => Some((name, *mutable)),
                        _ => None,
                    };
                    if is_untyped_literal(e) && matches!(bind, Some((_, false))) {
                        vals.push(None);
                        continue;
                    }
                    // A literal typed by the uses of the name it is bound to, as rustc does.
                    let exp = match bind {
                        Some((name, _)) if super::infer::literal_valued(e) => {
                            self.infer_from_uses(name, rest)
                        }
                        _ => None,
                    };
                    let v = self.expr(e, exp.as_ref());
                    vals.push(Some((v, exp)));
                }
                for ((p, e), v) in pats.iter().zip(&inits).zip(vals) {
                    match v {
                        // A plain literal bound by value: each use gives it its type.
                        None => {
                            if let PatKind::Bind { name, .. } = &p.kind {
                                self.bind(name, Binding::Alias(e.clone()));
                            }
                        }
                        Some((v, _)) if v.ty == CTy::Never => {}
                        Some((v, exp)) => {
                            let ty = exp.unwrap_or_else(|| v.ty.clone());
                            if ty.is_lit() {
                                if let PatKind::Bind { name, .. } = &p.kind {
                                    self.error(
                                        e.span,
                                        format!("cannot infer the type of `{name}` for CUDA: annotate the `let` or suffix the literal"),
                                    );
                                    self.bind(
                                        name,
                                        Binding::Var {
                                            cpp: "0".into(),
                                            ty: CTy::Never,
                                        },
                                    );
                                    continue;
                                }
                            }
                            self.bind_pattern(p, v, ty);
                        }
                    }
                }
                return;
            }
        }
        let v = self.expr(init, ann.as_ref());
        if v.ty == CTy::Never {
            return;
        }
        let ty = ann.unwrap_or_else(|| v.ty.clone());
        let v = self.store(v, &ty);
        self.bind_pattern(pat, v, ty);
    }

    /// `x` where `let x = 2;` made it an alias: the literal itself (which no later shadowing
    /// of a name can change).
    fn resolve_alias(&self, e: &Expr) -> Expr {
        match &e.kind {
            ExprKind::Var(n) => match self.lookup(n) {
                Some(Binding::Alias(init)) => self.resolve_alias(&init),
                _ => e.clone(),
            },
            _ => e.clone(),
        }
    }

    /// Binds the names of an irrefutable pattern to the parts of `v`.
    pub(super) fn bind_pattern(&mut self, p: &Pat, v: Val, ty: CTy) {
        match &p.kind {
            PatKind::Wild => {}
            PatKind::Error(names) => {
                for n in names {
                    self.bind(
                        n,
                        Binding::Var {
                            cpp: "0".into(),
                            ty: CTy::Never,
                        },
                    );
                }
            }
            PatKind::Bind { name, sub, .. } => {
                if v.ty.is_lit() || v.ty == CTy::Index {
                    let v = self.default_lit(v);
                    let ty = v.ty.clone();
                    return self.bind_value(name, v, ty);
                }
                let Some(sub) = sub else {
                    return self.bind_value(name, v, ty);
                };
                let v = self.held(v, &ty);
                self.bind_value(name, v.clone(), ty.clone());
                self.bind_pattern(sub, v, ty);
            }
            PatKind::Tuple(parts) => {
                let Some(CTy::Tuple(ts)) = ty.resolved().cloned() else {
                    self.error(p.span, "this tuple pattern does not match a tuple value");
                    return;
                };
                if ts.len() != parts.len() {
                    self.error(
                        p.span,
                        format!(
                            "this pattern has {} elements, the tuple {}",
                            parts.len(),
                            ts.len()
                        ),
                    );
                    return;
                }
                let v = self.held(v, &ty);
                for (k, (part, t)) in parts.iter().zip(ts).enumerate() {
                    let pv = Val::new(format!("{}._{k}", v.code), t.clone(), true);
                    self.bind_pattern(part, pv, t);
                }
            }
            PatKind::Struct { ty: named, fields } => {
                if let (Some(want), Some(CTy::Struct(got))) =
                    (self.struct_of(named, p.span), ty.resolved())
                {
                    if &want != got {
                        self.error(
                            p.span,
                            format!("this pattern is a `{want}`, the value a `{got}`"),
                        );
                        return;
                    }
                }
                let v = self.held(v, &ty);
                for (f, part) in fields {
                    let Some(ft) = self.field_ty(&ty, f) else {
                        self.error(p.span, "this struct pattern does not match a struct value");
                        return;
                    };
                    let pv = Val::new(
                        format!("{}.{}", v.code, crate::names::field_name(f)),
                        ft.clone(),
                        true,
                    );
                    self.bind_pattern(part, pv, ft);
                }
            }
            PatKind::Array(parts) => {
                let Some(et) = self.index_ty(&ty) else {
                    self.error(p.span, "this array pattern does not match an array value");
                    return;
                };
                if let Some(n) = Self::array_len(&ty) {
                    if n as usize != parts.len() {
                        self.error(
                            p.span,
                            format!("this pattern has {} elements, the array {n}", parts.len()),
                        );
                        return;
                    }
                }
                let v = self.held(v, &ty);
                for (k, part) in parts.iter().enumerate() {
                    let pv = Val::new(format!("{}[{k}]", v.code), et.clone(), true);
                    self.bind_pattern(part, pv, et.clone());
                }
            }
            PatKind::Value(_) | PatKind::Range { .. } | PatKind::Or(_) => {
                self.error(
                    p.span,
                    "refutable pattern in `let`: this pattern does not match every value; use `match` or `if let`",
                );
            }
        }
    }

    /// `v` in a local, unless it already is one (its parts are then read more than once).
    fn held(&mut self, v: Val, ty: &CTy) -> Val {
        if is_place(&v) {
            return v;
        }
        let tmp = self.fresh("tmp");
        let decl = self.decl_type(ty);
        self.line(format!("const {decl} {tmp} = {};", v.code));
        Val::new(tmp, ty.clone(), true)
    }
}

/// A local, or a field or element of one (`x`, `x.a`, `x.v[2]`): reading it again costs nothing
/// and gives the same value.
fn is_place(v: &Val) -> bool {
    v.atomic
        && v.code
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']'))
}

/// An arm's body with its bindings declared first (those it reads: a guard's are read in
/// place), a `return` kept as a statement.
fn arm_block(binds: &Binds, body: &Expr, span: Span) -> Block {
    let mut stmts: Vec<Stmt> = binds
        .iter()
        .filter(|(name, _, _)| body.mentions(name))
        .map(|(name, mutable, part)| {
            Stmt::Let(Box::new(Let {
                pat: Pat {
                    kind: PatKind::Bind {
                        name: name.clone(),
                        mutable: *mutable,
                        sub: None,
                    },
                    span: part.span,
                },
                ty: None,
                init: part.clone(),
                span: part.span,
            }))
        })
        .collect();
    match &body.kind {
        ExprKind::Block(b) => {
            stmts.extend(b.stmts.iter().cloned());
            Block {
                stmts,
                tail: b.tail.clone(),
                items: b.items.clone(),
                span: b.span,
            }
        }
        ExprKind::Return(_) => {
            stmts.push(Stmt::Expr(body.clone()));
            Block {
                stmts,
                tail: None,
                items: Vec::new(),
                span,
            }
        }
        _ => Block {
            stmts,
            tail: Some(Box::new(body.clone())),
            items: Vec::new(),
            span,
        },
    }
}
