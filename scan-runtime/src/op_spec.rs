//! The operator as code generation gets it: `ScanOp::device_op`, and what running its Rust side
//! proves about it.

use scan_core::{OpSpec, ScanElement, ScanOp, WordForm};

/// `Op::device_op()`, with its word form found where the operator does not say one: a 1-byte
/// integer operator whose Rust identity and combine are exactly a standard monoid's on all 65536
/// pairs ([`WordForm::of_byte_scan_op`]) is that monoid, so its packed tiles fold and scan whole
/// words as the built-ins' do (a user's `a.wrapping_add(b)` over `u8` runs as `Add<u8>`).
pub(crate) fn device_op_of<Op: ScanOp>() -> OpSpec {
    let mut op = Op::device_op();
    if op.word_form.is_none() && op.element == Op::Elem::element_type() {
        op.word_form = WordForm::of_byte_scan_op::<Op>();
    }
    op
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_core::builtin::{Add, Mul, Xor};

    /// A hand-written byte xor that does not say its word form.
    struct PlainXor;

    impl ScanOp for PlainXor {
        type Elem = u8;
        fn identity() -> u8 {
            0
        }
        fn combine(a: u8, b: u8) -> u8 {
            a ^ b
        }
        fn device_op() -> OpSpec {
            OpSpec {
                word_form: None,
                ..Xor::<u8>::device_op()
            }
        }
    }

    #[test]
    fn byte_operators_get_the_word_form_they_are() {
        assert_eq!(device_op_of::<PlainXor>().word_form, Some(WordForm::Xor));
        assert_eq!(
            device_op_of::<Add<u8>>().word_form,
            Some(WordForm::WrappingAdd)
        );
        assert_eq!(
            device_op_of::<Mul<u8>>().word_form,
            Some(WordForm::WrappingMul)
        );
        assert_eq!(
            device_op_of::<Add<u16>>().word_form,
            Some(WordForm::WrappingAdd)
        );
    }
}
