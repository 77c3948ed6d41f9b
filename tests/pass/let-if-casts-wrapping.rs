use scangen::{scan_op, ScanElement, ScanOp};

/// A saturating-count histogram bucket with a checksum: exercises `let`, `if`/`else`,
/// `as` casts, wrapping and saturating arithmetic, shifts and literals of several types.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Bucket {
    pub count: u16,
    pub hash: u32,
    pub mean: f64,
}

pub struct Merge;

#[scan_op]
impl ScanOp for Merge {
    type Elem = Bucket;
    fn identity() -> Bucket {
        Bucket {
            count: 0,
            hash: 0,
            mean: 0.0,
        }
    }
    fn combine(l: Bucket, r: Bucket) -> Bucket {
        let total = l.count as u32 + r.count as u32;
        let mean = if total == 0 {
            0.0
        } else {
            let wl = l.count as f64 / total as f64;
            l.mean * wl + r.mean * (1.0 - wl)
        };
        let hash = l.hash.rotate_left(5).wrapping_mul(31) ^ r.hash;
        let mut count: u16 = l.count.saturating_add(r.count);
        if count > 60000 {
            count = u16::MAX;
        }
        Bucket {
            count,
            hash: if r.count == 0 { l.hash } else { hash >> 1 << 1 },
            mean,
        }
    }
}

fn main() {
    let a = Bucket {
        count: 1,
        hash: 7,
        mean: 2.0,
    };
    let b = Bucket {
        count: 3,
        hash: 9,
        mean: 6.0,
    };
    let c = Merge::combine(a, b);
    assert_eq!(c.count, 4);
    assert_eq!(c.mean, 5.0);
    assert_eq!(Merge::combine(a, Merge::identity()), a);
    assert_eq!(
        Merge::combine(
            Bucket {
                count: 40000,
                hash: 0,
                mean: 0.0
            },
            Bucket {
                count: 40000,
                hash: 0,
                mean: 0.0
            }
        )
        .count,
        u16::MAX
    );

    let op = Merge::device_op();
    let body = &op.combine_body;
    assert!(
        body.contains("u32 total = rs_add(rs_cast<u32>(l.count), rs_cast<u32>(r.count));"),
        "{body}"
    );
    assert!(body.contains("f64 tmp0;\nif (total == 0) {"), "{body}");
    assert!(
        body.contains(
            "rs_wrapping_mul(rs_rotate_left(l.hash, (u32)5), (decltype(Bucket::hash))31)"
        ),
        "{body}"
    );
    assert!(
        body.contains("u16 count = rs_saturating_add(l.count, r.count);"),
        "{body}"
    );
    assert!(body.contains("    count = rs_max_value<u16>();"), "{body}");
}
