//! Times the CPU evaluator (`EvalOp`) per element on operators of the repository's examples,
//! as `scangen scan --file` runs them, and prints a hash of each output so a change to the
//! evaluator can be checked to give the same bits.
//!
//! `cargo run --release -p scangen-lower --example eval_speed [LOG2_ELEMENTS [OP]]` (`OP`:
//! time only the operator of that name)
//!
//! `... --example eval_speed -- --digest FILE...` prints, for every operator of each ops file,
//! one hash of its identity, combines, scans and transform-scans of pseudo-random bytes
//! (errors' text included): two builds of the evaluator that print the same lines computed the
//! same bits and the same errors.

use scan_lower::{parse_ops_file, EvalOp};
use std::time::Instant;

/// A fixed pseudo-random sequence (xorshift64*), so runs compare bit for bit.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// FNV-1a of the output bytes.
fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn evaluator(example: &str, op: &str) -> EvalOp {
    let path = format!("{}/../examples/{example}.rs", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let file = parse_ops_file(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    file.evaluator(op)
        .unwrap_or_else(|e| panic!("{path}: {op}: {e}"))
}

fn report(name: &str, n: usize, seconds: f64, out: &[u8]) {
    println!(
        "{name:<28} {:>8.3} us/element  ({n} elements, {seconds:.3} s, output hash {:016x})",
        seconds * 1e6 / n as f64,
        hash(out)
    );
}

/// `transform_scan` over one input array of `n` values made by `value`.
fn time_transform(example: &str, op: &str, n: usize, value: impl Fn(&mut Rng) -> Vec<u8>) {
    let eval = evaluator(example, op);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let input: Vec<u8> = (0..n).flat_map(|_| value(&mut rng)).collect();
    for exclusive in [false, true] {
        let start = Instant::now();
        let out = eval.transform_scan(&[&input], exclusive).unwrap();
        let kind = if exclusive { "exclusive" } else { "inclusive" };
        report(
            &format!("{op} transform_scan {kind}"),
            n,
            start.elapsed().as_secs_f64(),
            &out,
        );
    }
}

/// `scan` over `n` elements made by `element`.
fn time_scan(example: &str, op: &str, n: usize, element: impl Fn(&mut Rng) -> Vec<u8>) {
    let eval = evaluator(example, op);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let input: Vec<u8> = (0..n).flat_map(|_| element(&mut rng)).collect();
    let mut out = vec![0u8; input.len()];
    let start = Instant::now();
    eval.scan(&input, &mut out, false, usize::MAX, &mut |_| {})
        .unwrap();
    report(
        &format!("{op} scan"),
        n,
        start.elapsed().as_secs_f64(),
        &out,
    );
}

/// A hash of `f`'s output, or of its error's text.
fn digest_of<E: std::fmt::Display>(f: impl FnOnce() -> Result<Vec<u8>, E>) -> u64 {
    match f() {
        Ok(bytes) => hash(&bytes),
        Err(e) => hash(format!("error: {e}").as_bytes()),
    }
}

/// One line per operator of `path`: the hashes of what it computes on pseudo-random inputs.
fn digest(path: &str) {
    const N: usize = 64;
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let file = match parse_ops_file(&text) {
        Ok(file) => file,
        Err(e) => return println!("{path}: not an ops file: {e}"),
    };
    for name in file.op_names() {
        let eval = match file.evaluator(&name) {
            Ok(eval) => eval,
            Err(e) => {
                println!("{path} {name}: not an evaluator: {e}");
                continue;
            }
        };
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut bytes = |len: usize| -> Vec<u8> { (0..len).map(|_| rng.next() as u8).collect() };
        let size = eval.element().size();
        let elements = bytes(N * size);
        let mut hashes = vec![digest_of(|| eval.identity())];
        for pair in elements.chunks(2 * size) {
            hashes.push(digest_of(|| eval.combine(&pair[..size], &pair[size..])));
        }
        for exclusive in [false, true] {
            hashes.push(digest_of(|| {
                let mut out = vec![0u8; elements.len()];
                eval.scan(&elements, &mut out, exclusive, usize::MAX, &mut |_| {})
                    .map(|total| [out, total].concat())
            }));
        }
        if eval.has_transform() {
            let arrays: Vec<Vec<u8>> = match eval.input_layouts() {
                Ok(layouts) => layouts.iter().map(|l| bytes(N * l.size)).collect(),
                Err(e) => vec![format!("{e}").into_bytes()],
            };
            let arrays: Vec<&[u8]> = arrays.iter().map(Vec::as_slice).collect();
            for exclusive in [false, true] {
                hashes.push(digest_of(|| eval.transform_scan(&arrays, exclusive)));
            }
        }
        let all: Vec<u8> = hashes.iter().flat_map(|h| h.to_le_bytes()).collect();
        println!("{path} {name}: {:016x}", hash(&all));
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--digest") {
        std::env::args().skip(2).for_each(|path| digest(&path));
        return;
    }
    let log2: u32 = std::env::args()
        .nth(1)
        .map_or(18, |a| a.parse().expect("LOG2_ELEMENTS"));
    let only = std::env::args().nth(2);
    let timed = |op: &str| only.is_none() || only.as_deref() == Some(op);
    let n = 1usize << log2;
    if timed("Kadane") {
        time_transform("kadane", "Kadane", n, |r| {
            (((r.next() % 2001) as i64) - 1000).to_le_bytes().to_vec()
        });
    }
    if timed("ArgMin") {
        time_transform("running_argmin", "ArgMin", n, |r| {
            (((r.next() % 1000) as f32 - 500.0) * 0.25)
                .to_le_bytes()
                .to_vec()
        });
    }
    if timed("Compose") {
        time_scan("linear_recurrence", "Compose", n, |r| {
            let a = 0.9 + (r.next() % 1000) as f32 * 0.00015;
            let b = (r.next() % 2000) as f32 * 0.001 - 1.0;
            [a.to_le_bytes(), b.to_le_bytes()].concat()
        });
    }
    // One method call per element: what evaluating any body costs at least.
    if timed("Sum") {
        time_scan("sum", "Sum", n, |r| r.next().to_le_bytes().to_vec());
    }
}
