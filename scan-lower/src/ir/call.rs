//! Paths, calls and method calls from syn: constants of primitives, built-in methods and
//! functions, and calls of the user's helpers (resolved by lowering).

use super::{err_expr, path_string, Builder, Const, Expr, ExprKind, StructRef};
use crate::methods::{self, Method};
use proc_macro2::Span;
use scan_core::{half, PrimType};
use syn::spanned::Spanned;

/// The constants of `std::f32::consts` and `std::f64::consts`, at each type's precision.
fn float_const(ty: PrimType, name: &str) -> Option<f64> {
    macro_rules! consts {
        ($($n:ident),*) => {
            match (ty, name) {
                $(
                    (PrimType::F32, stringify!($n)) => Some(std::f32::consts::$n as f64),
                    (PrimType::F64, stringify!($n)) => Some(std::f64::consts::$n),
                )*
                _ => None,
            }
        };
    }
    consts!(
        PI,
        TAU,
        E,
        SQRT_2,
        LN_2,
        LN_10,
        LOG2_E,
        LOG10_E,
        LOG2_10,
        LOG10_2,
        FRAC_PI_2,
        FRAC_PI_3,
        FRAC_PI_4,
        FRAC_PI_6,
        FRAC_PI_8,
        FRAC_1_PI,
        FRAC_2_PI,
        FRAC_2_SQRT_PI,
        FRAC_1_SQRT_2
    )
}

/// The associated constants of `half::f16` and `half::bf16`, by their bits.
fn half_const(prim: PrimType, name: &str) -> Option<u16> {
    macro_rules! consts {
        ($($n:ident),*) => {
            match (prim, name) {
                $(
                    (PrimType::F16, stringify!($n)) => Some(half::f16::$n.to_bits()),
                    (PrimType::BF16, stringify!($n)) => Some(half::bf16::$n.to_bits()),
                )*
                _ => None,
            }
        };
    }
    consts!(
        EPSILON,
        INFINITY,
        MAX,
        MIN,
        MIN_POSITIVE,
        NAN,
        NEG_INFINITY,
        MIN_POSITIVE_SUBNORMAL,
        MAX_SUBNORMAL,
        ONE,
        ZERO,
        NEG_ZERO,
        NEG_ONE,
        E,
        PI,
        FRAC_1_PI,
        FRAC_1_SQRT_2,
        FRAC_2_PI,
        FRAC_2_SQRT_PI,
        FRAC_PI_2,
        FRAC_PI_3,
        FRAC_PI_4,
        FRAC_PI_6,
        FRAC_PI_8,
        LN_10,
        LN_2,
        LOG10_E,
        LOG10_2,
        LOG2_E,
        LOG2_10,
        SQRT_2
    )
}

/// A path with the `half` crate's prefix taken off (`half::f16::MAX`, `scangen::half::f16`
/// -> `f16::MAX`), so the 2-byte floats are named as the primitives are.
pub(super) fn without_half_prefix<'a>(segs: &'a [&'a str]) -> &'a [&'a str] {
    match segs {
        ["scangen", "half", rest @ ..] | ["half", rest @ ..]
            if matches!(rest.first(), Some(&("f16" | "bf16"))) =>
        {
            rest
        }
        _ => segs,
    }
}

/// `i32::MAX`, `u8::BITS`, `f32::EPSILON`, `f64::MANTISSA_DIGITS`, ...
fn prim_const(prim: PrimType, name: &str) -> Option<Const> {
    if prim.is_half() {
        return half_const(prim, name).map(Const::HalfBits);
    }
    let float = prim.is_float();
    Some(match name {
        "MAX" => Const::Max,
        "MIN" => Const::Min,
        "BITS" if !float => Const::U32(prim.size() as u32 * 8),
        "INFINITY" if float => Const::Infinity,
        "NEG_INFINITY" if float => Const::NegInfinity,
        "NAN" if float => Const::Nan,
        "EPSILON" if float => Const::Epsilon,
        "MIN_POSITIVE" if float => Const::MinPositive,
        "RADIX" if float => Const::U32(2),
        "MANTISSA_DIGITS" if float => Const::U32(if prim == PrimType::F32 {
            f32::MANTISSA_DIGITS
        } else {
            f64::MANTISSA_DIGITS
        }),
        "DIGITS" if float => Const::U32(if prim == PrimType::F32 {
            f32::DIGITS
        } else {
            f64::DIGITS
        }),
        "MIN_EXP" if float => Const::I32(if prim == PrimType::F32 {
            f32::MIN_EXP
        } else {
            f64::MIN_EXP
        }),
        "MAX_EXP" if float => Const::I32(if prim == PrimType::F32 {
            f32::MAX_EXP
        } else {
            f64::MAX_EXP
        }),
        "MIN_10_EXP" if float => Const::I32(if prim == PrimType::F32 {
            f32::MIN_10_EXP
        } else {
            f64::MIN_10_EXP
        }),
        "MAX_10_EXP" if float => Const::I32(if prim == PrimType::F32 {
            f32::MAX_10_EXP
        } else {
            f64::MAX_10_EXP
        }),
        _ => return None,
    })
}

/// `crate::x::name`, `self::name`, `super::name` name an item of this crate: lowering
/// resolves it by its last segment, as it does a plain `name`.
fn crate_local(segs: &[&str]) -> bool {
    matches!(segs.first(), Some(&("crate" | "self" | "super")))
}

impl Builder<'_> {
    pub(super) fn path_expr(&mut self, p: &syn::ExprPath) -> Expr {
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
        let strs: Vec<&str> = segs.iter().map(String::as_str).collect();
        if segs.len() == 1 || crate_local(&strs) {
            return Expr {
                kind: ExprKind::Var(segs.last().expect("a path has a segment").clone()),
                span,
            };
        }
        // i32::MAX, f32::INFINITY, core::f32::NAN, std::f64::consts::PI, half::f16::MAX
        let tail = match without_half_prefix(&strs) {
            ["std" | "core", rest @ ..] => rest,
            rest => rest,
        };
        let kind = match tail {
            [ty, name] if crate::element::body_prim_name(ty).is_some() => {
                let prim = crate::element::body_prim_name(ty).expect("checked");
                prim_const(prim, name).map(|c| ExprKind::Const(prim, c))
            }
            [ty, "consts", name] if matches!(*ty, "f32" | "f64") => {
                let prim = PrimType::from_name(ty).expect("checked");
                float_const(prim, name).map(|v| ExprKind::Const(prim, Const::Float(v)))
            }
            [ty, name] => Some(ExprKind::AssocConst(
                self.type_name_ref(ty),
                name.to_string(),
            )),
            _ => None,
        };
        match kind {
            Some(kind) => Expr { kind, span },
            None => {
                let shown = segs.join("::");
                self.error(
                    span,
                    format!(
                        "`{shown}` cannot be lowered to CUDA: only locals, `const` items, associated constants of primitives (`i32::MAX`, `u8::BITS`, `f32::EPSILON`, `f16::ONE`, ...) and `std::f32::consts`/`std::f64::consts` can be used"
                    ),
                )
            }
        }
    }

    /// A type's name in a path (`Self`, `Affine`).
    fn type_name_ref(&self, name: &str) -> StructRef {
        if name == "Self" {
            StructRef::SelfTy
        } else if self.elem_name.as_deref() == Some(name) {
            StructRef::Elem
        } else {
            StructRef::Named(name.to_string())
        }
    }

    /// The struct a struct literal or pattern names (any struct: rustc has checked it exists,
    /// lowering checks that it is one the GPU knows).
    pub(super) fn struct_ref(&mut self, qself: bool, path: &syn::Path) -> Option<StructRef> {
        if qself || path.segments.iter().any(|s| !s.arguments.is_none()) {
            self.error(
                path.span(),
                "this struct path cannot be lowered to CUDA: name the struct plainly (`Affine { ... }`)",
            );
            return None;
        }
        if self.is_elem_path(path) {
            return Some(StructRef::Elem);
        }
        let last = path.segments.last()?.ident.to_string();
        Some(self.type_name_ref(&last))
    }

    pub(super) fn method_call(&mut self, m: &syn::ExprMethodCall) -> Expr {
        let span = m.span();
        if m.turbofish.is_some() {
            return self.error(
                m.method.span(),
                "turbofish (`::<T>`) cannot be lowered to CUDA",
            );
        }
        let recv = self.expr(&m.receiver);
        let args: Vec<Expr> = m.args.iter().map(|a| self.expr(a)).collect();
        Expr {
            kind: ExprKind::MethodCall {
                name: m.method.to_string(),
                name_span: m.method.span(),
                recv: Box::new(recv),
                args,
            },
            span,
        }
    }

    pub(crate) fn check_arity(&mut self, method: &Method, got: usize, span: Span) -> bool {
        if got != method.args.len() {
            self.errors.push(
                span,
                format!(
                    "`{}` takes {} argument(s) besides the receiver, found {got}",
                    method.name,
                    method.args.len()
                ),
            );
            return false;
        }
        true
    }

    pub(super) fn call(&mut self, c: &syn::ExprCall) -> Expr {
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
                "only functions can be called in a lowered operator (helpers written beside it, and the supported built-ins)",
            );
        };
        if p.qself.is_some() || p.path.segments.iter().any(|s| !s.arguments.is_none()) {
            return self.error(
                c.func.span(),
                "generic or qualified calls (`f::<T>()`, `<T as Trait>::f()`) cannot be lowered to CUDA",
            );
        }
        let segs: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let strs: Vec<&str> = segs.iter().map(String::as_str).collect();
        let shown = segs.join("::");
        // `f32::max(a, b)`, `i64::wrapping_add(a, b)`, `std::cmp::max(a, b)`,
        // `half::f16::from_f32(x)`.
        let builtin: Option<(Option<PrimType>, &str)> = match without_half_prefix(&strs) {
            ["std" | "core", "cmp", n @ ("min" | "max")] | ["cmp", n @ ("min" | "max")] => {
                Some((None, n))
            }
            [t, n] if crate::element::body_prim_name(t).is_some() => {
                Some((crate::element::body_prim_name(t), n))
            }
            ["Self", n @ ("combine" | "identity")] => {
                return self.error(
                    span,
                    format!("calling `Self::{n}` from inside the operator cannot be lowered to CUDA: move the shared computation into a helper function"),
                )
            }
            _ => None,
        };
        if let Some((ty, name)) = builtin {
            if name == "from_f64" && ty.is_some_and(PrimType::is_half) {
                return self.error(
                    c.func.span(),
                    format!(
                        "`{shown}` cannot be lowered to CUDA: `half` rounds an f64 to f16 differently depending on the host CPU (through f32 where the CPU converts in hardware); write `{}::from_f32(x as f32)`",
                        ty.expect("checked")
                    ),
                );
            }
            let Some(method) = methods::find(name) else {
                return self.error(
                    c.func.span(),
                    format!(
                        "cannot call `{shown}` in a lowered operator: the built-in functions are {}",
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
            if !self.check_arity(method, rest.len(), c.func.span()) {
                return err_expr(span);
            }
            return Expr {
                kind: ExprKind::Builtin {
                    method,
                    recv: Box::new(recv),
                    args: rest,
                    ty,
                },
                span,
            };
        }
        let (owner, name) = match strs.as_slice() {
            [name] => (None, name.to_string()),
            s if crate_local(s) => (None, s.last().expect("non-empty").to_string()),
            [ty, name] => (Some(self.type_name_ref(ty)), name.to_string()),
            _ => {
                return self.error(
                    c.func.span(),
                    format!(
                        "cannot call `{}` in a lowered operator: only helper functions written beside the operator and the built-ins ({}) can be called",
                        path_string(&p.path),
                        methods::call_list()
                    ),
                )
            }
        };
        Expr {
            kind: ExprKind::Call { owner, name, args },
            span,
        }
    }
}
