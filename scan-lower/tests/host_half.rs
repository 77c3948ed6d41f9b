//! Differential test of the `f16`/`bf16` code of `scan-core/templates/rust_semantics.cu.tera`
//! against the `half` crate: the same C++ the kernels compile, built for the host with the shim
//! of `host_semantics.rs` (g++, c++ or clang++; skipped with a message when none exists).
//!
//! Checked bit for bit: every one of the 65536 values of each type converted to `f32`; `f32` ->
//! 2-byte rounding of every exponent with mantissas at and around each rounding boundary (ties,
//! subnormals, overflow to infinity, NaN payloads); and `+ - * / %`, `min`, `max`, `<`, `==`
//! on pairs of edge and pseudo-random values. NaN results compare as "both NaN" after an
//! arithmetic operation (the device's f32 arithmetic makes the canonical NaN, x86 keeps a
//! payload; neither is part of the meaning), exactly everywhere else.

use scan_core::half::{bf16, f16};
use std::io::Write;
use std::process::{Command, Stdio};

const DRIVER: &str = r#"
template <class H> H hb(unsigned b) { H h; h.bits = (u16)b; return h; }
template <class H> unsigned half_op(const char* op, unsigned a, unsigned b) {
    H x = hb<H>(a), y = hb<H>(b);
    if (!strcmp(op, "to32")) return rs_f32_to_bits(rs_to_f32(x));
    if (!strcmp(op, "from32")) return rs_from_f32<H>(rs_f32_from_bits(a)).bits;
    if (!strcmp(op, "add")) return (x + y).bits;
    if (!strcmp(op, "sub")) return (x - y).bits;
    if (!strcmp(op, "mul")) return (x * y).bits;
    if (!strcmp(op, "div")) return (x / y).bits;
    if (!strcmp(op, "rem")) return rs_rem(x, y).bits;
    if (!strcmp(op, "neg")) return (-x).bits;
    if (!strcmp(op, "min")) return rs_min(x, y).bits;
    if (!strcmp(op, "max")) return rs_max(x, y).bits;
    if (!strcmp(op, "lt")) return x < y;
    if (!strcmp(op, "eq")) return x == y;
    if (!strcmp(op, "finite")) return rs_is_finite(x);
    return 0xdeadu;
}
int main() {
    char op[16], ty[8];
    unsigned a, b;
    while (scanf("%15s %7s %x %x", op, ty, &a, &b) == 4) {
        unsigned r = !strcmp(ty, "f16") ? half_op<f16>(op, a, b) : half_op<bf16>(op, a, b);
        printf("%x\n", r);
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

/// (op, type, a, b, expected, NaN results compare as "both NaN")
type Case = (&'static str, &'static str, u32, u32, u32, bool);

/// The `half` operations under test, for one type.
trait Half: Copy + PartialOrd + std::ops::Neg<Output = Self> {
    const NAME: &'static str;
    fn from_bits(b: u16) -> Self;
    fn bits(self) -> u16;
    fn from_f32(f: f32) -> Self;
    fn to_f32(self) -> f32;
    fn is_finite(self) -> bool;
    fn min(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn arith(self, op: &str, o: Self) -> Self;
}

macro_rules! half_impl {
    ($t:ident) => {
        impl Half for $t {
            const NAME: &'static str = stringify!($t);
            fn from_bits(b: u16) -> Self {
                $t::from_bits(b)
            }
            fn bits(self) -> u16 {
                self.to_bits()
            }
            fn from_f32(f: f32) -> Self {
                $t::from_f32(f)
            }
            fn to_f32(self) -> f32 {
                $t::to_f32(self)
            }
            fn is_finite(self) -> bool {
                $t::is_finite(self)
            }
            fn min(self, o: Self) -> Self {
                $t::min(self, o)
            }
            fn max(self, o: Self) -> Self {
                $t::max(self, o)
            }
            fn arith(self, op: &str, o: Self) -> Self {
                match op {
                    "add" => self + o,
                    "sub" => self - o,
                    "mul" => self * o,
                    "div" => self / o,
                    _ => self % o,
                }
            }
        }
    };
}
half_impl!(f16);
half_impl!(bf16);

/// f32 inputs around every rounding boundary of a 2-byte float: each exponent with mantissas
/// at, just below and just above the halfway points of the dropped bits, plus specials.
fn f32_probes() -> Vec<u32> {
    let mut v = vec![
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x7f80_0001,
        0x7fa0_1234,
        0xffc1_2345,
        0,
        0x8000_0000,
    ];
    for exp in 0u32..=255 {
        for sign in [0u32, 0x8000_0000] {
            for man in [
                0u32,
                1,
                0x0fff,
                0x1000,
                0x1001,
                0x2000,
                0x3000,
                0x7fff,
                0x8000,
                0x8001,
                0x1_8000,
                0x0040_0000,
                0x007f_ffff,
                0x007f_e000,
                0x007f_f000,
                0x0012_3456,
                0x0055_5555,
            ] {
                v.push(sign | exp << 23 | man);
            }
        }
    }
    v
}

fn cases_for<H: Half>(out: &mut Vec<Case>) {
    let name = H::NAME;
    for b in 0..=u16::MAX {
        out.push((
            "to32",
            name,
            b as u32,
            0,
            H::from_bits(b).to_f32().to_bits(),
            false,
        ));
    }
    for x in f32_probes() {
        out.push((
            "from32",
            name,
            x,
            0,
            H::from_f32(f32::from_bits(x)).bits() as u32,
            false,
        ));
    }
    // Edge values (zeros, one, the largest, subnormals, infinities, NaN) and a pseudo-random
    // spread.
    let mut vals: Vec<u16> = vec![
        0, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x7bff,
    ];
    vals.extend([
        0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7f80, 0xff80, 0x7fc0, 0x0080, 0x4170, 0x3555,
    ]);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..60 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        vals.push(seed as u16);
    }
    for &a in &vals {
        let x = H::from_bits(a);
        out.push(("neg", name, a as u32, 0, (-x).bits() as u32, false));
        out.push(("finite", name, a as u32, 0, x.is_finite() as u32, false));
        for &b in &vals {
            let y = H::from_bits(b);
            for op in ["add", "sub", "mul", "div", "rem"] {
                out.push((
                    op,
                    name,
                    a as u32,
                    b as u32,
                    x.arith(op, y).bits() as u32,
                    true,
                ));
            }
            out.push((
                "min",
                name,
                a as u32,
                b as u32,
                x.min(y).bits() as u32,
                false,
            ));
            out.push((
                "max",
                name,
                a as u32,
                b as u32,
                x.max(y).bits() as u32,
                false,
            ));
            out.push(("lt", name, a as u32, b as u32, (x < y) as u32, false));
            out.push(("eq", name, a as u32, b as u32, (x == y) as u32, false));
        }
    }
}

fn is_nan_bits(ty: &str, b: u32) -> bool {
    if ty == "f16" {
        f16::from_bits(b as u16).is_nan()
    } else {
        bf16::from_bits(b as u16).is_nan()
    }
}

#[test]
fn half_code_matches_the_half_crate() {
    let Some(cxx) = compiler() else {
        eprintln!("skipping: no C++ compiler (g++/c++/clang++) on PATH");
        return;
    };
    let dir = std::env::temp_dir().join(format!("scangen-host-half-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("t.cpp");
    let exe = dir.join("t");
    std::fs::write(
        &src,
        format!(
            "{}\n{}\n{DRIVER}",
            scan_lower::HOST_CXX_SHIM,
            scan_lower::RUST_SEMANTICS_CU
        ),
    )
    .unwrap();
    let out = Command::new(cxx)
        .args([
            "-std=c++17",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Wno-unused-function",
            "-o",
        ])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "host compile failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut cases = Vec::new();
    cases_for::<f16>(&mut cases);
    cases_for::<bf16>(&mut cases);
    let mut input = String::new();
    for (op, ty, a, b, _, _) in &cases {
        input.push_str(&format!("{op} {ty} {a:x} {b:x}\n"));
    }
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let got: Vec<u32> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| u32::from_str_radix(l, 16).unwrap())
        .collect();
    assert_eq!(got.len(), cases.len());
    let mut failures = Vec::new();
    for ((op, ty, a, b, want, nan_any), got) in cases.iter().zip(got) {
        let both_nan = *nan_any && is_nan_bits(ty, *want) && is_nan_bits(ty, got);
        if got != *want && !both_nan {
            failures.push(format!(
                "{op} {ty} {a:#x} {b:#x}: C++ {got:#x}, half {want:#x}"
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "{} of {} cases differ, first: {:#?}",
        failures.len(),
        cases.len(),
        &failures[..failures.len().min(20)]
    );
}
