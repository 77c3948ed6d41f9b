//! Elements as bytes: sampling (random and edge values per field) and reading fields back, for
//! any element type the operator model describes.

use scan_core::half::{bf16, f16};
use scan_core::{ElementType, PrimType};

/// One field's value, widened so every primitive fits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldValue {
    Int(i128),
    F32(f32),
    F64(f64),
}

/// The primitives of an element type (a struct's fields, flattened through nested structs and
/// arrays; a `bool` as a `u8`) with their byte offsets.
pub fn field_layout(element: &ElementType) -> Vec<(String, PrimType, usize)> {
    match element {
        ElementType::Prim(p) => vec![(String::new(), *p, 0)],
        ElementType::Struct(s) => s
            .leaves()
            .into_iter()
            .map(|l| (l.path, l.ty, l.offset))
            .collect(),
    }
}

/// The byte offsets of the `bool`s of an element type: a sampled `bool` must be 0 or 1.
fn bool_offsets(element: &ElementType) -> Vec<usize> {
    match element {
        ElementType::Prim(_) => Vec::new(),
        ElementType::Struct(s) => s
            .leaves()
            .into_iter()
            .filter(|l| l.is_bool)
            .map(|l| l.offset)
            .collect(),
    }
}

pub fn read_field(bytes: &[u8], ty: PrimType, offset: usize) -> FieldValue {
    let b = &bytes[offset..offset + ty.size()];
    let mut buf = [0u8; 8];
    buf[..b.len()].copy_from_slice(b);
    let raw = u64::from_le_bytes(buf);
    match ty {
        PrimType::I8 => FieldValue::Int(raw as u8 as i8 as i128),
        PrimType::I16 => FieldValue::Int(raw as u16 as i16 as i128),
        PrimType::I32 => FieldValue::Int(raw as u32 as i32 as i128),
        PrimType::I64 => FieldValue::Int(raw as i64 as i128),
        PrimType::U8 | PrimType::U16 | PrimType::U32 | PrimType::U64 => {
            FieldValue::Int(raw as i128)
        }
        PrimType::F32 => FieldValue::F32(f32::from_bits(raw as u32)),
        PrimType::F64 => FieldValue::F64(f64::from_bits(raw)),
        // Widened exactly; compared with the 2-byte type's tolerance (`tolerance` in mod.rs).
        PrimType::F16 => FieldValue::F32(f16::from_bits(raw as u16).to_f32()),
        PrimType::BF16 => FieldValue::F32(bf16::from_bits(raw as u16).to_f32()),
    }
}

fn write_raw(bytes: &mut [u8], offset: usize, size: usize, raw: u64) {
    bytes[offset..offset + size].copy_from_slice(&raw.to_le_bytes()[..size]);
}

/// Edge values of a primitive, as raw little-endian bits: 0, 1, -1, MIN, MAX for integers;
/// ±0.0, ±1, NaN, ±infinity, the smallest subnormal and MIN/MAX for floats.
pub fn edge_values(ty: PrimType) -> Vec<u64> {
    let bits = ty.size() as u32 * 8;
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    match ty {
        PrimType::F32 => [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::from_bits(1),
            f32::MIN,
            f32::MAX,
            0.5,
            3.0,
        ]
        .iter()
        .map(|v| v.to_bits() as u64)
        .collect(),
        PrimType::F64 => [
            0.0f64,
            -0.0,
            1.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::from_bits(1),
            f64::MIN,
            f64::MAX,
            0.5,
            3.0,
        ]
        .iter()
        .map(|v| v.to_bits())
        .collect(),
        PrimType::F16 => [
            f16::ZERO,
            f16::NEG_ZERO,
            f16::ONE,
            f16::NEG_ONE,
            f16::NAN,
            f16::INFINITY,
            f16::NEG_INFINITY,
            f16::MIN_POSITIVE_SUBNORMAL,
            f16::MIN,
            f16::MAX,
            f16::from_f32(0.5),
            f16::from_f32(3.0),
        ]
        .iter()
        .map(|v| v.to_bits() as u64)
        .collect(),
        PrimType::BF16 => [
            bf16::ZERO,
            bf16::NEG_ZERO,
            bf16::ONE,
            bf16::NEG_ONE,
            bf16::NAN,
            bf16::INFINITY,
            bf16::NEG_INFINITY,
            bf16::MIN_POSITIVE_SUBNORMAL,
            bf16::MIN,
            bf16::MAX,
            bf16::from_f32(0.5),
            bf16::from_f32(3.0),
        ]
        .iter()
        .map(|v| v.to_bits() as u64)
        .collect(),
        _ if ty.is_signed_int() => {
            let min = 1u64 << (bits - 1);
            vec![0, 1, mask, min, min - 1, 2, mask - 1]
        }
        _ => vec![0, 1, mask, mask - 1, 2, mask >> 1, (mask >> 1) + 1],
    }
}

/// A small, fast PRNG (xorshift64*): samples are reproducible from the seed.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next 64 random bits. (An endless source, not an `Iterator`.)
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (0 when `n` is 0); slightly biased for `n` that do not divide 2^64,
    /// which sampling does not mind.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A random value of `ty`: a third edge values, the rest spread over magnitudes (floats) or a
/// mix of small and full-range integers.
pub fn sample_raw(ty: PrimType, rng: &mut Rng) -> u64 {
    let bits = ty.size() as u32 * 8;
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    if rng.below(3) == 0 {
        let edges = edge_values(ty);
        return edges[rng.below(edges.len() as u64) as usize];
    }
    match ty {
        PrimType::F32 => {
            let mantissa = (rng.next() >> 40) as f32 / (1u64 << 24) as f32;
            let exp = rng.below(41) as i32 - 20;
            let sign = if rng.below(2) == 0 { 1.0 } else { -1.0 };
            (sign * (0.5 + mantissa) * 2f32.powi(exp)).to_bits() as u64
        }
        PrimType::F64 => {
            let mantissa = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
            let exp = rng.below(81) as i32 - 40;
            let sign = if rng.below(2) == 0 { 1.0 } else { -1.0 };
            (sign * (0.5 + mantissa) * 2f64.powi(exp)).to_bits()
        }
        // Magnitudes 2^-6 .. 2^6: inside f16's normal range, so sums of a few stay finite.
        PrimType::F16 | PrimType::BF16 => {
            let mantissa = (rng.next() >> 40) as f32 / (1u64 << 24) as f32;
            let exp = rng.below(13) as i32 - 6;
            let sign = if rng.below(2) == 0 { 1.0 } else { -1.0 };
            let v = sign * (0.5 + mantissa) * 2f32.powi(exp);
            if ty == PrimType::F16 {
                f16::from_f32(v).to_bits() as u64
            } else {
                bf16::from_f32(v).to_bits() as u64
            }
        }
        _ => {
            if rng.below(2) == 0 {
                // Small values, positive and negative (as bits).
                (rng.below(201).wrapping_sub(100)) & mask
            } else {
                rng.next() & mask
            }
        }
    }
}

/// One random element of `element`, as bytes (padding zeroed).
pub fn sample_element(element: &ElementType, rng: &mut Rng) -> Vec<u8> {
    let mut bytes = vec![0u8; element.size()];
    for (_, ty, offset) in field_layout(element) {
        write_raw(&mut bytes, offset, ty.size(), sample_raw(ty, rng));
    }
    for offset in bool_offsets(element) {
        bytes[offset] &= 1;
    }
    bytes
}

/// Renders an element for a counterexample: `-3` or `{ a: 1.5, b: NaN }`.
pub fn describe(element: &ElementType, bytes: &[u8]) -> String {
    let fields = field_layout(element);
    let show = |ty: PrimType, off: usize| match read_field(bytes, ty, off) {
        FieldValue::Int(v) => v.to_string(),
        FieldValue::F32(v) => format!("{v:?}"),
        FieldValue::F64(v) => format!("{v:?}"),
    };
    match element {
        ElementType::Prim(p) => show(*p, 0),
        ElementType::Struct(s) => {
            let parts: Vec<String> = fields
                .iter()
                .map(|(name, ty, off)| format!("{name}: {}", show(*ty, *off)))
                .collect();
            format!("{} {{ {} }}", s.name, parts.join(", "))
        }
    }
}

/// A raw input of `p` for `lift` (see `laws::LiftedInputs`): integers within ±2^20 (0..2^20
/// unsigned), floats within ±1000 (±10 for f16/bf16), a third of them 0, 1 or -1. Sums of many
/// stay far from overflow, as real data's do.
pub(crate) fn moderate_input(p: PrimType, rng: &mut Rng) -> Vec<u8> {
    let edge = rng.below(3) == 0;
    let signed = matches!(
        p,
        PrimType::I8 | PrimType::I16 | PrimType::I32 | PrimType::I64
    );
    let int: i64 = if edge {
        [0, 1, -1][rng.below(if signed { 3 } else { 2 }) as usize]
    } else if signed {
        rng.below(1 << 21) as i64 - (1 << 20)
    } else {
        rng.below(1 << 20) as i64
    };
    let float = if edge {
        int as f64
    } else {
        (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * 2000.0 - 1000.0
    };
    match p {
        PrimType::F32 => (float as f32).to_le_bytes().to_vec(),
        PrimType::F64 => float.to_le_bytes().to_vec(),
        PrimType::F16 => f16::from_f64(float / 100.0).to_le_bytes().to_vec(),
        PrimType::BF16 => bf16::from_f64(float / 100.0).to_le_bytes().to_vec(),
        // Integers: truncated to the type (8- and 16-bit types wrap within their range).
        _ => int.to_le_bytes()[..p.size()].to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_core::{StructDecl, StructField};

    #[test]
    fn fields_round_trip_through_bytes() {
        let el = ElementType::Struct(StructDecl::new(
            "S",
            vec![
                StructField {
                    name: "flag".into(),
                    ty: PrimType::U8.into(),
                },
                StructField {
                    name: "v".into(),
                    ty: PrimType::F64.into(),
                },
                StructField {
                    name: "i".into(),
                    ty: PrimType::I16.into(),
                },
            ],
        ));
        let mut bytes = vec![0u8; el.size()];
        write_raw(&mut bytes, 8, 8, (-2.5f64).to_bits());
        write_raw(&mut bytes, 16, 2, (-7i16) as u16 as u64);
        assert_eq!(read_field(&bytes, PrimType::F64, 8), FieldValue::F64(-2.5));
        assert_eq!(read_field(&bytes, PrimType::I16, 16), FieldValue::Int(-7));
        assert_eq!(describe(&el, &bytes), "S { flag: 0, v: -2.5, i: -7 }");
    }

    #[test]
    fn edge_values_include_min_and_max() {
        let e = edge_values(PrimType::I8);
        assert!(e.contains(&0x80) && e.contains(&0x7f) && e.contains(&0xff));
        let f = edge_values(PrimType::F32);
        assert!(f.iter().any(|&b| f32::from_bits(b as u32).is_nan()));
    }
}
