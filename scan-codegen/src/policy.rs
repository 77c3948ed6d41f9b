//! Tuning numbers, chosen in Rust per architecture and element size; templates only see them as
//! parameters (and `static_assert` them).

use crate::Algorithm;

/// Launch shape of the generated kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct TuningPolicy {
    /// Threads per block; a multiple of 32.
    pub block_threads: u32,
    /// Elements each thread holds in registers.
    pub items_per_thread: u32,
}

impl TuningPolicy {
    /// Elements per tile (one block's share).
    pub fn tile_items(&self) -> u32 {
        self.block_threads * self.items_per_thread
    }

    /// The default policy for compute capability `sm` (e.g. 90) and an element of `elem_size` bytes.
    pub fn for_target(sm: u32, algorithm: Algorithm, elem_size: usize) -> TuningPolicy {
        let _ = (sm, algorithm);
        // Keep about 64 bytes of elements per thread in registers: enough loads in flight to
        // cover memory latency without spilling.
        let items = (64 / elem_size.max(1)).clamp(1, 16) as u32;
        TuningPolicy { block_threads: 256, items_per_thread: items }
    }
}
