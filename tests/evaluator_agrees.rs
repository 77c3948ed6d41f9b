//! The CPU evaluator of the operator IR (`OpsFile::evaluator`) against the macro-generated
//! Rust: every operator of `tests/operator_language/ops.rs` and of every example, read from
//! its source file the way `scangen check --file` reads it, evaluated on random elements and
//! compared with the Rust `combine` and `identity`. Integers and `bool`s bit for bit, floats
//! bit for bit too (the evaluator computes with Rust's own float functions), NaNs of any
//! payload equal; `f16`/`bf16` bit for bit, NaN payloads included (the evaluator computes with
//! the `half` crate, as the Rust does), on the operators of `operator_language/halves.rs`.

#[path = "operator_language/ops.rs"]
mod ops;

#[path = "operator_language/examples.rs"]
mod examples;

#[path = "operator_language/halves.rs"]
mod halves;

use rand::rngs::StdRng;
use rand::SeedableRng;
use scangen::{ElementType, Leaf, PrimType, ScanOp};

const SAMPLES: usize = 2000;

const OPS_RS: &str = include_str!("operator_language/ops.rs");
const HALVES_RS: &str = include_str!("operator_language/halves.rs");

fn leaves(element: &ElementType) -> Vec<Leaf> {
    match element {
        ElementType::Prim(p) => vec![Leaf {
            path: String::new(),
            ty: *p,
            is_bool: false,
            offset: 0,
        }],
        ElementType::Struct(s) => s.leaves(),
    }
}

/// The element's value bytes (padding zero).
fn value_bytes<T: Copy>(t: &T, leaves: &[Leaf]) -> Vec<u8> {
    let mut out = vec![0u8; std::mem::size_of::<T>()];
    let p = (t as *const T).cast::<u8>();
    for l in leaves {
        // SAFETY: a field's bytes, inside `t`, initialised.
        let field = unsafe { std::slice::from_raw_parts(p.add(l.offset), l.ty.size()) };
        out[l.offset..l.offset + l.ty.size()].copy_from_slice(field);
    }
    out
}

fn same(a: &[u8], b: &[u8], leaves: &[Leaf]) -> Result<(), String> {
    for l in leaves {
        let (x, y) = (
            &a[l.offset..l.offset + l.ty.size()],
            &b[l.offset..l.offset + l.ty.size()],
        );
        let nan = |v: &[u8]| match l.ty {
            PrimType::F32 => f32::from_le_bytes(v.try_into().unwrap()).is_nan(),
            PrimType::F64 => f64::from_le_bytes(v.try_into().unwrap()).is_nan(),
            _ => false,
        };
        if x != y && !(nan(x) && nan(y)) {
            return Err(format!("`{}`: Rust {x:02x?}, evaluator {y:02x?}", l.path));
        }
    }
    Ok(())
}

/// Evaluates `Op` from `source` on `pairs` and compares with the Rust.
fn agrees_on<Op: ScanOp>(source: &str, pairs: &[(Op::Elem, Op::Elem)]) {
    let spec = Op::device_op();
    let file = scangen::lower::parse_ops_file(source).unwrap();
    let eval = file
        .evaluator(&spec.name)
        .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
    assert_eq!(
        eval.element(),
        &spec.element,
        "{}: element layout",
        spec.name
    );
    let leaves = leaves(&spec.element);
    let identity = eval.identity().unwrap();
    same(&value_bytes(&Op::identity(), &leaves), &identity, &leaves)
        .unwrap_or_else(|d| panic!("{}: identity() differs at {d}", spec.name));
    for (a, b) in pairs {
        let got = eval
            .combine(&value_bytes(a, &leaves), &value_bytes(b, &leaves))
            .unwrap_or_else(|e| panic!("{}: combine({a:?}, {b:?}): {e}", spec.name));
        let want = value_bytes(&Op::combine(*a, *b), &leaves);
        same(&want, &got, &leaves)
            .unwrap_or_else(|d| panic!("{}: combine({a:?}, {b:?}) differs at {d}", spec.name));
    }
}

fn agrees_with_rust<Op: ScanOp>(sample: fn(&mut StdRng) -> Op::Elem, seed: u64) {
    agrees_with_rust_in::<Op>(OPS_RS, sample, seed, SAMPLES);
}

fn agrees_with_rust_in<Op: ScanOp>(
    source: &str,
    sample: fn(&mut StdRng) -> Op::Elem,
    seed: u64,
    samples: usize,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    let pairs: Vec<_> = (0..samples)
        .map(|_| (sample(&mut rng), sample(&mut rng)))
        .collect();
    agrees_on::<Op>(source, &pairs);
}

/// On the law checker's samples (a third edge values: 0, MIN, MAX, NaN, infinities), without
/// the pairs where the Rust panics (a debug build's overflow check; the evaluator wraps, as a
/// release build does).
fn agrees_on_edge_values<Op: ScanOp>(source: &str) {
    let op = Op::device_op();
    let triples = scangen::laws::sample_triples(
        &op.element,
        &scangen::laws::LawConfig {
            samples: SAMPLES,
            seed: 23,
            ..Default::default()
        },
    );
    // SAFETY: the sampler writes every field (`bool`s as 0 or 1) and zeroes the padding.
    let read = |b: &[u8]| unsafe { std::ptr::read_unaligned(b.as_ptr().cast::<Op::Elem>()) };
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let pairs: Vec<(Op::Elem, Op::Elem)> = triples
        .iter()
        .map(|t| (read(&t[0]), read(&t[1])))
        .filter(|&(a, b)| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || Op::combine(a, b)))
                .is_ok()
        })
        .collect();
    std::panic::set_hook(quiet);
    assert!(pairs.len() > SAMPLES / 4, "{}: too few samples", op.name);
    agrees_on::<Op>(source, &pairs);
}

#[test]
fn operator_language_ops_agree_with_rust() {
    agrees_with_rust::<ops::runs::Runs>(ops::runs::sample, 1);
    agrees_with_rust::<ops::fill::ForwardFill>(ops::fill::sample, 2);
    agrees_with_rust::<ops::mix::Mixer>(ops::mix::sample, 3);
    agrees_with_rust::<ops::bounds::Bound>(ops::bounds::sample, 4);
    agrees_with_rust::<ops::matrix::MatMul>(ops::matrix::sample, 5);
    agrees_with_rust::<ops::hash::Hash>(ops::hash::sample, 6);
}

/// `f16` and `bf16`: a struct of both (sums, `max`/`min`/`clamp` with NaNs, every operator,
/// conversions, bits, constants, helpers) and plain 2-byte elements, on random elements
/// with NaNs, infinities and subnormals, and on the law checker's samples.
#[test]
fn half_operators_agree_with_rust() {
    agrees_with_rust_in::<halves::stats::HalfStats>(
        HALVES_RS,
        halves::stats::sample,
        11,
        20 * SAMPLES,
    );
    agrees_with_rust_in::<halves::sum16::Sum16>(HALVES_RS, halves::f16_sample, 12, SAMPLES);
    agrees_with_rust_in::<halves::max_bf16::MaxB>(HALVES_RS, halves::bf16_sample, 13, SAMPLES);
    agrees_on_edge_values::<halves::stats::HalfStats>(HALVES_RS);
    agrees_on_edge_values::<halves::sum16::Sum16>(HALVES_RS);
    agrees_on_edge_values::<halves::max_bf16::MaxB>(HALVES_RS);
}

/// The plain `f16` sum and `bf16` max with every one of the 65536 values as either operand
/// (three partners each, through odd multipliers, which visit every value too): the evaluator
/// rounds and orders as `half` does everywhere, not only where samples fall.
#[test]
fn half_elements_agree_on_every_value() {
    fn all_bits<Op: ScanOp>(from_bits: fn(u16) -> Op::Elem) {
        let pairs: Vec<_> = (0..=u16::MAX)
            .flat_map(|a| {
                [1u16, 0x3c01, 0x8003].map(|k| {
                    (
                        from_bits(a),
                        from_bits(a.wrapping_mul(k).wrapping_add(0x1234)),
                    )
                })
            })
            .collect();
        agrees_on::<Op>(HALVES_RS, &pairs);
    }
    all_bits::<halves::sum16::Sum16>(scangen::half::f16::from_bits);
    all_bits::<halves::max_bf16::MaxB>(scangen::half::bf16::from_bits);
}

#[test]
fn every_example_operator_agrees_with_rust() {
    use examples::*;
    macro_rules! src {
        ($f:literal) => {
            include_str!(concat!("../examples/", $f, ".rs"))
        };
    }
    agrees_on_edge_values::<argmax::ArgMax>(src!("argmax"));
    agrees_on_edge_values::<classify_runs::Runs>(src!("classify_runs"));
    agrees_on_edge_values::<forward_fill::FillForward>(src!("forward_fill"));
    agrees_on_edge_values::<linear_recurrence::Compose>(src!("linear_recurrence"));
    agrees_on_edge_values::<polynomial::Concat>(src!("polynomial"));
    agrees_on_edge_values::<running_max::RunningMax>(src!("running_max"));
    agrees_on_edge_values::<segmented_sum::SegmentedSum>(src!("segmented_sum"));
    agrees_on_edge_values::<sum::Sum>(src!("sum"));
    agrees_on_edge_values::<vector_ops::Vec4Sum>(src!("vector_ops"));
    agrees_on_edge_values::<vector_ops::Mat3Product>(src!("vector_ops"));
}

/// Every operator of the `tests/pass` macro cases evaluates its identity and a combine
/// without an error (their Rust is compiled by the UI test, not here).
#[test]
fn pass_cases_evaluate() {
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pass")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let file = scangen::lower::parse_ops_file(&text).unwrap();
        for name in file.op_names() {
            let eval = file
                .evaluator(&name)
                .unwrap_or_else(|e| panic!("{}: {name}: {e}", path.display()));
            let e = eval.identity().unwrap();
            eval.combine(&e, &e)
                .unwrap_or_else(|err| panic!("{}: {name}: {err}", path.display()));
        }
    }
}
