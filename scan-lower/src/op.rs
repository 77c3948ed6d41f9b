//! `#[scan_op] impl ScanOp for Op { ... }`: the shape check (its own pass), then lowering.

use crate::emit::{Ctx, ElemRef, Lowerer};
use crate::error::Errors;
use crate::ir::{collect_items, Builder, Item, StructInfo};
use scan_core::{ElementType, OpSpec, PrimType};
use syn::spanned::Spanned;

impl std::fmt::Debug for LoweredOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoweredOp")
            .field("name", &self.name)
            .field("elem_ty", &crate::debug::Tokens(&self.elem_ty))
            .field("elem", &self.elem)
            .field("lhs", &self.lhs)
            .field("rhs", &self.rhs)
            .field("combine_body", &self.combine_body)
            .field("identity_body", &self.identity_body)
            .finish()
    }
}

impl std::fmt::Debug for ImplShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImplShape")
            .field("name", &self.name)
            .field("elem_ty", &self.elem_ty.as_ref().map(crate::debug::Tokens))
            .field("has_identity", &self.has_identity)
            .field("has_combine", &self.has_combine)
            .field("bad_identity", &self.bad_identity)
            .field("bad_combine", &self.bad_combine)
            .field("has_device_op", &self.has_device_op)
            .field("elem_unsupported", &self.elem_unsupported)
            .finish()
    }
}

/// An operator lowered to C++, before its element type is resolved to a layout (the macro
/// resolves it at compile time through `ScanElement`, the CLI from the file's struct).
#[derive(Clone)]
pub struct LoweredOp {
    /// The operator's name: the self type's last path segment.
    pub name: String,
    /// `type Elem = ...;` as written.
    pub elem_ty: syn::Type,
    /// The element type as the lowering resolved it: a primitive, or a struct by name.
    pub elem: ElemRef,
    /// C++ names of combine's parameters (the earlier and the later element).
    pub lhs: String,
    /// See `lhs`.
    pub rhs: String,
    /// `combine`'s body as C++ statements ([`OpSpec::combine_body`]).
    pub combine_body: String,
    /// `identity`'s body as C++ statements ([`OpSpec::identity_body`]).
    pub identity_body: String,
}

impl LoweredOp {
    /// The operator model of this operator, once its element type is resolved to `element`
    /// (a primitive, or the struct's layout).
    pub fn to_op_spec(&self, element: ElementType) -> OpSpec {
        OpSpec {
            name: self.name.clone(),
            element,
            lhs: self.lhs.clone(),
            rhs: self.rhs.clone(),
            combine_body: self.combine_body.clone(),
            identity_body: self.identity_body.clone(),
        }
    }
}

/// What the shape check found: which items are present and well-formed. The macro uses it to
/// emit stubs for broken items, so the user sees only the real errors, not rustc's follow-ups.
#[derive(Clone, Default)]
pub struct ImplShape {
    /// The operator's name (the self type's last path segment), when the impl names one.
    pub name: Option<String>,
    /// `type Elem = ...;` as written, when present.
    pub elem_ty: Option<syn::Type>,
    /// Whether `fn identity` is present (well-formed or not).
    pub has_identity: bool,
    /// Whether `fn combine` is present (well-formed or not).
    pub has_combine: bool,
    /// identity exists but its signature is wrong (the macro replaces it by a stub).
    pub bad_identity: bool,
    /// combine exists but its signature is wrong.
    pub bad_combine: bool,
    /// The impl defines `device_op`, which `#[scan_op]` generates itself (an error).
    pub has_device_op: bool,
    /// `type Elem` names a Rust primitive the GPU does not have (`u128`, `usize`).
    pub elem_unsupported: bool,
}

use crate::element::type_string;

fn self_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| s.ident.to_string())
        }
        syn::Type::Group(g) => self_name(&g.elem),
        _ => None,
    }
}

/// The element type's name as a path's last segment (`crate::ty::Affine` -> `Affine`).
fn elem_name(ty: &syn::Type) -> Option<String> {
    self_name(ty)
}

/// Pass 1: the impl's shape and the signatures. Collects every problem.
pub fn check_impl(item: &syn::ItemImpl, errors: &mut Errors) -> ImplShape {
    let mut shape = ImplShape::default();
    let impl_span = item.impl_token.span;
    match &item.trait_ {
        Some((bang, path, _)) => {
            if bang.is_some() || path.segments.last().is_none_or(|s| s.ident != "ScanOp") {
                errors.push(
                    path.span(),
                    "#[scan_op] goes on `impl ScanOp for YourOp { ... }`",
                );
            }
        }
        None => errors.push(
            item.self_ty.span(),
            "#[scan_op] goes on `impl ScanOp for YourOp { ... }`, not on an inherent impl",
        ),
    }
    if !item.generics.params.is_empty() {
        errors.push(
            item.generics.span(),
            "#[scan_op] cannot lower a generic impl: the GPU code is generated for one concrete element type (write one impl per type)",
        );
    }
    shape.name = self_name(&item.self_ty);
    if shape.name.is_none() {
        errors.push(
            item.self_ty.span(),
            "#[scan_op] needs a named operator type (`impl ScanOp for Compose`)",
        );
    }

    let mut shape_elem_invalid = false;
    for it in &item.items {
        match it {
            syn::ImplItem::Type(t) if t.ident == "Elem" => {
                if let Some(hint) = crate::element::simple_type_name(&t.ty)
                    .and_then(|n| crate::element::unsupported_prim(&n))
                {
                    errors.push(
                        t.ty.span(),
                        format!("`type Elem = {};`: {hint}", type_string(&t.ty)),
                    );
                    shape.elem_unsupported = true;
                }
                match &t.ty {
                    syn::Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.arguments.is_none()) => {}
                    other => errors.push(
                        other.span(),
                        format!(
                            "`type Elem = {};` cannot be a GPU element: use a primitive or a #[derive(ScanElement)] #[repr(C)] struct",
                            type_string(other)
                        ),
                    ),
                }
                shape.elem_ty = Some(t.ty.clone());
                shape_elem_invalid = !matches!(&t.ty, syn::Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.arguments.is_none()));
            }
            syn::ImplItem::Fn(f) if f.sig.ident == "device_op" => {
                shape.has_device_op = true;
                errors.push(
                    f.sig.ident.span(),
                    "`device_op` is generated by #[scan_op]: remove this definition",
                );
            }
            _ => {}
        }
    }
    if shape.elem_ty.is_none() {
        errors.push(
            impl_span,
            "missing `type Elem = ...;`: the element type of the scan (a primitive or a #[derive(ScanElement)] struct)",
        );
    }
    let elem_shown = shape
        .elem_ty
        .as_ref()
        .map(type_string)
        .unwrap_or_else(|| "Elem".into());
    let builder = Builder {
        errors: &mut Errors::new(),
        elem_name: shape.elem_ty.as_ref().and_then(elem_name),
    };
    // An invalid `type Elem` is reported once; signatures are not compared against it.
    let is_elem = |ty: &syn::Type| {
        shape_elem_invalid || builder.is_elem_type(ty) || prim_matches(shape.elem_ty.as_ref(), ty)
    };

    let identity = find_fn(item, "identity");
    let combine = find_fn(item, "combine");
    match identity {
        None => errors.push(
            impl_span,
            format!("missing `fn identity() -> {elem_shown}`: the operator's identity element (combine(identity(), x) == x)"),
        ),
        Some(f) => {
            shape.has_identity = true;
            let before = errors.len();
            common_sig_checks(&f.sig, errors);
            if !f.sig.inputs.is_empty() {
                errors.push(
                    f.sig.inputs.span(),
                    format!("`identity` takes no arguments: `fn identity() -> {elem_shown}`"),
                );
            }
            check_return(&f.sig, &elem_shown, &is_elem, errors, "identity");
            shape.bad_identity = errors.len() > before;
        }
    }
    match combine {
        None => errors.push(
            impl_span,
            format!(
                "missing `fn combine(lhs: {elem_shown}, rhs: {elem_shown}) -> {elem_shown}`: the associative operator"
            ),
        ),
        Some(f) => {
            shape.has_combine = true;
            let before = errors.len();
            common_sig_checks(&f.sig, errors);
            if f.sig.inputs.len() != 2 {
                errors.push(
                    if f.sig.inputs.is_empty() { f.sig.paren_token.span.join() } else { f.sig.inputs.span() },
                    format!(
                        "`combine` takes exactly two elements, found {}: `fn combine(lhs: {elem_shown}, rhs: {elem_shown}) -> {elem_shown}`",
                        f.sig.inputs.len()
                    ),
                );
            }
            for arg in &f.sig.inputs {
                match arg {
                    syn::FnArg::Receiver(r) => errors.push(
                        r.span(),
                        "`combine` takes no `self`: `fn combine(lhs: Elem, rhs: Elem) -> Elem`",
                    ),
                    syn::FnArg::Typed(pt) => {
                        if !is_elem(&pt.ty) {
                            errors.push(
                                pt.ty.span(),
                                format!(
                                    "`combine` takes its elements by value: expected `{elem_shown}`, found `{}`",
                                    type_string(&pt.ty)
                                ),
                            );
                        }
                        if !matches!(&*pt.pat, syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none())
                            && !matches!(&*pt.pat, syn::Pat::Wild(_))
                        {
                            errors.push(
                                pt.pat.span(),
                                "`combine`'s parameters must be plain names (destructuring cannot be lowered to CUDA)",
                            );
                        }
                    }
                }
            }
            check_return(&f.sig, &elem_shown, &is_elem, errors, "combine");
            shape.bad_combine = errors.len() > before;
        }
    }
    shape
}

fn prim_matches(elem: Option<&syn::Type>, ty: &syn::Type) -> bool {
    match (
        elem.and_then(crate::element::prim_of_type),
        crate::element::prim_of_type(ty),
    ) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

fn find_fn<'a>(item: &'a syn::ItemImpl, name: &str) -> Option<&'a syn::ImplItemFn> {
    item.items.iter().find_map(|it| match it {
        syn::ImplItem::Fn(f) if f.sig.ident == name => Some(f),
        _ => None,
    })
}

fn common_sig_checks(sig: &syn::Signature, errors: &mut Errors) {
    if !sig.generics.params.is_empty() {
        errors.push(
            sig.generics.span(),
            format!("`{}` cannot be generic", sig.ident),
        );
    }
    if let Some(a) = &sig.asyncness {
        errors.push(a.span, format!("`{}` cannot be async", sig.ident));
    }
    if let Some(u) = &sig.unsafety {
        errors.push(u.span, format!("`{}` cannot be unsafe", sig.ident));
    }
}

fn check_return(
    sig: &syn::Signature,
    elem_shown: &str,
    is_elem: &dyn Fn(&syn::Type) -> bool,
    errors: &mut Errors,
    which: &str,
) {
    match &sig.output {
        syn::ReturnType::Default => errors.push(
            sig.paren_token.span.close(),
            format!("`{which}` must return the element: add `-> {elem_shown}`"),
        ),
        syn::ReturnType::Type(_, ty) => {
            if !is_elem(ty) {
                errors.push(
                    ty.span(),
                    format!(
                        "`{which}` must return the element type `{elem_shown}`, found `{}`",
                        type_string(ty)
                    ),
                );
            }
        }
    }
}

/// The element of an impl as lowering sees it: a primitive or a struct by name.
pub fn elem_ref(elem_ty: &syn::Type) -> Option<ElemRef> {
    if let Some(p) = crate::element::prim_of_type(elem_ty) {
        return Some(ElemRef::Prim(p));
    }
    elem_name(elem_ty).map(ElemRef::Struct)
}

/// What an operator sees beside its own impl: the `const`s, `fn`s and inherent impls of the
/// `#[scan_op] mod` that holds it (empty for a lone `#[scan_op] impl`), and the struct
/// declarations that are visible (used for checks only, never for the generated text).
#[derive(Clone, Default)]
pub struct Scope {
    items: Vec<Item>,
    structs: Vec<StructInfo>,
}

impl Scope {
    /// The scope of a `#[scan_op] mod` with these items.
    pub fn module(items: &[syn::Item]) -> Scope {
        let (items, structs) = collect_items(items);
        Scope { items, structs }
    }

    pub(crate) fn add_structs(&mut self, items: &[syn::Item]) {
        let (_, structs) = collect_items(items);
        for s in structs {
            if !self.structs.iter().any(|t| t.name == s.name) {
                self.structs.push(s);
            }
        }
    }
}

/// Parses, checks and lowers a lone `#[scan_op] impl ScanOp for Op { ... }`. Every mistake
/// (shape, signatures, unsupported constructs in both bodies) is reported together.
pub fn lower_impl(item: &syn::ItemImpl) -> Result<LoweredOp, Errors> {
    lower_impl_in(item, &Scope::default())
}

/// As [`lower_impl`], for an operator that sees `scope`.
pub fn lower_impl_in(item: &syn::ItemImpl, scope: &Scope) -> Result<LoweredOp, Errors> {
    let mut errors = Errors::new();
    let shape = check_impl(item, &mut errors);
    if shape.elem_unsupported {
        // Every use of the element in the bodies would be a follow-up of that one error.
        return Err(errors);
    }
    let elem_ty = shape.elem_ty.clone();
    let elem = elem_ty.as_ref().and_then(elem_ref);
    let elem_for_lowering = elem.clone().unwrap_or(ElemRef::Prim(PrimType::I32));
    let elem_name = elem_ty.as_ref().and_then(elem_name);
    let op_name = shape.name.clone().unwrap_or_default();
    let mut ctx = Ctx::new(&elem_for_lowering, &scope.items, scope.structs.clone());

    let mut lower_fn =
        |f: &syn::ImplItemFn, params: &[(Option<String>, &str)]| -> (Vec<String>, String) {
            let block = Builder {
                errors: &mut ctx.errors,
                elem_name: elem_name.clone(),
            }
            .block(&f.block);
            let mut lw = Lowerer::operator_fn(&mut ctx, &op_name, &elem_for_lowering);
            let names = params
                .iter()
                .map(|(n, fb)| lw.param(n.as_deref(), fb))
                .collect();
            (names, lw.body(&block))
        };

    // A function whose signature is wrong is reported as such; its body is not lowered (its
    // parameters are not the elements, so every use of them would be a follow-up error).
    let mut identity_body = String::new();
    if let Some(f) = find_fn(item, "identity").filter(|_| !shape.bad_identity) {
        identity_body = lower_fn(f, &[]).1;
    }
    let (mut lhs, mut rhs, mut combine_body) =
        (String::from("lhs"), String::from("rhs"), String::new());
    if let Some(f) = find_fn(item, "combine").filter(|_| !shape.bad_combine) {
        let mut params: Vec<Option<String>> = f
            .sig
            .inputs
            .iter()
            .map(|a| match a {
                syn::FnArg::Typed(pt) => match &*pt.pat {
                    syn::Pat::Ident(pi) => Some(pi.ident.to_string()),
                    _ => None,
                },
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        params.resize(2, None);
        let (names, body) = lower_fn(f, &[(params[0].clone(), "lhs"), (params[1].clone(), "rhs")]);
        lhs = names[0].clone();
        rhs = names[1].clone();
        combine_body = body;
    }
    errors.extend(ctx.errors);
    let Some(elem) = elem else {
        return Err(errors);
    };
    errors.finish(LoweredOp {
        name: op_name,
        elem_ty: elem_ty.expect("elem checked"),
        elem,
        lhs,
        rhs,
        combine_body,
        identity_body,
    })
}

/// Whether an attribute is `#[scan_op]` (or `#[scangen::scan_op]`).
pub fn is_scan_op_attr(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "scan_op")
}
