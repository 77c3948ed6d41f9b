//! Scratch memory a scanner owns: a device allocation with no cudarc event tracking.
//!
//! cudarc's `CudaSlice` records and waits on events around every use when the context tracks
//! events (its default). Inside a stream capture, a wait on an event recorded outside it
//! invalidates the capture (`CUDA_ERROR_STREAM_CAPTURE_ISOLATION`), and after the capture, a
//! wait on an event recorded inside it fails (`CUDA_ERROR_INVALID_VALUE`). The scanner orders
//! its scratch itself (one stream at a time, `Workspace::follow`), so its buffers carry no
//! events at all: nothing about them can break a capture.

use crate::error::{alloc, driver, ScanError};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{result, CudaStream};
use std::sync::Arc;

/// `bytes` of device memory, allocated stream-ordered where the device supports it, freed on
/// the stream given to [`DeviceBuffer::free_after`] (or the allocating one) when dropped.
pub(crate) struct DeviceBuffer {
    ptr: CUdeviceptr,
    bytes: u64,
    /// Where the free is queued: a stream that is ordered after every use.
    free_on: Arc<CudaStream>,
}

impl DeviceBuffer {
    /// Allocates `bytes` (at least 1) on `stream`; zeroed with an async memset on the same
    /// stream when `zeroed`. `what` names the buffer in errors.
    pub(crate) fn new(
        stream: &Arc<CudaStream>,
        bytes: u64,
        zeroed: bool,
        what: &'static str,
    ) -> Result<DeviceBuffer, ScanError> {
        let ctx = stream.context();
        ctx.bind_to_thread()
            .map_err(driver("making the device's context current"))?;
        let size =
            usize::try_from(bytes.max(1)).map_err(|_| ScanError::OutOfMemory { bytes, what })?;
        // SAFETY: a plain allocation of `size` bytes in the current context; the pointer is
        // owned by the returned value and freed exactly once, in drop.
        let ptr = unsafe {
            if ctx.has_async_alloc() {
                result::malloc_async(stream.cu_stream(), size)
            } else {
                result::malloc_sync(size)
            }
        }
        .map_err(alloc(bytes, what))?;
        let buffer = DeviceBuffer {
            ptr,
            bytes,
            free_on: stream.clone(),
        };
        if zeroed {
            // SAFETY: `ptr` points to `size` bytes allocated above, on this stream.
            unsafe { result::memset_d8_async(ptr, 0, size, stream.cu_stream()) }
                .map_err(driver(what))?;
        }
        Ok(buffer)
    }

    pub(crate) fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Queue the eventual free on `stream` (which must be ordered after every use so far).
    pub(crate) fn free_after(&mut self, stream: &Arc<CudaStream>) {
        self.free_on = stream.clone();
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        let ctx = self.free_on.context();
        // Errors cannot be returned from drop; cudarc keeps them for `CudaContext::check_err`.
        ctx.record_err(ctx.bind_to_thread());
        // SAFETY: `ptr` was allocated by `new` in this context and is freed only here, on a
        // stream ordered after its uses (stream-ordered free), or synchronously.
        let freed = unsafe {
            if ctx.has_async_alloc() {
                result::free_async(self.ptr, self.free_on.cu_stream())
            } else {
                result::free_sync(self.ptr)
            }
        };
        ctx.record_err(freed);
    }
}
