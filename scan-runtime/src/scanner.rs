//! A compiled scan for one operator, ready to launch: host and device entry points.

use crate::abi;
use crate::capture::{self, Capture};
use crate::column_plan::ColumnShape;
use crate::error::{alloc, driver, ScanError};
use crate::extras::ScanExtras;
use crate::gpu::{Gpu, LoadedScan, ModuleKey};
use crate::launch_plan::{self, Buffer, Kernel, LaunchPlan};
use crate::segments::{DeviceSegments, HostKeys, HostSegments};
use crate::workspace::{Needs, Workspace};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{
    CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg,
};
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
    gpu: Gpu,
    loaded: Arc<LoadedScan>,
    tile: u64,
    /// The small-tile variant for inputs that leave multiprocessors idle with `loaded`'s
    /// tiles (`TuningPolicy::for_small_input`): its key until first used, then the module.
    small: SmallVariant,
    workspace: Workspace,
    _op: PhantomData<fn() -> Op>,
}

enum SmallVariant {
    None,
    NotLoaded(Box<ModuleKey>),
    Loaded(Arc<LoadedScan>, u64),
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
            workspace: Workspace::new(),
            _op: PhantomData,
        }
    }

    /// The GPU the scanner runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The device-wide algorithm the kernels implement ([`ScanOptions::algorithm`]).
    ///
    /// [`ScanOptions::algorithm`]: crate::ScanOptions::algorithm
    pub fn algorithm(&self) -> Algorithm {
        self.loaded.generated.algorithm
    }

    /// Inclusive or exclusive.
    pub fn mode(&self) -> ScanMode {
        self.loaded.generated.mode
    }

    /// The scan's direction and segment rule.
    pub fn variant(&self) -> ScanVariant {
        self.loaded.generated.variant
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
        let stream = self.gpu.default_stream();
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

    /// Makes the scanner ready to scan up to `n` elements on `stream` without loading a module
    /// or allocating: loads every kernel variant an input of at most `n` elements can use and
    /// sizes the scratch for the largest, enqueued on `stream` (no host synchronisation). Call it
    /// before capturing scans into a CUDA graph, on the capturing stream, and launch the graph
    /// after it (on the same stream, or once the stream has synchronised).
    pub fn prepare(&mut self, n: u64, stream: &Arc<CudaStream>) -> Result<(), ScanError> {
        self.check_device(stream)?;
        if capture::status(stream)? == Capture::Active {
            return Err(ScanError::NotPreparedForCapture {
                n,
                needs: "Scanner::prepare itself (it loads modules and allocates)".into(),
            });
        }
        let mut needs = Needs::default();
        let mut sizes = vec![n];
        if let Some(largest_small) = self.largest_small_input() {
            sizes.push(n.min(largest_small));
        }
        for m in sizes {
            let (loaded, tile) = self.variant_for(m, Capture::None)?;
            needs = needs.max(self.needs(&loaded, &launch_plan::plan(self.algorithm(), m, tile)?));
            if self.variant().segments == Segments::Columns && m > 0 {
                // A column scan's slots depend on the matrix's shape: reserve for any shape.
                let policy = &loaded.generated.policy;
                let slots =
                    ColumnShape::slot_bound(m, policy.block_threads, policy.items_per_thread);
                needs = needs.max(Needs {
                    level_bytes: 0,
                    tile_state_bytes: abi::tile_state_bytes(&loaded.generated, slots),
                });
            }
        }
        self.workspace.follow(stream, Capture::None)?;
        self.workspace.reserve(stream, needs)?;
        // The total of an empty scan with no initial value is copied from here.
        self.workspace
            .identity(stream, Capture::None, &[Op::identity()])?;
        self.workspace.used(stream, Capture::None);
        Ok(())
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
        let ScanExtras {
            init,
            total,
            segments,
        } = extras;
        for (what, len) in [
            ("init", init.as_ref().map(|b| b.len())),
            ("total", total.as_ref().map(|b| b.len())),
        ] {
            if len == Some(0) {
                return Err(ScanError::EmptyExtra { what });
            }
        }
        let n = self.check_segments(segments.as_ref(), input.len() as u64)?;
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
        self.check_device(stream)?;
        self.check_device(input.stream())?;
        self.check_device(output.stream())?;
        if let Some(b) = &init {
            self.check_device(b.stream())?;
        }
        if let Some(b) = &total {
            self.check_device(b.stream())?;
        }
        if let Some(b) = segments.as_ref().and_then(|s| s.buffer.as_ref()) {
            self.check_device(b.stream())?;
        }
        let capture = capture::status(stream)?;
        let ready = self.ready(stream, capture, n, columns)?;
        let empty_total_from = match (&ready, &total, &init) {
            (None, Some(_), None) => Some(self.identity_on_device(stream, capture)?),
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
        let segment = match &segments {
            None => SegmentArgs::None,
            Some(s) => match s.rule {
                Segments::Rows { .. } => SegmentArgs::Rows {
                    cols: s.rows.1,
                    row_stride: s.rows.2,
                },
                Segments::Columns => SegmentArgs::Columns {
                    cols: s.rows.1,
                    row_stride: s.rows.2,
                    tile_cols_log2: ready
                        .as_ref()
                        .and_then(|r| r.columns)
                        .map_or(0, |c| c.tile_cols_log2),
                },
                Segments::Offsets(_) => SegmentArgs::Offsets {
                    offsets: segment_read.as_ref().map_or(0, |(p, _)| *p),
                    count: s.buffer.as_ref().map_or(0, |b| b.len() as u64),
                },
                _ => SegmentArgs::Data(segment_read.as_ref().map_or(0, |(p, _)| *p)),
            },
        };
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
                self.enqueue(stream, capture, &ready, &[input_ptr], output_ptr, seeds)
            }
            None => copy_empty_total(
                stream,
                total_ptr,
                empty_total_from.unwrap_or(init_ptr),
                self.elem_bytes(),
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
        self.check_segments(None, data.len() as u64)?;
        self.check_device(stream)?;
        self.check_device(data.stream())?;
        let capture = capture::status(stream)?;
        let Some(ready) = self.ready(stream, capture, data.len() as u64, None)? else {
            return Ok(());
        };
        let (ptr, write) = data.device_ptr_mut(stream);
        if capture == Capture::Active {
            // As in scan_device_with: no record of the use inside the capture.
            std::mem::forget(write);
            capture::check_buffers(stream, capture)?;
        }
        self.enqueue(stream, capture, &ready, &[ptr], ptr, Seeds::NONE)
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
        self.check_segments(None, n)?;
        self.check_device(stream)?;
        let capture = capture::status(stream)?;
        match self.ready(stream, capture, n, None)? {
            Some(ready) => self.enqueue(
                stream,
                capture,
                &ready,
                &[input],
                output,
                Seeds {
                    init,
                    total,
                    segment: SegmentArgs::None,
                },
            ),
            None if total != 0 => {
                let from = if init != 0 {
                    init
                } else {
                    self.identity_on_device(stream, capture)?
                };
                copy_empty_total(stream, total, from, self.elem_bytes(), 1)
            }
            None => Ok(()),
        }
    }

    /// A scan of `n` positions of the fused input arrays `inputs` into `output`, seeded with
    /// `init` and writing `total` (0: none), as [`Scanner::scan_device_ptr_with`].
    ///
    /// # Safety
    ///
    /// As for [`Scanner::scan_device_ptr_with`], each input array valid for `n` values of its
    /// type and `output` for `n` outputs.
    pub(crate) unsafe fn scan_arrays_ptr(
        &mut self,
        stream: &Arc<CudaStream>,
        inputs: &[CUdeviceptr],
        output: CUdeviceptr,
        n: u64,
        init: CUdeviceptr,
        total: CUdeviceptr,
    ) -> Result<(), ScanError> {
        self.check_segments(None, n)?;
        self.check_device(stream)?;
        let capture = capture::status(stream)?;
        match self.ready(stream, capture, n, None)? {
            Some(ready) => self.enqueue(
                stream,
                capture,
                &ready,
                inputs,
                output,
                Seeds {
                    init,
                    total,
                    segment: SegmentArgs::None,
                },
            ),
            None if total != 0 => {
                let from = if init != 0 {
                    init
                } else {
                    self.identity_on_device(stream, capture)?
                };
                copy_empty_total(stream, total, from, self.elem_bytes(), 1)
            }
            None => Ok(()),
        }
    }

    pub(crate) fn check_stream(&self, stream: &Arc<CudaStream>) -> Result<(), ScanError> {
        self.check_device(stream)
    }

    /// The kernel for an input of `n` elements and its tile: the small-tile variant when the
    /// default tiles would not give every multiprocessor one (the scan is then latency-bound),
    /// loaded on first use (not allowed inside a capture); else the default. Both share the
    /// tile state: its layout does not depend on the tile size.
    fn variant_for(
        &mut self,
        n: u64,
        capture: Capture,
    ) -> Result<(Arc<LoadedScan>, u64), ScanError> {
        let small_input = n.div_ceil(self.tile) < u64::from(self.gpu.sm_count());
        if small_input {
            if let SmallVariant::NotLoaded(key) = &self.small {
                if capture == Capture::Active {
                    return Err(ScanError::NotPreparedForCapture {
                        n,
                        needs: "its small-input kernel loaded (a module load)".into(),
                    });
                }
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

    /// The largest input the small-tile variant scans, if there is one.
    fn largest_small_input(&self) -> Option<u64> {
        let sms = u64::from(self.gpu.sm_count());
        match self.small {
            SmallVariant::None => None,
            _ if sms < 2 => None,
            _ => Some((sms - 1) * self.tile),
        }
    }

    /// Scratch `plan` needs with `loaded`'s kernels.
    fn needs(&self, loaded: &LoadedScan, plan: &LaunchPlan) -> Needs {
        let elem = std::mem::size_of::<Op::Elem>() as u64;
        Needs {
            level_bytes: plan.level_elems() * elem,
            tile_state_bytes: if plan.single_pass_tiles > 0 {
                abi::tile_state_bytes(&loaded.generated, plan.single_pass_tiles)
            } else {
                0
            },
        }
    }

    fn check_rule(&self, given: Segments) -> Result<(), ScanError> {
        ScanError::check_rule(self.variant().segments, given)
    }

    /// Checks segment data against the scanner's rule and `len` (the buffers' length); returns
    /// the number of elements the scan covers (rows x cols for rows, else `len`).
    fn check_segments(
        &self,
        segments: Option<&DeviceSegments<'_>>,
        len: u64,
    ) -> Result<u64, ScanError> {
        self.check_rule(segments.map_or(Segments::None, |s| s.rule))?;
        let Some(s) = segments else {
            return Ok(len);
        };
        match s.rule {
            Segments::None => Ok(len),
            Segments::Rows { .. } | Segments::Columns => {
                ScanError::check_rows(s.rows.0, s.rows.1, s.rows.2, len)
            }
            Segments::Flags | Segments::Keys(_) => {
                let what = if s.rule == Segments::Flags {
                    "flags"
                } else {
                    "keys"
                };
                let got = s.buffer.as_ref().map_or(0, |b| b.len());
                ScanError::check_segment_len(what, got, len)?;
                Ok(len)
            }
            Segments::Offsets(_) => {
                if s.buffer.as_ref().map_or(0, |b| b.len()) == 0 {
                    return Err(ScanError::BadOffsets {
                        index: 0,
                        value: 0,
                        previous: 0,
                        n: len,
                    });
                }
                Ok(len)
            }
        }
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
            self.check_rule(segments.rule())?;
            return Ok(result);
        }
        let stream = self.gpu.default_stream();
        let data = self.upload(&stream, input)?;
        let mut output = self.upload(&stream, input)?;
        let up =
            |e: cudarc::driver::DriverError| driver("copying the segment data to the device")(e);
        macro_rules! with_keys {
            ($k:expr) => {{
                let keys = stream.clone_htod($k).map_err(up)?;
                let extras = ScanExtras::new().segments(DeviceSegments::keys(&keys));
                self.scan_device_with(&stream, &data, &mut output, extras)?;
                download(&stream, &output, &mut result)?;
            }};
        }
        match segments {
            HostSegments::Flags(f) => {
                let flags = stream.clone_htod(f).map_err(up)?;
                let extras = ScanExtras::new().segments(DeviceSegments::flags(&flags));
                self.scan_device_with(&stream, &data, &mut output, extras)?;
                download(&stream, &output, &mut result)?;
            }
            HostSegments::Offsets32(o) => {
                let offsets = stream.clone_htod(o).map_err(up)?;
                let extras = ScanExtras::new().segments(DeviceSegments::offsets(&offsets));
                self.scan_device_with(&stream, &data, &mut output, extras)?;
                download(&stream, &output, &mut result)?;
            }
            HostSegments::Offsets64(o) => {
                let offsets = stream.clone_htod(o).map_err(up)?;
                let extras = ScanExtras::new().segments(DeviceSegments::offsets(&offsets));
                self.scan_device_with(&stream, &data, &mut output, extras)?;
                download(&stream, &output, &mut result)?;
            }
            HostSegments::Rows {
                rows,
                cols,
                row_stride,
            } => {
                let extras =
                    ScanExtras::new().segments(DeviceSegments::rows(rows, cols, row_stride));
                self.scan_device_with(&stream, &data, &mut output, extras)?;
                download(&stream, &output, &mut result)?;
            }
            HostSegments::Columns {
                rows,
                cols,
                row_stride,
            } => {
                let extras =
                    ScanExtras::new().segments(DeviceSegments::columns(rows, cols, row_stride));
                self.scan_device_with(&stream, &data, &mut output, extras)?;
                download(&stream, &output, &mut result)?;
            }
            HostSegments::Keys(k) => match k {
                HostKeys::I8(k) => with_keys!(k),
                HostKeys::I16(k) => with_keys!(k),
                HostKeys::I32(k) => with_keys!(k),
                HostKeys::I64(k) => with_keys!(k),
                HostKeys::U8(k) => with_keys!(k),
                HostKeys::U16(k) => with_keys!(k),
                HostKeys::U32(k) => with_keys!(k),
                HostKeys::U64(k) => with_keys!(k),
            },
        }
        Ok(result)
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

    /// Everything a scan of `n` elements on `stream` needs before its launches can be enqueued:
    /// the kernel variant loaded, the plan, the scratch sized and ordered after earlier uses.
    /// Inside a capture (`capture` is `Active`) nothing is loaded, allocated or waited on: what
    /// that would need is an error naming `prepare`, returned before any buffer is touched so
    /// the capture stays intact. `None`: nothing to launch (n = 0).
    /// `columns`: `(rows, cols)` of a column scan, whose launch shape follows the matrix.
    fn ready(
        &mut self,
        stream: &Arc<CudaStream>,
        capture: Capture,
        n: u64,
        columns: Option<(u64, u64)>,
    ) -> Result<Option<ReadyLaunch>, ScanError> {
        let (loaded, tile) = self.variant_for(n, capture)?;
        if n == 0 {
            return Ok(None);
        }
        let (plan, columns) = match columns {
            Some((rows, cols)) => {
                let policy = &loaded.generated.policy;
                let shape =
                    ColumnShape::new(rows, cols, policy.block_threads, policy.items_per_thread);
                (shape.plan(rows, cols)?, Some(shape))
            }
            None => (launch_plan::plan(self.algorithm(), n, tile)?, None),
        };
        if plan.launches.is_empty() {
            return Ok(None);
        }
        let needs = self.needs(&loaded, &plan);
        let ws = &mut self.workspace;
        if capture == Capture::Active {
            if let Some(missing) = ws.shortfall(needs) {
                return Err(ScanError::NotPreparedForCapture { n, needs: missing });
            }
        }
        ws.follow(stream, capture)?;
        ws.reserve(stream, needs)?;
        Ok(Some(ReadyLaunch {
            loaded,
            plan,
            columns,
        }))
    }

    /// The operator's identity in device memory (the total of an empty scan with no initial
    /// value), uploaded on first use; inside a capture it must already be there (`prepare`).
    fn identity_on_device(
        &mut self,
        stream: &Arc<CudaStream>,
        capture: Capture,
    ) -> Result<CUdeviceptr, ScanError> {
        self.workspace.follow(stream, capture)?;
        let ptr = self
            .workspace
            .identity(stream, capture, &[Op::identity()])?;
        self.workspace.used(stream, capture);
        Ok(ptr)
    }

    fn elem_bytes(&self) -> usize {
        std::mem::size_of::<Op::Elem>()
    }

    /// Enqueues `ready`'s launches from `inputs` (one array, or a fused scan's input arrays) to
    /// `output` (may be the input), with `seeds`.
    fn enqueue(
        &mut self,
        stream: &Arc<CudaStream>,
        capture: Capture,
        ready: &ReadyLaunch,
        inputs: &[CUdeviceptr],
        output: CUdeviceptr,
        seeds: Seeds,
    ) -> Result<(), ScanError> {
        assert_eq!(
            inputs.len(),
            ready.loaded.generated.input_arrays(),
            "one pointer per input array of the kernels"
        );
        let input = inputs[0];
        let ReadyLaunch { loaded, plan, .. } = ready;
        let generated = &loaded.generated;
        let ws = &mut self.workspace;
        let levels_ptr = ws.levels_ptr();
        let (tile_state_ptr, tile_state_bytes) = ws.tile_state();
        let tile_state_slots = generated.tile_state_slots(tile_state_bytes);
        let elem = std::mem::size_of::<Op::Elem>() as u64;
        let pointer = |buffer: Buffer| match buffer {
            Buffer::Input => input,
            Buffer::Output => output,
            Buffer::Level(l) => levels_ptr + plan.level_offset(l) * elem,
        };
        let block = generated.policy.block_threads;
        for launch in &plan.launches {
            let function = loaded.function_for(launch);
            let (src, dst, count) = (pointer(launch.input), pointer(launch.output), launch.n);
            let prefixes: CUdeviceptr = launch.prefixes.map_or(0, pointer);
            let config = LaunchConfig {
                grid_dim: (launch.grid, 1, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut args = stream.launch_builder(function);
            if launch.input == Buffer::Input {
                // A fused kernel takes each input array where a plain one takes `in`.
                for ptr in inputs {
                    args.arg(ptr);
                }
            } else {
                args.arg(&src);
            }
            args.arg(&dst).arg(&count);
            match launch.kernel {
                Kernel::SinglePass => {
                    args.arg(&tile_state_ptr).arg(&tile_state_slots);
                    args.arg(&seeds.init).arg(&seeds.total);
                    match &seeds.segment {
                        SegmentArgs::None => {}
                        SegmentArgs::Data(ptr) => {
                            args.arg(ptr);
                        }
                        SegmentArgs::Offsets { offsets, count } => {
                            args.arg(offsets).arg(count);
                        }
                        SegmentArgs::Rows { cols, row_stride } => {
                            args.arg(cols).arg(row_stride);
                        }
                        SegmentArgs::Columns {
                            cols,
                            row_stride,
                            tile_cols_log2,
                        } => {
                            args.arg(cols).arg(row_stride).arg(tile_cols_log2);
                        }
                    }
                }
                Kernel::ReduceTiles => {}
                Kernel::ScanTiles => {
                    args.arg(&prefixes).arg(&seeds.init).arg(&seeds.total);
                }
                Kernel::ScanSpine => {
                    args.arg(&prefixes);
                }
            }
            // SAFETY: the arguments are exactly the entry's ABI signature (ARCHITECTURE.md):
            // device pointers to `n` elements (lengths checked by the callers), the scratch
            // sized by the same plan (the tile state for at least `plan.single_pass_tiles`
            // slots), `n` and the slot count as u64, init and total as one-element device
            // pointers or NULL.
            unsafe { args.launch(config) }.map_err(|source| ScanError::Launch {
                kernel: launch.kernel.name(),
                source,
            })?;
        }
        ws.used(stream, capture);
        Ok(())
    }
}

/// The initial value and the total of one scan (device addresses of one element, 0 for none),
/// and the segment rule's kernel arguments.
#[derive(Clone, Copy)]
struct Seeds {
    init: CUdeviceptr,
    total: CUdeviceptr,
    segment: SegmentArgs,
}

impl Seeds {
    const NONE: Seeds = Seeds {
        init: 0,
        total: 0,
        segment: SegmentArgs::None,
    };
}

/// What a segment rule appends to `scangen_single_pass` (ARCHITECTURE.md).
#[derive(Clone, Copy)]
enum SegmentArgs {
    None,
    /// flags or keys: one device pointer.
    Data(CUdeviceptr),
    Offsets {
        offsets: CUdeviceptr,
        count: u64,
    },
    Rows {
        cols: u64,
        row_stride: u64,
    },
    Columns {
        cols: u64,
        row_stride: u64,
        tile_cols_log2: u32,
    },
}

/// An empty scan's total is its initial value (or the identity): one element copied on the
/// stream, which a capture records like any copy.
/// `count` totals (a column scan of no rows has one per column): the first copied, then
/// doubled within the total buffer, so log2(count) copies.
fn copy_empty_total(
    stream: &Arc<CudaStream>,
    total: CUdeviceptr,
    from: CUdeviceptr,
    bytes: usize,
    count: u64,
) -> Result<(), ScanError> {
    if total == 0 || count == 0 {
        return Ok(());
    }
    let copy = |dst: CUdeviceptr, src: CUdeviceptr, len: usize| {
        // SAFETY: device addresses the callers checked (the total holds `count` elements, the
        // source one) or promised, non-overlapping ([0, have) to [have, have + len)), and
        // ordered on `stream` like the scan they stand in for.
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, len, stream.cu_stream()) }
            .map_err(driver("writing the total of an empty scan"))
    };
    copy(total, from, bytes)?;
    let mut have = 1u64;
    while have < count {
        let more = have.min(count - have);
        copy(
            total + have * bytes as u64,
            total,
            (more * bytes as u64) as usize,
        )?;
        have += more;
    }
    Ok(())
}

/// A launch plan whose scratch is in place (`Scanner::ready`), waiting for its buffers.
struct ReadyLaunch {
    loaded: Arc<LoadedScan>,
    plan: LaunchPlan,
    /// The tiles of a column scan.
    columns: Option<ColumnShape>,
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
