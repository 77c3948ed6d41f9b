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
}

#[derive(Debug)]
pub(crate) struct Method {
    pub name: &'static str,
    pub helper: &'static str,
    pub args: &'static [ArgTy],
    pub ret: Ret,
}

const fn m(name: &'static str, helper: &'static str, args: &'static [ArgTy], ret: Ret) -> Method {
    Method {
        name,
        helper,
        args,
        ret,
    }
}

use ArgTy::{Same, I32, U32};

pub(crate) static METHODS: &[Method] = &[
    m("min", "rs_min", &[Same], Ret::Same),
    m("max", "rs_max", &[Same], Ret::Same),
    m("clamp", "rs_clamp", &[Same, Same], Ret::Same),
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
    m("is_nan", "rs_is_nan", &[], Ret::Bool),
    m("is_finite", "rs_is_finite", &[], Ret::Bool),
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
