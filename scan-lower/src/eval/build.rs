//! An [`EvalOp`] from an ops file: the operator is lowered first (so the evaluator only ever
//! runs what the lowering accepts, and reports the same errors), then its bodies are
//! converted to the IR again and kept.

use super::program::{LiftIr, Program, ProjectIr};
use super::value::{FieldDef, StructDef, Target};
use super::EvalOp;
use crate::error::Errors;
use crate::file::{FileError, OpsFile};
use crate::ir::{collect_items, Builder, Ty};
use scan_core::{ElementType, FieldType, StructDecl};
use std::collections::HashMap;
use std::rc::Rc;

impl OpsFile {
    /// The operator `name` as a CPU evaluator: lowered (every error the lowering finds is
    /// returned), then ready to run on elements as bytes.
    pub fn evaluator(&self, name: &str) -> Result<EvalOp, FileError> {
        let spec = self.op_spec(name)?;
        let (item, module) = self.op_item(name).expect("op_spec found it");
        let mut errors = Errors::new();
        let shape = crate::op::check_impl(item, &mut errors);
        let elem_rust = match spec.element {
            ElementType::Struct(_) => shape
                .elem_ty
                .as_ref()
                .and_then(crate::op::elem_ref)
                .and_then(|e| match e {
                    crate::emit::ElemRef::Struct(s) => Some(s),
                    crate::emit::ElemRef::Prim(_) => None,
                }),
            ElementType::Prim(_) => None,
        };

        // Struct definitions by Rust name; nested struct fields name their C declaration.
        let decls = self.struct_decls();
        let c_to_rust: HashMap<String, String> = decls
            .iter()
            .map(|(rust, d)| (d.name.clone(), rust.clone()))
            .collect();
        let mut defs: HashMap<String, Rc<StructDef>> = HashMap::new();
        for (rust, decl) in &decls {
            let def = struct_def(decl, &c_to_rust, &mut defs);
            defs.insert(rust.clone(), def);
        }
        let elem = match &spec.element {
            ElementType::Prim(p) => Target::Prim(*p),
            ElementType::Struct(d) => Target::Struct(struct_def(d, &c_to_rust, &mut defs)),
        };

        let find = |n: &str| {
            item.items.iter().find_map(|it| match it {
                syn::ImplItem::Fn(f) if f.sig.ident == n => Some(f),
                _ => None,
            })
        };
        let (combine_fn, identity_fn) = match (find("combine"), find("identity")) {
            (Some(c), Some(i)) => (c, i),
            _ => unreachable!("op_spec checked that both exist"),
        };
        let mut ir_errors = Errors::new();
        let (combine, identity, lift, project) = {
            let mut b = Builder {
                errors: &mut ir_errors,
                elem_name: elem_rust.clone(),
            };
            let lift = find("lift").map(|f| lift_ir(&mut b, f));
            let project = find("project").map(|f| project_ir(&mut b, f));
            (
                b.block(&combine_fn.block),
                b.block(&identity_fn.block),
                lift,
                project,
            )
        };
        let (lift, project) = match (lift.transpose(), project.transpose()) {
            (Ok(l), Ok(p)) => (l, p),
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        if !ir_errors.is_empty() {
            return Err(FileError::from(ir_errors));
        }
        let mut params = combine_fn.sig.inputs.iter().map(|a| match a {
            syn::FnArg::Typed(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) => Some(pi.ident.to_string()),
                _ => None,
            },
            syn::FnArg::Receiver(_) => None,
        });
        let combine_params = [params.next().flatten(), params.next().flatten()];
        let (module_items, _) = collect_items(module);

        Ok(EvalOp {
            prog: Program {
                op_name: spec.name.clone(),
                elem,
                elem_rust,
                structs: defs,
                module: module_items,
                combine_params,
                combine,
                identity,
                lift,
                project,
                helpers: Default::default(),
                consts: Default::default(),
            },
            element: spec.element,
        })
    }
}

fn struct_def(
    decl: &StructDecl,
    c_to_rust: &HashMap<String, String>,
    defs: &mut HashMap<String, Rc<StructDef>>,
) -> Rc<StructDef> {
    let rust = c_to_rust
        .get(&decl.name)
        .cloned()
        .unwrap_or_else(|| decl.name.clone());
    if let Some(d) = defs.get(&rust) {
        return d.clone();
    }
    let fields = decl
        .fields
        .iter()
        .zip(decl.field_offsets())
        .map(|(f, offset)| FieldDef {
            rust: rust_field_name(&f.name),
            ty: field_target(&f.ty, c_to_rust, defs),
            offset,
        })
        .collect();
    let def = Rc::new(StructDef {
        rust_name: rust.clone(),
        fields,
        size: decl.size,
    });
    defs.insert(rust, def.clone());
    def
}

fn field_target(
    ty: &FieldType,
    c_to_rust: &HashMap<String, String>,
    defs: &mut HashMap<String, Rc<StructDef>>,
) -> Target {
    match ty {
        FieldType::Prim(p) => Target::Prim(*p),
        FieldType::Bool => Target::Bool,
        FieldType::Array(t, n) => Target::Array(Box::new(field_target(t, c_to_rust, defs)), *n),
        FieldType::Struct(d) => Target::Struct(struct_def(d, c_to_rust, defs)),
    }
}

/// The Rust name of a field from its C name: `crate::names::field_name` appends one `_` to a
/// reserved name or one ending in `_`, so that is the `_` to take off.
fn rust_field_name(c: &str) -> String {
    match c.strip_suffix('_') {
        Some(r) if crate::names::field_name(r) == c => r.to_string(),
        _ => c.to_string(),
    }
}

/// A parameter's name (`None` for `_` or a pattern the lowering would have refused).
fn param_name(arg: &syn::FnArg) -> Option<String> {
    match arg {
        syn::FnArg::Typed(pt) => match &*pt.pat {
            syn::Pat::Ident(pi) => Some(pi.ident.to_string()),
            _ => None,
        },
        syn::FnArg::Receiver(_) => None,
    }
}

/// A written type, or the error at it (the lowering accepted the signature, so this is rare).
fn written_ty(b: &mut Builder<'_>, ty: &syn::Type, what: &str) -> Result<Ty, FileError> {
    b.ty(ty, what).ok_or_else(|| {
        let start = syn::spanned::Spanned::span(ty).start();
        FileError::at(
            start.line,
            start.column + 1,
            format!("the CPU evaluator cannot read the type of {what}"),
        )
    })
}

/// `fn lift(a: A, …, index: u64) -> Elem`: the inputs, then the index.
fn lift_ir(b: &mut Builder<'_>, f: &syn::ImplItemFn) -> Result<LiftIr, FileError> {
    let mut inputs = Vec::new();
    let args: Vec<&syn::FnArg> = f.sig.inputs.iter().collect();
    let Some((index, values)) = args.split_last() else {
        let start = f.sig.ident.span().start();
        return Err(FileError::at(
            start.line,
            start.column + 1,
            "`lift` takes its inputs and then the index",
        ));
    };
    for arg in values {
        let syn::FnArg::Typed(pt) = arg else { continue };
        inputs.push((param_name(arg), written_ty(b, &pt.ty, "a `lift` input")?));
    }
    Ok(LiftIr {
        inputs,
        index: param_name(index),
        body: b.block(&f.block),
    })
}

/// `fn project(e: Elem) -> Out`.
fn project_ir(b: &mut Builder<'_>, f: &syn::ImplItemFn) -> Result<ProjectIr, FileError> {
    let start = f.sig.ident.span().start();
    let syn::ReturnType::Type(_, out) = &f.sig.output else {
        return Err(FileError::at(
            start.line,
            start.column + 1,
            "`project` returns the output value",
        ));
    };
    Ok(ProjectIr {
        param: f.sig.inputs.first().and_then(param_name),
        output: written_ty(b, out, "`project`'s output")?,
        body: b.block(&f.block),
    })
}
