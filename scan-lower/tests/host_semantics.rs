//! Differential test of `scan-core/templates/rust_semantics.cu.tera` against Rust itself: the helpers are
//! compiled for the host with a small shim for the CUDA intrinsics (g++ or c++, skipped with a
//! message when neither exists) and checked on edge values of every integer type (wrapping,
//! saturating, shifts, rotates, bit counts, division by zero) and on `as` casts.

use std::io::Write;
use std::process::{Command, Stdio};

/// The CUDA intrinsics the helpers use, for a host compiler.
const SHIM: &str = scan_lower::HOST_CXX_SHIM;

const DRIVER: &str = r#"
template <class T> T from_bits(u64 b) { T t; memcpy(&t, &b, sizeof(T)); return t; }
template <class T> u64 to_bits(T t) { u64 b = 0; memcpy(&b, &t, sizeof(T)); return b; }
template <class T> u64 int_op(const char* op, u64 ab, u64 bb) {
    T a = from_bits<T>(ab), b = from_bits<T>(bb);
    if (!strcmp(op, "add")) return to_bits(rs_add(a, b));
    if (!strcmp(op, "sub")) return to_bits(rs_sub(a, b));
    if (!strcmp(op, "mul")) return to_bits(rs_mul(a, b));
    if (!strcmp(op, "div")) return to_bits(rs_div(a, b));
    if (!strcmp(op, "rem")) return to_bits(rs_rem(a, b));
    if (!strcmp(op, "neg")) return to_bits(rs_neg(a));
    if (!strcmp(op, "not")) return to_bits(rs_not(a));
    if (!strcmp(op, "abs")) return to_bits(rs_abs(a));
    if (!strcmp(op, "min")) return to_bits(rs_min(a, b));
    if (!strcmp(op, "max")) return to_bits(rs_max(a, b));
    if (!strcmp(op, "sadd")) return to_bits(rs_saturating_add(a, b));
    if (!strcmp(op, "ssub")) return to_bits(rs_saturating_sub(a, b));
    if (!strcmp(op, "smul")) return to_bits(rs_saturating_mul(a, b));
    if (!strcmp(op, "shl")) return to_bits(rs_shl(a, (u32)bb));
    if (!strcmp(op, "shr")) return to_bits(rs_shr(a, (u32)bb));
    if (!strcmp(op, "rotl")) return to_bits(rs_rotate_left(a, (u32)bb));
    if (!strcmp(op, "rotr")) return to_bits(rs_rotate_right(a, (u32)bb));
    if (!strcmp(op, "ones")) return to_bits(rs_count_ones(a));
    if (!strcmp(op, "lz")) return to_bits(rs_leading_zeros(a));
    if (!strcmp(op, "tz")) return to_bits(rs_trailing_zeros(a));
    return 0xdeadull;
}
template <class To> u64 cast_from(const char* from, u64 bits) {
#define FROM(t) if (!strcmp(from, #t)) return to_bits(rs_cast<To>(from_bits<t>(bits)));
    FROM(i8) FROM(i16) FROM(i32) FROM(i64) FROM(u8) FROM(u16) FROM(u32) FROM(u64) FROM(f32) FROM(f64)
    return 0xdeadull;
}
int main() {
    char kind[8], op[16], ty[8];
    u64 a, b;
    while (scanf("%7s %15s %7s %llx %llx", kind, op, ty, &a, &b) == 5) {
        u64 r = 0xdeadull;
#define TY(t) if (!strcmp(ty, #t)) r = kind[0] == 'i' ? int_op<t>(op, a, b) : cast_from<t>(op, a);
#define FTY(t) if (!strcmp(ty, #t)) r = cast_from<t>(op, a);
        TY(i8) TY(i16) TY(i32) TY(i64) TY(u8) TY(u16) TY(u32) TY(u64) FTY(f32) FTY(f64)
        printf("%llx\n", r);
    }
    return 0;
}
"#;

fn compiler() -> Option<&'static str> {
    ["g++", "c++", "clang++"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// (kind, op, type, a bits, b bits, expected bits)
type Case = (&'static str, String, &'static str, u64, u64, u64);

macro_rules! int_cases {
    ($cases:ident, $($t:ident),*) => {$({
        let ty = stringify!($t);
        let mut vals: Vec<$t> = vec![0, 1, 2, 3, 7, $t::MAX, $t::MIN, $t::MAX - 1, $t::MIN + 1, $t::MAX / 2, $t::MAX / 3 + 1];
        #[allow(unused_comparisons)]
        if $t::MIN < 0 {
            vals.extend([(0 as $t).wrapping_sub(1), (0 as $t).wrapping_sub(2), (0 as $t).wrapping_sub(5)]);
        }
        let bits = |x: $t| x as u64 & (u64::MAX >> (64 - $t::BITS));
        for &a in &vals {
            for &b in &vals {
                let div = if b == 0 { 0 } else { a.wrapping_div(b) };
                let rem = if b == 0 { 0 } else { a.wrapping_rem(b) };
                let s = b as u32;
                for (op, r) in [
                    ("add", a.wrapping_add(b)), ("sub", a.wrapping_sub(b)), ("mul", a.wrapping_mul(b)),
                    ("div", div), ("rem", rem), ("min", a.min(b)), ("max", a.max(b)),
                    ("sadd", a.saturating_add(b)), ("ssub", a.saturating_sub(b)), ("smul", a.saturating_mul(b)),
                    ("shl", a.wrapping_shl(s)), ("shr", a.wrapping_shr(s)),
                    ("rotl", a.rotate_left(s)), ("rotr", a.rotate_right(s)),
                ] {
                    $cases.push(("i", op.to_string(), ty, bits(a), bits(b), bits(r)));
                }
            }
            for (op, r) in [("neg", bits(a.wrapping_neg())), ("not", bits(!a)), ("abs", bits(abs_wrapping(a))),
                ("ones", a.count_ones() as u64), ("lz", a.leading_zeros() as u64), ("tz", a.trailing_zeros() as u64)] {
                $cases.push(("i", op.to_string(), ty, bits(a), 0, r));
            }
        }
    })*};
}

trait AbsWrapping {
    fn abs_w(self) -> Self;
}
macro_rules! abs_signed { ($($t:ty),*) => {$(impl AbsWrapping for $t { fn abs_w(self) -> Self { self.wrapping_abs() } })*}; }
macro_rules! abs_unsigned { ($($t:ty),*) => {$(impl AbsWrapping for $t { fn abs_w(self) -> Self { self } })*}; }
abs_signed!(i8, i16, i32, i64);
abs_unsigned!(u8, u16, u32, u64);
fn abs_wrapping<T: AbsWrapping>(x: T) -> T {
    x.abs_w()
}

macro_rules! cast_to {
    ($cases:ident, $from:literal, $bits:expr, $v:expr, $($to:ident),*) => {$({
        let r = $v as $to;
        let rb = if stringify!($to) == "f32" { (r as f32).to_bits() as u64 } else if stringify!($to) == "f64" { (r as f64).to_bits() } else { (r as u64) & (u64::MAX >> (64 - std::mem::size_of::<$to>() * 8)) };
        $cases.push(("c", $from.to_string(), stringify!($to), $bits, 0, rb));
    })*};
}

#[test]
fn helpers_match_rust_on_edge_values() {
    let Some(cxx) = compiler() else {
        eprintln!("skipping: no C++ compiler (g++/c++/clang++) on PATH");
        return;
    };
    let dir = std::env::temp_dir().join(format!("scangen-host-semantics-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("t.cpp");
    let exe = dir.join("t");
    std::fs::write(
        &src,
        format!("{SHIM}\n{}\n{DRIVER}", scan_lower::RUST_SEMANTICS_CU),
    )
    .unwrap();
    // With UBSan where its runtime is installed (signed overflow in a helper would abort).
    let base = [
        "-std=c++17",
        "-O1",
        "-Wall",
        "-Wextra",
        "-Wno-unused-function",
    ];
    let mut out = None;
    for extra in [
        &["-fsanitize=undefined", "-fno-sanitize-recover=all"][..],
        &[][..],
    ] {
        let o = Command::new(cxx)
            .args(base)
            .args(extra)
            .arg("-o")
            .arg(&exe)
            .arg(&src)
            .output()
            .unwrap();
        let ok = o.status.success();
        out = Some(o);
        if ok {
            break;
        }
    }
    let out = out.unwrap();
    let diag = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "host compile failed:\n{diag}");

    let mut cases: Vec<Case> = Vec::new();
    int_cases!(cases, i8, i16, i32, i64, u8, u16, u32, u64);
    let floats: [f64; 22] = [
        0.0,
        -0.0,
        0.5,
        -0.5,
        0.99,
        -0.99,
        1.5,
        -1.5,
        127.9,
        128.0,
        -128.9,
        -129.0,
        255.5,
        256.0,
        65535.7,
        2147483647.0,
        2147483648.0,
        -2147483649.0,
        4294967296.0,
        9.3e18,
        1.9e19,
        -9.3e18,
    ];
    for v in floats
        .into_iter()
        .chain([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1e300])
    {
        cast_to!(
            cases,
            "f64",
            v.to_bits(),
            v,
            i8,
            i16,
            i32,
            i64,
            u8,
            u16,
            u32,
            u64,
            f32
        );
        let f = v as f32;
        cast_to!(
            cases,
            "f32",
            f.to_bits() as u64,
            f,
            i8,
            i16,
            i32,
            i64,
            u8,
            u16,
            u32,
            u64,
            f64
        );
    }
    for v in [
        0i64,
        1,
        -1,
        127,
        128,
        -129,
        255,
        65536 + 7,
        i32::MIN as i64,
        u32::MAX as i64,
        i64::MIN,
        i64::MAX,
        16777217,
    ] {
        cast_to!(cases, "i64", v as u64, v, i8, i16, i32, u8, u16, u32, u64, f32, f64);
        let u = v as u64;
        cast_to!(cases, "u64", u, u, i8, i16, i32, i64, u8, u16, u32, f32, f64);
        let s = v as i8;
        cast_to!(
            cases,
            "i8",
            s as u8 as u64,
            s,
            i16,
            i32,
            i64,
            u8,
            u16,
            u32,
            u64,
            f32,
            f64
        );
    }

    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = cases
        .iter()
        .map(|(k, op, ty, a, b, _)| format!("{k} {op} {ty} {a:x} {b:x}\n"))
        .collect();
    // Feed stdin from a thread: the child's output would fill the pipe before its input ends.
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    let got: Vec<u64> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| u64::from_str_radix(l, 16).unwrap())
        .collect();
    assert_eq!(got.len(), cases.len());
    let failures: Vec<String> = cases
        .iter()
        .zip(&got)
        .filter(|((.., want), got)| want != *got)
        .map(|((k, op, ty, a, b, want), got)| {
            format!("{k} {op} {ty} a={a:#x} b={b:#x}: rust {want:#x}, C++ {got:#x}")
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(diag.trim().is_empty(), "host compile warnings:\n{diag}");
}
