#![allow(non_camel_case_types, non_snake_case)]
//! Struct, field, operator and local names that are C++ keywords or CUDA built-ins: the macro
//! renames them the same way in the element declaration and in the lowered bodies.

use scangen::{scan_op, ElementType, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct template {
    pub int: u32,
    pub threadIdx: u32,
}

pub struct register;

#[scan_op]
impl ScanOp for register {
    type Elem = template;
    fn identity() -> template {
        template { int: 0, threadIdx: 0 }
    }
    fn combine(float: template, auto: template) -> template {
        let unsigned = float.int.wrapping_add(auto.int);
        template {
            int: unsigned,
            threadIdx: float.threadIdx.max(auto.threadIdx),
        }
    }
}

fn main() {
    let a = template { int: 3, threadIdx: 9 };
    let b = template { int: 4, threadIdx: 2 };
    assert_eq!(register::combine(a, b), template { int: 7, threadIdx: 9 });

    let op = register::device_op();
    let ElementType::Struct(decl) = &op.element else {
        panic!("struct element")
    };
    assert_eq!(decl.name, "template_");
    let names: Vec<&str> = decl.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["int_", "threadIdx_"]);
    assert_eq!((op.lhs.as_str(), op.rhs.as_str()), ("float_", "auto_"));
    assert_eq!(
        op.combine_body,
        "auto unsigned_ = rs_wrapping_add(float_.int_, auto_.int_);\n\
         template_ out0;\n\
         out0.int_ = unsigned_;\n\
         out0.threadIdx_ = rs_max(float_.threadIdx_, auto_.threadIdx_);\n\
         return out0;"
    );
}
