//! Lowering the IR to C++ text.
//!
//! Rust's blocks, `if`s and `match`es are expressions; C++'s are statements. An expression
//! lowers to a C++ expression plus, where needed, statements emitted before it (temporaries
//! declared with their type, assigned in each branch). Everything in the supported subset is
//! pure, so hoisting those statements changes nothing but the text.
//!
//! Types: rustc has already type-checked the Rust, so this only tracks what C++ must be told:
//! which primitive a value is when the Rust says (parameters, casts, annotations, suffixes),
//! `decltype(S::field)` for struct fields (their types are C++'s business), and untyped
//! literals, which take the type of the operand beside them, the annotation, the field or the
//! return. The same C++ comes out whether or not the struct declarations are visible; when
//! they are (`emit --file`, a `#[scan_op] mod`), they only add checks.
//!
//! Files: `literal.rs` (literals and their types), `types.rs` (C++ types of values, fields,
//! elements), `stmt.rs` (statements, loops, returns), `expr.rs` (operators, `if`, structs,
//! tuples, arrays), `pattern.rs` (`match`, `if let`, destructuring), `call.rs` (methods,
//! helpers, constants).

mod call;
mod expr;
mod infer;
mod literal;
mod pattern;
mod stmt;
mod types;

use crate::error::Errors;
use crate::ir::{Block, ConstItem, Expr, FnItem, Item, StructInfo};
use proc_macro2::Span;
use scan_core::PrimType;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

pub(crate) use literal::LitVal;

/// The element type as lowering needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ElemRef {
    /// A primitive number type.
    Prim(PrimType),
    /// A struct, by its Rust name.
    Struct(String),
}

impl ElemRef {
    /// The name the generated C declares the type with.
    pub fn c_name(&self) -> String {
        match self {
            ElemRef::Prim(p) => p.name().to_string(),
            ElemRef::Struct(s) => crate::names::struct_name(s),
        }
    }
}

/// What lowering knows about a value's type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CTy {
    Prim(PrimType),
    Bool,
    /// A struct by its Rust name (the element or another `#[derive(ScanElement)]` struct).
    Struct(String),
    /// `[T; N]`: `rs_array<T, N>` in C++.
    Array(Box<CTy>, u64),
    /// `(A, B)`: `rs_tuple2<A, B>` in C++.
    Tuple(Vec<CTy>),
    /// A type only C++ knows (a field: `decltype(S::f)`), and the Rust type when the struct
    /// declarations are visible (for checks only: the C++ text never depends on it).
    Opaque {
        cpp: String,
        known: Option<Box<CTy>>,
    },
    IntLit,
    FloatLit,
    /// A `for` variable: `i64` in C++, converted to whatever its use needs (Rust infers its type
    /// from the uses; its constant range fits any of them).
    Index,
    Never,
}

impl CTy {
    fn is_lit(&self) -> bool {
        matches!(self, CTy::IntLit | CTy::FloatLit)
    }
    fn is_concrete(&self) -> bool {
        !matches!(self, CTy::IntLit | CTy::FloatLit | CTy::Never | CTy::Index)
    }
    fn opaque(cpp: String, known: Option<CTy>) -> CTy {
        CTy::Opaque {
            cpp,
            known: known.map(Box::new),
        }
    }
    /// The Rust type where known (an opaque field's declared type).
    fn resolved(&self) -> Option<&CTy> {
        match self {
            CTy::Opaque { known, .. } => known.as_deref().and_then(CTy::resolved),
            other => Some(other),
        }
    }
    fn is_float(&self) -> bool {
        matches!(self.resolved(), Some(CTy::Prim(p)) if p.is_float())
    }
}

#[derive(Clone, Debug)]
struct Val {
    code: String,
    ty: CTy,
    /// Needs no parentheses as an operand.
    atomic: bool,
    lit: Option<LitVal>,
}

impl Val {
    fn new(code: impl Into<String>, ty: CTy, atomic: bool) -> Val {
        Val {
            code: code.into(),
            ty,
            atomic,
            lit: None,
        }
    }
    fn error() -> Val {
        Val::new("0", CTy::Never, true)
    }
    fn operand(&self) -> String {
        if self.atomic {
            self.code.clone()
        } else {
            format!("({})", self.code)
        }
    }
}

#[derive(Clone, Debug)]
enum Binding {
    Var {
        cpp: String,
        ty: CTy,
    },
    /// `let x = 0.5;`: a literal whose type each use decides.
    Alias(Expr),
    /// A `for` variable and the values it takes (inclusive).
    Index {
        cpp: String,
        lo: i128,
        hi: i128,
    },
    /// A `const`, lowered where it is used, in the scope it was declared in (`env`).
    Const {
        item: Rc<ConstItem>,
        env: usize,
    },
    /// A helper function, lowered once, in the scope it was declared in (`env`).
    Fn {
        item: Rc<FnItem>,
        env: usize,
    },
}

impl Binding {
    fn is_item(&self) -> bool {
        matches!(self, Binding::Const { .. } | Binding::Fn { .. })
    }
}

struct Line {
    indent: usize,
    text: String,
}

/// A helper function: its signature, and once lowered, its C++ definition.
struct Helper {
    item: Rc<FnItem>,
    env: usize,
    c_name: String,
    params: Vec<CTy>,
    ret: CTy,
    text: Option<String>,
    /// Helpers this one calls.
    calls: BTreeSet<usize>,
}

/// State shared by an operator's bodies and every helper they reach.
pub(crate) struct Ctx {
    pub errors: Errors,
    /// The element's Rust name when it is a struct (`StructRef::Elem`, and `Named` of it).
    elem_struct: Option<String>,
    /// Structs whose fields are visible (checks only).
    structs: Vec<StructInfo>,
    /// Item scopes: what a helper or a `const` declared in one sees.
    envs: Vec<Vec<(String, Binding)>>,
    helpers: Vec<Helper>,
    /// Helpers being lowered (a call to one of them is recursion).
    in_progress: Vec<usize>,
    /// `const`s being lowered (a use of one of them is a cycle).
    consts_in_progress: Vec<*const ConstItem>,
    /// Converted `const` initialisers and helper bodies, so each is checked (and each error
    /// reported) once.
    const_ir: HashMap<*const ConstItem, (Option<crate::ir::Ty>, Expr)>,
}

impl Ctx {
    /// `items` are the module's (`#[scan_op] mod`); `structs` the visible struct declarations.
    pub fn new(elem: &ElemRef, items: &[Item], structs: Vec<StructInfo>) -> Ctx {
        let elem_struct = match elem {
            ElemRef::Struct(s) => Some(s.clone()),
            ElemRef::Prim(_) => None,
        };
        let mut ctx = Ctx {
            errors: Errors::new(),
            elem_struct,
            structs,
            envs: Vec::new(),
            helpers: Vec::new(),
            in_progress: Vec::new(),
            consts_in_progress: Vec::new(),
            const_ir: HashMap::new(),
        };
        ctx.new_env(Vec::new(), items);
        ctx
    }

    /// A new item scope: `outer` (bindings visible where it starts) plus `items`, each of
    /// which sees the whole scope (items of a block may use each other in any order).
    fn new_env(&mut self, outer: Vec<(String, Binding)>, items: &[Item]) -> usize {
        let id = self.envs.len();
        let mut env = outer;
        for it in items {
            let key = match it.owner() {
                Some(o) => format!("{o}::{}", it.name()),
                None => it.name().to_string(),
            };
            let b = match it {
                Item::Const(c) => Binding::Const {
                    item: c.clone(),
                    env: id,
                },
                Item::Fn(f) => Binding::Fn {
                    item: f.clone(),
                    env: id,
                },
            };
            env.push((key, b));
        }
        self.envs.push(env);
        id
    }
}

pub(crate) struct Lowerer<'c> {
    ctx: &'c mut Ctx,
    /// What `Self` names: the operator type in `combine`/`identity`, the impl's type in a
    /// helper declared in one.
    self_ty: Option<String>,
    /// The function's return type.
    ret: CTy,
    out: Vec<Line>,
    indent: usize,
    scopes: Vec<Vec<(String, Binding)>>,
    used: HashSet<String>,
    /// Every name declared so far, in order.
    declared: Vec<String>,
    /// Enclosing loops (for `break`/`continue`).
    loops: usize,
    /// Helpers this function calls.
    calls: BTreeSet<usize>,
    /// The index checks already emitted (each is a compile-time check: once is enough).
    asserts: HashSet<String>,
    /// Lowering only to learn a type (see `infer.rs`): what it emits is thrown away.
    dry: bool,
}

impl<'c> Lowerer<'c> {
    /// A function returning `ret`, seeing the item scope `env`.
    fn with_env(ctx: &'c mut Ctx, env: usize, self_ty: Option<String>, ret: CTy) -> Lowerer<'c> {
        let mut used = HashSet::new();
        if let Some(e) = &ctx.elem_struct {
            used.insert(crate::names::struct_name(e));
        }
        let base = ctx.envs[env].clone();
        Lowerer {
            ctx,
            self_ty,
            ret,
            out: Vec::new(),
            indent: 0,
            scopes: vec![base],
            used,
            declared: Vec::new(),
            loops: 0,
            calls: BTreeSet::new(),
            asserts: HashSet::new(),
            dry: false,
        }
    }

    /// `combine` or `identity` of the operator `op`, returning the element.
    pub fn operator_fn(ctx: &'c mut Ctx, op: &str, elem: &ElemRef) -> Lowerer<'c> {
        let ret = match elem {
            ElemRef::Prim(p) => CTy::Prim(*p),
            ElemRef::Struct(s) => CTy::Struct(s.clone()),
        };
        Lowerer::with_env(ctx, 0, Some(op.to_string()), ret)
    }

    /// `lift` or `project` of the operator `op`, returning `ret` (a primitive or the element).
    pub fn transform_fn(ctx: &'c mut Ctx, op: &str, ret: &ElemRef) -> Lowerer<'c> {
        Lowerer::operator_fn(ctx, op, ret)
    }

    /// Declares a parameter of type `ty` (a primitive or the element); returns its C++ name.
    pub fn param_of(&mut self, rust: Option<&str>, fallback: &str, ty: &ElemRef) -> String {
        let cpp = self.declare_name(rust.unwrap_or(fallback));
        if let Some(r) = rust {
            let ty = match ty {
                ElemRef::Prim(p) => CTy::Prim(*p),
                ElemRef::Struct(s) => CTy::Struct(s.clone()),
            };
            self.bind(
                r,
                Binding::Var {
                    cpp: cpp.clone(),
                    ty,
                },
            );
        }
        cpp
    }

    fn error(&mut self, span: Span, msg: impl Into<String>) -> Val {
        self.ctx.errors.push(span, msg);
        Val::error()
    }

    fn line(&mut self, text: impl Into<String>) -> usize {
        self.out.push(Line {
            indent: self.indent,
            text: text.into(),
        });
        self.out.len() - 1
    }

    /// A C++ name for a Rust local: the same name unless it is a C++ keyword, a helper's
    /// prefix, or already used in this function (C++ has no shadowing in one scope). Names
    /// lowering makes up start with `#` (no Rust name can), which is dropped here.
    fn declare_name(&mut self, rust: &str) -> String {
        let rust = crate::names::unraw(rust.trim_start_matches('#'));
        let mut base = rust.to_string();
        if crate::names::is_reserved(rust) {
            base.push('_');
        }
        let mut name = base.clone();
        let mut k = 1;
        while self.used.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(name.clone());
        self.declared.push(name.clone());
        name
    }

    fn fresh(&mut self, prefix: &str) -> String {
        let mut k = 0;
        loop {
            let name = format!("{prefix}{k}");
            if !self.used.contains(&name) {
                self.used.insert(name.clone());
                self.declared.push(name.clone());
                return name;
            }
            k += 1;
        }
    }

    fn bind(&mut self, rust: &str, b: Binding) {
        self.scopes
            .last_mut()
            .expect("scope")
            .push((rust.to_string(), b));
    }

    fn lookup(&self, rust: &str) -> Option<Binding> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == rust)
            .map(|(_, b)| b.clone())
    }

    fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    /// A scope for a block: its `const`s and `fn`s are visible in all of it.
    fn push_block_scope(&mut self, b: &Block) {
        if b.items.is_empty() {
            self.push_scope();
            return;
        }
        let outer: Vec<(String, Binding)> = self
            .scopes
            .iter()
            .flat_map(|s| s.iter())
            .filter(|(_, b)| b.is_item())
            .cloned()
            .collect();
        let env = self.ctx.new_env(outer, &b.items);
        let own = self.ctx.envs[env]
            .iter()
            .rev()
            .take(b.items.len())
            .cloned()
            .collect::<Vec<_>>();
        self.scopes.push(own.into_iter().rev().collect());
    }

    fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// Declares a parameter of the element type; returns its C++ name.
    pub fn param(&mut self, rust: Option<&str>, fallback: &str) -> String {
        let cpp = self.declare_name(rust.unwrap_or(fallback));
        if let Some(r) = rust {
            let ty = self.ret.clone();
            self.bind(
                r,
                Binding::Var {
                    cpp: cpp.clone(),
                    ty,
                },
            );
        }
        cpp
    }

    /// Lowers a function body; returns the C++ statements, preceded by the helpers it
    /// reaches (static members of a local struct, which C++ allows inside a function).
    pub fn body(mut self, block: &Block) -> String {
        self.tail_block(block);
        let mut text = String::new();
        let helpers = self.ctx.reachable(&self.calls);
        if !helpers.is_empty() {
            text.push_str("struct scan_fns {\n");
            for h in helpers {
                for l in self.ctx.helpers[h].text.as_deref().unwrap_or("").lines() {
                    text.push_str("    ");
                    text.push_str(l);
                    text.push('\n');
                }
            }
            text.push_str("};\n");
        }
        text.push_str(&self.text());
        text
    }

    fn text(&self) -> String {
        self.out
            .iter()
            .map(|l| format!("{}{}", "    ".repeat(l.indent), l.text))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Ctx {
    /// Helpers reachable from `calls`, in the order they were first lowered.
    fn reachable(&self, calls: &BTreeSet<usize>) -> Vec<usize> {
        let mut seen: BTreeSet<usize> = BTreeSet::new();
        let mut todo: Vec<usize> = calls.iter().copied().collect();
        while let Some(h) = todo.pop() {
            if seen.insert(h) {
                todo.extend(self.helpers[h].calls.iter().copied());
            }
        }
        seen.into_iter().collect()
    }
}
