//! Calls and constants: built-in methods, helper functions and methods (lowered once each to
//! a `static __device__` function of the body's local `struct scan_fns`), primitive constants,
//! `const` items, and the constant evaluation that loop bounds, array lengths and index checks
//! need.

use super::{Binding, CTy, Helper, Lowerer, Val};
use crate::ir::{
    BinOp, Builder, Const, ConstItem, Expr, ExprKind, FnItem, PatKind, StructRef, UnOp,
};
use crate::methods::{self, ArgTy, Method, On, Ret};
use proc_macro2::Span;
use scan_core::PrimType;
use std::rc::Rc;

/// Whether a `const`'s value lowers to a plain expression (a literal, a path).
pub(super) fn simple_const(item: &ConstItem) -> bool {
    fn simple(e: &syn::Expr) -> bool {
        match e {
            syn::Expr::Lit(_) | syn::Expr::Path(_) => true,
            syn::Expr::Unary(u) => simple(&u.expr),
            syn::Expr::Paren(p) => simple(&p.expr),
            syn::Expr::Binary(b) => simple(&b.left) && simple(&b.right),
            syn::Expr::Cast(c) => simple(&c.expr),
            _ => false,
        }
    }
    simple(&item.init)
}

impl Lowerer<'_> {
    /// A built-in method or function on a primitive (`x.max(y)`, `f32::sqrt(x)`).
    pub(super) fn builtin(
        &mut self,
        method: &'static Method,
        recv: &Expr,
        args: &[Expr],
        ty: Option<PrimType>,
        expected: Option<&CTy>,
        span: Span,
    ) -> Val {
        if let On::HalfFrom(from) = method.on {
            return self.half_from(method, from, recv, ty, span);
        }
        let recv_expected = match (ty, method.ret) {
            (Some(p), _) => Some(CTy::Prim(p)),
            (None, Ret::Same) => expected.cloned(),
            _ => None,
        };
        let rv = self.expr(recv, recv_expected.as_ref());
        self.builtin_on(method, rv, args, span)
    }

    /// `f16::from_f32(x)`, `bf16::from_bits(b)`: the argument converted (rounded to nearest,
    /// ties to even) or reinterpreted.
    fn half_from(
        &mut self,
        method: &'static Method,
        from: PrimType,
        arg: &Expr,
        ty: Option<PrimType>,
        span: Span,
    ) -> Val {
        let Some(p) = ty.filter(|p| p.is_half()) else {
            return self.error(
                span,
                format!(
                    "`{}` builds an `f16` or a `bf16`: call it as `f16::{0}(x)` or `bf16::{0}(x)`",
                    method.name
                ),
            );
        };
        let from = CTy::Prim(from);
        let v = self.expr(arg, Some(&from));
        let v = self.settle(v, &from);
        if v.ty == CTy::Never {
            return v;
        }
        Val::new(
            format!("{}<{p}>({})", method.helper, v.code),
            CTy::Prim(p),
            true,
        )
    }

    fn builtin_on(
        &mut self,
        method: &'static Method,
        mut rv: Val,
        args: &[Expr],
        span: Span,
    ) -> Val {
        if let Some(CTy::Prim(p)) = rv.ty.resolved() {
            let p = *p;
            if !method.accepts(p) {
                for a in args {
                    self.expr(a, None);
                }
                let msg = match method.on {
                    On::HalfFrom(_) => format!(
                        "`{0}` is an associated function: call it as `{p}::{0}(x)`",
                        method.name
                    ),
                    _ if p.is_half() => format!(
                        "`{}` cannot be lowered on `{p}` (`half::{p}` has no such method, or it is not supported): the methods of `f16` and `bf16` that lower are {}; or convert with `.to_f32()`, compute in `f32`, and round back with `{p}::from_f32`",
                        method.name,
                        methods::half_list()
                    ),
                    _ => format!(
                        "`{}` lowers on `f16` and `bf16` (`half`) only, not on `{p}`",
                        method.name
                    ),
                };
                return self.error(span, msg);
            }
        }
        let mut avs = Vec::new();
        for (a, at) in args.iter().zip(method.args.iter()) {
            let exp = match at {
                ArgTy::Same => Some(rv.ty.clone()).filter(CTy::is_concrete),
                ArgTy::I32 => Some(CTy::Prim(PrimType::I32)),
                ArgTy::U32 => Some(CTy::Prim(PrimType::U32)),
            };
            let v = self.expr(a, exp.as_ref());
            avs.push((v, *at));
        }
        if rv.ty.is_lit() || rv.ty == CTy::Index {
            if let Some((v, _)) = avs
                .iter()
                .find(|(v, at)| *at == ArgTy::Same && v.ty.is_concrete())
            {
                let t = v.ty.clone();
                rv = self.coerce(rv, &t);
            }
            rv = self.default_lit(rv);
        }
        if rv.ty == CTy::Never {
            return rv;
        }
        let mut parts = vec![rv.code.clone()];
        for (v, at) in avs {
            let v = match at {
                ArgTy::Same => self.settle(v, &rv.ty),
                _ => self.default_lit(v),
            };
            parts.push(v.code);
        }
        let ty = match method.ret {
            Ret::Same => rv.ty.clone(),
            Ret::U32 => CTy::Prim(PrimType::U32),
            Ret::Bool => CTy::Bool,
            Ret::F32 => CTy::Prim(PrimType::F32),
            Ret::F64 => CTy::Prim(PrimType::F64),
            Ret::U16 => CTy::Prim(PrimType::U16),
        };
        Val::new(format!("{}({})", method.helper, parts.join(", ")), ty, true)
    }

    /// `recv.name(args)`: a helper method when `recv` is a struct, else a built-in.
    pub(super) fn method_call(
        &mut self,
        name: &str,
        name_span: Span,
        recv: &Expr,
        args: &[Expr],
        expected: Option<&CTy>,
        span: Span,
    ) -> Val {
        let builtin = methods::find(name);
        let recv_expected = match builtin {
            Some(m) if m.ret == Ret::Same => expected.cloned(),
            _ => None,
        };
        let rv = self.expr(recv, recv_expected.as_ref());
        if rv.ty == CTy::Never {
            for a in args {
                self.expr(a, None);
            }
            return rv;
        }
        if let Some(CTy::Struct(s)) = rv.ty.resolved().cloned() {
            let key = format!("{s}::{name}");
            return match self.lookup(&key) {
                Some(Binding::Fn { item, env }) if item.sig.receiver().is_some() => {
                    self.call_helper(&item, env, Some(rv), args, span)
                }
                Some(Binding::Fn { .. }) => self.error(
                    name_span,
                    format!("`{s}::{name}` takes no `self`: call it as `{s}::{name}(...)`"),
                ),
                _ => self.error(
                    name_span,
                    format!(
                        "no method `.{name}()` of `{s}` is visible to #[scan_op]: declare it in an `impl {s} {{ ... }}` inside the `#[scan_op] mod` that holds the operator"
                    ),
                ),
            };
        }
        let Some(method) = builtin else {
            for a in args {
                self.expr(a, None);
            }
            return self.error(
                name_span,
                format!(
                    "method `.{name}()` cannot be lowered to CUDA; supported methods: {}",
                    methods::list()
                ),
            );
        };
        if args.len() != method.args.len() {
            return self.error(
                name_span,
                format!(
                    "`{}` takes {} argument(s) besides the receiver, found {}",
                    method.name,
                    method.args.len(),
                    args.len()
                ),
            );
        }
        self.builtin_on(method, rv, args, name_span)
    }

    /// `helper(args)`, `Self::helper(args)`, `Type::helper(args)`.
    pub(super) fn call(
        &mut self,
        owner: Option<&StructRef>,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Val {
        let key = match owner {
            Some(o) => match self.struct_of(o, span) {
                Some(o) => format!("{o}::{name}"),
                None => return Val::error(),
            },
            None => name.to_string(),
        };
        match self.lookup(&key) {
            Some(Binding::Fn { item, env }) => self.call_helper(&item, env, None, args, span),
            _ if owner.is_none() && name == "Some" => self.error(
                span,
                "`Option` cannot be lowered to CUDA (its layout is not defined): use a struct with a `bool` flag (`valid: bool`) beside the value",
            ),
            _ => self.error(
                span,
                format!(
                    "`{key}` is not visible to #[scan_op]: a helper function must be declared inside the operator's bodies or in the `#[scan_op] mod` that holds it"
                ),
            ),
        }
    }

    /// A call of a helper: its arguments converted to its parameter types.
    fn call_helper(
        &mut self,
        item: &Rc<FnItem>,
        env: usize,
        recv: Option<Val>,
        args: &[Expr],
        span: Span,
    ) -> Val {
        if self.dry {
            return self.dry_call(item, env);
        }
        let Some(id) = self.helper(item, env, span) else {
            for a in args {
                self.expr(a, None);
            }
            return Val::error();
        };
        let params = self.ctx.helpers[id].params.clone();
        let ret = self.ctx.helpers[id].ret.clone();
        let given = args.len() + usize::from(recv.is_some());
        if given != params.len() {
            return self.error(
                span,
                format!(
                    "`{}` takes {} argument(s), found {given}",
                    item.name,
                    params.len()
                ),
            );
        }
        let skip = usize::from(recv.is_some());
        let pairs: Vec<(&Expr, Option<CTy>)> = args
            .iter()
            .zip(params.iter().skip(skip))
            .map(|(a, p)| (a, Some(p.clone())))
            .collect();
        let vals = self.operands(&pairs);
        let mut codes = Vec::new();
        if let Some(r) = recv {
            codes.push(r.code);
        }
        for (v, p) in vals.into_iter().zip(params.iter().skip(skip)) {
            if v.ty == CTy::Never {
                return Val::error();
            }
            codes.push(self.store(v, p).code);
        }
        self.calls.insert(id);
        let c_name = self.ctx.helpers[id].c_name.clone();
        Val::new(
            format!("scan_fns::{c_name}({})", codes.join(", ")),
            ret,
            true,
        )
    }

    /// A helper call while only its type is wanted: nothing is lowered (lowering records the
    /// helper and reports its errors, which must happen for real).
    fn dry_call(&mut self, item: &Rc<FnItem>, env: usize) -> Val {
        if let Some(h) = self
            .ctx
            .helpers
            .iter()
            .find(|h| Rc::ptr_eq(&h.item, item) && h.env == env && h.text.is_some())
        {
            return Val::new("0", h.ret.clone(), true);
        }
        let mut scratch = crate::error::Errors::new();
        let sig = Builder {
            errors: &mut scratch,
            elem_name: None,
        }
        .fn_sig(item);
        let before = self.ctx.errors.len();
        let owner = std::mem::replace(&mut self.self_ty, item.owner.clone());
        let ret = sig
            .ret
            .as_ref()
            .and_then(|t| self.ty_cty(t, item.sig.ident.span()));
        self.self_ty = owner;
        self.ctx.errors.truncate(before);
        Val::new("0", ret.unwrap_or(CTy::Never), true)
    }

    /// The helper for `item`, lowered on first use. `None` (reported) for recursion or a
    /// signature that cannot be lowered.
    fn helper(&mut self, item: &Rc<FnItem>, env: usize, span: Span) -> Option<usize> {
        if let Some(id) = self
            .ctx
            .helpers
            .iter()
            .position(|h| Rc::ptr_eq(&h.item, item) && h.env == env)
        {
            if self.ctx.in_progress.contains(&id) {
                self.error(
                    span,
                    format!(
                        "`{}` calls itself (directly or through other helpers): recursion cannot be lowered to CUDA; write it as a loop",
                        item.name
                    ),
                );
                return None;
            }
            return self.ctx.helpers[id].text.as_ref().map(|_| id);
        }
        let id = self.ctx.helpers.len();
        let base = crate::names::field_name(&match &item.owner {
            Some(o) => format!("{o}_{}", item.name),
            None => item.name.clone(),
        });
        let mut c_name = base.clone();
        let mut k = 2;
        while self.ctx.helpers.iter().any(|h| h.c_name == c_name) {
            c_name = format!("{base}_{k}");
            k += 1;
        }
        self.ctx.helpers.push(Helper {
            item: item.clone(),
            env,
            c_name: c_name.clone(),
            params: Vec::new(),
            ret: CTy::Never,
            text: None,
            calls: Default::default(),
        });
        self.ctx.in_progress.push(id);
        let lowered = lower_helper(self.ctx, item, env, &c_name);
        self.ctx.in_progress.pop();
        let (params, ret, text, calls) = lowered?;
        let h = &mut self.ctx.helpers[id];
        h.params = params;
        h.ret = ret;
        h.text = Some(text);
        h.calls = calls;
        Some(id)
    }

    /// `i32::MAX`, `f32::EPSILON`, `u8::BITS`, `std::f64::consts::PI`.
    pub(super) fn prim_const(&mut self, p: PrimType, c: Const) -> Val {
        let f = match c {
            Const::Max => "rs_max_value",
            Const::Min => "rs_min_value",
            Const::Infinity => "rs_infinity",
            Const::NegInfinity => "rs_neg_infinity",
            Const::Nan => "rs_nan",
            Const::Epsilon => "rs_epsilon",
            Const::MinPositive => "rs_min_positive",
            Const::U32(v) => return Val::new(format!("(u32){v}"), CTy::Prim(PrimType::U32), true),
            Const::I32(v) => {
                return Val::new(
                    format!(
                        "(i32){}",
                        if v < 0 {
                            format!("({v})")
                        } else {
                            v.to_string()
                        }
                    ),
                    CTy::Prim(PrimType::I32),
                    true,
                )
            }
            Const::HalfBits(b) => {
                return Val::new(
                    format!("rs_from_bits<{p}>((u16)0x{b:04x}u)"),
                    CTy::Prim(p),
                    true,
                )
            }
            // `{:e}` is the shortest spelling that reads back as the same value.
            Const::Float(v) => {
                let code = if p == PrimType::F32 {
                    format!("{:e}f", v as f32)
                } else {
                    format!("{v:e}")
                };
                return Val::new(code, CTy::Prim(p), true);
            }
        };
        Val::new(format!("{f}<{p}>()"), CTy::Prim(p), true)
    }

    /// The `const` bound to `key`, if any.
    pub(super) fn const_named(&self, key: &str) -> Option<(Rc<ConstItem>, usize)> {
        match self.lookup(key) {
            Some(Binding::Const { item, env }) => Some((item, env)),
            _ => None,
        }
    }

    /// The IR of a `const` (converted once).
    fn const_ir(&mut self, item: &Rc<ConstItem>) -> (Option<crate::ir::Ty>, Expr) {
        let key = Rc::as_ptr(item);
        if let Some(ir) = self.ctx.const_ir.get(&key) {
            return ir.clone();
        }
        // Converted for real once (its errors reported once); a dry run must not be that once.
        let mut scratch = crate::error::Errors::new();
        let errors = if self.dry {
            &mut scratch
        } else {
            &mut self.ctx.errors
        };
        let mut b = Builder {
            errors,
            elem_name: None,
        };
        let ty = b.ty(&item.ty, "constants");
        let init = b.expr(&item.init);
        if !self.dry {
            self.ctx.const_ir.insert(key, (ty.clone(), init.clone()));
        }
        (ty, init)
    }

    /// Runs `f` in the scope a `const` was declared in (it sees items, not the locals where it
    /// is used), guarding against a `const` defined in terms of itself.
    fn in_const_scope<R>(
        &mut self,
        item: &Rc<ConstItem>,
        env: usize,
        span: Span,
        f: impl FnOnce(&mut Self) -> R,
    ) -> Option<R> {
        let key = Rc::as_ptr(item);
        if self.ctx.consts_in_progress.contains(&key) {
            self.error(
                span,
                format!("`{}` is defined in terms of itself", item.name),
            );
            return None;
        }
        self.ctx.consts_in_progress.push(key);
        let scopes = std::mem::replace(&mut self.scopes, vec![self.ctx.envs[env].clone()]);
        let owner = item.owner.clone().or_else(|| self.self_ty.clone());
        let self_ty = std::mem::replace(&mut self.self_ty, owner);
        let r = f(self);
        self.scopes = scopes;
        self.self_ty = self_ty;
        self.ctx.consts_in_progress.pop();
        Some(r)
    }

    /// A use of a `const` item: its value, lowered here, with its declared type.
    pub(super) fn item_const(&mut self, key: &str, span: Span, _expected: Option<&CTy>) -> Val {
        let Some((item, env)) = self.const_named(key) else {
            return self.error(
                span,
                format!(
                    "`{key}` is not visible to #[scan_op]: a lowered operator sees its parameters, its `let`s, and the `const`s and `fn`s declared inside its bodies or in the `#[scan_op] mod` that holds it"
                ),
            );
        };
        let (ty, init) = self.const_ir(&item);
        let r = self.in_const_scope(&item, env, span, |lw| {
            let ty = ty.and_then(|t| lw.ty_cty(&t, item.span))?;
            let v = lw.expr(&init, Some(&ty));
            if v.ty == CTy::Never {
                return None;
            }
            Some(lw.settle(v, &ty))
        });
        r.flatten().unwrap_or_else(Val::error)
    }

    /// Reports a constant that is not one: a name the operator cannot see gets that said.
    pub(super) fn not_constant(&mut self, e: &Expr, what: &str) {
        if let ExprKind::Var(name) = &e.kind {
            if self.lookup(name).is_none() {
                self.error(
                    e.span,
                    format!(
                        "`{name}` is not visible to #[scan_op]: a lowered operator sees its parameters, its `let`s, and the `const`s and `fn`s declared inside its bodies or in the `#[scan_op] mod` that holds it"
                    ),
                );
                return;
            }
        }
        self.error(e.span, what.to_string());
    }

    /// The value of an integer constant expression (literals, `const`s, primitive constants,
    /// arithmetic), for loop bounds, array lengths and index checks.
    pub(super) fn const_eval(&mut self, e: &Expr) -> Option<i128> {
        match &e.kind {
            ExprKind::Lit(crate::ir::Lit::Int { value, .. }) => i128::try_from(*value).ok(),
            ExprKind::Unary(UnOp::Neg, x) => self.const_eval(x).map(|v| -v),
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.const_eval(a)?, self.const_eval(b)?);
                match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    BinOp::Div => a.checked_div(b),
                    BinOp::Rem => a.checked_rem(b),
                    BinOp::Shl => u32::try_from(b).ok().and_then(|b| a.checked_shl(b)),
                    BinOp::Shr => u32::try_from(b).ok().and_then(|b| a.checked_shr(b)),
                    BinOp::BitAnd => Some(a & b),
                    BinOp::BitOr => Some(a | b),
                    BinOp::BitXor => Some(a ^ b),
                    _ => None,
                }
            }
            ExprKind::Cast(x, p) if p.is_int() => {
                let v = self.const_eval(x)?;
                let bits = p.size() as u32 * 8;
                let m = (v as u128) & (u128::MAX >> (128 - bits));
                Some(if p.is_signed_int() && m >> (bits - 1) == 1 {
                    m as i128 - (1i128 << bits)
                } else {
                    m as i128
                })
            }
            ExprKind::Block(b) if b.stmts.is_empty() && b.items.is_empty() => {
                self.const_eval(b.tail.as_deref()?)
            }
            ExprKind::Var(name) => match self.lookup(name)? {
                Binding::Alias(x) => self.const_eval(&x),
                Binding::Const { .. } => self.const_item_eval(name, e.span),
                _ => None,
            },
            ExprKind::AssocConst(owner, name) => {
                let owner = match owner {
                    StructRef::SelfTy => self.self_ty.clone()?,
                    StructRef::Elem => self.ctx.elem_struct.clone()?,
                    StructRef::Named(n) => n.clone(),
                };
                self.const_item_eval(&format!("{owner}::{name}"), e.span)
            }
            ExprKind::Const(p, c) if p.is_int() => {
                let bits = p.size() as u32 * 8;
                match c {
                    Const::Max if p.is_signed_int() => Some((1i128 << (bits - 1)) - 1),
                    Const::Max => Some((1i128 << bits) - 1),
                    Const::Min if p.is_signed_int() => Some(-(1i128 << (bits - 1))),
                    Const::Min => Some(0),
                    Const::U32(v) => Some(*v as i128),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn const_item_eval(&mut self, key: &str, span: Span) -> Option<i128> {
        let (item, env) = self.const_named(key)?;
        let (_, init) = self.const_ir(&item);
        self.in_const_scope(&item, env, span, |lw| lw.const_eval(&init))
            .flatten()
    }

    /// The values an index expression can take: a constant, a `for` variable's range, and
    /// those combined with constants (`i + 1`, `2 * i`, `i % 4`, `i & 3`).
    pub(super) fn index_range(&mut self, e: &Expr) -> Option<(i128, i128)> {
        if let Some(v) = self.const_eval(e) {
            return Some((v, v));
        }
        match &e.kind {
            ExprKind::Var(name) => match self.lookup(name)? {
                Binding::Index { lo, hi, .. } => Some((lo, hi)),
                _ => None,
            },
            ExprKind::Cast(x, _) => self.index_range(x),
            // `x & MASK` is in `0..=MASK` whatever `x` is (two's complement).
            ExprKind::Binary(BinOp::BitAnd, a, b) if self.const_eval(b).is_some_and(|m| m >= 0) => {
                let m = self.const_eval(b).expect("checked");
                Some((
                    0,
                    self.index_range(a)
                        .map_or(m, |(lo, hi)| if lo >= 0 { hi.min(m) } else { m }),
                ))
            }
            ExprKind::Binary(op, a, b) => {
                let ra = self.index_range(a)?;
                let rb = self.index_range(b)?;
                let corners = |f: &dyn Fn(i128, i128) -> Option<i128>| -> Option<(i128, i128)> {
                    let vs = [
                        f(ra.0, rb.0)?,
                        f(ra.0, rb.1)?,
                        f(ra.1, rb.0)?,
                        f(ra.1, rb.1)?,
                    ];
                    Some((*vs.iter().min()?, *vs.iter().max()?))
                };
                match op {
                    BinOp::Add => corners(&|x, y| x.checked_add(y)),
                    BinOp::Sub => corners(&|x, y| x.checked_sub(y)),
                    BinOp::Mul => corners(&|x, y| x.checked_mul(y)),
                    BinOp::Div if rb.0 > 0 && ra.0 >= 0 => corners(&|x, y| x.checked_div(y)),
                    BinOp::Rem if rb.0 == rb.1 && rb.0 > 0 && ra.0 >= 0 => {
                        Some((0, ra.1.min(rb.0 - 1)))
                    }
                    BinOp::BitAnd if rb.0 == rb.1 && rb.0 >= 0 && ra.0 >= 0 => {
                        Some((0, ra.1.min(rb.0)))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// Lowers a helper's signature and body; `None` when the signature cannot be lowered
/// (reported).
#[allow(clippy::type_complexity)]
fn lower_helper(
    ctx: &mut super::Ctx,
    item: &Rc<FnItem>,
    env: usize,
    c_name: &str,
) -> Option<(Vec<CTy>, CTy, String, std::collections::BTreeSet<usize>)> {
    let before = ctx.errors.len();
    let (sig, body) = {
        let mut b = Builder {
            errors: &mut ctx.errors,
            elem_name: None,
        };
        let sig = b.fn_sig(item);
        let body = b.block(&item.block);
        (sig, body)
    };
    if sig.ret.is_none() || sig.params.iter().any(|(_, t)| t.is_none()) {
        return None;
    }
    let sig_errors = ctx.errors.len() > before;
    if sig_errors && !item.sig.generics.params.is_empty() {
        // Its body speaks of types that do not exist: every use would be a follow-up error.
        return None;
    }
    let span = item.sig.ident.span();
    let mut lw = Lowerer::with_env(ctx, env, item.owner.clone(), CTy::Never);
    let ret = lw.ty_cty(sig.ret.as_ref()?, span)?;
    lw.ret = ret.clone();
    let mut params = Vec::new();
    let mut decls = Vec::new();
    let mut destructure = Vec::new();
    for (pat, ty) in &sig.params {
        let ty = lw.ty_cty(ty.as_ref()?, pat.span)?;
        let cpp = match &pat.kind {
            PatKind::Bind {
                name, sub: None, ..
            } => {
                let cpp = lw.declare_name(if name == "self" { "self_" } else { name });
                lw.bind(
                    name,
                    Binding::Var {
                        cpp: cpp.clone(),
                        ty: ty.clone(),
                    },
                );
                cpp
            }
            _ => {
                let cpp = lw.fresh("arg");
                destructure.push((pat.clone(), cpp.clone(), ty.clone()));
                cpp
            }
        };
        decls.push(format!("{} {cpp}", lw.cpp_type(&ty)));
        params.push(ty);
    }
    for (pat, cpp, ty) in destructure {
        lw.bind_pattern(&pat, Val::new(cpp, ty.clone(), true), ty);
    }
    lw.tail_block(&body);
    let calls = lw.calls.clone();
    let body_text = lw.text();
    let mut text = format!(
        "// fn {}{}\nstatic __device__ __forceinline__ {} {c_name}({}) {{\n",
        item.owner
            .as_ref()
            .map(|o| format!("{o}::"))
            .unwrap_or_default(),
        item.name,
        lw.cpp_type(&ret),
        decls.join(", ")
    );
    for l in body_text.lines() {
        text.push_str("    ");
        text.push_str(l);
        text.push('\n');
    }
    text.push('}');
    Some((params, ret, text, calls))
}
