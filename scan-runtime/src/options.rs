//! What a scanner computes and how: algorithm, inclusive/exclusive, tuning.

use scan_codegen::{Algorithm, Direction, ScanMode, ScanVariant, Segments, TuningPolicy};

/// Where the CPU backend ([`crate::CpuScanner`]) runs a scan. The GPU ignores it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CpuThreads {
    /// rayon's global pool (`RAYON_NUM_THREADS`, else one thread per core), shared with the
    /// rest of the program; sequential below 32 Ki elements. The default.
    #[default]
    Global,
    /// On the calling thread only: no pool, no thread started.
    Sequential,
    /// A pool of its own with this many threads, started when the scanner is built and kept
    /// for its lifetime (1 is [`CpuThreads::Sequential`]).
    Pool(usize),
}

/// Options for building a scanner. `ScanOptions::default()` is an inclusive single-pass scan
/// with the default tuning for the device (and, on the CPU, rayon's global pool).
///
/// ```
/// use scan_runtime::{Algorithm, CpuThreads, ScanOptions};
/// let opts = ScanOptions::default().algorithm(Algorithm::Blelloch).exclusive();
/// assert!(opts.policy.is_none());
/// assert_eq!(ScanOptions::default().cpu_threads(4).cpu, CpuThreads::Pool(4));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScanOptions {
    /// The GPU algorithm (the CPU backend has one of its own).
    pub algorithm: Algorithm,
    /// Inclusive or exclusive.
    pub mode: ScanMode,
    /// Launch shape; `None` picks `TuningPolicy::for_scan(sm, algorithm, op, variant, ...)`
    /// (a fused scan's tile is sized by its staged arrays: `TuningPolicy::for_transform`).
    pub policy: Option<TuningPolicy>,
    /// Direction and segment rule (compiled into the kernel): [`ScanVariant::FLAT`] by default.
    pub variant: ScanVariant,
    /// Where the CPU backend runs: rayon's global pool, this thread, or a pool of its own.
    pub cpu: CpuThreads,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            algorithm: Algorithm::SinglePass,
            mode: ScanMode::Inclusive,
            policy: None,
            variant: ScanVariant::FLAT,
            cpu: CpuThreads::Global,
        }
    }
}

impl ScanOptions {
    /// The default options.
    pub fn new() -> ScanOptions {
        ScanOptions::default()
    }

    /// The GPU algorithm.
    pub fn algorithm(mut self, algorithm: Algorithm) -> ScanOptions {
        self.algorithm = algorithm;
        self
    }

    /// Inclusive or exclusive.
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

    /// Where the CPU backend runs (see [`CpuThreads`]).
    pub fn cpu(mut self, cpu: CpuThreads) -> ScanOptions {
        self.cpu = cpu;
        self
    }

    /// The CPU backend runs on a pool of `threads` threads of its own (1: on the calling
    /// thread; 0: rayon's global pool, the default).
    pub fn cpu_threads(self, threads: usize) -> ScanOptions {
        self.cpu(match threads {
            0 => CpuThreads::Global,
            1 => CpuThreads::Sequential,
            n => CpuThreads::Pool(n),
        })
    }

    /// The CPU backend scans on the calling thread.
    pub fn cpu_sequential(self) -> ScanOptions {
        self.cpu(CpuThreads::Sequential)
    }

    /// The policy to use on compute capability `sm` for a scan by `op`, fused with `transform`
    /// when given.
    pub fn resolved_policy(
        &self,
        sm: u32,
        op: &scan_core::OpSpec,
        transform: Option<&scan_core::TransformSpec>,
    ) -> TuningPolicy {
        self.policy.unwrap_or_else(|| {
            TuningPolicy::for_scan(sm, self.algorithm, op, self.variant, transform)
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
