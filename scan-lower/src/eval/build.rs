//! An [`EvalOp`] from an ops file: the operator is lowered first (so the evaluator only ever
//! runs what the lowering accepts, and reports the same errors), then its bodies are
//! converted to the IR again and kept.

use super::program::Program;
use super::value::{FieldDef, StructDef, Target};
use super::EvalOp;
use crate::error::Errors;
use crate::file::{FileError, OpsFile};
use crate::ir::{collect_items, Builder};
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
        let (combine, identity) = {
            let mut b = Builder {
                errors: &mut ir_errors,
                elem_name: elem_rust.clone(),
            };
            (b.block(&combine_fn.block), b.block(&identity_fn.block))
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
                module: Rc::new(module_items),
                combine_params,
                combine,
                identity,
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
