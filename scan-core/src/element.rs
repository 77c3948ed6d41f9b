//! Element types: the primitives scangen knows and `#[repr(C)]` structs of them.

use crate::spec::ElementType;
use std::fmt;

/// A primitive element type. Its C spelling is its Rust spelling: the generated prelude declares
/// `typedef int i32;` and friends, so generated code reads like the Rust it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PrimType {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
}

impl PrimType {
    pub const ALL: [PrimType; 10] = [
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
        }
    }

    /// Parses a Rust primitive name (`"i32"`, `"f64"`, ...).
    pub fn from_name(name: &str) -> Option<PrimType> {
        PrimType::ALL.into_iter().find(|p| p.name() == name)
    }

    pub fn size(self) -> usize {
        match self {
            PrimType::I8 | PrimType::U8 => 1,
            PrimType::I16 | PrimType::U16 => 2,
            PrimType::I32 | PrimType::U32 | PrimType::F32 => 4,
            PrimType::I64 | PrimType::U64 | PrimType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, PrimType::F32 | PrimType::F64)
    }

    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            PrimType::I8 | PrimType::I16 | PrimType::I32 | PrimType::I64
        )
    }

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

/// One field of a `#[repr(C)]` element struct.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructField {
    pub name: String,
    pub ty: PrimType,
}

/// A `#[repr(C)]` struct of primitives, as the generated C declares it.
///
/// `size` and `align` are what Rust computed for the struct; generated code `static_assert`s
/// that the C compiler agrees, so a layout mismatch is a compile error, never corrupt data.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StructDecl {
    pub name: String,
    pub fields: Vec<StructField>,
    pub size: usize,
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
}

/// `repr(C)` layout of primitive fields: (offsets, size, alignment). A primitive's alignment is
/// its size on every target scangen supports (x86-64 and aarch64 hosts, CUDA devices).
fn repr_c_layout(fields: &[StructField]) -> (Vec<usize>, usize, usize) {
    let mut offsets = Vec::with_capacity(fields.len());
    let mut end = 0usize;
    let mut align = 1usize;
    for f in fields {
        let a = f.ty.size();
        align = align.max(a);
        let offset = end.div_ceil(a) * a;
        offsets.push(offset);
        end = offset + a;
    }
    (offsets, end.div_ceil(align) * align, align)
}

/// A type that can be an element of a GPU scan: a primitive or a `#[repr(C)]` struct of them.
///
/// # Safety
/// `element_type()` must describe the exact memory layout of `Self` (field order, types, size),
/// and every bit pattern the GPU can produce from valid values must be a valid `Self`. Kernels
/// copy elements as raw bytes. `#[derive(ScanElement)]` checks this for structs.
pub unsafe trait ScanElement: Copy + Send + Sync + fmt::Debug + PartialEq + 'static {
    fn element_type() -> ElementType;
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
                    ty: PrimType::U8,
                },
                StructField {
                    name: "value".into(),
                    ty: PrimType::F64,
                },
                StructField {
                    name: "tag".into(),
                    ty: PrimType::U16,
                },
            ],
        );
        assert_eq!(d.size, std::mem::size_of::<Mixed>());
        assert_eq!(d.align, std::mem::align_of::<Mixed>());
        assert_eq!(d.field_offsets(), vec![0, 8, 16]);
    }

    #[test]
    fn prim_names_round_trip() {
        for p in PrimType::ALL {
            assert_eq!(PrimType::from_name(p.name()), Some(p));
        }
        assert_eq!(PrimType::from_name("usize"), None);
    }
}
