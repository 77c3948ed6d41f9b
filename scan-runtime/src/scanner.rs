//! A compiled scan for one operator, ready to launch: host and device entry points.

use crate::abi;
use crate::error::{alloc, driver, ScanError};
use crate::gpu::{Gpu, LoadedScan, ModuleKey};
use crate::launch_plan::{self, Buffer, Kernel, LaunchPlan};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{
    CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg,
};
use scan_codegen::{Algorithm, ScanMode, TuningPolicy};
use scan_core::ScanOp;
use std::marker::PhantomData;
use std::sync::Arc;

/// A scan of `Op` on one GPU, built by [`Gpu::scanner`].
///
/// Owns temporary device storage (single-pass tile state, or the hierarchy's level buffers),
/// allocated on first use, reused, and grown when a larger input arrives; hence `&mut self`.
/// Launches on any stream of its device without host synchronisation: when the stream differs
/// from the previous launch's, the new stream waits (on the device) for the previous launches.
pub struct Scanner<Op: ScanOp> {
    gpu: Gpu,
    loaded: Arc<LoadedScan>,
    tile: u64,
    /// The small-tile variant for inputs that leave multiprocessors idle with `loaded`'s
    /// tiles (`TuningPolicy::for_small_input`): its key until first used, then the module.
    small: SmallVariant,
    workspace: Workspace<Op::Elem>,
    _op: PhantomData<fn() -> Op>,
}

enum SmallVariant {
    None,
    NotLoaded(Box<ModuleKey>),
    Loaded(Arc<LoadedScan>, u64),
}

/// Temporary device storage shared by all launches of one scanner.
struct Workspace<T> {
    /// All hierarchy levels in one allocation (see `LaunchPlan::level_offset`).
    levels: Option<CudaSlice<T>>,
    /// Single-pass tile state, zeroed once when allocated.
    tile_state: Option<CudaSlice<u8>>,
    /// Epoch of the last single-pass launch on `tile_state`; 0 = none yet.
    epoch: u32,
    /// The stream of the last launch: later launches elsewhere are ordered after it.
    last_stream: Option<Arc<CudaStream>>,
}

impl<Op: ScanOp> std::fmt::Debug for Scanner<Op> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scanner")
            .field("gpu", &self.gpu)
            .field("algorithm", &self.loaded.generated.algorithm)
            .field("mode", &self.loaded.generated.mode)
            .field("policy", &self.loaded.generated.policy)
            .finish()
    }
}

impl<Op: ScanOp> Scanner<Op>
where
    Op::Elem: DeviceRepr,
{
    pub(crate) fn new(gpu: Gpu, loaded: Arc<LoadedScan>, small: Option<ModuleKey>) -> Scanner<Op> {
        let tile = abi::tile_items(&loaded.generated);
        Scanner {
            gpu,
            loaded,
            tile,
            small: small.map_or(SmallVariant::None, |k| SmallVariant::NotLoaded(Box::new(k))),
            workspace: Workspace {
                levels: None,
                tile_state: None,
                epoch: 0,
                last_stream: None,
            },
            _op: PhantomData,
        }
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    pub fn algorithm(&self) -> Algorithm {
        self.loaded.generated.algorithm
    }

    pub fn mode(&self) -> ScanMode {
        self.loaded.generated.mode
    }

    /// The shape the kernels were built with: the requested policy, with its register cap
    /// loosened where ptxas would have spilled under it.
    pub fn policy(&self) -> TuningPolicy {
        self.loaded.generated.policy
    }

    /// Local memory of the scan's kernels in bytes per thread (register spills, stack): 0
    /// unless even the loosest register cap spills.
    pub fn local_memory_bytes(&self) -> u32 {
        self.loaded.local_bytes
    }

    /// Elements per tile (one block's share).
    pub fn tile_items(&self) -> u64 {
        self.tile
    }

    /// The generated CUDA source this scanner runs.
    pub fn source(&self) -> &str {
        &self.loaded.generated.source
    }

    /// `"gpu: NVIDIA H100 80GB HBM3 (sm_90)"`.
    pub fn backend_name(&self) -> String {
        self.gpu.backend_name()
    }

    /// Scans host memory into a new vector (on the device's default stream; waits for it).
    pub fn scan(&mut self, input: &[Op::Elem]) -> Result<Vec<Op::Elem>, ScanError> {
        let mut out = input.to_vec();
        self.scan_in_place_host(&mut out)?;
        Ok(out)
    }

    /// Scans host memory into `output`, which must have the input's length.
    pub fn scan_into(
        &mut self,
        input: &[Op::Elem],
        output: &mut [Op::Elem],
    ) -> Result<(), ScanError> {
        ScanError::check_lengths(input.len(), output.len())?;
        if input.is_empty() {
            return Ok(());
        }
        let stream = self.gpu.default_stream();
        let mut staging = self.upload(&stream, input)?;
        self.scan_device_in_place(&stream, &mut staging)?;
        download(&stream, &staging, output)
    }

    /// Scans host memory in place.
    pub fn scan_in_place_host(&mut self, data: &mut [Op::Elem]) -> Result<(), ScanError> {
        if data.is_empty() {
            return Ok(());
        }
        let stream = self.gpu.default_stream();
        let mut staging = self.upload(&stream, data)?;
        self.scan_device_in_place(&stream, &mut staging)?;
        download(&stream, &staging, data)
    }

    /// Enqueues a scan of device memory on `stream`; returns without waiting for it. `input`
    /// and `output` are [`CudaSlice`]s or views of the same length (checked before launching).
    pub fn scan_device<I, O>(
        &mut self,
        stream: &Arc<CudaStream>,
        input: &I,
        output: &mut O,
    ) -> Result<(), ScanError>
    where
        I: DevicePtr<Op::Elem>,
        O: DevicePtrMut<Op::Elem>,
    {
        ScanError::check_lengths(input.len(), output.len())?;
        self.check_device(stream)?;
        self.check_device(input.stream())?;
        self.check_device(output.stream())?;
        let n = input.len() as u64;
        let (input_ptr, _read) = input.device_ptr(stream);
        let (output_ptr, _write) = output.device_ptr_mut(stream);
        self.launch(stream, input_ptr, output_ptr, n)
    }

    /// Enqueues an in-place scan of device memory on `stream`; returns without waiting.
    pub fn scan_device_in_place<D>(
        &mut self,
        stream: &Arc<CudaStream>,
        data: &mut D,
    ) -> Result<(), ScanError>
    where
        D: DevicePtrMut<Op::Elem>,
    {
        self.check_device(stream)?;
        self.check_device(data.stream())?;
        let n = data.len() as u64;
        let (ptr, _write) = data.device_ptr_mut(stream);
        self.launch(stream, ptr, ptr, n)
    }

    /// The kernel for an input of `n` elements and its tile: the small-tile variant when the
    /// default tiles would not give every multiprocessor one (the scan is then latency-bound),
    /// loaded on first use; else the default. Both share the tile state: its layout does not
    /// depend on the tile size, and launches of either keep the epoch sequence.
    fn variant_for(&mut self, n: u64) -> Result<(Arc<LoadedScan>, u64), ScanError> {
        let small_input = n.div_ceil(self.tile) < u64::from(self.gpu.sm_count());
        if small_input {
            if let SmallVariant::NotLoaded(key) = &self.small {
                let loaded = self.gpu.load((**key).clone())?;
                let tile = abi::tile_items(&loaded.generated);
                self.small = SmallVariant::Loaded(loaded, tile);
            }
            if let SmallVariant::Loaded(loaded, tile) = &self.small {
                return Ok((loaded.clone(), *tile));
            }
        }
        Ok((self.loaded.clone(), self.tile))
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

    fn upload(
        &self,
        stream: &Arc<CudaStream>,
        host: &[Op::Elem],
    ) -> Result<CudaSlice<Op::Elem>, ScanError> {
        let bytes = std::mem::size_of_val(host) as u64;
        // SAFETY: every element is written by the copy below before anything reads it.
        let mut staging = unsafe { stream.alloc::<Op::Elem>(host.len()) }
            .map_err(alloc(bytes, "the device copy of the data"))?;
        stream
            .memcpy_htod(host, &mut staging)
            .map_err(driver("copying the data to the device"))?;
        Ok(staging)
    }

    /// Enqueues the launch plan for `n` elements from `input` to `output` (may be equal).
    fn launch(
        &mut self,
        stream: &Arc<CudaStream>,
        input: CUdeviceptr,
        output: CUdeviceptr,
        n: u64,
    ) -> Result<(), ScanError> {
        let (loaded, tile) = self.variant_for(n)?;
        let plan = launch_plan::plan(self.algorithm(), n, tile)?;
        if plan.launches.is_empty() {
            return Ok(());
        }
        let generated = &loaded.generated;
        let ws = &mut self.workspace;
        ws.follow(stream)?;
        ws.reserve(
            stream,
            &plan,
            abi::tile_state_bytes(generated, plan.single_pass_tiles),
        )?;
        let epoch = if plan.single_pass_tiles > 0 {
            let epoch = ws.next_epoch(abi::max_epoch(generated));
            ws.rezero_on_wrap(stream, epoch)?;
            epoch
        } else {
            0
        };

        let (levels_ptr, _levels_written) = match ws.levels.as_mut() {
            Some(levels) => {
                let (ptr, guard) = levels.device_ptr_mut(stream);
                (ptr, Some(guard))
            }
            None => (0, None),
        };
        let (tile_state_ptr, _state_written) = match ws.tile_state.as_mut() {
            Some(state) => {
                let (ptr, guard) = state.device_ptr_mut(stream);
                (ptr, Some(guard))
            }
            None => (0, None),
        };
        let elem = std::mem::size_of::<Op::Elem>() as u64;
        let pointer = |buffer: Buffer| match buffer {
            Buffer::Input => input,
            Buffer::Output => output,
            Buffer::Level(l) => levels_ptr + plan.level_offset(l) * elem,
        };
        let block = generated.policy.block_threads;
        for launch in &plan.launches {
            let function = loaded.function(launch.kernel);
            let (src, dst, count) = (pointer(launch.input), pointer(launch.output), launch.n);
            let prefixes: CUdeviceptr = launch.prefixes.map_or(0, pointer);
            let config = LaunchConfig {
                grid_dim: (launch.grid, 1, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut args = stream.launch_builder(function);
            args.arg(&src).arg(&dst).arg(&count);
            match launch.kernel {
                Kernel::SinglePass => {
                    args.arg(&tile_state_ptr).arg(&epoch);
                }
                Kernel::ReduceTiles => {}
                Kernel::ScanTiles | Kernel::ScanSpine => {
                    args.arg(&prefixes);
                }
            }
            // SAFETY: the arguments are exactly the entry's ABI signature (ARCHITECTURE.md):
            // device pointers to `n` elements (lengths checked by the callers), the temporary
            // buffers sized by the same plan, `n` as u64 and the epoch as u32.
            unsafe { args.launch(config) }.map_err(|source| ScanError::Launch {
                kernel: launch.kernel.name(),
                source,
            })?;
        }
        if epoch != 0 {
            // Field access, not commit_epoch(): the buffer guards above still borrow `ws`.
            ws.epoch = epoch;
        }
        ws.last_stream = Some(stream.clone());
        Ok(())
    }
}

impl<T: DeviceRepr> Workspace<T> {
    /// Orders `stream` after this workspace's last launch if that was on another stream: the
    /// temporary storage is shared. A device-side wait, not a host sync.
    fn follow(&mut self, stream: &Arc<CudaStream>) -> Result<(), ScanError> {
        if let Some(last) = &self.last_stream {
            if last != stream {
                stream.join(last).map_err(driver(
                    "ordering the stream after the scanner's previous launch",
                ))?;
                self.last_stream = Some(stream.clone());
            }
        }
        Ok(())
    }

    /// Makes the buffers large enough for `plan`, allocating on `stream` (already ordered after
    /// every earlier use by `follow`).
    fn reserve(
        &mut self,
        stream: &Arc<CudaStream>,
        plan: &LaunchPlan,
        tile_state_bytes: u64,
    ) -> Result<(), ScanError> {
        let level_elems = plan.level_elems();
        if level_elems > 0 && self.levels.as_ref().map_or(0, |l| l.len() as u64) < level_elems {
            retire(self.levels.take(), stream)?;
            let bytes = level_elems * std::mem::size_of::<T>() as u64;
            // SAFETY: level buffers are written by reduce_tiles before any kernel reads them.
            let levels = unsafe { stream.alloc::<T>(level_elems as usize) }
                .map_err(alloc(bytes, "the hierarchy's level buffers"))?;
            self.levels = Some(levels);
        }
        if plan.single_pass_tiles > 0
            && self.tile_state.as_ref().map_or(0, |s| s.len() as u64) < tile_state_bytes
        {
            retire(self.tile_state.take(), stream)?;
            // Zeroed once, here: status words of epoch 0 mean "written by no launch".
            let state = stream
                .alloc_zeros::<u8>(tile_state_bytes as usize)
                .map_err(alloc(tile_state_bytes, "the single-pass tile state"))?;
            self.tile_state = Some(state);
            self.epoch = 0;
        }
        Ok(())
    }

    /// The epoch of the next launch: 1, 2, ..., max, 1, 2, ...; never 0, which zeroed memory
    /// means. It only becomes current (`commit_epoch`) once that launch is enqueued: the kernel
    /// takes tile ids from the counter of the epoch's parity and zeroes the other one, so
    /// consecutive launches must alternate parity (MAX_EPOCH is even, so the wrap does too).
    fn next_epoch(&self, max: u32) -> u32 {
        if self.epoch >= max {
            1
        } else {
            self.epoch + 1
        }
    }

    #[cfg(test)]
    fn commit_epoch(&mut self, epoch: u32) {
        self.epoch = epoch;
    }

    /// Before the epoch wraps to 1, zeroes the tile state again (on `stream`, no host sync), so
    /// that a slot last written 2^30 launches ago can never pass for this launch's.
    fn rezero_on_wrap(&mut self, stream: &Arc<CudaStream>, epoch: u32) -> Result<(), ScanError> {
        if epoch == 1 && self.epoch != 0 {
            if let Some(state) = self.tile_state.as_mut() {
                stream
                    .memset_zeros(state)
                    .map_err(driver("zeroing the single-pass tile state at epoch wrap"))?;
            }
        }
        Ok(())
    }
}

/// Frees `old` once `stream`'s work so far (which includes every use of it) is done: the free
/// is queued on the stream `old` was allocated on, so that stream waits for `stream` first.
fn retire<U>(old: Option<CudaSlice<U>>, stream: &Arc<CudaStream>) -> Result<(), ScanError> {
    if let Some(old) = old {
        if old.stream() != stream {
            old.stream()
                .join(stream)
                .map_err(driver("ordering the release of outgrown scratch memory"))?;
        }
    }
    Ok(())
}

impl<T> Drop for Workspace<T> {
    fn drop(&mut self) {
        // The buffers are freed on the streams they were allocated on; those must wait for the
        // last launch if it ran elsewhere. Errors cannot be reported from drop.
        let Some(last) = &self.last_stream else {
            return;
        };
        let wait = |s: &Arc<CudaStream>| {
            if s != last {
                let _ = s.join(last);
            }
        };
        if let Some(levels) = &self.levels {
            wait(levels.stream());
        }
        if let Some(state) = &self.tile_state {
            wait(state.stream());
        }
    }
}

fn download<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
    device: &CudaSlice<T>,
    host: &mut [T],
) -> Result<(), ScanError> {
    stream
        .memcpy_dtoh(device, host)
        .map_err(driver("copying the result to the host"))?;
    // Kernel faults surface here.
    stream
        .synchronize()
        .map_err(driver("waiting for the scan to finish"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_wrap_to_one_and_never_zero() {
        let mut ws: Workspace<u32> = Workspace {
            levels: None,
            tile_state: None,
            epoch: 0,
            last_stream: None,
        };
        let mut seen = Vec::new();
        for _ in 0..4 {
            let e = ws.next_epoch(3);
            ws.commit_epoch(e);
            seen.push(e);
        }
        assert_eq!(seen, [1, 2, 3, 1]);
        // A launch that failed to enqueue does not commit: the next one reuses its epoch.
        assert_eq!(ws.next_epoch(3), 2);
        assert_eq!(ws.next_epoch(3), 2);
        ws.epoch = u32::MAX;
        assert_eq!(ws.next_epoch(u32::MAX), 1);
    }

    #[test]
    fn lengths_are_checked() {
        assert!(ScanError::check_lengths(3, 3).is_ok());
        assert!(matches!(
            ScanError::check_lengths(3, 2),
            Err(ScanError::LengthMismatch {
                input: 3,
                output: 2
            })
        ));
    }
}
