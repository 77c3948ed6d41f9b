//! Scan shapes beyond one flat forward scan: the direction and the segment rule.
//!
//! A variant changes two pieces of the generated code and nothing else: where the tile reads
//! and writes its elements (the access functor: reverse, strided rows) and where segments
//! start (the segment rule, which lifts the element to `(value, head)` pairs that the block scan
//! and the look-back combine like any other element). The kernels, the block scan and the
//! look-back are the same for every variant.

use crate::Algorithm;
use scan_core::PrimType;
use std::fmt;

/// Which way the scan runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Prefix scan, first element to last.
    #[default]
    Forward,
    /// Suffix scan, last element to first: `out[i]` combines `in[i..]` (inclusive) in reverse
    /// order, `combine(in[n-1], … combine(in[i+1], in[i]))`: the scan of the reversed sequence.
    Reverse,
}

/// The integer width of segment offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OffsetWidth {
    /// The offsets array is `u32`s.
    U32,
    /// The offsets array is `u64`s.
    U64,
}

impl OffsetWidth {
    /// The offsets' element type (`u32` or `u64`).
    pub fn prim(self) -> PrimType {
        match self {
            OffsetWidth::U32 => PrimType::U32,
            OffsetWidth::U64 => PrimType::U64,
        }
    }
}

/// Where segments start. A segmented scan restarts at every segment: an inclusive scan's
/// output at a segment's first element is that element (after the initial value, if any), an
/// exclusive scan's is the initial value (or the identity).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segments {
    /// One segment: the whole sequence.
    #[default]
    None,
    /// `flags[i] != 0` (one byte per element, `u8`/`bool`) starts a segment at element `i`.
    Flags,
    /// A segment starts wherever `keys[i] != keys[i - 1]`; keys of an integer type.
    Keys(PrimType),
    /// CSR offsets: `offsets[0..=m]`, ascending; segment `j` is `[offsets[j], offsets[j+1])`.
    Offsets(OffsetWidth),
    /// `rows × cols` row-major, each row its own segment; `strided`: rows are `row_stride`
    /// elements apart (input and output alike) instead of `cols`.
    Rows {
        /// Whether rows are `row_stride` elements apart rather than `cols` (contiguous).
        strided: bool,
    },
    /// `rows × cols` row-major, each column its own segment, scanned down the rows
    /// (`cumsum(dim=0)`); rows are `row_stride` elements apart. Columns are not lifted to
    /// `(value, head)` pairs: their own kernel shape keeps each column apart
    /// (scan-codegen/templates/columns.cu.tera).
    Columns,
}

impl Segments {
    /// Whether the scan restarts at segment starts: every rule but [`Segments::None`].
    pub fn is_segmented(self) -> bool {
        !matches!(self, Segments::None)
    }

    /// Whether the kernels scan `(value, head)` pairs: every segment rule but columns, which
    /// have a kernel shape of their own.
    pub fn lifts_elements(self) -> bool {
        self.is_segmented() && self != Segments::Columns
    }

    /// Whether a kernel built for `self` runs data for `given`: the same rule, or contiguous
    /// rows on a strided-rows kernel (a row stride equal to cols).
    pub fn accepts(self, given: Segments) -> bool {
        given == self
            || (self == Segments::Rows { strided: true }
                && given == Segments::Rows { strided: false })
    }

    /// The name the templates switch on.
    pub fn kind_name(self) -> &'static str {
        match self {
            Segments::None => "none",
            Segments::Flags => "flags",
            Segments::Keys(_) => "keys",
            Segments::Offsets(_) => "offsets",
            Segments::Rows { .. } => "rows",
            Segments::Columns => "columns",
        }
    }
}

/// A scan's shape: its direction and its segments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScanVariant {
    /// Forward (prefix) or reverse (suffix).
    pub direction: Direction,
    /// Where segments start ([`Segments::None`]: one segment).
    pub segments: Segments,
}

impl ScanVariant {
    /// The flat forward scan.
    pub const FLAT: ScanVariant = ScanVariant {
        direction: Direction::Forward,
        segments: Segments::None,
    };

    /// The same variant, run in reverse ([`Direction::Reverse`]).
    pub fn reverse(mut self) -> ScanVariant {
        self.direction = Direction::Reverse;
        self
    }

    /// The same variant with the segment rule `segments`.
    pub fn segments(mut self, segments: Segments) -> ScanVariant {
        self.segments = segments;
        self
    }

    /// Whether this is [`ScanVariant::FLAT`]: forward, unsegmented.
    pub fn is_flat(self) -> bool {
        self == ScanVariant::FLAT
    }

    /// Whether `algorithm` can run this variant. Segmented scans are single-pass only: the
    /// reduce-then-scan hierarchy would scan `(value, head)` pairs in its spine, a second
    /// element type per kernel, and read the input (with its keys, flags or offsets) twice,
    /// where the single-pass kernel reads it once.
    pub fn supported_by(self, algorithm: Algorithm) -> Result<(), String> {
        if self.segments.is_segmented() && algorithm.is_hierarchical() {
            return Err(format!(
                "segmented scans ({}) run on the single-pass algorithm only: the {} hierarchy would scan (value, head) pairs in its spine and read the input twice; use --algo single-pass",
                self.segments, algorithm
            ));
        }
        if let Segments::Keys(k) = self.segments {
            if k.is_float() {
                return Err(format!(
                    "keys of type {} cannot mark segments: float keys compare unequal to themselves when NaN; use an integer key",
                    k.name()
                ));
            }
        }
        Ok(())
    }

    /// Suffix of snapshot and file names: empty for the flat scan, else e.g. `__reverse`,
    /// `__keys-u32`, `__reverse__rows-strided`.
    pub fn name_suffix(self) -> String {
        let mut s = String::new();
        if self.direction == Direction::Reverse {
            s.push_str("__reverse");
        }
        if self.segments.is_segmented() {
            s.push_str("__");
            s.push_str(&self.segments.to_string());
        }
        s
    }
}

impl fmt::Display for Segments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segments::None => f.write_str("none"),
            Segments::Flags => f.write_str("flags"),
            Segments::Keys(k) => write!(f, "keys-{}", k.name()),
            Segments::Offsets(w) => write!(f, "offsets-{}", w.prim().name()),
            Segments::Rows { strided: false } => f.write_str("rows"),
            Segments::Rows { strided: true } => f.write_str("rows-strided"),
            Segments::Columns => f.write_str("columns"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(ScanVariant::FLAT.name_suffix(), "");
        assert_eq!(ScanVariant::FLAT.reverse().name_suffix(), "__reverse");
        let v = ScanVariant::FLAT
            .reverse()
            .segments(Segments::Rows { strided: true });
        assert_eq!(v.name_suffix(), "__reverse__rows-strided");
        let k = ScanVariant::FLAT.segments(Segments::Keys(PrimType::U32));
        assert_eq!(k.name_suffix(), "__keys-u32");
    }

    #[test]
    fn segmented_is_single_pass_only() {
        let v = ScanVariant::FLAT.segments(Segments::Flags);
        assert!(v.supported_by(Algorithm::SinglePass).is_ok());
        let e = v.supported_by(Algorithm::Blelloch).unwrap_err();
        assert!(e.contains("single-pass"), "{e}");
        assert!(ScanVariant::FLAT
            .reverse()
            .supported_by(Algorithm::KoggeStone)
            .is_ok());
        assert!(ScanVariant::FLAT
            .segments(Segments::Keys(PrimType::F32))
            .supported_by(Algorithm::SinglePass)
            .is_err());
    }
}
