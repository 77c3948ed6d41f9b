//! The checks a policy passes before a kernel is generated from it
//! ([`TuningPolicy::validate`]): shapes the templates can render, limits of the hardware, and
//! the numbers the templates `static_assert` again.

use super::TuningPolicy;
use crate::layout;
use crate::render::CodegenError;
use crate::Algorithm;

impl TuningPolicy {
    /// Checks that the generated code can be built and launched with this policy for an element
    /// of `elem_size` bytes (alignment `elem_align`).
    pub fn validate(
        &self,
        algorithm: Algorithm,
        elem_size: usize,
        elem_align: usize,
    ) -> Result<(), CodegenError> {
        self.validate_shape(elem_size)?;
        if self.resident_tiles && algorithm != Algorithm::SinglePass {
            return Err(CodegenError::InvalidPolicy(format!(
                "resident_tiles is a single-pass launch shape, not one of {algorithm}"
            )));
        }
        let smem = layout::static_shared_bytes(self, algorithm, elem_size, elem_align);
        let limit = Self::max_shared_bytes(algorithm);
        if smem > limit {
            return Err(CodegenError::InvalidPolicy(format!(
                "a block would need {smem} bytes of shared memory ({} threads x {} items of {elem_size} bytes), \
                 over the {limit} bytes a {algorithm} block may use; lower block_threads or items_per_thread",
                self.block_threads,
                self.items_per_thread,
            )));
        }
        Ok(())
    }

    /// [`TuningPolicy::validate`] without the shared-memory bound: what a kernel whose tile
    /// exchange is not the element's (a fused scan stages its arrays' own values,
    /// [`crate::layout::fused_smem_tile_elems`]) checks first, sizing its shared memory itself.
    pub fn validate_shape(&self, elem_size: usize) -> Result<(), CodegenError> {
        let bad = |msg: String| Err(CodegenError::InvalidPolicy(msg));
        if self.block_threads == 0 || self.block_threads & 31 != 0 {
            return bad(format!(
                "block_threads = {} must be a positive multiple of 32 (the warp size)",
                self.block_threads
            ));
        }
        if self.block_threads > 1024 {
            return bad(format!(
                "block_threads = {} exceeds the CUDA limit of 1024 threads per block",
                self.block_threads
            ));
        }
        let max_items = self.max_items_per_thread(elem_size);
        if self.items_per_thread == 0 || self.items_per_thread > max_items {
            return bad(format!(
                "items_per_thread = {} must be between 1 and {max_items} for {elem_size}-byte elements (items are held in registers)",
                self.items_per_thread,
            ));
        }
        if self.min_blocks_per_sm == 0 || self.min_blocks_per_sm > 32 {
            return bad(format!(
                "min_blocks_per_sm = {} must be between 1 (no register cap) and 32 (the most blocks an SM holds)",
                self.min_blocks_per_sm
            ));
        }
        if !self.vector_bytes.is_power_of_two() || self.vector_bytes > Self::MAX_VECTOR_BYTES {
            return bad(format!(
                "vector_bytes = {} must be 1, 2, 4, 8 or 16 (the widest global access is 16 bytes)",
                self.vector_bytes
            ));
        }
        if self.look_back_window == 0 || self.look_back_window > 32 {
            return bad(format!(
                "look_back_window = {} must be between 1 and 32 (one status per lane of a warp)",
                self.look_back_window
            ));
        }
        if self.l2_prefetch_tiles > Self::MAX_L2_PREFETCH_TILES {
            return bad(format!(
                "l2_prefetch_tiles = {} must be at most {} (L2 would evict a tile fetched that far ahead before its block reads it)",
                self.l2_prefetch_tiles,
                Self::MAX_L2_PREFETCH_TILES
            ));
        }
        if self.max_epoch < 2 || self.max_epoch > Self::MAX_EPOCH {
            return bad(format!(
                "max_epoch = {} must be between 2 and {} (30 bits of a status word; the tile state is swept every max_epoch - 1 launches)",
                self.max_epoch,
                Self::MAX_EPOCH
            ));
        }
        if self.thread_runs == 0 || !self.items_per_thread.is_multiple_of(self.thread_runs) {
            return bad(format!(
                "thread_runs = {} must divide items_per_thread = {} (a thread's items split into runs of equal length)",
                self.thread_runs, self.items_per_thread
            ));
        }
        if !matches!(self.packed_access_bytes, 4 | 16) {
            return bad(format!(
                "packed_access_bytes = {} must be 4 or 16 (bytes a packed thread's run moves per shared-memory access)",
                self.packed_access_bytes
            ));
        }
        if self.offset_reads == 0 || self.offset_reads > Self::MAX_OFFSET_READS {
            return bad(format!(
                "offset_reads = {} must be between 1 and {} (entries a thread holds in registers per round of marking segment heads)",
                self.offset_reads,
                Self::MAX_OFFSET_READS
            ));
        }
        if elem_size == 0 {
            return bad(
                "the element has size 0; scan elements must occupy at least one byte".into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Algorithm;

    #[test]
    fn defaults_are_valid_for_every_size() {
        for sm in [70, 75, 80, 86, 89, 90, 100] {
            for alg in Algorithm::ALL {
                for size in [1usize, 2, 4, 8, 12, 16, 24, 32, 64, 100, 128, 256, 512] {
                    let align = size
                        .min(8)
                        .next_power_of_two()
                        .min(size.next_power_of_two());
                    let align = if size % align == 0 { align } else { 1 };
                    let p = TuningPolicy::for_target(sm, alg, size);
                    p.validate(alg, size, align)
                        .unwrap_or_else(|e| panic!("sm{sm} {alg} {size}B: {e}"));
                }
            }
        }
    }

    fn err(p: TuningPolicy, size: usize) -> String {
        p.validate(Algorithm::SinglePass, size, size.min(8))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn invalid_policies_are_rejected_with_a_reason() {
        let p = TuningPolicy::new;
        assert!(
            err(p(100, 4), 4).contains("multiple of 32"),
            "{}",
            err(p(100, 4), 4)
        );
        assert!(err(p(0, 4), 4).contains("multiple of 32"));
        assert!(err(p(2048, 4), 4).contains("1024"));
        assert!(err(p(256, 0), 4).contains("items_per_thread = 0"));
        assert!(err(p(256, 65), 4).contains("between 1 and 64"));
        assert!(
            err(p(1024, 64), 8).contains("shared memory"),
            "{}",
            err(p(1024, 64), 8)
        );
        // Past the static limit: dynamic shared memory for single-pass blocks only.
        assert!(p(1024, 16).validate(Algorithm::SinglePass, 8, 8).is_ok());
        assert!(p(1024, 16)
            .validate(Algorithm::Blelloch, 8, 8)
            .unwrap_err()
            .to_string()
            .contains("shared memory"));
        assert!(err(p(256, 4), 0).contains("size 0"));
        let with = |vector_bytes, look_back_window| TuningPolicy {
            vector_bytes,
            look_back_window,
            ..p(128, 8)
        };
        assert!(err(with(12, 32), 4).contains("vector_bytes = 12"));
        assert!(err(with(32, 32), 4).contains("vector_bytes = 32"));
        assert!(err(with(16, 0), 4).contains("look_back_window = 0"));
        assert!(err(with(16, 33), 4).contains("between 1 and 32"));
        let prefetch = |l2_prefetch_tiles| TuningPolicy {
            l2_prefetch_tiles,
            ..p(128, 8)
        };
        assert!(err(prefetch(4097), 4).contains("l2_prefetch_tiles = 4097"));
        let cap = |min_blocks_per_sm| TuningPolicy {
            min_blocks_per_sm,
            ..p(128, 8)
        };
        let runs = |thread_runs| TuningPolicy {
            thread_runs,
            ..p(128, 8)
        };
        assert!(err(runs(0), 4).contains("thread_runs = 0"));
        assert!(err(runs(3), 4).contains("must divide"));
        assert!(runs(8).validate(Algorithm::SinglePass, 4, 4).is_ok());
        assert!(err(cap(0), 4).contains("min_blocks_per_sm = 0"));
        assert!(err(cap(33), 4).contains("between 1"));
        assert!(prefetch(4096).validate(Algorithm::SinglePass, 4, 4).is_ok());
        assert!(with(1, 1).validate(Algorithm::SinglePass, 4, 4).is_ok());
        assert!(p(1024, 1).validate(Algorithm::Blelloch, 4, 4).is_ok());
        assert!(p(32, 1).validate(Algorithm::KoggeStone, 1, 1).is_ok());
    }
}
