//! The operator IR: what code generation needs to know about an operator.

use crate::element::{PrimType, StructDecl};
use crate::word_form::WordForm;

/// The element type of an operator, as generated C sees it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// A primitive: integer, `f32`/`f64` or a 2-byte float.
    Prim(PrimType),
    /// A `#[repr(C)]` struct, declared in the generated code from this description.
    Struct(StructDecl),
}

impl ElementType {
    /// The C name of the type (`i32`, or the struct's name).
    pub fn c_name(&self) -> &str {
        match self {
            ElementType::Prim(p) => p.name(),
            ElementType::Struct(s) => &s.name,
        }
    }

    /// Size in bytes, as Rust lays the type out.
    pub fn size(&self) -> usize {
        match self {
            ElementType::Prim(p) => p.size(),
            ElementType::Struct(s) => s.size,
        }
    }

    /// Whether a 2-byte float (`f16`, `bf16`) is the element or one of its fields.
    pub fn mentions_half(&self) -> bool {
        let half = |p: PrimType| matches!(p, PrimType::F16 | PrimType::BF16);
        match self {
            ElementType::Prim(p) => half(*p),
            ElementType::Struct(s) => s.leaves().iter().any(|l| half(l.ty)),
        }
    }

    /// Alignment in bytes, as Rust lays the type out (a primitive's is its size).
    pub fn align(&self) -> usize {
        match self {
            ElementType::Prim(p) => p.size(),
            ElementType::Struct(s) => s.align,
        }
    }
}

/// An associative operator with an identity, lowered to C++.
///
/// The generated kernel defines
/// ```c
/// __device__ __forceinline__ T scan_combine(T <lhs>, T <rhs>) { <combine_body> }
/// __device__ __forceinline__ T scan_identity() { <identity_body> }
/// ```
/// Both bodies are complete C++ statement lists ending in a `return`. They may use the helpers of
/// the generated prelude (`rs_wrapping_add`, `rs_max`, ... see `scan-codegen/templates/prelude.cu.tera`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpSpec {
    /// The operator's name (`max`, `AffineCompose`): used in comments and snapshot names.
    pub name: String,
    /// The type of the scanned elements, and of both operands and the result of combine.
    pub element: ElementType,
    /// Name of the left operand in `combine_body` (the earlier element of the sequence).
    pub lhs: String,
    /// Name of the right operand in `combine_body` (the later element).
    pub rhs: String,
    /// Body of `scan_combine(lhs, rhs)`: C++ statements ending in `return` of the combined value.
    pub combine_body: String,
    /// Body of `scan_identity()`: C++ statements ending in `return` of the identity element.
    pub identity_body: String,
    /// The standard integer monoid this operator is, bit for bit, if it is one (the built-ins
    /// say so): tiles of packed 1- and 2-byte items may then fold and scan whole 32-bit words
    /// with SIMD-within-a-register instructions instead of item by item. `None` for any other
    /// operator; the word code is only as right as this claim.
    pub word_form: Option<WordForm>,
}

/// How an operator's inputs become elements (`lift`) and its elements become outputs
/// (`project`), lowered to C++: what a fused scan (one read of the inputs, one write of the
/// outputs) generates around the scan. The generated kernel defines
/// ```c
/// __device__ __forceinline__ V scan_user_lift(<I0> <p0>, ..., u64 <index>) { <lift_body> }
/// __device__ __forceinline__ O scan_user_project(V <project_param>) { <project_body> }
/// ```
/// where `index` is the position of the input values in their arrays.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TransformSpec {
    /// The type of each input array, in `lift`'s parameter order: a primitive or the operator's
    /// element. At least one.
    pub inputs: Vec<ElementType>,
    /// C++ names of `lift`'s parameters: one per input, then the element index (`u64`).
    pub lift_params: Vec<String>,
    /// Body of `scan_user_lift`: C++ statements ending in `return` of an element.
    pub lift_body: String,
    /// The type of the output array: a primitive or the operator's element.
    pub output: ElementType,
    /// C++ name of `project`'s parameter (an element).
    pub project_param: String,
    /// Body of `scan_user_project`: C++ statements ending in `return` of an output value.
    pub project_body: String,
}

impl TransformSpec {
    /// Bytes of one value of each input array, in lift parameter order.
    pub fn input_sizes(&self) -> Vec<usize> {
        self.inputs.iter().map(ElementType::size).collect()
    }

    /// The transform of an operator without `lift` or `project`: one input array of elements,
    /// elements out (`lift(x, _) = x`, `project(e) = e`).
    pub fn identity(element: &ElementType) -> TransformSpec {
        TransformSpec {
            inputs: vec![element.clone()],
            lift_params: vec!["x".into(), "index".into()],
            lift_body: "(void)index;\nreturn x;".into(),
            output: element.clone(),
            project_param: "e".into(),
            project_body: "return e;".into(),
        }
    }
}
