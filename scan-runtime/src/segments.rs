//! The data a segmented scan restarts by: head flags, keys, CSR offsets, rows or columns, on the device
//! ([`DeviceSegments`], for [`crate::ScanExtras::segments`]) or on the host ([`HostSegments`]).
//!
//! Which rule a scanner applies is fixed when it is built (`ScanOptions::segmented`), because
//! it is compiled into its kernel; the data comes with each scan and must match that rule.

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, SyncOnDrop};
use scan_codegen::{OffsetWidth, Segments};
use scan_core::PrimType;
use std::sync::Arc;

/// The seal of [`SegmentKey`] and [`SegmentOffset`]: public in a private module, so no other
/// crate can name it and implement the traits.
mod sealed {
    pub trait Sealed {}
}

/// Integer types that can key a segmented scan (a segment starts where the key changes).
///
/// Implemented for the eight primitive integers, `i8` to `u64`, and sealed: no other type can
/// implement it, because the kernels and [`HostSegments::keys`] (which reinterprets the slice by
/// `PRIM`) take `PRIM` to be `Self`'s own type.
///
/// ```compile_fail
/// # use scan_runtime::{cudarc::driver::DeviceRepr, HostSegments, SegmentKey};
/// #[derive(Clone, Copy, PartialEq)]
/// struct Key(u8);
/// unsafe impl DeviceRepr for Key {}
/// impl SegmentKey for Key {
///     // Would make `HostSegments::keys` read 8 bytes per 1-byte key.
///     const PRIM: scan_core::PrimType = scan_core::PrimType::U64;
/// }
/// let _ = HostSegments::keys(&[Key(1), Key(2)]);
/// ```
pub trait SegmentKey:
    sealed::Sealed + DeviceRepr + Copy + PartialEq + Send + Sync + 'static
{
    /// `Self` as a primitive: the key type compiled into the kernel
    /// ([`Segments::Keys`](scan_codegen::Segments::Keys)).
    const PRIM: PrimType;
}

/// Integer types of CSR segment offsets: `u32` and `u64`. Sealed, like [`SegmentKey`]: the
/// kernel reads each offset as `WIDTH` bytes.
pub trait SegmentOffset:
    sealed::Sealed + DeviceRepr + Copy + Into<u64> + Send + Sync + 'static
{
    /// `Self`'s width, compiled into the kernel
    /// ([`Segments::Offsets`](scan_codegen::Segments::Offsets)).
    const WIDTH: OffsetWidth;
}

macro_rules! keys {
    ($($t:ty => $p:ident),*) => {$(
        // (u32 and u64 are sealed here too, for SegmentOffset.)
        impl sealed::Sealed for $t {}
        impl SegmentKey for $t {
            const PRIM: PrimType = PrimType::$p;
        }
    )*};
}
keys!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64);

impl SegmentOffset for u32 {
    const WIDTH: OffsetWidth = OffsetWidth::U32;
}
impl SegmentOffset for u64 {
    const WIDTH: OffsetWidth = OffsetWidth::U64;
}

/// A device buffer of any element type, seen as an address and a length.
pub(crate) trait ErasedBuffer {
    fn len(&self) -> usize;
    fn stream(&self) -> &Arc<CudaStream>;
    fn read<'s>(&'s self, stream: &'s Arc<CudaStream>) -> (CUdeviceptr, SyncOnDrop<'s>);
}

struct Typed<'a, T>(&'a dyn DevicePtr<T>);

impl<T> ErasedBuffer for Typed<'_, T> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.0.stream()
    }
    fn read<'s>(&'s self, stream: &'s Arc<CudaStream>) -> (CUdeviceptr, SyncOnDrop<'s>) {
        self.0.device_ptr(stream)
    }
}

/// The buffers [`UploadedSegments`] owns.
impl<T> ErasedBuffer for CudaSlice<T> {
    fn len(&self) -> usize {
        CudaSlice::len(self)
    }
    fn stream(&self) -> &Arc<CudaStream> {
        CudaSlice::stream(self)
    }
    fn read<'s>(&'s self, stream: &'s Arc<CudaStream>) -> (CUdeviceptr, SyncOnDrop<'s>) {
        self.device_ptr(stream)
    }
}

/// A borrowed buffer: what a [`DeviceSegments`] viewing an [`UploadedSegments`] holds.
impl<B: ErasedBuffer + ?Sized> ErasedBuffer for &B {
    fn len(&self) -> usize {
        (**self).len()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        (**self).stream()
    }
    fn read<'s>(&'s self, stream: &'s Arc<CudaStream>) -> (CUdeviceptr, SyncOnDrop<'s>) {
        (**self).read(stream)
    }
}

/// Host segment data copied to the device for one scan of a host-slice call
/// ([`HostSegments::upload`]); [`UploadedSegments::device`] views it as [`DeviceSegments`].
pub(crate) struct UploadedSegments {
    rule: Segments,
    rows: (u64, u64, u64),
    buffer: Option<Box<dyn ErasedBuffer>>,
}

impl UploadedSegments {
    /// The uploaded data as the segments of one device scan.
    pub(crate) fn device(&self) -> DeviceSegments<'_> {
        DeviceSegments {
            rule: self.rule,
            buffer: self
                .buffer
                .as_deref()
                .map(|b| Box::new(b) as Box<dyn ErasedBuffer + '_>),
            rows: self.rows,
        }
    }
}

/// Segment data in device memory for one scan.
pub struct DeviceSegments<'a> {
    pub(crate) rule: Segments,
    pub(crate) buffer: Option<Box<dyn ErasedBuffer + 'a>>,
    /// Rows and columns: (rows, cols, row_stride).
    pub(crate) rows: (u64, u64, u64),
}

impl<'a> DeviceSegments<'a> {
    /// `flags[i] != 0` starts a segment at element `i` (one flag per element; `bool` data can
    /// be passed as its bytes).
    pub fn flags(flags: &'a dyn DevicePtr<u8>) -> DeviceSegments<'a> {
        DeviceSegments {
            rule: Segments::Flags,
            buffer: Some(Box::new(Typed(flags))),
            rows: (0, 0, 0),
        }
    }

    /// A segment starts wherever `keys[i] != keys[i - 1]` (one key per element).
    pub fn keys<K: SegmentKey>(keys: &'a dyn DevicePtr<K>) -> DeviceSegments<'a> {
        DeviceSegments {
            rule: Segments::Keys(K::PRIM),
            buffer: Some(Box::new(Typed(keys))),
            rows: (0, 0, 0),
        }
    }

    /// CSR offsets `offsets[0..=m]`, ascending, at most `n`: segment `j` is
    /// `[offsets[j], offsets[j+1])`; equal neighbours are empty segments. Elements before
    /// `offsets[0]` form a segment of their own. Device offsets are not checked (that would
    /// need a copy to the host); whatever they hold, the kernel reads and writes only inside
    /// the buffers. [`HostSegments::Offsets32`]/`Offsets64` are checked.
    pub fn offsets<O: SegmentOffset>(offsets: &'a dyn DevicePtr<O>) -> DeviceSegments<'a> {
        let rule = Segments::Offsets(O::WIDTH);
        DeviceSegments {
            rule,
            buffer: Some(Box::new(Typed(offsets))),
            rows: (0, 0, 0),
        }
    }

    /// `rows` rows of `cols` elements, `row_stride` elements apart (input and output alike;
    /// `row_stride == cols` for a contiguous matrix): each row scanned on its own, as
    /// `cumsum(dim=-1)`. The scan covers `rows * cols` elements.
    pub fn rows(rows: u64, cols: u64, row_stride: u64) -> DeviceSegments<'a> {
        DeviceSegments {
            rule: Segments::Rows {
                strided: row_stride != cols,
            },
            buffer: None,
            rows: (rows, cols, row_stride),
        }
    }

    /// `rows` rows of `cols` elements, `row_stride` elements apart: each column scanned down
    /// the rows on its own (up them for a reverse scan), as `cumsum(dim=0)`. An initial value
    /// seeds every column; a total buffer receives `cols` values, each column's total.
    pub fn columns(rows: u64, cols: u64, row_stride: u64) -> DeviceSegments<'a> {
        DeviceSegments {
            rule: Segments::Columns,
            buffer: None,
            rows: (rows, cols, row_stride),
        }
    }
}

/// Segment data in host memory, for the host-slice calls and the CPU backend.
#[derive(Clone, Copy, Debug)]
pub enum HostSegments<'a> {
    /// Head flags: `flags[i] != 0` starts a segment at element `i` (one flag per element).
    Flags(&'a [u8]),
    /// A segment starts wherever `keys[i] != keys[i - 1]` (one key per element); build it with
    /// [`HostSegments::keys`].
    Keys(HostKeys<'a>),
    /// `u32` CSR offsets, as [`DeviceSegments::offsets`] (but checked:
    /// [`ScanError::BadOffsets`](crate::ScanError::BadOffsets)).
    Offsets32(&'a [u32]),
    /// `u64` CSR offsets, as [`DeviceSegments::offsets`] (but checked:
    /// [`ScanError::BadOffsets`](crate::ScanError::BadOffsets)).
    Offsets64(&'a [u64]),
    /// `rows × cols`, rows `row_stride` elements apart, each row its own segment.
    Rows {
        /// Number of rows.
        rows: u64,
        /// Elements per row (the scanned length).
        cols: u64,
        /// Elements from the start of one row to the start of the next (`>= cols`).
        row_stride: u64,
    },
    /// `rows × cols`, rows `row_stride` elements apart, each column its own segment
    /// (scanned down the rows).
    Columns {
        /// Number of rows (the scanned length).
        rows: u64,
        /// Number of columns (independent scans).
        cols: u64,
        /// Elements from the start of one row to the start of the next (`>= cols`).
        row_stride: u64,
    },
}

/// Keys of any [`SegmentKey`] type, on the host.
#[derive(Clone, Copy, Debug)]
pub enum HostKeys<'a> {
    /// `i8` keys.
    I8(&'a [i8]),
    /// `i16` keys.
    I16(&'a [i16]),
    /// `i32` keys.
    I32(&'a [i32]),
    /// `i64` keys.
    I64(&'a [i64]),
    /// `u8` keys.
    U8(&'a [u8]),
    /// `u16` keys.
    U16(&'a [u16]),
    /// `u32` keys.
    U32(&'a [u32]),
    /// `u64` keys.
    U64(&'a [u64]),
}

impl<'a> HostSegments<'a> {
    /// [`HostSegments::Keys`] from a slice of any [`SegmentKey`] type: a segment starts
    /// wherever `keys[i] != keys[i - 1]`.
    pub fn keys<K: SegmentKey>(keys: &'a [K]) -> HostSegments<'a> {
        // SAFETY: K::PRIM names K's own type, so each cast is the identity.
        let any = keys.as_ptr() as *const u8;
        let n = keys.len();
        let k = unsafe {
            match K::PRIM {
                PrimType::I8 => HostKeys::I8(std::slice::from_raw_parts(any as *const i8, n)),
                PrimType::I16 => HostKeys::I16(std::slice::from_raw_parts(any as *const i16, n)),
                PrimType::I32 => HostKeys::I32(std::slice::from_raw_parts(any as *const i32, n)),
                PrimType::I64 => HostKeys::I64(std::slice::from_raw_parts(any as *const i64, n)),
                PrimType::U8 => HostKeys::U8(std::slice::from_raw_parts(any, n)),
                PrimType::U16 => HostKeys::U16(std::slice::from_raw_parts(any as *const u16, n)),
                PrimType::U32 => HostKeys::U32(std::slice::from_raw_parts(any as *const u32, n)),
                PrimType::U64 => HostKeys::U64(std::slice::from_raw_parts(any as *const u64, n)),
                PrimType::F32 | PrimType::F64 | PrimType::F16 | PrimType::BF16 => {
                    unreachable!("no float SegmentKey")
                }
            }
        };
        HostSegments::Keys(k)
    }

    /// Copies the flags, keys or offsets to the device on `stream` (rows and columns have
    /// none), for a host-slice call's scan.
    pub(crate) fn upload(
        &self,
        stream: &Arc<CudaStream>,
    ) -> Result<UploadedSegments, crate::ScanError> {
        fn owned<T: DeviceRepr + 'static>(
            stream: &Arc<CudaStream>,
            host: &[T],
        ) -> Result<Option<Box<dyn ErasedBuffer>>, crate::ScanError> {
            let device = stream.clone_htod(host).map_err(crate::error::driver(
                "copying the segment data to the device",
            ))?;
            Ok(Some(Box::new(device)))
        }
        let buffer = match self {
            HostSegments::Flags(f) => owned(stream, f)?,
            HostSegments::Offsets32(o) => owned(stream, o)?,
            HostSegments::Offsets64(o) => owned(stream, o)?,
            HostSegments::Keys(k) => match k {
                HostKeys::I8(k) => owned(stream, k)?,
                HostKeys::I16(k) => owned(stream, k)?,
                HostKeys::I32(k) => owned(stream, k)?,
                HostKeys::I64(k) => owned(stream, k)?,
                HostKeys::U8(k) => owned(stream, k)?,
                HostKeys::U16(k) => owned(stream, k)?,
                HostKeys::U32(k) => owned(stream, k)?,
                HostKeys::U64(k) => owned(stream, k)?,
            },
            HostSegments::Rows { .. } | HostSegments::Columns { .. } => None,
        };
        Ok(UploadedSegments {
            rule: self.rule(),
            rows: self.matrix().unwrap_or((0, 0, 0)),
            buffer,
        })
    }

    /// The rule the data is for.
    pub fn rule(&self) -> Segments {
        match self {
            HostSegments::Flags(_) => Segments::Flags,
            HostSegments::Keys(k) => Segments::Keys(k.prim()),
            HostSegments::Offsets32(_) => Segments::Offsets(OffsetWidth::U32),
            HostSegments::Offsets64(_) => Segments::Offsets(OffsetWidth::U64),
            HostSegments::Rows {
                cols, row_stride, ..
            } => Segments::Rows {
                strided: row_stride != cols,
            },
            HostSegments::Columns { .. } => Segments::Columns,
        }
    }

    /// `(rows, cols, row_stride)` of rows or columns.
    pub fn matrix(&self) -> Option<(u64, u64, u64)> {
        match *self {
            HostSegments::Rows {
                rows,
                cols,
                row_stride,
            }
            | HostSegments::Columns {
                rows,
                cols,
                row_stride,
            } => Some((rows, cols, row_stride)),
            _ => None,
        }
    }

    /// Checks the data against an `n`-element scan without building anything: one flag or key
    /// per element; offsets present, ascending and at most `n`. (Rows are checked against the
    /// buffers by `ScanError::check_rows`.)
    pub fn check(&self, n: u64) -> Result<(), crate::ScanError> {
        use crate::ScanError;
        match self {
            HostSegments::Flags(f) => ScanError::check_segment_len("flags", f.len(), n),
            HostSegments::Keys(k) => ScanError::check_segment_len("keys", k.len(), n),
            HostSegments::Offsets32(o) => check_offsets(o.iter().map(|&x| u64::from(x)), n),
            HostSegments::Offsets64(o) => check_offsets(o.iter().copied(), n),
            HostSegments::Rows { .. } | HostSegments::Columns { .. } => Ok(()),
        }
    }

    /// Whether a segment starts at each position of the `n`-element row-major sequence
    /// (position 0 always does), after checking the data against `n`. Columns are not runs of
    /// that sequence: they are [`ScanError::SegmentsMismatch`](crate::ScanError).
    pub fn starts(&self, n: u64) -> Result<Vec<bool>, crate::ScanError> {
        self.check(n)?;
        let mut starts = vec![false; n as usize];
        match self {
            HostSegments::Flags(f) => {
                for (s, &x) in starts.iter_mut().zip(f.iter()) {
                    *s = x != 0;
                }
            }
            HostSegments::Keys(k) => {
                for (i, s) in starts.iter_mut().enumerate().skip(1) {
                    *s = k.differs(i);
                }
            }
            HostSegments::Offsets32(o) => {
                mark_offsets(o.iter().map(|&x| u64::from(x)), n, &mut starts)
            }
            HostSegments::Offsets64(o) => mark_offsets(o.iter().copied(), n, &mut starts),
            HostSegments::Rows { cols, .. } => {
                for (i, s) in starts.iter_mut().enumerate() {
                    *s = (i as u64).checked_rem(*cols) == Some(0);
                }
            }
            HostSegments::Columns { .. } => {
                return Err(crate::ScanError::SegmentsMismatch {
                    scanner: "a rule of runs (flags, keys, offsets, rows)".into(),
                    given: "columns".into(),
                    given_rule: "Columns".into(),
                })
            }
        }
        if let Some(first) = starts.first_mut() {
            *first = true;
        }
        Ok(starts)
    }
}

/// Offsets present, ascending and at most `n`.
fn check_offsets(offsets: impl Iterator<Item = u64>, n: u64) -> Result<(), crate::ScanError> {
    let mut previous = 0u64;
    let mut count = 0usize;
    for (k, o) in offsets.enumerate() {
        count += 1;
        if o < previous || o > n {
            return Err(crate::ScanError::BadOffsets {
                index: k,
                value: o,
                previous,
                n,
            });
        }
        previous = o;
    }
    if count == 0 {
        return Err(crate::ScanError::BadOffsets {
            index: 0,
            value: 0,
            previous: 0,
            n,
        });
    }
    Ok(())
}

/// Marks the (checked) offsets below `n` as segment starts.
fn mark_offsets(offsets: impl Iterator<Item = u64>, n: u64, starts: &mut [bool]) {
    for o in offsets.filter(|&o| o < n) {
        starts[o as usize] = true;
    }
}

impl HostKeys<'_> {
    /// Number of keys.
    pub fn len(&self) -> usize {
        match self {
            HostKeys::I8(k) => k.len(),
            HostKeys::I16(k) => k.len(),
            HostKeys::I32(k) => k.len(),
            HostKeys::I64(k) => k.len(),
            HostKeys::U8(k) => k.len(),
            HostKeys::U16(k) => k.len(),
            HostKeys::U32(k) => k.len(),
            HostKeys::U64(k) => k.len(),
        }
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The keys' integer type.
    pub fn prim(&self) -> PrimType {
        match self {
            HostKeys::I8(_) => PrimType::I8,
            HostKeys::I16(_) => PrimType::I16,
            HostKeys::I32(_) => PrimType::I32,
            HostKeys::I64(_) => PrimType::I64,
            HostKeys::U8(_) => PrimType::U8,
            HostKeys::U16(_) => PrimType::U16,
            HostKeys::U32(_) => PrimType::U32,
            HostKeys::U64(_) => PrimType::U64,
        }
    }

    /// Whether key `i` differs from key `i - 1` (`i >= 1`).
    fn differs(&self, i: usize) -> bool {
        match self {
            HostKeys::I8(k) => k[i] != k[i - 1],
            HostKeys::I16(k) => k[i] != k[i - 1],
            HostKeys::I32(k) => k[i] != k[i - 1],
            HostKeys::I64(k) => k[i] != k[i - 1],
            HostKeys::U8(k) => k[i] != k[i - 1],
            HostKeys::U16(k) => k[i] != k[i - 1],
            HostKeys::U32(k) => k[i] != k[i - 1],
            HostKeys::U64(k) => k[i] != k[i - 1],
        }
    }
}
