//! Scans of an operator known only at run time: its [`OpSpec`] (and, for a fused scan, its
//! [`TransformSpec`]) comes from a file or a user's description, not from a Rust type, so the
//! data is bytes. The kernels, the launch path and the scratch are the typed scanner's
//! ([`ScanEngine`]); only the checks on the buffers are in bytes here.

use super::engine::{ScanEngine, Seeds};
use crate::error::{alloc, driver, ScanError};
use crate::gpu::Gpu;
use crate::options::ScanOptions;
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use scan_codegen::{Algorithm, CodegenError, ScanMode, Segments};
use scan_core::{OpSpec, TransformSpec};
use std::mem::MaybeUninit;
use std::sync::Arc;

/// A scan on one GPU of an operator given as an [`OpSpec`] at run time (for instance one
/// lowered from a Rust file by `scan_lower`), over raw bytes: elements in the operator's
/// `#[repr(C)]` layout, or for a fused scan ([`Gpu::byte_scanner`] with a transform) the
/// values of `lift`'s input arrays and `project`'s outputs. Built by [`Gpu::byte_scanner`].
///
/// Every kernel, launch and buffer rule is the typed [`crate::Scanner`]'s: this only trades the
/// element type for byte lengths, checked against the operator's sizes before any launch.
pub struct ByteScanner {
    engine: ScanEngine,
    /// Bytes per value of each input array: the element for a plain scan, `lift`'s parameter
    /// types for a fused one.
    input_sizes: Vec<usize>,
    /// Bytes per output: the element, or `project`'s type.
    output_size: usize,
}

impl std::fmt::Debug for ByteScanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ByteScanner")
            .field("gpu", self.engine.gpu())
            .field("algorithm", &self.engine.algorithm())
            .field("mode", &self.engine.mode())
            .field("input_sizes", &self.input_sizes)
            .field("output_size", &self.output_size)
            .finish()
    }
}

impl Gpu {
    /// A scanner for `op` known only at run time, fused with `transform` when given (the
    /// kernels then read `transform`'s input arrays and write its outputs), with `opts`
    /// (algorithm, mode, direction, policy). `identity` is the operator's identity element as
    /// bytes (`scan_lower::EvalOp::identity` computes it for an operator from a file): an empty
    /// scan's total. Segmented scans take their segment data through the typed scanners only:
    /// a segmented `opts.variant` is refused here.
    pub fn byte_scanner(
        &self,
        op: &OpSpec,
        transform: Option<&TransformSpec>,
        identity: &[u8],
        opts: ScanOptions,
    ) -> Result<ByteScanner, ScanError> {
        let size = op.element.size();
        if identity.len() != size {
            return Err(ScanError::ElementLayout {
                declared: size,
                actual: identity.len(),
            });
        }
        if opts.variant.segments != Segments::None {
            return Err(ScanError::Codegen(CodegenError::InvalidVariant(format!(
                "a byte scanner scans whole arrays; {} segments need a typed scanner (Gpu::scanner with ScanOptions::segmented)",
                opts.variant.segments
            ))));
        }
        let (input_sizes, output_size) = match transform {
            Some(t) => (
                t.inputs.iter().map(|ty| ty.size()).collect(),
                t.output.size(),
            ),
            None => (vec![size], size),
        };
        let identity: Box<[MaybeUninit<u8>]> =
            identity.iter().map(|&b| MaybeUninit::new(b)).collect();
        let engine = self.engine(op.clone(), opts, transform.cloned(), identity)?;
        Ok(ByteScanner {
            engine,
            input_sizes,
            output_size,
        })
    }
}

impl ByteScanner {
    /// The GPU it runs on.
    pub fn gpu(&self) -> &Gpu {
        self.engine.gpu()
    }

    /// The device-wide algorithm of its kernels.
    pub fn algorithm(&self) -> Algorithm {
        self.engine.algorithm()
    }

    /// Inclusive or exclusive.
    pub fn mode(&self) -> ScanMode {
        self.engine.mode()
    }

    /// Bytes of one element (what the scan combines).
    pub fn element_size(&self) -> usize {
        self.engine.elem_bytes()
    }

    /// Bytes per value of each input array, in the order the kernels take them.
    pub fn input_sizes(&self) -> &[usize] {
        &self.input_sizes
    }

    /// Bytes per output value.
    pub fn output_size(&self) -> usize {
        self.output_size
    }

    /// Elements per tile (one block's share).
    pub fn tile_items(&self) -> u64 {
        self.engine.tile_items()
    }

    /// The generated CUDA source of its default kernel as built. Builds it if it is not yet
    /// (a scanner compiles each kernel on first use).
    pub fn source(&mut self) -> Result<&str, ScanError> {
        self.engine.source()
    }

    /// `"gpu: NVIDIA H100 80GB HBM3 (sm_90)"`.
    pub fn backend_name(&self) -> String {
        self.engine.backend_name()
    }

    /// As [`crate::Scanner::prepare`]: loads every kernel and sizes the scratch for up to `n`
    /// positions on `stream` (before a CUDA graph capture, or to keep first-use costs out of a
    /// timing).
    pub fn prepare(&mut self, n: u64, stream: &Arc<CudaStream>) -> Result<(), ScanError> {
        self.engine.prepare(n, stream)
    }

    /// The number of positions in `inputs` (one byte buffer per input array), checked: as many
    /// buffers as the kernels read, each a whole number of its values, all of one count.
    pub fn positions(&self, inputs: &[&[u8]]) -> Result<u64, ScanError> {
        if inputs.len() != self.input_sizes.len() {
            return Err(ScanError::InputCount {
                expected: self.input_sizes.len(),
                given: inputs.len(),
            });
        }
        let n = (inputs[0].len() / self.input_sizes[0]) as u64;
        for (k, (bytes, &size)) in inputs.iter().zip(&self.input_sizes).enumerate() {
            if bytes.len() % size != 0 || (bytes.len() / size) as u64 != n {
                return Err(ScanError::ByteLength {
                    what: format!("input array {k}"),
                    bytes: bytes.len() as u64,
                    value_size: size,
                    expected_values: n.max((bytes.len() / size) as u64),
                });
            }
        }
        Ok(n)
    }

    /// Scans host arrays (one byte buffer per input array) into `output` (as many output values
    /// as there are positions), on the device's default stream; waits for the result.
    pub fn scan_host(&mut self, inputs: &[&[u8]], output: &mut [u8]) -> Result<(), ScanError> {
        let n = self.positions(inputs)?;
        let out_bytes = n * self.output_size as u64;
        if output.len() as u64 != out_bytes {
            return Err(ScanError::ByteLength {
                what: "the output".into(),
                bytes: output.len() as u64,
                value_size: self.output_size,
                expected_values: n,
            });
        }
        if n == 0 {
            return Ok(());
        }
        let stream = self.engine.gpu().default_stream();
        let mut device_inputs: Vec<CudaSlice<u8>> = Vec::with_capacity(inputs.len());
        for bytes in inputs {
            device_inputs.push(
                stream
                    .clone_htod(*bytes)
                    .map_err(driver("copying an input array to the device"))?,
            );
        }
        // SAFETY: every byte is written by the scan before it is read back.
        let mut out_dev = unsafe { stream.alloc::<u8>(output.len()) }
            .map_err(alloc(out_bytes, "the device copy of the result"))?;
        {
            let reads: Vec<_> = device_inputs
                .iter()
                .map(|b| b.device_ptr(&stream))
                .collect();
            let ptrs: Vec<CUdeviceptr> = reads.iter().map(|(p, _)| *p).collect();
            let (out_ptr, _write) = out_dev.device_ptr_mut(&stream);
            // SAFETY: each input buffer holds `n` values of its size, `out_dev` `n` outputs, all
            // on `stream` (cudarc's guards order them) and alive until the copy back below.
            unsafe { self.scan_device_ptr(&stream, &ptrs, out_ptr, n)? };
        }
        stream
            .memcpy_dtoh(&out_dev, output)
            .map_err(driver("copying the result to the host"))?;
        stream
            .synchronize()
            .map_err(driver("waiting for the scan to finish"))
    }

    /// Enqueues a scan of `n` positions of the device arrays `inputs` (one address per input
    /// array) into `output` on `stream`; returns without waiting.
    ///
    /// # Safety
    ///
    /// As for [`crate::Scanner::scan_device_ptr`]: every address in this scanner's context,
    /// input array `k` valid for `n` values of `input_sizes()[k]` bytes, `output` for `n`
    /// values of `output_size()` bytes, each aligned for its type, ordered on `stream` after
    /// their writers.
    pub unsafe fn scan_device_ptr(
        &mut self,
        stream: &Arc<CudaStream>,
        inputs: &[CUdeviceptr],
        output: CUdeviceptr,
        n: u64,
    ) -> Result<(), ScanError> {
        if inputs.len() != self.input_sizes.len() {
            return Err(ScanError::InputCount {
                expected: self.input_sizes.len(),
                given: inputs.len(),
            });
        }
        // SAFETY: forwarded.
        unsafe {
            self.engine
                .scan_ptrs(stream, inputs, output, n, Seeds::NONE)
        }
    }
}
