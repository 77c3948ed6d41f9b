//! The law checker: is an operator associative, and is its identity one?
//!
//! A wrong operator does not crash a scan: it silently gives results that change with the
//! algorithm and the tile size. [`check`] samples elements (a third of each field's values are
//! edge values: 0, -1, MIN, MAX, ±0.0, NaN, infinities, subnormals), and tests
//! `(a⊕b)⊕c = a⊕(b⊕c)`, `e⊕a = a` and `a⊕e = a` with one or more [`LawEvaluator`]s: the Rust
//! combine on the CPU ([`CpuLaws`]) and, when a GPU is present, the generated CUDA
//! ([`GpuLaws`]), and checks that they agree with each other.
//!
//! Integers must agree bit for bit. Float operators are only ever reported as associative *up
//! to rounding*, with the largest relative error seen (relative to the operands' magnitude, so
//! cancellation does not hide a wrong operator); overflow to infinity is counted, not judged.
//!
//! ```
//! use scangen::builtin::Add;
//! use scangen::laws::{check, CpuLaws, LawConfig, Law, Verdict};
//! use scangen::{scan_op, ScanOp};
//!
//! /// Not a scan operator: subtraction is not associative, and 0 is only its right identity.
//! pub struct Sub;
//!
//! #[scan_op]
//! impl ScanOp for Sub {
//!     type Elem = u32;
//!     fn identity() -> u32 { 0 }
//!     fn combine(l: u32, r: u32) -> u32 { l.wrapping_sub(r) }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = LawConfig { samples: 2_000, ..LawConfig::default() };
//! let report = check("Add<u32>", &mut [&mut CpuLaws::<Add<u32>>::new()], &config)?;
//! assert!(report.passed(), "{report}");
//!
//! let report = check("Sub", &mut [&mut CpuLaws::<Sub>::new()], &config)?;
//! assert!(!report.passed());
//! let verdict = |law| &report.laws.iter().find(|l| l.law == law).unwrap().verdict;
//! assert!(matches!(verdict(Law::Associativity), Verdict::Fails { .. }));
//! assert!(matches!(verdict(Law::RightIdentity), Verdict::Holds));
//! println!("{report}"); // what `scangen check` prints, with a counterexample
//! # Ok(())
//! # }
//! ```

mod compare;
mod cpu;
#[cfg(feature = "lower")]
mod eval;
mod gpu;
#[cfg(feature = "lower")]
mod lifted;
pub mod sampler;
mod tolerance;
mod transform_inputs;
mod values;

pub use cpu::CpuLaws;
#[cfg(feature = "lower")]
pub use eval::EvalLaws;
pub use gpu::GpuLaws;
#[cfg(feature = "lower")]
pub use lifted::LiftedInputs;
pub use sampler::{from_fn, BitPatterns, ElementSampler, Folds};
pub use tolerance::{BadTolerance, Tolerance};
pub use transform_inputs::TransformInputs;

use compare::{compare, float_scale, has_non_finite, Agreement};
use scan_core::ElementType;
use std::fmt;
use values::{describe, field_layout, sample_element, Rng};

/// The results of the four expressions for one sample triple (a, b, c):
/// `[(a⊕b)⊕c, a⊕(b⊕c), e⊕a, a⊕e]`, each an element as bytes.
pub type LawResults = [Vec<u8>; 4];

/// Something that can evaluate the operator on sample triples.
pub trait LawEvaluator {
    /// What runs the combine, for the report (`"cpu: the Rust combine"`).
    fn name(&self) -> String;
    /// The element type: the layout of the bytes [`LawEvaluator::evaluate`] takes and returns.
    fn element(&self) -> &ElementType;
    /// For each `[a, b, c]` (elements as bytes), the four law expressions.
    fn evaluate(
        &mut self,
        triples: &[[Vec<u8>; 3]],
    ) -> Result<Vec<LawResults>, Box<dyn std::error::Error>>;
    /// The identity as bytes, where this evaluator can give it alone (the checker then adds
    /// it to the samples). `None` by default.
    fn identity(&mut self) -> Result<Option<Vec<u8>>, Box<dyn std::error::Error>> {
        Ok(None)
    }
}

/// How many samples the law checker draws, from which seed, and how far float results may be
/// apart. The default is 20,000 samples at a fixed seed, [`Tolerance::Auto`].
#[derive(Clone, Debug)]
pub struct LawConfig {
    /// Random triples to test (each field a third of the time an edge value).
    pub samples: usize,
    /// Seed of the sampler's [`Rng`]: the same seed draws the same samples.
    pub seed: u64,
    /// How far float results may differ and still be equal up to rounding.
    pub tolerance: Tolerance,
}

impl Default for LawConfig {
    fn default() -> Self {
        LawConfig {
            samples: 20_000,
            seed: 0x5ca9_9e11,
            tolerance: Tolerance::default(),
        }
    }
}

/// A law a scan operator must obey.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Law {
    /// `(a⊕b)⊕c = a⊕(b⊕c)`: what lets a parallel scan group the elements as it likes.
    Associativity,
    /// `e⊕a = a`.
    LeftIdentity,
    /// `a⊕e = a`.
    RightIdentity,
}

impl Law {
    fn describe(self) -> &'static str {
        match self {
            Law::Associativity => "associativity   (a⊕b)⊕c = a⊕(b⊕c)",
            Law::LeftIdentity => "left identity   e⊕a = a",
            Law::RightIdentity => "right identity  a⊕e = a",
        }
    }
}

/// The outcome of one law, or of one cross-check between evaluators.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Bit-exact on every sample: integer elements, and the identity laws of any element
    /// (floats included).
    Holds,
    /// The element has float fields: equal up to rounding, with the largest relative error.
    HoldsUpToRounding {
        /// The largest relative error seen (relative to the scale of the computation, see
        /// [`Tolerance`]); within the tolerance.
        max_rel_error: f64,
    },
    /// A sample broke the law (or the evaluators disagreed on it) beyond the tolerance.
    Fails {
        /// The first failing sample: its elements and both sides' results.
        counterexample: String,
    },
}

/// One law's outcome over all samples.
#[derive(Clone, Debug)]
pub struct LawResult {
    /// Which law.
    pub law: Law,
    /// Whether it held.
    pub verdict: Verdict,
    /// Samples where one side overflowed to infinity or NaN and the other did not.
    pub overflowed: usize,
    /// IEEE corner cases that are reported, not judged: the law failed only for inputs holding
    /// NaN or infinity (`-inf * 0` is NaN), or only in the sign of a zero. Each: the count and
    /// the first example.
    pub caveats: Vec<Caveat>,
}

/// A kind of IEEE corner case under which a law failed, reported beside the verdict rather
/// than judged.
#[derive(Clone, Debug)]
pub struct Caveat {
    /// The kind: `"holds only for finite inputs"` or `"holds only up to the sign of zero"`.
    pub what: &'static str,
    /// Samples of this kind.
    pub count: usize,
    /// The first of them, as a counterexample.
    pub example: String,
}

fn note(caveats: &mut Vec<Caveat>, what: &'static str, example: impl FnOnce() -> String) {
    match caveats.iter_mut().find(|c| c.what == what) {
        Some(c) => c.count += 1,
        None => caveats.push(Caveat {
            what,
            count: 1,
            example: example(),
        }),
    }
}

/// Whether two evaluators (CPU and GPU) agree on every sample.
#[derive(Clone, Debug)]
pub struct CrossCheck {
    /// The names of the two evaluators ([`LawEvaluator::name`]): the first, and the other.
    pub evaluators: (String, String),
    /// Whether they gave the same four results on every sample (up to rounding for floats;
    /// samples with NaN or infinite inputs are not compared).
    pub verdict: Verdict,
}

/// Everything [`check`] found about one operator; `Display` writes it as `scangen check` prints
/// it.
#[derive(Clone, Debug)]
pub struct LawReport {
    /// The operator's name, as given to [`check`].
    pub op: String,
    /// The element type, written out (`Affine { a: f32, b: f32 }`).
    pub element: String,
    /// Sample triples tested.
    pub samples: usize,
    /// The seed they were drawn from.
    pub seed: u64,
    /// The name of the evaluator the laws were checked with (the first one).
    pub evaluator: String,
    /// Where the samples came from ([`ElementSampler::describe`]).
    pub sampler: String,
    /// The float tolerance applied.
    pub tolerance: Tolerance,
    /// The largest float error seen anywhere (laws and cross-checks, within tolerance or
    /// not), relative to the computation's scale; 0 for integer elements.
    pub worst_rel_error: f64,
    /// Associativity, left identity, right identity, in that order.
    pub laws: Vec<LawResult>,
    /// The first evaluator against each further one.
    pub cross_checks: Vec<CrossCheck>,
}

impl LawReport {
    /// No law failed and every evaluator agreed.
    pub fn passed(&self) -> bool {
        !self
            .laws
            .iter()
            .map(|l| &l.verdict)
            .chain(self.cross_checks.iter().map(|c| &c.verdict))
            .any(|v| matches!(v, Verdict::Fails { .. }))
    }
}

fn has_float(element: &ElementType) -> bool {
    field_layout(element).iter().any(|(_, t, _)| t.is_float())
}

/// Draws the sample triples for `element`.
pub fn sample_triples(element: &ElementType, config: &LawConfig) -> Vec<[Vec<u8>; 3]> {
    let mut rng = Rng::new(config.seed);
    (0..config.samples)
        .map(|_| {
            [
                sample_element(element, &mut rng),
                sample_element(element, &mut rng),
                sample_element(element, &mut rng),
            ]
        })
        .collect()
}

/// Draws sample triples from `sampler`: a third of the elements from its edge cases when it
/// has any, one in sixteen the identity (when known), the rest random.
fn draw_triples(
    sampler: &mut dyn ElementSampler,
    identity: Option<&[u8]>,
    config: &LawConfig,
) -> Vec<[Vec<u8>; 3]> {
    let mut rng = Rng::new(config.seed);
    let edges = sampler.edge_cases();
    let mut one = |rng: &mut Rng| -> Vec<u8> {
        if let Some(e) = identity.filter(|_| rng.below(16) == 0) {
            return e.to_vec();
        }
        if !edges.is_empty() && rng.below(3) == 0 {
            return edges[rng.below(edges.len() as u64) as usize].clone();
        }
        sampler.sample(rng)
    };
    (0..config.samples)
        .map(|_| [one(&mut rng), one(&mut rng), one(&mut rng)])
        .collect()
}

/// Checks the laws with the first evaluator and cross-checks every further one against it,
/// on elements of every bit pattern ([`BitPatterns`]).
pub fn check(
    op: &str,
    evaluators: &mut [&mut dyn LawEvaluator],
    config: &LawConfig,
) -> Result<LawReport, Box<dyn std::error::Error>> {
    let element = evaluators
        .first()
        .ok_or("law check needs at least one evaluator")?
        .element()
        .clone();
    check_with(op, evaluators, config, &mut BitPatterns::new(element))
}

/// As [`check`], on elements from `sampler` (the operator's real domain), plus the identity.
pub fn check_with(
    op: &str,
    evaluators: &mut [&mut dyn LawEvaluator],
    config: &LawConfig,
    sampler: &mut dyn ElementSampler,
) -> Result<LawReport, Box<dyn std::error::Error>> {
    let (first, rest) = evaluators
        .split_first_mut()
        .ok_or("law check needs at least one evaluator")?;
    let element = first.element().clone();
    let identity = first.identity()?;
    let triples = draw_triples(sampler, identity.as_deref(), config);
    let results = first.evaluate(&triples)?;
    let tol = config.tolerance.relative(&element);
    let floats = has_float(&element);
    let mut worst = 0.0f64;

    let mut laws = Vec::new();
    for (law, (lhs, rhs)) in [
        (Law::Associativity, (0, 1)),
        (Law::LeftIdentity, (2, 3)),
        (Law::RightIdentity, (3, 0)),
    ] {
        let mut max_rel = 0.0f64;
        let mut overflowed = 0;
        let mut failure = None;
        let mut caveats = Vec::new();
        for (t, r) in triples.iter().zip(&results) {
            // The identity laws compare against `a` itself: e⊕a (slot 2) and a⊕e (slot 3).
            let (x, y): (&[u8], &[u8]) = match law {
                Law::Associativity => (&r[lhs], &r[rhs]),
                Law::LeftIdentity => (&r[2], &t[0]),
                Law::RightIdentity => (&r[3], &t[0]),
            };
            let scale = float_scale(&element, &[&t[0], &t[1], &t[2], x, y]);
            let non_finite_input = has_non_finite(&element, &[&t[0], &t[1], &t[2]]);
            match compare(&element, x, y, scale) {
                Agreement::Exact => {}
                Agreement::Rounding { rel } if rel <= tol && law == Law::Associativity => {
                    max_rel = max_rel.max(rel);
                    worst = worst.max(rel);
                }
                Agreement::Overflow if law == Law::Associativity && !non_finite_input => {
                    overflowed += 1
                }
                _ if non_finite_input => note(&mut caveats, "holds only for finite inputs", || {
                    counterexample(law, &element, t, x, y)
                }),
                Agreement::SignedZero => {
                    note(&mut caveats, "holds only up to the sign of zero", || {
                        counterexample(law, &element, t, x, y)
                    })
                }
                other => {
                    if let Agreement::Rounding { rel } = other {
                        worst = worst.max(rel);
                    }
                    failure = Some(counterexample(law, &element, t, x, y));
                    break;
                }
            }
        }
        let verdict = match failure {
            Some(counterexample) => Verdict::Fails { counterexample },
            // Identity laws are judged bit for bit, floats included.
            None if floats && law == Law::Associativity => Verdict::HoldsUpToRounding {
                max_rel_error: max_rel,
            },
            None => Verdict::Holds,
        };
        laws.push(LawResult {
            law,
            verdict,
            overflowed,
            caveats,
        });
    }

    let mut cross_checks = Vec::new();
    for other in rest.iter_mut() {
        let theirs = other.evaluate(&triples)?;
        let mut max_rel = 0.0f64;
        let mut failure = None;
        'samples: for (i, (mine, theirs)) in results.iter().zip(&theirs).enumerate() {
            for slot in 0..4 {
                let scale = float_scale(
                    &element,
                    &[&triples[i][0], &triples[i][1], &triples[i][2], &mine[slot]],
                );
                match compare(&element, &mine[slot], &theirs[slot], scale) {
                    Agreement::Exact => {}
                    Agreement::Rounding { rel } if rel <= tol => {
                        max_rel = max_rel.max(rel);
                        worst = worst.max(rel);
                    }
                    // Both sides computed the same IEEE corner case differently (a fused
                    // multiply-add, say): only finite inputs must agree.
                    _ if has_non_finite(
                        &element,
                        &[&triples[i][0], &triples[i][1], &triples[i][2]],
                    ) => {}
                    agreement => {
                        if let Agreement::Rounding { rel } = agreement {
                            worst = worst.max(rel);
                        }
                        let [a, b, c] = &triples[i];
                        failure = Some(format!(
                            "a = {}, b = {}, c = {}: {} gives {}, {} gives {} for {}",
                            describe(&element, a),
                            describe(&element, b),
                            describe(&element, c),
                            first.name(),
                            describe(&element, &mine[slot]),
                            other.name(),
                            describe(&element, &theirs[slot]),
                            ["(a⊕b)⊕c", "a⊕(b⊕c)", "e⊕a", "a⊕e"][slot]
                        ));
                        break 'samples;
                    }
                }
            }
        }
        let verdict = match failure {
            Some(counterexample) => Verdict::Fails { counterexample },
            None if floats => Verdict::HoldsUpToRounding {
                max_rel_error: max_rel,
            },
            None => Verdict::Holds,
        };
        cross_checks.push(CrossCheck {
            evaluators: (first.name(), other.name()),
            verdict,
        });
    }

    Ok(LawReport {
        op: op.to_string(),
        element: describe_type(&element),
        samples: config.samples,
        seed: config.seed,
        evaluator: first.name(),
        sampler: sampler.describe(),
        tolerance: config.tolerance,
        worst_rel_error: worst,
        laws,
        cross_checks,
    })
}

fn counterexample(law: Law, element: &ElementType, t: &[Vec<u8>; 3], x: &[u8], y: &[u8]) -> String {
    let d = |b: &[u8]| describe(element, b);
    match law {
        Law::Associativity => format!(
            "a = {}, b = {}, c = {}: (a⊕b)⊕c = {} but a⊕(b⊕c) = {}",
            d(&t[0]),
            d(&t[1]),
            d(&t[2]),
            d(x),
            d(y)
        ),
        Law::LeftIdentity => format!("a = {}: e⊕a = {}", d(&t[0]), d(x)),
        Law::RightIdentity => format!("a = {}: a⊕e = {}", d(&t[0]), d(x)),
    }
}

fn describe_type(element: &ElementType) -> String {
    match element {
        ElementType::Prim(p) => p.name().to_string(),
        ElementType::Struct(s) => {
            let f: Vec<String> = s
                .fields
                .iter()
                .map(|f| format!("{}: {}", f.name, f.ty))
                .collect();
            format!("{} {{ {} }}", s.name, f.join(", "))
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Holds => write!(f, "holds (bit-exact on every sample)"),
            Verdict::HoldsUpToRounding { max_rel_error } => {
                write!(
                    f,
                    "holds up to rounding (largest relative error {max_rel_error:.2e})"
                )
            }
            Verdict::Fails { counterexample } => write!(f, "FAILS: {counterexample}"),
        }
    }
}

impl fmt::Display for LawReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "law check of `{}` on {}: {} samples (seed {:#x}), {}",
            self.op, self.element, self.samples, self.seed, self.evaluator
        )?;
        writeln!(f, "  samples: {}", self.sampler)?;
        for l in &self.laws {
            write!(f, "  {:<36} {}", l.law.describe(), l.verdict)?;
            if l.overflowed > 0 {
                write!(f, "; {} samples overflowed to inf/NaN on one side only (float overflow is order-dependent; not judged)", l.overflowed)?;
            }
            writeln!(f)?;
            for c in &l.caveats {
                writeln!(
                    f,
                    "  {:<36}   note: {} ({} samples), e.g. {}",
                    "", c.what, c.count, c.example
                )?;
            }
        }
        for c in &self.cross_checks {
            writeln!(
                f,
                "  {:<36} {}",
                format!("{} = {}", c.evaluators.0, c.evaluators.1),
                c.verdict
            )?;
        }
        let float_note = self
            .laws
            .iter()
            .any(|l| matches!(l.verdict, Verdict::HoldsUpToRounding { .. }));
        let floats = float_note
            || self
                .laws
                .iter()
                .any(|l| matches!(l.verdict, Verdict::Fails { .. }))
                && self.worst_rel_error > 0.0;
        if floats {
            writeln!(
                f,
                "  largest float error seen: {:.2e} relative (tolerance {})",
                self.worst_rel_error, self.tolerance
            )?;
        }
        match (self.passed(), float_note) {
            (true, true) => write!(
                f,
                "verdict: associative up to floating-point rounding, identity exact"
            ),
            (true, false) => write!(f, "verdict: associative, identity exact"),
            (false, _) => write!(
                f,
                "verdict: NOT a valid scan operator (see the counterexample above)"
            ),
        }
    }
}
