//! Whole-word combines of packed sub-word items: which kernels fold and scan a thread's packed
//! items a 32-bit word at a time (scan-codegen/templates/tile_words.cu.tera) instead of item by
//! item.
//!
//! A packed u8 tile otherwise unpacks every item twice (to fold, then to scan) and packs it back:
//! about 15 integer instructions per word of four items, where the word instructions take one
//! `dp4a` per word to fold and seven instructions to scan.

use crate::layout;
use crate::TuningPolicy;
use scan_core::{ElementType, OpSpec, PrimType, WordForm};

/// What tile_words.cu.tera needs to know about an operator's word form.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub(crate) struct WordCombine {
    /// [`WordForm::name`].
    pub form: &'static str,
    /// Bits per item: 8 or 16.
    pub lane_bits: u32,
    /// Whether the element is a signed integer (max and min compare lanes as signed).
    pub signed: bool,
    /// The identity in every lane of a word: what a word shifted by lanes is filled with.
    pub identity_word: String,
    /// 1-byte max and min: a word's bytes are compared as two words of 16-bit lanes (its even
    /// and its odd bytes, widened), there being no instruction on 8-bit lanes.
    pub split_bytes: bool,
    /// Max and min: sm_90's PTX instruction on two words of 16-bit lanes (`max.s16x2`), and
    /// the CUDA intrinsic older archs emulate it with (`__vmaxs2`); half max and min: sm_80's
    /// (`max.f16x2`, `min.bf16x2`), no intrinsic. Empty for other forms.
    pub lanes_instruction: String,
    /// See `lanes_instruction`.
    pub lanes_intrinsic: String,
    /// Half-float forms: the lanes' type in PTX (`f16` or `bf16`); empty for integer forms.
    pub float_type: &'static str,
    /// Half max and min ([`WordForm::HalfMax`]): the word instruction agrees with the operator
    /// except where two zeros or two NaNs meet, so the tile takes the word path only where the
    /// values say that cannot happen, and its item-by-item functions otherwise.
    pub guarded: bool,
    /// Guarded forms: the bits of +infinity, the largest magnitude that is not a NaN.
    pub infinity_bits: String,
}

/// The word combine of `op` over packed items of `policy`'s tile, if the tile takes one: an
/// operator that says it is a standard monoid ([`OpSpec::word_form`]) over 1- or 2-byte
/// integers or (sums) 16-bit floats, items packed in whole words, and each of a thread's runs
/// whole words. Segmented,
/// column and fused tiles combine lifted values item by item (their callers pass `false` for
/// `plain_tile`).
///
/// Max and min compare 16-bit lanes (sm_90's `max.u16x2` and kin); 1-byte items are split into
/// two words of them.
pub(crate) fn word_combine(
    op: &OpSpec,
    policy: &TuningPolicy,
    plain_tile: bool,
) -> Option<WordCombine> {
    let form = op.word_form?;
    let ElementType::Prim(ty) = &op.element else {
        return None;
    };
    let size = ty.size();
    let float_type = match ty {
        PrimType::F16 if form.is_half_float() => "f16",
        PrimType::BF16 if form.is_half_float() => "bf16",
        _ if form.is_half_float() || ty.is_float() => return None,
        _ => "",
    };
    if !plain_tile || !layout::packs_items(size, policy.items_per_thread) {
        return None;
    }
    let per_word = layout::items_per_register(size) as u32;
    let runs = policy.thread_runs.max(1);
    if !(policy.items_per_thread / runs).is_multiple_of(per_word) {
        return None;
    }
    let lane_bits = 8 * size as u32;
    let lane = lane_identity(form, *ty, lane_bits);
    let identity_word = if lane_bits == 8 {
        lane * 0x0101_0101
    } else {
        lane * 0x0001_0001
    };
    let signed = ty.is_signed_int();
    let (lanes_instruction, lanes_intrinsic) = match form {
        WordForm::Max | WordForm::Min => (
            format!("{}.{}16x2", form.name(), if signed { 's' } else { 'u' }),
            format!("__v{}{}2", form.name(), if signed { 's' } else { 'u' }),
        ),
        // sm_80 has both (bf16 included); older archs combine lane by lane.
        WordForm::HalfMax | WordForm::HalfMin => (
            format!("{}.{float_type}x2", form.name().trim_start_matches("half_")),
            String::new(),
        ),
        _ => (String::new(), String::new()),
    };
    let guarded = matches!(form, WordForm::HalfMax | WordForm::HalfMin);
    Some(WordCombine {
        form: form.name(),
        lane_bits,
        signed,
        identity_word: format!("0x{identity_word:08x}u"),
        split_bytes: matches!(form, WordForm::Max | WordForm::Min) && lane_bits == 8,
        lanes_instruction,
        lanes_intrinsic,
        float_type,
        guarded,
        infinity_bits: if guarded {
            format!("0x{:04x}u", half_infinity(*ty))
        } else {
            String::new()
        },
    })
}

/// The identity of `form` on `ty` as the bits of one lane.
fn lane_identity(form: WordForm, ty: PrimType, lane_bits: u32) -> u32 {
    let ones = (1u32 << lane_bits) - 1;
    let sign = 1u32 << (lane_bits - 1);
    match form {
        // -0.0: x + -0.0 is x for every x, +0.0 included.
        WordForm::HalfAdd => sign,
        WordForm::WrappingAdd | WordForm::Or | WordForm::Xor => 0,
        WordForm::WrappingMul => 1,
        WordForm::And => ones,
        WordForm::Max if ty.is_signed_int() => sign,
        WordForm::Max => 0,
        WordForm::Min if ty.is_signed_int() => sign - 1,
        WordForm::Min => ones,
        WordForm::HalfMax => sign | half_infinity(ty),
        WordForm::HalfMin => half_infinity(ty),
    }
}

/// The bits of +infinity of a 16-bit float (half forms only take f16 and bf16: `word_combine`).
fn half_infinity(ty: PrimType) -> u32 {
    ty.half_infinity_bits().map_or(0, u32::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_core::BuiltinOp;

    fn combine(op: BuiltinOp, ty: PrimType, items: u32, runs: u32) -> Option<WordCombine> {
        let policy = TuningPolicy {
            thread_runs: runs,
            ..TuningPolicy::new(128, items)
        };
        word_combine(&op.spec(ty).unwrap(), &policy, true)
    }

    #[test]
    fn identities_fill_every_lane() {
        let id = |op, ty| combine(op, ty, 64, 1).unwrap().identity_word;
        assert_eq!(id(BuiltinOp::Add, PrimType::U8), "0x00000000u");
        assert_eq!(id(BuiltinOp::And, PrimType::I8), "0xffffffffu");
        assert_eq!(id(BuiltinOp::Max, PrimType::I16), "0x80008000u");
        assert_eq!(id(BuiltinOp::Min, PrimType::I16), "0x7fff7fffu");
        assert_eq!(id(BuiltinOp::Min, PrimType::U16), "0xffffffffu");
        assert_eq!(id(BuiltinOp::Max, PrimType::U16), "0x00000000u");
    }

    #[test]
    fn only_packed_integer_monoids_in_runs_of_whole_words() {
        assert!(combine(BuiltinOp::Add, PrimType::U8, 256, 4).is_some());
        assert!(combine(BuiltinOp::Xor, PrimType::U16, 128, 4).is_some());
        // Runs of 6 bytes end mid-word.
        assert!(combine(BuiltinOp::Add, PrimType::U8, 24, 4).is_none());
        let mul = combine(BuiltinOp::Mul, PrimType::I8, 256, 4).unwrap();
        assert_eq!(
            (mul.form, mul.identity_word.as_str()),
            ("mul", "0x01010101u")
        );
        assert_eq!(
            combine(BuiltinOp::Mul, PrimType::U16, 128, 4)
                .unwrap()
                .identity_word,
            "0x00010001u"
        );
        assert!(
            combine(BuiltinOp::Max, PrimType::U8, 256, 4)
                .unwrap()
                .split_bytes
        );
        assert!(
            !combine(BuiltinOp::Min, PrimType::I16, 128, 4)
                .unwrap()
                .split_bytes
        );
        assert!(
            !combine(BuiltinOp::Add, PrimType::I8, 256, 4)
                .unwrap()
                .split_bytes
        );
        // Half-float sums fold and scan 16-bit float lanes; their max and min too, guarded.
        let half = combine(BuiltinOp::Add, PrimType::F16, 128, 4).unwrap();
        assert!(!half.guarded);
        assert_eq!((half.form, half.float_type), ("half_add", "f16"));
        assert_eq!(half.identity_word, "0x80008000u");
        assert_eq!(
            combine(BuiltinOp::Add, PrimType::BF16, 128, 4)
                .unwrap()
                .float_type,
            "bf16"
        );
        let max = combine(BuiltinOp::Max, PrimType::F16, 128, 4).unwrap();
        assert_eq!(
            (max.form, max.guarded, max.lanes_instruction.as_str()),
            ("half_max", true, "max.f16x2")
        );
        assert_eq!(
            (max.identity_word.as_str(), max.infinity_bits.as_str()),
            ("0xfc00fc00u", "0x7c00u")
        );
        let min = combine(BuiltinOp::Min, PrimType::BF16, 128, 4).unwrap();
        assert_eq!(
            (min.identity_word.as_str(), min.infinity_bits.as_str()),
            ("0x7f807f80u", "0x7f80u")
        );
        assert_eq!(min.lanes_instruction, "min.bf16x2");
        assert!(combine(BuiltinOp::Add, PrimType::F32, 64, 1).is_none());
        assert!(combine(BuiltinOp::Add, PrimType::I32, 64, 1).is_none());
        // One item per thread: not packed.
        assert!(combine(BuiltinOp::Add, PrimType::U8, 1, 1).is_none());
        let policy = TuningPolicy::new(128, 64);
        let add = BuiltinOp::Add.spec(PrimType::U8).unwrap();
        assert!(word_combine(&add, &policy, false).is_none());
    }
}
