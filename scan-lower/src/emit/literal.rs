//! Literals: their C++ spelling once a type is known, Rust's defaults when none is, and
//! rustc's range checks.

use super::{CTy, Lowerer, Val};
use crate::ir::{Expr, ExprKind, Lit, UnOp};
use proc_macro2::Span;
use scan_core::PrimType;

#[derive(Clone, Debug)]
pub(crate) struct LitVal {
    neg: bool,
    kind: LitKind,
    /// The literal as written (with its `-`), for range errors.
    span: Span,
}

#[derive(Clone, Debug)]
pub(super) enum LitKind {
    Int(u128),
    Float(String),
}

impl LitVal {
    pub(super) fn int_value(&self) -> Option<i128> {
        match self.kind {
            LitKind::Int(v) => Some(if self.neg { -(v as i128) } else { v as i128 }),
            LitKind::Float(_) => None,
        }
    }
}

pub(super) fn int_text(value: u128) -> String {
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

/// `-(-5i8)` -> (negated, the literal): a literal with any number of `-` signs.
pub(super) fn literal_parts(e: &Expr) -> Option<(bool, &Lit)> {
    match &e.kind {
        ExprKind::Lit(lit @ (Lit::Int { .. } | Lit::Float { .. })) => Some((false, lit)),
        ExprKind::Unary(UnOp::Neg, inner) => literal_parts(inner).map(|(n, l)| (!n, l)),
        _ => None,
    }
}

/// An unsuffixed numeric literal (with any `-` signs): its type is decided by its uses.
pub(super) fn is_untyped_literal(e: &Expr) -> bool {
    matches!(
        literal_parts(e),
        Some((
            _,
            Lit::Int { suffix: None, .. } | Lit::Float { suffix: None, .. }
        ))
    )
}

impl Lowerer<'_> {
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
            (LitKind::Int(v), CTy::Opaque { .. } | CTy::Index) => (
                format!("({}){sign}{}", self.cpp_type(ty), int_text(*v)),
                true,
            ),
            (LitKind::Float(d), CTy::Prim(PrimType::F32)) => {
                (format!("{sign}{}f", float_digits(d)), !lit.neg)
            }
            (LitKind::Float(d), CTy::Prim(PrimType::F64)) => {
                (format!("{sign}{}", float_digits(d)), !lit.neg)
            }
            (LitKind::Float(d), CTy::Opaque { .. }) => {
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

    /// Gives an untyped literal (or a `for` variable) the type `ty`.
    pub(super) fn coerce(&mut self, v: Val, ty: &CTy) -> Val {
        if v.ty == CTy::Index && ty.is_concrete() {
            return Val::new(
                format!("({}){}", self.cpp_type(ty), v.operand()),
                ty.clone(),
                true,
            );
        }
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
    pub(super) fn settle(&mut self, v: Val, ty: &CTy) -> Val {
        let v = self.coerce(v, ty);
        self.default_lit(v)
    }

    /// Rust's defaults for a literal nothing constrains: i32, f64 (and `i32` for a `for`
    /// variable, which is what rustc infers when no use says otherwise).
    pub(super) fn default_lit(&mut self, v: Val) -> Val {
        match v.ty {
            CTy::IntLit => self.coerce(v, &CTy::Prim(PrimType::I32)),
            CTy::FloatLit => self.coerce(v, &CTy::Prim(PrimType::F64)),
            CTy::Index => self.coerce(v, &CTy::Prim(PrimType::I32)),
            _ => v,
        }
    }

    /// A value stored into a place of type `ty` (let, assignment, field, return): integer
    /// literals in `int` range convert implicitly and exactly, so they stay bare.
    pub(super) fn store(&mut self, v: Val, ty: &CTy) -> Val {
        if let Some(lit) = &v.lit {
            let lit = lit.clone();
            if v.ty.is_lit() {
                self.check_fits(&lit, ty);
            }
            if let LitKind::Int(n) = &lit.kind {
                let float = ty.is_float() || v.ty.is_float();
                if *n <= i32::MAX as u128 && !float && ty.is_concrete() {
                    return Val::new(
                        format!("{}{n}", if lit.neg { "-" } else { "" }),
                        ty.clone(),
                        !lit.neg,
                    );
                }
            }
            if let (LitKind::Float(d), CTy::Opaque { .. }) = (&lit.kind, ty) {
                let d = float_digits(d);
                if exact_in_f32(&d) {
                    // Converts exactly on assignment, whichever float the field is.
                    return Val::new(
                        format!("{}{d}f", if lit.neg { "-" } else { "" }),
                        ty.clone(),
                        !lit.neg,
                    );
                }
            }
        }
        // An untyped literal was checked above: spell it without checking it again.
        let v = match (&v.lit, v.ty.is_lit() && ty.is_concrete()) {
            (Some(lit), true) => {
                let lit = lit.clone();
                let (code, atomic) = self.lit_code(&lit, ty);
                Val {
                    code,
                    ty: ty.clone(),
                    atomic,
                    lit: Some(lit),
                }
            }
            _ => self.coerce(v, ty),
        };
        self.default_lit(v)
    }

    /// rustc rejects a literal out of its type's range (`300` as an `i8`, `1e400` as an `f32`,
    /// `-1` as a `u32`); C++ would wrap or round it to infinity without a word.
    pub(super) fn check_fits(&mut self, lit: &LitVal, ty: &CTy) {
        let Some(CTy::Prim(p)) = ty.resolved() else {
            return;
        };
        let p = *p;
        if p.is_half() {
            // `half::f16` is a struct: rustc accepts no literal for it.
            self.ctx.errors.push(
                lit.span,
                format!(
                    "`{p}` has no literals (`half::{p}` is a struct): write `{p}::from_f32(1.5)`, or a constant such as `{p}::ONE`"
                ),
            );
            return;
        }
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
                let infinite = if p == PrimType::F32 {
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
        self.ctx.errors.push(lit.span, message);
    }

    pub(super) fn lit(&mut self, lit: &Lit, neg: bool, span: Span, expected: Option<&CTy>) -> Val {
        let (kind, suffix) = match lit {
            Lit::Bool(b) => return Val::new(if *b { "true" } else { "false" }, CTy::Bool, true),
            Lit::Int { value, suffix } => (LitKind::Int(*value), suffix),
            Lit::Float { digits, suffix } => (LitKind::Float(digits.clone()), suffix),
        };
        let lv = LitVal { neg, kind, span };
        let ty = suffix.map(CTy::Prim);
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

    /// A comparison operand: integer literals stay bare (C's conversions compare them exactly),
    /// float literals take the other side's type.
    pub(super) fn cmp_operand(&mut self, v: Val, other: &CTy) -> Val {
        match (&v.ty, &v.lit) {
            (CTy::IntLit, Some(lit))
                if matches!(
                    other,
                    CTy::Prim(_) | CTy::Opaque { .. } | CTy::IntLit | CTy::Index
                ) =>
            {
                let lit = lit.clone();
                let LitKind::Int(n) = lit.kind else {
                    unreachable!("an integer literal")
                };
                if other.is_float() {
                    return self.coerce(v, other);
                }
                self.check_fits(&lit, other);
                let sign = if lit.neg { "-" } else { "" };
                Val::new(format!("{sign}{}", int_text(n)), other.clone(), !lit.neg)
            }
            _ if v.ty == CTy::Index && other.is_concrete() => self.coerce(v, other),
            // Two `for` variables, or one and an untyped literal: C++ compares the i64s.
            _ if v.ty == CTy::Index => v,
            _ => self.settle(v, other),
        }
    }
}
