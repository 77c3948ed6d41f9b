use scangen::{scan_op, ElementType, PrimType, ScanElement, ScanOp, StructField};

/// A segmented sum: `flag != 0` starts a new segment.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Seg {
    pub flag: u32,
    pub value: i64,
}

pub struct SegSum;

#[scan_op]
impl ScanOp for SegSum {
    type Elem = Seg;
    fn identity() -> Seg {
        Seg { flag: 0, value: 0 }
    }
    fn combine(l: Seg, r: Seg) -> Seg {
        if r.flag != 0 {
            r
        } else {
            Seg {
                value: l.value.wrapping_add(r.value),
                flag: l.flag,
            }
        }
    }
}

fn main() {
    let xs = [
        Seg { flag: 1, value: 1 },
        Seg { flag: 0, value: 2 },
        Seg { flag: 1, value: 10 },
        Seg { flag: 0, value: 5 },
    ];
    let mut acc = SegSum::identity();
    let sums: Vec<i64> = xs
        .iter()
        .map(|x| {
            acc = SegSum::combine(acc, *x);
            acc.value
        })
        .collect();
    assert_eq!(sums, [1, 3, 10, 15]);

    let op = SegSum::device_op();
    let ElementType::Struct(decl) = &op.element else {
        panic!("struct element")
    };
    assert_eq!(decl.size, 16);
    assert_eq!(decl.align, 8);
    assert_eq!(
        decl.fields[1],
        StructField {
            name: "value".into(),
            ty: PrimType::I64.into()
        }
    );
    assert_eq!(std::mem::size_of::<Seg>(), decl.size);
    assert!(
        op.combine_body
            .starts_with("if (r.flag != 0) {\n    return r;\n} else {\n"),
        "{}",
        op.combine_body
    );
    assert!(op
        .combine_body
        .contains("rs_wrapping_add(l.value, r.value)"));
    assert_eq!(
        op.identity_body,
        "Seg out0;\nout0.flag = 0;\nout0.value = 0;\nreturn out0;"
    );
}
