//! One rank of a sharded scan on a GPU: reduce, all-gather the totals, fold the preceding ones on
//! the device, scan seeded with that prefix (the scheme of the module docs).

use super::{agree, or_abort, DeviceShardExchange, ShardDescriptor, ShardError};
use crate::capture::{self, Capture};
use crate::device_buffer::DeviceBuffer;
use crate::error::{alloc, driver, ScanError};
use crate::gpu::Gpu;
use crate::options::ScanOptions;
use crate::reduce::Reducer;
use crate::scanner::Scanner;
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceRepr};
use scan_codegen::ScanMode;
use scan_core::ScanOp;
use std::sync::Arc;

/// One rank's sharded scan of `Op` on its GPU, over the exchange `X` (NCCL, or
/// [`super::ThreadExchange`] for several ranks on one GPU in tests).
///
/// Built collectively: every rank calls [`ShardedScanner::new`] (it all-gathers the
/// [`ShardDescriptor`], so mismatched element types, operators or modes are an error on every
/// rank). Then each scan is collective too: every rank calls [`ShardedScanner::scan_device`] (or
/// the host-memory [`ShardedScanner::scan`]) once per scan, with its own shard.
///
/// With a device-native exchange the scan is enqueued on the caller's stream without waiting,
/// and can be captured into a CUDA graph after [`ShardedScanner::prepare`]. Use
/// [`ShardedScanner::synchronize`] (bounded by the exchange's timeout) rather than the stream's
/// own synchronize, so that a failed peer is an error, not a hang.
pub struct ShardedScanner<Op: ScanOp, X: DeviceShardExchange> {
    exchange: X,
    scanner: Scanner<Op>,
    reducer: Reducer<Op>,
    /// This shard's total (one element).
    local_total: DeviceBuffer,
    /// Every rank's total, rank order (`size` elements).
    gathered: DeviceBuffer,
    /// The fold of the totals of ranks `0..rank` (one element): the local scan's initial value.
    prefix: DeviceBuffer,
    /// The stream of the last scan: a scan on another stream is ordered after it.
    last_stream: Option<Arc<CudaStream>>,
    /// The shard length [`ShardedScanner::ready_for`] last readied everything for.
    prepared_for: Option<u64>,
}

impl<Op: ScanOp, X: DeviceShardExchange> std::fmt::Debug for ShardedScanner<Op, X> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedScanner")
            .field("rank", &self.exchange.rank())
            .field("size", &self.exchange.size())
            .field("scanner", &self.scanner)
            .finish()
    }
}

impl<Op: ScanOp, X: DeviceShardExchange> ShardedScanner<Op, X>
where
    Op::Elem: DeviceRepr,
{
    /// Builds this rank's scanner on `gpu` (compiles, or finds cached, the operator's scan and
    /// reduction kernels), then agrees with the other ranks on the descriptor. Collective: every
    /// rank must call it. A local failure aborts the exchange, so the others fail too.
    pub fn new(gpu: &Gpu, opts: ScanOptions, exchange: X) -> Result<Self, ShardError> {
        let built = or_abort(&exchange, || {
            let scanner = gpu.scanner::<Op>(opts)?;
            let reducer = gpu.reducer::<Op>()?;
            let stream = gpu.default_stream();
            let elem = std::mem::size_of::<Op::Elem>() as u64;
            let size = exchange.size().max(1) as u64;
            let local_total = DeviceBuffer::new(&stream, elem, false, "the shard's total")?;
            let gathered = DeviceBuffer::new(&stream, elem * size, false, "the shards' totals")?;
            let prefix = DeviceBuffer::new(&stream, elem, false, "the shard's prefix")?;
            stream
                .synchronize()
                .map_err(driver("allocating the sharded scan's buffers"))?;
            Ok((scanner, reducer, local_total, gathered, prefix))
        })?;
        exchange.watch_phase(true);
        let agreed = agree(
            &exchange,
            ShardDescriptor::of::<Op>(opts.mode, exchange.size()),
        );
        exchange.watch_phase(false);
        agreed?;
        let (scanner, reducer, local_total, gathered, prefix) = built;
        Ok(ShardedScanner {
            exchange,
            scanner,
            reducer,
            local_total,
            gathered,
            prefix,
            last_stream: None,
            prepared_for: None,
        })
    }

    /// This rank, `0..size()`.
    pub fn rank(&self) -> usize {
        self.exchange.rank()
    }

    /// The number of ranks in the group.
    pub fn size(&self) -> usize {
        self.exchange.size()
    }

    /// Inclusive or exclusive (the same on every rank: checked when the scanner was built).
    pub fn mode(&self) -> ScanMode {
        self.scanner.mode()
    }

    /// The exchange the ranks communicate through.
    pub fn exchange(&self) -> &X {
        &self.exchange
    }

    /// The local scanner (its algorithm, policy, GPU).
    pub fn scanner(&self) -> &Scanner<Op> {
        &self.scanner
    }

    /// Readies shards of up to `n` elements on `stream` for a CUDA graph capture: loads and sizes
    /// everything the scan and both reductions need. Not collective.
    pub fn prepare(&mut self, n: u64, stream: &Arc<CudaStream>) -> Result<(), ShardError> {
        self.follow(stream, Capture::None)?;
        self.scanner.prepare(n, stream)?;
        self.reducer
            .prepare(n.max(self.exchange.size() as u64), stream)?;
        Ok(())
    }

    /// Scans host memory: uploads the shard, runs the sharded scan, waits (bounded) and returns
    /// this rank's part of the result. Collective.
    pub fn scan(&mut self, shard: &[Op::Elem]) -> Result<Vec<Op::Elem>, ShardError> {
        let stream = self.scanner.gpu().default_stream();
        let (input, mut output) = or_abort(&self.exchange, || {
            if shard.is_empty() {
                let null = || stream.null::<Op::Elem>().map_err(driver("an empty buffer"));
                return Ok((null()?, null()?));
            }
            let bytes = std::mem::size_of_val(shard) as u64;
            let mut input = unsafe { stream.alloc::<Op::Elem>(shard.len()) }
                .map_err(alloc(bytes, "the device copy of the shard"))?;
            // SAFETY (above): every element is written by this copy before it is read.
            stream
                .memcpy_htod(shard, &mut input)
                .map_err(driver("copying the shard to the device"))?;
            // SAFETY: every element is written by the scan before it is read back.
            let output = unsafe { stream.alloc::<Op::Elem>(shard.len()) }
                .map_err(alloc(bytes, "the device copy of the result"))?;
            Ok((input, output))
        })?;
        self.scan_device(&stream, &input, &mut output)?;
        let mut result = shard.to_vec();
        if !shard.is_empty() {
            stream
                .memcpy_dtoh(&output, &mut result)
                .map_err(driver("copying the result to the host"))?;
        }
        self.synchronize(&stream)?;
        Ok(result)
    }

    /// Enqueues this rank's part of the sharded scan on `stream` (no wait with a device-native
    /// exchange). `input` and `output` have this rank's shard length (checked: a mismatch aborts
    /// the exchange, so the other ranks fail instead of waiting). Collective. Inside a CUDA graph
    /// capture the buffers follow the rules of [`Scanner::scan_device`].
    pub fn scan_device<I, O>(
        &mut self,
        stream: &Arc<CudaStream>,
        input: &I,
        output: &mut O,
    ) -> Result<(), ShardError>
    where
        I: DevicePtr<Op::Elem>,
        O: DevicePtrMut<Op::Elem>,
    {
        let n = input.len() as u64;
        let capture = or_abort(&self.exchange, || {
            ScanError::check_lengths(input.len(), output.len())?;
            Ok(capture::status(stream)?)
        })?;
        let (input_ptr, read) = input.device_ptr(stream);
        let (output_ptr, write) = output.device_ptr_mut(stream);
        if capture == Capture::Active {
            // As in Scanner::scan_device_with: no event recorded inside a capture.
            std::mem::forget((read, write));
            or_abort(&self.exchange, || {
                Ok(capture::check_buffers(stream, capture)?)
            })?;
            // SAFETY: live buffers of `n` elements each, ordered by the capture.
            unsafe { self.scan_device_ptr(stream, input_ptr, output_ptr, n) }
        } else {
            // SAFETY: live buffers of `n` elements each, ordered by cudarc's guards, which are
            // dropped (recording the use) after everything is enqueued.
            let result = unsafe { self.scan_device_ptr(stream, input_ptr, output_ptr, n) };
            drop((read, write));
            result
        }
    }

    /// [`ShardedScanner::scan_device`] on raw device addresses (`input == output` for in place),
    /// with no event tracking. Collective.
    ///
    /// # Safety
    /// As for [`Scanner::scan_device_ptr`]: `input` and `output` valid for `n` elements in this
    /// rank's context, ordered on `stream` after every access.
    pub unsafe fn scan_device_ptr(
        &mut self,
        stream: &Arc<CudaStream>,
        input: CUdeviceptr,
        output: CUdeviceptr,
        n: u64,
    ) -> Result<(), ShardError> {
        self.exchange.watch_phase(true);
        let result = self.ready_for(n, stream).and_then(|()| {
            // SAFETY: forwarded from the caller.
            unsafe {
                self.enqueue_reduce(stream, input, n)?;
                self.enqueue_exchange(stream)?;
                self.enqueue_finish(stream, input, output, n)
            }
        });
        self.exchange.watch_phase(false);
        result
    }

    /// Loads and sizes, before the collective, everything the scan of `n` elements will use, so
    /// that no host call after the collective waits for the device (where NCCL's kernel may wait
    /// for a peer). Inside a capture [`ShardedScanner::prepare`] must have done it already.
    pub(crate) fn ready_for(&mut self, n: u64, stream: &Arc<CudaStream>) -> Result<(), ShardError> {
        let size = self.exchange.size() as u64;
        let Self {
            exchange,
            scanner,
            reducer,
            prepared_for,
            ..
        } = self;
        // The steady state scans one size again and again: prepare each size once in a row.
        if *prepared_for == Some(n) {
            return Ok(());
        }
        or_abort(exchange, || {
            if capture::status(stream)? == Capture::Active {
                return Ok(());
            }
            scanner.prepare(n, stream)?;
            reducer.prepare(n.max(size), stream)?;
            *prepared_for = Some(n);
            Ok(())
        })
    }

    /// Also writes the total of the whole array (every rank's shard) to the element at `total`,
    /// after a scan ([`ShardedScanner::scan_device`]) on the same stream. Not collective.
    ///
    /// # Safety
    /// `total` must be a device address of one element in this rank's context, ordered on
    /// `stream`.
    pub unsafe fn global_total_ptr(
        &mut self,
        stream: &Arc<CudaStream>,
        total: CUdeviceptr,
    ) -> Result<(), ShardError> {
        let size = self.exchange.size() as u64;
        // SAFETY: `gathered` holds `size` elements written by the last scan's exchange.
        unsafe {
            self.reducer
                .reduce_device_ptr(stream, self.gathered.ptr(), size, 0, total)?
        };
        Ok(())
    }

    /// Waits for the scans enqueued on `stream`, bounded by the exchange's timeout: a peer that
    /// failed or vanished is an error here, not a hang.
    pub fn synchronize(&self, stream: &Arc<CudaStream>) -> Result<(), ShardError> {
        self.exchange.synchronize(stream)
    }

    /// Phase 1: this shard's total into `local_total`. A failure aborts the exchange (the peers
    /// would otherwise wait for this rank's contribution).
    ///
    /// # Safety
    /// As for [`ShardedScanner::scan_device_ptr`].
    pub(crate) unsafe fn enqueue_reduce(
        &mut self,
        stream: &Arc<CudaStream>,
        input: CUdeviceptr,
        n: u64,
    ) -> Result<(), ShardError> {
        let total = self.local_total.ptr();
        let Self {
            exchange,
            reducer,
            last_stream,
            ..
        } = self;
        or_abort(exchange, || {
            let capture = capture::status(stream)?;
            follow(last_stream, stream, capture)?;
            // SAFETY: forwarded; `total` is this scanner's one-element buffer.
            unsafe { reducer.reduce_device_ptr(stream, input, n, 0, total)? };
            Ok(())
        })
    }

    /// Phase 2: every rank's total into `gathered` (the collective).
    ///
    /// # Safety
    /// After [`ShardedScanner::enqueue_reduce`] on the same stream.
    pub(crate) unsafe fn enqueue_exchange(
        &mut self,
        stream: &Arc<CudaStream>,
    ) -> Result<(), ShardError> {
        let bytes = std::mem::size_of::<Op::Elem>();
        // SAFETY: `local_total` holds one element, `gathered` `size` of them; both are this
        // scanner's, ordered on `stream` by `follow`.
        unsafe {
            self.exchange.all_gather_device(
                stream,
                self.local_total.ptr(),
                self.gathered.ptr(),
                bytes,
            )
        }
    }

    /// Phase 3: fold the totals of ranks `0..rank` into `prefix` (the identity for rank 0), then
    /// scan the shard after it. Nothing collective is left, so a failure here aborts nothing.
    ///
    /// # Safety
    /// As for [`ShardedScanner::scan_device_ptr`], after [`ShardedScanner::enqueue_exchange`].
    pub(crate) unsafe fn enqueue_finish(
        &mut self,
        stream: &Arc<CudaStream>,
        input: CUdeviceptr,
        output: CUdeviceptr,
        n: u64,
    ) -> Result<(), ShardError> {
        let rank = self.exchange.rank() as u64;
        // SAFETY: `gathered` holds `size > rank` elements, `prefix` one; the input/output
        // contract is the caller's.
        unsafe {
            self.reducer.reduce_device_ptr(
                stream,
                self.gathered.ptr(),
                rank,
                0,
                self.prefix.ptr(),
            )?;
            self.scanner
                .scan_device_ptr_with(stream, input, output, n, self.prefix.ptr(), 0)?;
        }
        Ok(())
    }

    fn follow(&mut self, stream: &Arc<CudaStream>, capture: Capture) -> Result<(), ShardError> {
        follow(&mut self.last_stream, stream, capture)
    }
}

/// Orders `stream` after the previous scan's stream (the small buffers are shared), as the
/// scanner's workspace does for its scratch.
fn follow(
    last: &mut Option<Arc<CudaStream>>,
    stream: &Arc<CudaStream>,
    capture: Capture,
) -> Result<(), ShardError> {
    if let Some(previous) = last {
        if previous != stream {
            if capture == Capture::Active {
                return Err(ScanError::CaptureAfterOtherStream.into());
            }
            stream.join(previous).map_err(driver(
                "ordering the stream after the sharded scan's previous launch",
            ))?;
        }
    }
    *last = Some(stream.clone());
    Ok(())
}

impl<Op: ScanOp, X: DeviceShardExchange> Drop for ShardedScanner<Op, X> {
    fn drop(&mut self) {
        if let Some(last) = self.last_stream.clone() {
            for buffer in [&mut self.local_total, &mut self.gathered, &mut self.prefix] {
                buffer.free_after(&last);
            }
        }
    }
}
