//! Element fields beyond primitives: a `bool`, arrays (one with a `const` length), a nested
//! element struct and an array of them. The derive describes each as Rust lays it out.

use scangen::runtime::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use scangen::{scan_op, ElementType, FieldType, PrimType, ScanElement, ScanOp};

const LANES: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Point {
    pub x: f32,
    pub y: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Body {
    pub alive: bool,
    pub lanes: [u16; LANES],
    pub pos: Point,
    pub trail: [Point; 2],
    pub tags: [[u8; 2]; 2],
}

pub struct Step;

#[scan_op]
impl ScanOp for Step {
    type Elem = Body;
    fn identity() -> Body {
        Body {
            alive: false,
            lanes: [0; 3],
            pos: Point { x: 0.0, y: 0.0 },
            trail: [Point { x: 0.0, y: 0.0 }; 2],
            tags: [[0; 2]; 2],
        }
    }
    fn combine(l: Body, r: Body) -> Body {
        let mut lanes = l.lanes;
        for i in 0..3 {
            lanes[i] = lanes[i].wrapping_add(r.lanes[i]);
        }
        Body {
            alive: l.alive || r.alive,
            lanes,
            pos: Point {
                x: l.pos.x + r.pos.x,
                y: l.pos.y + r.pos.y,
            },
            trail: [l.pos, r.pos],
            tags: [[l.tags[0][0] | r.tags[0][0], r.tags[0][1]], r.tags[1]],
        }
    }
}

fn main() {
    let ElementType::Struct(decl) = Body::element_type() else {
        panic!("a struct")
    };
    assert_eq!(decl.size, std::mem::size_of::<Body>());
    assert_eq!(decl.align, std::mem::align_of::<Body>());
    assert_eq!(
        decl.field_offsets(),
        [
            std::mem::offset_of!(Body, alive),
            std::mem::offset_of!(Body, lanes),
            std::mem::offset_of!(Body, pos),
            std::mem::offset_of!(Body, trail),
            std::mem::offset_of!(Body, tags),
        ]
    );
    assert_eq!(decl.fields[0].ty, FieldType::Bool);
    assert_eq!(
        decl.fields[1].ty,
        FieldType::Array(Box::new(PrimType::U16.into()), 3)
    );
    let ElementType::Struct(point) = Point::element_type() else {
        panic!("a struct")
    };
    assert_eq!(decl.fields[2].ty, FieldType::Struct(point.clone()));
    assert_eq!(decl.nested_structs(), [&point]);

    let a = Body {
        alive: false,
        lanes: [1, 2, 65535],
        pos: Point { x: 1.0, y: 2.0 },
        trail: [Point { x: 0.0, y: 0.0 }; 2],
        tags: [[1, 2], [3, 4]],
    };
    let c = Step::combine(a, a);
    assert_eq!(c.lanes, [2, 4, 65534]);
    assert_eq!(c.trail, [a.pos, a.pos]);
    assert_eq!(Step::combine(Step::identity(), a).pos, a.pos);
    // The lowered code names the nested fields through the element's declaration.
    let op = Step::device_op();
    assert!(op.combine_body.contains("decltype(Body::lanes)"), "{}", op.combine_body);

    // What cudarc needs for device buffers of the element, `alloc_zeros` included: all-zero
    // bytes are a valid element (here, the identity).
    fn device_buffer_element<T: DeviceRepr + ValidAsZeroBits>() {}
    device_buffer_element::<Body>();
    device_buffer_element::<Point>();
    let zero: Body = unsafe { std::mem::zeroed() };
    assert_eq!(zero, Step::identity());
}
