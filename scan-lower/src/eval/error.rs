//! What can go wrong while evaluating an operator on the CPU.

use std::fmt;

/// An evaluation failure. The lowering has already accepted the operator, so these are
/// either bad input (bytes of the wrong size) or something the language allows that the
/// evaluator cannot finish (an endless `while`), never a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// A buffer of elements is not the size it must be (an element's bytes, or an output as long
    /// as its input).
    WrongSize {
        /// The number of bytes expected (whole elements).
        expected: usize,
        /// The number of bytes given.
        got: usize,
    },
    /// Not one array of values per input of `lift`.
    InputArrays {
        /// The arrays `lift` takes (1 without a `lift`).
        expected: usize,
        /// The arrays given.
        got: usize,
    },
    /// A `while`/`loop` ran past the step limit (an operator that never ends would hang a
    /// scan; the GPU would hang too).
    StepLimit {
        /// The 1-based source line of the loop (0 when unknown).
        line: usize,
        /// The limit that was passed.
        limit: u64,
    },
    /// An index past the end of an array (the lowering proves constant and loop indices in
    /// bounds where it knows the length; this catches the rest instead of panicking).
    IndexOutOfBounds {
        /// The 1-based source line of the indexing (0 when unknown).
        line: usize,
        /// The index, as evaluated (negative ones included).
        index: i128,
        /// The array's length.
        len: usize,
    },
    /// The IR holds something the evaluator does not handle, or values of types that do not
    /// fit together: a bug of the evaluator or the lowering, reported instead of guessed.
    Unsupported {
        /// The 1-based source line (0 when unknown).
        line: usize,
        /// What could not be evaluated.
        what: String,
    },
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::WrongSize { expected, got } => {
                write!(f, "expected {expected} bytes (whole elements), got {got}")
            }
            EvalError::InputArrays { expected, got } => write!(
                f,
                "the operator's `lift` reads {expected} input array(s), {got} given"
            ),
            EvalError::StepLimit { line, limit } => write!(
                f,
                "line {line}: a loop ran more than {limit} iterations in one combine; the operator does not finish"
            ),
            EvalError::IndexOutOfBounds { line, index, len } => write!(
                f,
                "line {line}: index {index} is out of bounds of an array of {len}"
            ),
            EvalError::Unsupported { line, what } => {
                write!(f, "line {line}: the CPU evaluator cannot evaluate {what}")
            }
        }
    }
}

impl std::error::Error for EvalError {}

/// The 1-based line of a span (0 when the span has no location).
pub(crate) fn line_of(span: proc_macro2::Span) -> usize {
    span.start().line
}

pub(crate) fn unsupported(span: proc_macro2::Span, what: impl Into<String>) -> EvalError {
    EvalError::Unsupported {
        line: line_of(span),
        what: what.into(),
    }
}
