//! Whether a stream is being captured into a CUDA graph, and what that forbids.
//!
//! Inside a capture nothing may load a module, allocate, free, memset on another stream, wait
//! on work recorded outside the capture, or synchronize: the scanner checks this state before
//! each launch and answers with a typed error instead of breaking the user's capture.

use crate::error::{driver, ScanError};
use cudarc::driver::sys::{CUresult, CUstreamCaptureStatus};
use cudarc::driver::CudaStream;

/// A stream's capture state, as far as a launch cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Capture {
    /// Work is executed: the scanner may allocate, load and wait.
    None,
    /// Work is recorded into a graph: it will run at each replay, with the buffers and
    /// arguments it has now.
    Active,
}

/// The capture state of `stream`; a capture that is already invalidated is an error.
pub(crate) fn status(stream: &CudaStream) -> Result<Capture, ScanError> {
    if stream.cu_stream().is_null() {
        // The legacy default stream cannot be captured, and asking about it while another
        // stream captures in global mode is itself an error.
        return Ok(Capture::None);
    }
    match stream
        .capture_status()
        .map_err(driver("asking whether the stream is being captured"))?
    {
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE => Ok(Capture::None),
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE => Ok(Capture::Active),
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_INVALIDATED => {
            Err(ScanError::CaptureInvalidated {
                why: "before the scan was called (an earlier operation in the capture was not \
                      allowed); end the capture, fix that operation and capture again",
            })
        }
    }
}

/// After the caller's buffers were handed to the scan inside a capture: with cudarc's event
/// tracking on, that made the stream wait on each buffer's last recorded use, which CUDA forbids
/// (and which invalidates the capture) when the use was outside the capture. cudarc keeps such a
/// failed wait in the context for its next call (`CudaContext::check_err`) instead of returning
/// it: it is taken out here and reported as what it is, instead of launching into a dead capture.
pub(crate) fn check_buffers(stream: &CudaStream, before: Capture) -> Result<(), ScanError> {
    if before != Capture::Active {
        return Ok(());
    }
    if let Err(source) = stream.context().check_err() {
        return Err(match source.0 {
            CUresult::CUDA_ERROR_STREAM_CAPTURE_ISOLATION
            | CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED => ScanError::CaptureInvalidated {
                why: "by the wait on the input or output buffer's last use: cudarc's event \
                      tracking makes every use of a CudaSlice wait for the previous one, and \
                      CUDA forbids a capture to wait on work recorded outside it. Use buffers \
                      whose last use was inside this capture (or that are new), turn event \
                      tracking off (CudaContext::disable_event_tracking before allocating them), \
                      or pass raw device pointers with Scanner::scan_device_ptr",
            },
            _ => ScanError::Driver {
                step: "making the stream wait on the buffers' last use",
                source,
            },
        });
    }
    status(stream).map(|_| ())
}
