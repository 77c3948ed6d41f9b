use scangen::{scan_op, ElementType, OpSpec, PrimType, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Affine {
    pub a: f32,
    pub b: f32,
}

pub struct Compose;

#[scan_op]
impl ScanOp for Compose {
    type Elem = Affine;
    fn identity() -> Affine {
        Affine { a: 1.0, b: 0.0 }
    }
    fn combine(l: Affine, r: Affine) -> Affine {
        Affine {
            a: l.a * r.a,
            b: r.a * l.b + r.b,
        }
    }
}

fn main() {
    // x -> 2x + 1, then x -> 3x + 4: 3(2x + 1) + 4 = 6x + 7.
    let c = Compose::combine(Affine { a: 2.0, b: 1.0 }, Affine { a: 3.0, b: 4.0 });
    assert_eq!(c, Affine { a: 6.0, b: 7.0 });
    assert_eq!(Compose::combine(Compose::identity(), c), c);

    let op: OpSpec = Compose::device_op();
    assert_eq!(op.name, "Compose");
    assert_eq!((op.lhs.as_str(), op.rhs.as_str()), ("l", "r"));
    let ElementType::Struct(decl) = &op.element else {
        panic!("struct element")
    };
    assert_eq!(decl.name, "Affine");
    assert_eq!(decl.size, 8);
    assert_eq!(
        decl.fields
            .iter()
            .map(|f| (f.name.as_str(), f.ty.clone()))
            .collect::<Vec<_>>(),
        [("a", PrimType::F32.into()), ("b", PrimType::F32.into())]
    );
    assert_eq!(<Affine as ScanElement>::element_type(), op.element);
    assert_eq!(
        op.combine_body,
        "Affine out0;\nout0.a = rs_mul(l.a, r.a);\nout0.b = rs_add(rs_mul(r.a, l.b), r.b);\nreturn out0;"
    );
    assert_eq!(
        op.identity_body,
        "Affine out0;\nout0.a = 1.0f;\nout0.b = 0.0f;\nreturn out0;"
    );
}
