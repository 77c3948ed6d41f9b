//! Lowering the IR to C++ text.
//!
//! Rust's blocks and `if`s are expressions; C++'s are statements. An expression lowers to a
//! C++ expression plus, where needed, statements emitted before it (temporaries declared with
//! their type, assigned in each branch). Everything in the supported subset is pure and total,
//! so hoisting those statements changes nothing but the text.
//!
//! Types: rustc has already type-checked the Rust, so this only tracks what C++ must be told:
//! which primitive a value is when the Rust says (parameters of a primitive element, casts,
//! annotations, suffixes), `decltype(Elem::field)` for struct fields, and untyped literals,
//! which take the type of the operand beside them, the annotation, the field or the return.

use crate::error::Errors;
use crate::ir::{BinOp, Block, Const, Expr, ExprKind, LetTy, Lit, Stmt, UnOp};
use crate::methods::{ArgTy, Ret};
use proc_macro2::Span;
use scan_core::PrimType;
use std::collections::HashSet;

/// The element type as lowering needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ElemRef {
    Prim(PrimType),
    /// A struct, by the name the generated C declares it with.
    Struct(String),
}

impl ElemRef {
    pub fn c_name(&self) -> &str {
        match self {
            ElemRef::Prim(p) => p.name(),
            ElemRef::Struct(s) => s,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum CTy {
    Prim(PrimType),
    Bool,
    /// The element struct.
    Struct,
    /// A field of the element struct: `decltype(Elem::field)`.
    Field(String),
    IntLit,
    FloatLit,
    Never,
}

impl CTy {
    fn is_lit(&self) -> bool {
        matches!(self, CTy::IntLit | CTy::FloatLit)
    }
    fn is_concrete(&self) -> bool {
        matches!(self, CTy::Prim(_) | CTy::Bool | CTy::Struct | CTy::Field(_))
    }
}

#[derive(Clone, Debug)]
struct LitVal {
    neg: bool,
    kind: LitKind,
    /// The literal as written (with its `-`), for range errors.
    span: Span,
}

#[derive(Clone, Debug)]
enum LitKind {
    Int(u128),
    Float(String),
}

#[derive(Clone, Debug)]
struct Val {
    code: String,
    ty: CTy,
    /// Needs no parentheses as an operand.
    atomic: bool,
    lit: Option<LitVal>,
}

impl Val {
    fn new(code: impl Into<String>, ty: CTy, atomic: bool) -> Val {
        Val {
            code: code.into(),
            ty,
            atomic,
            lit: None,
        }
    }
    fn error() -> Val {
        Val::new("0", CTy::Never, true)
    }
    fn operand(&self) -> String {
        if self.atomic {
            self.code.clone()
        } else {
            format!("({})", self.code)
        }
    }
}

#[derive(Clone, Debug)]
enum Binding {
    Var {
        cpp: String,
        ty: CTy,
    },
    /// `let x = 0.5;`: a literal whose type each use decides.
    Alias(Expr),
}

struct Line {
    indent: usize,
    text: String,
}

pub(crate) struct Lowerer<'a> {
    elem: &'a ElemRef,
    out: Vec<Line>,
    indent: usize,
    scopes: Vec<Vec<(String, Binding)>>,
    used: HashSet<String>,
    /// Every name declared so far, in order.
    declared: Vec<String>,
    errors: &'a mut Errors,
}

fn int_text(value: u128) -> String {
    if value <= i32::MAX as u128 {
        value.to_string()
    } else if value <= i64::MAX as u128 {
        format!("{value}ll")
    } else {
        format!("{value}ull")
    }
}

/// `1.5`, `1e10`, `3` -> a C float spelling without suffix (`3.0`).
fn float_digits(d: &str) -> String {
    if d.contains(['.', 'e', 'E']) {
        if d.ends_with('.') {
            format!("{d}0")
        } else {
            d.to_string()
        }
    } else {
        format!("{d}.0")
    }
}

fn exact_in_f32(d: &str) -> bool {
    match d.parse::<f64>() {
        Ok(v) => (v as f32) as f64 == v,
        Err(_) => false,
    }
}

impl<'a> Lowerer<'a> {
    pub fn new(elem: &'a ElemRef, errors: &'a mut Errors) -> Lowerer<'a> {
        let mut used = HashSet::new();
        used.insert(elem.c_name().to_string());
        Lowerer {
            elem,
            out: Vec::new(),
            indent: 0,
            scopes: vec![Vec::new()],
            used,
            declared: Vec::new(),
            errors,
        }
    }

    fn elem_cty(&self) -> CTy {
        match self.elem {
            ElemRef::Prim(p) => CTy::Prim(*p),
            ElemRef::Struct(_) => CTy::Struct,
        }
    }

    fn elem_name(&self) -> &str {
        self.elem.c_name()
    }

    fn error(&mut self, span: Span, msg: impl Into<String>) -> Val {
        self.errors.push(span, msg);
        Val::error()
    }

    fn line(&mut self, text: impl Into<String>) -> usize {
        self.out.push(Line {
            indent: self.indent,
            text: text.into(),
        });
        self.out.len() - 1
    }

    /// A C++ name for a Rust local: the same name unless it is a C++ keyword, a helper's
    /// prefix, or already used in this function (C++ has no shadowing in one scope).
    fn declare_name(&mut self, rust: &str) -> String {
        let rust = crate::names::unraw(rust);
        let mut base = rust.to_string();
        if crate::names::is_reserved(rust) {
            base.push('_');
        }
        let mut name = base.clone();
        let mut k = 1;
        while self.used.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(name.clone());
        self.declared.push(name.clone());
        name
    }

    fn fresh(&mut self, prefix: &str) -> String {
        let mut k = 0;
        loop {
            let name = format!("{prefix}{k}");
            if !self.used.contains(&name) {
                self.used.insert(name.clone());
                self.declared.push(name.clone());
                return name;
            }
            k += 1;
        }
    }

    fn bind(&mut self, rust: &str, b: Binding) {
        self.scopes
            .last_mut()
            .expect("scope")
            .push((rust.to_string(), b));
    }

    fn lookup(&self, rust: &str) -> Option<Binding> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == rust)
            .map(|(_, b)| b.clone())
    }

    /// Declares a parameter of the element type; returns its C++ name.
    pub fn param(&mut self, rust: Option<&str>, fallback: &str) -> String {
        let cpp = self.declare_name(rust.unwrap_or(fallback));
        if let Some(r) = rust {
            let ty = self.elem_cty();
            self.bind(
                r,
                Binding::Var {
                    cpp: cpp.clone(),
                    ty,
                },
            );
        }
        cpp
    }

    /// Lowers a function body; returns the C++ statements.
    pub fn body(mut self, block: &Block) -> String {
        self.tail_block(block);
        self.out
            .iter()
            .map(|l| format!("{}{}", "    ".repeat(l.indent), l.text))
            .collect::<Vec<_>>()
            .join("\n")
    }

    // ---- types and literals ------------------------------------------------------------------

    fn cpp_type(&self, ty: &CTy) -> String {
        match ty {
            CTy::Prim(p) => p.name().to_string(),
            CTy::Bool => "bool".into(),
            CTy::Struct => self.elem_name().to_string(),
            CTy::Field(f) => format!("decltype({}::{f})", self.elem_name()),
            CTy::IntLit => "i32".into(),
            CTy::FloatLit => "f64".into(),
            CTy::Never => "void".into(),
        }
    }

    fn lit_code(&mut self, lit: &LitVal, ty: &CTy) -> (String, bool) {
        let sign = if lit.neg { "-" } else { "" };
        match (&lit.kind, ty) {
            (LitKind::Int(v), CTy::Prim(p)) if p.is_int() => {
                let bits = p.size() as u32 * 8;
                if lit.neg && p.is_signed_int() && *v == 1u128 << (bits - 1) {
                    return (format!("rs_min_value<{p}>()"), true);
                }
                if *p == PrimType::I32 && *v <= i32::MAX as u128 {
                    return (format!("{sign}{v}"), !lit.neg);
                }
                (format!("({p}){sign}{}", int_text(*v)), true)
            }
            (LitKind::Int(v), CTy::Field(_)) => (
                format!("({}){sign}{}", self.cpp_type(ty), int_text(*v)),
                true,
            ),
            (LitKind::Float(d), CTy::Prim(PrimType::F32)) => {
                (format!("{sign}{}f", float_digits(d)), !lit.neg)
            }
            (LitKind::Float(d), CTy::Prim(PrimType::F64)) => {
                (format!("{sign}{}", float_digits(d)), !lit.neg)
            }
            (LitKind::Float(d), CTy::Field(_)) => {
                let d = float_digits(d);
                if exact_in_f32(&d) {
                    // The f32 value widens exactly if the field is an f64.
                    (format!("({}){sign}{d}f", self.cpp_type(ty)), true)
                } else {
                    (
                        format!("rs_float_lit<{}>({sign}{d}f, {sign}{d})", self.cpp_type(ty)),
                        true,
                    )
                }
            }
            // Defaults (rustc rejects the remaining combinations).
            (LitKind::Int(v), _) => {
                if *v <= i32::MAX as u128 {
                    (format!("{sign}{v}"), !lit.neg)
                } else {
                    (format!("{sign}{}", int_text(*v)), !lit.neg)
                }
            }
            (LitKind::Float(d), _) => (format!("{sign}{}", float_digits(d)), !lit.neg),
        }
    }

    /// Gives an untyped literal the type `ty`.
    fn coerce(&mut self, v: Val, ty: &CTy) -> Val {
        match (&v.lit, v.ty.is_lit(), ty.is_concrete()) {
            (Some(lit), true, true) => {
                let lit = lit.clone();
                self.check_fits(&lit, ty);
                let (code, atomic) = self.lit_code(&lit, ty);
                Val {
                    code,
                    ty: ty.clone(),
                    atomic,
                    lit: v.lit.clone(),
                }
            }
            _ => v,
        }
    }

    /// `coerce`, then Rust's defaults if `ty` left the literal untyped.
    fn settle(&mut self, v: Val, ty: &CTy) -> Val {
        let v = self.coerce(v, ty);
        self.default_lit(v)
    }

    /// Rust's defaults for a literal nothing constrains: i32, f64.
    fn default_lit(&mut self, v: Val) -> Val {
        match v.ty {
            CTy::IntLit => self.coerce(v, &CTy::Prim(PrimType::I32)),
            CTy::FloatLit => self.coerce(v, &CTy::Prim(PrimType::F64)),
            _ => v,
        }
    }

    /// A value stored into a place of type `ty` (let, assignment, field, return): integer
    /// literals in `int` range convert implicitly and exactly, so they stay bare.
    fn store(&mut self, v: Val, ty: &CTy) -> Val {
        if let Some(LitVal {
            neg,
            kind: LitKind::Int(n),
            ..
        }) = &v.lit
        {
            let float = matches!(ty, CTy::Prim(PrimType::F32 | PrimType::F64))
                || matches!(v.ty, CTy::Prim(PrimType::F32 | PrimType::F64));
            if *n <= i32::MAX as u128 && !float {
                return Val::new(
                    format!("{}{n}", if *neg { "-" } else { "" }),
                    ty.clone(),
                    !neg,
                );
            }
        }
        if let (
            Some(LitVal {
                neg,
                kind: LitKind::Float(d),
                ..
            }),
            CTy::Field(_),
        ) = (&v.lit, ty)
        {
            let d = float_digits(d);
            if exact_in_f32(&d) {
                // Converts exactly on assignment, whichever float the field is.
                return Val::new(
                    format!("{}{d}f", if *neg { "-" } else { "" }),
                    ty.clone(),
                    !neg,
                );
            }
        }
        let v = self.coerce(v, ty);
        self.default_lit(v)
    }

    /// rustc rejects a literal out of its type's range (`300` as an `i8`, `1e400` as an `f32`,
    /// `-1` as a `u32`); C++ would wrap or round it to infinity without a word.
    fn check_fits(&mut self, lit: &LitVal, ty: &CTy) {
        let CTy::Prim(p) = ty else { return };
        let shown = match &lit.kind {
            LitKind::Int(v) => format!("{}{v}", if lit.neg { "-" } else { "" }),
            LitKind::Float(d) => format!("{}{d}", if lit.neg { "-" } else { "" }),
        };
        let message = match (&lit.kind, p.is_float()) {
            (LitKind::Int(v), false) => {
                let bits = p.size() as u32 * 8;
                let (min, max): (i128, i128) = if p.is_signed_int() {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                } else {
                    (0, (1i128 << bits) - 1)
                };
                let value = if lit.neg { -(*v as i128) } else { *v as i128 };
                if !p.is_signed_int() && lit.neg {
                    format!(
                        "cannot negate `{v}` of type `{p}`: unsigned literals cannot be negative"
                    )
                } else if value < min || value > max {
                    format!(
                        "literal out of range for `{p}`: `{shown}` does not fit into `{p}`, whose range is `{min}..={max}`"
                    )
                } else {
                    return;
                }
            }
            (LitKind::Float(d), true) => {
                let infinite = if *p == PrimType::F32 {
                    d.parse::<f32>().map_or(true, f32::is_infinite)
                } else {
                    d.parse::<f64>().map_or(true, f64::is_infinite)
                };
                if !infinite {
                    return;
                }
                format!(
                    "literal out of range for `{p}`: `{shown}` is beyond `{p}::MAX` and would become infinity (write `{p}::INFINITY` if that is meant)"
                )
            }
            _ => return,
        };
        self.errors.push(lit.span, message);
    }

    fn unify(&self, a: &CTy, b: &CTy) -> CTy {
        match (a, b) {
            (CTy::Never, x) | (x, CTy::Never) => x.clone(),
            (x, y) if x.is_lit() && y.is_concrete() => y.clone(),
            (x, y) if y.is_lit() && x.is_concrete() => x.clone(),
            (CTy::Field(_), CTy::Prim(p)) => CTy::Prim(*p),
            (x, _) => x.clone(),
        }
    }

    // ---- statements --------------------------------------------------------------------------

    fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn ends_in_return(b: &Block) -> bool {
        b.tail.is_none()
            && matches!(
                b.stmts.last(),
                Some(Stmt::Expr(Expr {
                    kind: ExprKind::Return(_),
                    ..
                }))
            )
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let {
                name,
                mutable,
                ty,
                init,
                span,
            } => self.let_stmt(name.as_deref(), *mutable, ty.as_ref(), init, *span),
            Stmt::Expr(e) => self.stmt_expr(e),
        }
    }

    fn let_stmt(
        &mut self,
        name: Option<&str>,
        mutable: bool,
        ty: Option<&LetTy>,
        init: &Expr,
        span: Span,
    ) {
        let ann = ty.map(|t| match t {
            LetTy::Prim(p) => CTy::Prim(*p),
            LetTy::Elem => self.elem_cty(),
        });
        let Some(name) = name else {
            // `let _ = e;`: pure, nothing to emit, but still check it.
            let mark = self.out.len();
            self.expr(init, ann.as_ref());
            self.out.truncate(mark);
            return;
        };
        if ann.is_none() && !mutable && Self::is_literal_expr(init) {
            self.bind(name, Binding::Alias(init.clone()));
            return;
        }
        if let (ExprKind::Struct { fields, base, .. }, ElemRef::Struct(_)) = (&init.kind, self.elem)
        {
            let cpp = self.declare_name(name);
            self.struct_into(&cpp, fields, base.as_deref());
            self.bind(
                name,
                Binding::Var {
                    cpp,
                    ty: CTy::Struct,
                },
            );
            return;
        }
        let v = self.expr(init, ann.as_ref());
        let ty = match ann {
            Some(t) => t,
            None if v.ty.is_lit() => {
                let example = if v.ty == CTy::IntLit { "i64" } else { "f32" };
                self.errors.push(
                    span,
                    format!(
                        "cannot infer the type of `{name}` for CUDA: annotate it (`let mut {name}: {example} = ...;`) or suffix the literal"
                    ),
                );
                CTy::Never
            }
            None => v.ty.clone(),
        };
        if ty == CTy::Never {
            return;
        }
        let v = self.store(v, &ty);
        let cpp = self.declare_name(name);
        let decl = match &ty {
            CTy::Field(_) => "auto".to_string(),
            t => self.cpp_type(t),
        };
        self.line(format!("{decl} {cpp} = {};", v.code));
        self.bind(name, Binding::Var { cpp, ty });
    }

    fn is_literal_expr(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Lit(Lit::Int { suffix: None, .. } | Lit::Float { suffix: None, .. }) => true,
            ExprKind::Unary(UnOp::Neg, inner) => Self::is_literal_expr(inner),
            _ => false,
        }
    }

    /// An expression whose value is dropped: `if` with statements, assignments, `return`.
    fn stmt_expr(&mut self, e: &Expr) {
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
            ExprKind::Block(b) => {
                self.push_scope();
                self.stmts(&b.stmts);
                if let Some(t) = &b.tail {
                    self.stmt_expr(t);
                }
                self.pop_scope();
            }
            ExprKind::Assign(target, op, value) => self.assign(target, *op, value),
            ExprKind::Return(v) => self.ret(v),
            _ => {
                // A value nobody uses: pure, so only check it.
                let mark = self.out.len();
                self.expr(e, None);
                self.out.truncate(mark);
            }
        }
    }

    fn stmt_branch(&mut self, b: &Block) {
        self.indent += 1;
        self.push_scope();
        self.stmts(&b.stmts);
        if let Some(t) = &b.tail {
            self.stmt_expr(t);
        }
        self.pop_scope();
        self.indent -= 1;
    }

    fn ret(&mut self, v: &Expr) {
        let ty = self.elem_cty();
        if let (ExprKind::Struct { fields, base, .. }, ElemRef::Struct(_)) = (&v.kind, self.elem) {
            let tmp = self.fresh("out");
            self.struct_into(&tmp, fields, base.as_deref());
            self.line(format!("return {tmp};"));
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
        let t = self.expr(target, None);
        if t.ty == CTy::Never {
            self.expr(value, None);
            return;
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

    /// The function body: its value is returned.
    fn tail_block(&mut self, b: &Block) {
        self.push_scope();
        self.stmts(&b.stmts);
        match &b.tail {
            Some(t) => self.tail_expr(t),
            None if Self::ends_in_return(b) => {}
            None => {
                self.errors.push(
                    b.span,
                    "this block must end with the element it returns (an expression without `;`)",
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
            ExprKind::Block(b) => self.tail_block(b),
            ExprKind::Return(v) => self.ret(v),
            _ => self.ret(e),
        }
    }

    // ---- expressions -------------------------------------------------------------------------

    fn expr(&mut self, e: &Expr, expected: Option<&CTy>) -> Val {
        match &e.kind {
            ExprKind::Error => Val::error(),
            ExprKind::Lit(lit) => self.lit(lit, false, e.span, expected),
            ExprKind::Var(name) => match self.lookup(name) {
                Some(Binding::Var { cpp, ty }) => Val::new(cpp, ty, true),
                Some(Binding::Alias(init)) => self.expr(&init, expected),
                None => self.error(
                    e.span,
                    format!(
                        "`{name}` cannot be lowered to CUDA: only the operator's parameters and its own `let` bindings can be used (write constants' values inline)"
                    ),
                ),
            },
            ExprKind::Field(base, field) => {
                let b = self.expr(base, None);
                match b.ty {
                    CTy::Struct => {
                        let c = crate::names::field_name(field);
                        Val::new(format!("{}.{c}", b.operand()), CTy::Field(c), true)
                    }
                    CTy::Never => Val::error(),
                    _ => self.error(
                        e.span,
                        format!("`.{field}` cannot be lowered: only fields of the element struct can be read"),
                    ),
                }
            }
            ExprKind::Unary(op, inner) => self.unary(*op, inner, expected, e.span),
            ExprKind::Binary(op, l, r) => self.binary(*op, l, r, expected, e.span),
            ExprKind::Cast(inner, to) => self.cast(inner, *to),
            ExprKind::If(c, then, els) => self.if_value(c, then, els.as_deref(), expected, e.span),
            ExprKind::Block(b) => {
                self.push_scope();
                self.stmts(&b.stmts);
                let v = match &b.tail {
                    Some(t) => self.expr(t, expected),
                    None if Self::ends_in_return(b) => Val::new("", CTy::Never, true),
                    None => self.error(b.span, "this block has no value: end it with an expression without `;`"),
                };
                self.pop_scope();
                v
            }
            ExprKind::Struct { fields, base, .. } => {
                if !matches!(self.elem, ElemRef::Struct(_)) {
                    return self.error(e.span, "the element type is a primitive, not a struct");
                }
                let tmp = self.fresh("tmp");
                self.struct_into(&tmp, fields, base.as_deref());
                Val::new(tmp, CTy::Struct, true)
            }
            ExprKind::Method {
                method,
                recv,
                args,
                ty,
            } => {
                let recv_expected = match (ty, method.ret) {
                    (Some(p), _) => Some(CTy::Prim(*p)),
                    (None, Ret::Same) => expected.cloned(),
                    _ => None,
                };
                let mut rv = self.expr(recv, recv_expected.as_ref());
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
                if rv.ty.is_lit() {
                    if let Some((v, _)) = avs.iter().find(|(v, at)| *at == ArgTy::Same && v.ty.is_concrete()) {
                        let t = v.ty.clone();
                        rv = self.coerce(rv, &t);
                    }
                    rv = self.default_lit(rv);
                }
                let mut parts = vec![rv.code.clone()];
                for (v, at) in avs {
                    let v = match at {
                        ArgTy::Same => self.coerce(v, &rv.ty),
                        _ => self.default_lit(v),
                    };
                    parts.push(v.code);
                }
                let ty = match method.ret {
                    Ret::Same => rv.ty.clone(),
                    Ret::U32 => CTy::Prim(PrimType::U32),
                    Ret::Bool => CTy::Bool,
                };
                Val::new(format!("{}({})", method.helper, parts.join(", ")), ty, true)
            }
            ExprKind::Const(p, c) => {
                let f = match c {
                    Const::Max => "rs_max_value",
                    Const::Min => "rs_min_value",
                    Const::Infinity => "rs_infinity",
                    Const::NegInfinity => "rs_neg_infinity",
                    Const::Nan => "rs_nan",
                    Const::Epsilon => "rs_epsilon",
                    Const::MinPositive => "rs_min_positive",
                };
                Val::new(format!("{f}<{p}>()"), CTy::Prim(*p), true)
            }
            ExprKind::Assign(..) => self.error(
                e.span,
                "an assignment has no value: use it as a statement (`x = ...;`)",
            ),
            ExprKind::Return(_) => self.error(
                e.span,
                "`return` can only be a statement or the last expression of a branch",
            ),
        }
    }

    fn lit(&mut self, lit: &Lit, neg: bool, span: Span, expected: Option<&CTy>) -> Val {
        let (kind, suffix) = match lit {
            Lit::Bool(b) => return Val::new(if *b { "true" } else { "false" }, CTy::Bool, true),
            Lit::Int { value, suffix } => (LitKind::Int(*value), suffix),
            Lit::Float { digits, suffix } => (LitKind::Float(digits.clone()), suffix),
        };
        let lv = LitVal { neg, kind, span };
        let ty = suffix.map(CTy::Prim);
        self.make_lit(lv, ty, expected)
    }

    fn make_lit(&mut self, lv: LitVal, ty: Option<CTy>, expected: Option<&CTy>) -> Val {
        let untyped = match lv.kind {
            LitKind::Int(_) => CTy::IntLit,
            LitKind::Float(_) => CTy::FloatLit,
        };
        let v = Val {
            code: self.lit_code(&lv, &untyped).0,
            ty: untyped,
            atomic: !lv.neg,
            lit: Some(lv),
        };
        match (ty, expected) {
            (Some(t), _) => self.coerce(v, &t),
            (None, Some(t)) => self.coerce(v, t),
            (None, None) => v,
        }
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
                CTy::Prim(p) if p.is_float() => Val::new(format!("-{}", v.operand()), v.ty, false),
                CTy::Never => v,
                CTy::Struct | CTy::Bool => self.error(span, "`-` cannot be applied to this value"),
                _ => Val::new(format!("rs_neg({})", v.code), v.ty, true),
            },
            UnOp::Not => {
                let v = self.default_lit(v);
                match &v.ty {
                    CTy::Bool => Val::new(format!("!{}", v.operand()), CTy::Bool, false),
                    CTy::Never => v,
                    CTy::Struct => self.error(span, "`!` cannot be applied to the whole element"),
                    _ => Val::new(format!("rs_not({})", v.code), v.ty, true),
                }
            }
        }
    }

    /// Lowers operands left to right. If a later operand emits statements, earlier non-literal
    /// operands are first saved in temporaries, so Rust's evaluation order holds.
    fn operands(&mut self, items: &[(&Expr, Option<CTy>)]) -> Vec<Val> {
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
                    let decl = match &prev.ty {
                        CTy::Field(_) => "auto".into(),
                        t => self.cpp_type(t),
                    };
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
            let var = target.split('.').next().unwrap_or("");
            !var.is_empty()
                && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !new.contains(var)
        })
    }

    fn binary(&mut self, op: BinOp, l: &Expr, r: &Expr, expected: Option<&CTy>, span: Span) -> Val {
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
                if a.ty == CTy::Struct || b.ty == CTy::Struct {
                    return self.error(
                        span,
                        "comparing whole elements cannot be lowered to CUDA: compare their fields (`l.a == r.a && l.b == r.b`)",
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
                if a.ty == CTy::Struct || b.ty == CTy::Struct {
                    return self.error(
                        span,
                        "arithmetic on whole elements cannot be lowered to CUDA: combine their fields",
                    );
                }
                let mut ty = self.unify(&a.ty, &b.ty);
                if ty.is_lit() {
                    if let Some(e) = expected.filter(|t| t.is_concrete()) {
                        ty = e.clone();
                    }
                }
                let a = self.settle(a, &ty);
                let b = self.settle(b, &ty);
                let ty = if ty.is_lit() { a.ty.clone() } else { ty };
                if ty == CTy::Never {
                    return Val::error();
                }
                let zero_divisor = matches!(
                    &b.lit,
                    Some(LitVal {
                        kind: LitKind::Int(0),
                        ..
                    })
                );
                if matches!(op, BinOp::Div | BinOp::Rem)
                    && zero_divisor
                    && b.ty != CTy::Prim(PrimType::F32)
                    && b.ty != CTy::Prim(PrimType::F64)
                {
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

    /// A comparison operand: integer literals stay bare (C's conversions compare them exactly),
    /// float literals take the other side's type.
    fn cmp_operand(&mut self, v: Val, other: &CTy) -> Val {
        match (&v.ty, &v.lit) {
            (
                CTy::IntLit,
                Some(LitVal {
                    kind: LitKind::Int(n),
                    neg,
                    ..
                }),
            ) if matches!(other, CTy::Prim(_) | CTy::Field(_) | CTy::IntLit) => {
                let sign = if *neg { "-" } else { "" };
                if matches!(other, CTy::Prim(p) if p.is_float()) {
                    return self.coerce(v, other);
                }
                let lit = v.lit.clone().expect("matched");
                self.check_fits(&lit, other);
                Val::new(format!("{sign}{}", int_text(*n)), other.clone(), !neg)
            }
            _ => self.settle(v, other),
        }
    }

    fn cast(&mut self, inner: &Expr, to: PrimType) -> Val {
        let v = self.expr(inner, None);
        let v = match (&v.ty, to.is_float()) {
            (CTy::IntLit, false) | (CTy::FloatLit, true) => self.coerce(v, &CTy::Prim(to)),
            _ => self.default_lit(v),
        };
        match &v.ty {
            CTy::Prim(p) if *p == to => v,
            CTy::Never => v,
            CTy::Struct => Val::error(),
            _ => Val::new(format!("rs_cast<{to}>({})", v.code), CTy::Prim(to), true),
        }
    }

    fn if_value(
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
            let ev = self.expr(els, expected);
            let mut ty = self.unify(&tv.ty, &ev.ty);
            if ty.is_lit() {
                if let Some(e) = expected.filter(|t| t.is_concrete()) {
                    ty = e.clone();
                }
            }
            let tv = self.settle(tv, &ty);
            let ev = self.settle(ev, &ty);
            let ty = if ty.is_lit() { tv.ty.clone() } else { ty };
            return Val::new(
                format!("{} ? {} : {}", cond.operand(), tv.operand(), ev.operand()),
                ty,
                false,
            );
        }
        let tmp = self.fresh("tmp");
        let decl_at = self.line(String::new());
        self.line(format!("if ({}) {{", cond.code));
        self.indent += 1;
        self.push_scope();
        self.stmts(&then.stmts);
        let tv = match &then.tail {
            Some(t) => self.expr(t, expected),
            None if Self::ends_in_return(then) => Val::new("", CTy::Never, true),
            None => self.error(
                then.span,
                "this branch has no value: end it with an expression without `;`",
            ),
        };
        let then_at = self.line(String::new());
        self.pop_scope();
        self.indent -= 1;
        self.line("} else {");
        self.indent += 1;
        self.push_scope();
        let ev = self.expr(els, expected);
        let else_at = self.line(String::new());
        self.pop_scope();
        self.indent -= 1;
        self.line("}");
        let mut ty = self.unify(&tv.ty, &ev.ty);
        if ty.is_lit() {
            ty = expected
                .filter(|t| t.is_concrete())
                .cloned()
                .unwrap_or_else(|| self.default_lit(tv.clone()).ty);
        }
        for (at, v) in [(then_at, tv), (else_at, ev)] {
            if v.ty == CTy::Never {
                self.out[at].text = String::new();
            } else {
                let v = self.store(v, &ty);
                self.out[at].text = format!("{tmp} = {};", v.code);
            }
        }
        self.out[decl_at].text = format!("{} {tmp};", self.cpp_type(&ty));
        self.out.retain(|l| !l.text.is_empty());
        Val::new(tmp, ty, true)
    }

    /// `T name; name.a = ...; name.b = ...;` (or `T name = base;` for `..base`): field order in
    /// the literal never matters.
    fn struct_into(&mut self, name: &str, fields: &[(String, Expr)], base: Option<&Expr>) {
        let elem = self.elem_name().to_string();
        match base {
            Some(b) => {
                let bv = self.expr(b, Some(&CTy::Struct));
                self.line(format!("{elem} {name} = {};", bv.code));
            }
            None => {
                self.line(format!("{elem} {name};"));
            }
        }
        for (f, e) in fields {
            let f = crate::names::field_name(f);
            let ty = CTy::Field(f.clone());
            let v = self.expr(e, Some(&ty));
            if v.ty == CTy::Never {
                continue;
            }
            let v = self.store(v, &ty);
            self.line(format!("{name}.{f} = {};", v.code));
        }
    }
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
fn needs_stmts(e: &Expr, lw: &Lowerer<'_>) -> bool {
    match &e.kind {
        ExprKind::Struct { .. } | ExprKind::Return(_) | ExprKind::Assign(..) => true,
        ExprKind::Block(b) => block_needs_stmts(b, lw),
        ExprKind::If(c, t, els) => {
            needs_stmts(c, lw)
                || block_needs_stmts(t, lw)
                || els.as_ref().is_none_or(|e| needs_stmts(e, lw))
        }
        ExprKind::Binary(_, l, r) => needs_stmts(l, lw) || needs_stmts(r, lw),
        ExprKind::Unary(_, x) | ExprKind::Cast(x, _) | ExprKind::Field(x, _) => needs_stmts(x, lw),
        ExprKind::Method { recv, args, .. } => {
            needs_stmts(recv, lw) || args.iter().any(|a| needs_stmts(a, lw))
        }
        ExprKind::Lit(_) | ExprKind::Var(_) | ExprKind::Const(..) | ExprKind::Error => false,
    }
}

fn block_needs_stmts(b: &Block, lw: &Lowerer<'_>) -> bool {
    !b.stmts.is_empty() || b.tail.as_ref().is_none_or(|t| needs_stmts(t, lw))
}

/// `-(-5i8)` -> (negated, the literal): a literal with any number of `-` signs.
fn literal_parts(e: &Expr) -> Option<(bool, &Lit)> {
    match &e.kind {
        ExprKind::Lit(lit @ (Lit::Int { .. } | Lit::Float { .. })) => Some((false, lit)),
        ExprKind::Unary(UnOp::Neg, inner) => literal_parts(inner).map(|(n, l)| (!n, l)),
        _ => None,
    }
}
