//! Blocks, statements and expressions from syn.

use super::{
    err_expr, path_string, Arm, BinOp, Block, Builder, Expr, ExprKind, ForLoop, Let, Lit, Stmt,
    UnOp,
};
use quote::ToTokens;
use scan_core::PrimType;
use syn::spanned::Spanned;

impl Builder<'_> {
    pub fn block(&mut self, b: &syn::Block) -> Block {
        let mut stmts = Vec::new();
        let mut tail = None;
        let mut items = Vec::new();
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            match s {
                syn::Stmt::Local(local) => {
                    if let Some(st) = self.local(local) {
                        stmts.push(st);
                    }
                }
                syn::Stmt::Item(item) => {
                    if let Some(it) = self.block_item(item) {
                        items.push(it);
                    }
                }
                // A lone `;` (a leading one, or `;;`) is an empty statement, as in Rust: nothing
                // to lower. (syn gives it an empty expression, which has no span to report at.)
                syn::Stmt::Expr(syn::Expr::Verbatim(v), Some(_)) if v.is_empty() => {}
                syn::Stmt::Expr(e, semi) => {
                    let ex = self.expr(e);
                    if semi.is_none() && i + 1 == n {
                        tail = Some(Box::new(ex));
                    } else {
                        stmts.push(Stmt::Expr(ex));
                    }
                }
                syn::Stmt::Macro(m) => {
                    self.macro_error(&m.mac);
                }
            }
        }
        Block {
            stmts,
            tail,
            items,
            span: b.brace_token.span.join(),
        }
    }

    pub(super) fn macro_error(&mut self, mac: &syn::Macro) -> Expr {
        let name = path_string(&mac.path);
        self.error(
            mac.span(),
            format!(
                "macro `{name}!` cannot be lowered to CUDA: write the expression without macros (`assert!`, `println!` and `panic!` have no GPU equivalent)"
            ),
        )
    }

    fn local(&mut self, local: &syn::Local) -> Option<Stmt> {
        let span = local.span();
        let (pat, ty) = match &local.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            other => (other, None),
        };
        let pat = self.pat(pat);
        let ty = ty.and_then(|t| self.ty(t, "locals"));
        let Some(init) = &local.init else {
            self.error(
                span,
                "`let` without a value cannot be lowered to CUDA: initialize the variable where it is declared (use `if`/`else` as an expression)",
            );
            return None;
        };
        if let Some((_, diverge)) = &init.diverge {
            self.error(
                diverge.span(),
                "`let ... else` cannot be lowered to CUDA: use `match` or `if let ... else`",
            );
        }
        let init = self.expr(&init.expr);
        Some(Stmt::Let(Box::new(Let {
            pat,
            ty,
            init,
            span,
        })))
    }

    pub fn expr(&mut self, e: &syn::Expr) -> Expr {
        let span = e.span();
        let kind = match e {
            syn::Expr::Lit(l) => match self.lit(&l.lit) {
                Some(lit) => ExprKind::Lit(lit),
                None => ExprKind::Error,
            },
            syn::Expr::Paren(p) => return self.expr(&p.expr),
            syn::Expr::Group(g) => return self.expr(&g.expr),
            syn::Expr::Path(p) => return self.path_expr(p),
            syn::Expr::Field(f) => {
                let base = self.expr(&f.base);
                match &f.member {
                    syn::Member::Named(n) => ExprKind::Field(Box::new(base), n.to_string()),
                    syn::Member::Unnamed(i) => ExprKind::TupleField(Box::new(base), i.index as usize),
                }
            }
            syn::Expr::Unary(u) => {
                let inner = self.expr(&u.expr);
                match u.op {
                    syn::UnOp::Neg(_) => ExprKind::Unary(UnOp::Neg, Box::new(inner)),
                    syn::UnOp::Not(_) => ExprKind::Unary(UnOp::Not, Box::new(inner)),
                    // A shared reference to a Copy value reads the same as the value.
                    syn::UnOp::Deref(_) => return inner,
                    _ => return self.error(span, "this unary operator cannot be lowered to CUDA"),
                }
            }
            syn::Expr::Binary(b) => return self.binary(b),
            syn::Expr::Cast(c) => {
                let inner = self.expr(&c.expr);
                match crate::element::body_prim(&c.ty) {
                    Some(p) if p.is_half() => {
                        return self.error(
                            c.ty.span(),
                            format!(
                                "`as {p}` is not Rust (`half::{p}` is a struct): write `{p}::from_f32(x)`"
                            ),
                        );
                    }
                    Some(p) => ExprKind::Cast(Box::new(inner), p),
                    None => {
                        if let Some(hint) = crate::element::simple_type_name(&c.ty)
                            .and_then(|n| crate::element::unsupported_prim(&n))
                        {
                            return self.error(c.ty.span(), hint);
                        }
                        let shown = c.ty.to_token_stream().to_string();
                        return self.error(
                            c.ty.span(),
                            format!(
                                "`as {shown}` cannot be lowered to CUDA: casts are supported between {}",
                                crate::element::ALLOWED_PRIMS
                            ),
                        );
                    }
                }
            }
            syn::Expr::If(i) => return self.if_expr(i),
            syn::Expr::Block(b) => {
                if b.label.is_some() {
                    return self.error(span, "labeled blocks cannot be lowered to CUDA");
                }
                ExprKind::Block(self.block(&b.block))
            }
            syn::Expr::Struct(s) => return self.struct_lit(s),
            syn::Expr::MethodCall(m) => return self.method_call(m),
            syn::Expr::Call(c) => return self.call(c),
            syn::Expr::Assign(a) => {
                let target = self.place(&a.left);
                let value = self.expr(&a.right);
                ExprKind::Assign(Box::new(target), None, Box::new(value))
            }
            syn::Expr::Return(r) => match &r.expr {
                Some(v) => ExprKind::Return(Box::new(self.expr(v))),
                None => {
                    return self.error(span, "`return` needs a value: the operator returns an element")
                }
            },
            syn::Expr::Match(m) => return self.match_expr(m),
            syn::Expr::ForLoop(f) => return self.for_loop(f),
            syn::Expr::While(w) => {
                if w.label.is_some() {
                    return self.error(span, LABELS);
                }
                if let syn::Expr::Let(l) = &*w.cond {
                    return self.error(
                        l.let_token.span,
                        "`while let` cannot be lowered to CUDA: use `while` with a condition, or a `for` loop over a constant range",
                    );
                }
                let cond = self.expr(&w.cond);
                ExprKind::While(Box::new(cond), self.block(&w.body))
            }
            syn::Expr::Loop(l) => {
                if l.label.is_some() {
                    return self.error(span, LABELS);
                }
                ExprKind::Loop(self.block(&l.body))
            }
            syn::Expr::Break(b) => {
                if b.label.is_some() {
                    return self.error(span, LABELS);
                }
                if b.expr.is_some() {
                    return self.error(
                        span,
                        "`break` with a value cannot be lowered to CUDA: assign the value to a `let mut` declared before the loop",
                    );
                }
                ExprKind::Break
            }
            syn::Expr::Continue(c) => {
                if c.label.is_some() {
                    return self.error(span, LABELS);
                }
                ExprKind::Continue
            }
            syn::Expr::Closure(c) => {
                return self.error(
                    c.or1_token.span,
                    "closures cannot be lowered to CUDA: write a helper `fn` beside the operator, or the expression inline",
                )
            }
            syn::Expr::Reference(r) => {
                if let Some(m) = &r.mutability {
                    return self.error(
                        m.span,
                        "`&mut` cannot be lowered to CUDA: a lowered operator has no references to mutate through; return the new value instead",
                    );
                }
                // `&x` of a Copy value, read only: the value itself.
                return self.expr(&r.expr);
            }
            syn::Expr::Macro(m) => return self.macro_error(&m.mac),
            syn::Expr::Array(a) => ExprKind::Array(a.elems.iter().map(|e| self.expr(e)).collect()),
            syn::Expr::Repeat(r) => {
                let value = self.expr(&r.expr);
                let len = self.expr(&r.len);
                ExprKind::Repeat(Box::new(value), Box::new(len))
            }
            syn::Expr::Index(i) => {
                let base = self.expr(&i.expr);
                if let syn::Expr::Range(_) = &*i.index {
                    return self.error(
                        i.index.span(),
                        "slicing cannot be lowered to CUDA: index one element at a time",
                    );
                }
                let index = self.expr(&i.index);
                ExprKind::Index(Box::new(base), Box::new(index))
            }
            syn::Expr::Tuple(t) if t.elems.is_empty() => {
                return self.error(span, "`()` cannot be lowered to CUDA: the operator returns an element")
            }
            syn::Expr::Tuple(t) => ExprKind::Tuple(t.elems.iter().map(|e| self.expr(e)).collect()),
            syn::Expr::Range(_) => {
                return self.error(
                    span,
                    "ranges cannot be lowered to CUDA outside a `for` loop (`for i in 0..4`) or a `match` pattern",
                )
            }
            syn::Expr::Try(t) => {
                return self.error(
                    t.question_token.span,
                    "`?` cannot be lowered to CUDA: an operator cannot fail",
                )
            }
            syn::Expr::Unsafe(u) => {
                return self.error(
                    u.unsafe_token.span,
                    "`unsafe` blocks cannot be lowered to CUDA: an operator is plain arithmetic",
                )
            }
            syn::Expr::Let(_) => {
                return self.error(
                    span,
                    "`let` in a condition cannot be lowered to CUDA except as a whole `if let PATTERN = value { ... }` (no `&&` chains)",
                )
            }
            syn::Expr::Async(_) | syn::Expr::Await(_) => {
                return self.error(span, "`async`/`.await` cannot be lowered to CUDA")
            }
            _ => {
                let shown = e.to_token_stream().to_string();
                return self.error(
                    span,
                    format!("`{shown}` cannot be lowered to CUDA: see docs/operator-language.md for what can"),
                );
            }
        };
        Expr { kind, span }
    }

    pub(super) fn lit(&mut self, l: &syn::Lit) -> Option<Lit> {
        match l {
            syn::Lit::Int(i) => {
                let suffix = i.suffix();
                let suffix = if suffix.is_empty() {
                    None
                } else {
                    match crate::element::body_prim_name(suffix) {
                        Some(p) => Some(p),
                        None => {
                            let hint =
                                crate::element::unsupported_prim(suffix).unwrap_or_else(|| {
                                    format!(
                                    "`{suffix}` literals cannot be lowered to CUDA: use one of {}",
                                    crate::element::ALLOWED_PRIMS
                                )
                                });
                            self.error(i.span(), hint);
                            return None;
                        }
                    }
                };
                if let Some(p) = suffix.filter(|p| p.is_float()) {
                    return Some(Lit::Float {
                        digits: i.base10_digits().to_string(),
                        suffix: Some(p),
                    });
                }
                match i.base10_digits().parse::<u128>() {
                    Ok(value) => Some(Lit::Int { value, suffix }),
                    Err(_) => {
                        self.error(i.span(), "integer literal too large");
                        None
                    }
                }
            }
            syn::Lit::Float(f) => {
                let suffix = f.suffix();
                let suffix = match suffix {
                    "" => None,
                    "f32" => Some(PrimType::F32),
                    "f64" => Some(PrimType::F64),
                    other => {
                        self.error(
                            f.span(),
                            format!("`{other}` float literals are not supported"),
                        );
                        return None;
                    }
                };
                Some(Lit::Float {
                    digits: f.base10_digits().to_string(),
                    suffix,
                })
            }
            syn::Lit::Bool(b) => Some(Lit::Bool(b.value)),
            syn::Lit::Str(_) | syn::Lit::ByteStr(_) | syn::Lit::CStr(_) => {
                self.error(l.span(), "string literals cannot be lowered to CUDA");
                None
            }
            syn::Lit::Char(_) | syn::Lit::Byte(_) => {
                self.error(
                    l.span(),
                    "character literals cannot be lowered to CUDA: use an integer (`b'a'` is `97u8`)",
                );
                None
            }
            _ => {
                self.error(l.span(), "this literal cannot be lowered to CUDA");
                None
            }
        }
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> Expr {
        use syn::BinOp as B;
        let span = b.span();
        let (op, compound) = match b.op {
            B::Add(_) => (BinOp::Add, false),
            B::Sub(_) => (BinOp::Sub, false),
            B::Mul(_) => (BinOp::Mul, false),
            B::Div(_) => (BinOp::Div, false),
            B::Rem(_) => (BinOp::Rem, false),
            B::And(_) => (BinOp::And, false),
            B::Or(_) => (BinOp::Or, false),
            B::BitXor(_) => (BinOp::BitXor, false),
            B::BitAnd(_) => (BinOp::BitAnd, false),
            B::BitOr(_) => (BinOp::BitOr, false),
            B::Shl(_) => (BinOp::Shl, false),
            B::Shr(_) => (BinOp::Shr, false),
            B::Eq(_) => (BinOp::Eq, false),
            B::Lt(_) => (BinOp::Lt, false),
            B::Le(_) => (BinOp::Le, false),
            B::Ne(_) => (BinOp::Ne, false),
            B::Ge(_) => (BinOp::Ge, false),
            B::Gt(_) => (BinOp::Gt, false),
            B::AddAssign(_) => (BinOp::Add, true),
            B::SubAssign(_) => (BinOp::Sub, true),
            B::MulAssign(_) => (BinOp::Mul, true),
            B::DivAssign(_) => (BinOp::Div, true),
            B::RemAssign(_) => (BinOp::Rem, true),
            B::BitXorAssign(_) => (BinOp::BitXor, true),
            B::BitAndAssign(_) => (BinOp::BitAnd, true),
            B::BitOrAssign(_) => (BinOp::BitOr, true),
            B::ShlAssign(_) => (BinOp::Shl, true),
            B::ShrAssign(_) => (BinOp::Shr, true),
            _ => return self.error(span, "this operator cannot be lowered to CUDA"),
        };
        if compound {
            let target = self.place(&b.left);
            let value = self.expr(&b.right);
            return Expr {
                kind: ExprKind::Assign(Box::new(target), Some(op), Box::new(value)),
                span,
            };
        }
        let l = self.expr(&b.left);
        let r = self.expr(&b.right);
        Expr {
            kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
            span,
        }
    }

    /// An assignment target: a local, or a field, tuple field or element of one (`x`,
    /// `x.a.b`, `x.v[i]`, `x.0`), or a tuple of those (`(a, b) = (b, a)`).
    fn place(&mut self, e: &syn::Expr) -> Expr {
        fn is_place(e: &syn::Expr) -> bool {
            match e {
                syn::Expr::Path(p) => p.path.get_ident().is_some(),
                syn::Expr::Field(f) => is_place(&f.base),
                syn::Expr::Index(i) => is_place(&i.expr),
                syn::Expr::Paren(p) => is_place(&p.expr),
                syn::Expr::Tuple(t) => !t.elems.is_empty() && t.elems.iter().all(is_place),
                _ => false,
            }
        }
        if !is_place(e) {
            return self.error(
                e.span(),
                "only a local variable or a part of one (`x = ...`, `x.a = ...`, `x.v[i] = ...`) can be assigned in a lowered operator",
            );
        }
        self.expr(e)
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> Expr {
        let then = |b: &mut Self| b.block(&i.then_branch);
        let els = |b: &mut Self| i.else_branch.as_ref().map(|(_, e)| Box::new(b.expr(e)));
        if let syn::Expr::Let(l) = &*i.cond {
            let pat = self.pat(&l.pat);
            let value = self.expr(&l.expr);
            let then = then(self);
            let els = els(self);
            return Expr {
                kind: ExprKind::IfLet(Box::new(pat), Box::new(value), then, els),
                span: i.span(),
            };
        }
        let cond = self.expr(&i.cond);
        let then = then(self);
        let els = els(self);
        Expr {
            kind: ExprKind::If(Box::new(cond), then, els),
            span: i.span(),
        }
    }

    fn match_expr(&mut self, m: &syn::ExprMatch) -> Expr {
        let scrutinee = self.expr(&m.expr);
        let arms = m
            .arms
            .iter()
            .map(|a| Arm {
                pat: self.pat(&a.pat),
                guard: a.guard.as_ref().map(|(_, g)| self.expr(g)),
                body: self.expr(&a.body),
                span: a.span(),
            })
            .collect();
        Expr {
            kind: ExprKind::Match(Box::new(scrutinee), arms),
            span: m.span(),
        }
    }

    /// `for x in a..b`, `a..=b`, `(a..b).rev()`, `(a..b).step_by(k)` (and both).
    fn for_loop(&mut self, f: &syn::ExprForLoop) -> Expr {
        let span = f.span();
        if f.label.is_some() {
            return self.error(span, LABELS);
        }
        let var = match &*f.pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                if let Some(m) = &pi.mutability {
                    return self.error(
                        m.span,
                        "a `for` variable cannot be `mut` in a lowered operator: copy it into a `let mut`",
                    );
                }
                Some(pi.ident.to_string())
            }
            syn::Pat::Wild(_) => None,
            other => return self.error(
                other.span(),
                "a `for` loop binds one integer variable (`for i in 0..4`) in a lowered operator",
            ),
        };
        let mut iter = &*f.expr;
        let (mut rev, mut step) = (false, None);
        loop {
            match iter {
                syn::Expr::Paren(p) => iter = &p.expr,
                syn::Expr::Group(g) => iter = &g.expr,
                syn::Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() && !rev => {
                    rev = true;
                    iter = &m.receiver;
                }
                syn::Expr::MethodCall(m)
                    if m.method == "step_by" && m.args.len() == 1 && step.is_none() && !rev =>
                {
                    step = Some(self.expr(&m.args[0]));
                    iter = &m.receiver;
                }
                _ => break,
            }
        }
        let (start, end, inclusive) = match iter {
            syn::Expr::Range(r) => match (&r.start, &r.end) {
                (Some(s), Some(e)) => (
                    self.expr(s),
                    self.expr(e),
                    matches!(r.limits, syn::RangeLimits::Closed(_)),
                ),
                _ => {
                    return self.error(
                        r.span(),
                        "a `for` loop in a lowered operator runs over a range with both bounds (`0..4`, `1..=N`)",
                    )
                }
            },
            other => {
                return self.error(
                    other.span(),
                    "a `for` loop in a lowered operator runs over a constant range (`0..4`, `(0..N).rev()`, `(0..8).step_by(2)`), not over an iterator",
                )
            }
        };
        let body = self.block(&f.body);
        Expr {
            kind: ExprKind::For(Box::new(ForLoop {
                var,
                start,
                end,
                inclusive,
                rev,
                step,
                body,
                span,
            })),
            span,
        }
    }

    fn struct_lit(&mut self, s: &syn::ExprStruct) -> Expr {
        let span = s.span();
        let Some(ty) = self.struct_ref(s.qself.is_some(), &s.path) else {
            return err_expr(span);
        };
        let mut fields = Vec::new();
        for fv in &s.fields {
            let name = match &fv.member {
                syn::Member::Named(n) => n.to_string(),
                syn::Member::Unnamed(_) => {
                    self.error(
                        fv.member.span(),
                        "tuple structs cannot be lowered to CUDA: give the fields names",
                    );
                    continue;
                }
            };
            fields.push((name, self.expr(&fv.expr)));
        }
        let base = s.rest.as_ref().map(|r| Box::new(self.expr(r)));
        Expr {
            kind: ExprKind::Struct { ty, fields, base },
            span,
        }
    }
}

/// Why labels are rejected (C++ has no labeled `break`).
const LABELS: &str =
    "loop labels cannot be lowered to CUDA: restructure the loop, or set a flag and `break` once per level";
