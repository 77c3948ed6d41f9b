//! The tree-walking interpreter: expressions. Statements, loops and assignment are in
//! `control.rs`, patterns in `pattern.rs`, calls and names in `names.rs`.

use super::arith;
use super::error::{line_of, unsupported, EvalError};
use super::program::{ItemChain, Program};
use super::value::{Target, Value};
use crate::ir::{BinOp, Const, Expr, ExprKind, Lit, Ty};
use proc_macro2::Span;
use scan_core::PrimType;

/// How evaluation leaves an expression other than with its value.
pub(crate) enum Flow {
    Break,
    Continue,
    Return(Value),
    Error(EvalError),
}

impl From<EvalError> for Flow {
    fn from(e: EvalError) -> Flow {
        Flow::Error(e)
    }
}

pub(crate) type R<T> = Result<T, Flow>;

/// One function call's state.
pub(crate) struct Frame {
    /// Local scopes, innermost last.
    pub locals: Vec<Vec<(String, Value)>>,
    pub items: ItemChain,
    /// What `Self` names.
    pub self_ty: Option<String>,
}

impl Frame {
    pub fn new(items: ItemChain, self_ty: Option<String>) -> Frame {
        Frame {
            locals: vec![Vec::new()],
            items,
            self_ty,
        }
    }

    pub fn bind(&mut self, name: &str, v: Value) {
        if name != "_" {
            self.locals
                .last_mut()
                .expect("a scope")
                .push((name.to_string(), v));
        }
    }

    pub fn local(&self, name: &str) -> Option<&Value> {
        self.locals
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    pub fn local_mut(&mut self, name: &str) -> Option<&mut Value> {
        self.locals
            .iter_mut()
            .rev()
            .flat_map(|s| s.iter_mut().rev())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
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
}

impl<'p> Interp<'p> {
    pub fn new(prog: &'p Program) -> Interp<'p> {
        Interp {
            prog,
            steps: 0,
            depth: 0,
        }
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

    pub fn eval(&mut self, f: &mut Frame, e: &Expr) -> R<Value> {
        let span = e.span;
        // A field or part of a local is read in place: `l.value` copies one field, not `l`.
        if matches!(e.kind, ExprKind::Field(..) | ExprKind::TupleField(..)) {
            if let Some(v) = peek(f, e) {
                return Ok(v.clone());
            }
        }
        match &e.kind {
            ExprKind::Lit(l) => Ok(literal(l)),
            ExprKind::Var(name) => self.var(f, name, span),
            ExprKind::AssocConst(owner, name) => {
                let owner = self.prog.struct_name(owner, f.self_ty.as_deref(), span)?;
                self.named_const(f, &format!("{owner}::{name}"), span)
            }
            ExprKind::Const(p, c) => prim_const(*p, *c)
                .ok_or_else(|| unsupported(span, format!("the constant {c:?} of `{p}`")).into()),
            ExprKind::Field(base, name) => match self.eval(f, base)? {
                Value::Struct(d, mut fs) => match d.field(name) {
                    Some(i) => Ok(fs.swap_remove(i)),
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
            ExprKind::Index(base, index) => {
                let b = self.eval(f, base)?;
                let i = self.eval(f, index)?;
                index_of(b, &i, span).map_err(Flow::from)
            }
            ExprKind::Unary(op, x) => {
                let v = self.eval(f, x)?;
                Ok(arith::unary(*op, v, span)?)
            }
            ExprKind::Binary(BinOp::And, l, r) => match self.eval(f, l)? {
                Value::Bool(false) => Ok(Value::Bool(false)),
                Value::Bool(true) => self.eval(f, r),
                other => Err(unsupported(span, format!("`&&` on {}", other.kind())).into()),
            },
            ExprKind::Binary(BinOp::Or, l, r) => match self.eval(f, l)? {
                Value::Bool(true) => Ok(Value::Bool(true)),
                Value::Bool(false) => self.eval(f, r),
                other => Err(unsupported(span, format!("`||` on {}", other.kind())).into()),
            },
            ExprKind::Binary(op, l, r) => {
                let a = self.eval(f, l)?;
                let b = self.eval(f, r)?;
                Ok(arith::binary(*op, a, b, span)?)
            }
            ExprKind::Cast(x, p) => {
                let v = self.eval(f, x)?;
                Ok(arith::cast(v, *p, span)?)
            }
            ExprKind::Struct { ty, fields, base } => {
                self.struct_lit(f, ty, fields, base.as_deref(), span)
            }
            ExprKind::Tuple(xs) => Ok(Value::Tuple(self.eval_all(f, xs)?)),
            ExprKind::Array(xs) => Ok(Value::Array(self.eval_all(f, xs)?)),
            ExprKind::Repeat(x, len) => {
                let v = self.eval(f, x)?;
                let n = self.const_len(f, len)?;
                Ok(Value::Array(vec![v; n]))
            }
            ExprKind::MethodCall {
                name, recv, args, ..
            } => {
                let r = self.eval(f, recv)?;
                let args = self.eval_all(f, args)?;
                self.method(f, name, r, args, span)
            }
            ExprKind::Builtin {
                method,
                recv,
                args,
                ty,
            } => {
                let r = self.eval(f, recv)?;
                let args = self.eval_all(f, args)?;
                Ok(super::methods::call(method, r, args, *ty, span)?)
            }
            ExprKind::Call { owner, name, args } => {
                let key = match owner {
                    Some(o) => format!(
                        "{}::{name}",
                        self.prog.struct_name(o, f.self_ty.as_deref(), span)?
                    ),
                    None => name.clone(),
                };
                let args = self.eval_all(f, args)?;
                self.call(f, &key, args, span)
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

    pub fn eval_all(&mut self, f: &mut Frame, xs: &[Expr]) -> R<Vec<Value>> {
        xs.iter().map(|x| self.eval(f, x)).collect()
    }

    fn struct_lit(
        &mut self,
        f: &mut Frame,
        ty: &crate::ir::StructRef,
        fields: &[(String, Expr)],
        base: Option<&Expr>,
        span: Span,
    ) -> R<Value> {
        let name = self.prog.struct_name(ty, f.self_ty.as_deref(), span)?;
        let def = self.prog.struct_def(&name, span)?;
        let mut values: Vec<Option<Value>> = match base {
            Some(b) => match self.eval(f, b)? {
                Value::Struct(_, fs) => fs.into_iter().map(Some).collect(),
                other => return Err(unsupported(span, format!("`..` of {}", other.kind())).into()),
            },
            None => vec![None; def.fields.len()],
        };
        for (fname, x) in fields {
            let Some(i) = def.field(fname) else {
                return Err(unsupported(x.span, format!("field `{fname}` of `{name}`")).into());
            };
            values[i] = Some(self.eval(f, x)?.coerce(&def.fields[i].ty));
        }
        let values: Option<Vec<Value>> = values.into_iter().collect();
        match values {
            Some(vs) => Ok(Value::Struct(def, vs)),
            None => {
                Err(unsupported(span, format!("a `{name}` literal without every field")).into())
            }
        }
    }

    /// A constant length (`[x; N]`, `[T; N]`).
    pub fn const_len(&mut self, f: &mut Frame, e: &Expr) -> R<usize> {
        let v = self.eval(f, e)?;
        v.as_int()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| unsupported(e.span, format!("an array length of {}", v.kind())).into())
    }

    /// A written type as a coercion target.
    pub fn target(&mut self, f: &mut Frame, ty: &Ty, span: Span) -> R<Target> {
        Ok(match ty {
            Ty::Prim(p) => Target::Prim(*p),
            Ty::Bool => Target::Bool,
            Ty::Struct(r) => {
                let name = self.prog.struct_name(r, f.self_ty.as_deref(), span)?;
                Target::Struct(self.prog.struct_def(&name, span)?)
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

/// The value a chain of fields of a local names, borrowed (`None`: not such a chain).
fn peek<'f>(f: &'f Frame, e: &Expr) -> Option<&'f Value> {
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
        _ => None,
    }
}

fn index_of(base: Value, i: &Value, span: Span) -> Result<Value, EvalError> {
    let Value::Array(mut xs) = base else {
        return Err(unsupported(span, format!("indexing {}", base.kind())));
    };
    let Some(i) = i.as_int() else {
        return Err(unsupported(span, format!("an index of {}", i.kind())));
    };
    match usize::try_from(i).ok().filter(|&k| k < xs.len()) {
        Some(k) => Ok(xs.swap_remove(k)),
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
