//! The operator language against Rust, without a GPU: every operator of
//! `tests/operator_language/ops.rs` (written with helpers, `const`s, `match`, destructuring,
//! tuples, loops, `bool`s, arrays and nested structs) is lowered by `#[scan_op]`, its `combine`
//! and `identity` compiled for the host with the Rust-semantics helpers (g++, skipped with a
//! message when there is none), run on random elements and compared with the Rust functions:
//! bit for bit, but for NaN payloads. The same operators' kernels are compiled with NVRTC.

#[path = "operator_language/ops.rs"]
mod ops;

use rand::rngs::StdRng;
use rand::SeedableRng;
use scangen::codegen::{generate, Algorithm, ScanMode, TuningPolicy};
use scangen::runtime::compile::{compile, compile_options, nvrtc_available};
use scangen::{ElementType, Leaf, OpSpec, PrimType, ScanOp};
use std::io::Write;
use std::process::{Command, Stdio};

const SAMPLES: usize = 3000;

fn compiler() -> Option<&'static str> {
    ["g++", "c++", "clang++"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The primitives of an element and where they are: only these bytes have values (padding
/// has none, in Rust or C++).
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

/// The element's value bytes (padding left zero).
fn value_bytes<T: Copy>(t: &T, leaves: &[Leaf]) -> Vec<u8> {
    let mut out = vec![0u8; std::mem::size_of::<T>()];
    let p = (t as *const T).cast::<u8>();
    for l in leaves {
        let range = l.offset..l.offset + l.ty.size();
        // SAFETY: a field's bytes, inside `t`, initialised.
        let field = unsafe { std::slice::from_raw_parts(p.add(l.offset), l.ty.size()) };
        out[range].copy_from_slice(field);
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A host program that reads pairs of elements in hex and prints `combine(a, b)` and
/// `identity()` in hex.
fn host_source(op: &OpSpec) -> String {
    let mut s = String::from(scangen::lower::HOST_CXX_SHIM);
    s.push_str(scangen::lower::RUST_SEMANTICS_CU);
    let t = op.element.c_name();
    if let ElementType::Struct(d) = &op.element {
        for n in d.nested_structs() {
            s.push_str(&format!("{}\n", n.c_declaration()));
        }
        s.push_str(&format!("{}\n", d.c_declaration()));
    }
    if t != "T" {
        s.push_str(&format!("typedef {t} T;\n"));
    }
    s.push_str(&format!(
        "static_assert(sizeof(T) == {}, \"size\");\n",
        op.element.size()
    ));
    s.push_str(&format!(
        "__device__ __forceinline__ T scan_combine(T {}, T {}) {{\n{}\n}}\n",
        op.lhs, op.rhs, op.combine_body
    ));
    s.push_str(&format!(
        "__device__ __forceinline__ T scan_identity() {{\n{}\n}}\n",
        op.identity_body
    ));
    s.push_str(
        r#"
static void parse(const char* h, T* t) {
    unsigned char* b = (unsigned char*)t;
    for (size_t i = 0; i < sizeof(T); ++i) { unsigned v; sscanf(h + 2 * i, "%2x", &v); b[i] = (unsigned char)v; }
}
static void print(const T* t) {
    const unsigned char* b = (const unsigned char*)t;
    for (size_t i = 0; i < sizeof(T); ++i) printf("%02x", b[i]);
}
int main() {
    static char a[4096], b[4096];
    while (scanf("%4095s %4095s", a, b) == 2) {
        T x, y;
        memset(&x, 0, sizeof x); memset(&y, 0, sizeof y);
        parse(a, &x); parse(b, &y);
        T r = scan_combine(x, y);
        T e = scan_identity();
        print(&r); printf(" "); print(&e); printf("\n");
    }
    return 0;
}
"#,
    );
    s
}

/// Whether two elements' values agree: every integer and `bool` bit for bit, every float bit
/// for bit or both NaN.
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
            return Err(format!("`{}`: Rust {} C++ {}", l.path, hex(x), hex(y)));
        }
    }
    Ok(())
}

/// Lowers `Op`, runs its C++ on random pairs and compares with the Rust.
fn agrees_with_rust<Op: ScanOp>(sample: fn(&mut StdRng) -> Op::Elem, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let pairs: Vec<(Op::Elem, Op::Elem)> = (0..SAMPLES)
        .map(|_| (sample(&mut rng), sample(&mut rng)))
        .collect();
    agrees_on::<Op>(&pairs);
}

/// As [`agrees_with_rust`], on the law checker's samples (every field random, a third of them
/// edge values: 0, MIN, MAX, NaN, infinities), skipping the pairs where the Rust panics (a
/// debug build's overflow check): the GPU wraps there, as a release build does.
fn agrees_with_rust_on_edge_values<Op: ScanOp>() {
    let op = Op::device_op();
    let triples = scangen::laws::sample_triples(
        &op.element,
        &scangen::laws::LawConfig {
            samples: SAMPLES,
            seed: 17,
            ..Default::default()
        },
    );
    // SAFETY: the sampler writes every field (`bool`s as 0 or 1) and zeroes the padding, and
    // every bit pattern of a primitive field is a value.
    let read = |b: &[u8]| unsafe { std::ptr::read_unaligned(b.as_ptr().cast::<Op::Elem>()) };
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let pairs: Vec<(Op::Elem, Op::Elem)> = triples
        .iter()
        .map(|t| (read(&t[0]), read(&t[1])))
        // Plain data: nothing a panic could leave half-changed.
        .filter(|&(a, b)| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || Op::combine(a, b)))
                .is_ok()
        })
        .collect();
    std::panic::set_hook(quiet);
    assert!(
        pairs.len() > SAMPLES / 4,
        "{}: too few samples without overflow",
        op.name
    );
    agrees_on::<Op>(&pairs);
}

/// Runs `Op`'s lowered C++ on `pairs` and compares with the Rust.
fn agrees_on<Op: ScanOp>(pairs: &[(Op::Elem, Op::Elem)]) {
    let Some(cxx) = compiler() else {
        eprintln!("skipping: no C++ compiler (g++/c++/clang++) on PATH");
        return;
    };
    let op = Op::device_op();
    let leaves = leaves(&op.element);
    // Unique per call: two operators may share a name (tests run in parallel).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "scangen-operator-language-{}-{}-{call}",
        op.name,
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, exe) = (dir.join("op.cpp"), dir.join("op"));
    std::fs::write(&src, host_source(&op)).unwrap();
    let out = Command::new(cxx)
        .args(["-std=c++17", "-O1", "-Wall", "-Wno-unused-function"])
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: host compile failed:\n{}\n---- lowered ----\n{}\n{}",
        op.name,
        String::from_utf8_lossy(&out.stderr),
        op.combine_body,
        op.identity_body
    );

    let input: String = pairs
        .iter()
        .map(|(a, b)| {
            format!(
                "{} {}\n",
                hex(&value_bytes(a, &leaves)),
                hex(&value_bytes(b, &leaves))
            )
        })
        .collect();
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // From a thread: the child's output would fill the pipe before its input ends.
    let feeder = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let lines: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        lines.len(),
        pairs.len(),
        "{}: the host program stopped ({}) after {} of the pairs",
        op.name,
        output.status,
        lines.len(),
    );
    let identity = value_bytes(&Op::identity(), &leaves);
    for ((a, b), line) in pairs.iter().zip(&lines) {
        let (r, e) = line.split_once(' ').unwrap();
        let want = value_bytes(&Op::combine(*a, *b), &leaves);
        if let Err(diff) = same(&want, &unhex(r), &leaves) {
            panic!(
                "{}: combine({a:?}, {b:?}) differs at {diff}\n---- lowered ----\n{}",
                op.name, op.combine_body
            );
        }
        if let Err(diff) = same(&identity, &unhex(e), &leaves) {
            panic!(
                "{}: identity() differs at {diff}\n---- lowered ----\n{}",
                op.name, op.identity_body
            );
        }
    }
}

#[test]
fn helpers_consts_match_tuples_and_loops_agree_with_rust() {
    agrees_with_rust::<ops::runs::Runs>(ops::runs::sample, 1);
}

#[test]
fn bool_fields_and_if_let_agree_with_rust() {
    agrees_with_rust::<ops::fill::ForwardFill>(ops::fill::sample, 2);
}

#[test]
fn small_integers_compound_assignment_and_arrays_agree_with_rust() {
    agrees_with_rust::<ops::mix::Mixer>(ops::mix::sample, 3);
}

#[test]
fn nested_structs_and_methods_agree_with_rust() {
    agrees_with_rust::<ops::bounds::Bound>(ops::bounds::sample, 4);
}

#[test]
fn nested_arrays_agree_with_rust() {
    agrees_with_rust::<ops::matrix::MatMul>(ops::matrix::sample, 5);
}

#[test]
fn body_items_and_primitive_consts_agree_with_rust() {
    agrees_with_rust::<ops::hash::Hash>(ops::hash::sample, 6);
}

#[path = "operator_language/examples.rs"]
mod examples;

#[test]
fn every_example_operator_agrees_with_rust() {
    use examples::*;
    agrees_with_rust_on_edge_values::<argmax::ArgMax>();
    agrees_with_rust_on_edge_values::<classify_runs::Runs>();
    agrees_with_rust_on_edge_values::<forward_fill::FillForward>();
    agrees_with_rust_on_edge_values::<linear_recurrence::Compose>();
    agrees_with_rust_on_edge_values::<polynomial::Concat>();
    agrees_with_rust_on_edge_values::<running_max::RunningMax>();
    agrees_with_rust_on_edge_values::<segmented_sum::SegmentedSum>();
    agrees_with_rust_on_edge_values::<sum::Sum>();
    agrees_with_rust_on_edge_values::<vector_ops::Vec4Sum>();
    agrees_with_rust_on_edge_values::<vector_ops::Mat3Product>();
}

/// Every operator's kernels compile with NVRTC (skipped without NVRTC unless
/// SCANGEN_REQUIRE_NVRTC=1).
#[scan_testenv::needs(nvrtc)]
#[test]
fn kernels_compile_with_nvrtc() {
    if let Err(e) = nvrtc_available() {
        if std::env::var("SCANGEN_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!("SCANGEN_REQUIRE_NVRTC=1 but {e}");
        }
        println!("skipped: {e} (install it with `. scripts/cuda-tools.sh`)");
        return;
    }
    let specs = [
        ops::runs::Runs::device_op(),
        ops::fill::ForwardFill::device_op(),
        ops::mix::Mixer::device_op(),
        ops::bounds::Bound::device_op(),
        ops::matrix::MatMul::device_op(),
        ops::hash::Hash::device_op(),
    ];
    for spec in &specs {
        for algorithm in Algorithm::ALL {
            let policy = TuningPolicy::for_target(90, algorithm, spec.element.size());
            let g = generate(spec, algorithm, ScanMode::Inclusive, policy).expect("generates");
            compile(&g.source, &compile_options(90))
                .unwrap_or_else(|e| panic!("{} ({algorithm:?}): {e}", spec.name));
        }
    }
}
