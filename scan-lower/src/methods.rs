//! The methods and functions that lower to CUDA, and the helper each calls.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArgTy {
    /// Same type as the receiver.
    Same,
    /// `i32` (the exponent of `powi`).
    I32,
    /// `u32` (rotate amounts, `wrapping_shl`).
    U32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ret {
    Same,
    U32,
    Bool,
    /// `to_f32` of the 2-byte floats (exact).
    F32,
    /// `to_f64` (exact).
    F64,
    /// `to_bits` of the 2-byte floats.
    U16,
}

/// Which receivers a method is defined on: the `half` types have their own, smaller set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum On {
    /// The primitives (the lowering leaves wrong ones to rustc and C++).
    Prims,
    /// The primitives and `f16`/`bf16`.
    PrimsAndHalf,
    /// `f16`/`bf16` only.
    Half,
    /// An associated function of `f16`/`bf16` building one from the argument's type
    /// (`f16::from_f32(x)`: the "receiver" is the argument).
    HalfFrom(PrimType),
}

#[derive(Debug)]
pub(crate) struct Method {
    pub name: &'static str,
    pub helper: &'static str,
    pub args: &'static [ArgTy],
    pub ret: Ret,
    pub on: On,
}

const fn m(name: &'static str, helper: &'static str, args: &'static [ArgTy], ret: Ret) -> Method {
    Method {
        name,
        helper,
        args,
        ret,
        on: On::Prims,
    }
}

/// A method `half::f16`/`half::bf16` have too, with the same meaning.
const fn mh(name: &'static str, helper: &'static str, args: &'static [ArgTy], ret: Ret) -> Method {
    Method {
        on: On::PrimsAndHalf,
        ..m(name, helper, args, ret)
    }
}

/// A method of `f16`/`bf16` only.
const fn h(name: &'static str, helper: &'static str, ret: Ret) -> Method {
    Method {
        on: On::Half,
        ..m(name, helper, &[], ret)
    }
}

/// `f16::from_f32(x)`-style constructors.
const fn from(name: &'static str, helper: &'static str, arg: PrimType) -> Method {
    Method {
        on: On::HalfFrom(arg),
        ..m(name, helper, &[], Ret::Same)
    }
}

impl Method {
    /// Whether the method exists on a receiver of type `p` (`None`: not known here).
    pub(crate) fn accepts(&self, p: PrimType) -> bool {
        match self.on {
            On::Prims => !p.is_half(),
            On::PrimsAndHalf => true,
            On::Half => p.is_half(),
            On::HalfFrom(_) => false,
        }
    }
}

/// The methods of `f16`/`bf16` that lower, for error messages.
pub(crate) fn half_list() -> String {
    METHODS
        .iter()
        .filter(|m| matches!(m.on, On::PrimsAndHalf | On::Half))
        .map(|m| format!("`{}`", m.name))
        .chain(
            METHODS
                .iter()
                .filter(|m| matches!(m.on, On::HalfFrom(_)))
                .map(|m| format!("`f16::{}`", m.name)),
        )
        .collect::<Vec<_>>()
        .join(", ")
}

use scan_core::PrimType;

use ArgTy::{Same, I32, U32};

pub(crate) static METHODS: &[Method] = &[
    mh("min", "rs_min", &[Same], Ret::Same),
    mh("max", "rs_max", &[Same], Ret::Same),
    mh("clamp", "rs_clamp", &[Same, Same], Ret::Same),
    m("abs", "rs_abs", &[], Ret::Same),
    m("mul_add", "rs_mul_add", &[Same, Same], Ret::Same),
    m("sqrt", "rs_sqrt", &[], Ret::Same),
    m("cbrt", "rs_cbrt", &[], Ret::Same),
    m("exp", "rs_exp", &[], Ret::Same),
    m("exp2", "rs_exp2", &[], Ret::Same),
    m("ln", "rs_ln", &[], Ret::Same),
    m("log2", "rs_log2", &[], Ret::Same),
    m("log10", "rs_log10", &[], Ret::Same),
    m("powi", "rs_powi", &[I32], Ret::Same),
    m("powf", "rs_powf", &[Same], Ret::Same),
    m("floor", "rs_floor", &[], Ret::Same),
    m("ceil", "rs_ceil", &[], Ret::Same),
    m("round", "rs_round", &[], Ret::Same),
    m("trunc", "rs_trunc", &[], Ret::Same),
    m("sin", "rs_sin", &[], Ret::Same),
    m("cos", "rs_cos", &[], Ret::Same),
    m("tan", "rs_tan", &[], Ret::Same),
    m("tanh", "rs_tanh", &[], Ret::Same),
    mh("is_nan", "rs_is_nan", &[], Ret::Bool),
    mh("is_finite", "rs_is_finite", &[], Ret::Bool),
    mh("is_infinite", "rs_is_infinite", &[], Ret::Bool),
    h("is_sign_negative", "rs_is_sign_negative", Ret::Bool),
    h("is_sign_positive", "rs_is_sign_positive", Ret::Bool),
    h("to_f32", "rs_to_f32", Ret::F32),
    h("to_f64", "rs_to_f64", Ret::F64),
    h("to_bits", "rs_to_bits", Ret::U16),
    from("from_f32", "rs_from_f32", PrimType::F32),
    from("from_bits", "rs_from_bits", PrimType::U16),
    m("wrapping_add", "rs_wrapping_add", &[Same], Ret::Same),
    m("wrapping_sub", "rs_wrapping_sub", &[Same], Ret::Same),
    m("wrapping_mul", "rs_wrapping_mul", &[Same], Ret::Same),
    m("wrapping_div", "rs_wrapping_div", &[Same], Ret::Same),
    m("wrapping_rem", "rs_wrapping_rem", &[Same], Ret::Same),
    m("wrapping_neg", "rs_wrapping_neg", &[], Ret::Same),
    m("wrapping_abs", "rs_wrapping_abs", &[], Ret::Same),
    m("wrapping_shl", "rs_wrapping_shl", &[U32], Ret::Same),
    m("wrapping_shr", "rs_wrapping_shr", &[U32], Ret::Same),
    m("saturating_add", "rs_saturating_add", &[Same], Ret::Same),
    m("saturating_sub", "rs_saturating_sub", &[Same], Ret::Same),
    m("saturating_mul", "rs_saturating_mul", &[Same], Ret::Same),
    m("rotate_left", "rs_rotate_left", &[U32], Ret::Same),
    m("rotate_right", "rs_rotate_right", &[U32], Ret::Same),
    m("count_ones", "rs_count_ones", &[], Ret::U32),
    m("count_zeros", "rs_count_zeros", &[], Ret::U32),
    m("leading_zeros", "rs_leading_zeros", &[], Ret::U32),
    m("trailing_zeros", "rs_trailing_zeros", &[], Ret::U32),
];

pub(crate) fn find(name: &str) -> Option<&'static Method> {
    METHODS.iter().find(|m| m.name == name)
}

/// "`min`, `max`, ..." for error messages.
pub(crate) fn list() -> String {
    METHODS
        .iter()
        .map(|m| format!("`{}`", m.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The function-call forms, for error messages.
pub(crate) fn call_list() -> String {
    "`f32::max(a, b)`-style calls of the supported methods on a primitive type (`i64::wrapping_add(a, b)`, `f64::sqrt(x)`, ...), and `std::cmp::min`/`std::cmp::max`".to_string()
}
