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

mod compare;
mod cpu;
mod gpu;
mod values;

pub use cpu::CpuLaws;
pub use gpu::GpuLaws;

use compare::{compare, float_scale, has_non_finite, Agreement};
use scan_core::{ElementType, PrimType};
use std::fmt;
use values::{describe, field_layout, sample_element, Rng};

/// The results of the four expressions for one sample triple (a, b, c):
/// `[(a⊕b)⊕c, a⊕(b⊕c), e⊕a, a⊕e]`, each an element as bytes.
pub type LawResults = [Vec<u8>; 4];

/// Something that can evaluate the operator on sample triples.
pub trait LawEvaluator {
    /// What runs the combine, for the report (`"cpu: the Rust combine"`).
    fn name(&self) -> String;
    fn element(&self) -> &ElementType;
    /// For each `[a, b, c]` (elements as bytes), the four law expressions.
    fn evaluate(
        &mut self,
        triples: &[[Vec<u8>; 3]],
    ) -> Result<Vec<LawResults>, Box<dyn std::error::Error>>;
}

#[derive(Clone, Debug)]
pub struct LawConfig {
    /// Random triples to test (each field a third of the time an edge value).
    pub samples: usize,
    pub seed: u64,
}

impl Default for LawConfig {
    fn default() -> Self {
        LawConfig {
            samples: 20_000,
            seed: 0x5ca9_9e11,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Law {
    Associativity,
    LeftIdentity,
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

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Bit-exact on every sample (integer elements only).
    Holds,
    /// The element has float fields: equal up to rounding, with the largest relative error.
    HoldsUpToRounding {
        max_rel_error: f64,
    },
    Fails {
        counterexample: String,
    },
}

#[derive(Clone, Debug)]
pub struct LawResult {
    pub law: Law,
    pub verdict: Verdict,
    /// Samples where one side overflowed to infinity or NaN and the other did not.
    pub overflowed: usize,
    /// IEEE corner cases that are reported, not judged: the law failed only for inputs holding
    /// NaN or infinity (`-inf * 0` is NaN), or only in the sign of a zero. Each: the count and
    /// the first example.
    pub caveats: Vec<Caveat>,
}

#[derive(Clone, Debug)]
pub struct Caveat {
    pub what: &'static str,
    pub count: usize,
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
    pub evaluators: (String, String),
    pub verdict: Verdict,
}

#[derive(Clone, Debug)]
pub struct LawReport {
    pub op: String,
    pub element: String,
    pub samples: usize,
    pub seed: u64,
    pub evaluator: String,
    pub laws: Vec<LawResult>,
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

/// Relative tolerance for "equal up to rounding": 2^10 ulps of the narrowest float field (16
/// ulps of a 2-byte float, whose 2^10 ulps would be 1 or more). A wrong operator (subtraction,
/// averaging) is off by O(1) relative to its operands.
fn tolerance(element: &ElementType) -> f64 {
    let fields = field_layout(element);
    let has = |p: PrimType| fields.iter().any(|(_, t, _)| *t == p);
    if has(PrimType::BF16) {
        16.0 * scan_core::half::bf16::EPSILON.to_f64()
    } else if has(PrimType::F16) {
        16.0 * scan_core::half::f16::EPSILON.to_f64()
    } else if has(PrimType::F32) {
        1024.0 * f32::EPSILON as f64
    } else {
        1024.0 * f64::EPSILON
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

/// Checks the laws with the first evaluator and cross-checks every further one against it.
pub fn check(
    op: &str,
    evaluators: &mut [&mut dyn LawEvaluator],
    config: &LawConfig,
) -> Result<LawReport, Box<dyn std::error::Error>> {
    let (first, rest) = evaluators
        .split_first_mut()
        .ok_or("law check needs at least one evaluator")?;
    let element = first.element().clone();
    let triples = sample_triples(&element, config);
    let results = first.evaluate(&triples)?;
    let tol = tolerance(&element);
    let floats = has_float(&element);

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
                    max_rel = max_rel.max(rel)
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
                _ => {
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
                    Agreement::Rounding { rel } if rel <= tol => max_rel = max_rel.max(rel),
                    // Both sides computed the same IEEE corner case differently (a fused
                    // multiply-add, say): only finite inputs must agree.
                    _ if has_non_finite(
                        &element,
                        &[&triples[i][0], &triples[i][1], &triples[i][2]],
                    ) => {}
                    _ => {
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
