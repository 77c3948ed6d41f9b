//! The built-in operators: `add`, `mul`, `min`, `max`, `and`, `or`, `xor` over the primitives.
//!
//! Each exists twice, from one table of semantics: as a run-time value ([`BuiltinOp`] +
//! [`PrimType`] -> [`OpSpec`], for the CLI) and as a type implementing [`ScanOp`] (`Max<f32>`,
//! for the runtime and the CPU backend). The C text and the Rust function must agree bit for
//! bit on integers; the comments on each say how.

use crate::element::PrimType;
use crate::op::ScanOp;
use crate::spec::{ElementType, OpSpec};
use crate::word_form::WordForm;
use std::fmt;
use std::marker::PhantomData;

/// A built-in operator, chosen at run time (the CLI's `--op`); [`BuiltinOp::spec`] lowers it
/// for one primitive type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BuiltinOp {
    /// Sum: integers wrap; identity `0` (`-0.0` on floats, the exact identity).
    Add,
    /// Product: integers wrap; identity `1`. Not defined on `f16`/`bf16`.
    Mul,
    /// Minimum; a NaN operand is ignored, as Rust's `f32::min`. Identity: the type's largest
    /// value (`+inf` on floats).
    Min,
    /// Maximum; a NaN operand is ignored, as Rust's `f32::max`. Identity: the type's smallest
    /// value (`-inf` on floats).
    Max,
    /// Bitwise and, integers only; identity all ones.
    And,
    /// Bitwise or, integers only; identity `0`.
    Or,
    /// Bitwise xor, integers only; identity `0`.
    Xor,
}

/// A built-in operator asked for on a type it has no meaning for (`xor` on `f32`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("built-in op `{op}` is not defined on `{ty}`: {reason}")]
pub struct UnsupportedBuiltin {
    /// The operator asked for.
    pub op: BuiltinOp,
    /// The element type it is not defined on.
    pub ty: PrimType,
    /// Why, in words (ends the error message).
    pub reason: &'static str,
}

impl BuiltinOp {
    /// Every built-in operator, in declaration order.
    pub const ALL: [BuiltinOp; 7] = [
        BuiltinOp::Add,
        BuiltinOp::Mul,
        BuiltinOp::Min,
        BuiltinOp::Max,
        BuiltinOp::And,
        BuiltinOp::Or,
        BuiltinOp::Xor,
    ];

    /// The lowercase name (`"add"`, `"max"`): the CLI's `--op` value and the [`OpSpec`] name.
    pub fn name(self) -> &'static str {
        match self {
            BuiltinOp::Add => "add",
            BuiltinOp::Mul => "mul",
            BuiltinOp::Min => "min",
            BuiltinOp::Max => "max",
            BuiltinOp::And => "and",
            BuiltinOp::Or => "or",
            BuiltinOp::Xor => "xor",
        }
    }

    /// Parses a name as [`BuiltinOp::name`] writes it; `None` for any other string.
    pub fn from_name(name: &str) -> Option<BuiltinOp> {
        BuiltinOp::ALL.into_iter().find(|o| o.name() == name)
    }

    /// A one-line description of the semantics, for help and listings.
    pub fn description(self) -> &'static str {
        match self {
            BuiltinOp::Add => "sum (integers wrap; floats start from -0.0, the exact identity)",
            BuiltinOp::Mul => "product (integers wrap)",
            BuiltinOp::Min => "minimum (floats: NaN is ignored, as Rust's f32::min)",
            BuiltinOp::Max => "maximum (floats: NaN is ignored, as Rust's f32::max)",
            BuiltinOp::And => "bitwise and",
            BuiltinOp::Or => "bitwise or",
            BuiltinOp::Xor => "bitwise xor",
        }
    }

    /// Whether the op is defined on `ty`; bitwise ops are integer-only.
    pub fn supports(self, ty: PrimType) -> bool {
        self.check(ty).is_ok()
    }

    fn check(self, ty: PrimType) -> Result<(), UnsupportedBuiltin> {
        if ty.is_half() && !matches!(self, BuiltinOp::Add | BuiltinOp::Min | BuiltinOp::Max) {
            return Err(UnsupportedBuiltin {
                op: self,
                ty,
                reason: "the built-ins on `f16` and `bf16` are `add`, `min` and `max`",
            });
        }
        let bitwise = matches!(self, BuiltinOp::And | BuiltinOp::Or | BuiltinOp::Xor);
        if bitwise && ty.is_float() {
            return Err(UnsupportedBuiltin {
                op: self,
                ty,
                reason: "bitwise operators are defined on integer types only",
            });
        }
        Ok(())
    }

    /// The types this op is defined on, in `PrimType::ALL` order.
    pub fn types(self) -> Vec<PrimType> {
        PrimType::ALL
            .into_iter()
            .filter(|t| self.supports(*t))
            .collect()
    }

    /// The operator lowered to C for element type `ty`.
    pub fn spec(self, ty: PrimType) -> Result<OpSpec, UnsupportedBuiltin> {
        self.check(ty)?;
        Ok(OpSpec {
            name: self.name().to_string(),
            element: ElementType::Prim(ty),
            lhs: "a".into(),
            rhs: "b".into(),
            combine_body: format!("return {};", combine_c(self, ty)),
            identity_body: format!("return {};", identity_c(self, ty)),
            word_form: word_form(self, ty),
        })
    }
}

/// The monoid each built-in is on integers, and sums, max and min on the 16-bit floats.
///
/// Half max and min are guarded forms ([`WordForm::HalfMax`]): `half`'s max keeps the first of
/// equal operands (-0.0 and +0.0, or two NaNs), so a word's lanes, folding its even and its odd
/// items apart, may give a different zero than the sequential fold (the GPU tie tests of
/// session 29 caught an unguarded word form). The tiles check for that and combine item by item
/// where it could happen.
fn word_form(op: BuiltinOp, ty: PrimType) -> Option<WordForm> {
    if ty.is_float() {
        if !matches!(ty, PrimType::F16 | PrimType::BF16) {
            return None;
        }
        return match op {
            BuiltinOp::Add => Some(WordForm::HalfAdd),
            BuiltinOp::Max => Some(WordForm::HalfMax),
            BuiltinOp::Min => Some(WordForm::HalfMin),
            _ => None,
        };
    }
    match op {
        BuiltinOp::Add => Some(WordForm::WrappingAdd),
        BuiltinOp::Mul => Some(WordForm::WrappingMul),
        BuiltinOp::Min => Some(WordForm::Min),
        BuiltinOp::Max => Some(WordForm::Max),
        BuiltinOp::And => Some(WordForm::And),
        BuiltinOp::Or => Some(WordForm::Or),
        BuiltinOp::Xor => Some(WordForm::Xor),
    }
}

impl fmt::Display for BuiltinOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The arithmetic type integer `+` and `*` run in. C promotes 8- and 16-bit operands to `int`,
/// where `u16 * u16` can overflow a signed int (undefined); and signed overflow of `i32`/`i64` is
/// undefined too. Unsigned arithmetic of at least 32 bits wraps, and truncating back to the
/// element type gives exactly Rust's `wrapping_add`/`wrapping_mul`.
fn wrapping_type(ty: PrimType) -> &'static str {
    if ty.size() == 8 {
        "u64"
    } else {
        "u32"
    }
}

/// The type CUDA's integer `min`/`max` overloads take for elements of `ty`: 32 or 64 bits, of
/// `ty`'s signedness, so widening keeps the order.
fn minmax_type(ty: PrimType) -> &'static str {
    match (ty.size() == 8, ty.is_signed_int()) {
        (true, true) => "i64",
        (true, false) => "u64",
        (false, true) => "i32",
        (false, false) => "u32",
    }
}

/// (`f16`/`bf16` use the same C text: `rust_semantics.cu.tera` gives their C++ structs the
/// operators `+ < > !=` with `half`'s results, bit for bit.)
fn combine_c(op: BuiltinOp, ty: PrimType) -> String {
    let t = ty.name();
    match (op, ty.is_float()) {
        (BuiltinOp::Add, true) => "a + b".into(),
        (BuiltinOp::Mul, true) => "a * b".into(),
        (BuiltinOp::Add, false) => format!("({t})(({w})a + ({w})b)", w = wrapping_type(ty)),
        // (rust_semantics.cu.tera's: 8- and 16-bit products stay 32-bit multiplies there.)
        (BuiltinOp::Mul, false) => "rs_wrapping_mul(a, b)".into(),
        // Rust's f32/f64::min/max: a NaN operand is ignored (the other one is returned). A
        // compare and select says so without fminf/fmaxf, which made ptxas keep about twice the
        // registers in the single-pass tile (151 against 80 for f32 max: 3 blocks per SM
        // instead of 6).
        (BuiltinOp::Min, true) => "(b < a || a != a) ? b : a".into(),
        (BuiltinOp::Max, true) => "(b > a || a != a) ? b : a".into(),
        // CUDA's integer min()/max() (one IMNMX), 8- and 16-bit types widened to 32 bits first.
        // A compare and select held twice the registers over packed 2-byte items: u16 max at
        // 128 items spilled 596 bytes under the 80-register cap, against 4 with max(). (The
        // SIMD byte forms, __vmaxu4 and kin, spilled less over u8 but ran at 0.37-0.46 of a copy
        // on an H100, against 0.65-0.72 with max().)
        (BuiltinOp::Min, false) => format!("({t})min(({w})a, ({w})b)", w = minmax_type(ty)),
        (BuiltinOp::Max, false) => format!("({t})max(({w})a, ({w})b)", w = minmax_type(ty)),
        (BuiltinOp::And, _) => format!("({t})(a & b)"),
        (BuiltinOp::Or, _) => format!("({t})(a | b)"),
        (BuiltinOp::Xor, _) => format!("({t})(a ^ b)"),
    }
}

/// C spelling of the smallest and largest value of an integer type. `MIN` of a signed type is
/// written `-MAX - 1`: the literal `2147483648` does not fit `int`, so `-2147483648` would be a
/// negated `long`.
fn int_min_c(ty: PrimType) -> String {
    match ty {
        PrimType::I8 => "(i8)(-127 - 1)".into(),
        PrimType::I16 => "(i16)(-32767 - 1)".into(),
        PrimType::I32 => "(i32)(-2147483647 - 1)".into(),
        PrimType::I64 => "(i64)(-9223372036854775807LL - 1)".into(),
        other => format!("({})0", other.name()),
    }
}

fn int_max_c(ty: PrimType) -> String {
    match ty {
        PrimType::I8 => "(i8)127".into(),
        PrimType::I16 => "(i16)32767".into(),
        PrimType::I32 => "(i32)2147483647".into(),
        PrimType::I64 => "(i64)9223372036854775807LL".into(),
        PrimType::U8 => "(u8)255".into(),
        PrimType::U16 => "(u16)65535".into(),
        PrimType::U32 => "(u32)4294967295u".into(),
        PrimType::U64 => "(u64)18446744073709551615ull".into(),
        _ => unreachable!("float"),
    }
}

/// Infinities by bit pattern: NVRTC has no <math.h> constants, and `1.0f/0.0f` draws warnings.
fn float_inf_c(ty: PrimType, negative: bool) -> &'static str {
    match (ty, negative) {
        (PrimType::F32, false) => "__int_as_float(0x7f800000)",
        (PrimType::F32, true) => "__int_as_float((int)0xff800000u)",
        (PrimType::F64, false) => "__longlong_as_double(0x7ff0000000000000ll)",
        (PrimType::F64, true) => "__longlong_as_double((long long)0xfff0000000000000ull)",
        _ => unreachable!("int"),
    }
}

/// A 2-byte float by its bits (`rs_from_bits` in `rust_semantics.cu.tera`): exact, and the
/// same value as the `half` constant the typed op uses.
fn half_bits_c(ty: PrimType, bits: u16) -> String {
    format!("rs_from_bits<{ty}>((u16)0x{bits:04x}u)")
}

fn identity_c(op: BuiltinOp, ty: PrimType) -> String {
    let t = ty.name();
    if ty.is_half() {
        let (neg_zero, inf, neg_inf) = match ty {
            PrimType::F16 => (
                half::f16::NEG_ZERO,
                half::f16::INFINITY,
                half::f16::NEG_INFINITY,
            )
                .map_bits(),
            _ => (
                half::bf16::NEG_ZERO,
                half::bf16::INFINITY,
                half::bf16::NEG_INFINITY,
            )
                .map_bits(),
        };
        return half_bits_c(
            ty,
            match op {
                BuiltinOp::Min => inf,
                BuiltinOp::Max => neg_inf,
                // -0.0, the exact identity of a sum (as for f32); only add/min/max exist here.
                _ => neg_zero,
            },
        );
    }
    match op {
        // -0.0, not 0.0: 0.0 + -0.0 is 0.0, so only -0.0 leaves every float unchanged.
        BuiltinOp::Add if ty == PrimType::F32 => "-0.0f".into(),
        BuiltinOp::Add if ty == PrimType::F64 => "-0.0".into(),
        BuiltinOp::Mul if ty == PrimType::F32 => "1.0f".into(),
        BuiltinOp::Mul if ty == PrimType::F64 => "1.0".into(),
        BuiltinOp::Add | BuiltinOp::Or | BuiltinOp::Xor => format!("({t})0"),
        BuiltinOp::Mul => format!("({t})1"),
        BuiltinOp::And => format!("({t})~({t})0"),
        BuiltinOp::Min if ty.is_float() => float_inf_c(ty, false).into(),
        BuiltinOp::Max if ty.is_float() => float_inf_c(ty, true).into(),
        BuiltinOp::Min => int_max_c(ty),
        BuiltinOp::Max => int_min_c(ty),
    }
}

/// The bits of three `half` constants.
trait MapBits {
    fn map_bits(self) -> (u16, u16, u16);
}

impl MapBits for (half::f16, half::f16, half::f16) {
    fn map_bits(self) -> (u16, u16, u16) {
        (self.0.to_bits(), self.1.to_bits(), self.2.to_bits())
    }
}

impl MapBits for (half::bf16, half::bf16, half::bf16) {
    fn map_bits(self) -> (u16, u16, u16) {
        (self.0.to_bits(), self.1.to_bits(), self.2.to_bits())
    }
}

// ---------------------------------------------------------------------------------------------
// The same operators as types, for the runtime and the CPU backend.

macro_rules! typed_op {
    ($(#[$doc:meta])* $name:ident, $which:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name<T>(PhantomData<T>);

        impl<T> $name<T> {
            /// The run-time [`BuiltinOp`] this type stands for.
            pub const OP: BuiltinOp = $which;
        }
    };
}

typed_op!(/// Sum: wrapping for integers.
    Add, BuiltinOp::Add);
typed_op!(/// Product: wrapping for integers.
    Mul, BuiltinOp::Mul);
typed_op!(/// Minimum; NaN-ignoring for floats.
    Min, BuiltinOp::Min);
typed_op!(/// Maximum; NaN-ignoring for floats.
    Max, BuiltinOp::Max);
typed_op!(/// Bitwise and.
    And, BuiltinOp::And);
typed_op!(/// Bitwise or.
    Or, BuiltinOp::Or);
typed_op!(/// Bitwise xor.
    Xor, BuiltinOp::Xor);

macro_rules! impl_op {
    ($op:ident, $t:ident, $p:ident, |$a:ident, $b:ident| $combine:expr, $identity:expr) => {
        impl ScanOp for $op<$t> {
            type Elem = $t;
            #[inline]
            fn identity() -> $t {
                $identity
            }
            #[inline]
            fn combine($a: $t, $b: $t) -> $t {
                $combine
            }
            fn device_op() -> OpSpec {
                $op::<$t>::OP
                    .spec(PrimType::$p)
                    .expect("typed built-ins exist only where defined")
            }
        }
    };
}

macro_rules! int_ops {
    ($($t:ident => $p:ident),*) => {$(
        impl_op!(Add, $t, $p, |a, b| a.wrapping_add(b), 0);
        impl_op!(Mul, $t, $p, |a, b| a.wrapping_mul(b), 1);
        impl_op!(Min, $t, $p, |a, b| if b < a { b } else { a }, $t::MAX);
        impl_op!(Max, $t, $p, |a, b| if a < b { b } else { a }, $t::MIN);
        impl_op!(And, $t, $p, |a, b| a & b, !0);
        impl_op!(Or, $t, $p, |a, b| a | b, 0);
        impl_op!(Xor, $t, $p, |a, b| a ^ b, 0);
    )*};
}

macro_rules! float_ops {
    ($($t:ident => $p:ident),*) => {$(
        impl_op!(Add, $t, $p, |a, b| a + b, -0.0);
        impl_op!(Mul, $t, $p, |a, b| a * b, 1.0);
        impl_op!(Min, $t, $p, |a, b| a.min(b), $t::INFINITY);
        impl_op!(Max, $t, $p, |a, b| a.max(b), $t::NEG_INFINITY);
    )*};
}

// `half`'s `+` converts both operands to f32, adds, and rounds back (correctly rounded, as an
// f32 sum of two 2-byte floats is exact enough that rounding it once is the binary16/bfloat16
// sum); its `max`/`min` ignore a NaN operand, as f32's. The device code does the same.
macro_rules! half_ops {
    ($($t:ident => $p:ident),*) => {$(
        impl_op!(Add, $t, $p, |a, b| a + b, half::$t::NEG_ZERO);
        impl_op!(Min, $t, $p, |a, b| a.min(b), half::$t::INFINITY);
        impl_op!(Max, $t, $p, |a, b| a.max(b), half::$t::NEG_INFINITY);
    )*};
}

use half::{bf16, f16};
half_ops!(f16 => F16, bf16 => BF16);

int_ops!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64);
float_ops!(f32 => F32, f64 => F64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitwise_on_float_is_an_error() {
        let err = BuiltinOp::Xor.spec(PrimType::F32).unwrap_err();
        assert_eq!(
            err.to_string(),
            "built-in op `xor` is not defined on `f32`: bitwise operators are defined on integer types only"
        );
    }

    #[test]
    fn half_builtins_are_add_min_max() {
        for ty in [PrimType::F16, PrimType::BF16] {
            let ops: Vec<BuiltinOp> = BuiltinOp::ALL
                .into_iter()
                .filter(|o| o.supports(ty))
                .collect();
            assert_eq!(ops, [BuiltinOp::Add, BuiltinOp::Min, BuiltinOp::Max]);
        }
        assert!(BuiltinOp::Mul
            .spec(PrimType::F16)
            .unwrap_err()
            .to_string()
            .contains("`add`, `min` and `max`"));
        assert_eq!(
            BuiltinOp::Add.spec(PrimType::F16).unwrap().identity_body,
            "return rs_from_bits<f16>((u16)0x8000u);"
        );
        assert_eq!(
            BuiltinOp::Max.spec(PrimType::BF16).unwrap().identity_body,
            "return rs_from_bits<bf16>((u16)0xff80u);"
        );
        assert_eq!(
            <Max<f16> as ScanOp>::device_op(),
            BuiltinOp::Max.spec(PrimType::F16).unwrap()
        );
    }

    #[test]
    fn half_max_min_ignore_nan_and_add_rounds_through_f32() {
        let nan = f16::NAN;
        let one = f16::ONE;
        assert_eq!(<Max<f16> as ScanOp>::combine(nan, one), one);
        assert_eq!(<Max<f16> as ScanOp>::combine(one, nan), one);
        assert_eq!(
            <Min<bf16> as ScanOp>::combine(bf16::NAN, bf16::ONE),
            bf16::ONE
        );
        // 2048 + 1 is not an f16: the f32 sum 2049 rounds to even, 2048.
        let big = f16::from_f32(2048.0);
        assert_eq!(<Add<f16> as ScanOp>::combine(big, one), big);
        assert_eq!(
            <Add<bf16> as ScanOp>::combine(bf16::NEG_ZERO, <Add<bf16>>::identity()).to_bits(),
            0x8000
        );
    }

    #[test]
    fn identities_are_exact() {
        assert!(BuiltinOp::Max
            .spec(PrimType::F32)
            .unwrap()
            .identity_body
            .contains("0xff800000"));
        assert_eq!(
            BuiltinOp::Max.spec(PrimType::I32).unwrap().identity_body,
            "return (i32)(-2147483647 - 1);"
        );
        assert_eq!(
            <Add<f32> as ScanOp>::combine(-0.0, <Add<f32>>::identity()).to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(<Max<i32> as ScanOp>::identity(), i32::MIN);
    }

    /// Trying every pair of bytes finds each 1-byte built-in's own word form, and none for
    /// operators that are not one.
    #[test]
    fn byte_word_forms_are_found_by_trying_every_pair() {
        for (ty, forms) in [
            (
                PrimType::U8,
                [
                    WordForm::of_byte_scan_op::<Add<u8>>(),
                    WordForm::of_byte_scan_op::<Mul<u8>>(),
                    WordForm::of_byte_scan_op::<And<u8>>(),
                    WordForm::of_byte_scan_op::<Or<u8>>(),
                    WordForm::of_byte_scan_op::<Xor<u8>>(),
                    WordForm::of_byte_scan_op::<Max<u8>>(),
                    WordForm::of_byte_scan_op::<Min<u8>>(),
                ],
            ),
            (
                PrimType::I8,
                [
                    WordForm::of_byte_scan_op::<Add<i8>>(),
                    WordForm::of_byte_scan_op::<Mul<i8>>(),
                    WordForm::of_byte_scan_op::<And<i8>>(),
                    WordForm::of_byte_scan_op::<Or<i8>>(),
                    WordForm::of_byte_scan_op::<Xor<i8>>(),
                    WordForm::of_byte_scan_op::<Max<i8>>(),
                    WordForm::of_byte_scan_op::<Min<i8>>(),
                ],
            ),
        ] {
            let want: Vec<Option<WordForm>> = WordForm::INTEGER.into_iter().map(Some).collect();
            assert_eq!(forms.to_vec(), want, "{ty:?}");
            // The built-ins' specs say the same forms.
            let ops = [
                BuiltinOp::Add,
                BuiltinOp::Mul,
                BuiltinOp::And,
                BuiltinOp::Or,
                BuiltinOp::Xor,
                BuiltinOp::Max,
                BuiltinOp::Min,
            ];
            let said: Vec<Option<WordForm>> = ops
                .iter()
                .map(|op| op.spec(ty).unwrap().word_form)
                .collect();
            assert_eq!(said, want, "{ty:?}");
        }
        // Products with a sum's identity.
        assert_eq!(
            WordForm::of_byte_op(PrimType::U8, 0, |a, b| a.wrapping_mul(b)),
            None
        );
        // u8's max is not i8's: the order differs.
        assert_eq!(WordForm::of_byte_op(PrimType::I8, 0, |a, b| a.max(b)), None);
        // Right combine, wrong identity.
        assert_eq!(
            WordForm::of_byte_op(PrimType::U8, 1, |a, b| a.wrapping_add(b)),
            None
        );
        // Not commutative: the later operand.
        assert_eq!(WordForm::of_byte_op(PrimType::U8, 0, |_, b| b), None);
        // Wider types are never tried.
        assert_eq!(
            WordForm::of_byte_op(PrimType::U16, 0, |a, b| a.wrapping_add(b)),
            None
        );
    }

    #[test]
    fn every_supported_pair_has_a_typed_spec() {
        let n: usize = BuiltinOp::ALL.iter().map(|o| o.types().len()).sum();
        assert_eq!(n, 7 * 8 + 4 * 2 + 3 * 2);
        assert_eq!(
            <Min<u16> as ScanOp>::device_op(),
            BuiltinOp::Min.spec(PrimType::U16).unwrap()
        );
    }
}
