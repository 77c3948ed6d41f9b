//! The CUDA path (feature `cuda`): scangen's kernels on candle's own stream and buffers.
//!
//! candle-core 0.11 and scangen both use cudarc 0.19, so a candle `CudaStorage` holds the same
//! `cudarc::driver::CudaSlice<T>` scangen's `Scanner::scan_device_with` takes, and candle's
//! device opens the device's primary context (`CudaContext::new`), as scangen's `Gpu::new`
//! does: one context, candle's stream, no copies. Scanners are built once per (device,
//! operator, options) and kept in a process-wide cache.

#[cfg(feature = "cuda")]
pub(crate) use imp::*;

/// What the CUDA path needs of an element type (nothing without the `cuda` feature).
#[cfg(not(feature = "cuda"))]
pub trait CudaElem {}
#[cfg(not(feature = "cuda"))]
impl<T> CudaElem for T {}

/// What the CUDA path needs of an element type: a cudarc device type candle stores.
#[cfg(feature = "cuda")]
pub trait CudaElem:
    scangen::runtime::cudarc::driver::DeviceRepr + candle_core::cuda::CudaDType
{
}
#[cfg(feature = "cuda")]
impl<T: scangen::runtime::cudarc::driver::DeviceRepr + candle_core::cuda::CudaDType> CudaElem
    for T
{
}

#[cfg(feature = "cuda")]
mod imp {
    use crate::tensor::{blocks, to_candle, ScanDType, ScanOpts};
    use candle_core::{CudaStorage, Layout, Result, Shape};
    use scangen::runtime::cudarc::driver::CudaSlice;
    use scangen::runtime::{DeviceSegments, Gpu, ScanError, ScanExtras, Scanner, Segments};
    use scangen::ScanOp;
    use std::any::{Any, TypeId};
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};

    /// Which kernel a scan of shape `(a, d, b)` uses.
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
    enum Shape3 {
        /// One sequence (`a == 1, b == 1`).
        Flat,
        /// `a` rows of `d` (`b == 1`).
        Rows,
        /// `d x b` column scans, one launch per outer block.
        Columns,
    }

    type Key = (usize, TypeId, ScanOpts, Shape3);

    fn gpus() -> &'static Mutex<HashMap<usize, Gpu>> {
        static GPUS: OnceLock<Mutex<HashMap<usize, Gpu>>> = OnceLock::new();
        GPUS.get_or_init(Default::default)
    }

    /// One scanner per key, built by the first thread that asks for it. The cache's own lock is
    /// held only to find the entry: building (an NVRTC compile of seconds) and scanning lock the
    /// entry alone, so scans of other operators, options or shapes, and their compiles, go on
    /// in other threads meanwhile. A scanner owns its scratch: one scan uses it at a time.
    type Entry = Arc<Mutex<Option<Box<dyn Any + Send>>>>;

    fn scanners() -> &'static Mutex<HashMap<Key, Entry>> {
        static SCANNERS: OnceLock<Mutex<HashMap<Key, Entry>>> = OnceLock::new();
        SCANNERS.get_or_init(Default::default)
    }

    fn gpu(ordinal: usize) -> std::result::Result<Gpu, ScanError> {
        let mut gpus = gpus().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(g) = gpus.get(&ordinal) {
            return Ok(g.clone());
        }
        let g = Gpu::new(ordinal)?;
        gpus.insert(ordinal, g.clone());
        Ok(g)
    }

    /// Runs `f` with the cached scanner for `Op` on device `ordinal` (built on first use).
    fn with_scanner<Op, R>(
        ordinal: usize,
        opts: ScanOpts,
        shape: Shape3,
        f: impl FnOnce(&mut Scanner<Op>) -> std::result::Result<R, ScanError>,
    ) -> std::result::Result<R, ScanError>
    where
        Op: ScanOp + 'static,
        Op::Elem: ScanDType,
    {
        let key = (ordinal, TypeId::of::<Op>(), opts, shape);
        let entry = scanners()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default()
            .clone();
        let mut slot = entry.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            let options = opts.scan_options();
            let options = match shape {
                Shape3::Flat => options,
                Shape3::Rows => options.segmented(Segments::Rows { strided: false }),
                Shape3::Columns => options.segmented(Segments::Columns),
            };
            let scanner = gpu(ordinal)?.scanner::<Op>(options)?;
            *slot = Some(Box::new(scanner));
        }
        let scanner = slot
            .as_mut()
            .and_then(|s| s.downcast_mut::<Scanner<Op>>())
            .expect("the cache holds a scanner of this operator under its key");
        f(scanner)
    }

    /// `CustomOp1::cuda_fwd`: scans a contiguous tensor along `dim` on candle's stream.
    pub(crate) fn cuda_fwd<Op>(
        storage: &CudaStorage,
        layout: &Layout,
        dim: usize,
        opts: ScanOpts,
    ) -> Result<(CudaStorage, Shape)>
    where
        Op: ScanOp + 'static,
        Op::Elem: ScanDType,
    {
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("scangen-candle: the scan's input must be contiguous");
        };
        let device = &storage.device;
        let stream = device.cuda_stream();
        let src: &CudaSlice<Op::Elem> = storage.as_cuda_slice::<Op::Elem>()?;
        let input = src.slice(start..end);
        let n = end - start;
        // SAFETY: every element is written by the scan below before the tensor is read (a
        // zero-length tensor has nothing to read).
        let mut out: CudaSlice<Op::Elem> = unsafe { device.alloc::<Op::Elem>(n) }?;
        let (a, d, b) = blocks(layout.dims(), dim);
        let ordinal = stream.context().ordinal();
        if n > 0 {
            let run = if b == 1 {
                let shape = if a == 1 { Shape3::Flat } else { Shape3::Rows };
                with_scanner::<Op, _>(ordinal, opts, shape, |s| {
                    let extras = if shape == Shape3::Rows {
                        ScanExtras::new()
                            .segments(DeviceSegments::rows(a as u64, d as u64, d as u64))
                    } else {
                        ScanExtras::new()
                    };
                    s.scan_device_with(&stream, &input, &mut out, extras)
                })
            } else {
                // One column scan per outer block, on offset views of candle's buffers (a
                // launches: scangen's column kernel has no batch stride yet).
                with_scanner::<Op, _>(ordinal, opts, Shape3::Columns, |s| {
                    let block = d * b;
                    for i in 0..a {
                        let input = input.slice(i * block..(i + 1) * block);
                        let mut output = out.slice_mut(i * block..(i + 1) * block);
                        let extras = ScanExtras::new()
                            .segments(DeviceSegments::columns(d as u64, b as u64, b as u64));
                        s.scan_device_with(&stream, &input, &mut output, extras)?;
                    }
                    Ok(())
                })
            };
            run.map_err(to_candle)?;
        }
        Ok((
            CudaStorage::wrap_cuda_slice(out, device.clone()),
            layout.shape().clone(),
        ))
    }
}
