//! The one error type of the runtime. Every variant says which step failed.

use cudarc::driver::DriverError;
use cudarc::nvrtc::result::NvrtcError;
use scan_codegen::CodegenError;

/// Why a scan (or building a scanner) failed.
///
/// Disk-cache problems are not errors: they are reported as warnings and the kernel is
/// compiled again.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// `libcuda.so` could not be loaded: no NVIDIA driver on this machine.
    #[error("no CUDA driver: {detail}")]
    NoDriver {
        /// What failed to load, and what to install.
        detail: String,
    },

    /// The driver loaded but there is no device with this ordinal.
    #[error("no CUDA device with ordinal {ordinal} ({count} device(s) found)")]
    NoDevice {
        /// The ordinal asked for (`Gpu::new(ordinal)`).
        ordinal: usize,
        /// How many devices the driver reports (0 when it reports none at all).
        count: usize,
    },

    /// `libnvrtc.so` could not be loaded, so kernels cannot be compiled.
    #[error("no NVRTC: {detail}")]
    NoNvrtc {
        /// What failed to load, and where NVRTC is looked for.
        detail: String,
    },

    /// A device allocation failed for lack of memory.
    #[error("out of device memory allocating {bytes} bytes for {what}")]
    OutOfMemory {
        /// The size of the allocation that failed, in bytes.
        bytes: u64,
        /// What the allocation was for (the output, the scratch, the device copy of the data).
        what: &'static str,
    },

    /// The operator's declared element type and the Rust type differ in size: the
    /// `ScanElement` impl is wrong, and kernels would read garbage.
    #[error("element layout mismatch: the operator declares {declared}-byte elements, the Rust type is {actual} bytes")]
    ElementLayout {
        /// The element size in bytes the operator's `OpSpec` declares (what kernels use).
        declared: usize,
        /// `size_of::<Op::Elem>()`.
        actual: usize,
    },

    /// A stream or buffer from another device's context was passed to a scanner.
    #[error("the stream belongs to device {stream}, the scanner to device {scanner}")]
    WrongDevice {
        /// The ordinal of the scanner's device.
        scanner: usize,
        /// The ordinal of the device the stream (or buffer) belongs to.
        stream: usize,
    },

    /// Input and output of a scan have different lengths (checked before any launch).
    #[error("length mismatch: input has {input} elements, output has {output}")]
    LengthMismatch {
        /// Elements in the input.
        input: u64,
        /// Elements in the output.
        output: u64,
    },

    /// The input arrays of a fused transform scan or reduction differ in length (checked
    /// before any launch).
    #[error("the input arrays of a transform must have one length; their lengths are {lens:?}")]
    InputLengths {
        /// The length of each input array, in the order `lift` takes them.
        lens: Vec<u64>,
    },

    /// A scan was given another number of input arrays than its kernels read (checked before
    /// any launch).
    #[error("the scan reads {expected} input array(s) (one per parameter of lift before the index), {given} given")]
    InputCount {
        /// Input arrays the kernels read.
        expected: usize,
        /// Arrays given.
        given: usize,
    },

    /// A byte buffer given to a [`crate::ByteScanner`] is not a whole number of its values, or
    /// does not hold as many values as the scan's other arrays (checked before any launch).
    #[error("{what} holds {bytes} bytes: expected {expected_values} values of {value_size} bytes ({} bytes)", expected_values * (*value_size as u64))]
    ByteLength {
        /// Which buffer: `"input array 0"`, `"the output"`, ...
        what: String,
        /// Its length in bytes.
        bytes: u64,
        /// Bytes per value.
        value_size: usize,
        /// The number of values it must hold.
        expected_values: u64,
    },

    /// The Rust types of a transform's input arrays differ in size from what its `lift`
    /// declares: the arrays do not match the operator.
    #[error("input array layout mismatch: the operator's lift reads values of {declared:?} bytes, the arrays hold {actual:?}")]
    InputLayout {
        /// Bytes per value of each input `lift` declares.
        declared: Vec<usize>,
        /// Bytes per value of each array given.
        actual: Vec<usize>,
    },

    /// An initial-value or total buffer of a scan has no element (checked before any launch).
    #[error("the scan's {what} buffer is empty; it needs one element")]
    EmptyExtra {
        /// Which buffer: `"init"` or `"total"`.
        what: &'static str,
    },

    /// The segment data of a scan does not have one entry per element (flags, keys).
    #[error("the scan has {n} elements but its {what} buffer has {len}; give one per element")]
    SegmentLength {
        /// Which segment buffer: `"flags"` or `"keys"`.
        what: &'static str,
        /// Entries in that buffer.
        len: u64,
        /// Elements in the scan.
        n: u64,
    },

    /// CSR offsets that are empty, decrease, or exceed the element count.
    #[error("segment offsets must be ascending and at most n = {n}, with at least one entry; offsets[{index}] = {value} (previous {previous})")]
    BadOffsets {
        /// The index of the first bad offset.
        index: usize,
        /// The bad offset itself.
        value: u64,
        /// The offset before it (0 for the first).
        previous: u64,
        /// Elements in the scan: the largest valid offset.
        n: u64,
    },

    /// The total buffer of a column scan holds fewer values than the matrix has columns (it
    /// receives each column's total).
    #[error("a column scan writes one total per column: the total buffer has {len} elements for {cols} columns")]
    ColumnTotals {
        /// Elements in the total buffer.
        len: u64,
        /// Columns in the matrix: the fewest elements the total buffer may have.
        cols: u64,
    },

    /// A policy with resident tiles (`TuningPolicy::resident_tiles`, chosen explicitly) for an
    /// input whose grid the GPU cannot hold at once: such a kernel must launch cooperatively.
    #[error("resident tiles launch every block at once: the scan needs {blocks} blocks, the GPU holds {resident} of this kernel (0: it cannot launch cooperatively); use a policy without resident_tiles for inputs this large")]
    ResidentGrid {
        /// Blocks (tiles) the scan needs.
        blocks: u64,
        /// Blocks of the kernel the GPU holds at once.
        resident: u64,
    },

    /// A rows shape that does not describe the buffers.
    #[error("rows: {why}")]
    BadRows {
        /// What is wrong: an empty row, overlapping rows, an overflow, or rows that reach past
        /// the end of the buffers.
        why: String,
    },

    /// The segment data given to a scan is for another rule than the one the scanner was
    /// built for (`ScanOptions::segmented`), which is compiled into its kernel.
    #[error("this scanner was built for {scanner} segments but was given {given}; build it with ScanOptions::segmented({given_rule})")]
    SegmentsMismatch {
        /// The rule the scanner was built for, as displayed.
        scanner: String,
        /// The rule of the segment data given, as displayed.
        given: String,
        /// The given rule in Rust syntax (`Flags`, `Keys(U32)`, ...), to build a scanner with.
        given_rule: String,
    },

    /// The launch plan needs a grid larger than CUDA allows (2^31-1 blocks in x).
    #[error("input of {n} elements needs a grid of {blocks} blocks, more than the {max_blocks} CUDA allows; use a larger tile")]
    TooLarge {
        /// Elements in the input.
        n: u64,
        /// Blocks the plan would need.
        blocks: u64,
        /// The most blocks a grid may have.
        max_blocks: u64,
    },

    /// The kernels' tile needs more shared memory per block than the device allows (its
    /// opt-in limit: 227 KiB on sm_90, 163 KiB on sm_80, 99 KiB on sm_86/89).
    #[error("the scan's tile needs {needs} bytes of shared memory per block, but {device} allows at most {max}; use a smaller tile (fewer items_per_thread or block_threads in the policy)")]
    SharedMemory {
        /// Bytes a block of the kernel needs ([`scan_codegen::GeneratedScan::dynamic_shared_bytes`]).
        needs: u32,
        /// The device's most shared memory per block, opted in.
        max: u32,
        /// The device's name.
        device: String,
    },

    /// NVRTC rejected the generated source. `annotated` shows the log with the source lines
    /// around each reported location.
    #[error("NVRTC compilation failed:\n{annotated}")]
    Compile {
        /// NVRTC's log, as it came.
        log: String,
        /// The log with the generated source lines around each location it reports.
        annotated: String,
    },

    /// An NVRTC call other than the compilation itself failed.
    #[error("NVRTC failed while {step}: {source}")]
    Nvrtc {
        /// What the runtime was doing ("creating the program", "reading the PTX", ...).
        step: &'static str,
        /// NVRTC's error.
        #[source]
        source: NvrtcError,
    },

    /// Launching a kernel failed.
    #[error("launching kernel `{kernel}` failed: {source}")]
    Launch {
        /// The name of the kernel that failed to launch.
        kernel: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },

    /// Another CUDA driver call failed.
    #[error("CUDA driver call failed while {step}: {source}")]
    Driver {
        /// What the runtime was doing when the call failed.
        step: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },

    /// A scan inside a CUDA graph capture would have to load a module or allocate scratch,
    /// which a capture forbids. Nothing was launched and the capture is intact.
    #[error("a scan of {n} elements cannot be captured into a CUDA graph yet: it needs {needs}, which is not allowed while the stream is capturing; call Scanner::prepare({n}, &stream) before beginning the capture")]
    NotPreparedForCapture {
        /// Elements in the scan.
        n: u64,
        /// What the scan would have had to do (the kernel variants to load, the scratch to
        /// allocate).
        needs: String,
    },

    /// The stream's capture is invalidated, so nothing was launched into it; `why` says when
    /// and what to do.
    #[error("the CUDA graph capture of the stream was invalidated {why}")]
    CaptureInvalidated {
        /// When the capture was invalidated and what to do about it.
        why: &'static str,
    },

    /// A scan inside a capture whose scanner last ran on another stream: ordering after that
    /// work would make the capture wait on work outside it, which CUDA forbids. Nothing was
    /// launched and the capture is intact.
    #[error("the scanner's previous launch was on another stream, and a CUDA graph capture cannot wait on work outside it; call Scanner::prepare(n, &stream) with the capturing stream before beginning the capture")]
    CaptureAfterOtherStream,

    /// Rendering the kernel source failed.
    #[error("code generation failed: {0}")]
    Codegen(#[from] CodegenError),
}

impl ScanError {
    /// Whether the error means "no usable GPU stack here" (driver, device or NVRTC missing), as
    /// opposed to a bug or a bad input. `auto` falls back to the CPU on these only.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            ScanError::NoDriver { .. } | ScanError::NoDevice { .. } | ScanError::NoNvrtc { .. }
        )
    }

    /// [`ScanError::SegmentsMismatch`] unless a scanner built for `built` runs data for `given`.
    pub(crate) fn check_rule(
        built: scan_codegen::Segments,
        given: scan_codegen::Segments,
    ) -> Result<(), ScanError> {
        if built.accepts(given) {
            return Ok(());
        }
        Err(ScanError::SegmentsMismatch {
            scanner: built.to_string(),
            given: given.to_string(),
            given_rule: format!("{given:?}"),
        })
    }

    pub(crate) fn check_segment_len(
        what: &'static str,
        len: usize,
        n: u64,
    ) -> Result<(), ScanError> {
        if len as u64 != n {
            return Err(ScanError::SegmentLength {
                what,
                len: len as u64,
                n,
            });
        }
        Ok(())
    }

    /// Checks a rows shape against buffers of `len` elements; returns the element count.
    pub(crate) fn check_rows(
        rows: u64,
        cols: u64,
        row_stride: u64,
        len: u64,
    ) -> Result<u64, ScanError> {
        let bad = |why: String| Err(ScanError::BadRows { why });
        if cols == 0 && rows > 0 {
            return bad("cols is 0; a row needs at least one element".into());
        }
        if row_stride < cols {
            return bad(format!(
                "row_stride {row_stride} is smaller than cols {cols}: rows would overlap"
            ));
        }
        let Some(n) = rows.checked_mul(cols) else {
            return bad(format!("{rows} x {cols} elements overflow u64"));
        };
        let extent = if rows == 0 {
            0
        } else {
            (rows - 1)
                .checked_mul(row_stride)
                .and_then(|x| x.checked_add(cols))
                .ok_or_else(|| ScanError::BadRows {
                    why: format!("{rows} rows of stride {row_stride} overflow u64"),
                })?
        };
        if extent > len {
            return bad(format!(
                "{rows} rows of {cols} elements, {row_stride} apart, need {extent} elements; the buffers have {len}"
            ));
        }
        Ok(n)
    }

    /// [`ScanError::LengthMismatch`] unless the input and output lengths agree; every backend
    /// checks this before touching either buffer.
    pub(crate) fn check_lengths(input: usize, output: usize) -> Result<(), ScanError> {
        if input != output {
            return Err(ScanError::LengthMismatch {
                input: input as u64,
                output: output as u64,
            });
        }
        Ok(())
    }
}

/// Maps a failed driver call to [`ScanError::Driver`] for `step`.
pub(crate) fn driver(step: &'static str) -> impl FnOnce(DriverError) -> ScanError {
    move |source| ScanError::Driver { step, source }
}

/// Maps a failed allocation: out-of-memory becomes [`ScanError::OutOfMemory`], anything else
/// [`ScanError::Driver`].
pub(crate) fn alloc(bytes: u64, what: &'static str) -> impl FnOnce(DriverError) -> ScanError {
    move |source| {
        if source.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            ScanError::OutOfMemory { bytes, what }
        } else {
            ScanError::Driver { step: what, source }
        }
    }
}
