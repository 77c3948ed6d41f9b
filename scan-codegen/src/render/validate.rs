//! The checks an operator and a fused transform pass before any template is rendered: names
//! that are C identifiers, distinct operands, at most [`MAX_TRANSFORM_INPUTS`] input arrays.

use super::*;

pub(super) fn is_c_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

pub(super) fn validate_op(op: &OpSpec) -> Result<(), CodegenError> {
    let bad = |m: String| Err(CodegenError::InvalidOp(m));
    for (what, name) in [
        ("operator name", op.name.as_str()),
        ("lhs parameter", &op.lhs),
        ("rhs parameter", &op.rhs),
    ] {
        if name.is_empty() || name.contains(['\n', '\r']) {
            return bad(format!("{what} `{name}` must be a non-empty single line"));
        }
    }
    for (what, name) in [("lhs parameter", &op.lhs), ("rhs parameter", &op.rhs)] {
        if !is_c_identifier(name) {
            return bad(format!("{what} `{name}` is not a C identifier"));
        }
    }
    if op.lhs == op.rhs {
        return bad(format!(
            "lhs and rhs parameters are both named `{}`",
            op.lhs
        ));
    }
    if let ElementType::Struct(s) = &op.element {
        if !is_c_identifier(&s.name) {
            return bad(format!("struct name `{}` is not a C identifier", s.name));
        }
        if s.fields.is_empty() {
            return bad(format!("struct `{}` has no fields", s.name));
        }
        for f in &s.fields {
            if !is_c_identifier(&f.name) {
                return bad(format!(
                    "field `{}` of `{}` is not a C identifier",
                    f.name, s.name
                ));
            }
        }
        if s.align == 0 || !s.align.is_power_of_two() || s.size % s.align != 0 {
            return bad(format!(
                "struct `{}` has an impossible layout (size {}, align {})",
                s.name, s.size, s.align
            ));
        }
    }
    Ok(())
}

/// Most input arrays a fused transform may read (kernel parameters, one register each).
pub const MAX_TRANSFORM_INPUTS: usize = 8;

pub(super) fn validate_transform(
    op: &OpSpec,
    t: &TransformSpec,
    variant: ScanVariant,
) -> Result<(), CodegenError> {
    let bad = |m: String| Err(CodegenError::InvalidOp(m));
    if t.inputs.is_empty() || t.inputs.len() > MAX_TRANSFORM_INPUTS {
        return bad(format!(
            "a fused lift reads 1 to {MAX_TRANSFORM_INPUTS} input arrays, not {}",
            t.inputs.len()
        ));
    }
    if t.lift_params.len() != t.inputs.len() + 1 {
        return bad(format!(
            "lift has {} parameters for {} inputs and the index",
            t.lift_params.len(),
            t.inputs.len()
        ));
    }
    let mut names: Vec<&str> = Vec::new();
    for name in t.lift_params.iter().chain([&t.project_param]) {
        if !is_c_identifier(name) {
            return bad(format!(
                "transform parameter `{name}` is not a C identifier"
            ));
        }
    }
    for name in &t.lift_params {
        if names.contains(&name.as_str()) {
            return bad(format!("lift has two parameters named `{name}`"));
        }
        names.push(name);
    }
    // Input and output arrays hold primitives or the element itself: those are the types the
    // generated source declares.
    for (what, ty) in t
        .inputs
        .iter()
        .map(|i| ("input", i))
        .chain([("output", &t.output)])
    {
        if matches!(ty, ElementType::Struct(_)) && *ty != op.element {
            return bad(format!(
                "a fused {what} array holds a primitive or the element `{}`, not `{}`",
                op.element.c_name(),
                ty.c_name()
            ));
        }
    }
    if variant.segments == Segments::Columns {
        return Err(CodegenError::InvalidVariant(
            "column scans cannot fuse lift and project yet: their kernel stages rows of a strip, not the tile loads the fused reads plug into".into(),
        ));
    }
    Ok(())
}
