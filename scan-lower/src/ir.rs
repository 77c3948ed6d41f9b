//! The span-carrying expression IR, and its construction from syn.
//!
//! Building the IR is where unsupported Rust is found: each construct that has no CUDA meaning
//! records an error at its span and becomes `ExprKind::Error`, so one pass reports every
//! mistake in a body.

use crate::error::Errors;
use crate::methods::{self, Method};
use proc_macro2::Span;
use quote::ToTokens;
use scan_core::PrimType;
use syn::spanned::Spanned;

#[derive(Clone, Debug)]
pub(crate) struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

/// Why no loop form lowers (after "`for` loops ", "`while` loops ", "`loop` ").
const LOOPS: &str = "cannot be lowered to CUDA: a scan operator combines two elements in constant time; write the steps out or restructure the element";

impl BinOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
    pub fn c_infix(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
    pub fn helper(self) -> &'static str {
        match self {
            BinOp::Add => "rs_add",
            BinOp::Sub => "rs_sub",
            BinOp::Mul => "rs_mul",
            BinOp::Div => "rs_div",
            BinOp::Rem => "rs_rem",
            BinOp::BitAnd => "rs_bitand",
            BinOp::BitOr => "rs_bitor",
            BinOp::BitXor => "rs_bitxor",
            BinOp::Shl => "rs_shl",
            BinOp::Shr => "rs_shr",
            _ => unreachable!("comparisons and logic are infix"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Debug)]
pub(crate) enum Lit {
    /// Magnitude; the sign is a separate `Neg`. `suffix` is an integer or float type.
    Int {
        value: u128,
        suffix: Option<PrimType>,
    },
    /// Decimal digits as written (without `_`), and an `f32`/`f64` suffix.
    Float {
        digits: String,
        suffix: Option<PrimType>,
    },
    Bool(bool),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Const {
    Max,
    Min,
    Infinity,
    NegInfinity,
    Nan,
    Epsilon,
    MinPositive,
}

#[derive(Clone, Debug)]
pub(crate) enum ExprKind {
    Lit(Lit),
    Var(String),
    Field(Box<Expr>, String),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cast(Box<Expr>, PrimType),
    If(Box<Expr>, Block, Option<Box<Expr>>),
    Block(Block),
    Struct {
        fields: Vec<(String, Expr)>,
        base: Option<Box<Expr>>,
    },
    /// `recv.method(args)`, `T::method(recv, args)` (then `ty` is `T`), `cmp::max(a, b)`.
    Method {
        method: &'static Method,
        recv: Box<Expr>,
        args: Vec<Expr>,
        ty: Option<PrimType>,
    },
    Const(PrimType, Const),
    /// `x = v` / `x += v` (statement position only).
    Assign(Box<Expr>, Option<BinOp>, Box<Expr>),
    Return(Box<Expr>),
    /// Something already reported.
    Error,
}

#[derive(Clone, Debug)]
pub(crate) struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub(crate) enum LetTy {
    Prim(PrimType),
    Elem,
}

#[derive(Clone, Debug)]
pub(crate) enum Stmt {
    Let {
        /// `None` for `let _ = ...`.
        name: Option<String>,
        mutable: bool,
        ty: Option<LetTy>,
        init: Expr,
        span: Span,
    },
    Expr(Expr),
}

/// Converts syn to the IR, collecting errors.
pub(crate) struct Builder<'a> {
    pub errors: &'a mut Errors,
    /// The element type as written in `type Elem = ...;` (for `let x: Affine` and literals).
    pub elem_name: Option<String>,
}

fn err_expr(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Error,
        span,
    }
}

fn path_string(p: &syn::Path) -> String {
    p.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

impl Builder<'_> {
    fn error(&mut self, span: Span, msg: impl Into<String>) -> Expr {
        self.errors.push(span, msg);
        err_expr(span)
    }

    pub fn block(&mut self, b: &syn::Block) -> Block {
        let mut stmts = Vec::new();
        let mut tail = None;
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            match s {
                syn::Stmt::Local(local) => {
                    if let Some(st) = self.local(local) {
                        stmts.push(st);
                    }
                }
                syn::Stmt::Item(item) => {
                    self.error(
                        item.span(),
                        "items (fn, struct, const, use) cannot be declared inside a scan operator: move them outside, and inline any helper function into the operator",
                    );
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
            span: b.brace_token.span.join(),
        }
    }

    fn macro_error(&mut self, mac: &syn::Macro) -> Expr {
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
        let (name, mutable) = match pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                (Some(pi.ident.to_string()), pi.mutability.is_some())
            }
            syn::Pat::Wild(_) => (None, false),
            other => {
                self.error(
                    other.span(),
                    "only `let name = ...;` and `let name: Type = ...;` can be lowered to CUDA: destructuring patterns cannot; bind the value and use its fields",
                );
                return None;
            }
        };
        let ty = ty.and_then(|t| self.let_ty(t));
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
                "`let ... else` cannot be lowered to CUDA: use `if`/`else`",
            );
        }
        let init = self.expr(&init.expr);
        Some(Stmt::Let {
            name,
            mutable,
            ty,
            init,
            span,
        })
    }

    fn let_ty(&mut self, ty: &syn::Type) -> Option<LetTy> {
        if let Some(p) = crate::element::prim_of_type(ty) {
            return Some(LetTy::Prim(p));
        }
        if self.is_elem_type(ty) {
            return Some(LetTy::Elem);
        }
        if let Some(hint) =
            crate::element::simple_type_name(ty).and_then(|n| crate::element::unsupported_prim(&n))
        {
            self.error(ty.span(), hint);
            return None;
        }
        let shown = ty.to_token_stream().to_string();
        self.error(
            ty.span(),
            format!(
                "type `{shown}` cannot be used in a lowered operator: locals must be a primitive ({}) or the element type",
                crate::element::ALLOWED_PRIMS
            ),
        );
        None
    }

    /// `Self::Elem` or the element type's name.
    pub fn is_elem_type(&self, ty: &syn::Type) -> bool {
        match ty {
            syn::Type::Path(p) if p.qself.is_none() => self.is_elem_path(&p.path),
            syn::Type::Group(g) => self.is_elem_type(&g.elem),
            syn::Type::Paren(p) => self.is_elem_type(&p.elem),
            _ => false,
        }
    }

    pub fn is_elem_path(&self, path: &syn::Path) -> bool {
        let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() == 2 && segs[0] == "Self" && segs[1] == "Elem" {
            return true;
        }
        match (&self.elem_name, segs.last()) {
            (Some(e), Some(last)) => e == last,
            _ => false,
        }
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
                    syn::Member::Unnamed(_) => {
                        return self.error(
                            f.member.span(),
                            "tuple fields cannot be lowered to CUDA: use a struct with named fields",
                        )
                    }
                }
            }
            syn::Expr::Unary(u) => {
                let inner = self.expr(&u.expr);
                match u.op {
                    syn::UnOp::Neg(_) => ExprKind::Unary(UnOp::Neg, Box::new(inner)),
                    syn::UnOp::Not(_) => ExprKind::Unary(UnOp::Not, Box::new(inner)),
                    syn::UnOp::Deref(_) => {
                        return self.error(
                            u.op.span(),
                            "`*` dereference cannot be lowered to CUDA: scan elements are passed by value; remove the `*`",
                        )
                    }
                    _ => return self.error(span, "this unary operator cannot be lowered to CUDA"),
                }
            }
            syn::Expr::Binary(b) => return self.binary(b),
            syn::Expr::Cast(c) => {
                let inner = self.expr(&c.expr);
                match crate::element::prim_of_type(&c.ty) {
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
            syn::Expr::Match(m) => {
                return self.error(
                    m.match_token.span,
                    "`match` cannot be lowered to CUDA: use `if`/`else`",
                )
            }
            syn::Expr::ForLoop(f) => return self.error(f.for_token.span, format!("`for` loops {LOOPS}")),
            syn::Expr::While(w) => return self.error(w.while_token.span, format!("`while` loops {LOOPS}")),
            syn::Expr::Loop(l) => return self.error(l.loop_token.span, format!("`loop` {LOOPS}")),
            syn::Expr::Break(_) | syn::Expr::Continue(_) => {
                return self.error(span, "`break`/`continue` cannot be lowered to CUDA: there are no loops in an operator")
            }
            syn::Expr::Closure(c) => {
                return self.error(
                    c.or1_token.span,
                    "closures cannot be lowered to CUDA: write the expression inline",
                )
            }
            syn::Expr::Reference(r) => {
                return self.error(
                    r.and_token.span,
                    "references cannot be lowered to CUDA: scan elements are passed by value; remove the `&`",
                )
            }
            syn::Expr::Macro(m) => return self.macro_error(&m.mac),
            syn::Expr::Array(_) | syn::Expr::Repeat(_) => {
                return self.error(
                    span,
                    "arrays cannot be lowered to CUDA: use a #[derive(ScanElement)] struct with one field per value",
                )
            }
            syn::Expr::Index(i) => {
                return self.error(
                    i.bracket_token.span.join(),
                    "indexing cannot be lowered to CUDA: use a #[derive(ScanElement)] struct with one field per value",
                )
            }
            syn::Expr::Tuple(t) if t.elems.is_empty() => {
                return self.error(span, "`()` cannot be lowered to CUDA: the operator returns an element")
            }
            syn::Expr::Tuple(_) => {
                return self.error(
                    span,
                    "tuples cannot be lowered to CUDA: use a #[derive(ScanElement)] struct with named fields",
                )
            }
            syn::Expr::Range(_) => return self.error(span, "ranges cannot be lowered to CUDA"),
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
                return self.error(span, "`if let` cannot be lowered to CUDA: use a plain `if` condition")
            }
            syn::Expr::Async(_) | syn::Expr::Await(_) => {
                return self.error(span, "`async`/`.await` cannot be lowered to CUDA")
            }
            _ => {
                let shown = e.to_token_stream().to_string();
                return self.error(
                    span,
                    format!("`{shown}` cannot be lowered to CUDA: only arithmetic, comparisons, `let`, `if`/`else`, casts, struct literals, field access and the supported methods can"),
                );
            }
        };
        Expr { kind, span }
    }

    fn lit(&mut self, l: &syn::Lit) -> Option<Lit> {
        match l {
            syn::Lit::Int(i) => {
                let suffix = i.suffix();
                let suffix = if suffix.is_empty() {
                    None
                } else {
                    match PrimType::from_name(suffix) {
                        Some(p) => Some(p),
                        None if crate::element::unsupported_prim(suffix).is_some() => {
                            let hint = crate::element::unsupported_prim(suffix).expect("checked");
                            self.error(i.span(), hint);
                            return None;
                        }
                        None => {
                            self.error(
                                i.span(),
                                format!(
                                    "`{suffix}` literals cannot be lowered to CUDA: use one of {}",
                                    crate::element::ALLOWED_PRIMS
                                ),
                            );
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

    fn path_expr(&mut self, p: &syn::ExprPath) -> Expr {
        let span = p.span();
        if p.qself.is_some() {
            return self.error(
                span,
                "qualified paths (`<T as Trait>::X`) cannot be lowered to CUDA",
            );
        }
        let segs: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        if segs.len() == 1 {
            return Expr {
                kind: ExprKind::Var(segs[0].clone()),
                span,
            };
        }
        // i32::MAX, f32::INFINITY, core::f32::NAN, std::f64::EPSILON
        let tail: Vec<&str> = segs.iter().map(String::as_str).collect();
        let tail = match tail.as_slice() {
            ["std" | "core", rest @ ..] => rest,
            rest => rest,
        };
        if let [ty, name] = tail {
            if let Some(prim) = PrimType::from_name(ty) {
                let c = match *name {
                    "MAX" => Some(Const::Max),
                    "MIN" => Some(Const::Min),
                    "INFINITY" if prim.is_float() => Some(Const::Infinity),
                    "NEG_INFINITY" if prim.is_float() => Some(Const::NegInfinity),
                    "NAN" if prim.is_float() => Some(Const::Nan),
                    "EPSILON" if prim.is_float() => Some(Const::Epsilon),
                    "MIN_POSITIVE" if prim.is_float() => Some(Const::MinPositive),
                    _ => None,
                };
                if let Some(c) = c {
                    return Expr {
                        kind: ExprKind::Const(prim, c),
                        span,
                    };
                }
            }
        }
        let shown = segs.join("::");
        self.error(
            span,
            format!(
                "`{shown}` cannot be lowered to CUDA: only parameters, locals and primitive constants (`i32::MAX`, `u64::MIN`, `f32::INFINITY`, `f32::NEG_INFINITY`, `f32::NAN`, `f32::EPSILON`, `f32::MIN_POSITIVE`) can be used; write other constants' values inline"
            ),
        )
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

    /// An assignment target: `x` or `x.field`.
    fn place(&mut self, e: &syn::Expr) -> Expr {
        let ok = match e {
            syn::Expr::Path(p) => p.path.get_ident().is_some(),
            syn::Expr::Field(f) => {
                matches!(&*f.base, syn::Expr::Path(p) if p.path.get_ident().is_some())
                    && matches!(f.member, syn::Member::Named(_))
            }
            _ => false,
        };
        if !ok {
            return self.error(
                e.span(),
                "only a local variable or one of its fields (`x = ...`, `x.a = ...`) can be assigned in a lowered operator",
            );
        }
        self.expr(e)
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> Expr {
        let cond = self.expr(&i.cond);
        let then = self.block(&i.then_branch);
        let els = i.else_branch.as_ref().map(|(_, e)| Box::new(self.expr(e)));
        Expr {
            kind: ExprKind::If(Box::new(cond), then, els),
            span: i.span(),
        }
    }

    fn struct_lit(&mut self, s: &syn::ExprStruct) -> Expr {
        let span = s.span();
        if s.qself.is_some() || !self.is_elem_path(&s.path) {
            let shown = path_string(&s.path);
            let elem = self
                .elem_name
                .clone()
                .unwrap_or_else(|| "the element type".into());
            return self.error(
                s.path.span(),
                format!(
                    "struct `{shown}` cannot be built in a lowered operator: only the element type `{elem}` exists on the GPU"
                ),
            );
        }
        let mut fields = Vec::new();
        for fv in &s.fields {
            let name = match &fv.member {
                syn::Member::Named(n) => n.to_string(),
                syn::Member::Unnamed(_) => {
                    self.error(fv.member.span(), "tuple fields cannot be lowered to CUDA");
                    continue;
                }
            };
            fields.push((name, self.expr(&fv.expr)));
        }
        let base = s.rest.as_ref().map(|r| Box::new(self.expr(r)));
        Expr {
            kind: ExprKind::Struct { fields, base },
            span,
        }
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall) -> Expr {
        let span = m.span();
        let name = m.method.to_string();
        if m.turbofish.is_some() {
            return self.error(
                m.method.span(),
                "turbofish (`::<T>`) cannot be lowered to CUDA",
            );
        }
        let Some(method) = methods::find(&name) else {
            let recv = self.expr(&m.receiver);
            let _ = recv;
            for a in &m.args {
                self.expr(a);
            }
            return self.error(
                m.method.span(),
                format!(
                    "method `.{name}()` cannot be lowered to CUDA; supported methods: {}",
                    methods::list()
                ),
            );
        };
        let recv = self.expr(&m.receiver);
        let args: Vec<Expr> = m.args.iter().map(|a| self.expr(a)).collect();
        self.check_arity(method, args.len(), m.method.span());
        Expr {
            kind: ExprKind::Method {
                method,
                recv: Box::new(recv),
                args,
                ty: None,
            },
            span,
        }
    }

    fn check_arity(&mut self, method: &Method, got: usize, span: Span) {
        if got != method.args.len() {
            self.errors.push(
                span,
                format!(
                    "`{}` takes {} argument(s) besides the receiver, found {got}",
                    method.name,
                    method.args.len()
                ),
            );
        }
    }

    fn call(&mut self, c: &syn::ExprCall) -> Expr {
        let span = c.span();
        let args: Vec<Expr> = c.args.iter().map(|a| self.expr(a)).collect();
        let syn::Expr::Path(p) = &*c.func else {
            let before = self.errors.len();
            let f = self.expr(&c.func);
            if self.errors.len() > before {
                return f;
            }
            return self.error(
                c.func.span(),
                "only calls of the supported functions can be lowered to CUDA",
            );
        };
        let segs: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let strs: Vec<&str> = segs.iter().map(String::as_str).collect();
        let shown = segs.join("::");
        // `f32::max(a, b)`, `i64::wrapping_add(a, b)`, `std::cmp::max(a, b)`.
        let (ty, name): (Option<PrimType>, &str) = match strs.as_slice() {
            ["std" | "core", "cmp", n @ ("min" | "max")] | ["cmp", n @ ("min" | "max")] => (None, n),
            [t, n] if PrimType::from_name(t).is_some() => (PrimType::from_name(t), n),
            ["Self", n @ ("combine" | "identity")] => {
                return self.error(
                    span,
                    format!("calling `Self::{n}` from inside the operator cannot be lowered to CUDA: write the computation out"),
                )
            }
            _ => (None, ""),
        };
        let method = if name.is_empty() {
            None
        } else {
            methods::find(name)
        };
        let Some(method) = method else {
            return self.error(
                c.func.span(),
                format!(
                    "cannot call `{shown}` in a lowered operator: functions are not lowered to CUDA (inline the function's body), only these: {}",
                    methods::call_list()
                ),
            );
        };
        if args.is_empty() {
            return self.error(
                span,
                format!("`{shown}` needs its receiver as the first argument"),
            );
        }
        let mut args = args.into_iter();
        let recv = args.next().expect("checked");
        let rest: Vec<Expr> = args.collect();
        self.check_arity(method, rest.len(), c.func.span());
        Expr {
            kind: ExprKind::Method {
                method,
                recv: Box::new(recv),
                args: rest,
                ty,
            },
            span,
        }
    }
}
