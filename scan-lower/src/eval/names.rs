//! Names: locals, `const`s, helper functions and methods, resolved as the lowering resolves
//! them (locals first, then the item scopes, innermost first).

use super::error::unsupported;
use super::interp::{Flow, Frame, Interp, R};
use super::program::{find_item, item_key};
use super::value::Value;
use crate::ir::{Expr, Item};
use proc_macro2::Span;

impl Interp<'_> {
    pub(super) fn var(&mut self, f: &mut Frame<'_>, name: &str, span: Span) -> R<Value> {
        if let Some(v) = f.local(name) {
            return Ok(v.clone());
        }
        self.named_const(f, None, name, span)
    }

    /// The value of the `const` `owner::name` (`name` without an owner), typed by its
    /// declaration.
    pub(super) fn named_const(
        &mut self,
        f: &mut Frame<'_>,
        owner: Option<&str>,
        name: &str,
        span: Span,
    ) -> R<Value> {
        let Some((Item::Const(item), chain)) = find_item(&f.items, owner, name) else {
            let key = item_key(owner, name);
            return Err(unsupported(span, format!("the name `{key}`")).into());
        };
        let ir = self.prog.const_ir(&item)?;
        let mut frame = Frame::new(chain, item.owner.as_deref());
        self.step(span)?;
        self.depth += 1;
        let v = self.eval(&mut frame, &ir.init);
        self.depth -= 1;
        let v = v?;
        Ok(match &ir.ty {
            Some(t) => {
                let t = self.target(&mut frame, t, span)?;
                v.coerce(&t)
            }
            None => v,
        })
    }

    /// `recv.name(args)`: a method of a struct's impl, or a built-in of a number.
    pub(super) fn method<'a>(
        &mut self,
        f: &mut Frame<'a>,
        name: &str,
        recv: Value,
        args: &'a [Expr],
        span: Span,
    ) -> R<Value> {
        if let Value::Struct(d, _) = &recv {
            let owner = d.clone();
            let mut all = Vec::with_capacity(1 + args.len());
            all.push(recv);
            for x in args {
                all.push(self.eval(f, x)?);
            }
            return self.call(f, Some(&owner.rust_name), name, all, span);
        }
        self.with_args(f, args, |args| match crate::methods::find(name) {
            Some(m) => Ok(super::methods::call(m, recv, args, None, span)?),
            None => {
                Err(unsupported(span, format!("the method `{name}` on {}", recv.kind())).into())
            }
        })
    }

    /// Calls the helper `owner::name` (`name` without an owner) with `args`.
    pub(super) fn call(
        &mut self,
        f: &mut Frame<'_>,
        owner: Option<&str>,
        name: &str,
        args: Vec<Value>,
        span: Span,
    ) -> R<Value> {
        let Some((Item::Fn(item), chain)) = find_item(&f.items, owner, name) else {
            let key = item_key(owner, name);
            return Err(unsupported(span, format!("a call of `{key}`")).into());
        };
        let helper = self.prog.helper(&item)?;
        if helper.params.len() != args.len() {
            let key = item_key(owner, name);
            return Err(unsupported(span, format!("`{key}` with {} arguments", args.len())).into());
        }
        self.step(span)?;
        let mut frame = Frame::new(chain, helper.owner.as_deref());
        for ((pat, ty), arg) in helper.params.iter().zip(args) {
            let arg = match ty {
                Some(t) => {
                    let t = self.target(&mut frame, t, span)?;
                    arg.coerce(&t)
                }
                None => arg,
            };
            self.bind_irrefutable(&mut frame, pat, arg)?;
        }
        self.depth += 1;
        let result = self.block(&mut frame, &helper.body);
        self.depth -= 1;
        let v = match result {
            Ok(v) => v,
            Err(Flow::Return(v)) => *v,
            Err(Flow::Break | Flow::Continue) => {
                return Err(unsupported(span, "`break` outside a loop").into())
            }
            Err(e) => return Err(e),
        };
        Ok(match &helper.ret {
            Some(t) => {
                let t = self.target(&mut frame, t, span)?;
                v.coerce(&t)
            }
            None => v,
        })
    }
}
