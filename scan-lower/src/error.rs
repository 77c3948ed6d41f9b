//! Errors with spans, collected rather than returned one at a time (serde's `Ctxt` style).

use proc_macro2::{Span, TokenStream};
use std::fmt;

/// One mistake in the user's operator, at the span that caused it.
#[derive(Clone, Debug)]
pub struct Error {
    /// Where the mistake is: what the compiler underlines, or what `line_column` reports.
    pub span: Span,
    /// What is wrong and, where there is one, what to write instead.
    pub message: String,
}

impl Error {
    /// The error `message` at `span`.
    pub fn new(span: Span, message: impl Into<String>) -> Error {
        Error {
            span,
            message: message.into(),
        }
    }

    /// 1-based line and column of the span start (meaningful for source parsed from a string,
    /// as `scangen emit --file` does; inside a proc macro it may be 0:1).
    pub fn line_column(&self) -> (usize, usize) {
        let start = self.span.start();
        (start.line, start.column + 1)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<syn::Error> for Error {
    fn from(e: syn::Error) -> Error {
        Error::new(e.span(), e.to_string())
    }
}

/// Every mistake found in one operator, in source order of discovery. Never empty when
/// returned as an `Err`.
#[derive(Clone, Debug, Default)]
pub struct Errors {
    errors: Vec<Error>,
}

impl Errors {
    /// No errors yet.
    pub fn new() -> Errors {
        Errors::default()
    }

    /// Records the error `message` at `span`.
    pub fn push(&mut self, span: Span, message: impl Into<String>) {
        self.errors.push(Error::new(span, message));
    }

    /// Records `error`.
    pub fn push_error(&mut self, error: Error) {
        self.errors.push(error);
    }

    /// Records every error of `other`, after those already here.
    pub fn extend(&mut self, other: Errors) {
        self.errors.extend(other.errors);
    }

    /// Drops the errors after the first `len` (those of a trial that is thrown away).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.errors.truncate(len);
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Number of errors recorded.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// The errors, in the order they were recorded.
    pub fn iter(&self) -> impl Iterator<Item = &Error> {
        self.errors.iter()
    }

    /// `Ok(value)` when nothing was collected, the errors otherwise.
    pub fn finish<T>(self, value: T) -> Result<T, Errors> {
        if self.errors.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }

    /// All errors as one `syn::Error` (each keeps its own span).
    pub fn to_syn_error(&self) -> syn::Error {
        let mut iter = self.errors.iter();
        let first = iter.next().expect("Errors is never empty when reported");
        let mut combined = syn::Error::new(first.span, &first.message);
        for e in iter {
            combined.combine(syn::Error::new(e.span, &e.message));
        }
        combined
    }

    /// One `compile_error!` per mistake, each at its span.
    pub fn to_compile_error(&self) -> TokenStream {
        self.errors
            .iter()
            .map(|e| syn::Error::new(e.span, &e.message).to_compile_error())
            .collect()
    }

    /// One line per error: `line:column: message` (sorted by position).
    pub fn render(&self) -> String {
        let mut errors: Vec<&Error> = self.errors.iter().collect();
        errors.sort_by_key(|e| e.line_column());
        errors
            .iter()
            .map(|e| {
                let (l, c) = e.line_column();
                format!("{l}:{c}: {}", e.message)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Errors {}

impl From<syn::Error> for Errors {
    fn from(e: syn::Error) -> Errors {
        Errors {
            errors: e.into_iter().map(Error::from).collect(),
        }
    }
}

impl IntoIterator for Errors {
    type Item = Error;
    type IntoIter = std::vec::IntoIter<Error>;
    fn into_iter(self) -> Self::IntoIter {
        self.errors.into_iter()
    }
}
