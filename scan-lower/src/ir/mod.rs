//! The span-carrying IR of an operator's bodies and of the items they use, and its
//! construction from syn.
//!
//! Building the IR is where unsupported Rust is found: each construct that has no CUDA meaning
//! records an error at its span and becomes `ExprKind::Error`, so one pass reports every
//! mistake in a body. Names are not resolved here (a name may be a local, a `const` or a helper
//! function): lowering resolves them against its scopes.

mod build;
mod call;
mod items;
mod pattern;

pub(crate) use items::{collect_items, ConstItem, FnItem, Item, StructInfo};

use crate::error::Errors;
use crate::methods::Method;
use proc_macro2::Span;
use scan_core::PrimType;

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

/// An associated constant of a primitive type (`i32::MAX`, `f32::EPSILON`, `u8::BITS`), or a
/// constant of `std::f32::consts` / `std::f64::consts`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Const {
    Max,
    Min,
    Infinity,
    NegInfinity,
    Nan,
    Epsilon,
    MinPositive,
    /// `u32` constants of every primitive: `BITS` of integers, `MANTISSA_DIGITS`, `DIGITS`,
    /// `RADIX` of floats.
    U32(u32),
    /// `i32` constants of floats: `MIN_EXP`, `MAX_EXP`, `MIN_10_EXP`, `MAX_10_EXP`.
    I32(i32),
    /// A `consts::PI`-style value, as Rust computes it in f64 (for f32 rounded once more).
    Float(f64),
    /// A constant of `f16`/`bf16` (`f16::MAX`, `bf16::ONE`, `f16::PI`), by its bits, as the
    /// `half` crate defines it.
    HalfBits(u16),
}

/// A struct as an expression or a type names it: by its Rust name, or as the element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StructRef {
    /// `Self::Elem`, or the name `type Elem = ...;` gives.
    Elem,
    /// `Self` inside an inherent impl (resolved by lowering).
    SelfTy,
    /// Another struct, by the last segment of its path.
    Named(String),
}

/// A type as written in an annotation or a helper's signature.
#[derive(Clone, Debug)]
pub(crate) enum Ty {
    Prim(PrimType),
    Bool,
    Struct(StructRef),
    /// `[T; N]`: the length is a constant expression (a literal or a `const`).
    Array(Box<Ty>, Box<Expr>),
    Tuple(Vec<Ty>),
}

#[derive(Clone, Debug)]
pub(crate) enum ExprKind {
    Lit(Lit),
    /// A single-segment name: a local, a parameter or a `const`.
    Var(String),
    /// `Self::K`, `Op::K`: an associated `const` of a type (resolved by lowering).
    AssocConst(StructRef, String),
    Field(Box<Expr>, String),
    /// `t.0`
    TupleField(Box<Expr>, usize),
    Index(Box<Expr>, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cast(Box<Expr>, PrimType),
    If(Box<Expr>, Block, Option<Box<Expr>>),
    Block(Block),
    Struct {
        ty: StructRef,
        fields: Vec<(String, Expr)>,
        base: Option<Box<Expr>>,
    },
    Tuple(Vec<Expr>),
    Array(Vec<Expr>),
    /// `[value; len]`
    Repeat(Box<Expr>, Box<Expr>),
    /// `recv.name(args)`: a helper method when `recv` is a struct, else a built-in.
    MethodCall {
        name: String,
        name_span: Span,
        recv: Box<Expr>,
        args: Vec<Expr>,
    },
    /// `T::method(recv, args)` (then `ty` is `T`) or `cmp::max(a, b)`: a built-in.
    Builtin {
        method: &'static Method,
        recv: Box<Expr>,
        args: Vec<Expr>,
        ty: Option<PrimType>,
    },
    /// `helper(args)` (`owner` is `None`), `Self::helper(args)`, `Type::helper(args)`.
    Call {
        owner: Option<StructRef>,
        name: String,
        args: Vec<Expr>,
    },
    Const(PrimType, Const),
    Match(Box<Expr>, Vec<Arm>),
    /// `if let PAT = EXPR { ... } else { ... }`: a two-armed match.
    IfLet(Box<Pat>, Box<Expr>, Block, Option<Box<Expr>>),
    While(Box<Expr>, Block),
    Loop(Block),
    For(Box<ForLoop>),
    Break,
    Continue,
    /// `x = v` / `x += v` (statement position only).
    Assign(Box<Expr>, Option<BinOp>, Box<Expr>),
    Return(Box<Expr>),
    /// `body` with `name` reading the place `value` (no copy): a `match` guard's bindings.
    /// Made by lowering, never by syn.
    Alias {
        name: String,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    /// Something already reported.
    Error,
}

#[derive(Clone, Debug)]
pub(crate) struct Arm {
    pub pat: Pat,
    pub guard: Option<Expr>,
    pub body: Expr,
    pub span: Span,
}

/// `for pat in start..end` (or `..=`, `.rev()`, `.step_by(k)`) over constant bounds.
#[derive(Clone, Debug)]
pub(crate) struct ForLoop {
    pub var: Option<String>,
    pub start: Expr,
    pub end: Expr,
    pub inclusive: bool,
    pub rev: bool,
    pub step: Option<Expr>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub(crate) struct Pat {
    pub kind: PatKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub(crate) enum PatKind {
    Wild,
    /// `x`, `mut x`, `x @ sub`
    Bind {
        name: String,
        mutable: bool,
        sub: Option<Box<Pat>>,
    },
    /// A literal, a negative literal or a `const` (as an expression compared with `==`).
    Value(Expr),
    /// `lo..=hi`, `lo..hi`, `lo..`, `..=hi`
    Range {
        lo: Option<Expr>,
        hi: Option<Expr>,
        inclusive: bool,
    },
    Or(Vec<Pat>),
    Tuple(Vec<Pat>),
    /// `S { a, b: pat, .. }`
    Struct {
        ty: StructRef,
        fields: Vec<(String, Pat)>,
    },
    /// `[a, b, c]`
    Array(Vec<Pat>),
    /// Something already reported, and the names it would bind (bound to nothing, so their
    /// uses add no follow-up errors).
    Error(Vec<String>),
}

#[derive(Clone, Debug)]
pub(crate) struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
    /// `const` and `fn` items declared in the block (visible in all of it, as in Rust).
    pub items: Vec<Item>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub(crate) enum Stmt {
    Let(Box<Let>),
    Expr(Expr),
}

/// `let pat: ty = init;`
#[derive(Clone, Debug)]
pub(crate) struct Let {
    pub pat: Pat,
    pub ty: Option<Ty>,
    pub init: Expr,
    pub span: Span,
}

/// Converts syn to the IR, collecting errors.
pub(crate) struct Builder<'a> {
    pub errors: &'a mut Errors,
    /// The element type as written in `type Elem = ...;` (for `let x: Affine` and literals).
    pub elem_name: Option<String>,
}

impl Builder<'_> {
    fn error(&mut self, span: Span, msg: impl Into<String>) -> Expr {
        self.errors.push(span, msg);
        err_expr(span)
    }
}

pub(crate) fn err_expr(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Error,
        span,
    }
}

pub(crate) fn path_string(p: &syn::Path) -> String {
    p.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

impl Expr {
    /// Whether `name` is read anywhere in the expression (conservatively: shadowing is not
    /// considered).
    pub fn mentions(&self, name: &str) -> bool {
        let mut found = false;
        self.walk(&mut |e| {
            if let ExprKind::Var(n) = &e.kind {
                found |= n == name;
            }
        });
        found
    }

    /// Calls `f` on this expression and every expression inside it.
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        let block = |b: &Block, f: &mut dyn FnMut(&Expr)| {
            for s in &b.stmts {
                match s {
                    Stmt::Let(l) => l.init.walk(f),
                    Stmt::Expr(e) => e.walk(f),
                }
            }
            if let Some(t) = &b.tail {
                t.walk(f);
            }
        };
        match &self.kind {
            ExprKind::Lit(_)
            | ExprKind::Var(_)
            | ExprKind::AssocConst(..)
            | ExprKind::Const(..)
            | ExprKind::Break
            | ExprKind::Continue
            | ExprKind::Error => {}
            ExprKind::Field(x, _)
            | ExprKind::TupleField(x, _)
            | ExprKind::Unary(_, x)
            | ExprKind::Cast(x, _)
            | ExprKind::Return(x) => x.walk(f),
            ExprKind::Index(a, b)
            | ExprKind::Binary(_, a, b)
            | ExprKind::Repeat(a, b)
            | ExprKind::Assign(a, _, b)
            | ExprKind::Alias {
                value: a, body: b, ..
            } => {
                a.walk(f);
                b.walk(f);
            }
            ExprKind::If(c, t, e) => {
                c.walk(f);
                block(t, f);
                if let Some(e) = e {
                    e.walk(f);
                }
            }
            ExprKind::IfLet(_, v, t, e) => {
                v.walk(f);
                block(t, f);
                if let Some(e) = e {
                    e.walk(f);
                }
            }
            ExprKind::Block(b) | ExprKind::Loop(b) => block(b, f),
            ExprKind::While(c, b) => {
                c.walk(f);
                block(b, f);
            }
            ExprKind::For(l) => {
                l.start.walk(f);
                l.end.walk(f);
                if let Some(s) = &l.step {
                    s.walk(f);
                }
                block(&l.body, f);
            }
            ExprKind::Struct { fields, base, .. } => {
                for (_, e) in fields {
                    e.walk(f);
                }
                if let Some(b) = base {
                    b.walk(f);
                }
            }
            ExprKind::Tuple(xs) | ExprKind::Array(xs) => xs.iter().for_each(|x| x.walk(f)),
            ExprKind::MethodCall { recv, args, .. } | ExprKind::Builtin { recv, args, .. } => {
                recv.walk(f);
                args.iter().for_each(|x| x.walk(f));
            }
            ExprKind::Call { args, .. } => args.iter().for_each(|x| x.walk(f)),
            ExprKind::Match(s, arms) => {
                s.walk(f);
                for a in arms {
                    if let Some(g) = &a.guard {
                        g.walk(f);
                    }
                    a.body.walk(f);
                }
            }
        }
    }
}
