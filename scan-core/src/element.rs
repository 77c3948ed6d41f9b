//! Element types: the primitives scangen knows and `#[repr(C)]` structs of them.

use crate::spec::ElementType;
use std::fmt;

/// A primitive element type. Its C spelling is its Rust spelling: the generated prelude declares
/// `typedef int i32;` and friends, so generated code reads like the Rust it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PrimType {
    /// Rust's `i8`.
    I8,
    /// Rust's `i16`.
    I16,
    /// Rust's `i32`.
    I32,
    /// Rust's `i64`.
    I64,
    /// Rust's `u8`.
    U8,
    /// Rust's `u16`.
    U16,
    /// Rust's `u32`.
    U32,
    /// Rust's `u64`.
    U64,
    /// Rust's `f32` (IEEE binary32).
    F32,
    /// Rust's `f64` (IEEE binary64).
    F64,
    /// IEEE binary16, Rust's `half::f16` (CUDA's `__half` layout).
    F16,
    /// bfloat16, Rust's `half::bf16` (CUDA's `__nv_bfloat16` layout).
    BF16,
}

impl PrimType {
    /// Every primitive: signed integers, unsigned integers, then floats, narrowest first.
    pub const ALL: [PrimType; 12] = [
        PrimType::I8,
        PrimType::I16,
        PrimType::I32,
        PrimType::I64,
        PrimType::U8,
        PrimType::U16,
        PrimType::U32,
        PrimType::U64,
        PrimType::F32,
        PrimType::F64,
        PrimType::F16,
        PrimType::BF16,
    ];

    /// The Rust name, which is also the C typedef name in generated code.
    pub fn name(self) -> &'static str {
        match self {
            PrimType::I8 => "i8",
            PrimType::I16 => "i16",
            PrimType::I32 => "i32",
            PrimType::I64 => "i64",
            PrimType::U8 => "u8",
            PrimType::U16 => "u16",
            PrimType::U32 => "u32",
            PrimType::U64 => "u64",
            PrimType::F32 => "f32",
            PrimType::F64 => "f64",
            PrimType::F16 => "f16",
            PrimType::BF16 => "bf16",
        }
    }

    /// Parses a Rust primitive name (`"i32"`, `"f64"`, ...).
    pub fn from_name(name: &str) -> Option<PrimType> {
        PrimType::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Size in bytes (1, 2, 4 or 8), which is also the alignment.
    pub fn size(self) -> usize {
        match self {
            PrimType::I8 | PrimType::U8 => 1,
            PrimType::I16 | PrimType::U16 | PrimType::F16 | PrimType::BF16 => 2,
            PrimType::I32 | PrimType::U32 | PrimType::F32 => 4,
            PrimType::I64 | PrimType::U64 | PrimType::F64 => 8,
        }
    }

    /// Whether the type is a float (`f32`, `f64`, `f16` or `bf16`).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            PrimType::F32 | PrimType::F64 | PrimType::F16 | PrimType::BF16
        )
    }

    /// The 2-byte floats (`half::f16`, `half::bf16`): structs in Rust and in the generated C++,
    /// so they have no literals and no `as` casts, and their arithmetic goes through `f32`.
    pub fn is_half(self) -> bool {
        matches!(self, PrimType::F16 | PrimType::BF16)
    }

    /// The bits of +infinity of a 2-byte float (`half`'s constant); `None` for other types.
    pub fn half_infinity_bits(self) -> Option<u16> {
        match self {
            PrimType::F16 => Some(half::f16::INFINITY.to_bits()),
            PrimType::BF16 => Some(half::bf16::INFINITY.to_bits()),
            _ => None,
        }
    }

    /// Whether the type is a signed integer (`i8` to `i64`).
    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            PrimType::I8 | PrimType::I16 | PrimType::I32 | PrimType::I64
        )
    }

    /// Whether the type is an integer, signed or unsigned (every non-float).
    pub fn is_int(self) -> bool {
        !self.is_float()
    }

    /// The unsigned type of the same width (`i32` -> `u32`); floats map to themselves.
    pub fn unsigned_counterpart(self) -> PrimType {
        match self {
            PrimType::I8 => PrimType::U8,
            PrimType::I16 => PrimType::U16,
            PrimType::I32 => PrimType::U32,
            PrimType::I64 => PrimType::U64,
            other => other,
        }
    }
}

impl fmt::Display for PrimType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of an element struct's field.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// A primitive.
    Prim(PrimType),
    /// Rust's `bool`: one byte, 0 or 1 (C++'s `bool` on every CUDA target).
    Bool,
    /// `[T; N]`: `N` elements of `T`, contiguous, aligned as `T`.
    Array(Box<FieldType>, usize),
    /// A nested `#[repr(C)]` struct.
    Struct(StructDecl),
}

impl FieldType {
    /// Size in bytes, as Rust lays the field's type out.
    pub fn size(&self) -> usize {
        match self {
            FieldType::Prim(p) => p.size(),
            FieldType::Bool => 1,
            FieldType::Array(t, n) => t.size() * n,
            FieldType::Struct(s) => s.size,
        }
    }

    /// A primitive's alignment is its size on every target scangen supports (x86-64 and
    /// aarch64 hosts, CUDA devices).
    pub fn align(&self) -> usize {
        match self {
            FieldType::Prim(p) => p.size(),
            FieldType::Bool => 1,
            FieldType::Array(t, _) => t.align(),
            FieldType::Struct(s) => s.align,
        }
    }

    /// The C++ type generated code declares the field with (`rs_array` is the array template
    /// of `scan-core/templates/rust_semantics.cu.tera`).
    pub fn c_type(&self) -> String {
        match self {
            FieldType::Prim(p) => p.name().to_string(),
            FieldType::Bool => "bool".to_string(),
            FieldType::Array(t, n) => format!("rs_array<{}, {n}>", t.c_type()),
            FieldType::Struct(s) => s.name.clone(),
        }
    }
}

impl From<PrimType> for FieldType {
    fn from(p: PrimType) -> FieldType {
        FieldType::Prim(p)
    }
}

impl fmt::Display for FieldType {
    /// As Rust writes the type (`f32`, `bool`, `[u8; 4]`, `Inner`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldType::Prim(p) => write!(f, "{p}"),
            FieldType::Bool => f.write_str("bool"),
            FieldType::Array(t, n) => write!(f, "[{t}; {n}]"),
            FieldType::Struct(s) => f.write_str(&s.name),
        }
    }
}

/// One field of a `#[repr(C)]` element struct.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructField {
    /// The field's name, the same in Rust and in the generated C.
    pub name: String,
    /// The field's type.
    pub ty: FieldType,
}

/// A primitive (or `bool`) inside an element, where a struct's fields, nested structs and
/// arrays are flattened: what samplers and comparisons of elements as bytes work on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// `value`, `pos.x`, `v[2]`
    pub path: String,
    /// The primitive (`u8` for a `bool`).
    pub ty: PrimType,
    /// Whether the leaf is a `bool` (so only 0 and 1 are valid bytes).
    pub is_bool: bool,
    /// Byte offset from the start of the element.
    pub offset: usize,
}

/// A `#[repr(C)]` struct, as the generated C declares it.
///
/// `size` and `align` are what Rust computed for the struct; generated code `static_assert`s
/// that the C compiler agrees, so a layout mismatch is a compile error, never corrupt data.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructDecl {
    /// The struct's name, the same in Rust and in the generated C.
    pub name: String,
    /// The fields, in declaration (and memory) order.
    pub fields: Vec<StructField>,
    /// Size in bytes, trailing padding included.
    pub size: usize,
    /// Alignment in bytes: the largest alignment of its fields.
    pub align: usize,
}

impl StructDecl {
    /// Builds a declaration and computes its `repr(C)` size and alignment from the fields.
    pub fn new(name: impl Into<String>, fields: Vec<StructField>) -> StructDecl {
        let (_, size, align) = repr_c_layout(&fields);
        StructDecl {
            name: name.into(),
            fields,
            size,
            align,
        }
    }

    /// Byte offset of each field, in declaration order (`repr(C)` rules: each field at the next
    /// multiple of its alignment).
    pub fn field_offsets(&self) -> Vec<usize> {
        repr_c_layout(&self.fields).0
    }

    /// The nested structs this one's fields use (at any depth, arrays included), each once,
    /// every struct after those it contains: the order C must declare them in.
    pub fn nested_structs(&self) -> Vec<&StructDecl> {
        fn visit<'a>(t: &'a FieldType, out: &mut Vec<&'a StructDecl>) {
            match t {
                FieldType::Array(e, _) => visit(e, out),
                FieldType::Struct(s) => {
                    for f in &s.fields {
                        visit(&f.ty, out);
                    }
                    if !out.iter().any(|o| o.name == s.name) {
                        out.push(s);
                    }
                }
                FieldType::Prim(_) | FieldType::Bool => {}
            }
        }
        let mut out = Vec::new();
        for f in &self.fields {
            visit(&f.ty, &mut out);
        }
        out
    }

    /// `struct Name { T field; ... };` (the nested structs are declared separately, first).
    pub fn c_declaration(&self) -> String {
        let mut s = format!("struct {} {{\n", self.name);
        for f in &self.fields {
            s.push_str(&format!("    {} {};\n", f.ty.c_type(), f.name));
        }
        s.push_str("};");
        s
    }

    /// Every primitive in the struct with its byte offset, in memory order.
    pub fn leaves(&self) -> Vec<Leaf> {
        fn visit(t: &FieldType, path: String, offset: usize, out: &mut Vec<Leaf>) {
            match t {
                FieldType::Prim(p) => out.push(Leaf {
                    path,
                    ty: *p,
                    is_bool: false,
                    offset,
                }),
                FieldType::Bool => out.push(Leaf {
                    path,
                    ty: PrimType::U8,
                    is_bool: true,
                    offset,
                }),
                FieldType::Array(e, n) => {
                    for i in 0..*n {
                        visit(e, format!("{path}[{i}]"), offset + i * e.size(), out);
                    }
                }
                FieldType::Struct(s) => {
                    for (f, off) in s.fields.iter().zip(s.field_offsets()) {
                        visit(&f.ty, format!("{path}.{}", f.name), offset + off, out);
                    }
                }
            }
        }
        let mut out = Vec::new();
        for (f, off) in self.fields.iter().zip(self.field_offsets()) {
            visit(&f.ty, f.name.clone(), off, &mut out);
        }
        out
    }
}

/// `repr(C)` layout: (offsets, size, alignment): each field at the next multiple of its
/// alignment, the size rounded up to the largest alignment.
fn repr_c_layout(fields: &[StructField]) -> (Vec<usize>, usize, usize) {
    let mut offsets = Vec::with_capacity(fields.len());
    let mut end = 0usize;
    let mut align = 1usize;
    for f in fields {
        let a = f.ty.align();
        align = align.max(a);
        let offset = end.div_ceil(a) * a;
        offsets.push(offset);
        end = offset + f.ty.size();
    }
    (offsets, end.div_ceil(align) * align, align)
}

/// A type that can be an element of a GPU scan: a primitive or a `#[repr(C)]` struct of them.
///
/// # Safety
/// `element_type()` must describe the exact memory layout of `Self` (field order, types, size),
/// and every bit pattern the GPU can produce from valid values must be a valid `Self`. Kernels
/// copy elements as raw bytes. All-zero bytes must be a valid `Self` too (true of every type
/// `element_type()` can describe: primitives, `bool`s, arrays and structs of them), since
/// `#[derive(ScanElement)]` implements cudarc's `ValidAsZeroBits` for structs nesting it. `#[derive(ScanElement)]` checks this for structs.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a ScanElement",
    label = "not a ScanElement",
    note = "an element (or a struct nested in one) is a primitive or a `#[derive(ScanElement)] #[repr(C)]` struct"
)]
pub unsafe trait ScanElement: Copy + Send + Sync + fmt::Debug + PartialEq + 'static {
    /// The description of `Self` that code generation declares the C type from.
    fn element_type() -> ElementType;
}

/// The field type of an element nested in another (what `#[derive(ScanElement)]` writes for a
/// field whose type is a struct). Not a public API.
#[doc(hidden)]
pub fn field_type_of<T: ScanElement>() -> FieldType {
    match T::element_type() {
        ElementType::Prim(p) => FieldType::Prim(p),
        ElementType::Struct(s) => FieldType::Struct(s),
    }
}

macro_rules! prim_element {
    ($($t:ty => $p:ident),* $(,)?) => {$(
        // SAFETY: a primitive's layout is its PrimType's, and every bit pattern is valid.
        unsafe impl ScanElement for $t {
            fn element_type() -> ElementType {
                ElementType::Prim(PrimType::$p)
            }
        }
    )*};
}

prim_element!(
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    f32 => F32, f64 => F64,
    half::f16 => F16, half::bf16 => BF16,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layout_matches_repr_c() {
        #[repr(C)]
        struct Mixed {
            _flag: u8,
            _value: f64,
            _tag: u16,
        }
        let d = StructDecl::new(
            "Mixed",
            vec![
                StructField {
                    name: "flag".into(),
                    ty: PrimType::U8.into(),
                },
                StructField {
                    name: "value".into(),
                    ty: PrimType::F64.into(),
                },
                StructField {
                    name: "tag".into(),
                    ty: PrimType::U16.into(),
                },
            ],
        );
        assert_eq!(d.size, std::mem::size_of::<Mixed>());
        assert_eq!(d.align, std::mem::align_of::<Mixed>());
        assert_eq!(d.field_offsets(), vec![0, 8, 16]);
    }

    #[test]
    fn bool_array_and_nested_layouts_match_repr_c() {
        #[repr(C)]
        struct Inner {
            _a: u8,
            _b: f64,
        }
        #[repr(C)]
        struct Outer {
            _flag: bool,
            _v: [u16; 3],
            _inner: Inner,
            _last: bool,
            _pair: [Inner; 2],
        }
        let f = |name: &str, ty: FieldType| StructField {
            name: name.into(),
            ty,
        };
        let inner = StructDecl::new(
            "Inner",
            vec![f("a", PrimType::U8.into()), f("b", PrimType::F64.into())],
        );
        let outer = StructDecl::new(
            "Outer",
            vec![
                f("flag", FieldType::Bool),
                f("v", FieldType::Array(Box::new(PrimType::U16.into()), 3)),
                f("inner", FieldType::Struct(inner.clone())),
                f("last", FieldType::Bool),
                f(
                    "pair",
                    FieldType::Array(Box::new(FieldType::Struct(inner.clone())), 2),
                ),
            ],
        );
        assert_eq!(inner.size, std::mem::size_of::<Inner>());
        assert_eq!(outer.size, std::mem::size_of::<Outer>());
        assert_eq!(outer.align, std::mem::align_of::<Outer>());
        assert_eq!(
            outer.field_offsets(),
            vec![
                std::mem::offset_of!(Outer, _flag),
                std::mem::offset_of!(Outer, _v),
                std::mem::offset_of!(Outer, _inner),
                std::mem::offset_of!(Outer, _last),
                std::mem::offset_of!(Outer, _pair),
            ]
        );
        assert_eq!(outer.nested_structs(), vec![&inner]);
        let leaves = outer.leaves();
        let paths: Vec<&str> = leaves.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "flag",
                "v[0]",
                "v[1]",
                "v[2]",
                "inner.a",
                "inner.b",
                "last",
                "pair[0].a",
                "pair[0].b",
                "pair[1].a",
                "pair[1].b"
            ]
        );
        assert_eq!(leaves[9].offset, std::mem::offset_of!(Outer, _pair) + 16);
        assert!(leaves[0].is_bool && leaves[6].is_bool && !leaves[1].is_bool);
        assert_eq!(
            outer.c_declaration(),
            "struct Outer {\n    bool flag;\n    rs_array<u16, 3> v;\n    Inner inner;\n    bool last;\n    rs_array<Inner, 2> pair;\n};"
        );
    }

    #[test]
    fn prim_names_round_trip() {
        for p in PrimType::ALL {
            assert_eq!(PrimType::from_name(p.name()), Some(p));
        }
        assert_eq!(PrimType::from_name("usize"), None);
        assert_eq!(PrimType::from_name("bf16"), Some(PrimType::BF16));
    }

    #[test]
    fn half_types_have_rusts_layout() {
        for (p, size, align) in [
            (
                PrimType::F16,
                std::mem::size_of::<half::f16>(),
                std::mem::align_of::<half::f16>(),
            ),
            (
                PrimType::BF16,
                std::mem::size_of::<half::bf16>(),
                std::mem::align_of::<half::bf16>(),
            ),
        ] {
            assert_eq!((p.size(), FieldType::Prim(p).align()), (size, align));
            assert!(p.is_float() && p.is_half() && !p.is_int());
        }
        assert_eq!(
            <half::f16 as ScanElement>::element_type(),
            ElementType::Prim(PrimType::F16)
        );
    }
}
