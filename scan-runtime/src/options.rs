//! What a scanner computes and how: algorithm, inclusive/exclusive, tuning.

use scan_codegen::{Algorithm, Direction, ScanMode, ScanVariant, Segments, TuningPolicy};

/// Options for building a scanner. `ScanOptions::default()` is an inclusive single-pass scan
/// with the default tuning for the device.
///
/// ```
/// use scan_runtime::{Algorithm, ScanOptions};
/// let opts = ScanOptions::default().algorithm(Algorithm::Blelloch).exclusive();
/// assert!(opts.policy.is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScanOptions {
    pub algorithm: Algorithm,
    pub mode: ScanMode,
    /// Launch shape; `None` picks `TuningPolicy::for_variant(sm, algorithm, elem_size, ...)`.
    pub policy: Option<TuningPolicy>,
    /// Direction and segment rule (compiled into the kernel): [`ScanVariant::FLAT`] by default.
    pub variant: ScanVariant,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            algorithm: Algorithm::SinglePass,
            mode: ScanMode::Inclusive,
            policy: None,
            variant: ScanVariant::FLAT,
        }
    }
}

impl ScanOptions {
    pub fn new() -> ScanOptions {
        ScanOptions::default()
    }

    pub fn algorithm(mut self, algorithm: Algorithm) -> ScanOptions {
        self.algorithm = algorithm;
        self
    }

    pub fn mode(mut self, mode: ScanMode) -> ScanOptions {
        self.mode = mode;
        self
    }

    /// `out[i] = in[0] ⊕ … ⊕ in[i]` (the default).
    pub fn inclusive(self) -> ScanOptions {
        self.mode(ScanMode::Inclusive)
    }

    /// `out[i] = identity ⊕ in[0] ⊕ … ⊕ in[i-1]`.
    pub fn exclusive(self) -> ScanOptions {
        self.mode(ScanMode::Exclusive)
    }

    /// Overrides the device's default tuning.
    pub fn policy(mut self, policy: TuningPolicy) -> ScanOptions {
        self.policy = Some(policy);
        self
    }

    /// The policy to use on compute capability `sm` for elements of `elem_size` bytes.
    pub fn resolved_policy(&self, sm: u32, elem_size: usize, elem_align: usize) -> TuningPolicy {
        self.policy.unwrap_or_else(|| {
            TuningPolicy::for_variant(sm, self.algorithm, elem_size, elem_align, self.variant)
        })
    }

    /// A suffix scan: `out[i]` combines `in[n-1], …, in[i]` (inclusive), in that order.
    pub fn reverse(mut self) -> ScanOptions {
        self.variant.direction = Direction::Reverse;
        self
    }

    /// Restart the scan at segment heads given by `rule` (the data comes with each scan:
    /// [`crate::DeviceSegments`], [`crate::HostSegments`]). Single-pass only.
    pub fn segmented(mut self, rule: Segments) -> ScanOptions {
        self.variant.segments = rule;
        self
    }
}
