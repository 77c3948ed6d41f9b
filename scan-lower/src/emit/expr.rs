//! Expressions: names, fields, operators, casts, `if` as a value, struct literals, tuples and
//! arrays.

use super::literal::literal_parts;
use super::types::MAX_TUPLE;
use super::{Binding, CTy, Line, Lowerer, Val};
use crate::ir::{BinOp, Block, Expr, ExprKind, UnOp};
use crate::names::field_name;
use proc_macro2::Span;
use scan_core::PrimType;
use std::collections::HashSet;

impl Lowerer<'_> {
    pub(super) fn expr(&mut self, e: &Expr, expected: Option<&CTy>) -> Val {
        match &e.kind {
            ExprKind::Error => Val::error(),
            ExprKind::Lit(lit) => self.lit(lit, false, e.span, expected),
            ExprKind::Var(name) => self.var(name, e.span, expected),
            ExprKind::AssocConst(owner, name) => {
                let Some(owner) = self.struct_of(owner, e.span) else {
                    return Val::error();
                };
                self.item_const(&format!("{owner}::{name}"), e.span, expected)
            }
            ExprKind::Field(base, field) => {
                let b = self.expr(base, None);
                if b.ty == CTy::Never {
                    return b;
                }
                match self.field_ty(&b.ty, field) {
                    Some(ty) => Val::new(
                        format!("{}.{}", b.operand(), field_name(field)),
                        ty,
                        true,
                    ),
                    None => self.error(
                        e.span,
                        format!("`.{field}` cannot be lowered: only fields of structs can be read"),
                    ),
                }
            }
            ExprKind::TupleField(base, k) => {
                let b = self.expr(base, None);
                match &b.ty {
                    CTy::Tuple(ts) if *k < ts.len() => {
                        Val::new(format!("{}._{k}", b.operand()), ts[*k].clone(), true)
                    }
                    CTy::Never => b,
                    _ => self.error(e.span, format!("`.{k}` cannot be lowered: only tuples have numbered fields")),
                }
            }
            ExprKind::Index(base, index) => self.index(base, index),
            ExprKind::Unary(op, inner) => self.unary(*op, inner, expected, e.span),
            ExprKind::Binary(op, l, r) => self.binary(*op, l, r, expected, e.span),
            ExprKind::Cast(inner, to) => self.cast(inner, *to, e.span),
            ExprKind::If(c, then, els) => self.if_value(c, then, els.as_deref(), expected, e.span),
            ExprKind::Match(..) | ExprKind::IfLet(..) => {
                let expected = expected.cloned();
                self.with_match(e, |lw, chain| lw.expr(chain, expected.as_ref()))
            }
            ExprKind::Block(b) => {
                self.push_block_scope(b);
                self.stmts(b);
                let v = match &b.tail {
                    Some(t) => self.expr(t, expected),
                    None if Self::ends_in_return(b) => Val::new("", CTy::Never, true),
                    None => self.error(b.span, "this block has no value: end it with an expression without `;`"),
                };
                self.pop_scope();
                v
            }
            ExprKind::Struct { ty, fields, base } => {
                let Some(s) = self.struct_of(ty, e.span) else {
                    return Val::error();
                };
                let tmp = self.fresh("tmp");
                self.struct_into(&tmp, &s, fields, base.as_deref());
                Val::new(tmp, CTy::Struct(s), true)
            }
            ExprKind::Tuple(items) => self.tuple(items, expected, e.span),
            ExprKind::Array(items) => self.array(items, expected, e.span),
            ExprKind::Repeat(value, len) => self.repeat(value, len, expected),
            ExprKind::MethodCall {
                name,
                name_span,
                recv,
                args,
            } => self.method_call(name, *name_span, recv, args, expected, e.span),
            ExprKind::Builtin {
                method,
                recv,
                args,
                ty,
            } => self.builtin(method, recv, args, *ty, expected, e.span),
            ExprKind::Call { owner, name, args } => {
                self.call(owner.as_ref(), name, args, e.span)
            }
            ExprKind::Const(p, c) => self.prim_const(*p, *c),
            ExprKind::Assign(..) => self.error(
                e.span,
                "an assignment has no value: use it as a statement (`x = ...;`)",
            ),
            ExprKind::Return(_) => self.error(
                e.span,
                "`return` can only be a statement or the last expression of a branch",
            ),
            ExprKind::While(..) | ExprKind::Loop(..) | ExprKind::For(..) => self.error(
                e.span,
                "a loop has no value: use it as a statement, and read what it computed from a `let mut` declared before it",
            ),
            ExprKind::Alias { name, value, body } => {
                let v = self.expr(value, None);
                self.push_scope();
                self.bind(
                    name,
                    Binding::Var {
                        cpp: v.operand(),
                        ty: v.ty,
                    },
                );
                let r = self.expr(body, expected);
                self.pop_scope();
                r
            }
            ExprKind::Break | ExprKind::Continue => self.error(
                e.span,
                "`break`/`continue` can only be statements",
            ),
        }
    }

    fn var(&mut self, name: &str, span: Span, expected: Option<&CTy>) -> Val {
        match self.lookup(name) {
            Some(Binding::Var { cpp, ty }) => Val::new(cpp, ty, true),
            Some(Binding::Alias(init)) => self.expr(&init, expected),
            Some(Binding::Index { cpp, .. }) => Val::new(cpp, CTy::Index, true),
            Some(Binding::Const { .. }) => self.item_const(name, span, expected),
            Some(Binding::Fn { .. }) => self.error(
                span,
                format!("the function `{name}` can only be called (`{name}(...)`): function values cannot be lowered to CUDA"),
            ),
            // A name bound further down (a `for` variable, while typing a `let` by its uses).
            None if self.dry => Val::new(name, CTy::Index, true),
            None => self.error(
                span,
                format!(
                    "`{name}` is not visible to #[scan_op]: a lowered operator sees its parameters, its `let`s, and the `const`s and `fn`s declared inside its bodies or in the `#[scan_op] mod` that holds it"
                ),
            ),
        }
    }

    /// `base[index]`. The index must be provably in bounds: a constant, or a `for` variable
    /// (plus or times constants), checked against the length here when it is known, else by a
    /// `static_assert` in the generated C++.
    fn index(&mut self, base: &Expr, index: &Expr) -> Val {
        let b = self.expr(base, None);
        if b.ty == CTy::Never {
            return b;
        }
        let Some(elem) = self.index_ty(&b.ty) else {
            return self.error(
                base.span,
                "only arrays can be indexed in a lowered operator",
            );
        };
        if self.dry {
            return Val::new(format!("{}[0]", b.operand()), elem, true);
        }
        let Some((lo, hi)) = self.index_range(index) else {
            return self.error(
                index.span,
                "this index cannot be checked before the kernel runs: index an array with a constant, a `for` variable over a constant range (plus or times constants, `% N`), or `x & MASK`; an index out of bounds panics in Rust and has no GPU equivalent",
            );
        };
        // The generated text may only depend on what every way of lowering knows: a local's
        // array type, not a struct field's (visible to `emit --file`, not to a lone impl).
        let local_len = match &b.ty {
            CTy::Array(_, n) => Some(*n),
            _ => None,
        };
        let len = Self::array_len(&b.ty);
        if lo < 0 {
            return self.error(
                index.span,
                format!("index out of bounds: the index can be {lo}"),
            );
        }
        if local_len.is_none() && lo < hi {
            // The array's length is C++'s business here; rustc checks constant indices, C++
            // checks those a loop reaches.
            let cpp = self.cpp_type(&b.ty);
            let check = format!(
                "static_assert({hi} < rs_array_len<{cpp}>::value, \"index out of bounds: the index reaches {hi}\");"
            );
            if self.asserts.insert(check.clone()) {
                self.line(check);
            }
        }
        if let Some(n) = len {
            if hi >= n as i128 && lo <= hi {
                let what = if lo == hi {
                    format!("the index is {hi}")
                } else {
                    format!("the index reaches {hi}")
                };
                return self.error(
                    index.span,
                    format!("index out of bounds: the length is {n} but {what}"),
                );
            }
        }
        let iv = self.expr(index, None);
        let iv = match iv.ty {
            CTy::Index | CTy::Never => iv,
            _ => self.default_lit(iv),
        };
        Val::new(format!("{}[{}]", b.operand(), iv.code), elem, true)
    }

    fn unary(&mut self, op: UnOp, inner: &Expr, expected: Option<&CTy>, span: Span) -> Val {
        // `-128i8` is one literal to rustc (`128i8` alone is out of range).
        if let (UnOp::Neg, Some((neg, lit))) = (op, literal_parts(inner)) {
            return self.lit(lit, !neg, span, expected);
        }
        let v = self.expr(
            inner,
            if op == UnOp::Neg {
                expected
            } else {
                expected.filter(|t| **t != CTy::Bool)
            },
        );
        match op {
            UnOp::Neg => match &v.ty {
                t if t.is_float() => Val::new(format!("-{}", v.operand()), v.ty, false),
                CTy::Never => v,
                CTy::Struct(_) | CTy::Bool | CTy::Array(..) | CTy::Tuple(_) => {
                    self.error(span, "`-` cannot be applied to this value")
                }
                _ => Val::new(format!("rs_neg({})", v.code), v.ty, true),
            },
            UnOp::Not => {
                let v = self.default_lit(v);
                match v.ty.resolved() {
                    Some(CTy::Bool) => Val::new(format!("!{}", v.operand()), v.ty, false),
                    _ if v.ty == CTy::Never => v,
                    Some(CTy::Struct(_) | CTy::Array(..) | CTy::Tuple(_)) => self.error(
                        span,
                        "`!` cannot be applied to a whole struct, array or tuple",
                    ),
                    _ => Val::new(format!("rs_not({})", v.code), v.ty, true),
                }
            }
        }
    }

    /// Lowers operands left to right. If a later operand emits statements, earlier non-literal
    /// operands are first saved in temporaries, so Rust's evaluation order holds.
    pub(super) fn operands(&mut self, items: &[(&Expr, Option<CTy>)]) -> Vec<Val> {
        let mut vals: Vec<Val> = Vec::new();
        for (e, exp) in items {
            let mark = self.out.len();
            let names_mark = self.declared.len();
            let v = self.expr(e, exp.as_ref());
            if self.mutates_older(mark, names_mark) {
                let mut saved = Vec::new();
                for prev in vals.iter_mut() {
                    if prev.lit.is_some() || prev.ty == CTy::Never {
                        continue;
                    }
                    let tmp = self.fresh("tmp");
                    let decl = self.decl_type(&prev.ty);
                    saved.push(format!("const {decl} {tmp} = {};", prev.code));
                    prev.code = tmp;
                    prev.atomic = true;
                }
                for (i, text) in saved.into_iter().enumerate() {
                    let indent = self.indent;
                    self.out.insert(mark + i, Line { indent, text });
                }
            }
            vals.push(v);
        }
        vals
    }

    /// Whether the lines from `mark` on assign a variable declared before `names_mark`.
    fn mutates_older(&self, mark: usize, names_mark: usize) -> bool {
        let new: HashSet<&str> = self.declared[names_mark..]
            .iter()
            .map(String::as_str)
            .collect();
        self.out[mark..].iter().any(|l| {
            let t = l.text.trim_start();
            let Some((target, _)) = t.split_once(" = ") else {
                return false;
            };
            let end = target
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(target.len());
            let var = &target[..end];
            let rest = &target[end..];
            !var.is_empty()
                && (rest.is_empty() || rest.starts_with(['.', '[']))
                && !new.contains(var)
        })
    }

    pub(super) fn binary(
        &mut self,
        op: BinOp,
        l: &Expr,
        r: &Expr,
        expected: Option<&CTy>,
        span: Span,
    ) -> Val {
        match op {
            BinOp::And | BinOp::Or => {
                let lv = self.expr(l, Some(&CTy::Bool));
                if needs_stmts(r, self) {
                    let tmp = self.fresh("tmp");
                    self.line(format!("bool {tmp} = {};", lv.code));
                    let test = if op == BinOp::And {
                        tmp.clone()
                    } else {
                        format!("!{tmp}")
                    };
                    self.line(format!("if ({test}) {{"));
                    self.indent += 1;
                    let rv = self.expr(r, Some(&CTy::Bool));
                    self.line(format!("{tmp} = {};", rv.code));
                    self.indent -= 1;
                    self.line("}");
                    return Val::new(tmp, CTy::Bool, true);
                }
                let rv = self.expr(r, Some(&CTy::Bool));
                Val::new(
                    format!(
                        "{} {} {}",
                        logic_operand(&lv),
                        op.c_infix(),
                        logic_operand(&rv)
                    ),
                    CTy::Bool,
                    false,
                )
            }
            _ if op.is_comparison() => {
                let vs = self.operands(&[(l, None), (r, None)]);
                let (mut a, mut b) = (vs[0].clone(), vs[1].clone());
                if is_aggregate(&a.ty) || is_aggregate(&b.ty) {
                    return self.error(
                        span,
                        "comparing whole structs, arrays or tuples cannot be lowered to CUDA: compare their fields (`l.a == r.a && l.b == r.b`)",
                    );
                }
                let unified = self.unify(&a.ty, &b.ty);
                a = self.cmp_operand(a, &unified);
                b = self.cmp_operand(b, &unified);
                Val::new(
                    format!("{} {} {}", a.operand(), op.c_infix(), b.operand()),
                    CTy::Bool,
                    false,
                )
            }
            BinOp::Shl | BinOp::Shr => {
                let vs = self.operands(&[(l, expected.cloned()), (r, None)]);
                let a = self.default_lit(vs[0].clone());
                let b = self.default_lit(vs[1].clone());
                Val::new(
                    format!("{}({}, {})", op.helper(), a.code, b.code),
                    a.ty,
                    true,
                )
            }
            _ => {
                let vs = self.operands(&[(l, expected.cloned()), (r, expected.cloned())]);
                let (a, b) = (vs[0].clone(), vs[1].clone());
                if is_aggregate(&a.ty) || is_aggregate(&b.ty) {
                    return self.error(
                        span,
                        "arithmetic on whole structs, arrays or tuples cannot be lowered to CUDA: combine their fields (or write a helper function that does)",
                    );
                }
                let mut ty = self.unify(&a.ty, &b.ty);
                if ty.is_lit() || ty == CTy::Index {
                    if let Some(e) = expected.filter(|t| t.is_concrete()) {
                        ty = e.clone();
                    }
                }
                let (a, b) = if ty == CTy::Index {
                    // `i + 1`: both sides as i64, still free to take the use's type.
                    (self.index_operand(a), self.index_operand(b))
                } else {
                    (self.settle(a, &ty), self.settle(b, &ty))
                };
                let ty = if ty.is_lit() { a.ty.clone() } else { ty };
                if ty == CTy::Never {
                    return Val::error();
                }
                let zero_divisor = b.lit.as_ref().and_then(|l| l.int_value()) == Some(0);
                if matches!(op, BinOp::Div | BinOp::Rem) && zero_divisor && !b.ty.is_float() {
                    // rustc's unconditional_panic lint; the generated code would return 0.
                    return self.error(
                        span,
                        format!(
                            "this operation will panic at run time in Rust: attempt to {} zero",
                            if op == BinOp::Div {
                                "divide by"
                            } else {
                                "calculate the remainder with a divisor of"
                            }
                        ),
                    );
                }
                let float_infix = matches!(ty, CTy::Prim(p) if p.is_float())
                    && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div);
                if float_infix {
                    Val::new(
                        format!("{} {} {}", a.operand(), op.c_infix(), b.operand()),
                        ty,
                        false,
                    )
                } else {
                    Val::new(format!("{}({}, {})", op.helper(), a.code, b.code), ty, true)
                }
            }
        }
    }

    /// An operand beside a `for` variable that nothing else types: an `i64`.
    fn index_operand(&mut self, v: Val) -> Val {
        if v.ty.is_lit() {
            let i64 = CTy::Prim(PrimType::I64);
            let c = self.coerce(v, &i64);
            return Val {
                ty: CTy::Index,
                ..c
            };
        }
        v
    }

    fn cast(&mut self, inner: &Expr, to: PrimType, span: Span) -> Val {
        let v = self.expr(inner, None);
        if let Some(CTy::Prim(p)) = v.ty.resolved() {
            if p.is_half() {
                return self.error(
                    span,
                    format!(
                        "`as` cannot convert a `{p}` (`half::{p}` is a struct): write `.to_f32()` (or `.to_f64()`), then cast that"
                    ),
                );
            }
        }
        let v = match (&v.ty, to.is_float()) {
            (CTy::IntLit, false) | (CTy::FloatLit, true) => self.coerce(v, &CTy::Prim(to)),
            (CTy::Index, _) => v,
            _ => self.default_lit(v),
        };
        match &v.ty {
            CTy::Prim(p) if *p == to => v,
            CTy::Never => v,
            t if is_aggregate(t) => Val::error(),
            _ => Val::new(format!("rs_cast<{to}>({})", v.code), CTy::Prim(to), true),
        }
    }

    pub(super) fn if_value(
        &mut self,
        c: &Expr,
        then: &Block,
        els: Option<&Expr>,
        expected: Option<&CTy>,
        span: Span,
    ) -> Val {
        let Some(els) = els else {
            return self.error(
                span,
                "an `if` without `else` has no value: add an `else` branch, or use it as a statement",
            );
        };
        let cond = self.expr(c, Some(&CTy::Bool));
        let simple = !block_needs_stmts(then, self) && !needs_stmts(els, self);
        if simple {
            self.push_scope();
            let tv = match &then.tail {
                Some(t) => self.expr(t, expected),
                None => Val::error(),
            };
            self.pop_scope();
            // Rust gives every branch one type: the first branch's types the others.
            let exp = branch_expectation(expected, &tv);
            let ev = self.expr(els, exp.as_ref());
            let mut ty = self.unify(&tv.ty, &ev.ty);
            if ty.is_lit() || ty == CTy::Index {
                if let Some(e) = expected.filter(|t| t.is_concrete()) {
                    ty = e.clone();
                }
            }
            let tv = self.settle(tv, &ty);
            let ev = self.settle(ev, &ty);
            let ty = if ty.is_lit() || ty == CTy::Index {
                tv.ty.clone()
            } else {
                ty
            };
            return Val::new(
                format!("{} ? {} : {}", cond.operand(), tv.operand(), ev.operand()),
                ty,
                false,
            );
        }
        let tmp = self.fresh("tmp");
        // Placeholders, filled (or dropped) once every branch is lowered. Nested `if`s drop
        // only their own, which come after these.
        let hole = format!("\0{tmp}");
        let decl_at = self.line(hole.clone());
        self.line(format!("if ({}) {{", cond.code));
        let mut branches = vec![self.value_branch(then, expected, &hole)];
        // Rust gives every branch one type: the first branch's types the others.
        let exp = branch_expectation(expected, &branches[0].1);
        let expected = exp.as_ref();
        let mut els = els;
        loop {
            match &els.kind {
                // `else if` keeps assigning the same temporary.
                ExprKind::If(c2, then2, Some(els2)) if !needs_stmts(c2, self) => {
                    let cond = self.expr(c2, Some(&CTy::Bool));
                    self.line(format!("}} else if ({}) {{", cond.code));
                    branches.push(self.value_branch(then2, expected, &hole));
                    els = els2;
                }
                _ => {
                    self.line("} else {");
                    self.indent += 1;
                    self.push_scope();
                    let ev = self.expr(els, expected);
                    let at = self.line(hole.clone());
                    branches.push((at, ev));
                    self.pop_scope();
                    self.indent -= 1;
                    break;
                }
            }
        }
        self.line("}");
        let mut ty = CTy::Never;
        for (_, v) in &branches {
            ty = self.unify(&ty, &v.ty);
        }
        if ty.is_lit() || ty == CTy::Index {
            let first = branches
                .iter()
                .map(|(_, v)| v.clone())
                .find(|v| v.ty != CTy::Never)
                .expect("a literal branch");
            ty = expected
                .filter(|t| t.is_concrete())
                .cloned()
                .unwrap_or_else(|| self.default_lit(first).ty);
        }
        for (at, v) in branches {
            if v.ty != CTy::Never {
                let v = self.store(v, &ty);
                self.out[at].text = format!("{tmp} = {};", v.code);
            }
        }
        self.out[decl_at].text = format!("{} {tmp};", self.cpp_type(&ty));
        self.out.retain(|l| l.text != hole);
        Val::new(tmp, ty, true)
    }

    /// One branch of an `if` used as a value: its statements, then a placeholder for the
    /// assignment of its value.
    fn value_branch(&mut self, b: &Block, expected: Option<&CTy>, hole: &str) -> (usize, Val) {
        self.indent += 1;
        self.push_block_scope(b);
        self.stmts(b);
        let v = match &b.tail {
            Some(t) => self.expr(t, expected),
            None if Self::ends_in_return(b) => Val::new("", CTy::Never, true),
            None => self.error(
                b.span,
                "this branch has no value: end it with an expression without `;`",
            ),
        };
        let at = self.line(hole.to_string());
        self.pop_scope();
        self.indent -= 1;
        (at, v)
    }

    /// `T name; name.a = ...; name.b = ...;` (or `T name = base;` for `..base`): field order in
    /// the literal never matters.
    pub(super) fn struct_into(
        &mut self,
        name: &str,
        s: &str,
        fields: &[(String, Expr)],
        base: Option<&Expr>,
    ) {
        let sty = CTy::Struct(s.to_string());
        let c = self.cpp_type(&sty);
        match base {
            Some(b) => {
                let bv = self.expr(b, Some(&sty));
                self.line(format!("{c} {name} = {};", bv.code));
            }
            None => {
                self.line(format!("{c} {name};"));
            }
        }
        for (f, e) in fields {
            let ty = self.field_ty(&sty, f).expect("a struct has fields");
            if let Some(info) = self.ctx.structs.iter().find(|i| i.name == s) {
                if !info.fields.iter().any(|(n, _)| n == f) {
                    self.error(e.span, format!("struct `{s}` has no field `{f}`"));
                    continue;
                }
            }
            let v = self.expr(e, Some(&ty));
            if v.ty == CTy::Never {
                continue;
            }
            let v = self.store(v, &ty);
            self.line(format!("{name}.{} = {};", field_name(f), v.code));
        }
    }

    /// `(a, b)`: `rs_tuple2<A, B>{a, b}`.
    fn tuple(&mut self, items: &[Expr], expected: Option<&CTy>, span: Span) -> Val {
        if items.len() > MAX_TUPLE {
            return self.error(
                span,
                format!("tuples of more than {MAX_TUPLE} elements cannot be lowered to CUDA: use a struct"),
            );
        }
        let exp: Vec<Option<CTy>> = match expected.and_then(CTy::resolved) {
            Some(CTy::Tuple(ts)) if ts.len() == items.len() => {
                ts.iter().cloned().map(Some).collect()
            }
            _ => vec![None; items.len()],
        };
        let pairs: Vec<(&Expr, Option<CTy>)> = items.iter().zip(exp.clone()).collect();
        let vals = self.operands(&pairs);
        if vals.iter().any(|v| v.ty == CTy::Never) {
            return Val::error();
        }
        // Each component as the expected type says, else as itself.
        let vals: Vec<Val> = vals
            .into_iter()
            .zip(exp)
            .map(|(v, e)| match e {
                Some(t) if t.is_concrete() => Val {
                    ty: t.clone(),
                    ..self.store(v, &t)
                },
                _ => self.default_lit(v),
            })
            .collect();
        let ty = CTy::Tuple(vals.iter().map(|v| v.ty.clone()).collect());
        let codes: Vec<String> = vals.into_iter().map(|v| v.code).collect();
        Val::new(
            format!("{}{{{}}}", self.cpp_type(&ty), codes.join(", ")),
            ty,
            true,
        )
    }

    /// `[a, b, c]`: `rs_array<T, 3>{{a, b, c}}`.
    fn array(&mut self, items: &[Expr], expected: Option<&CTy>, span: Span) -> Val {
        let elem_exp = expected.and_then(|t| self.index_ty(t));
        let pairs: Vec<(&Expr, Option<CTy>)> =
            items.iter().map(|e| (e, elem_exp.clone())).collect();
        let vals = self.operands(&pairs);
        if vals.iter().any(|v| v.ty == CTy::Never) || items.is_empty() {
            if items.is_empty() {
                return self.error(span, "an empty array cannot be lowered to CUDA");
            }
            return Val::error();
        }
        let mut elem = elem_exp.unwrap_or(CTy::IntLit);
        for v in &vals {
            elem = self.unify(&elem, &v.ty);
        }
        if elem.is_lit() || elem == CTy::Index {
            elem = self.default_lit(vals[0].clone()).ty;
        }
        let codes: Vec<String> = vals
            .into_iter()
            .map(|v| self.store(v, &elem).code)
            .collect();
        let ty = match expected {
            Some(t @ CTy::Opaque { .. }) => t.clone(),
            _ => CTy::Array(Box::new(elem), codes.len() as u64),
        };
        Val::new(
            format!("{}{{{{{}}}}}", self.cpp_type(&ty), codes.join(", ")),
            ty,
            true,
        )
    }

    /// `[value; N]`: `rs_fill<rs_array<T, N>>(value)`.
    fn repeat(&mut self, value: &Expr, len: &Expr, expected: Option<&CTy>) -> Val {
        let Some(n) = self.const_eval(len).filter(|n| *n >= 0) else {
            self.not_constant(
                len,
                "an array length must be a constant (a literal or a `const`) in a lowered operator",
            );
            return Val::error();
        };
        let elem_exp = expected.and_then(|t| self.index_ty(t));
        let v = self.expr(value, elem_exp.as_ref());
        if v.ty == CTy::Never {
            return v;
        }
        let ty = match expected {
            Some(t @ CTy::Opaque { .. }) => t.clone(),
            _ => {
                if v.ty.is_lit() && elem_exp.is_none() {
                    return self.error(
                        value.span,
                        "cannot infer the element type of this array for CUDA: annotate it (`let a: [f32; 4] = [0.0; 4];`) or suffix the literal",
                    );
                }
                let elem = elem_exp.unwrap_or_else(|| v.ty.clone());
                CTy::Array(Box::new(elem), n as u64)
            }
        };
        let elem = self.index_ty(&ty).expect("an array");
        let v = self.store(v, &elem);
        Val::new(
            format!("rs_fill<{}>({})", self.cpp_type(&ty), v.code),
            ty,
            true,
        )
    }
}

/// What the other branches of an `if` are expected to be: the caller's expectation, else the
/// first branch's type where it is a real one.
fn branch_expectation(expected: Option<&CTy>, first: &Val) -> Option<CTy> {
    expected
        .cloned()
        .or_else(|| Some(first.ty.clone()).filter(CTy::is_concrete))
}

fn is_aggregate(t: &CTy) -> bool {
    matches!(
        t.resolved(),
        Some(CTy::Struct(_) | CTy::Array(..) | CTy::Tuple(_))
    ) || matches!(t, CTy::Struct(_) | CTy::Array(..) | CTy::Tuple(_))
}

/// An operand of `&&`/`||`: comparisons bind tighter, so they need no parentheses.
fn logic_operand(v: &Val) -> String {
    let c = &v.code;
    let is_cmp = !v.atomic
        && [" == ", " != ", " < ", " <= ", " > ", " >= "]
            .iter()
            .filter(|o| c.contains(*o))
            .count()
            == 1
        && !c.contains(" && ")
        && !c.contains(" || ")
        && !c.contains(" ? ");
    if is_cmp {
        c.clone()
    } else {
        v.operand()
    }
}

/// Whether lowering `e` emits statements (so it cannot sit inside a C++ `?:` or `&&`).
pub(super) fn needs_stmts(e: &Expr, lw: &Lowerer<'_>) -> bool {
    match &e.kind {
        ExprKind::Struct { .. }
        | ExprKind::Return(_)
        | ExprKind::Assign(..)
        | ExprKind::Match(..)
        | ExprKind::IfLet(..)
        | ExprKind::While(..)
        | ExprKind::Loop(..)
        | ExprKind::For(..)
        | ExprKind::Break
        | ExprKind::Continue => true,
        ExprKind::Block(b) => block_needs_stmts(b, lw),
        ExprKind::If(c, t, els) => {
            needs_stmts(c, lw)
                || block_needs_stmts(t, lw)
                || els.as_ref().is_none_or(|e| needs_stmts(e, lw))
        }
        ExprKind::Binary(_, l, r)
        | ExprKind::Repeat(l, r)
        | ExprKind::Alias {
            value: l, body: r, ..
        } => needs_stmts(l, lw) || needs_stmts(r, lw),
        // An index a loop runs over may need a `static_assert`.
        ExprKind::Index(b, i) => {
            needs_stmts(b, lw) || !matches!(i.kind, ExprKind::Lit(_)) || needs_stmts(i, lw)
        }
        ExprKind::Unary(_, x)
        | ExprKind::Cast(x, _)
        | ExprKind::Field(x, _)
        | ExprKind::TupleField(x, _) => needs_stmts(x, lw),
        ExprKind::Tuple(xs) | ExprKind::Array(xs) => xs.iter().any(|x| needs_stmts(x, lw)),
        ExprKind::MethodCall { recv, args, .. } | ExprKind::Builtin { recv, args, .. } => {
            needs_stmts(recv, lw) || args.iter().any(|a| needs_stmts(a, lw))
        }
        ExprKind::Call { args, .. } => args.iter().any(|a| needs_stmts(a, lw)),
        // A `const` is lowered where it is used.
        ExprKind::Var(name) => match lw.lookup(name) {
            Some(Binding::Const { item, .. }) => !super::call::simple_const(&item),
            _ => false,
        },
        ExprKind::AssocConst(..) => true,
        ExprKind::Lit(_) | ExprKind::Const(..) | ExprKind::Error => false,
    }
}

pub(super) fn block_needs_stmts(b: &Block, lw: &Lowerer<'_>) -> bool {
    !b.stmts.is_empty() || !b.items.is_empty() || b.tail.as_ref().is_none_or(|t| needs_stmts(t, lw))
}
