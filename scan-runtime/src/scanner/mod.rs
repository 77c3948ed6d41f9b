//! A compiled scan for one operator, ready to launch: host and device entry points.

mod bytes;
pub(crate) mod engine;

pub use bytes::ByteScanner;
pub(crate) use engine::ScanEngine;

use crate::capture::{self, Capture};
use crate::error::{alloc, driver, ScanError};
use crate::extras::ScanExtras;
use crate::gpu::Gpu;
use crate::segments::{DeviceSegments, HostSegments};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr};
use engine::{copy_empty_total, Seeds, SegmentArgs};
use scan_codegen::{Algorithm, ScanMode, ScanVariant, Segments, TuningPolicy};
use scan_core::ScanOp;
use std::marker::PhantomData;
use std::sync::Arc;

/// A scan of `Op` on one GPU, built by [`Gpu::scanner`].
///
/// Owns temporary device storage (single-pass tile state, or the hierarchy's level buffers),
/// allocated on first use, reused, and grown when a larger input arrives; hence `&mut self`.
/// Launches on any stream of its device without host synchronisation: when the stream differs
/// from the previous launch's, the new stream waits (on the device) for the previous launches.
///
/// # CUDA graphs
///
/// Every algorithm can be captured into a CUDA graph and replayed: the single-pass kernel keeps
/// its launch state (epoch, tile counter) in the tile state and advances it itself, so each
/// replay is a correct new scan. Before the capture, call [`Scanner::prepare`] with the largest
/// input the graph will scan, on the capturing stream: it loads every kernel and sizes the
/// scratch, since a capture may not load modules or allocate. A scan inside a capture that
/// would need either is a [`ScanError::NotPreparedForCapture`]. The graph uses the scanner's
/// scratch: keep the scanner alive while the graph can run, and order replays with direct
/// launches of the same scanner (same stream, or events), as for any buffer a graph uses.
pub struct Scanner<Op: ScanOp> {
    engine: ScanEngine,
    _op: PhantomData<fn() -> Op>,
}

impl<Op: ScanOp> std::fmt::Debug for Scanner<Op> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scanner")
            .field("gpu", self.engine.gpu())
            .field("algorithm", &self.engine.algorithm())
            .field("mode", &self.engine.mode())
            .field("policy", &self.engine.requested_policy())
            .field(
                "built",
                &self.engine.default_built().map(|k| k.generated.policy),
            )
            .finish()
    }
}

impl<Op: ScanOp> Scanner<Op>
where
    Op::Elem: DeviceRepr,
{
    /// A scanner over `engine`, built for `Op` (its element size and identity).
    pub(crate) fn from_engine(engine: ScanEngine) -> Scanner<Op> {
        Scanner {
            engine,
            _op: PhantomData,
        }
    }

    /// The GPU the scanner runs on.
    pub fn gpu(&self) -> &Gpu {
        self.engine.gpu()
    }

    /// The device-wide algorithm the kernels implement ([`ScanOptions::algorithm`]).
    ///
    /// [`ScanOptions::algorithm`]: crate::ScanOptions::algorithm
    pub fn algorithm(&self) -> Algorithm {
        self.engine.algorithm()
    }

    /// Inclusive or exclusive.
    pub fn mode(&self) -> ScanMode {
        self.engine.mode()
    }

    /// The scan's direction and segment rule.
    pub fn variant(&self) -> ScanVariant {
        self.engine.variant()
    }

    /// The shape the default kernel was built with (the one inputs past the smaller shapes
    /// take; [`Scanner::policy_for`] gives any input's): the requested policy, with its register
    /// cap loosened where ptxas would have spilled under it. Builds that kernel if no scan has
    /// yet (a scanner compiles each kernel on first use).
    pub fn policy(&mut self) -> Result<TuningPolicy, ScanError> {
        self.engine.policy()
    }

    /// The policy the default kernel asks for ([`crate::ScanOptions::policy`], or the tuned default
    /// for this GPU and element), before its register ladder; nothing is built.
    pub fn requested_policy(&self) -> TuningPolicy {
        self.engine.requested_policy()
    }

    /// Whether the default kernel has been built: by a scan past the smaller shapes (or one
    /// they cannot launch), [`Scanner::prepare`] of such a size, or a question about it
    /// ([`Scanner::policy`], [`Scanner::source`], [`Scanner::local_memory_bytes`]).
    pub fn default_kernel_built(&self) -> bool {
        self.engine.default_built().is_some()
    }

    /// Local memory of the default kernel in bytes per thread (register spills, stack): 0
    /// unless even the loosest register cap spills. Builds that kernel if it is not yet.
    pub fn local_memory_bytes(&mut self) -> Result<u32, ScanError> {
        self.engine.local_memory_bytes()
    }

    /// Elements per tile of the default kernel (one block's share; the same on every rung of
    /// its register ladder, so known before it is built).
    pub fn tile_items(&self) -> u64 {
        self.engine.tile_items()
    }

    /// The generated CUDA source of the default kernel as built. Builds it if it is not yet.
    pub fn source(&mut self) -> Result<&str, ScanError> {
        self.engine.source()
    }

    /// `"gpu: NVIDIA H100 80GB HBM3 (sm_90)"`.
    pub fn backend_name(&self) -> String {
        self.engine.backend_name()
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
        let stream = self.engine.gpu().default_stream();
        let mut staging = self.upload(&stream, input)?;
        self.scan_device_in_place(&stream, &mut staging)?;
        download(&stream, &staging, output)
    }

    /// Scans host memory in place.
    pub fn scan_in_place_host(&mut self, data: &mut [Op::Elem]) -> Result<(), ScanError> {
        if data.is_empty() {
            return Ok(());
        }
        let stream = self.engine.gpu().default_stream();
        let mut staging = self.upload(&stream, data)?;
        self.scan_device_in_place(&stream, &mut staging)?;
        download(&stream, &staging, data)
    }

    /// Scans host memory after the initial value `init`; returns the scan and its total
    /// (`init ⊕ input[0] ⊕ … ⊕ input[n-1]`), as [`ScanExtras`] describes.
    pub fn scan_with_init(
        &mut self,
        input: &[Op::Elem],
        init: Op::Elem,
    ) -> Result<(Vec<Op::Elem>, Op::Elem), ScanError> {
        if input.is_empty() {
            return Ok((Vec::new(), init));
        }
        let stream = self.engine.gpu().default_stream();
        let staging = self.upload(&stream, input)?;
        let init_dev = self.upload(&stream, &[init])?;
        let mut total_dev = self.upload(&stream, &[init])?;
        // SAFETY: every element is written by the scan before it is read back.
        let mut output = unsafe { stream.alloc::<Op::Elem>(input.len()) }.map_err(alloc(
            std::mem::size_of_val(input) as u64,
            "the device copy of the result",
        ))?;
        let extras = ScanExtras::new().init(&init_dev).total(&mut total_dev);
        self.scan_device_with(&stream, &staging, &mut output, extras)?;
        let mut result = input.to_vec();
        let mut total = [init];
        stream
            .memcpy_dtoh(&total_dev, &mut total)
            .map_err(driver("copying the total to the host"))?;
        download(&stream, &output, &mut result)?;
        Ok((result, total[0]))
    }

    /// The shape of the kernel a scan of `n` elements runs, as built (its register cap loosened
    /// where ptxas would have spilled): an input-size shape's or the default's
    /// ([`TuningPolicy::input_size`]), and where `unaligned` (from or into buffers off a vector
    /// boundary, as sub-slices of byte buffers are) that shape's twin for such buffers where it
    /// has one ([`TuningPolicy::unaligned_twin`]). Builds and loads the kernel if it is not yet.
    pub fn policy_for(&mut self, n: u64, unaligned: bool) -> Result<TuningPolicy, ScanError> {
        self.engine.policy_for(n, unaligned)
    }

    /// Makes the scanner ready to scan up to `n` elements on `stream` without loading a module
    /// or allocating: loads every kernel variant an input of at most `n` elements can use and
    /// sizes the scratch for the largest, enqueued on `stream` (no host synchronisation). Call it
    /// before capturing scans into a CUDA graph, on the capturing stream, and launch the graph
    /// after it (on the same stream, or once the stream has synchronised).
    pub fn prepare(&mut self, n: u64, stream: &Arc<CudaStream>) -> Result<(), ScanError> {
        self.engine.prepare(n, stream)
    }

    /// Enqueues a scan of device memory on `stream`; returns without waiting for it. `input`
    /// and `output` are [`CudaSlice`]s or views of the same length (checked before launching).
    ///
    /// Inside a CUDA graph capture with cudarc's event tracking on (its default), cudarc makes
    /// the stream wait on each buffer's last recorded use, which CUDA only allows when that use
    /// is inside the same capture: buffers that are new, or last used inside the capture, work;
    /// a buffer last used outside it breaks the capture, reported as
    /// [`ScanError::CaptureInvalidated`]. [`Scanner::scan_device_ptr`] takes raw pointers and
    /// waits on nothing. The scan itself records no use of the buffers inside a capture, so
    /// they can be read and written outside it afterwards.
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
        self.scan_device_with(stream, input, output, ScanExtras::new())
    }

    /// [`Scanner::scan_device`] with an initial value read from device memory and/or the total
    /// written to device memory ([`ScanExtras`]). Every buffer is checked (lengths, device)
    /// before anything is launched.
    pub fn scan_device_with<I, O>(
        &mut self,
        stream: &Arc<CudaStream>,
        input: &I,
        output: &mut O,
        extras: ScanExtras<'_, Op::Elem>,
    ) -> Result<(), ScanError>
    where
        I: DevicePtr<Op::Elem>,
        O: DevicePtrMut<Op::Elem>,
    {
        ScanError::check_lengths(input.len(), output.len())?;
        extras.check_not_empty()?;
        let ScanExtras {
            init,
            total,
            segments,
        } = extras;
        let n = self
            .engine
            .check_segments(segments.as_ref(), input.len() as u64)?;
        let columns = segments
            .as_ref()
            .filter(|s| s.rule == Segments::Columns)
            .map(|s| (s.rows.0, s.rows.1));
        if let (Some((_, cols)), Some(t)) = (columns, &total) {
            if (t.len() as u64) < cols {
                return Err(ScanError::ColumnTotals {
                    len: t.len() as u64,
                    cols,
                });
            }
        }
        self.engine.check_device(stream)?;
        self.engine.check_device(input.stream())?;
        self.engine.check_device(output.stream())?;
        if let Some(b) = &init {
            self.engine.check_device(b.stream())?;
        }
        if let Some(b) = &total {
            self.engine.check_device(b.stream())?;
        }
        if let Some(b) = segments.as_ref().and_then(|s| s.buffer.as_ref()) {
            self.engine.check_device(b.stream())?;
        }
        let capture = capture::status(stream)?;
        let ready = self.engine.ready(stream, capture, n, columns)?;
        let empty_total_from = match (&ready, &total, &init) {
            (None, Some(_), None) => Some(self.engine.identity_on_device(stream, capture)?),
            _ => None,
        };
        let (input_ptr, read) = input.device_ptr(stream);
        let (output_ptr, write) = output.device_ptr_mut(stream);
        let init = init.map(|b| b.device_ptr(stream));
        let total = total.map(|b| b.device_ptr_mut(stream));
        let segment_read = segments
            .as_ref()
            .and_then(|s| s.buffer.as_ref())
            .map(|b| b.read(stream));
        let tile_cols_log2 = ready
            .as_ref()
            .and_then(|r| r.columns)
            .map_or(0, |c| c.tile_cols_log2);
        let segment = segments.as_ref().map_or(SegmentArgs::None, |s| {
            SegmentArgs::of(
                s,
                segment_read.as_ref().map_or(0, |(p, _)| *p),
                tile_cols_log2,
            )
        });
        let init_ptr = init.as_ref().map_or(0, |(p, _)| *p);
        let total_ptr = total.as_ref().map_or(0, |(p, _)| *p);
        let guards = (
            read,
            write,
            init.map(|(_, g)| g),
            total.map(|(_, g)| g),
            segment_read.map(|(_, g)| g),
        );
        if capture == Capture::Active {
            // A record inside the capture would make every later use of the buffers outside it
            // wait on a captured event, which CUDA rejects (and cudarc reports at its next call).
            std::mem::forget(guards);
            capture::check_buffers(stream, capture)?;
        }
        match ready {
            Some(ready) => {
                let seeds = Seeds {
                    init: init_ptr,
                    total: total_ptr,
                    segment,
                };
                self.engine
                    .enqueue(stream, capture, &ready, &[input_ptr], output_ptr, seeds)
            }
            None => copy_empty_total(
                stream,
                total_ptr,
                empty_total_from.unwrap_or(init_ptr),
                self.engine.elem_bytes(),
                columns.map_or(1, |(_, cols)| cols),
            ),
        }
    }

    /// Enqueues an in-place scan of device memory on `stream`; returns without waiting. Inside
    /// a capture, the buffer follows the rules of [`Scanner::scan_device`].
    pub fn scan_device_in_place<D>(
        &mut self,
        stream: &Arc<CudaStream>,
        data: &mut D,
    ) -> Result<(), ScanError>
    where
        D: DevicePtrMut<Op::Elem>,
    {
        self.engine.check_segments(None, data.len() as u64)?;
        self.engine.check_device(stream)?;
        self.engine.check_device(data.stream())?;
        let capture = capture::status(stream)?;
        let Some(ready) = self
            .engine
            .ready(stream, capture, data.len() as u64, None)?
        else {
            return Ok(());
        };
        let (ptr, write) = data.device_ptr_mut(stream);
        if capture == Capture::Active {
            // As in scan_device_with: no record of the use inside the capture.
            std::mem::forget(write);
            capture::check_buffers(stream, capture)?;
        }
        self.engine
            .enqueue(stream, capture, &ready, &[ptr], ptr, Seeds::NONE)
    }

    /// Enqueues a scan of `n` elements from device address `input` to `output` (equal for in
    /// place) on `stream`, with no cudarc event tracking: nothing waits on earlier uses of the
    /// buffers. For memory owned by other libraries, and for graph captures of buffers that were
    /// used outside the capture.
    ///
    /// # Safety
    ///
    /// `input` and `output` must be device addresses in this scanner's context, each valid for
    /// `n` elements of `Op::Elem` (aligned for it) until the scan has run, and ordered on
    /// `stream` after every write to the input and every access to the output.
    pub unsafe fn scan_device_ptr(
        &mut self,
        stream: &Arc<CudaStream>,
        input: CUdeviceptr,
        output: CUdeviceptr,
        n: u64,
    ) -> Result<(), ScanError> {
        self.scan_device_ptr_with(stream, input, output, n, 0, 0)
    }

    /// [`Scanner::scan_device_ptr`] with an initial value at device address `init` and the total
    /// written to `total` (0 for either: none), as [`ScanExtras`] describes.
    ///
    /// # Safety
    ///
    /// As for [`Scanner::scan_device_ptr`]; `init` and `total`, when not 0, must each hold one
    /// element, not overlap the input or output, and be ordered on `stream` like them.
    pub unsafe fn scan_device_ptr_with(
        &mut self,
        stream: &Arc<CudaStream>,
        input: CUdeviceptr,
        output: CUdeviceptr,
        n: u64,
        init: CUdeviceptr,
        total: CUdeviceptr,
    ) -> Result<(), ScanError> {
        self.engine.check_segments(None, n)?;
        let seeds = Seeds {
            init,
            total,
            segment: SegmentArgs::None,
        };
        // SAFETY: forwarded (one input array of `n` elements).
        unsafe { self.engine.scan_ptrs(stream, &[input], output, n, seeds) }
    }

    /// A scan of the fused input arrays `inputs` (`len` positions each) into `output`, seeded
    /// with `init` and writing `total` (0: none), as [`Scanner::scan_device_ptr_with`], segment
    /// by segment by `segments` for a segmented scanner (checked against its rule and `len`;
    /// column scans do not fuse).
    ///
    /// # Safety
    ///
    /// As for [`Scanner::scan_device_ptr_with`], each input array valid for `len` values of its
    /// type and `output` for `len` outputs.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn scan_arrays_ptr(
        &mut self,
        stream: &Arc<CudaStream>,
        inputs: &[CUdeviceptr],
        output: CUdeviceptr,
        len: u64,
        init: CUdeviceptr,
        total: CUdeviceptr,
        segments: Option<&DeviceSegments<'_>>,
    ) -> Result<(), ScanError> {
        let n = self.engine.check_segments(segments, len)?;
        if let Some(b) = segments.and_then(|s| s.buffer.as_ref()) {
            self.engine.check_device(b.stream())?;
        }
        let read = segments
            .and_then(|s| s.buffer.as_ref())
            .map(|b| b.read(stream));
        let segment = segments.map_or(SegmentArgs::None, |s| {
            SegmentArgs::of(s, read.as_ref().map_or(0, |(p, _)| *p), 0)
        });
        if capture::status(stream)? == Capture::Active {
            // As in scan_device_with: no record of the use inside the capture.
            std::mem::forget(read);
        }
        let seeds = Seeds {
            init,
            total,
            segment,
        };
        // SAFETY: forwarded; the segment data was checked against the rule and `len`.
        unsafe { self.engine.scan_ptrs(stream, inputs, output, n, seeds) }
    }

    /// An error unless the scanner was built for segment data of rule `given`.
    pub(crate) fn check_rule(&self, given: Segments) -> Result<(), ScanError> {
        self.engine.check_rule(given)
    }

    pub(crate) fn check_stream(&self, stream: &Arc<CudaStream>) -> Result<(), ScanError> {
        self.engine.check_device(stream)
    }

    /// Scans host memory segment by segment (the scanner's rule, `ScanOptions::segmented`) into
    /// a new vector; for rows with a stride, the elements between rows are copied unchanged.
    /// The data is checked on the host (offsets ascending and at most n, one flag or key per
    /// element, the rows inside the input) before anything is uploaded.
    pub fn scan_segmented(
        &mut self,
        input: &[Op::Elem],
        segments: HostSegments<'_>,
    ) -> Result<Vec<Op::Elem>, ScanError> {
        let n = match segments.matrix() {
            Some((rows, cols, row_stride)) => {
                ScanError::check_rows(rows, cols, row_stride, input.len() as u64)?
            }
            None => input.len() as u64,
        };
        segments.check(n)?;
        let mut result = input.to_vec();
        if n == 0 {
            // Nothing to launch; still an error for a scanner of another rule.
            self.engine.check_rule(segments.rule())?;
            return Ok(result);
        }
        let stream = self.engine.gpu().default_stream();
        let data = self.upload(&stream, input)?;
        let mut output = self.upload(&stream, input)?;
        let uploaded = segments.upload(&stream)?;
        let extras = ScanExtras::new().segments(uploaded.device());
        self.scan_device_with(&stream, &data, &mut output, extras)?;
        download(&stream, &output, &mut result)?;
        Ok(result)
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
