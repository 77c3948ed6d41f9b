//! `scangen emit --file ops.rs --op Compose`: operators from a Rust source file.

use crate::element::{derives_copy, element_struct, prim_of_type};
use crate::error::Errors;
use crate::op::{is_scan_op_attr, lower_impl_in, Scope};
use scan_core::{ElementType, OpSpec, StructDecl};
use std::fmt;

/// One problem in an ops file, at a 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileDiagnostic {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Everything wrong with the request, each with its position. `Display` writes one
/// `line:column: message` per line; prefix the file name for `path:line:column: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    /// Every problem found, each at its position.
    pub diagnostics: Vec<FileDiagnostic>,
}

impl FileError {
    pub(crate) fn at(line: usize, column: usize, message: impl Into<String>) -> FileError {
        FileError {
            diagnostics: vec![FileDiagnostic {
                line,
                column,
                message: message.into(),
            }],
        }
    }

    /// `path:line:column: message`, one per line.
    pub fn render(&self, path: &str) -> String {
        self.diagnostics
            .iter()
            .map(|d| format!("{path}:{}:{}: {}", d.line, d.column, d.message))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl From<Errors> for FileError {
    fn from(errors: Errors) -> FileError {
        let mut diagnostics: Vec<FileDiagnostic> = errors
            .iter()
            .map(|e| {
                let (line, column) = e.line_column();
                FileDiagnostic {
                    line,
                    column,
                    message: e.message.clone(),
                }
            })
            .collect();
        diagnostics.sort_by_key(|d| (d.line, d.column));
        FileError { diagnostics }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self
            .diagnostics
            .iter()
            .map(|d| format!("{}:{}: {}", d.line, d.column, d.message))
            .collect();
        f.write_str(&lines.join("\n"))
    }
}

impl std::error::Error for FileError {}

/// A parsed ops file: its `#[scan_op]` impls and `#[derive(ScanElement)]` structs (at top
/// level and in inline modules).
pub struct OpsFile {
    /// Each operator with the `#[scan_op] mod` items it sees (empty for a lone impl: what the
    /// macro sees is what `emit --file` sees).
    ops: Vec<(syn::ItemImpl, Vec<syn::Item>)>,
    /// Every struct of the file, for checks lowering can only make knowing field types.
    all_items: Vec<syn::Item>,
    structs: Vec<syn::ItemStruct>,
    /// Types with a hand-written `impl Copy for T {}`.
    copy_impls: Vec<String>,
}

fn derives_scan_element(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("derive"))
        .any(|a| {
            let mut found = false;
            let _ = a.parse_nested_meta(|m| {
                if m.path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "ScanElement")
                {
                    found = true;
                }
                Ok(())
            });
            found
        })
}

fn is_scan_op_impl(i: &syn::ItemImpl) -> bool {
    i.trait_
        .as_ref()
        .is_some_and(|(_, p, _)| p.segments.last().is_some_and(|s| s.ident == "ScanOp"))
}

fn collect(items: &[syn::Item], file: &mut OpsFile) {
    for item in items {
        file.all_items.push(item.clone());
        match item {
            syn::Item::Impl(i) if i.attrs.iter().any(is_scan_op_attr) => {
                file.ops.push((i.clone(), Vec::new()))
            }
            syn::Item::Impl(i)
                if i.trait_.as_ref().is_some_and(|(_, p, _)| {
                    p.segments.last().is_some_and(|s| s.ident == "Copy")
                }) =>
            {
                if let syn::Type::Path(p) = &*i.self_ty {
                    if let Some(seg) = p.path.segments.last() {
                        file.copy_impls.push(seg.ident.to_string());
                    }
                }
            }
            syn::Item::Struct(s) if derives_scan_element(&s.attrs) => file.structs.push(s.clone()),
            // `#[scan_op] mod`: every `impl ScanOp` in it is an operator that sees its items.
            syn::Item::Mod(m) if m.attrs.iter().any(is_scan_op_attr) => {
                if let Some((_, items)) = &m.content {
                    for it in items {
                        file.all_items.push(it.clone());
                        match it {
                            syn::Item::Impl(i) if is_scan_op_impl(i) => {
                                file.ops.push((i.clone(), items.clone()))
                            }
                            syn::Item::Impl(_) | syn::Item::Struct(_) => {
                                collect(std::slice::from_ref(it), file);
                                file.all_items.pop();
                            }
                            _ => {}
                        }
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect(items, file);
                }
            }
            _ => {}
        }
    }
}

/// Parses a Rust source file (syntax only: it is not compiled).
pub fn parse_ops_file(source: &str) -> Result<OpsFile, FileError> {
    let file = syn::parse_file(source).map_err(|e| FileError::from(Errors::from(e)))?;
    let mut ops_file = OpsFile {
        ops: Vec::new(),
        all_items: Vec::new(),
        structs: Vec::new(),
        copy_impls: Vec::new(),
    };
    collect(&file.items, &mut ops_file);
    Ok(ops_file)
}

fn op_name(i: &syn::ItemImpl) -> Option<String> {
    match &*i.self_ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

impl OpsFile {
    fn is_copy(&self, s: &syn::ItemStruct) -> bool {
        derives_copy(&s.attrs) == Some(true)
            || self.copy_impls.iter().any(|n| s.ident == n.as_str())
    }

    /// The names of the `#[scan_op]` operators, in file order.
    pub fn op_names(&self) -> Vec<String> {
        self.ops.iter().filter_map(|(i, _)| op_name(i)).collect()
    }

    /// The names of the `#[derive(ScanElement)]` structs, in file order.
    pub fn element_names(&self) -> Vec<String> {
        self.structs.iter().map(|s| s.ident.to_string()).collect()
    }

    /// The element type `ty` names (a primitive or a derived struct of this file).
    pub fn element_type(&self, ty: &syn::Type) -> Result<ElementType, FileError> {
        if let Some(p) = prim_of_type(ty) {
            return Ok(ElementType::Prim(p));
        }
        let name = match ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        match name.as_deref().and_then(|n| self.find_struct(n)) {
            Some(s) => self
                .struct_decl(s, &mut Vec::new())
                .map(ElementType::Struct)
                .map_err(FileError::from),
            None => {
                let shown = quote::ToTokens::to_token_stream(ty).to_string();
                let start = syn::spanned::Spanned::span(ty).start();
                Err(FileError::at(
                    start.line,
                    start.column + 1,
                    format!(
                        "element type `{shown}` is neither a primitive nor a `#[derive(ScanElement)] #[repr(C)]` struct in this file"
                    ),
                ))
            }
        }
    }

    fn find_struct(&self, name: &str) -> Option<&syn::ItemStruct> {
        self.structs.iter().find(|s| s.ident == name)
    }

    /// A struct's declaration, with its nested structs' (`outer` are those being declared,
    /// to catch a struct that contains itself).
    fn struct_decl(
        &self,
        s: &syn::ItemStruct,
        outer: &mut Vec<String>,
    ) -> Result<StructDecl, Errors> {
        let input = syn::DeriveInput::from(s.clone());
        let mut errors = Errors::new();
        if !self.is_copy(s) {
            errors.push(
                s.ident.span(),
                format!(
                    "ScanElement requires Copy: add #[derive(Clone, Copy)] to `{}`",
                    s.ident
                ),
            );
        }
        let el = match element_struct(&input) {
            Ok(el) => el,
            Err(e) => {
                errors.extend(e);
                return Err(errors);
            }
        };
        outer.push(s.ident.to_string());
        // Nested structs and `const` lengths, each checked (and reported) once.
        let mut nested = std::collections::HashMap::new();
        for (field, _, shape) in &el.fields {
            self.collect_nested(field, shape, outer, &mut nested, &mut errors);
        }
        outer.pop();
        let decl = el.resolve(&|n| nested.get(n).cloned(), &|e| self.const_usize(e));
        match decl {
            Some(d) if errors.is_empty() => Ok(d),
            _ => {
                if errors.is_empty() {
                    errors.push(s.ident.span(), "this struct's layout cannot be computed");
                }
                Err(errors)
            }
        }
    }

    fn collect_nested(
        &self,
        field: &syn::Ident,
        shape: &crate::element::FieldShape,
        outer: &mut Vec<String>,
        nested: &mut std::collections::HashMap<String, StructDecl>,
        errors: &mut Errors,
    ) {
        use crate::element::FieldShape;
        use syn::spanned::Spanned;
        match shape {
            FieldShape::Array(t, len) => {
                if !matches!(len, syn::Expr::Lit(_)) && self.const_usize(len).is_none() {
                    errors.push(
                        len.span(),
                        format!("the length of `{field}` must be a literal or a `const` of this file with a literal value"),
                    );
                }
                self.collect_nested(field, t, outer, nested, errors);
            }
            FieldShape::Struct(name, ty) => {
                if outer.contains(name) {
                    errors.push(ty.span(), format!("`{name}` contains itself"));
                    return;
                }
                if nested.contains_key(name) {
                    return;
                }
                match self.find_struct(name) {
                    Some(inner) => match self.struct_decl(inner, outer) {
                        Ok(d) => {
                            nested.insert(name.clone(), d);
                        }
                        Err(e) => errors.extend(e),
                    },
                    None => errors.push(
                        ty.span(),
                        format!("field `{field}`: `{name}` is not a `#[derive(ScanElement)] #[repr(C)]` struct in this file"),
                    ),
                }
            }
            FieldShape::Prim(_) | FieldShape::Bool => {}
        }
    }

    /// The value of a `const N: usize = 4;` of the file, named as an array length.
    fn const_usize(&self, e: &syn::Expr) -> Option<usize> {
        let syn::Expr::Path(p) = e else { return None };
        let name = p.path.segments.last()?.ident.to_string();
        self.all_items.iter().find_map(|it| match it {
            syn::Item::Const(c) if c.ident == name => match &*c.expr {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(n),
                    ..
                }) => n.base10_parse().ok(),
                _ => None,
            },
            _ => None,
        })
    }

    /// The operator `name`'s impl and the `#[scan_op] mod` items it sees.
    pub(crate) fn op_item(&self, name: &str) -> Option<(&syn::ItemImpl, &[syn::Item])> {
        self.ops
            .iter()
            .find(|(i, _)| op_name(i).as_deref() == Some(name))
            .map(|(i, m)| (i, m.as_slice()))
    }

    /// The Rust name and layout of every `#[derive(ScanElement)]` struct whose layout can be
    /// computed (the others are reported when an operator uses them).
    pub(crate) fn struct_decls(&self) -> Vec<(String, StructDecl)> {
        self.structs
            .iter()
            .filter_map(|s| {
                let decl = self.struct_decl(s, &mut Vec::new()).ok()?;
                Some((s.ident.to_string(), decl))
            })
            .collect()
    }

    /// The full operator `name`: lowered bodies and element layout.
    pub fn op_spec(&self, name: &str) -> Result<OpSpec, FileError> {
        let Some((item, module)) = self
            .ops
            .iter()
            .find(|(i, _)| op_name(i).as_deref() == Some(name))
        else {
            let known = self.op_names();
            let list = if known.is_empty() {
                "the file has no `#[scan_op] impl ScanOp for ...`".to_string()
            } else {
                format!("operators in the file: {}", known.join(", "))
            };
            return Err(FileError::at(
                1,
                1,
                format!("no `#[scan_op] impl ScanOp for {name}` in the file; {list}"),
            ));
        };
        let mut scope = Scope::module(module);
        scope.add_structs(&self.all_items);
        let lowered = lower_impl_in(item, &scope).map_err(FileError::from)?;
        let element = self.element_type(&lowered.elem_ty)?;
        Ok(lowered.to_op_spec(element))
    }

    /// The operator `name` and its `lift`/`project` (`None` when it has neither), lowered.
    pub fn op_transform(
        &self,
        name: &str,
    ) -> Result<(OpSpec, Option<scan_core::TransformSpec>), FileError> {
        let spec = self.op_spec(name)?;
        let (item, module) = self.op_item(name).expect("op_spec found it");
        let mut scope = Scope::module(module);
        scope.add_structs(&self.all_items);
        let lowered = lower_impl_in(item, &scope).map_err(FileError::from)?;
        let transform = lowered
            .transform
            .as_ref()
            .map(|t| t.to_transform_spec(&spec.element));
        Ok((spec, transform))
    }
}
