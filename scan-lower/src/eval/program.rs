//! An operator's IR as the evaluator runs it: the two bodies, the items they can reach
//! (module `const`s and `fn`s, inherent methods, items declared in blocks) and the structs.
//!
//! Helpers and `const`s are converted from syn to the IR on first use, as the lowering does
//! (a module may hold functions only the CPU calls), and cached.

use super::error::{unsupported, EvalError};
use super::value::Target;
use crate::error::Errors;
use crate::ir::{Block, Builder, ConstItem, Expr, FnItem, Item, Pat, StructRef, Ty};
use proc_macro2::Span;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// A chain of item scopes, outermost first: what a name in a body can refer to besides
/// locals.
pub(crate) type ItemChain<'a> = Vec<&'a [Item]>;

/// A helper function, converted.
pub(crate) struct Helper {
    pub params: Vec<(Pat, Option<Ty>)>,
    pub ret: Option<Ty>,
    pub body: Block,
    /// What `Self` names inside it: the type of the impl it is declared in.
    pub owner: Option<String>,
}

/// A `const`'s written type and initialiser, converted.
pub(crate) struct ConstIr {
    pub ty: Option<Ty>,
    pub init: Expr,
}

/// `lift`'s parameters (one per input array, then the element's index) and body.
pub(crate) struct LiftIr {
    /// Each input's name (`None`: `_`) and written type.
    pub inputs: Vec<(Option<String>, Ty)>,
    /// The index parameter's name (`None`: `_`).
    pub index: Option<String>,
    pub body: Block,
}

/// `project`'s parameter (the element), output type and body.
pub(crate) struct ProjectIr {
    pub param: Option<String>,
    pub output: Ty,
    pub body: Block,
}

pub(crate) struct Program {
    pub op_name: String,
    pub elem: Target,
    /// The element struct's Rust name (`Self::Elem`, `StructRef::Elem`).
    pub elem_rust: Option<String>,
    /// Element structs by Rust name.
    pub structs: HashMap<String, Rc<super::value::StructDef>>,
    pub module: Vec<Item>,
    /// `combine`'s parameter names (`None`: `_`) and body.
    pub combine_params: [Option<String>; 2],
    pub combine: Block,
    pub identity: Block,
    /// `fn lift`, when the operator has one.
    pub lift: Option<LiftIr>,
    /// `fn project`, when the operator has one.
    pub project: Option<ProjectIr>,
    /// Helpers and `const`s converted so far, by item. A list: an operator uses a few, and
    /// comparing pointers beats hashing them in an unoptimised build.
    pub helpers: RefCell<Vec<(*const FnItem, Rc<Helper>)>>,
    pub consts: RefCell<Vec<(*const ConstItem, Rc<ConstIr>)>>,
}

/// The IR of syn that the lowering has already accepted; an error here would be a bug.
fn built<T>(errors: Errors, value: T, span: Span) -> Result<T, EvalError> {
    if errors.is_empty() {
        Ok(value)
    } else {
        let first = errors.iter().next().map(|e| e.message.clone());
        Err(unsupported(span, first.unwrap_or_default()))
    }
}

impl Program {
    pub fn builder<'e>(&self, errors: &'e mut Errors) -> Builder<'e> {
        Builder {
            errors,
            elem_name: self.elem_rust.clone(),
        }
    }

    /// The Rust name a struct reference means where `Self` is `self_ty`.
    pub fn struct_name<'a>(
        &'a self,
        r: &'a StructRef,
        self_ty: Option<&'a str>,
        span: Span,
    ) -> Result<&'a str, EvalError> {
        match r {
            StructRef::Elem => self.elem_rust.as_deref().ok_or_else(|| {
                unsupported(span, "`Self::Elem` of a primitive element as a struct")
            }),
            StructRef::SelfTy => self_ty.ok_or_else(|| unsupported(span, "`Self` outside an impl")),
            StructRef::Named(n) => Ok(n),
        }
    }

    pub fn struct_def(
        &self,
        name: &str,
        span: Span,
    ) -> Result<Rc<super::value::StructDef>, EvalError> {
        if let (Some(e), Target::Struct(d)) = (&self.elem_rust, &self.elem) {
            if e == name {
                return Ok(d.clone());
            }
        }
        self.structs.get(name).cloned().ok_or_else(|| {
            unsupported(
                span,
                format!("the struct `{name}` (not a `#[derive(ScanElement)]` struct of the file)"),
            )
        })
    }

    /// A helper's converted signature and body.
    pub fn helper(&self, item: &Rc<FnItem>) -> Result<Rc<Helper>, EvalError> {
        let key = Rc::as_ptr(item);
        if let Some(h) = cached(&self.helpers.borrow(), key) {
            return Ok(h);
        }
        let mut errors = Errors::new();
        let (sig, body) = {
            let mut b = self.builder(&mut errors);
            (b.fn_sig(item), b.block(&item.block))
        };
        let (sig, body) = built(errors, (sig, body), item.sig.ident.span())?;
        let helper = Rc::new(Helper {
            params: sig.params,
            ret: sig.ret,
            body,
            owner: item.owner.clone(),
        });
        self.helpers.borrow_mut().push((key, helper.clone()));
        Ok(helper)
    }

    /// A `const`'s type and initialiser, converted.
    pub fn const_ir(&self, item: &Rc<ConstItem>) -> Result<Rc<ConstIr>, EvalError> {
        let key = Rc::as_ptr(item);
        if let Some(c) = cached(&self.consts.borrow(), key) {
            return Ok(c);
        }
        let mut errors = Errors::new();
        let (ty, init) = {
            let mut b = self.builder(&mut errors);
            (b.ty(&item.ty, "`const`s"), b.expr(&item.init))
        };
        let ir = Rc::new(built(errors, ConstIr { ty, init }, item.span)?);
        self.consts.borrow_mut().push((key, ir.clone()));
        Ok(ir)
    }
}

/// The conversion of the item at `key`, when made.
fn cached<T, C>(converted: &[(*const T, Rc<C>)], key: *const T) -> Option<Rc<C>> {
    for (item, c) in converted {
        if *item == key {
            return Some(c.clone());
        }
    }
    None
}

/// Finds the item `owner::name` (`name` without an owner) in a chain; returns it with the
/// chain it was declared in (what it sees).
pub(crate) fn find_item<'a>(
    chain: &ItemChain<'a>,
    owner: Option<&str>,
    name: &str,
) -> Option<(Item, ItemChain<'a>)> {
    for (depth, scope) in chain.iter().enumerate().rev() {
        for it in scope.iter().rev() {
            if it.name() == name && it.owner() == owner {
                return Some((it.clone(), chain[..=depth].to_vec()));
            }
        }
    }
    None
}

/// How an item is written where it is used (`name`, `Owner::name`), for error messages.
pub(crate) fn item_key(owner: Option<&str>, name: &str) -> String {
    match owner {
        Some(o) => format!("{o}::{name}"),
        None => name.to_string(),
    }
}
