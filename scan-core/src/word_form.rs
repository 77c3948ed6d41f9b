//! The standard integer monoids an operator may be ([`WordForm`], `OpSpec::word_form`), and the
//! proof that a 1-byte operator is one.

use crate::builtin::{Add, And, Max, Min, Mul, Or, Xor};
use crate::element::{PrimType, ScanElement};
use crate::op::ScanOp;
use crate::spec::ElementType;

/// A standard monoid on a packed element's lanes (`OpSpec::word_form`): combine and identity
/// are exactly the built-in's of that name, for the element's type and signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WordForm {
    /// IEEE addition of `f16` or `bf16`, rounded to nearest even once, as `half`'s `a + b`;
    /// identity -0.0. (`half` adds in f32 and rounds the sum to 16 bits: the f32 sum of two
    /// 16-bit floats rounded again is the sum rounded once, since f32's 24 significand bits
    /// are at least twice f16's 11, plus 2 (Figueroa's double-rounding bound; bf16 has 8). NaN
    /// payloads may differ, as they do between f32 adds on different hardware.)
    HalfAdd,
    /// `a.wrapping_add(b)`, identity 0.
    WrappingAdd,
    /// `a.wrapping_mul(b)`, identity 1.
    WrappingMul,
    /// `a & b`, identity all ones.
    And,
    /// `a | b`, identity 0.
    Or,
    /// `a ^ b`, identity 0.
    Xor,
    /// The larger, identity the type's smallest value.
    Max,
    /// The smaller, identity the type's largest value.
    Min,
    /// `half`'s `max` of `f16` or `bf16` (`if a.is_nan() || b > a { b } else { a }`), identity
    /// -infinity. A word instruction (`max.f16x2`) agrees with it wherever the two operands are
    /// not two zeros (`half` keeps the first, the instruction +0.0) or two NaNs (`half` keeps
    /// the second's bits, the instruction a canonical NaN). The tiles take the word path only
    /// where the values around say that no such pair can meet, and combine item by item
    /// otherwise (scan-codegen's tile_words.cu.tera, "guarded").
    HalfMax,
    /// `half`'s `min`, identity +infinity; as [`WordForm::HalfMax`].
    HalfMin,
}

impl WordForm {
    /// Every integer form, in declaration order (those a byte operator may be proven to be).
    pub const INTEGER: [WordForm; 7] = [
        WordForm::WrappingAdd,
        WordForm::WrappingMul,
        WordForm::And,
        WordForm::Or,
        WordForm::Xor,
        WordForm::Max,
        WordForm::Min,
    ];

    /// Whether the form combines 16-bit float lanes (`f16` or `bf16`): the half forms.
    pub fn is_half_float(self) -> bool {
        matches!(
            self,
            WordForm::HalfAdd | WordForm::HalfMax | WordForm::HalfMin
        )
    }

    /// The lowercase name, as the generated code's comments and template conditions say it.
    pub fn name(self) -> &'static str {
        match self {
            WordForm::HalfAdd => "half_add",
            WordForm::WrappingAdd => "add",
            WordForm::WrappingMul => "mul",
            WordForm::And => "and",
            WordForm::Or => "or",
            WordForm::Xor => "xor",
            WordForm::Max => "max",
            WordForm::Min => "min",
            WordForm::HalfMax => "half_max",
            WordForm::HalfMin => "half_min",
        }
    }

    /// The form a 1-byte integer operator (`ty` is `u8` or `i8`) is, found by trying every pair
    /// of operands: an operator whose identity is a form's and whose combine agrees with the
    /// form's built-in on all 65536 pairs is that form, which makes this a proof, not a guess.
    /// `None` for other types and for an operator that is none of them.
    pub fn of_byte_op(
        ty: PrimType,
        identity: u8,
        combine: impl Fn(u8, u8) -> u8,
    ) -> Option<WordForm> {
        let signed = match ty {
            PrimType::U8 => false,
            PrimType::I8 => true,
            _ => return None,
        };
        WordForm::INTEGER.into_iter().find(|&form| {
            let (form_identity, form_combine) = if signed {
                on_bytes::<i8>(form)
            } else {
                on_bytes::<u8>(form)
            };
            form_identity == identity
                && (0..=255u8).all(|a| (0..=255u8).all(|b| combine(a, b) == form_combine(a, b)))
        })
    }

    /// [`WordForm::of_byte_op`] of `Op`'s own identity and combine, where its element is `u8`
    /// or `i8` (by its `ScanElement` impl); `None` for any other element.
    pub fn of_byte_scan_op<Op: ScanOp>() -> Option<WordForm> {
        let ElementType::Prim(ty @ (PrimType::U8 | PrimType::I8)) = Op::Elem::element_type() else {
            return None;
        };
        if std::mem::size_of::<Op::Elem>() != 1 {
            return None;
        }
        // SAFETY: the element is u8 or i8 by its (unsafe) ScanElement impl: one byte, of which
        // every bit pattern is a value.
        let elem = |b: u8| unsafe { std::mem::transmute_copy::<u8, Op::Elem>(&b) };
        let bits = |e: Op::Elem| unsafe { std::mem::transmute_copy::<Op::Elem, u8>(&e) };
        WordForm::of_byte_op(ty, bits(Op::identity()), |a, b| {
            bits(Op::combine(elem(a), elem(b)))
        })
    }
}

/// A byte type's value as bits and back.
trait ByteBits: Copy {
    fn from_bits(b: u8) -> Self;
    fn to_bits(self) -> u8;
}

impl ByteBits for u8 {
    fn from_bits(b: u8) -> u8 {
        b
    }
    fn to_bits(self) -> u8 {
        self
    }
}

impl ByteBits for i8 {
    fn from_bits(b: u8) -> i8 {
        b as i8
    }
    fn to_bits(self) -> u8 {
        self as u8
    }
}

/// `form`'s built-in on bytes of type `T`: its identity and combine, as bits.
fn on_bytes<T: ByteBits>(form: WordForm) -> (u8, fn(u8, u8) -> u8)
where
    Add<T>: ScanOp<Elem = T>,
    Mul<T>: ScanOp<Elem = T>,
    And<T>: ScanOp<Elem = T>,
    Or<T>: ScanOp<Elem = T>,
    Xor<T>: ScanOp<Elem = T>,
    Max<T>: ScanOp<Elem = T>,
    Min<T>: ScanOp<Elem = T>,
{
    fn bits<Op: ScanOp>() -> (u8, fn(u8, u8) -> u8)
    where
        Op::Elem: ByteBits,
    {
        (Op::identity().to_bits(), |a, b| {
            Op::combine(ByteBits::from_bits(a), ByteBits::from_bits(b)).to_bits()
        })
    }
    match form {
        WordForm::HalfAdd | WordForm::HalfMax | WordForm::HalfMin => {
            unreachable!("bytes are integers: only WordForm::INTEGER is tried")
        }
        WordForm::WrappingAdd => bits::<Add<T>>(),
        WordForm::WrappingMul => bits::<Mul<T>>(),
        WordForm::And => bits::<And<T>>(),
        WordForm::Or => bits::<Or<T>>(),
        WordForm::Xor => bits::<Xor<T>>(),
        WordForm::Max => bits::<Max<T>>(),
        WordForm::Min => bits::<Min<T>>(),
    }
}
