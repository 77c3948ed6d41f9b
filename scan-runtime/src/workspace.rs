//! Temporary device storage shared by all launches of one scanner: the single-pass tile state
//! and the hierarchy's level buffers, their sizes, and the stream their last use was on.

use crate::capture::Capture;
use crate::device_buffer::DeviceBuffer;
use crate::error::{driver, ScanError};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{result, CudaStream};
use std::sync::Arc;

/// Scratch a launch plan needs, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Needs {
    /// All hierarchy levels together (`LaunchPlan::level_elems` elements).
    pub(crate) level_bytes: u64,
    /// Single-pass tile state (`GeneratedScan::tile_state_bytes`); 0 for hierarchical plans.
    pub(crate) tile_state_bytes: u64,
}

impl Needs {
    /// Enough for both.
    pub(crate) fn max(self, other: Needs) -> Needs {
        Needs {
            level_bytes: self.level_bytes.max(other.level_bytes),
            tile_state_bytes: self.tile_state_bytes.max(other.tile_state_bytes),
        }
    }
}

pub(crate) struct Workspace {
    levels: Option<DeviceBuffer>,
    /// Zeroed once when allocated; the kernel keeps its own launch state in it from then on.
    tile_state: Option<DeviceBuffer>,
    /// The operator's identity, one element, for the total of an empty scan.
    identity: Option<DeviceBuffer>,
    /// Buffers outgrown after a launch was captured into a CUDA graph: the graph still points
    /// at them, so they live as long as the scanner.
    retained: Vec<DeviceBuffer>,
    /// Whether a captured launch uses the current buffers.
    captured: bool,
    /// The stream of the last launch: later launches elsewhere are ordered after it.
    last_stream: Option<Arc<CudaStream>>,
}

impl Workspace {
    pub(crate) fn new() -> Workspace {
        Workspace {
            levels: None,
            tile_state: None,
            identity: None,
            retained: Vec::new(),
            captured: false,
            last_stream: None,
        }
    }

    /// What `needs` would have to allocate, in words for an error; `None` when it fits.
    pub(crate) fn shortfall(&self, needs: Needs) -> Option<String> {
        let have = |b: &Option<DeviceBuffer>| b.as_ref().map_or(0, DeviceBuffer::bytes);
        let mut missing = Vec::new();
        if needs.tile_state_bytes > have(&self.tile_state) {
            missing.push(format!(
                "{} bytes of single-pass tile state (has {})",
                needs.tile_state_bytes,
                have(&self.tile_state)
            ));
        }
        if needs.level_bytes > have(&self.levels) {
            missing.push(format!(
                "{} bytes of hierarchy level buffers (has {})",
                needs.level_bytes,
                have(&self.levels)
            ));
        }
        (!missing.is_empty()).then(|| missing.join(" and "))
    }

    /// Orders `stream` after this workspace's last launch if that was on another stream: the
    /// scratch is shared. A device-side wait, not a host sync; inside a capture it would wait on
    /// work outside the capture, which CUDA forbids, so there it is an error instead.
    pub(crate) fn follow(
        &mut self,
        stream: &Arc<CudaStream>,
        capture: Capture,
    ) -> Result<(), ScanError> {
        let Some(last) = &self.last_stream else {
            return Ok(());
        };
        if last == stream {
            return Ok(());
        }
        if capture == Capture::Active {
            return Err(ScanError::CaptureAfterOtherStream);
        }
        stream.join(last).map_err(driver(
            "ordering the stream after the scanner's previous launch",
        ))?;
        self.last_stream = Some(stream.clone());
        Ok(())
    }

    /// Grows the buffers to `needs`, allocating on `stream` (already ordered after every
    /// earlier use by `follow`). Outgrown buffers are freed on `stream`, after those uses, unless
    /// a captured graph may still use them.
    pub(crate) fn reserve(
        &mut self,
        stream: &Arc<CudaStream>,
        needs: Needs,
    ) -> Result<(), ScanError> {
        let grow_levels = needs.level_bytes > self.levels.as_ref().map_or(0, DeviceBuffer::bytes);
        let grow_state =
            needs.tile_state_bytes > self.tile_state.as_ref().map_or(0, DeviceBuffer::bytes);
        if grow_levels {
            // Level buffers are written by reduce_tiles before any kernel reads them.
            let levels = DeviceBuffer::new(
                stream,
                needs.level_bytes,
                false,
                "the hierarchy's level buffers",
            )?;
            let old = self.levels.replace(levels);
            self.retire(old, stream);
        }
        if grow_state {
            // Zeroed once, here: status words of epoch 0 mean "written by no launch", and a zero
            // launch word means "no launch yet".
            let state = DeviceBuffer::new(
                stream,
                needs.tile_state_bytes,
                true,
                "the single-pass tile state",
            )?;
            let old = self.tile_state.replace(state);
            self.retire(old, stream);
        }
        if grow_levels || grow_state {
            // The new buffers are in no graph yet; any that were kept are retained.
            self.captured = self.captured && !(grow_levels && grow_state);
        }
        Ok(())
    }

    fn retire(&mut self, old: Option<DeviceBuffer>, stream: &Arc<CudaStream>) {
        if let Some(mut old) = old {
            if self.captured {
                self.retained.push(old);
            } else {
                old.free_after(stream);
            }
        }
    }

    /// Device address of `value` (the operator's identity), uploaded on `stream` the first time;
    /// inside a capture it must have been uploaded before (`Scanner::prepare`).
    pub(crate) fn identity<T>(
        &mut self,
        stream: &Arc<CudaStream>,
        capture: Capture,
        value: &[T],
    ) -> Result<CUdeviceptr, ScanError> {
        if let Some(identity) = &self.identity {
            return Ok(identity.ptr());
        }
        if capture == Capture::Active {
            return Err(ScanError::NotPreparedForCapture {
                n: 0,
                needs: "the operator's identity uploaded (the total of an empty scan)".into(),
            });
        }
        let bytes = std::mem::size_of_val(value) as u64;
        let buffer = DeviceBuffer::new(stream, bytes, false, "the operator's identity")?;
        // SAFETY: `buffer` holds `value`'s bytes; a copy from pageable memory is staged before the call
        // returns, so `value` need not outlive it.
        unsafe { result::memcpy_htod_async(buffer.ptr(), value, stream.cu_stream()) }
            .map_err(driver("uploading the operator's identity"))?;
        Ok(self.identity.insert(buffer).ptr())
    }

    /// Device address of the level buffers (0 if there are none).
    pub(crate) fn levels_ptr(&self) -> CUdeviceptr {
        self.levels.as_ref().map_or(0, DeviceBuffer::ptr)
    }

    /// Device address and size in bytes of the tile state ((0, 0) if there is none).
    pub(crate) fn tile_state(&self) -> (CUdeviceptr, u64) {
        self.tile_state
            .as_ref()
            .map_or((0, 0), |s| (s.ptr(), s.bytes()))
    }

    /// Records a launch on `stream`: later launches on other streams are ordered after it, and
    /// a captured one pins the buffers it used.
    pub(crate) fn used(&mut self, stream: &Arc<CudaStream>, capture: Capture) {
        self.last_stream = Some(stream.clone());
        if capture == Capture::Active {
            self.captured = true;
        }
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        // Freed after the last launch, on its stream. (Graph replays that are still running are
        // the caller's to wait for before dropping the scanner, as for any buffer they use.)
        if let Some(last) = self.last_stream.clone() {
            let buffers = self
                .levels
                .iter_mut()
                .chain(self.tile_state.iter_mut())
                .chain(self.identity.iter_mut())
                .chain(self.retained.iter_mut());
            for buffer in buffers {
                buffer.free_after(&last);
            }
        }
    }
}
