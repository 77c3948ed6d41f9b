//! Fused transform scans and reductions: an operator's `lift` reads its input arrays (each
//! position with its index) and `project` writes its outputs, inside the scan kernels
//! ([`scan_core::Transform`], `scan_codegen::generate_fused`): one read of the inputs, one
//! write of the outputs, no lifted array in memory.
//!
//! Input arrays are given as one slice (`&[A]`, for `Input = A`) or a tuple of slices
//! (`(&[A], &[B])` for `Input = (A, B)`: structure of arrays) on the host
//! ([`HostInputs`]), and as references to device buffers (`&CudaSlice<A>` or
//! `(&CudaSlice<A>, &CudaSlice<B>)`, views too) on the device ([`DeviceInputs`]). Every length
//! is checked before anything is launched.

use crate::capture::{self, Capture};
use crate::cpu::CpuScanner;
use crate::error::{alloc, driver, ScanError};
use crate::extras::ScanExtras;
use crate::gpu::{Gpu, ModuleKey};
use crate::options::ScanOptions;
use crate::reduce::Reducer;
use crate::scanner::Scanner;
use crate::segments::HostSegments;
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, SyncOnDrop};
use scan_codegen::{Algorithm, ScanMode, TuningPolicy};
use scan_core::{ScanElement, Transform, TransformSpec};
use std::sync::Arc;

/// The input arrays of a transform on the host: `&[A]` for `Input = A`, `(&[A], &[B], ..)`
/// (up to 8) for `Input = (A, B, ..)`.
pub trait HostInputs<T>: Copy {
    /// The length of each array.
    fn lens(&self) -> Vec<usize>;
    /// The size of each array's values in bytes (checked against the kernels' declaration).
    fn value_sizes() -> Vec<usize>;
    /// Position `i` of every array.
    fn get(&self, i: usize) -> T;
    /// Copies each array to the device on `stream`; the buffers are owned by the result.
    #[doc(hidden)]
    fn upload(&self, stream: &Arc<CudaStream>) -> Result<UploadedInputs, ScanError>;
}

/// Input arrays copied to the device by [`HostInputs::upload`]: their addresses, kept alive.
#[doc(hidden)]
pub struct UploadedInputs {
    pub(crate) ptrs: Vec<CUdeviceptr>,
    _buffers: Vec<Box<dyn std::any::Any>>,
}

fn upload_one<A: DeviceRepr + 'static>(
    stream: &Arc<CudaStream>,
    host: &[A],
    ptrs: &mut Vec<CUdeviceptr>,
    buffers: &mut Vec<Box<dyn std::any::Any>>,
) -> Result<(), ScanError> {
    let bytes = std::mem::size_of_val(host) as u64;
    // SAFETY: every element is written by the copy below before anything reads it.
    let mut buf = unsafe { stream.alloc::<A>(host.len().max(1)) }
        .map_err(alloc(bytes, "the device copy of an input array"))?;
    if !host.is_empty() {
        stream
            .memcpy_htod(host, &mut buf.slice_mut(..host.len()))
            .map_err(driver("copying an input array to the device"))?;
    }
    let ptr = {
        let (ptr, _guard) = buf.device_ptr(stream);
        ptr
    };
    ptrs.push(ptr);
    buffers.push(Box::new(buf));
    Ok(())
}

/// The input arrays of a transform in device memory: `&X` for `Input = A` (`X` a
/// `CudaSlice<A>` or a view), `(&X, &Y, ..)` (up to 8) for `Input = (A, B, ..)`.
pub trait DeviceInputs<T> {
    /// The length of each array.
    fn lens(&self) -> Vec<usize>;
    /// The size of each array's values in bytes.
    fn value_sizes() -> Vec<usize>;
    /// The stream each array was allocated on (device checks).
    fn streams(&self) -> Vec<&Arc<CudaStream>>;
    /// The arrays' device addresses for reading on `stream`, and cudarc's guards (dropped
    /// after the launch is enqueued).
    #[doc(hidden)]
    fn pointers<'a>(&'a self, stream: &'a CudaStream) -> (Vec<CUdeviceptr>, Vec<SyncOnDrop<'a>>);
}

macro_rules! inputs_impl {
    ($(($A:ident, $X:ident, $k:tt)),+) => {
        impl<'s, $($A: ScanElement + DeviceRepr),+> HostInputs<($($A,)+)> for ($(&'s [$A],)+) {
            fn lens(&self) -> Vec<usize> {
                vec![$(self.$k.len()),+]
            }
            fn value_sizes() -> Vec<usize> {
                vec![$(std::mem::size_of::<$A>()),+]
            }
            fn get(&self, i: usize) -> ($($A,)+) {
                ($(self.$k[i],)+)
            }
            fn upload(&self, stream: &Arc<CudaStream>) -> Result<UploadedInputs, ScanError> {
                let (mut ptrs, mut buffers) = (Vec::new(), Vec::new());
                $(upload_one(stream, self.$k, &mut ptrs, &mut buffers)?;)+
                Ok(UploadedInputs { ptrs, _buffers: buffers })
            }
        }
        impl<'s, $($A, $X: DevicePtr<$A>),+> DeviceInputs<($($A,)+)> for ($(&'s $X,)+) {
            fn lens(&self) -> Vec<usize> {
                vec![$(self.$k.len()),+]
            }
            fn value_sizes() -> Vec<usize> {
                vec![$(std::mem::size_of::<$A>()),+]
            }
            fn streams(&self) -> Vec<&Arc<CudaStream>> {
                vec![$(self.$k.stream()),+]
            }
            fn pointers<'a>(&'a self, stream: &'a CudaStream) -> (Vec<CUdeviceptr>, Vec<SyncOnDrop<'a>>) {
                let (mut ptrs, mut guards) = (Vec::new(), Vec::new());
                $(
                    let (p, g) = self.$k.device_ptr(stream);
                    ptrs.push(p);
                    guards.push(g);
                )+
                (ptrs, guards)
            }
        }
    };
}

inputs_impl!((A, X, 0), (B, Y, 1));
inputs_impl!((A, X, 0), (B, Y, 1), (C, Z, 2));
inputs_impl!((A, X, 0), (B, Y, 1), (C, Z, 2), (D, W, 3));
inputs_impl!((A, X, 0), (B, Y, 1), (C, Z, 2), (D, W, 3), (E, U, 4));
inputs_impl!(
    (A, X, 0),
    (B, Y, 1),
    (C, Z, 2),
    (D, W, 3),
    (E, U, 4),
    (F, R, 5)
);
inputs_impl!(
    (A, X, 0),
    (B, Y, 1),
    (C, Z, 2),
    (D, W, 3),
    (E, U, 4),
    (F, R, 5),
    (G, Q, 6)
);
inputs_impl!(
    (A, X, 0),
    (B, Y, 1),
    (C, Z, 2),
    (D, W, 3),
    (E, U, 4),
    (F, R, 5),
    (G, Q, 6),
    (H, P, 7)
);

impl<A: ScanElement + DeviceRepr> HostInputs<A> for &[A] {
    fn lens(&self) -> Vec<usize> {
        vec![self.len()]
    }
    fn value_sizes() -> Vec<usize> {
        vec![std::mem::size_of::<A>()]
    }
    fn get(&self, i: usize) -> A {
        self[i]
    }
    fn upload(&self, stream: &Arc<CudaStream>) -> Result<UploadedInputs, ScanError> {
        let (mut ptrs, mut buffers) = (Vec::new(), Vec::new());
        upload_one(stream, self, &mut ptrs, &mut buffers)?;
        Ok(UploadedInputs {
            ptrs,
            _buffers: buffers,
        })
    }
}

impl<A, X: DevicePtr<A>> DeviceInputs<A> for &X {
    fn lens(&self) -> Vec<usize> {
        vec![self.len()]
    }
    fn value_sizes() -> Vec<usize> {
        vec![std::mem::size_of::<A>()]
    }
    fn streams(&self) -> Vec<&Arc<CudaStream>> {
        vec![self.stream()]
    }
    fn pointers<'a>(&'a self, stream: &'a CudaStream) -> (Vec<CUdeviceptr>, Vec<SyncOnDrop<'a>>) {
        let (p, g) = self.device_ptr(stream);
        (vec![p], vec![g])
    }
}

/// The common length of the input arrays (all equal, else [`ScanError::InputLengths`]).
pub(crate) fn common_len(lens: &[usize]) -> Result<usize, ScanError> {
    let n = lens[0];
    if lens.iter().any(|&l| l != n) {
        return Err(ScanError::InputLengths {
            lens: lens.iter().map(|&l| l as u64).collect(),
        });
    }
    Ok(n)
}

/// The host types of the arrays against the transform's declaration.
fn check_value_sizes(spec: &TransformSpec, sizes: &[usize]) -> Result<(), ScanError> {
    let declared: Vec<usize> = spec.inputs.iter().map(|t| t.size()).collect();
    if declared != sizes {
        return Err(ScanError::InputLayout {
            declared,
            actual: sizes.to_vec(),
        });
    }
    Ok(())
}

/// The transform of `Op`, with its declared sizes checked against the Rust types.
fn checked_spec<Op: Transform>() -> Result<TransformSpec, ScanError> {
    let spec = Op::device_transform();
    let declared = spec.output.size();
    let actual = std::mem::size_of::<Op::Output>();
    if declared != actual {
        return Err(ScanError::ElementLayout { declared, actual });
    }
    Ok(spec)
}

/// A fused transform scan of `Op` on one GPU ([`Gpu::transform_scanner`]): reads `Op`'s input
/// arrays, lifts each position (with its index) as the tiles load, scans, and projects each
/// result as it is stored. Every algorithm, inclusive or exclusive, forward or reverse; an
/// initial value and the total (elements, not projected) as [`ScanExtras`] describes;
/// segmented by flags, keys, offsets or rows (`ScanOptions::segmented`, single-pass) with
/// [`TransformScanner::transform_scan_segmented`] or segment data in the extras. Column scans
/// do not fuse (their kernel stages rows of a strip): building one is an error.
pub struct TransformScanner<Op: Transform> {
    scanner: Scanner<Op>,
    spec: TransformSpec,
}

impl<Op: Transform> std::fmt::Debug for TransformScanner<Op>
where
    Op::Elem: DeviceRepr,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransformScanner")
            .field("scanner", &self.scanner)
            .finish()
    }
}

impl Gpu {
    /// A fused transform scanner for `Op` with `opts` ([`TransformScanner`]).
    pub fn transform_scanner<Op: Transform>(
        &self,
        opts: ScanOptions,
    ) -> Result<TransformScanner<Op>, ScanError>
    where
        Op::Elem: DeviceRepr,
        Op::Output: DeviceRepr,
    {
        let spec = checked_spec::<Op>()?;
        let scanner = self.scanner_with::<Op>(opts, Some(spec.clone()))?;
        Ok(TransformScanner { scanner, spec })
    }

    /// A device-wide reduction of `lift` over input arrays ([`TransformReducer`]).
    pub fn transform_reducer<Op: Transform>(&self) -> Result<TransformReducer<Op>, ScanError>
    where
        Op::Elem: DeviceRepr,
    {
        let spec = checked_spec::<Op>()?;
        let mut reducer = self.reducer::<Op>()?;
        let algorithm = Algorithm::KoggeStone;
        let op = Op::device_op();
        let size = op.element.size();
        let lifted = self.load(ModuleKey {
            op,
            algorithm,
            mode: ScanMode::Inclusive,
            variant: scan_codegen::ScanVariant::FLAT,
            policy: TuningPolicy::for_target(self.sm(), algorithm, size),
            transform: Some(spec.clone()),
        })?;
        assert_eq!(
            crate::abi::tile_items(&lifted.generated),
            reducer.tile_items(),
            "the lifted level and the plain levels use one tile size"
        );
        reducer.lifted = Some(lifted);
        Ok(TransformReducer { reducer, spec })
    }
}

impl<Op: Transform> TransformScanner<Op>
where
    Op::Elem: DeviceRepr,
    Op::Output: DeviceRepr,
{
    /// The scanner underneath (algorithm, mode, policy, the generated source, `prepare`).
    pub fn scanner(&mut self) -> &mut Scanner<Op> {
        &mut self.scanner
    }

    /// The generated (fused) CUDA source of the default kernel as built. Builds it if it is
    /// not yet.
    pub fn source(&mut self) -> Result<&str, ScanError> {
        self.scanner.source()
    }

    /// Scans host input arrays into a new vector of outputs (default stream; waits).
    pub fn transform_scan<I: HostInputs<Op::Input>>(
        &mut self,
        inputs: I,
    ) -> Result<Vec<Op::Output>, ScanError> {
        let n = common_len(&inputs.lens())?;
        let mut out = vec![Op::project(Op::identity()); n];
        self.transform_scan_into(inputs, &mut out)?;
        Ok(out)
    }

    /// Scans host input arrays into `output` (as long as the inputs).
    pub fn transform_scan_into<I: HostInputs<Op::Input>>(
        &mut self,
        inputs: I,
        output: &mut [Op::Output],
    ) -> Result<(), ScanError> {
        let n = common_len(&inputs.lens())?;
        ScanError::check_lengths(n, output.len())?;
        check_value_sizes(&self.spec, &I::value_sizes())?;
        if n == 0 {
            return Ok(());
        }
        self.scan_host_arrays(inputs, output, None, false)
    }

    /// Scans host input arrays segment by segment (the scanner's rule,
    /// `ScanOptions::segmented`: flags, keys, offsets or rows; column scans do not fuse) into a
    /// new vector of outputs (default stream; waits). The data is checked on the host before
    /// anything is uploaded, as for [`Scanner::scan_segmented`]. Positions outside every row
    /// (between strided rows, after the last) are not scanned: their outputs are
    /// `project(lift(in[k], k))`, as the CPU backend gives them.
    pub fn transform_scan_segmented<I: HostInputs<Op::Input>>(
        &mut self,
        inputs: I,
        segments: HostSegments<'_>,
    ) -> Result<Vec<Op::Output>, ScanError> {
        let n = common_len(&inputs.lens())?;
        check_value_sizes(&self.spec, &I::value_sizes())?;
        let count = match segments.matrix() {
            Some((rows, cols, row_stride)) => {
                ScanError::check_rows(rows, cols, row_stride, n as u64)?
            }
            None => n as u64,
        };
        segments.check(count)?;
        self.scanner.check_rule(segments.rule())?;
        // Only rows can leave positions unscanned; only then are outputs computed here.
        let unscanned = count < n as u64;
        let mut output: Vec<Op::Output> = if unscanned {
            (0..n)
                .map(|k| Op::project(lift_at::<Op, I>(&inputs, k)))
                .collect()
        } else {
            vec![Op::project(Op::identity()); n]
        };
        if count > 0 {
            self.scan_host_arrays(inputs, &mut output, Some(&segments), unscanned)?;
        }
        Ok(output)
    }

    /// Uploads `inputs`, scans them (by `segments`, when given) into `output`'s positions on the
    /// default stream and copies the outputs back; waits. With `keep_unscanned`, `output` is
    /// uploaded first, so the positions the scan does not write keep its values.
    fn scan_host_arrays<I: HostInputs<Op::Input>>(
        &mut self,
        inputs: I,
        output: &mut [Op::Output],
        segments: Option<&HostSegments<'_>>,
        keep_unscanned: bool,
    ) -> Result<(), ScanError> {
        let n = output.len();
        let stream = self.scanner.gpu().default_stream();
        let uploaded = inputs.upload(&stream)?;
        let uploaded_segments = segments.map(|s| s.upload(&stream)).transpose()?;
        let device_segments = uploaded_segments.as_ref().map(|u| u.device());
        let mut out_dev = if keep_unscanned {
            stream
                .clone_htod(output)
                .map_err(driver("copying the unscanned outputs to the device"))?
        } else {
            // SAFETY: every output is written by the scan before it is read back.
            unsafe { stream.alloc::<Op::Output>(n) }.map_err(alloc(
                std::mem::size_of_val(output) as u64,
                "the device copy of the result",
            ))?
        };
        {
            let (out_ptr, _write) = out_dev.device_ptr_mut(&stream);
            // SAFETY: the uploaded arrays hold `n` values each and `out_dev` `n` outputs, all
            // on `stream`, alive until the copy back below has synchronised.
            unsafe {
                self.scanner.scan_arrays_ptr(
                    &stream,
                    &uploaded.ptrs,
                    out_ptr,
                    n as u64,
                    0,
                    0,
                    device_segments.as_ref(),
                )?
            };
        }
        stream
            .memcpy_dtoh(&out_dev, output)
            .map_err(driver("copying the result to the host"))?;
        stream
            .synchronize()
            .map_err(driver("waiting for the scan to finish"))
    }

    /// Enqueues a fused scan of device input arrays into `output` on `stream` (no host
    /// synchronisation), with an initial value and/or the total ([`ScanExtras`]; the total is
    /// an element, `init ⊕ lift(0) ⊕ …`), segment by segment with segment data for a segmented
    /// scanner (flags, keys, offsets, rows; for rows with a stride, the index `lift` sees is the
    /// position in the arrays, and the outputs between rows are not written). Lengths, devices,
    /// value sizes and the segment rule are checked before anything is launched.
    pub fn transform_scan_device<I, O>(
        &mut self,
        stream: &Arc<CudaStream>,
        inputs: I,
        output: &mut O,
        extras: ScanExtras<'_, Op::Elem>,
    ) -> Result<(), ScanError>
    where
        I: DeviceInputs<Op::Input>,
        O: DevicePtrMut<Op::Output>,
    {
        let n = common_len(&inputs.lens())?;
        ScanError::check_lengths(n, output.len())?;
        check_value_sizes(&self.spec, &I::value_sizes())?;
        extras.check_not_empty()?;
        let ScanExtras {
            init,
            total,
            segments,
        } = extras;
        self.scanner.check_stream(stream)?;
        for s in inputs.streams() {
            self.scanner.check_stream(s)?;
        }
        self.scanner.check_stream(output.stream())?;
        let capture = capture::status(stream)?;
        let (ptrs, reads) = inputs.pointers(stream);
        let (out_ptr, write) = output.device_ptr_mut(stream);
        let init = init.map(|b| b.device_ptr(stream));
        let mut total = total;
        let total = total.as_mut().map(|b| b.device_ptr_mut(stream));
        let init_ptr = init.as_ref().map_or(0, |(p, _)| *p);
        let total_ptr = total.as_ref().map_or(0, |(p, _)| *p);
        let guards = (reads, write, init.map(|(_, g)| g), total.map(|(_, g)| g));
        if capture == Capture::Active {
            // As for a plain scan (Scanner::scan_device_with): no record of the buffers' use
            // inside the capture, which later uses outside it could not wait on.
            std::mem::forget(guards);
            capture::check_buffers(stream, capture)?;
        }
        // SAFETY: live buffers of the checked lengths, ordered on `stream` by cudarc's guards.
        unsafe {
            self.scanner.scan_arrays_ptr(
                stream,
                &ptrs,
                out_ptr,
                n as u64,
                init_ptr,
                total_ptr,
                segments.as_ref(),
            )
        }
    }
}

/// A device-wide reduction of `Op`'s `lift` over input arrays, on one GPU
/// ([`Gpu::transform_reducer`]): `init ⊕ lift(in[0], 0) ⊕ … ⊕ lift(in[n-1], n-1)`, in sequence
/// order. One read of the inputs (the first level lifts them as it reduces its tiles), then
/// about `n / tile` elements of levels; written to device memory or returned.
pub struct TransformReducer<Op: Transform> {
    reducer: Reducer<Op>,
    spec: TransformSpec,
}

impl<Op: Transform> std::fmt::Debug for TransformReducer<Op> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransformReducer")
            .field("reducer", &self.reducer)
            .finish()
    }
}

impl<Op: Transform> TransformReducer<Op>
where
    Op::Elem: DeviceRepr,
{
    /// Sizes the scratch for up to `n` positions on `stream` (before a CUDA graph capture).
    pub fn prepare(&mut self, n: u64, stream: &Arc<CudaStream>) -> Result<(), ScanError> {
        self.reducer.prepare(n, stream)
    }

    /// Reduces host input arrays after `init` (default stream; waits).
    pub fn reduce<I: HostInputs<Op::Input>>(
        &mut self,
        inputs: I,
        init: Op::Elem,
    ) -> Result<Op::Elem, ScanError> {
        let n = common_len(&inputs.lens())?;
        check_value_sizes(&self.spec, &I::value_sizes())?;
        let stream = self.reducer.gpu().default_stream();
        let init_dev: CudaSlice<Op::Elem> = stream
            .clone_htod(&[init])
            .map_err(driver("uploading the initial value"))?;
        let mut total_dev: CudaSlice<Op::Elem> = stream
            .clone_htod(&[init])
            .map_err(driver("allocating the total"))?;
        let uploaded = inputs.upload(&stream)?;
        {
            let (init_ptr, _r) = init_dev.device_ptr(&stream);
            let (total_ptr, _w) = total_dev.device_ptr_mut(&stream);
            self.enqueue(&stream, &uploaded.ptrs, n as u64, init_ptr, total_ptr)?;
        }
        let mut total = [init];
        stream
            .memcpy_dtoh(&total_dev, &mut total)
            .map_err(driver("copying the total to the host"))?;
        stream
            .synchronize()
            .map_err(driver("waiting for the reduction"))?;
        Ok(total[0])
    }

    /// Enqueues the reduction of device input arrays (after element 0 of `init`, when given)
    /// into element 0 of `total`, on `stream`; returns without waiting.
    pub fn reduce_device<I, T>(
        &mut self,
        stream: &Arc<CudaStream>,
        inputs: I,
        init: Option<&dyn DevicePtr<Op::Elem>>,
        total: &mut T,
    ) -> Result<(), ScanError>
    where
        I: DeviceInputs<Op::Input>,
        T: DevicePtrMut<Op::Elem>,
    {
        let n = common_len(&inputs.lens())?;
        check_value_sizes(&self.spec, &I::value_sizes())?;
        if total.len() == 0 {
            return Err(ScanError::EmptyExtra { what: "total" });
        }
        if init.map(|b| b.len()) == Some(0) {
            return Err(ScanError::EmptyExtra { what: "init" });
        }
        let capture = capture::status(stream)?;
        let (ptrs, reads) = inputs.pointers(stream);
        let (total_ptr, write) = total.device_ptr_mut(stream);
        let init = init.map(|b| b.device_ptr(stream));
        let init_ptr = init.as_ref().map_or(0, |(p, _)| *p);
        let guards = (reads, write, init.map(|(_, g)| g));
        if capture == Capture::Active {
            // As in transform_scan_device: no record of the buffers' use inside the capture.
            std::mem::forget(guards);
            capture::check_buffers(stream, capture)?;
        }
        self.enqueue(stream, &ptrs, n as u64, init_ptr, total_ptr)
    }

    fn enqueue(
        &mut self,
        stream: &Arc<CudaStream>,
        inputs: &[CUdeviceptr],
        n: u64,
        init: CUdeviceptr,
        total: CUdeviceptr,
    ) -> Result<(), ScanError> {
        if n == 0 {
            // SAFETY: `total` (and `init`) hold one element each; nothing reads the inputs.
            return unsafe { self.reducer.reduce_device_ptr(stream, 0, 0, init, total) };
        }
        // SAFETY: the arrays hold `n` values each, `init`/`total` one element, on `stream`.
        unsafe {
            self.reducer
                .reduce_arrays_ptr(stream, inputs, n, init, total)
        }
    }
}

/// `Op`'s lift of position `i` of `inputs`.
fn lift_at<Op: Transform, I: HostInputs<Op::Input>>(inputs: &I, i: usize) -> Op::Elem {
    Op::lift(inputs.get(i), i as u64)
}

impl<Op: Transform> CpuScanner<Op> {
    /// The fused transform scan on the CPU: the same Rust `lift`, scan and `project` as the
    /// GPU's kernels run (the lifted elements are scanned in a temporary vector).
    pub fn transform_scan<I: HostInputs<Op::Input>>(
        &mut self,
        inputs: I,
    ) -> Result<Vec<Op::Output>, ScanError> {
        let n = common_len(&inputs.lens())?;
        let mut out = vec![Op::project(Op::identity()); n];
        self.transform_scan_into(inputs, &mut out)?;
        Ok(out)
    }

    /// [`CpuScanner::transform_scan`] into `output` (as long as the inputs).
    pub fn transform_scan_into<I: HostInputs<Op::Input>>(
        &mut self,
        inputs: I,
        output: &mut [Op::Output],
    ) -> Result<(), ScanError> {
        let n = common_len(&inputs.lens())?;
        ScanError::check_lengths(n, output.len())?;
        let mut elems: Vec<Op::Elem> = (0..n).map(|i| lift_at::<Op, I>(&inputs, i)).collect();
        self.scan_in_place(&mut elems)?;
        for (o, e) in output.iter_mut().zip(elems) {
            *o = Op::project(e);
        }
        Ok(())
    }

    /// The fused scan segment by segment on the CPU ([`TransformScanner::transform_scan_segmented`]):
    /// the lifted elements scanned by the scanner's rule, then projected; between strided rows,
    /// `project(lift(in[k], k))`.
    pub fn transform_scan_segmented<I: HostInputs<Op::Input>>(
        &mut self,
        inputs: I,
        segments: HostSegments<'_>,
    ) -> Result<Vec<Op::Output>, ScanError> {
        let n = common_len(&inputs.lens())?;
        let elems: Vec<Op::Elem> = (0..n).map(|i| lift_at::<Op, I>(&inputs, i)).collect();
        let scanned = self.scan_segmented(&elems, segments)?;
        Ok(scanned.into_iter().map(Op::project).collect())
    }

    /// `init ⊕ lift(in[0], 0) ⊕ … ⊕ lift(in[n-1], n-1)` (in sequence order, whatever the
    /// scanner's direction).
    pub fn transform_reduce<I: HostInputs<Op::Input>>(
        &self,
        inputs: I,
        init: Op::Elem,
    ) -> Result<Op::Elem, ScanError> {
        let n = common_len(&inputs.lens())?;
        Ok((0..n).fold(init, |acc, i| {
            Op::combine(acc, lift_at::<Op, I>(&inputs, i))
        }))
    }
}

/// A fused transform scanner on the GPU when there is one, else on the CPU
/// ([`auto_transform`]), with the same results.
pub enum AnyTransformScanner<Op: Transform> {
    /// On a GPU; its reducer is built on first use.
    Gpu(Box<TransformScanner<Op>>, Option<Box<TransformReducer<Op>>>),
    /// On the CPU backend.
    Cpu(CpuScanner<Op>),
}

impl<Op: Transform> AnyTransformScanner<Op>
where
    Op::Elem: DeviceRepr,
    Op::Output: DeviceRepr,
{
    /// Whether it runs on a GPU.
    pub fn is_gpu(&self) -> bool {
        matches!(self, AnyTransformScanner::Gpu(..))
    }

    /// Where it runs (`"gpu: ..."`, `"cpu: ..."`).
    pub fn backend_name(&self) -> String {
        match self {
            AnyTransformScanner::Gpu(s, _) => s.scanner.backend_name(),
            AnyTransformScanner::Cpu(s) => s.backend_name(),
        }
    }

    /// The fused scan of host input arrays.
    pub fn transform_scan<I: HostInputs<Op::Input>>(
        &mut self,
        inputs: I,
    ) -> Result<Vec<Op::Output>, ScanError> {
        match self {
            AnyTransformScanner::Gpu(s, _) => s.transform_scan(inputs),
            AnyTransformScanner::Cpu(s) => s.transform_scan(inputs),
        }
    }

    /// The fused scan of host input arrays, segment by segment (the scanner's rule).
    pub fn transform_scan_segmented<I: HostInputs<Op::Input>>(
        &mut self,
        inputs: I,
        segments: HostSegments<'_>,
    ) -> Result<Vec<Op::Output>, ScanError> {
        match self {
            AnyTransformScanner::Gpu(s, _) => s.transform_scan_segmented(inputs, segments),
            AnyTransformScanner::Cpu(s) => s.transform_scan_segmented(inputs, segments),
        }
    }

    /// The reduction of `lift` over host input arrays, after `init`.
    pub fn transform_reduce<I: HostInputs<Op::Input>>(
        &mut self,
        inputs: I,
        init: Op::Elem,
    ) -> Result<Op::Elem, ScanError> {
        match self {
            AnyTransformScanner::Gpu(s, reducer) => {
                if reducer.is_none() {
                    *reducer = Some(Box::new(s.scanner.gpu().transform_reducer::<Op>()?));
                }
                reducer.as_mut().expect("built").reduce(inputs, init)
            }
            AnyTransformScanner::Cpu(s) => s.transform_reduce(inputs, init),
        }
    }
}

/// [`crate::auto`] for fused transform scans: the GPU when a device, its driver and NVRTC are
/// there (and `SCANGEN_BACKEND` is not `cpu`), the CPU backend otherwise.
pub fn auto_transform<Op: Transform>(
    opts: ScanOptions,
) -> Result<AnyTransformScanner<Op>, ScanError>
where
    Op::Elem: DeviceRepr,
    Op::Output: DeviceRepr,
{
    crate::auto::choose(
        opts,
        |gpu, opts| {
            gpu.transform_scanner::<Op>(opts)
                .map(|s| AnyTransformScanner::Gpu(Box::new(s), None))
        },
        |opts, reason| AnyTransformScanner::Cpu(CpuScanner::fallback(opts, reason)),
    )
}
