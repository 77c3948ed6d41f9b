#![warn(missing_docs)]

//! Code generation: an [`OpSpec`] + algorithm + mode + tuning policy -> one self-contained `.cu`.
//!
//! The kernel ABI (entry names, parameters, launch shapes, temporary storage) is documented in
//! ARCHITECTURE.md at the workspace root; the runtime relies on it.

pub mod layout;
mod policy;
mod render;
mod variant;
mod words;

pub use policy::{FusedTile, InputSize, InputSizeLimits, SizedShapes, TuningPolicy};
pub use render::{
    generate, generate_fused, generate_variant, snapshot_name, snapshot_source, CodegenError,
    GeneratedScan, MAX_TRANSFORM_INPUTS,
};
pub use scan_core::{OpSpec, TransformSpec};
pub use variant::{Direction, OffsetWidth, ScanVariant, Segments};

use std::fmt;

/// Which device-wide scan algorithm the generated code implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Algorithm {
    /// Register/warp-shuffle Kogge-Stone tiles, device-wide by reduce-then-scan hierarchy.
    KoggeStone,
    /// Bank-padded shared-memory Blelloch tiles, device-wide by the same hierarchy.
    Blelloch,
    /// One launch: decoupled look-back over tiles taken in order from an atomic counter.
    SinglePass,
}

impl Algorithm {
    /// Every algorithm, in declaration order.
    pub const ALL: [Algorithm; 3] = [
        Algorithm::KoggeStone,
        Algorithm::Blelloch,
        Algorithm::SinglePass,
    ];

    /// Kebab-case name used by the CLI and in snapshot names.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::KoggeStone => "kogge-stone",
            Algorithm::Blelloch => "blelloch",
            Algorithm::SinglePass => "single-pass",
        }
    }

    /// Parses a name as [`Algorithm::name`] writes it; `None` for any other string.
    pub fn from_name(s: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name() == s)
    }

    /// Whether the algorithm is the multi-kernel reduce-then-scan hierarchy.
    pub fn is_hierarchical(self) -> bool {
        !matches!(self, Algorithm::SinglePass)
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Inclusive: `out[i] = in[0] ⊕ … ⊕ in[i]`. Exclusive: `out[i] = e ⊕ in[0] ⊕ … ⊕ in[i-1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum ScanMode {
    /// `out[i]` includes `in[i]`.
    Inclusive,
    /// `out[i]` stops before `in[i]`; `out[0]` is the identity (or the initial value).
    Exclusive,
}

impl ScanMode {
    /// Both modes, inclusive first.
    pub const ALL: [ScanMode; 2] = [ScanMode::Inclusive, ScanMode::Exclusive];

    /// Lowercase name (`inclusive`, `exclusive`) used by the CLI and in snapshot names.
    pub fn name(self) -> &'static str {
        match self {
            ScanMode::Inclusive => "inclusive",
            ScanMode::Exclusive => "exclusive",
        }
    }
}

impl fmt::Display for ScanMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
