//! `#[scan_op] impl ScanOp for Op { ... }`: the shape check (its own pass), then lowering.

use crate::emit::{Ctx, ElemRef, Lowerer};
use crate::error::Errors;
use crate::ir::{collect_items, Builder, Item, StructInfo};
use scan_core::{ElementType, OpSpec, PrimType, TransformSpec};
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
            .field(
                "transform",
                &self
                    .transform
                    .as_ref()
                    .map(|t| (&t.lift_params, &t.lift_body, &t.project_body)),
            )
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
            .field("bad_lift", &self.bad_lift)
            .field("bad_project", &self.bad_project)
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
    /// `fn lift` / `fn project`, when the impl has either (the other is then the identity).
    pub transform: Option<LoweredTransform>,
}

/// An operator's `lift` and `project` lowered to C++ (scan_core::TransformSpec before the
/// element's layout is known). A side the user did not write is the identity.
#[derive(Clone)]
pub struct LoweredTransform {
    /// The Rust type of each input array (`lift`'s parameters but the index), as written.
    pub inputs: Vec<(syn::Type, ElemRef)>,
    /// C++ names of `lift`'s parameters: the inputs, then the index.
    pub lift_params: Vec<String>,
    /// `lift`'s body lowered to C++ statements (ends in a `return` of the element).
    pub lift_body: String,
    /// The user wrote `fn lift` (else `lift(x, _) = x` on one array of elements).
    pub has_lift: bool,
    /// The Rust type `project` returns, as written.
    pub output: (syn::Type, ElemRef),
    /// C++ name of `project`'s parameter (the element).
    pub project_param: String,
    /// `project`'s body lowered to C++ statements (ends in a `return` of the output).
    pub project_body: String,
    /// The user wrote `fn project` (else `project(e) = e`).
    pub has_project: bool,
}

impl LoweredTransform {
    /// The transform for code generation, `element` being the operator's resolved element.
    pub fn to_transform_spec(&self, element: &ElementType) -> TransformSpec {
        let resolve = |r: &ElemRef| match r {
            ElemRef::Prim(p) => ElementType::Prim(*p),
            ElemRef::Struct(_) => element.clone(),
        };
        TransformSpec {
            inputs: self.inputs.iter().map(|(_, r)| resolve(r)).collect(),
            lift_params: self.lift_params.clone(),
            lift_body: self.lift_body.clone(),
            output: resolve(&self.output.1),
            project_param: self.project_param.clone(),
            project_body: self.project_body.clone(),
        }
    }
}

/// Most input arrays `lift` may read (scan_codegen::MAX_TRANSFORM_INPUTS).
pub const MAX_LIFT_INPUTS: usize = 8;

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
            word_form: None,
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
    /// `fn lift` exists but its signature is wrong.
    pub bad_lift: bool,
    /// `fn project` exists but its signature is wrong.
    pub bad_project: bool,
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
    if let Some(f) = find_fn(item, "lift") {
        let before = errors.len();
        common_sig_checks(&f.sig, errors);
        check_lift_sig(&f.sig, &elem_shown, &is_elem, errors);
        shape.bad_lift = errors.len() > before;
    }
    if let Some(f) = find_fn(item, "project") {
        let before = errors.len();
        common_sig_checks(&f.sig, errors);
        check_project_sig(&f.sig, &elem_shown, &is_elem, errors);
        shape.bad_project = errors.len() > before;
    }
    shape
}

/// A type an input or output array can hold: a GPU primitive (`bool` is not one).
fn array_prim(ty: &syn::Type) -> Option<PrimType> {
    let simple = crate::element::simple_type_name(ty);
    if simple
        .as_deref()
        .is_some_and(|n| crate::element::unsupported_prim(n).is_some())
    {
        return None;
    }
    crate::element::prim_of_type(ty)
}

fn plain_param(pat: &syn::Pat) -> bool {
    matches!(pat, syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none())
        || matches!(pat, syn::Pat::Wild(_))
}

/// `fn lift(<one value per input array>, index: u64) -> Elem`.
fn check_lift_sig(
    sig: &syn::Signature,
    elem_shown: &str,
    is_elem: &dyn Fn(&syn::Type) -> bool,
    errors: &mut Errors,
) {
    let usage = format!("`fn lift(x: i64, index: u64) -> {elem_shown}`, one parameter per input array, then the element's index");
    if sig.inputs.len() < 2 {
        errors.push(
            if sig.inputs.is_empty() {
                sig.paren_token.span.join()
            } else {
                sig.inputs.span()
            },
            format!("`lift` takes the input values and the element index: {usage}"),
        );
    } else if sig.inputs.len() - 1 > MAX_LIFT_INPUTS {
        errors.push(
            sig.inputs.span(),
            format!(
                "`lift` reads at most {MAX_LIFT_INPUTS} input arrays, found {}",
                sig.inputs.len() - 1
            ),
        );
    }
    let last = sig.inputs.len().saturating_sub(1);
    for (k, arg) in sig.inputs.iter().enumerate() {
        match arg {
            syn::FnArg::Receiver(r) => {
                errors.push(r.span(), format!("`lift` takes no `self`: {usage}"))
            }
            syn::FnArg::Typed(pt) => {
                if !plain_param(&pt.pat) {
                    errors.push(
                        pt.pat.span(),
                        "`lift`'s parameters must be plain names (destructuring cannot be lowered to CUDA)",
                    );
                }
                if k == last && sig.inputs.len() >= 2 {
                    if crate::element::prim_of_type(&pt.ty) != Some(PrimType::U64) {
                        errors.push(
                            pt.ty.span(),
                            format!(
                                "the last parameter of `lift` is the element's index in the input arrays: `index: u64`, found `{}`",
                                type_string(&pt.ty)
                            ),
                        );
                    }
                } else if array_prim(&pt.ty).is_none() && !is_elem(&pt.ty) {
                    errors.push(
                        pt.ty.span(),
                        format!(
                            "a `lift` input is read from an array of primitives or of the element `{elem_shown}`, found `{}`",
                            type_string(&pt.ty)
                        ),
                    );
                }
            }
        }
    }
    check_return(sig, elem_shown, is_elem, errors, "lift");
}

/// `fn project(e: Elem) -> Out`, `Out` a primitive or the element.
fn check_project_sig(
    sig: &syn::Signature,
    elem_shown: &str,
    is_elem: &dyn Fn(&syn::Type) -> bool,
    errors: &mut Errors,
) {
    if sig.inputs.len() != 1 {
        errors.push(
            if sig.inputs.is_empty() { sig.paren_token.span.join() } else { sig.inputs.span() },
            format!(
                "`project` takes exactly one element, found {} parameters: `fn project(e: {elem_shown}) -> i64`",
                sig.inputs.len()
            ),
        );
    }
    for arg in &sig.inputs {
        match arg {
            syn::FnArg::Receiver(r) => errors.push(
                r.span(),
                format!("`project` takes no `self`: `fn project(e: {elem_shown}) -> i64`"),
            ),
            syn::FnArg::Typed(pt) => {
                if !plain_param(&pt.pat) {
                    errors.push(
                        pt.pat.span(),
                        "`project`'s parameter must be a plain name (destructuring cannot be lowered to CUDA)",
                    );
                }
                if !is_elem(&pt.ty) {
                    errors.push(
                        pt.ty.span(),
                        format!(
                            "`project` takes the element: expected `{elem_shown}`, found `{}`",
                            type_string(&pt.ty)
                        ),
                    );
                }
            }
        }
    }
    match &sig.output {
        syn::ReturnType::Default => errors.push(
            sig.paren_token.span.close(),
            format!("`project` must return the output value: add `-> {elem_shown}` or `-> ` a primitive"),
        ),
        syn::ReturnType::Type(_, ty) => {
            if array_prim(ty).is_none() && !is_elem(ty) {
                errors.push(
                    ty.span(),
                    format!(
                        "`project` returns a primitive or the element `{elem_shown}` (what the output array holds), found `{}`",
                        type_string(ty)
                    ),
                );
            }
        }
    }
}

/// The name of a plain parameter (`None` for `_`).
fn param_name(arg: &syn::FnArg) -> Option<String> {
    match arg {
        syn::FnArg::Typed(pt) => match &*pt.pat {
            syn::Pat::Ident(pi) => Some(pi.ident.to_string()),
            _ => None,
        },
        syn::FnArg::Receiver(_) => None,
    }
}

fn arg_type(arg: &syn::FnArg) -> Option<&syn::Type> {
    match arg {
        syn::FnArg::Typed(pt) => Some(&pt.ty),
        syn::FnArg::Receiver(_) => None,
    }
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
    let lift = find_fn(item, "lift");
    let project = find_fn(item, "project");
    let mut transform = None;
    if lift.is_some() || project.is_some() {
        let elem_ty_or = elem_ty.clone().unwrap_or_else(|| syn::parse_quote!(i32));
        let as_ref = |ty: &syn::Type| match array_prim(ty) {
            Some(p) => ElemRef::Prim(p),
            None => elem_for_lowering.clone(),
        };
        let mut t = LoweredTransform {
            inputs: vec![(elem_ty_or.clone(), elem_for_lowering.clone())],
            lift_params: vec!["x".into(), "index".into()],
            lift_body: "(void)index;\nreturn x;".into(),
            has_lift: false,
            output: (elem_ty_or, elem_for_lowering.clone()),
            project_param: "e".into(),
            project_body: "return e;".into(),
            has_project: false,
        };
        if let Some(f) = lift.filter(|_| !shape.bad_lift) {
            let block = Builder {
                errors: &mut ctx.errors,
                elem_name: elem_name.clone(),
            }
            .block(&f.block);
            let inputs: Vec<(syn::Type, ElemRef)> = f
                .sig
                .inputs
                .iter()
                .take(f.sig.inputs.len() - 1)
                .filter_map(arg_type)
                .map(|ty| (ty.clone(), as_ref(ty)))
                .collect();
            let mut lw = Lowerer::transform_fn(&mut ctx, &op_name, &elem_for_lowering);
            let mut params = Vec::new();
            for (k, (arg, (_, r))) in f.sig.inputs.iter().zip(&inputs).enumerate() {
                params.push(lw.param_of(param_name(arg).as_deref(), &format!("in{k}"), r));
            }
            let index = f.sig.inputs.last().and_then(param_name);
            params.push(lw.param_of(index.as_deref(), "index", &ElemRef::Prim(PrimType::U64)));
            let body = lw.body(&block);
            t.inputs = inputs;
            t.lift_params = params;
            t.lift_body = body;
            t.has_lift = true;
        }
        if let Some(f) = project.filter(|_| !shape.bad_project) {
            let block = Builder {
                errors: &mut ctx.errors,
                elem_name: elem_name.clone(),
            }
            .block(&f.block);
            let out_ty = match &f.sig.output {
                syn::ReturnType::Type(_, ty) => (**ty).clone(),
                syn::ReturnType::Default => unreachable!("checked by check_project_sig"),
            };
            let out_ref = as_ref(&out_ty);
            let mut lw = Lowerer::transform_fn(&mut ctx, &op_name, &out_ref);
            let name = f.sig.inputs.first().and_then(param_name);
            let param = lw.param_of(name.as_deref(), "e", &elem_for_lowering);
            t.project_body = lw.body(&block);
            t.project_param = param;
            t.output = (out_ty, out_ref);
            t.has_project = true;
        }
        transform = Some(t);
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
        transform,
    })
}

/// Whether an attribute is `#[scan_op]` (or `#[scangen::scan_op]`).
pub fn is_scan_op_attr(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "scan_op")
}
