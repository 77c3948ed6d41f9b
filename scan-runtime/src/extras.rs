//! What a scan of device memory can take and give besides its input and output: an initial
//! value read from device memory, and the scan's total written to device memory.

use crate::error::ScanError;
use crate::segments::DeviceSegments;
use cudarc::driver::{DevicePtr, DevicePtrMut};

/// Extra device buffers of one scan, for [`crate::Scanner::scan_device_with`].
///
/// * `init`: element 0 is the scan's initial value: `out[i] = init ⊕ in[0] ⊕ … ⊕ in[i]`
///   (inclusive) or `init ⊕ in[0] ⊕ … ⊕ in[i-1]` (exclusive; `out[0] = init`). It is read on
///   the device when the scan runs, so a scan chained after another (or replayed from a CUDA
///   graph) takes whatever the buffer holds then, with no host round trip.
/// * `total`: element 0 receives `init ⊕ in[0] ⊕ … ⊕ in[n-1]` (the identity's place is taken by
///   `init` when given; an empty input gives `init`, or the identity).
///
/// Neither may overlap the input or the output.
///
/// * `segments`: the data of a segmented scan ([`DeviceSegments`]), for a scanner built with
///   `ScanOptions::segmented`. Each segment then starts from `init` (or the identity), and
///   `total` receives the last segment's total.
///
/// ```no_run
/// # use scan_runtime::{Gpu, ScanOptions, ScanExtras, builtin::Add};
/// # fn main() -> Result<(), scan_runtime::ScanError> {
/// let gpu = Gpu::new(0)?;
/// let stream = gpu.new_stream()?;
/// let mut scanner = gpu.scanner::<Add<u64>>(ScanOptions::default())?;
/// let a = stream.clone_htod(&[1u64, 2, 3]).unwrap();
/// let b = stream.clone_htod(&[4u64, 5]).unwrap();
/// let (mut out_a, mut out_b) = (stream.alloc_zeros::<u64>(3).unwrap(), stream.alloc_zeros::<u64>(2).unwrap());
/// let mut carry = stream.alloc_zeros::<u64>(1).unwrap();
/// // Scan `a`, then `b` continuing from `a`'s total, without the host in between.
/// scanner.scan_device_with(&stream, &a, &mut out_a, ScanExtras::new().total(&mut carry))?;
/// scanner.scan_device_with(&stream, &b, &mut out_b, ScanExtras::new().init(&carry))?;
/// assert_eq!(stream.clone_dtoh(&out_b).unwrap(), [10, 15]);
/// # Ok(())
/// # }
/// ```
pub struct ScanExtras<'a, T> {
    pub(crate) init: Option<&'a dyn DevicePtr<T>>,
    pub(crate) total: Option<&'a mut dyn DevicePtrMut<T>>,
    pub(crate) segments: Option<DeviceSegments<'a>>,
}

impl<'a, T> ScanExtras<'a, T> {
    /// No initial value, no total: the same as [`crate::Scanner::scan_device`].
    pub fn new() -> ScanExtras<'a, T> {
        ScanExtras {
            init: None,
            total: None,
            segments: None,
        }
    }

    /// Starts the scan from element 0 of `init` (device memory, read when the scan runs).
    pub fn init(mut self, init: &'a dyn DevicePtr<T>) -> ScanExtras<'a, T> {
        self.init = Some(init);
        self
    }

    /// Restarts the scan at the segments `segments` describes.
    pub fn segments(mut self, segments: DeviceSegments<'a>) -> ScanExtras<'a, T> {
        self.segments = Some(segments);
        self
    }

    /// Writes the scan's total to element 0 of `total`.
    pub fn total(mut self, total: &'a mut dyn DevicePtrMut<T>) -> ScanExtras<'a, T> {
        self.total = Some(total);
        self
    }

    /// [`ScanError::EmptyExtra`] for an initial value or a total buffer of no elements.
    pub(crate) fn check_not_empty(&self) -> Result<(), ScanError> {
        for (what, len) in [
            ("init", self.init.as_ref().map(|b| b.len())),
            ("total", self.total.as_ref().map(|b| b.len())),
        ] {
            if len == Some(0) {
                return Err(ScanError::EmptyExtra { what });
            }
        }
        Ok(())
    }
}

impl<T> Default for ScanExtras<'_, T> {
    fn default() -> Self {
        ScanExtras::new()
    }
}
