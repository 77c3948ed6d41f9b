//! A device-wide reduction of one operator: `init ⊕ in[0] ⊕ … ⊕ in[n-1]` written to device
//! memory, in sequence order (non-commutative operators are fine), with no host round trip.
//!
//! Built from the hierarchical kernels of the kernel ABI (ARCHITECTURE.md): `scangen_reduce_tiles`
//! folds each tile of the input into one element per tile, repeated until one tile is left; then
//! one block of `scangen_scan_tiles` scans that last tile into a small scratch buffer and writes
//! its total (seeded with `init`) to the destination. Traffic: one read of the input, plus about
//! `n / tile` elements for the levels. No module beyond the operator's hierarchical scan module is
//! needed (it is shared with any hierarchical [`crate::Scanner`] of the same operator).

use crate::capture::{self, Capture};
use crate::error::{driver, ScanError};
use crate::gpu::{Gpu, LoadedScan, ModuleKey};
use crate::launch_plan::{Kernel, MAX_GRID_BLOCKS};
use crate::workspace::{Needs, Workspace};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{
    CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg,
};
use scan_codegen::{Algorithm, ScanMode, TuningPolicy};
use scan_core::ScanOp;
use std::marker::PhantomData;
use std::sync::Arc;

/// A reduction of `Op` on one GPU, built by [`Gpu::reducer`]. Owns its scratch (like a
/// [`crate::Scanner`]): `&mut self`, grown on demand, [`Reducer::prepare`] before a CUDA graph
/// capture.
pub struct Reducer<Op: ScanOp> {
    gpu: Gpu,
    loaded: Arc<LoadedScan>,
    tile: u64,
    /// The fused (lift) module whose `scangen_reduce_tiles` reads the input arrays: the first
    /// level of a transform reduction ([`crate::TransformReducer`]).
    pub(crate) lifted: Option<Arc<LoadedScan>>,
    workspace: Workspace,
    _op: PhantomData<fn() -> Op>,
}

impl<Op: ScanOp> std::fmt::Debug for Reducer<Op> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reducer")
            .field("gpu", &self.gpu)
            .field("tile", &self.tile)
            .finish()
    }
}

/// The launches of one reduction: `levels[i]` elements are reduced into level `i + 1`; the
/// last level (at most one tile) is then scanned by one block, which writes the total.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReducePlan {
    /// Element counts: `lens[0] = n`, `lens[i + 1] = ceil(lens[i] / tile)`, the last <= tile.
    pub(crate) lens: Vec<u64>,
    pub(crate) tile: u64,
}

impl ReducePlan {
    pub(crate) fn new(n: u64, tile: u64) -> Result<ReducePlan, ScanError> {
        assert!(tile >= 2, "a tile holds at least two elements");
        let blocks = n.div_ceil(tile);
        if blocks > MAX_GRID_BLOCKS {
            return Err(ScanError::TooLarge {
                n,
                blocks,
                max_blocks: MAX_GRID_BLOCKS,
            });
        }
        let mut lens = vec![n];
        while *lens.last().expect("non-empty") > tile {
            let next = lens.last().expect("non-empty").div_ceil(tile);
            lens.push(next);
        }
        Ok(ReducePlan { lens, tile })
    }

    /// The plan of a reduction whose first level lifts the input arrays: that level always
    /// runs (even for one tile), since only `scangen_reduce_tiles` of the fused module reads
    /// them; the levels after it are plain elements.
    pub(crate) fn lifted(n: u64, tile: u64) -> Result<ReducePlan, ScanError> {
        let mut plan = ReducePlan::new(n, tile)?;
        if plan.lens.len() == 1 {
            plan.lens.push(n.div_ceil(tile));
        }
        Ok(plan)
    }

    /// Elements of scratch: every level after the input, then one tile for the final scan's
    /// (discarded) output.
    pub(crate) fn scratch_elems(&self) -> u64 {
        self.lens[1..].iter().sum::<u64>() + self.tile
    }

    /// Offset in elements of level `l >= 1` in the scratch.
    fn level_offset(&self, l: usize) -> u64 {
        self.lens[1..l].iter().sum()
    }
}

impl Gpu {
    /// A device-wide reduction of `Op` ([`Reducer`]). Compiles (or finds cached) the operator's
    /// hierarchical kernels.
    pub fn reducer<Op: ScanOp>(&self) -> Result<Reducer<Op>, ScanError>
    where
        Op::Elem: DeviceRepr,
    {
        let op = crate::op_spec::device_op_of::<Op>();
        let declared = op.element.size();
        let actual = std::mem::size_of::<Op::Elem>();
        if declared != actual {
            return Err(ScanError::ElementLayout { declared, actual });
        }
        let algorithm = Algorithm::KoggeStone;
        let loaded = self.load(ModuleKey {
            op,
            algorithm,
            mode: ScanMode::Inclusive,
            variant: scan_codegen::ScanVariant::FLAT,
            policy: TuningPolicy::for_target(self.sm(), algorithm, declared),
            transform: None,
        })?;
        let tile = crate::abi::tile_items(&loaded.generated);
        Ok(Reducer {
            gpu: self.clone(),
            loaded,
            tile,
            lifted: None,
            workspace: Workspace::new(),
            _op: PhantomData,
        })
    }
}

impl<Op: ScanOp> Reducer<Op>
where
    Op::Elem: DeviceRepr,
{
    /// The GPU the reducer runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Elements per tile of the reduction kernels.
    pub fn tile_items(&self) -> u64 {
        self.tile
    }

    /// Loads nothing (the module is loaded at construction) but sizes the scratch for inputs of
    /// up to `n` elements and uploads the identity, on `stream`: after this, reductions of at most
    /// `n` elements can be captured into a CUDA graph.
    pub fn prepare(&mut self, n: u64, stream: &Arc<CudaStream>) -> Result<(), ScanError> {
        self.check_device(stream)?;
        if capture::status(stream)? == Capture::Active {
            return Err(ScanError::NotPreparedForCapture {
                n,
                needs: "Reducer::prepare itself (it allocates)".into(),
            });
        }
        let plan = match self.lifted {
            Some(_) => ReducePlan::lifted(n, self.tile)?,
            None => ReducePlan::new(n, self.tile)?,
        };
        self.workspace.follow(stream, Capture::None)?;
        self.workspace.reserve(stream, self.needs(&plan))?;
        self.workspace
            .identity(stream, Capture::None, &[Op::identity()])?;
        self.workspace.used(stream, Capture::None);
        Ok(())
    }

    /// Reduces host memory: `init ⊕ input[0] ⊕ … ⊕ input[n-1]` (on the default stream; waits).
    pub fn reduce(&mut self, input: &[Op::Elem], init: Op::Elem) -> Result<Op::Elem, ScanError> {
        let stream = self.gpu.default_stream();
        let mut total = [init];
        let init_dev = stream
            .clone_htod(&[init])
            .map_err(driver("uploading the initial value"))?;
        let mut total_dev = stream
            .clone_htod(&[init])
            .map_err(driver("allocating the total"))?;
        if !input.is_empty() {
            let data = stream
                .clone_htod(input)
                .map_err(driver("copying the data to the device"))?;
            self.reduce_device(&stream, &data, Some(&init_dev), &mut total_dev)?;
        }
        stream
            .memcpy_dtoh(&total_dev, &mut total)
            .map_err(driver("copying the total to the host"))?;
        stream
            .synchronize()
            .map_err(driver("waiting for the reduction"))?;
        Ok(total[0])
    }

    /// Enqueues the reduction of `input` (after element 0 of `init`, when given) into element 0
    /// of `total`, on `stream`; returns without waiting.
    pub fn reduce_device<I, T>(
        &mut self,
        stream: &Arc<CudaStream>,
        input: &I,
        init: Option<&dyn DevicePtr<Op::Elem>>,
        total: &mut T,
    ) -> Result<(), ScanError>
    where
        I: DevicePtr<Op::Elem>,
        T: DevicePtrMut<Op::Elem>,
    {
        if total.len() == 0 {
            return Err(ScanError::EmptyExtra { what: "total" });
        }
        if init.map(|b| b.len()) == Some(0) {
            return Err(ScanError::EmptyExtra { what: "init" });
        }
        self.check_device(stream)?;
        let capture = capture::status(stream)?;
        let n = input.len() as u64;
        let (input_ptr, read) = input.device_ptr(stream);
        let (total_ptr, write) = total.device_ptr_mut(stream);
        let init = init.map(|b| b.device_ptr(stream));
        let init_ptr = init.as_ref().map_or(0, |(p, _)| *p);
        let guards = (read, write, init.map(|(_, g)| g));
        if capture == Capture::Active {
            // As in Scanner::scan_device_with: no event recorded inside a capture.
            std::mem::forget(guards);
            capture::check_buffers(stream, capture)?;
        }
        // SAFETY: the pointers come from live buffers of the stated lengths, ordered on `stream`
        // by cudarc's guards (or, inside a capture, by the capture itself).
        unsafe { self.reduce_device_ptr(stream, input_ptr, n, init_ptr, total_ptr) }
    }

    /// Enqueues the reduction of `n` elements at device address `input` (after the element at
    /// `init`, unless 0) into the element at `total`, on `stream`, with no event tracking.
    ///
    /// # Safety
    ///
    /// `input` must be valid for `n` elements, `init` (when not 0) and `total` for one each, all
    /// in this reducer's context, ordered on `stream` after their writers; `total` must not
    /// overlap the others.
    pub unsafe fn reduce_device_ptr(
        &mut self,
        stream: &Arc<CudaStream>,
        input: CUdeviceptr,
        n: u64,
        init: CUdeviceptr,
        total: CUdeviceptr,
    ) -> Result<(), ScanError> {
        // SAFETY: the caller's contract.
        unsafe { self.reduce_levels(stream, None, input, n, init, total) }
    }

    /// The reduction of `n` positions of the input arrays `inputs` through the fused lift.
    ///
    /// # Safety
    ///
    /// As [`Reducer::reduce_device_ptr`], each input array valid for `n` values of its type.
    pub(crate) unsafe fn reduce_arrays_ptr(
        &mut self,
        stream: &Arc<CudaStream>,
        inputs: &[CUdeviceptr],
        n: u64,
        init: CUdeviceptr,
        total: CUdeviceptr,
    ) -> Result<(), ScanError> {
        let lifted = self.lifted.clone().expect("a transform reducer");
        assert_eq!(inputs.len(), lifted.generated.input_arrays());
        // SAFETY: the caller's contract.
        unsafe { self.reduce_levels(stream, Some((&lifted, inputs)), 0, n, init, total) }
    }

    /// The launches of a reduction: level 0 from `input`, or through the lift of `lifted`'s
    /// arrays when given.
    unsafe fn reduce_levels(
        &mut self,
        stream: &Arc<CudaStream>,
        lifted: Option<(&Arc<LoadedScan>, &[CUdeviceptr])>,
        input: CUdeviceptr,
        n: u64,
        init: CUdeviceptr,
        total: CUdeviceptr,
    ) -> Result<(), ScanError> {
        self.check_device(stream)?;
        let capture = capture::status(stream)?;
        let elem = std::mem::size_of::<Op::Elem>();
        if n == 0 {
            let from = if init != 0 {
                init
            } else {
                self.workspace.follow(stream, capture)?;
                let ptr = self
                    .workspace
                    .identity(stream, capture, &[Op::identity()])?;
                self.workspace.used(stream, capture);
                ptr
            };
            // SAFETY: one element at each address, ordered on `stream` (callers' contract).
            return unsafe {
                cudarc::driver::result::memcpy_dtod_async(total, from, elem, stream.cu_stream())
            }
            .map_err(driver("writing the total of an empty reduction"));
        }
        let plan = match lifted {
            Some(_) => ReducePlan::lifted(n, self.tile)?,
            None => ReducePlan::new(n, self.tile)?,
        };
        let needs = self.needs(&plan);
        if capture == Capture::Active {
            if let Some(missing) = self.workspace.shortfall(needs) {
                return Err(ScanError::NotPreparedForCapture { n, needs: missing });
            }
        }
        self.workspace.follow(stream, capture)?;
        self.workspace.reserve(stream, needs)?;
        let scratch = self.workspace.levels_ptr();
        let elem = elem as u64;
        let level = |l: usize| {
            if l == 0 {
                input
            } else {
                scratch + plan.level_offset(l) * elem
            }
        };
        let tail = scratch + plan.lens[1..].iter().sum::<u64>() * elem;
        let block = self.loaded.generated.policy.block_threads;
        let config = |grid: u64| LaunchConfig {
            grid_dim: (grid as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        let levels = plan.lens.len();
        for l in 0..levels - 1 {
            let (src, dst, count) = (level(l), level(l + 1), plan.lens[l]);
            let kernel = Kernel::level_reduction(l);
            let mut args = match lifted {
                Some((module, inputs)) if l == 0 => {
                    let mut args = stream.launch_builder(module.function(kernel));
                    // reduce_tiles(const I0* in0, ..., T* tile_totals, u64 n): the lift reads
                    // every input array where a plain reduction reads `in`.
                    for ptr in inputs {
                        args.arg(ptr);
                    }
                    args
                }
                _ => {
                    let mut args = stream.launch_builder(self.loaded.function(kernel));
                    args.arg(&src);
                    args
                }
            };
            args.arg(&dst).arg(&count);
            // SAFETY: reduce_tiles/reduce_spine(const T* in, T* tile_totals, u64 n): `src` holds
            // `count` elements, `dst` ceil(count / tile) (the plan sized the scratch), grid
            // checked.
            unsafe { args.launch(config(count.div_ceil(self.tile))) }.map_err(|source| {
                ScanError::Launch {
                    kernel: kernel.name(),
                    source,
                }
            })?;
        }
        let (src, count) = (level(levels - 1), plan.lens[levels - 1]);
        let no_prefixes: CUdeviceptr = 0;
        let mut args = stream.launch_builder(self.loaded.function(Kernel::ScanTiles));
        args.arg(&src).arg(&tail).arg(&count);
        args.arg(&no_prefixes).arg(&init).arg(&total);
        // SAFETY: scan_tiles(in, out, n, tile_prefixes, init, total) on one tile: `src` holds
        // `count <= tile` elements, `tail` one tile of scratch, init/total one element or NULL.
        unsafe { args.launch(config(1)) }.map_err(|source| ScanError::Launch {
            kernel: Kernel::ScanTiles.name(),
            source,
        })?;
        self.workspace.used(stream, capture);
        Ok(())
    }

    fn needs(&self, plan: &ReducePlan) -> Needs {
        Needs {
            level_bytes: plan.scratch_elems() * std::mem::size_of::<Op::Elem>() as u64,
            tile_state_bytes: 0,
        }
    }

    fn check_device(&self, stream: &Arc<CudaStream>) -> Result<(), ScanError> {
        if **stream.context() == **self.gpu.context() {
            Ok(())
        } else {
            Err(ScanError::WrongDevice {
                scanner: self.gpu.ordinal(),
                stream: stream.context().ordinal(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ReducePlan;

    #[test]
    fn plan_levels_end_in_one_tile() {
        let p = ReducePlan::new(1, 1024).unwrap();
        assert_eq!(p.lens, vec![1]);
        assert_eq!(p.scratch_elems(), 1024);
        let p = ReducePlan::new(1024, 1024).unwrap();
        assert_eq!(p.lens, vec![1024]);
        let p = ReducePlan::new(1025, 1024).unwrap();
        assert_eq!(p.lens, vec![1025, 2]);
        assert_eq!(p.level_offset(1), 0);
        let p = ReducePlan::new(3 << 31, 1024).unwrap();
        assert_eq!(p.lens, vec![3 << 31, 3 << 21, 3 << 11, 6]);
        assert_eq!(p.level_offset(3), (3 << 21) + (3 << 11));
        assert_eq!(p.scratch_elems(), (3 << 21) + (3 << 11) + 6 + 1024);
        assert!(ReducePlan::new(u64::MAX, 2).is_err());
    }
}
