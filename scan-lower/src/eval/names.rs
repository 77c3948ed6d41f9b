//! Names: locals, `const`s, helper functions and methods, resolved as the lowering resolves
//! them (locals first, then the item scopes, innermost first).

use super::error::unsupported;
use super::interp::{Flow, Frame, Interp, R};
use super::program::find_item;
use super::value::Value;
use crate::ir::Item;
use proc_macro2::Span;

impl Interp<'_> {
    pub(super) fn var(&mut self, f: &mut Frame, name: &str, span: Span) -> R<Value> {
        if let Some(v) = f.local(name) {
            return Ok(v.clone());
        }
        self.named_const(f, name, span)
    }

    /// The value of the `const` `key` (`K` or `Owner::K`), typed by its declaration.
    pub(super) fn named_const(&mut self, f: &mut Frame, key: &str, span: Span) -> R<Value> {
        let Some((Item::Const(item), chain)) = find_item(&f.items, key) else {
            return Err(unsupported(span, format!("the name `{key}`")).into());
        };
        let (ty, init) = self.prog.const_ir(&item)?;
        let mut frame = Frame::new(chain, item.owner.clone());
        self.step(span)?;
        self.depth += 1;
        let v = self.eval(&mut frame, &init);
        self.depth -= 1;
        let v = v?;
        Ok(match ty {
            Some(t) => {
                let t = self.target(&mut frame, &t, span)?;
                v.coerce(&t)
            }
            None => v,
        })
    }

    /// `recv.name(args)`: a method of a struct's impl, or a built-in of a number.
    pub(super) fn method(
        &mut self,
        f: &mut Frame,
        name: &str,
        recv: Value,
        args: Vec<Value>,
        span: Span,
    ) -> R<Value> {
        if let Value::Struct(d, _) = &recv {
            let key = format!("{}::{name}", d.rust_name);
            let mut all = vec![recv];
            all.extend(args);
            return self.call(f, &key, all, span);
        }
        match crate::methods::find(name) {
            Some(m) => Ok(super::methods::call(m, recv, args, None, span)?),
            None => {
                Err(unsupported(span, format!("the method `{name}` on {}", recv.kind())).into())
            }
        }
    }

    /// Calls the helper `key` (`f` or `Owner::f`) with `args`.
    pub(super) fn call(
        &mut self,
        f: &mut Frame,
        key: &str,
        args: Vec<Value>,
        span: Span,
    ) -> R<Value> {
        let Some((Item::Fn(item), chain)) = find_item(&f.items, key) else {
            return Err(unsupported(span, format!("a call of `{key}`")).into());
        };
        let helper = self.prog.helper(&item)?;
        if helper.params.len() != args.len() {
            return Err(unsupported(span, format!("`{key}` with {} arguments", args.len())).into());
        }
        self.step(span)?;
        let mut frame = Frame::new(chain, helper.owner.clone());
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
            Ok(v) | Err(Flow::Return(v)) => v,
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
