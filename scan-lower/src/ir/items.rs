//! The items an operator can use besides its own bodies: `const`s and helper functions (free
//! functions and the functions of inherent impls) declared inside its bodies, or beside it in a
//! `#[scan_op] mod`.
//!
//! Items are kept as syn and only converted (and so only checked) when lowering reaches a use:
//! a module may hold functions that only the CPU ever calls.

use super::{Builder, Pat, PatKind, StructRef, Ty};
use crate::debug::Tokens;
use proc_macro2::Span;
use std::fmt;
use std::rc::Rc;
use syn::spanned::Spanned;

impl fmt::Debug for ConstItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConstItem")
            .field("name", &self.name)
            .field("owner", &self.owner)
            .field("ty", &Tokens(&self.ty))
            .field("init", &Tokens(&self.init))
            .field("span", &self.span)
            .finish()
    }
}

impl fmt::Debug for FnItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnItem")
            .field("name", &self.name)
            .field("owner", &self.owner)
            .field("sig", &Tokens(&self.sig))
            .field("block", &Tokens(&self.block))
            .finish()
    }
}

impl fmt::Debug for StructInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields: Vec<_> = self.fields.iter().map(|(n, t)| (n, Tokens(t))).collect();
        f.debug_struct("StructInfo")
            .field("name", &self.name)
            .field("fields", &fields)
            .finish()
    }
}

pub(crate) struct ConstItem {
    pub name: String,
    /// The type of the `impl` it is declared in (`Self::K`, `Op::K`), by Rust name.
    pub owner: Option<String>,
    pub ty: syn::Type,
    pub init: syn::Expr,
    pub span: Span,
}

pub(crate) struct FnItem {
    pub name: String,
    /// The type of the `impl` it is declared in, by Rust name (`Self` inside it).
    pub owner: Option<String>,
    pub sig: syn::Signature,
    pub block: syn::Block,
}

#[derive(Clone, Debug)]
pub(crate) enum Item {
    Const(Rc<ConstItem>),
    Fn(Rc<FnItem>),
}

impl Item {
    pub fn name(&self) -> &str {
        match self {
            Item::Const(c) => &c.name,
            Item::Fn(f) => &f.name,
        }
    }
    pub fn owner(&self) -> Option<&str> {
        match self {
            Item::Const(c) => c.owner.as_deref(),
            Item::Fn(f) => f.owner.as_deref(),
        }
    }
}

/// A struct of the module or file, by its Rust name, for checks lowering can only make when
/// it knows field types (literal ranges, constant array indices).
#[derive(Clone)]
pub(crate) struct StructInfo {
    pub name: String,
    pub fields: Vec<(String, syn::Type)>,
}

fn const_item(c: &syn::ItemConst, owner: Option<&str>) -> Item {
    Item::Const(Rc::new(ConstItem {
        name: c.ident.to_string(),
        owner: owner.map(str::to_string),
        ty: (*c.ty).clone(),
        init: (*c.expr).clone(),
        span: c.ident.span(),
    }))
}

fn fn_item(sig: &syn::Signature, block: &syn::Block, owner: Option<&str>) -> Item {
    Item::Fn(Rc::new(FnItem {
        name: sig.ident.to_string(),
        owner: owner.map(str::to_string),
        sig: sig.clone(),
        block: block.clone(),
    }))
}

/// The last segment of an impl's self type (`impl Fill { ... }` -> `Fill`).
fn impl_owner(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| s.ident.to_string())
        }
        _ => None,
    }
}

/// The `const`s, `fn`s and inherent-impl items of a module, and its structs.
pub(crate) fn collect_items(items: &[syn::Item]) -> (Vec<Item>, Vec<StructInfo>) {
    let mut out = Vec::new();
    let mut structs = Vec::new();
    for item in items {
        match item {
            syn::Item::Const(c) => out.push(const_item(c, None)),
            syn::Item::Fn(f) => out.push(fn_item(&f.sig, &f.block, None)),
            syn::Item::Impl(i) if i.trait_.is_none() => {
                let owner = impl_owner(&i.self_ty);
                for it in &i.items {
                    match it {
                        syn::ImplItem::Const(c) => out.push(Item::Const(Rc::new(ConstItem {
                            name: c.ident.to_string(),
                            owner: owner.clone(),
                            ty: c.ty.clone(),
                            init: c.expr.clone(),
                            span: c.ident.span(),
                        }))),
                        syn::ImplItem::Fn(f) => {
                            out.push(fn_item(&f.sig, &f.block, owner.as_deref()))
                        }
                        _ => {}
                    }
                }
            }
            syn::Item::Struct(s) => {
                if let syn::Fields::Named(named) = &s.fields {
                    structs.push(StructInfo {
                        name: s.ident.to_string(),
                        fields: named
                            .named
                            .iter()
                            .map(|f| (f.ident.as_ref().expect("named").to_string(), f.ty.clone()))
                            .collect(),
                    });
                }
            }
            _ => {}
        }
    }
    (out, structs)
}

/// A helper's signature as lowering needs it.
pub(crate) struct FnSig {
    /// Parameters in order; `self` is a binding named `self` of type `Self`.
    pub params: Vec<(Pat, Option<Ty>)>,
    pub ret: Option<Ty>,
}

impl Builder<'_> {
    /// A `const` or `fn` declared inside a body.
    pub(super) fn block_item(&mut self, item: &syn::Item) -> Option<Item> {
        match item {
            syn::Item::Const(c) => Some(const_item(c, None)),
            syn::Item::Fn(f) => Some(fn_item(&f.sig, &f.block, None)),
            other => {
                self.errors.push(
                    other.span(),
                    "only `const` and `fn` items can be declared inside a lowered operator: declare structs and other items outside it",
                );
                None
            }
        }
    }

    /// Checks a helper's signature (no generics, no `async`/`unsafe`, values in and out).
    pub(crate) fn fn_sig(&mut self, f: &FnItem) -> FnSig {
        let sig = &f.sig;
        let name = &f.name;
        if !sig.generics.params.is_empty() {
            self.errors.push(
                sig.generics.span(),
                format!("helper `{name}` cannot be generic: the GPU code is generated for concrete types; write one function per type"),
            );
        }
        if let Some(a) = &sig.asyncness {
            self.errors
                .push(a.span, format!("helper `{name}` cannot be async"));
        }
        if let Some(u) = &sig.unsafety {
            self.errors
                .push(u.span, format!("helper `{name}` cannot be unsafe"));
        }
        if let Some(v) = &sig.variadic {
            self.errors
                .push(v.span(), format!("helper `{name}` cannot be variadic"));
        }
        let mut params = Vec::new();
        for arg in &sig.inputs {
            match arg {
                syn::FnArg::Receiver(r) => {
                    if r.reference.is_some() && r.mutability.is_some() {
                        self.errors.push(
                            r.span(),
                            format!("helper `{name}` cannot take `&mut self`: a lowered operator has no references to mutate through; take `self` and return the new value"),
                        );
                    }
                    params.push((
                        Pat {
                            kind: PatKind::Bind {
                                name: "self".into(),
                                mutable: r.mutability.is_some(),
                                sub: None,
                            },
                            span: r.span(),
                        },
                        Some(Ty::Struct(StructRef::SelfTy)),
                    ));
                }
                syn::FnArg::Typed(pt) => {
                    if let syn::Type::Reference(r) = &*pt.ty {
                        if r.mutability.is_some() {
                            self.errors.push(
                                pt.ty.span(),
                                format!("helper `{name}` cannot take `&mut` parameters: return the new value instead"),
                            );
                            params.push((self.pat(&pt.pat), None));
                            continue;
                        }
                    }
                    if let syn::Type::ImplTrait(_) = &*pt.ty {
                        self.errors.push(
                            pt.ty.span(),
                            format!(
                                "helper `{name}` cannot take `impl Trait`: name a concrete type"
                            ),
                        );
                        continue;
                    }
                    let pat = self.pat(&pt.pat);
                    let ty = self.ty(&pt.ty, "helper parameters");
                    params.push((pat, ty));
                }
            }
        }
        let ret = match &sig.output {
            syn::ReturnType::Default => {
                self.errors.push(
                    sig.ident.span(),
                    format!("helper `{name}` must return a value: a lowered function is pure, so one that returns nothing does nothing"),
                );
                None
            }
            syn::ReturnType::Type(_, ty) => self.ty(ty, "helper results"),
        };
        FnSig { params, ret }
    }
}
