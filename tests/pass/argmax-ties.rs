use scangen::{scan_op, ScanElement, ScanOp};

/// The maximum and the index where it first occurs: ties go to the smaller index, so the
/// operator is associative and deterministic.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct ArgMax {
    pub value: f32,
    pub index: u32,
}

pub struct ArgMaxOp;

#[scan_op]
impl ScanOp for ArgMaxOp {
    type Elem = ArgMax;
    fn identity() -> ArgMax {
        ArgMax {
            value: f32::NEG_INFINITY,
            index: u32::MAX,
        }
    }
    fn combine(l: ArgMax, r: ArgMax) -> ArgMax {
        if r.value > l.value || (r.value == l.value && r.index < l.index) {
            r
        } else {
            l
        }
    }
}

fn main() {
    let a = ArgMax {
        value: 2.0,
        index: 3,
    };
    let b = ArgMax {
        value: 2.0,
        index: 1,
    };
    assert_eq!(ArgMaxOp::combine(a, b), b);
    assert_eq!(ArgMaxOp::combine(b, a), b);
    assert_eq!(ArgMaxOp::combine(ArgMaxOp::identity(), a), a);

    let op = ArgMaxOp::device_op();
    assert_eq!(op.name, "ArgMaxOp");
    assert_eq!(
        op.combine_body,
        "return (r.value > l.value || (r.value == l.value && r.index < l.index)) ? r : l;"
    );
    assert!(op.identity_body.contains("rs_neg_infinity<f32>()"));
    assert!(op.identity_body.contains("rs_max_value<u32>()"));
}
