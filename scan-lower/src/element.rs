//! `#[derive(ScanElement)]` structs: `#[repr(C)]`, named fields of primitives, `bool`s,
//! arrays of those and nested element structs, `Copy`.

use crate::error::Errors;
use scan_core::{FieldType, PrimType, StructDecl, StructField};
use syn::spanned::Spanned;

/// A field's type as written: what the derive turns into a [`FieldType`] (at run time, where a
/// nested struct or a `const` array length is involved) and `emit --file` resolves in the file.
#[derive(Clone)]
pub enum FieldShape {
    /// A primitive number type.
    Prim(PrimType),
    /// `bool`.
    Bool,
    /// `[T; LEN]`, the length as written.
    Array(Box<FieldShape>, syn::Expr),
    /// Another `#[derive(ScanElement)]` struct, by its Rust name and its type as written.
    Struct(String, syn::Type),
}

impl std::fmt::Debug for FieldShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::debug::Tokens;
        match self {
            FieldShape::Prim(p) => f.debug_tuple("Prim").field(p).finish(),
            FieldShape::Bool => f.write_str("Bool"),
            FieldShape::Array(t, len) => {
                f.debug_tuple("Array").field(t).field(&Tokens(len)).finish()
            }
            FieldShape::Struct(name, ty) => f
                .debug_tuple("Struct")
                .field(name)
                .field(&Tokens(ty))
                .finish(),
        }
    }
}

impl FieldShape {
    /// The field type when it needs nothing from outside the struct (primitives, `bool`s and
    /// arrays of them with literal lengths).
    pub fn local_type(&self) -> Option<FieldType> {
        self.resolve(&|_| None, &|_| None)
    }

    /// The field type, given the declarations of other structs and the values of `const`
    /// array lengths.
    pub fn resolve(
        &self,
        structs: &dyn Fn(&str) -> Option<StructDecl>,
        consts: &dyn Fn(&syn::Expr) -> Option<usize>,
    ) -> Option<FieldType> {
        Some(match self {
            FieldShape::Prim(p) => FieldType::Prim(*p),
            FieldShape::Bool => FieldType::Bool,
            FieldShape::Array(t, len) => {
                let n = match len {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(n),
                        ..
                    }) => n.base10_parse().ok()?,
                    other => consts(other)?,
                };
                FieldType::Array(Box::new(t.resolve(structs, consts)?), n)
            }
            FieldShape::Struct(name, _) => FieldType::Struct(structs(name)?),
        })
    }
}

/// A validated element struct.
#[derive(Clone, Debug)]
pub struct ElementStruct {
    /// The struct's Rust name, with its span.
    pub ident: syn::Ident,
    /// Each field with its C++ name (`int` -> `int_`) and its type as written.
    pub fields: Vec<(syn::Ident, String, FieldShape)>,
    /// The declaration with Rust's `repr(C)` size and alignment, when no field needs anything
    /// from outside the struct (see [`FieldShape::local_type`]).
    pub decl: Option<StructDecl>,
}

impl ElementStruct {
    /// The declaration, resolving nested structs and `const` lengths with `structs` and
    /// `consts`.
    pub fn resolve(
        &self,
        structs: &dyn Fn(&str) -> Option<StructDecl>,
        consts: &dyn Fn(&syn::Expr) -> Option<usize>,
    ) -> Option<StructDecl> {
        let fields: Option<Vec<StructField>> = self
            .fields
            .iter()
            .map(|(_, c, shape)| {
                Some(StructField {
                    name: c.clone(),
                    ty: shape.resolve(structs, consts)?,
                })
            })
            .collect();
        Some(StructDecl::new(
            crate::names::struct_name(&self.ident.to_string()),
            fields?,
        ))
    }
}

/// A type as the user would write it (`&Pair`, `[u8; 4]`), for messages.
pub(crate) fn type_string(ty: &syn::Type) -> String {
    quote::ToTokens::to_token_stream(ty)
        .to_string()
        .replace("& ", "&")
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" ,", ",")
        .replace(" ;", ";")
        .replace("< ", "<")
        .replace(" <", "<")
        .replace(" >", ">")
}

pub(crate) const ALLOWED_PRIMS: &str =
    "i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, f16, bf16 (`half::f16`, `half::bf16`)";

/// What to write instead of a Rust primitive that has no GPU type here: why, and the
/// replacement (`usize` -> `u64`), for every place a type can be written.
pub(crate) fn unsupported_prim(name: &str) -> Option<String> {
    Some(match name {
        "u128" | "i128" => {
            let half = if name == "u128" { "u64" } else { "i64" };
            format!(
                "`{name}` is not supported on the GPU: scangen's integers are at most 64 bits wide; use `{half}`, or a struct of two `u64` halves combined with explicit carries"
            )
        }
        "usize" | "isize" => {
            let fixed = if name == "usize" { "u64" } else { "i64" };
            format!(
                "`{name}` is not supported on the GPU: its width is the host's, and an element must have one layout on both sides; use `{fixed}`"
            )
        }
        "char" => "`char` is not supported on the GPU: use `u32` (`c as u32`)".to_string(),
        "f128" => format!("`{name}` is not supported on the GPU: use `f32` or `f64`"),
        _ => return None,
    })
}

/// A primitive as a lowered body may name it: an element primitive, or `usize`/`isize`, which
/// are 64 bits wide on every host scangen supports and so lower to `u64`/`i64` (they cannot be
/// element fields, whose layout must not depend on the host).
pub(crate) fn body_prim_name(name: &str) -> Option<PrimType> {
    match name {
        "usize" => Some(PrimType::U64),
        "isize" => Some(PrimType::I64),
        n => PrimType::from_name(n),
    }
}

/// As [`prim_of_type`], with `usize`/`isize` (see [`body_prim_name`]).
pub(crate) fn body_prim(ty: &syn::Type) -> Option<PrimType> {
    prim_of_type(ty).or_else(|| body_prim_name(&simple_type_name(ty)?))
}

/// The name of a single-segment type path (`u128`, `Affine`).
pub(crate) fn simple_type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
            let seg = &p.path.segments[0];
            seg.arguments.is_none().then(|| seg.ident.to_string())
        }
        syn::Type::Group(g) => simple_type_name(&g.elem),
        syn::Type::Paren(p) => simple_type_name(&p.elem),
        _ => None,
    }
}

/// The primitive a type names (`f32`, `core::primitive::f32`), if any.
pub fn prim_of_type(ty: &syn::Type) -> Option<PrimType> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            if !last.arguments.is_none() {
                return None;
            }
            // `f32`, `core::primitive::f32`; `half::f16`, `scangen::half::bf16`.
            let is_half = matches!(last.ident.to_string().as_str(), "f16" | "bf16");
            let ok_prefix = p.path.segments.len() == 1
                || p.path
                    .segments
                    .iter()
                    .rev()
                    .nth(1)
                    .is_some_and(|s| s.ident == "primitive" || (is_half && s.ident == "half"));
            if !ok_prefix {
                return None;
            }
            PrimType::from_name(&last.ident.to_string())
        }
        syn::Type::Group(g) => prim_of_type(&g.elem),
        syn::Type::Paren(p) => prim_of_type(&p.elem),
        _ => None,
    }
}

/// Whether a `#[derive(...)]` on the item lists `Copy` (`None`: no derive attribute at all).
/// Only conclusive on a whole source file (a derive macro does not see its own derive list).
pub(crate) fn derives_copy(attrs: &[syn::Attribute]) -> Option<bool> {
    let mut saw_derive = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        saw_derive = true;
        let mut copy = false;
        let _ = attr.parse_nested_meta(|m| {
            if m.path.segments.last().is_some_and(|s| s.ident == "Copy") {
                copy = true;
            }
            Ok(())
        });
        if copy {
            return Some(true);
        }
    }
    if saw_derive {
        Some(false)
    } else {
        None
    }
}

/// Checks `#[repr(C)]` (and rejects `packed`/`align`), returns whether it is present.
fn check_repr(attrs: &[syn::Attribute], errors: &mut Errors) -> bool {
    let mut repr_c = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("repr")) {
        let res = attr.parse_nested_meta(|m| {
            if m.path.is_ident("C") {
                repr_c = true;
            } else if m.path.is_ident("packed") || m.path.is_ident("align") {
                errors.push(
                    m.path.span(),
                    format!(
                        "ScanElement does not support `repr({})`: the generated C struct uses the plain `repr(C)` layout",
                        m.path.get_ident().map(|i| i.to_string()).unwrap_or_default()
                    ),
                );
                if m.input.peek(syn::token::Paren) {
                    let content;
                    syn::parenthesized!(content in m.input);
                    let _: proc_macro2::TokenStream = content.parse()?;
                }
            } else {
                errors.push(
                    m.path.span(),
                    "ScanElement requires `#[repr(C)]`, not another representation",
                );
            }
            Ok(())
        });
        if let Err(e) = res {
            errors.push(e.span(), e.to_string());
        }
    }
    repr_c
}

/// Validates a `#[derive(ScanElement)]` input. All problems are reported together.
pub fn element_struct(input: &syn::DeriveInput) -> Result<ElementStruct, Errors> {
    let mut errors = Errors::new();
    let ident = &input.ident;
    if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
        errors.push(
            input.generics.span(),
            "ScanElement cannot be derived for a generic struct: the GPU needs one concrete layout",
        );
    }
    let data = match &input.data {
        syn::Data::Struct(s) => s,
        syn::Data::Enum(e) => {
            errors.push(
                e.enum_token.span,
                "ScanElement can only be derived for a struct with named fields, not an enum",
            );
            return Err(errors);
        }
        syn::Data::Union(u) => {
            errors.push(
                u.union_token.span,
                "ScanElement can only be derived for a struct with named fields, not a union",
            );
            return Err(errors);
        }
    };
    if !check_repr(&input.attrs, &mut errors) {
        errors.push(
            ident.span(),
            format!(
                "ScanElement requires `#[repr(C)]` on `{ident}`: the GPU reads elements with C layout, and Rust's default layout may reorder fields"
            ),
        );
    }
    let mut fields = Vec::new();
    match &data.fields {
        syn::Fields::Named(named) => {
            if named.named.is_empty() {
                errors.push(
                    named.brace_token.span.join(),
                    "ScanElement needs at least one field",
                );
            }
            for f in &named.named {
                let name = f.ident.clone().expect("named field");
                if let Some(shape) = field_shape(&name, &f.ty, &mut errors) {
                    let c = crate::names::field_name(&name.to_string());
                    fields.push((name, c, shape));
                }
            }
        }
        syn::Fields::Unnamed(u) => errors.push(
            u.span(),
            format!("ScanElement needs named fields: write `struct {ident} {{ a: f32, b: f32 }}`"),
        ),
        syn::Fields::Unit => errors.push(
            ident.span(),
            format!("ScanElement needs named fields: write `struct {ident} {{ a: f32, b: f32 }}`"),
        ),
    }
    let mut el = ElementStruct {
        ident: ident.clone(),
        fields,
        decl: None,
    };
    // The declaration carries the C++ names (`int` -> `int_`), which the lowered operator uses.
    el.decl = el.resolve(&|_| None, &|_| None);
    errors.finish(el)
}

/// What a field's type is, or why it cannot be one (reported).
fn field_shape(name: &syn::Ident, ty: &syn::Type, errors: &mut Errors) -> Option<FieldShape> {
    if let Some(p) = prim_of_type(ty) {
        return Some(FieldShape::Prim(p));
    }
    match ty {
        syn::Type::Group(g) => return field_shape(name, &g.elem, errors),
        syn::Type::Paren(p) => return field_shape(name, &p.elem, errors),
        syn::Type::Array(a) => {
            let elem = field_shape(name, &a.elem, errors)?;
            return Some(FieldShape::Array(Box::new(elem), a.len.clone()));
        }
        _ => {}
    }
    let shown = type_string(ty);
    if let Some(n) = simple_type_name(ty) {
        if n == "bool" {
            return Some(FieldShape::Bool);
        }
        if let Some(hint) = unsupported_prim(&n) {
            errors.push(ty.span(), format!("field `{name}`: {hint}"));
            return None;
        }
    }
    if let syn::Type::Path(p) = ty {
        let last = p.path.segments.last();
        if p.qself.is_none() && last.is_some_and(|s| s.arguments.is_none()) {
            let n = last.expect("checked").ident.to_string();
            return Some(FieldShape::Struct(n, ty.clone()));
        }
        if last.is_some_and(|s| s.ident == "Option") {
            errors.push(
                ty.span(),
                format!(
                    "field `{name}` has type `{shown}`: `Option` has no layout Rust defines for the GPU to share; write the value and a `bool` beside it (`{name}: T, {name}_valid: bool`) and test the flag where Rust would match on `Some`"
                ),
            );
            return None;
        }
    }
    errors.push(
        ty.span(),
        format!(
            "field `{name}` has type `{shown}`, which a ScanElement cannot hold: use one of {ALLOWED_PRIMS}, `bool`, an array `[T; N]` of those, or another #[derive(ScanElement)] struct"
        ),
    );
    None
}
