//! C++ types of values: spelling them, unifying the two sides of an operator, the types of
//! annotations and signatures, and of fields and elements.

use super::{CTy, Lowerer};
use crate::ir::{StructRef, Ty};
use crate::names::{field_name, struct_name};
use proc_macro2::Span;
use scan_core::PrimType;

/// Tuples lower to `rs_tuple2` .. `rs_tuple6` (scan-core/templates/rust_semantics.cu.tera).
pub(super) const MAX_TUPLE: usize = 6;

impl Lowerer<'_> {
    pub(super) fn cpp_type(&self, ty: &CTy) -> String {
        match ty {
            CTy::Prim(p) => p.name().to_string(),
            CTy::Bool => "bool".into(),
            CTy::Struct(s) => struct_name(s),
            CTy::Array(t, n) => format!("rs_array<{}, {n}>", self.cpp_type(t)),
            CTy::Tuple(ts) => format!(
                "rs_tuple{}<{}>",
                ts.len(),
                ts.iter()
                    .map(|t| self.cpp_type(t))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            CTy::Opaque { cpp, .. } => cpp.clone(),
            CTy::IntLit => "i32".into(),
            CTy::FloatLit => "f64".into(),
            CTy::Index => "i64".into(),
            CTy::Never => "void".into(),
        }
    }

    /// The type to declare a local of type `ty` with (`auto` where C++ knows better).
    pub(super) fn decl_type(&self, ty: &CTy) -> String {
        match ty {
            CTy::Opaque { .. } => "auto".into(),
            t => self.cpp_type(t),
        }
    }

    pub(super) fn unify(&self, a: &CTy, b: &CTy) -> CTy {
        match (a, b) {
            (CTy::Never, x) | (x, CTy::Never) => x.clone(),
            (x, y) if x.is_lit() && y.is_concrete() => y.clone(),
            (x, y) if y.is_lit() && x.is_concrete() => x.clone(),
            (CTy::Index, y) if y.is_concrete() => y.clone(),
            (x, CTy::Index) if x.is_concrete() => x.clone(),
            (CTy::Index, _) | (_, CTy::Index) => CTy::Index,
            (CTy::Opaque { .. }, CTy::Prim(p)) => CTy::Prim(*p),
            (x, _) => x.clone(),
        }
    }

    /// The Rust name of the struct a struct literal, pattern or type names.
    pub(super) fn struct_of(&mut self, r: &StructRef, span: Span) -> Option<String> {
        match r {
            StructRef::Elem => match &self.ctx.elem_struct {
                Some(s) => Some(s.clone()),
                None => {
                    self.error(span, "the element type is a primitive, not a struct");
                    None
                }
            },
            StructRef::SelfTy => match &self.self_ty {
                Some(s) => Some(s.clone()),
                None => {
                    self.error(span, "`Self` has no meaning here");
                    None
                }
            },
            StructRef::Named(n) => Some(n.clone()),
        }
    }

    /// The type of an annotation or a helper's signature.
    pub(super) fn ty_cty(&mut self, ty: &Ty, span: Span) -> Option<CTy> {
        Some(match ty {
            Ty::Prim(p) => CTy::Prim(*p),
            Ty::Bool => CTy::Bool,
            Ty::Struct(r) => CTy::Struct(self.struct_of(r, span)?),
            Ty::Array(elem, len) => {
                let elem = self.ty_cty(elem, span)?;
                let n = self.const_len(len)?;
                CTy::Array(Box::new(elem), n)
            }
            Ty::Tuple(ts) => {
                if ts.len() > MAX_TUPLE {
                    self.error(
                        span,
                        format!("tuples of more than {MAX_TUPLE} elements cannot be lowered to CUDA: use a struct"),
                    );
                    return None;
                }
                let ts: Option<Vec<CTy>> = ts.iter().map(|t| self.ty_cty(t, span)).collect();
                CTy::Tuple(ts?)
            }
        })
    }

    /// An array length: a constant expression that is not negative.
    fn const_len(&mut self, len: &crate::ir::Expr) -> Option<u64> {
        match self.const_eval(len) {
            Some(n) if n >= 0 => Some(n as u64),
            _ => {
                self.not_constant(
                    len,
                    "an array length must be a constant (a literal or a `const`) in a lowered operator",
                );
                None
            }
        }
    }

    /// `base.f`: the field's C++ type is `decltype(S::f)` whatever is known about `S`.
    pub(super) fn field_ty(&mut self, base: &CTy, field: &str) -> Option<CTy> {
        let f = field_name(field);
        let (cpp, known_struct) = match base {
            CTy::Struct(s) => (
                format!("decltype({}::{f})", struct_name(s)),
                Some(s.clone()),
            ),
            CTy::Opaque { cpp, known } => (
                format!("decltype({cpp}::{f})"),
                match known.as_deref() {
                    Some(CTy::Struct(s)) => Some(s.clone()),
                    _ => None,
                },
            ),
            _ => return None,
        };
        let known = known_struct.and_then(|s| self.known_field(&s, field));
        Some(CTy::opaque(cpp, known))
    }

    /// The declared type of `S::field` when `S`'s declaration is visible.
    fn known_field(&mut self, s: &str, field: &str) -> Option<CTy> {
        let info = self.ctx.structs.iter().find(|i| i.name == s)?;
        let (_, ty) = info.fields.iter().find(|(n, _)| n == field)?;
        let ty = ty.clone();
        self.known_syn_type(&ty)
    }

    /// A field's declared type, as far as lowering needs it for checks (an array length may
    /// be a visible `const`).
    fn known_syn_type(&mut self, ty: &syn::Type) -> Option<CTy> {
        if let Some(p) = crate::element::prim_of_type(ty) {
            return Some(CTy::Prim(p));
        }
        match ty {
            syn::Type::Array(a) => {
                let elem = self.known_syn_type(&a.elem)?;
                let n = match &a.len {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(n),
                        ..
                    }) => n.base10_parse().ok()?,
                    syn::Expr::Path(p) => {
                        let name = p.path.segments.last()?.ident.to_string();
                        let before = self.ctx.errors.len();
                        let v = self.const_named(&name).and_then(|_| {
                            let e = crate::ir::Expr {
                                kind: crate::ir::ExprKind::Var(name),
                                span: p.path.segments.last()?.ident.span(),
                            };
                            self.const_eval(&e)
                        });
                        self.ctx.errors.truncate(before);
                        u64::try_from(v?).ok()?
                    }
                    _ => return None,
                };
                Some(CTy::Array(Box::new(elem), n))
            }
            _ => match crate::element::simple_type_name(ty)?.as_str() {
                "bool" => Some(CTy::Bool),
                name if PrimType::from_name(name).is_none() => Some(CTy::Struct(name.to_string())),
                _ => None,
            },
        }
    }

    /// The element type of an array (`rs_array`'s `elem` where only C++ knows the array).
    pub(super) fn index_ty(&self, base: &CTy) -> Option<CTy> {
        match base {
            CTy::Array(t, _) => Some((**t).clone()),
            CTy::Opaque { cpp, known } => {
                let known = match known.as_deref() {
                    Some(CTy::Array(t, _)) => Some((**t).clone()),
                    _ => None,
                };
                Some(CTy::opaque(format!("{cpp}::elem"), known))
            }
            _ => None,
        }
    }

    /// The length of an array, where known.
    pub(super) fn array_len(base: &CTy) -> Option<u64> {
        match base.resolved() {
            Some(CTy::Array(_, n)) => Some(*n),
            _ => None,
        }
    }
}
