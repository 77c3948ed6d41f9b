//! The tree-walking interpreter: expressions. Statements, loops and assignment are in
//! `control.rs`, patterns in `pattern.rs`, calls and names in `names.rs`.

use super::arith;
use super::error::{line_of, unsupported, EvalError};
use super::program::{ItemChain, Program};
use super::value::{StructDef, Target, Value};
use crate::ir::{BinOp, Const, Expr, ExprKind, Lit, StructRef, Ty, UnOp};
use crate::methods::Method;
use proc_macro2::Span;
use scan_core::PrimType;

/// How evaluation leaves an expression other than with its value. Boxed, so that an
/// `R<Value>` is no bigger than a `Value` (every expression returns one).
pub(crate) enum Flow {
    Break,
    Continue,
    Return(Box<Value>),
    Error(Box<EvalError>),
}

impl From<EvalError> for Flow {
    fn from(e: EvalError) -> Flow {
        Flow::Error(Box::new(e))
    }
}

pub(crate) type R<T> = Result<T, Flow>;

/// One function call's state. It borrows the names it binds and the items it sees from the
/// IR it runs (`'a`), so entering a scope or binding a local allocates no string.
pub(crate) struct Frame<'a> {
    /// Locals in scope, innermost last; a scope ends by truncating to its [`Frame::scope`].
    locals: Vec<(&'a str, Value)>,
    pub items: ItemChain<'a>,
    /// What `Self` names.
    pub self_ty: Option<&'a str>,
}

impl<'a> Frame<'a> {
    pub fn new(items: ItemChain<'a>, self_ty: Option<&'a str>) -> Frame<'a> {
        Frame {
            locals: Vec::new(),
            items,
            self_ty,
        }
    }

    /// Makes a frame that ran one of the operator's bodies ready to run another: a body that
    /// returned has closed its scopes, so only its parameters are left.
    pub fn reuse(&mut self) {
        self.locals.clear();
    }

    /// Where a scope opened now starts: [`Frame::end_scope`] drops what it bound.
    pub fn scope(&self) -> usize {
        self.locals.len()
    }

    pub fn end_scope(&mut self, start: usize) {
        self.locals.truncate(start);
    }

    pub fn bind(&mut self, name: &'a str, v: Value) {
        if name != "_" {
            self.locals.push((name, v));
        }
    }

    pub fn local(&self, name: &str) -> Option<&Value> {
        let slot = self.slot(name)?;
        Some(&self.locals[slot].1)
    }

    pub fn local_mut(&mut self, name: &str) -> Option<&mut Value> {
        let slot = self.slot(name)?;
        Some(&mut self.locals[slot].1)
    }

    /// Where the innermost local `name` is.
    fn slot(&self, name: &str) -> Option<usize> {
        let locals = self.locals.as_slice();
        let mut slot = locals.len();
        while slot > 0 {
            slot -= 1;
            if locals[slot].0 == name {
                return Some(slot);
            }
        }
        None
    }
}

/// Loop iterations and calls one evaluation may take before it is judged endless.
pub(crate) const STEP_LIMIT: u64 = 10_000_000;
/// Nested helper calls (the lowering refuses recursion; this keeps the stack bounded anyway).
const DEPTH_LIMIT: usize = 256;

pub(crate) struct Interp<'p> {
    pub prog: &'p Program,
    pub steps: u64,
    pub depth: usize,
    /// The arguments of the built-in method calls being evaluated, innermost last. Kept
    /// between calls (and a scan's elements), so that a call allocates none.
    args: Vec<Value>,
    /// The fields of the struct literals being evaluated, innermost last; kept likewise.
    fields: Vec<Option<Value>>,
}

impl<'p> Interp<'p> {
    pub fn new(prog: &'p Program) -> Interp<'p> {
        Interp {
            prog,
            steps: 0,
            depth: 0,
            args: Vec::new(),
            fields: Vec::new(),
        }
    }

    /// Makes the interpreter ready for another evaluation: the step limit applies to each.
    pub fn start(&mut self) {
        self.steps = 0;
    }

    /// Counts one step (a loop iteration, a call).
    pub fn step(&mut self, span: Span) -> R<()> {
        self.steps += 1;
        if self.steps > STEP_LIMIT || self.depth > DEPTH_LIMIT {
            return Err(EvalError::StepLimit {
                line: line_of(span),
                limit: STEP_LIMIT,
            }
            .into());
        }
        Ok(())
    }

    /// An expression's value. Each kind is evaluated by a function of its own: without
    /// optimisation (the crate's release profile) a function's stack frame holds every local
    /// of every arm, and this one recurses for every node.
    pub fn eval<'a>(&mut self, f: &mut Frame<'a>, e: &'a Expr) -> R<Value> {
        let span = e.span;
        match &e.kind {
            ExprKind::Lit(l) => Ok(literal(l)),
            ExprKind::Var(name) => self.var(f, name, span),
            ExprKind::AssocConst(owner, name) => self.assoc_const(f, owner, name, span),
            ExprKind::Const(p, c) => prim_const_at(*p, *c, span),
            ExprKind::Field(..) | ExprKind::TupleField(..) => self.part(f, e),
            ExprKind::Index(base, index) => self.index(f, base, index, span),
            ExprKind::Unary(op, x) => self.unary(f, *op, x, span),
            ExprKind::Binary(op, l, r) => self.binary(f, *op, l, r, span),
            ExprKind::Cast(x, p) => self.cast(f, x, *p, span),
            ExprKind::Struct { ty, fields, base } => {
                self.struct_lit(f, ty, fields, base.as_deref(), span)
            }
            ExprKind::Tuple(xs) => self.eval_all(f, xs).map(Value::Tuple),
            ExprKind::Array(xs) => self.eval_all(f, xs).map(Value::Array),
            ExprKind::Repeat(x, len) => self.repeat(f, x, len),
            ExprKind::MethodCall {
                name, recv, args, ..
            } => self.method_call(f, name, recv, args, span),
            ExprKind::Builtin {
                method,
                recv,
                args,
                ty,
            } => self.builtin(f, method, recv, args, *ty, span),
            ExprKind::Call { owner, name, args } => {
                self.call_expr(f, owner.as_ref(), name, args, span)
            }
            ExprKind::If(..)
            | ExprKind::IfLet(..)
            | ExprKind::Match(..)
            | ExprKind::Block(_)
            | ExprKind::While(..)
            | ExprKind::Loop(_)
            | ExprKind::For(_)
            | ExprKind::Break
            | ExprKind::Continue
            | ExprKind::Assign(..)
            | ExprKind::Return(_)
            | ExprKind::Alias { .. } => self.control(f, e),
            ExprKind::Error => Err(unsupported(span, "an expression the lowering reported").into()),
        }
    }

    fn assoc_const<'a>(
        &mut self,
        f: &mut Frame<'a>,
        owner: &'a StructRef,
        name: &str,
        span: Span,
    ) -> R<Value> {
        let owner = self.prog.struct_name(owner, f.self_ty, span)?;
        self.named_const(f, Some(owner), name, span)
    }

    /// `base.name` or `base.0`.
    fn part<'a>(&mut self, f: &mut Frame<'a>, e: &'a Expr) -> R<Value> {
        // A field or part of a local is read in place: `l.value` copies one field, not `l`.
        if let Some(v) = peek(f, e) {
            return Ok(v.clone());
        }
        let span = e.span;
        match &e.kind {
            ExprKind::Field(base, name) => match self.eval(f, base)? {
                Value::Struct(d, mut fs) => match d.field(name) {
                    Some(i) => Ok(std::mem::replace(&mut fs[i], Value::Unit)),
                    None => Err(
                        unsupported(span, format!("field `{name}` of `{}`", d.rust_name)).into(),
                    ),
                },
                other => {
                    Err(unsupported(span, format!("field `{name}` of {}", other.kind())).into())
                }
            },
            ExprKind::TupleField(base, i) => match self.eval(f, base)? {
                Value::Tuple(mut xs) if *i < xs.len() => Ok(xs.swap_remove(*i)),
                other => Err(unsupported(span, format!("`.{i}` of {}", other.kind())).into()),
            },
            _ => unreachable!("`part` of a field or a tuple field"),
        }
    }

    fn index<'a>(
        &mut self,
        f: &mut Frame<'a>,
        base: &'a Expr,
        index: &'a Expr,
        span: Span,
    ) -> R<Value> {
        // An element of a local array is read in place (`xs[i]` copies one element, not
        // `xs`), when reading the index cannot assign to the array first.
        if peek(f, base).is_some() && !assigns(index) {
            let i = self.eval(f, index)?;
            let b = peek(f, base).expect("reading the index assigned nothing");
            return Ok(element(b, &i, span)?.clone());
        }
        let b = self.eval(f, base)?;
        let i = self.eval(f, index)?;
        Ok(element(&b, &i, span)?.clone())
    }

    fn unary<'a>(&mut self, f: &mut Frame<'a>, op: UnOp, x: &'a Expr, span: Span) -> R<Value> {
        let v = self.eval(f, x)?;
        Ok(arith::unary(op, v, span)?)
    }

    fn binary<'a>(
        &mut self,
        f: &mut Frame<'a>,
        op: BinOp,
        l: &'a Expr,
        r: &'a Expr,
        span: Span,
    ) -> R<Value> {
        match op {
            BinOp::And => match self.eval(f, l)? {
                Value::Bool(false) => Ok(Value::Bool(false)),
                Value::Bool(true) => self.eval(f, r),
                other => Err(unsupported(span, format!("`&&` on {}", other.kind())).into()),
            },
            BinOp::Or => match self.eval(f, l)? {
                Value::Bool(true) => Ok(Value::Bool(true)),
                Value::Bool(false) => self.eval(f, r),
                other => Err(unsupported(span, format!("`||` on {}", other.kind())).into()),
            },
            _ => {
                let a = self.eval(f, l)?;
                let b = self.eval(f, r)?;
                Ok(arith::binary(op, a, b, span)?)
            }
        }
    }

    fn cast<'a>(&mut self, f: &mut Frame<'a>, x: &'a Expr, p: PrimType, span: Span) -> R<Value> {
        let v = self.eval(f, x)?;
        Ok(arith::cast(v, p, span)?)
    }

    /// `[x; len]`
    fn repeat<'a>(&mut self, f: &mut Frame<'a>, x: &'a Expr, len: &'a Expr) -> R<Value> {
        let v = self.eval(f, x)?;
        let n = self.const_len(f, len)?;
        Ok(Value::Array(vec![v; n]))
    }

    fn method_call<'a>(
        &mut self,
        f: &mut Frame<'a>,
        name: &str,
        recv: &'a Expr,
        args: &'a [Expr],
        span: Span,
    ) -> R<Value> {
        let r = self.eval(f, recv)?;
        self.method(f, name, r, args, span)
    }

    fn builtin<'a>(
        &mut self,
        f: &mut Frame<'a>,
        method: &Method,
        recv: &'a Expr,
        args: &'a [Expr],
        ty: Option<PrimType>,
        span: Span,
    ) -> R<Value> {
        let r = self.eval(f, recv)?;
        self.with_args(f, args, |args| {
            Ok(super::methods::call(method, r, args, ty, span)?)
        })
    }

    /// `then` of the values of `args`, which are evaluated onto the argument stack (and taken
    /// off it after).
    pub(super) fn with_args<'a, T>(
        &mut self,
        f: &mut Frame<'a>,
        args: &'a [Expr],
        then: impl FnOnce(&mut [Value]) -> R<T>,
    ) -> R<T> {
        let start = self.args.len();
        let v = self
            .push_args(f, args)
            .and_then(|()| then(&mut self.args[start..]));
        self.args.truncate(start);
        v
    }

    fn push_args<'a>(&mut self, f: &mut Frame<'a>, xs: &'a [Expr]) -> R<()> {
        for x in xs {
            let v = self.eval(f, x)?;
            self.args.push(v);
        }
        Ok(())
    }

    /// `helper(args)`, `Self::helper(args)`, `Type::helper(args)`.
    fn call_expr<'a>(
        &mut self,
        f: &mut Frame<'a>,
        owner: Option<&'a StructRef>,
        name: &str,
        args: &'a [Expr],
        span: Span,
    ) -> R<Value> {
        let owner = match owner {
            Some(o) => Some(self.prog.struct_name(o, f.self_ty, span)?),
            None => None,
        };
        let args = self.eval_all(f, args)?;
        self.call(f, owner, name, args, span)
    }

    pub fn eval_all<'a>(&mut self, f: &mut Frame<'a>, xs: &'a [Expr]) -> R<Vec<Value>> {
        let mut values = Vec::with_capacity(xs.len());
        for x in xs {
            values.push(self.eval(f, x)?);
        }
        Ok(values)
    }

    fn struct_lit<'a>(
        &mut self,
        f: &mut Frame<'a>,
        ty: &'a crate::ir::StructRef,
        fields: &'a [(String, Expr)],
        base: Option<&'a Expr>,
        span: Span,
    ) -> R<Value> {
        let name = self.prog.struct_name(ty, f.self_ty, span)?;
        let def = self.prog.struct_def(name, span)?;
        let start = self.fields.len();
        let v = self.struct_fields(f, &def, name, fields, base, span);
        self.fields.truncate(start);
        Ok(Value::Struct(def, v?))
    }

    /// A struct literal's field values, in declaration order. They are gathered on the field
    /// stack (from its current top; the caller truncates it back), so that a literal allocates
    /// only the struct.
    fn struct_fields<'a>(
        &mut self,
        f: &mut Frame<'a>,
        def: &StructDef,
        name: &str,
        fields: &'a [(String, Expr)],
        base: Option<&'a Expr>,
        span: Span,
    ) -> R<Box<[Value]>> {
        let start = self.fields.len();
        match base {
            Some(b) => match self.eval(f, b)? {
                Value::Struct(_, fs) => self.fields.extend(fs.into_vec().into_iter().map(Some)),
                other => return Err(unsupported(span, format!("`..` of {}", other.kind())).into()),
            },
            // Pushed one by one: `resize_with` is hundreds of instructions unoptimised.
            None => {
                for _ in 0..def.fields.len() {
                    self.fields.push(None);
                }
            }
        }
        for (fname, x) in fields {
            let Some(i) = def.field(fname) else {
                return Err(unsupported(x.span, format!("field `{fname}` of `{name}`")).into());
            };
            let v = self.eval(f, x)?.coerce(&def.fields[i].ty);
            self.fields[start + i] = Some(v);
        }
        let mut values = Vec::with_capacity(self.fields.len() - start);
        for v in &mut self.fields[start..] {
            match v.take() {
                Some(v) => values.push(v),
                None => {
                    let what = format!("a `{name}` literal without every field");
                    return Err(unsupported(span, what).into());
                }
            }
        }
        Ok(values.into_boxed_slice())
    }

    /// A constant length (`[x; N]`, `[T; N]`).
    pub fn const_len<'a>(&mut self, f: &mut Frame<'a>, e: &'a Expr) -> R<usize> {
        let v = self.eval(f, e)?;
        v.as_int()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| unsupported(e.span, format!("an array length of {}", v.kind())).into())
    }

    /// A written type as a coercion target.
    pub fn target<'a>(&mut self, f: &mut Frame<'a>, ty: &'a Ty, span: Span) -> R<Target> {
        Ok(match ty {
            Ty::Prim(p) => Target::Prim(*p),
            Ty::Bool => Target::Bool,
            Ty::Struct(r) => {
                let name = self.prog.struct_name(r, f.self_ty, span)?;
                Target::Struct(self.prog.struct_def(name, span)?)
            }
            Ty::Array(t, len) => {
                let t = self.target(f, t, span)?;
                Target::Array(Box::new(t), self.const_len(f, len)?)
            }
            Ty::Tuple(ts) => Target::Tuple(
                ts.iter()
                    .map(|t| self.target(f, t, span))
                    .collect::<R<Vec<_>>>()?,
            ),
        })
    }
}

/// The value a chain of fields, parts and elements of a local names, borrowed (`None`: not
/// such a chain).
fn peek<'f>(f: &'f Frame<'_>, e: &Expr) -> Option<&'f Value> {
    match &e.kind {
        ExprKind::Var(n) => f.local(n),
        ExprKind::Field(b, name) => match peek(f, b)? {
            Value::Struct(d, fs) => fs.get(d.field(name)?),
            _ => None,
        },
        ExprKind::TupleField(b, i) => match peek(f, b)? {
            Value::Tuple(xs) => xs.get(*i),
            _ => None,
        },
        // `xs[k]` with `k` a literal or a local: an index in bounds (else the error is the
        // evaluation's to report).
        ExprKind::Index(b, i) => {
            let k = match &i.kind {
                ExprKind::Lit(l) => literal(l).as_int(),
                _ => peek(f, i)?.as_int(),
            };
            match peek(f, b)? {
                Value::Array(xs) => xs.get(usize::try_from(k?).ok()?),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether evaluating `e` may assign to a local (in a block inside it).
fn assigns(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x.kind, ExprKind::Assign(..)));
    found
}

/// `base[i]`.
fn element<'v>(base: &'v Value, i: &Value, span: Span) -> Result<&'v Value, EvalError> {
    let Value::Array(xs) = base else {
        return Err(unsupported(span, format!("indexing {}", base.kind())));
    };
    let Some(i) = i.as_int() else {
        return Err(unsupported(span, format!("an index of {}", i.kind())));
    };
    match usize::try_from(i).ok().filter(|&k| k < xs.len()) {
        Some(k) => Ok(&xs[k]),
        None => Err(EvalError::IndexOutOfBounds {
            line: line_of(span),
            index: i,
            len: xs.len(),
        }),
    }
}

pub(crate) fn literal(l: &Lit) -> Value {
    match l {
        Lit::Int { value, suffix } => match suffix {
            Some(p) if p.is_int() => Value::Int(*p, super::value::wrap(*p, *value as i128)),
            _ => Value::IntLit(*value as i128),
        },
        Lit::Float { digits, suffix } => {
            let v: f64 = digits.parse().unwrap_or(f64::NAN);
            match suffix {
                Some(PrimType::F32) => Value::F32(digits.parse().unwrap_or(f32::NAN)),
                Some(PrimType::F64) => Value::F64(v),
                _ => Value::FloatLit(v, Some(digits.as_str().into())),
            }
        }
        Lit::Bool(b) => Value::Bool(*b),
    }
}

/// [`prim_const`], or the error at `span` where `c` is not one of `p`'s.
fn prim_const_at(p: PrimType, c: Const, span: Span) -> R<Value> {
    prim_const(p, c).ok_or_else(|| unsupported(span, format!("the constant {c:?} of `{p}`")).into())
}

/// An associated constant of a primitive (`None`: `c` is not one of `p`'s).
fn prim_const(p: PrimType, c: Const) -> Option<Value> {
    let float = |v: f64| match p {
        PrimType::F32 => Value::F32(v as f32),
        _ => Value::F64(v),
    };
    let int = |v: i128| Value::Int(p, v);
    Some(match (c, p) {
        (Const::Max, PrimType::F32) => Value::F32(f32::MAX),
        (Const::Min, PrimType::F32) => Value::F32(f32::MIN),
        (Const::Epsilon, PrimType::F32) => Value::F32(f32::EPSILON),
        (Const::MinPositive, PrimType::F32) => Value::F32(f32::MIN_POSITIVE),
        (Const::Max, PrimType::F64) => Value::F64(f64::MAX),
        (Const::Min, PrimType::F64) => Value::F64(f64::MIN),
        (Const::Epsilon, _) => Value::F64(f64::EPSILON),
        (Const::MinPositive, _) => Value::F64(f64::MIN_POSITIVE),
        (Const::Infinity, _) => float(f64::INFINITY),
        (Const::NegInfinity, _) => float(f64::NEG_INFINITY),
        (Const::Nan, _) => float(f64::NAN),
        (Const::Max, _) => {
            let bits = p.size() as u32 * 8 - p.is_signed_int() as u32;
            int((1i128 << bits) - 1)
        }
        (Const::Min, _) => int(if p.is_signed_int() {
            -(1i128 << (p.size() * 8 - 1))
        } else {
            0
        }),
        (Const::U32(v), _) => Value::Int(PrimType::U32, v as i128),
        (Const::I32(v), _) => Value::Int(PrimType::I32, v as i128),
        (Const::Float(v), _) => float(v),
        // `f16::MAX`, `bf16::PI`: the `half` crate's bits, kept by the IR.
        (Const::HalfBits(bits), _) => return Value::half_from_bits(p, bits),
    })
}
