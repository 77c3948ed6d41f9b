//! Patterns (`let`, `match`, `if let`, parameters) and types (annotations, signatures) from syn.

use super::{Builder, Expr, ExprKind, Pat, PatKind, StructRef, Ty, UnOp};
use quote::ToTokens;
use syn::spanned::Spanned;

impl Builder<'_> {
    fn pat_error(&mut self, span: proc_macro2::Span, msg: impl Into<String>) -> Pat {
        self.errors.push(span, msg);
        Pat {
            kind: PatKind::Error(Vec::new()),
            span,
        }
    }

    pub(crate) fn pat(&mut self, p: &syn::Pat) -> Pat {
        let span = p.span();
        let kind = match p {
            syn::Pat::Wild(_) | syn::Pat::Rest(_) => PatKind::Wild,
            syn::Pat::Ident(pi) if pi.ident == "None" && pi.subpat.is_none() => {
                return self.pat_error(
                    span,
                    "the pattern `None` cannot be lowered to CUDA: enums (and `Option`) are not GPU elements; use a struct with a `bool` flag (`valid: bool`) and match on it",
                );
            }
            syn::Pat::Ident(pi) => {
                if pi.by_ref.is_some() {
                    return self.pat_error(
                        span,
                        "`ref` bindings cannot be lowered to CUDA: bind by value (elements are Copy)",
                    );
                }
                PatKind::Bind {
                    name: pi.ident.to_string(),
                    mutable: pi.mutability.is_some(),
                    sub: pi.subpat.as_ref().map(|(_, s)| Box::new(self.pat(s))),
                }
            }
            syn::Pat::Lit(l) => PatKind::Value(self.pat_lit(l)),
            syn::Pat::Path(p) => PatKind::Value(self.path_expr(p)),
            syn::Pat::Range(r) => {
                let bound = |b: &mut Self, e: &Option<Box<syn::Expr>>| {
                    e.as_deref().map(|e| match e {
                        syn::Expr::Lit(l) => b.pat_lit(l),
                        other => b.expr(other),
                    })
                };
                PatKind::Range {
                    lo: bound(self, &r.start),
                    hi: bound(self, &r.end),
                    inclusive: matches!(r.limits, syn::RangeLimits::Closed(_)),
                }
            }
            syn::Pat::Or(o) => PatKind::Or(o.cases.iter().map(|c| self.pat(c)).collect()),
            syn::Pat::Paren(p) => return self.pat(&p.pat),
            syn::Pat::Tuple(t) => {
                if t.elems.iter().any(|e| matches!(e, syn::Pat::Rest(_))) {
                    return self.pat_error(
                        span,
                        "`..` in a tuple pattern cannot be lowered to CUDA: write `_` for each element",
                    );
                }
                PatKind::Tuple(t.elems.iter().map(|e| self.pat(e)).collect())
            }
            syn::Pat::Struct(s) => {
                let Some(ty) = self.struct_ref(s.qself.is_some(), &s.path) else {
                    return Pat {
                        kind: PatKind::Error(bound_names(p)),
                        span,
                    };
                };
                let mut fields = Vec::new();
                for f in &s.fields {
                    match &f.member {
                        syn::Member::Named(n) => fields.push((n.to_string(), self.pat(&f.pat))),
                        syn::Member::Unnamed(_) => {
                            self.pat_error(f.member.span(), "tuple structs cannot be lowered to CUDA: give the fields names");
                        }
                    }
                }
                PatKind::Struct { ty, fields }
            }
            syn::Pat::Slice(s) => {
                if s.elems.iter().any(|e| matches!(e, syn::Pat::Rest(_))) {
                    return self.pat_error(
                        span,
                        "`..` in an array pattern cannot be lowered to CUDA: write `_` for each element",
                    );
                }
                PatKind::Array(s.elems.iter().map(|e| self.pat(e)).collect())
            }
            syn::Pat::TupleStruct(ts) => return self.tuple_struct_pat(ts),
            syn::Pat::Reference(r) => return self.pat(&r.pat),
            syn::Pat::Type(t) => {
                return self.pat_error(
                    t.colon_token.span,
                    "a type annotation inside a pattern cannot be lowered to CUDA: annotate the whole `let`",
                )
            }
            _ => {
                let shown = p.to_token_stream().to_string();
                return self.pat_error(span, format!("the pattern `{shown}` cannot be lowered to CUDA"));
            }
        };
        Pat { kind, span }
    }

    /// `Some(x)` and the like: no GPU element is an enum.
    fn tuple_struct_pat(&mut self, ts: &syn::PatTupleStruct) -> Pat {
        let name = ts
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let mut p = self.pat_error(
            ts.span(),
            format!(
                "the pattern `{name}(..)` cannot be lowered to CUDA: enums (and `Option`) are not GPU elements; use a struct with a `bool` flag (`valid: bool`) and match on it"
            ),
        );
        p.kind = PatKind::Error(ts.elems.iter().flat_map(bound_names).collect());
        p
    }

    /// A literal pattern: syn keeps `-1` as one (negative) literal.
    fn pat_lit(&mut self, l: &syn::ExprLit) -> Expr {
        let span = l.span();
        let (neg, lit) = match &l.lit {
            syn::Lit::Int(i) if i.base10_digits().starts_with('-') => {
                let text = format!("{}{}", &i.base10_digits()[1..], i.suffix());
                (true, syn::Lit::Int(syn::LitInt::new(&text, i.span())))
            }
            syn::Lit::Float(f) if f.base10_digits().starts_with('-') => {
                let text = format!("{}{}", &f.base10_digits()[1..], f.suffix());
                (true, syn::Lit::Float(syn::LitFloat::new(&text, f.span())))
            }
            other => (false, other.clone()),
        };
        let e = match self.lit(&lit) {
            Some(lit) => Expr {
                kind: ExprKind::Lit(lit),
                span,
            },
            None => super::err_expr(span),
        };
        if neg {
            Expr {
                kind: ExprKind::Unary(UnOp::Neg, Box::new(e)),
                span,
            }
        } else {
            e
        }
    }

    /// A type in a `let` annotation or a helper's signature. `what` names the place for the
    /// error message (`locals`, `helper parameters`).
    pub(crate) fn ty(&mut self, ty: &syn::Type, what: &str) -> Option<Ty> {
        if let Some(p) = crate::element::body_prim(ty) {
            return Some(Ty::Prim(p));
        }
        match ty {
            syn::Type::Group(g) => return self.ty(&g.elem, what),
            syn::Type::Paren(p) => return self.ty(&p.elem, what),
            // A shared reference to a Copy value is passed as the value.
            syn::Type::Reference(r) if r.mutability.is_none() => return self.ty(&r.elem, what),
            syn::Type::Array(a) => {
                let elem = self.ty(&a.elem, what)?;
                let len = self.expr(&a.len);
                return Some(Ty::Array(Box::new(elem), Box::new(len)));
            }
            syn::Type::Tuple(t) if !t.elems.is_empty() => {
                let elems: Option<Vec<Ty>> = t.elems.iter().map(|e| self.ty(e, what)).collect();
                return elems.map(Ty::Tuple);
            }
            _ => {}
        }
        if let Some(name) = crate::element::simple_type_name(ty) {
            if name == "bool" {
                return Some(Ty::Bool);
            }
            if let Some(hint) = crate::element::unsupported_prim(&name) {
                self.errors.push(ty.span(), hint);
                return None;
            }
        }
        if self.is_elem_type(ty) {
            return Some(Ty::Struct(StructRef::Elem));
        }
        if let syn::Type::Path(p) = ty {
            if p.qself.is_none() && p.path.segments.iter().all(|s| s.arguments.is_none()) {
                let last = p.path.segments.last().expect("non-empty").ident.to_string();
                return Some(Ty::Struct(if last == "Self" {
                    StructRef::SelfTy
                } else {
                    StructRef::Named(last)
                }));
            }
        }
        let shown = crate::element::type_string(ty);
        self.errors.push(
            ty.span(),
            format!(
                "type `{shown}` cannot be used for {what} in a lowered operator: use a primitive ({}), `bool`, a #[derive(ScanElement)] struct, an array `[T; N]` or a tuple of those",
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
}

/// The names a syn pattern binds.
fn bound_names(p: &syn::Pat) -> Vec<String> {
    match p {
        syn::Pat::Ident(pi) => {
            let mut v = vec![pi.ident.to_string()];
            if let Some((_, sub)) = &pi.subpat {
                v.extend(bound_names(sub));
            }
            v
        }
        syn::Pat::Or(o) => o.cases.iter().flat_map(bound_names).collect(),
        syn::Pat::Paren(x) => bound_names(&x.pat),
        syn::Pat::Reference(x) => bound_names(&x.pat),
        syn::Pat::Tuple(t) => t.elems.iter().flat_map(bound_names).collect(),
        syn::Pat::TupleStruct(t) => t.elems.iter().flat_map(bound_names).collect(),
        syn::Pat::Slice(t) => t.elems.iter().flat_map(bound_names).collect(),
        syn::Pat::Struct(s) => s.fields.iter().flat_map(|f| bound_names(&f.pat)).collect(),
        syn::Pat::Type(t) => bound_names(&t.pat),
        _ => Vec::new(),
    }
}
