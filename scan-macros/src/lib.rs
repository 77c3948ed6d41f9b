//! `#[scan_op]` and `#[derive(ScanElement)]`: a thin shell over `scan-lower`.
//!
//! Generated code names only `::scangen::...` paths: `ScanElement`, `ElementType`,
//! `StructDecl`, `StructField`, `PrimType`, `OpSpec`, and `__private::cudarc`.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote, quote_spanned};
use scan_lower::{ElemRef, Errors};
use syn::spanned::Spanned;

/// Derives `scangen::ScanElement` (and cudarc's `DeviceRepr`) for a `#[repr(C)]` struct of
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

fn element_impl(el: &scan_lower::ElementStruct) -> TokenStream2 {
    let ident = &el.ident;
    let name = ident.to_string();
    let c_name = &el.decl.name;
    let fields = el.decl.fields.iter().map(|f| {
        let fname = &f.name;
        let pt = prim_tokens(f.ty);
        quote!(::scangen::StructField { name: ::std::string::String::from(#fname), ty: #pt })
    });
    let size = el.decl.size;
    let align = el.decl.align;
    let size_msg = format!(
        "ScanElement: the size of `{name}` differs from its repr(C) declaration ({size} bytes)"
    );
    let align_msg =
        format!("ScanElement: the alignment of `{name}` differs from its repr(C) declaration");
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
        // SAFETY: `#[repr(C)]` of primitive fields (checked by the derive), described field by
        // field in declaration order; every bit pattern of the fields is valid.
        unsafe impl ::scangen::ScanElement for #ident {
            fn element_type() -> ::scangen::ElementType {
                ::scangen::ElementType::Struct(::scangen::StructDecl::new(
                    #c_name,
                    ::std::vec![#(#fields),*],
                ))
            }
        }
        const _: () = ::core::assert!(::core::mem::size_of::<#ident>() == #size, #size_msg);
        const _: () = ::core::assert!(::core::mem::align_of::<#ident>() == #align, #align_msg);
        #copy_check
        // SAFETY: plain-old-data as above; the GPU reads and writes it as bytes.
        unsafe impl ::scangen::__private::cudarc::driver::DeviceRepr for #ident {}
    }
}

/// Lowers `combine` and `identity` of an `impl ScanOp for Op` to CUDA C++ and adds
/// `fn device_op() -> ::scangen::OpSpec`. The impl itself is kept for the CPU.
#[proc_macro_attribute]
pub fn scan_op(attr: TokenStream, item: TokenStream) -> TokenStream {
    let attr = TokenStream2::from(attr);
    let mut item = syn::parse_macro_input!(item as syn::ItemImpl);
    let mut errors = Errors::new();
    if !attr.is_empty() {
        errors.push(attr.span(), "#[scan_op] takes no arguments");
    }
    match scan_lower::lower_impl(&item) {
        Ok(op) if errors.is_empty() => {
            let device_op = device_op_fn(&op);
            item.items.push(syn::parse_quote!(#device_op));
            quote!(#item).into()
        }
        result => {
            if let Err(e) = result {
                errors.extend(e);
            }
            failed(item, &errors).into()
        }
    }
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
                !(f.sig.ident == "device_op"
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
