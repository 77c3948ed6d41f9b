//! Rust identifiers as C++ identifiers.
//!
//! A Rust name is used unchanged in the generated CUDA unless C++ or the generated kernel
//! already means something by it; then one `_` is appended (`int` -> `int_`). The rules were
//! found by compiling each kind of name with NVRTC: keywords and macros break locals and
//! fields; struct names also collide with every global CUDA declares (`float4`, `size_t`,
//! `sqrt`, `min`, ...), which is why a struct name is kept only when it starts with an
//! uppercase letter, as Rust's naming convention has it.

/// C++ keywords (with the alternative operator tokens), literals that are keywords or macros,
/// the generated code's own type names and the CUDA built-in variables.
const RESERVED: &[&str] = &[
    // C++17/20 keywords
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "concept",
    "const",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "continue",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    // the 2-byte float structs of rust_semantics.cu.tera
    "f16",
    "bf16",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
    // macros NVRTC defines
    "NULL",
    // the generated code's type names (the prelude's typedefs, the element typedef)
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "f32",
    "f64",
    "T",
    "V",
    "main",
    // CUDA built-in variables
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    // the templates' own types and macros (templates/*.cu.tera)
    "ScanBlockStorage",
    "ScanPolledStatus",
    "ScanTileState",
    "ScanTileStorage",
    "ScanWords",
    "ScanValueWords",
    "ScanSegmented",
    "ScanSegments",
    "ScanLayout",
    "ScanLayoutOf",
    "ScanSpineLayout",
    "NUM_BANKS",
    "LOG_NUM_BANKS",
    "CONFLICT_FREE_OFFSET",
];

/// Prefixes the generated code uses for its own names (`rs_add`, `scan_combine`,
/// `SCAN_TILE_ITEMS`), and those C++ reserves for the implementation (`__device__`, `_Bool`).
fn reserved_prefix(name: &str) -> bool {
    let mut chars = name.chars();
    name.starts_with("rs_")
        || name.starts_with("scan_")
        || name.starts_with("SCAN_")
        || name.starts_with("__")
        || (chars.next() == Some('_') && chars.next().is_some_and(|c| c.is_ascii_uppercase()))
}

/// Whether a local or parameter named `name` would not compile or would change the meaning
/// of generated code (a keyword, a macro, a helper's name).
pub(crate) fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name) || reserved_prefix(name)
}

/// `r#type` -> `type`: C++ has no raw identifiers.
pub(crate) fn unraw(name: &str) -> &str {
    name.strip_prefix("r#").unwrap_or(name)
}

/// The C++ name of a struct field or a helper function. One-to-one: a name that already ends
/// in `_` gets another, so `int` (-> `int_`) and `int_` (-> `int__`) stay apart.
pub fn field_name(rust: &str) -> String {
    let rust = unraw(rust);
    if is_reserved(rust) || rust.ends_with('_') {
        format!("{rust}_")
    } else {
        rust.to_string()
    }
}

/// The C++ name of a struct: as a field's (C++ keywords and reserved names renamed), and also
/// renamed unless it starts with an uppercase letter, since a lowercase name may be any of
/// CUDA's global types and functions.
pub fn struct_name(rust: &str) -> String {
    let rust = unraw(rust);
    let upper = rust.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    if is_reserved(rust) || rust.ends_with('_') || !upper {
        format!("{rust}_")
    } else {
        rust.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_only_what_collides() {
        assert_eq!(field_name("value"), "value");
        assert_eq!(field_name("int"), "int_");
        assert_eq!(field_name("int_"), "int__");
        assert_eq!(field_name("r#type"), "type");
        assert_eq!(field_name("threadIdx"), "threadIdx_");
        assert_eq!(field_name("__x"), "__x_");
        assert_eq!(field_name("_Bool"), "_Bool_");
        assert_eq!(field_name("_private"), "_private");
        assert_eq!(struct_name("Affine"), "Affine");
        assert_eq!(struct_name("float4"), "float4_");
        assert_eq!(struct_name("T"), "T_");
        assert_eq!(struct_name("ScanTileState"), "ScanTileState_");
        assert!(is_reserved("SCAN_LAUNCH_BOUNDS"));
        assert!(is_reserved("rs_add"));
        assert!(!is_reserved("sqrtf"));
    }
}
