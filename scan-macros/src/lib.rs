//! `#[scan_op]` and `#[derive(ScanElement)]`: a thin shell over `scan-lower`.
//!
//! Generated code names only `::scangen::...` paths: `ScanElement`, `ElementType`,
//! `StructDecl`, `StructField`, `PrimType`, `OpSpec`, and `__private::cudarc`.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::ToTokens;
use quote::{format_ident, quote, quote_spanned};
use scan_lower::{ElemRef, Errors, Scope};
use syn::spanned::Spanned;

/// Derives `scangen::ScanElement` (and cudarc's `DeviceRepr` and `ValidAsZeroBits`, so device
/// buffers of it can be allocated zeroed with `alloc_zeros`) for a `#[repr(C)]` struct of
/// primitive fields, with a compile-time check that Rust's size equals the declared one.
#[proc_macro_derive(ScanElement)]
pub fn derive_scan_element(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    match scan_lower::element_struct(&input) {
        Ok(el) => element_impl(&el).into(),
        Err(errors) => errors.to_compile_error().into(),
    }
}

fn prim_tokens(p: scan_core::PrimType) -> TokenStream2 {
    let v = format_ident!("{}", format!("{p:?}"));
    quote!(::scangen::PrimType::#v)
}

/// The `::scangen::FieldType` of a field, as an expression (evaluated when the element type
/// is asked for: a nested struct's declaration and a `const` length are Rust's to compute).
fn field_type_tokens(shape: &scan_lower::FieldShape) -> TokenStream2 {
    match shape {
        scan_lower::FieldShape::Prim(p) => {
            let pt = prim_tokens(*p);
            quote!(::scangen::FieldType::Prim(#pt))
        }
        scan_lower::FieldShape::Bool => quote!(::scangen::FieldType::Bool),
        scan_lower::FieldShape::Array(t, len) => {
            let t = field_type_tokens(t);
            quote!(::scangen::FieldType::Array(::std::boxed::Box::new(#t), (#len) as usize))
        }
        scan_lower::FieldShape::Struct(_, ty) => {
            quote_spanned!(ty.span()=> ::scangen::field_type_of::<#ty>())
        }
    }
}

fn element_impl(el: &scan_lower::ElementStruct) -> TokenStream2 {
    let ident = &el.ident;
    let name = ident.to_string();
    let c_name = scan_lower::struct_name(&name);
    let fields = el.fields.iter().map(|(_, fname, shape)| {
        let ty = field_type_tokens(shape);
        quote!(::scangen::StructField { name: ::std::string::String::from(#fname), ty: #ty })
    });
    let layout_msg =
        format!("ScanElement: the layout of `{name}` differs from its repr(C) declaration");
    // Where the derive can compute the layout, rustc checks it; otherwise (nested structs,
    // `const` lengths) the declaration is checked each time it is built.
    let (layout_check, runtime_check) = match &el.decl {
        Some(decl) => {
            let (size, align) = (decl.size, decl.align);
            let size_msg = format!(
                "ScanElement: the size of `{name}` differs from its repr(C) declaration ({size} bytes)"
            );
            let align_msg = format!(
                "ScanElement: the alignment of `{name}` differs from its repr(C) declaration"
            );
            (
                quote! {
                    const _: () = ::core::assert!(::core::mem::size_of::<#ident>() == #size, #size_msg);
                    const _: () = ::core::assert!(::core::mem::align_of::<#ident>() == #align, #align_msg);
                },
                quote!(),
            )
        }
        None => (
            quote!(),
            quote! {
                ::core::assert!(
                    decl.size == ::core::mem::size_of::<#ident>()
                        && decl.align == ::core::mem::align_of::<#ident>(),
                    #layout_msg
                );
            },
        ),
    };
    // Copy: the derive cannot see the derive list it is part of, so the check is a bound on a
    // local trait whose unmet-bound message says what to write. (rustc adds its own error for
    // ScanElement's `Copy` supertrait.)
    let copy_msg = format!("ScanElement requires Copy: add #[derive(Clone, Copy)] to `{name}`");
    let copy_check = quote_spanned! {ident.span()=>
        // Never called: it exists so that a non-Copy element fails to type-check here, with
        // this message.
        #[allow(dead_code)]
        const _: () = {
            #[diagnostic::on_unimplemented(message = #copy_msg, label = "not Copy")]
            trait ScanElementRequiresCopy {}
            impl<T: ::core::marker::Copy> ScanElementRequiresCopy for T {}
            fn requires_copy<T: ScanElementRequiresCopy>() {}
            fn check() {
                requires_copy::<#ident>();
            }
        };
    };
    quote! {
        // SAFETY: `#[repr(C)]` (checked by the derive) of primitives, `bool`s, arrays and
        // nested elements, described field by field in declaration order. The GPU copies
        // elements as bytes and writes `bool`s only as 0 or 1 (C++'s `bool`).
        unsafe impl ::scangen::ScanElement for #ident {
            fn element_type() -> ::scangen::ElementType {
                let decl = ::scangen::StructDecl::new(
                    #c_name,
                    ::std::vec![#(#fields),*],
                );
                #runtime_check
                ::scangen::ElementType::Struct(decl)
            }
        }
        #layout_check
        #copy_check
        // SAFETY: plain-old-data as above; the GPU reads and writes it as bytes.
        unsafe impl ::scangen::__private::cudarc::driver::DeviceRepr for #ident {}
        // SAFETY: every field is a primitive (zero is a number), a `bool` (zero is `false`), an
        // array of those or a nested element, for which `ScanElement`'s contract says the same;
        // padding may hold anything. So all-zero bytes are a valid value (cudarc's
        // `alloc_zeros`, `memset_zeros`).
        unsafe impl ::scangen::__private::cudarc::driver::ValidAsZeroBits for #ident {}
    }
}

/// Lowers `combine` and `identity` of an `impl ScanOp for Op` to CUDA C++ and adds
/// `fn device_op() -> ::scangen::OpSpec`. The impl itself is kept for the CPU.
///
/// Optional `fn lift(x: In, .., index: u64) -> Elem` (one parameter per input array, then the
/// element's index) and `fn project(e: Elem) -> Out` in the same impl are lowered too and
/// become `impl ::scangen::Transform` (fused transform scans and reductions); a missing one is
/// the identity.
///
/// On an inline module (`#[scan_op] mod ops { ... }`) it does so for every `impl ScanOp` in
/// the module, and each operator also sees the module's `const`s, `fn`s and inherent impls,
/// which it may call as helpers.
#[proc_macro_attribute]
pub fn scan_op(attr: TokenStream, item: TokenStream) -> TokenStream {
    let attr = TokenStream2::from(attr);
    let mut errors = Errors::new();
    if !attr.is_empty() {
        errors.push(attr.span(), "#[scan_op] takes no arguments");
    }
    if let Ok(module) = syn::parse::<syn::ItemMod>(item.clone()) {
        return expand_module(module, errors).into();
    }
    let item = syn::parse_macro_input!(item as syn::ItemImpl);
    expand_impl(item, &Scope::default(), errors).into()
}

fn expand_impl(mut item: syn::ItemImpl, scope: &Scope, mut errors: Errors) -> TokenStream2 {
    match scan_lower::lower_impl_in(&item, scope) {
        Ok(op) if errors.is_empty() => {
            let device_op = device_op_fn(&op);
            item.items.push(syn::parse_quote!(#device_op));
            let transform = match &op.transform {
                Some(t) => transform_impl(&mut item, &op, t),
                None => quote!(),
            };
            quote!(#item #transform)
        }
        result => {
            if let Err(e) = result {
                errors.extend(e);
            }
            failed(item, &errors)
        }
    }
}

fn is_scan_op_impl(i: &syn::ItemImpl) -> bool {
    i.trait_
        .as_ref()
        .is_some_and(|(_, p, _)| p.segments.last().is_some_and(|s| s.ident == "ScanOp"))
}

fn expand_module(mut module: syn::ItemMod, errors: Errors) -> TokenStream2 {
    let Some((brace, items)) = module.content.take() else {
        let mut errors = errors;
        errors.push(
            module.semi.span(),
            "#[scan_op] on a module needs its items inline (`#[scan_op] mod ops { ... }`): it lowers the operators it can see",
        );
        let errs = errors.to_compile_error();
        return quote!(#module #errs);
    };
    let scope = Scope::module(&items);
    let mut out: Vec<syn::Item> = Vec::new();
    let mut first = Some(errors);
    let mut extra = TokenStream2::new();
    for item in items {
        match item {
            syn::Item::Impl(mut i) if is_scan_op_impl(&i) => {
                // The module's attribute lowers it; its own would lower it a second time.
                i.attrs.retain(|a| !scan_lower::is_scan_op_attr(a));
                let errs = first.take().unwrap_or_default();
                extra.extend(expand_impl(i, &scope, errs));
            }
            other => out.push(other),
        }
    }
    if let Some(errs) = first.filter(|e| !e.is_empty()) {
        extra.extend(errs.to_compile_error());
    }
    let attrs = &module.attrs;
    let vis = &module.vis;
    let unsafety = &module.unsafety;
    let mod_token = &module.mod_token;
    let ident = &module.ident;
    let mut body = TokenStream2::new();
    brace.surround(&mut body, |t| {
        for it in &out {
            it.to_tokens(t);
        }
        t.extend(extra.clone());
    });
    quote!(#(#attrs)* #vis #unsafety #mod_token #ident #body)
}

fn device_op_fn(op: &scan_lower::LoweredOp) -> TokenStream2 {
    let name = &op.name;
    let element = match &op.elem {
        ElemRef::Prim(p) => {
            let pt = prim_tokens(*p);
            quote!(::scangen::ElementType::Prim(#pt))
        }
        ElemRef::Struct(_) => {
            let ty = &op.elem_ty;
            quote!(<#ty as ::scangen::ScanElement>::element_type())
        }
    };
    let (lhs, rhs, cb, ib) = (&op.lhs, &op.rhs, &op.combine_body, &op.identity_body);
    quote! {
        fn device_op() -> ::scangen::OpSpec {
            ::scangen::OpSpec {
                name: ::std::string::String::from(#name),
                element: #element,
                lhs: ::std::string::String::from(#lhs),
                rhs: ::std::string::String::from(#rhs),
                combine_body: ::std::string::String::from(#cb),
                identity_body: ::std::string::String::from(#ib),
                word_form: None,
            }
        }
    }
}

/// Takes `fn lift` / `fn project` out of the `ScanOp` impl (they are not its members) and
/// generates `impl ::scangen::Transform`: the user's functions become hidden inherent
/// functions (same tokens, so rustc's errors point at the user's code), called by the trait's.
fn transform_impl(
    item: &mut syn::ItemImpl,
    op: &scan_lower::LoweredOp,
    t: &scan_lower::LoweredTransform,
) -> TokenStream2 {
    let mut moved: Vec<syn::ImplItemFn> = Vec::new();
    item.items.retain(|it| match it {
        syn::ImplItem::Fn(f) if f.sig.ident == "lift" || f.sig.ident == "project" => {
            let mut f = f.clone();
            f.sig.ident = format_ident!("__scangen_{}", f.sig.ident, span = f.sig.ident.span());
            f.vis = syn::Visibility::Inherited;
            f.attrs.push(syn::parse_quote!(#[doc(hidden)]));
            moved.push(f);
            false
        }
        _ => true,
    });
    let self_ty = &item.self_ty;
    let elem_ty = &op.elem_ty;
    let type_tokens = |r: &ElemRef| match r {
        ElemRef::Prim(p) => {
            let pt = prim_tokens(*p);
            quote!(::scangen::ElementType::Prim(#pt))
        }
        ElemRef::Struct(_) => quote!(<#elem_ty as ::scangen::ScanElement>::element_type()),
    };
    let input_types: Vec<&syn::Type> = t.inputs.iter().map(|(ty, _)| ty).collect();
    let input_ty = if input_types.len() == 1 {
        let ty = input_types[0];
        quote!(#ty)
    } else {
        quote!((#(#input_types),*))
    };
    let input_specs = t.inputs.iter().map(|(_, r)| type_tokens(r));
    let lift_fn = if t.has_lift {
        let vars: Vec<syn::Ident> = (0..t.inputs.len())
            .map(|k| format_ident!("__input{}", k))
            .collect();
        let unpack = if vars.len() == 1 {
            let v = &vars[0];
            quote!(let #v = input;)
        } else {
            quote!(let (#(#vars),*) = input;)
        };
        quote! {
            fn lift(input: Self::Input, index: u64) -> Self::Elem {
                #unpack
                <#self_ty>::__scangen_lift(#(#vars,)* index)
            }
        }
    } else {
        quote! {
            fn lift(input: Self::Input, _index: u64) -> Self::Elem {
                input
            }
        }
    };
    let out_ty = &t.output.0;
    let project_fn = if t.has_project {
        quote! {
            fn project(elem: Self::Elem) -> Self::Output {
                <#self_ty>::__scangen_project(elem)
            }
        }
    } else {
        quote! {
            fn project(elem: Self::Elem) -> Self::Output {
                elem
            }
        }
    };
    // lift_bytes: each input read from its bytes (size checked), then `lift`.
    let n_inputs = input_types.len();
    let reads = input_types.iter().enumerate().map(|(k, ty)| {
        let v = format_ident!("__input{}", k);
        quote! {
            let #v: #ty = {
                let bytes = inputs[#k];
                if bytes.len() != ::core::mem::size_of::<#ty>() {
                    return ::core::option::Option::None;
                }
                // SAFETY: the size is checked; the caller vouches for a valid value.
                unsafe { ::core::ptr::read_unaligned(bytes.as_ptr().cast::<#ty>()) }
            };
        }
    });
    let read_vars: Vec<syn::Ident> = (0..n_inputs)
        .map(|k| format_ident!("__input{}", k))
        .collect();
    let packed = if n_inputs == 1 {
        let v = &read_vars[0];
        quote!(#v)
    } else {
        quote!((#(#read_vars),*))
    };
    let lift_bytes_fn = quote! {
        unsafe fn lift_bytes(inputs: &[&[u8]], index: u64) -> ::core::option::Option<Self::Elem> {
            if inputs.len() != #n_inputs {
                return ::core::option::Option::None;
            }
            #(#reads)*
            ::core::option::Option::Some(<Self as ::scangen::Transform>::lift(#packed, index))
        }
    };
    let out_spec = type_tokens(&t.output.1);
    let lift_params = &t.lift_params;
    let (lift_body, project_param, project_body) =
        (&t.lift_body, &t.project_param, &t.project_body);
    quote! {
        impl #self_ty {
            #(#moved)*
        }
        impl ::scangen::Transform for #self_ty {
            type Input = #input_ty;
            type Output = #out_ty;
            #lift_fn
            #project_fn
            #lift_bytes_fn
            fn device_transform() -> ::scangen::TransformSpec {
                ::scangen::TransformSpec {
                    inputs: ::std::vec![#(#input_specs),*],
                    lift_params: ::std::vec![#(::std::string::String::from(#lift_params)),*],
                    lift_body: ::std::string::String::from(#lift_body),
                    output: #out_spec,
                    project_param: ::std::string::String::from(#project_param),
                    project_body: ::std::string::String::from(#project_body),
                }
            }
        }
    }
}

/// On error: the user's impl (so rustc still checks the Rust), stubs for what is missing or
/// malformed (so rustc adds no follow-up errors), and one `compile_error!` per mistake.
fn failed(mut item: syn::ItemImpl, errors: &Errors) -> TokenStream2 {
    let mut shape_errors = Errors::new();
    let shape = scan_lower::check_impl(&item, &mut shape_errors);
    let is_scan_op_impl = item
        .trait_
        .as_ref()
        .is_some_and(|(_, p, _)| p.segments.last().is_some_and(|s| s.ident == "ScanOp"));
    if is_scan_op_impl && shape.elem_ty.is_some() {
        item.items.retain(|it| match it {
            syn::ImplItem::Fn(f) => {
                // lift/project are not members of ScanOp: without the generated Transform impl
                // they would only add rustc's follow-up errors.
                !(f.sig.ident == "device_op"
                    || f.sig.ident == "lift"
                    || f.sig.ident == "project"
                    || (f.sig.ident == "identity" && shape.bad_identity)
                    || (f.sig.ident == "combine" && shape.bad_combine))
            }
            _ => true,
        });
        if !shape.has_identity || shape.bad_identity {
            item.items.push(syn::parse_quote! {
                fn identity() -> Self::Elem {
                    ::core::panic!("#[scan_op] failed: see the compile errors")
                }
            });
        }
        if !shape.has_combine || shape.bad_combine {
            item.items.push(syn::parse_quote! {
                fn combine(_lhs: Self::Elem, _rhs: Self::Elem) -> Self::Elem {
                    ::core::panic!("#[scan_op] failed: see the compile errors")
                }
            });
        }
        item.items.push(syn::parse_quote! {
            fn device_op() -> ::scangen::OpSpec {
                ::core::panic!("#[scan_op] failed: see the compile errors")
            }
        });
    }
    let errs = errors.to_compile_error();
    quote! {
        #item
        #errs
    }
}
