//! `Debug` for the types that hold syn nodes, printing the nodes as the tokens they were
//! written as. (syn's own `Debug` impls need its `extra-traits` feature: a large part of syn's
//! compile time, paid by every build of the macros, for a dump nobody reads.)

use quote::ToTokens;
use std::fmt;

/// A syn node, shown as its tokens: `` `[f32 ; 4]` ``.
pub(crate) struct Tokens<'a, T>(pub &'a T);

impl<T: ToTokens> fmt::Debug for Tokens<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`", self.0.to_token_stream())
    }
}
