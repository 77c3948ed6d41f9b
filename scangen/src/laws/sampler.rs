//! Where the law checker's elements come from.
//!
//! By default ([`BitPatterns`]) every field takes random values over its type's full range, a
//! third of them edge values (0, -1, MIN, MAX, ±0.0, NaN, infinities, subnormals). That is the
//! right test of an operator on raw values (a sum, a maximum), and the wrong one of an operator
//! whose elements only ever come from somewhere (Kadane's `{best, prefix, suffix, total}` with
//! `i64::MIN / 2` sentinels): there, an unreachable bit pattern makes a lawful operator look
//! unlawful. Give such an operator its real domain with a sampler:
//!
//! * [`from_fn`]: a closure returning a typed element (`ScanElement`), with
//!   [`FnSampler::with_edges`] for the edge cases that belong to the domain;
//! * [`Folds`]: folds under the operator of a few elements of another sampler, which is what
//!   a scan's partial results are; with a sampler of lifted raw inputs it samples exactly the
//!   reachable domain (this is how samples of an operator with a `lift` are drawn).
//!
//! The checker always adds the operator's identity to the samples (see [`super::check_with`]).

use super::values::sample_element;
pub use super::values::Rng;
use scan_core::{ElementType, ScanElement};

/// A source of elements, as the bytes of the element's `#[repr(C)]` layout (padding zero).
pub trait ElementSampler {
    /// One element.
    fn sample(&mut self, rng: &mut Rng) -> Vec<u8>;
    /// Elements tested besides the random ones (a third of the samples draw from them when
    /// there are any): the domain's extremes, zeros, NaNs where the domain has them.
    fn edge_cases(&self) -> Vec<Vec<u8>> {
        Vec::new()
    }
    /// For the report (`"every bit pattern of each field"`).
    fn describe(&self) -> String;
}

/// Every field random over its type's full range, a third of the time an edge value.
pub struct BitPatterns {
    element: ElementType,
}

impl BitPatterns {
    /// A sampler of `element`s.
    pub fn new(element: ElementType) -> BitPatterns {
        BitPatterns { element }
    }
}

impl ElementSampler for BitPatterns {
    fn sample(&mut self, rng: &mut Rng) -> Vec<u8> {
        sample_element(&self.element, rng)
    }
    fn describe(&self) -> String {
        "each field over its full range, a third edge values".into()
    }
}

/// The bytes of a typed element (padding zero): its fields copied one by one.
pub fn element_bytes<E: ScanElement>(value: &E) -> Vec<u8> {
    let element = E::element_type();
    let mut out = vec![0u8; std::mem::size_of::<E>()];
    let base = (value as *const E).cast::<u8>();
    for (_, ty, offset) in super::values::field_layout(&element) {
        // SAFETY: [offset, offset + size) is an initialized field inside `value` (ScanElement
        // guarantees the described layout).
        let field = unsafe { std::slice::from_raw_parts(base.add(offset), ty.size()) };
        out[offset..offset + ty.size()].copy_from_slice(field);
    }
    out
}

/// A sampler from a closure that makes typed elements ([`from_fn`]).
pub struct FnSampler<E, F> {
    f: F,
    edges: Vec<E>,
}

/// Samples with `f`: `laws::from_fn(|rng| Kadane::lift(rng.next() as i64 % 1000))`.
pub fn from_fn<E: ScanElement, F: FnMut(&mut Rng) -> E>(f: F) -> FnSampler<E, F> {
    FnSampler {
        f,
        edges: Vec::new(),
    }
}

impl<E: ScanElement, F: FnMut(&mut Rng) -> E> FnSampler<E, F> {
    /// Adds elements of the domain to test as edge cases.
    pub fn with_edges(mut self, edges: impl IntoIterator<Item = E>) -> Self {
        self.edges.extend(edges);
        self
    }
}

impl<E: ScanElement, F: FnMut(&mut Rng) -> E> ElementSampler for FnSampler<E, F> {
    fn sample(&mut self, rng: &mut Rng) -> Vec<u8> {
        element_bytes(&(self.f)(rng))
    }
    fn edge_cases(&self) -> Vec<Vec<u8>> {
        self.edges.iter().map(element_bytes).collect()
    }
    fn describe(&self) -> String {
        "the operator's domain (a user sampler)".into()
    }
}

/// Combine function of [`Folds`]: `combine(earlier, later)` on elements as bytes.
pub type CombineBytes<'a> = Box<dyn FnMut(&[u8], &[u8]) -> Vec<u8> + 'a>;

/// Folds of 1 to `max_len` elements of `inner` under `combine`, in sequence order: the
/// partial results a scan of `inner`'s elements produces.
pub struct Folds<'a, S> {
    inner: S,
    combine: CombineBytes<'a>,
    max_len: u64,
}

impl<'a, S: ElementSampler> Folds<'a, S> {
    /// Folds of 1 to `max_len` (at least 1) elements of `inner`, each length equally likely.
    pub fn new(inner: S, combine: CombineBytes<'a>, max_len: usize) -> Self {
        Folds {
            inner,
            combine,
            max_len: max_len.max(1) as u64,
        }
    }
}

impl<S: ElementSampler> ElementSampler for Folds<'_, S> {
    fn sample(&mut self, rng: &mut Rng) -> Vec<u8> {
        let len = 1 + rng.below(self.max_len);
        let mut acc = self.inner.sample(rng);
        for _ in 1..len {
            let next = self.inner.sample(rng);
            acc = (self.combine)(&acc, &next);
        }
        acc
    }
    fn edge_cases(&self) -> Vec<Vec<u8>> {
        self.inner.edge_cases()
    }
    fn describe(&self) -> String {
        format!(
            "folds of up to {} elements of {}",
            self.max_len,
            self.inner.describe()
        )
    }
}
