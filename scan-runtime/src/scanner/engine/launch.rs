//! The engine's launches: the checks of a scan's arguments, the plan and scratch made ready
//! (`ScanEngine::ready`), and the kernels enqueued with their seeds and segment arguments.

use super::ScanEngine;
use crate::capture::{self, Capture};
use crate::column_plan::ColumnShape;
use crate::error::{driver, ScanError};
use crate::gpu::LoadedScan;
use crate::launch_plan::{self, Buffer, Kernel, LaunchPlan};
use crate::segments::DeviceSegments;
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use scan_codegen::{InputSize, Segments};
use std::sync::Arc;

impl ScanEngine {
    /// Enqueues a scan of `n` positions of `inputs` (one array of elements, or a fused scan's
    /// input arrays) into `output`, seeded with `seeds.init`, writing `seeds.total` (0: none),
    /// with `seeds.segment`'s arguments for a segmented scanner (flags, keys, offsets or rows;
    /// the caller checked them against the scanner's rule and `n`).
    ///
    /// # Safety
    ///
    /// Every address must be in this engine's context and valid for what the kernels access:
    /// each input array for `n` values of its type, `output` for `n` outputs, `init`/`total`
    /// for one element each, the segment data for what its rule reads; ordered on `stream`.
    pub(crate) unsafe fn scan_ptrs(
        &mut self,
        stream: &Arc<CudaStream>,
        inputs: &[CUdeviceptr],
        output: CUdeviceptr,
        n: u64,
        seeds: Seeds,
    ) -> Result<(), ScanError> {
        self.check_device(stream)?;
        let capture = capture::status(stream)?;
        match self.ready(stream, capture, n, None)? {
            Some(ready) => self.enqueue(stream, capture, &ready, inputs, output, seeds),
            None if seeds.total != 0 => {
                let from = if seeds.init != 0 {
                    seeds.init
                } else {
                    self.identity_on_device(stream, capture)?
                };
                copy_empty_total(stream, seeds.total, from, self.elem_bytes, 1)
            }
            None => Ok(()),
        }
    }

    pub(crate) fn check_rule(&self, given: Segments) -> Result<(), ScanError> {
        ScanError::check_rule(self.variant().segments, given)
    }

    /// Checks segment data against the scanner's rule and `len` (the buffers' length); returns
    /// the number of elements the scan covers (rows x cols for rows, else `len`).
    pub(crate) fn check_segments(
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

    pub(crate) fn check_device(&self, stream: &Arc<CudaStream>) -> Result<(), ScanError> {
        if **stream.context() == **self.gpu.context() {
            Ok(())
        } else {
            Err(ScanError::WrongDevice {
                scanner: self.gpu.ordinal(),
                stream: stream.context().ordinal(),
            })
        }
    }

    /// Everything a scan of `n` elements on `stream` needs before its launches can be enqueued:
    /// the kernel variant loaded, the plan, the scratch sized and ordered after earlier uses.
    /// Inside a capture (`capture` is `Active`) nothing is loaded, allocated or waited on: what
    /// that would need is an error naming `prepare`, returned before any buffer is touched so
    /// the capture stays intact. `None`: nothing to launch (n = 0).
    /// `columns`: `(rows, cols)` of a column scan, whose launch shape follows the matrix.
    pub(crate) fn ready(
        &mut self,
        stream: &Arc<CudaStream>,
        capture: Capture,
        n: u64,
        columns: Option<(u64, u64)>,
    ) -> Result<Option<ReadyLaunch>, ScanError> {
        // An empty scan launches nothing, so it needs no kernel: checked before a shape is
        // picked, which would load one (and inside a capture refuse as not prepared).
        if n == 0 {
            return Ok(None);
        }
        let (class, loaded, tile) = self.variant_for(n, capture)?;
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
            class,
            n,
        }))
    }

    /// The operator's identity in device memory (the total of an empty scan with no initial
    /// value), uploaded on first use; inside a capture it must already be there (`prepare`).
    pub(crate) fn identity_on_device(
        &mut self,
        stream: &Arc<CudaStream>,
        capture: Capture,
    ) -> Result<CUdeviceptr, ScanError> {
        self.workspace.follow(stream, capture)?;
        let ptr = self.workspace.identity(stream, capture, &self.identity)?;
        self.workspace.used(stream, capture);
        Ok(ptr)
    }

    /// Enqueues `ready`'s launches from `inputs` (one array, or a fused scan's input arrays) to
    /// `output` (may be the input), with `seeds`.
    pub(crate) fn enqueue(
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
        let twin = self.for_buffers(stream, capture, ready, inputs, output)?;
        let input = inputs[0];
        let ReadyLaunch {
            loaded,
            plan,
            columns,
            ..
        } = twin.as_ref().unwrap_or(ready);
        let generated = &loaded.generated;
        let ws = &mut self.workspace;
        let levels_ptr = ws.levels_ptr();
        let (tile_state_ptr, tile_state_bytes) = ws.tile_state();
        let tile_state_slots = generated.tile_state_slots(tile_state_bytes);
        let elem = self.elem_bytes as u64;
        let pointer = |buffer: Buffer| match buffer {
            Buffer::Input => input,
            Buffer::Output => output,
            Buffer::Level(l) => levels_ptr + plan.level_offset(l) * elem,
        };
        let block = generated.policy.block_threads;
        for launch in &plan.launches {
            let function = loaded.function(launch.kernel);
            let (src, dst, count) = (pointer(launch.input), pointer(launch.output), launch.n);
            let prefixes: CUdeviceptr = launch.prefixes.map_or(0, pointer);
            // Only a single-pass tile over 48 KiB takes dynamic shared memory (kernel ABI).
            let shared_mem_bytes = match launch.kernel {
                Kernel::SinglePass => generated.dynamic_shared_bytes,
                _ => 0,
            };
            let grid = match launch.kernel {
                Kernel::SinglePass if columns.is_none() => {
                    single_pass_grid(loaded, launch.grid, count, dst)
                }
                _ => launch.grid,
            };
            let config = LaunchConfig {
                grid_dim: (grid, 1, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes,
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
                Kernel::ReduceTiles | Kernel::ReduceSpine => {}
                Kernel::ScanTiles => {
                    args.arg(&prefixes).arg(&seeds.init).arg(&seeds.total);
                }
                Kernel::ScanSpine => {
                    args.arg(&prefixes);
                }
            }
            // Resident tiles wait on their predecessors by block index, which only a cooperative
            // launch (every block resident at once) makes safe; `variant_for` chose this kernel
            // only for a grid the GPU holds (`holds`). (Never a column scan's: generation
            // clears the flag there.)
            let cooperative =
                launch.kernel == Kernel::SinglePass && generated.policy.resident_tiles;
            // SAFETY: the arguments are exactly the entry's ABI signature (ARCHITECTURE.md):
            // device pointers to `n` elements (lengths checked by the callers), the scratch
            // sized by the same plan (the tile state for at least the grid's tiles: `needs`),
            // `n` and the slot count as u64, init and total as one-element device pointers or
            // NULL.
            let launched = if cooperative {
                unsafe { args.launch_cooperative(config) }
            } else {
                unsafe { args.launch(config) }
            };
            launched.map_err(|source| ScanError::Launch {
                kernel: launch.kernel.name(),
                source,
            })?;
        }
        ws.used(stream, capture);
        Ok(())
    }
}

/// The single-pass grid of `n` elements into `output` (`GeneratedScan::single_pass_tiles`): one
/// tile more than the plan's `planned` where the output is off the vectors the kernel's tiles sit
/// on, unless that passes CUDA's grid limit or (resident tiles) what the GPU holds at once. The
/// kernel cuts its tiles by the grid it gets, so the plan's grid stays valid there.
fn single_pass_grid(loaded: &LoadedScan, planned: u32, n: u64, output: CUdeviceptr) -> u32 {
    let tiles = loaded.generated.single_pass_tiles(n, output);
    let holds = !loaded.generated.policy.resident_tiles || tiles <= loaded.resident_blocks;
    if tiles <= launch_plan::MAX_GRID_BLOCKS && holds {
        tiles as u32
    } else {
        planned
    }
}

/// The initial value and the total of one scan (device addresses of one element, 0 for none),
/// and the segment rule's kernel arguments.
#[derive(Clone, Copy)]
pub(crate) struct Seeds {
    pub(crate) init: CUdeviceptr,
    pub(crate) total: CUdeviceptr,
    pub(crate) segment: SegmentArgs,
}

impl Seeds {
    pub(crate) const NONE: Seeds = Seeds {
        init: 0,
        total: 0,
        segment: SegmentArgs::None,
    };
}

/// What a segment rule appends to `scangen_single_pass` (ARCHITECTURE.md).
#[derive(Clone, Copy)]
pub(crate) enum SegmentArgs {
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

impl SegmentArgs {
    /// The kernel arguments of `segments`, whose buffer (flags, keys or offsets) is at
    /// `buffer` (0 for rows and columns); `tile_cols_log2` is a column scan's tile width.
    pub(crate) fn of(
        segments: &DeviceSegments<'_>,
        buffer: CUdeviceptr,
        tile_cols_log2: u32,
    ) -> SegmentArgs {
        let (_, cols, row_stride) = segments.rows;
        match segments.rule {
            Segments::None => SegmentArgs::None,
            Segments::Rows { .. } => SegmentArgs::Rows { cols, row_stride },
            Segments::Columns => SegmentArgs::Columns {
                cols,
                row_stride,
                tile_cols_log2,
            },
            Segments::Offsets(_) => SegmentArgs::Offsets {
                offsets: buffer,
                count: segments.buffer.as_ref().map_or(0, |b| b.len() as u64),
            },
            Segments::Flags | Segments::Keys(_) => SegmentArgs::Data(buffer),
        }
    }
}

/// An empty scan's total is its initial value (or the identity): one element copied on the
/// stream, which a capture records like any copy.
/// `count` totals (a column scan of no rows has one per column): the first copied, then
/// doubled within the total buffer, so log2(count) copies.
pub(crate) fn copy_empty_total(
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
pub(crate) struct ReadyLaunch {
    pub(crate) loaded: Arc<LoadedScan>,
    pub(crate) plan: LaunchPlan,
    /// The tiles of a column scan.
    pub(crate) columns: Option<ColumnShape>,
    /// The size class whose shape `loaded` is (`Large`: the default).
    pub(crate) class: InputSize,
    /// Elements scanned.
    pub(crate) n: u64,
}
