//! Pick the GPU when there is one, the CPU otherwise: what the examples use.

use crate::compile::nvrtc_available;
use crate::cpu::CpuScanner;
use crate::error::ScanError;
use crate::gpu::Gpu;
use crate::options::ScanOptions;
use crate::scanner::Scanner;
use cudarc::driver::DeviceRepr;
use scan_core::ScanOp;

/// A scan on either backend, with one interface.
pub trait Scan<T> {
    /// Scans `input` into a new vector.
    fn scan(&mut self, input: &[T]) -> Result<Vec<T>, ScanError>;
    /// Scans `input` into `output` (same length, or [`ScanError::LengthMismatch`]).
    fn scan_into(&mut self, input: &[T], output: &mut [T]) -> Result<(), ScanError>;
    /// Scans `data` in place.
    fn scan_in_place(&mut self, data: &mut [T]) -> Result<(), ScanError>;
    /// Scans `input` after the initial value `init`; returns the scan and its total.
    fn scan_with_init(&mut self, input: &[T], init: T) -> Result<(Vec<T>, T), ScanError>;
    /// Which backend runs the scan, e.g. `"gpu: NVIDIA H100 (sm_90)"`.
    fn backend_name(&self) -> String;
}

impl<Op: ScanOp> Scan<Op::Elem> for Scanner<Op>
where
    Op::Elem: DeviceRepr,
{
    fn scan(&mut self, input: &[Op::Elem]) -> Result<Vec<Op::Elem>, ScanError> {
        Scanner::scan(self, input)
    }
    fn scan_into(&mut self, input: &[Op::Elem], output: &mut [Op::Elem]) -> Result<(), ScanError> {
        Scanner::scan_into(self, input, output)
    }
    fn scan_in_place(&mut self, data: &mut [Op::Elem]) -> Result<(), ScanError> {
        self.scan_in_place_host(data)
    }
    fn scan_with_init(
        &mut self,
        input: &[Op::Elem],
        init: Op::Elem,
    ) -> Result<(Vec<Op::Elem>, Op::Elem), ScanError> {
        Scanner::scan_with_init(self, input, init)
    }
    fn backend_name(&self) -> String {
        Scanner::backend_name(self)
    }
}

impl<Op: ScanOp> Scan<Op::Elem> for CpuScanner<Op> {
    fn scan(&mut self, input: &[Op::Elem]) -> Result<Vec<Op::Elem>, ScanError> {
        CpuScanner::scan(self, input)
    }
    fn scan_into(&mut self, input: &[Op::Elem], output: &mut [Op::Elem]) -> Result<(), ScanError> {
        CpuScanner::scan_into(self, input, output)
    }
    fn scan_in_place(&mut self, data: &mut [Op::Elem]) -> Result<(), ScanError> {
        CpuScanner::scan_in_place(self, data)
    }
    fn scan_with_init(
        &mut self,
        input: &[Op::Elem],
        init: Op::Elem,
    ) -> Result<(Vec<Op::Elem>, Op::Elem), ScanError> {
        CpuScanner::scan_with_init(self, input, init)
    }
    fn backend_name(&self) -> String {
        CpuScanner::backend_name(self)
    }
}

/// A scanner on whichever backend [`auto`] found.
#[derive(Debug)]
pub enum AnyScanner<Op: ScanOp> {
    /// Device 0, with its driver and NVRTC.
    Gpu(Scanner<Op>),
    /// The CPU backend: no usable GPU (the reason is in its `backend_name`), or
    /// `SCANGEN_BACKEND=cpu`.
    Cpu(CpuScanner<Op>),
}

impl<Op: ScanOp> AnyScanner<Op>
where
    Op::Elem: DeviceRepr,
{
    /// Whether the scans run on the GPU.
    pub fn is_gpu(&self) -> bool {
        matches!(self, AnyScanner::Gpu(_))
    }

    /// Scans `input` into a new vector (on the GPU: through a device copy, waiting for it).
    pub fn scan(&mut self, input: &[Op::Elem]) -> Result<Vec<Op::Elem>, ScanError> {
        Scan::scan(self, input)
    }

    /// Scans `input` into `output`, which must have its length (else
    /// [`ScanError::LengthMismatch`], before anything runs).
    pub fn scan_into(
        &mut self,
        input: &[Op::Elem],
        output: &mut [Op::Elem],
    ) -> Result<(), ScanError> {
        Scan::scan_into(self, input, output)
    }

    /// Scans `data` in place.
    pub fn scan_in_place(&mut self, data: &mut [Op::Elem]) -> Result<(), ScanError> {
        Scan::scan_in_place(self, data)
    }

    /// Scans after the initial value `init`; returns the scan and its total.
    pub fn scan_with_init(
        &mut self,
        input: &[Op::Elem],
        init: Op::Elem,
    ) -> Result<(Vec<Op::Elem>, Op::Elem), ScanError> {
        Scan::scan_with_init(self, input, init)
    }

    /// Scans segment by segment, by the rule the scanner was built with
    /// (`ScanOptions::segmented`).
    pub fn scan_segmented(
        &mut self,
        input: &[Op::Elem],
        segments: crate::HostSegments<'_>,
    ) -> Result<Vec<Op::Elem>, ScanError> {
        match self {
            AnyScanner::Gpu(s) => s.scan_segmented(input, segments),
            AnyScanner::Cpu(s) => s.scan_segmented(input, segments),
        }
    }

    /// `"gpu: NVIDIA H100 80GB HBM3 (sm_90)"` or `"cpu: rayon, 16 threads (no CUDA driver found)"`.
    pub fn backend_name(&self) -> String {
        Scan::backend_name(self)
    }
}

impl<Op: ScanOp> Scan<Op::Elem> for AnyScanner<Op>
where
    Op::Elem: DeviceRepr,
{
    fn scan(&mut self, input: &[Op::Elem]) -> Result<Vec<Op::Elem>, ScanError> {
        match self {
            AnyScanner::Gpu(s) => s.scan(input),
            AnyScanner::Cpu(s) => s.scan(input),
        }
    }
    fn scan_into(&mut self, input: &[Op::Elem], output: &mut [Op::Elem]) -> Result<(), ScanError> {
        match self {
            AnyScanner::Gpu(s) => s.scan_into(input, output),
            AnyScanner::Cpu(s) => s.scan_into(input, output),
        }
    }
    fn scan_in_place(&mut self, data: &mut [Op::Elem]) -> Result<(), ScanError> {
        match self {
            AnyScanner::Gpu(s) => s.scan_in_place_host(data),
            AnyScanner::Cpu(s) => s.scan_in_place(data),
        }
    }
    fn scan_with_init(
        &mut self,
        input: &[Op::Elem],
        init: Op::Elem,
    ) -> Result<(Vec<Op::Elem>, Op::Elem), ScanError> {
        match self {
            AnyScanner::Gpu(s) => s.scan_with_init(input, init),
            AnyScanner::Cpu(s) => s.scan_with_init(input, init),
        }
    }
    fn backend_name(&self) -> String {
        match self {
            AnyScanner::Gpu(s) => s.backend_name(),
            AnyScanner::Cpu(s) => s.backend_name(),
        }
    }
}

/// Which backend `auto` may choose, from `SCANGEN_BACKEND` (`gpu`, `cpu`, or unset/`auto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BackendChoice {
    Auto,
    Gpu,
    Cpu,
}

fn backend_choice() -> BackendChoice {
    match std::env::var("SCANGEN_BACKEND")
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Ok("gpu") | Ok("cuda") => BackendChoice::Gpu,
        Ok("cpu") => BackendChoice::Cpu,
        _ => BackendChoice::Auto,
    }
}

/// Why the GPU is unusable, in the words `backend_name` shows.
fn fallback_reason(err: &ScanError) -> String {
    match err {
        ScanError::NoDriver { .. } => "no CUDA driver found".into(),
        ScanError::NoDevice { .. } => "no CUDA device found".into(),
        ScanError::NoNvrtc { .. } => "no NVRTC found".into(),
        other => other.to_string(),
    }
}

/// A scanner on device 0 when a GPU, its driver and NVRTC are present, else on the CPU (the
/// reason shows in [`AnyScanner::backend_name`]). Other failures (a compile error, say) are
/// returned, not hidden behind the fallback.
///
/// `SCANGEN_BACKEND=cpu` forces the CPU; `SCANGEN_BACKEND=gpu` makes a missing GPU an error.
pub fn auto<Op: ScanOp>(opts: ScanOptions) -> Result<AnyScanner<Op>, ScanError>
where
    Op::Elem: DeviceRepr,
{
    let choice = backend_choice();
    if choice == BackendChoice::Cpu {
        return Ok(AnyScanner::Cpu(CpuScanner::fallback(
            opts,
            "SCANGEN_BACKEND=cpu",
        )));
    }
    let gpu = Gpu::new(0).and_then(|gpu| nvrtc_available().map(|()| gpu));
    match gpu {
        Ok(gpu) => Ok(AnyScanner::Gpu(gpu.scanner::<Op>(opts)?)),
        Err(e) if e.is_unavailable() && choice == BackendChoice::Auto => Ok(AnyScanner::Cpu(
            CpuScanner::fallback(opts, fallback_reason(&e)),
        )),
        Err(e) => Err(e),
    }
}

/// Where [`auto`] runs ([`auto_backend`]).
#[derive(Debug)]
pub enum AutoBackend {
    /// Device 0: a GPU, its driver and NVRTC are there.
    Gpu(Gpu),
    /// The CPU, standing in for the GPU for `reason` (`"no CUDA device found"`,
    /// `"SCANGEN_BACKEND=cpu"`, ...).
    Cpu {
        /// Why the GPU is not used, in the words `backend_name` shows.
        reason: String,
    },
}

/// The backend choice of [`auto`], for code that builds its own kind of scanner (a
/// [`crate::ByteScanner`], say): device 0 when the GPU stack is usable and `SCANGEN_BACKEND` is
/// not `cpu`, else the CPU with the reason. An error when `SCANGEN_BACKEND=gpu` asks for a GPU
/// that cannot be used, or when the GPU stack fails in another way than being absent.
pub fn auto_backend() -> Result<AutoBackend, ScanError> {
    let choice = backend_choice();
    if choice == BackendChoice::Cpu {
        return Ok(AutoBackend::Cpu {
            reason: "SCANGEN_BACKEND=cpu".into(),
        });
    }
    match Gpu::new(0).and_then(|g| nvrtc_available().map(|()| g)) {
        Ok(g) => Ok(AutoBackend::Gpu(g)),
        Err(e) if e.is_unavailable() && choice == BackendChoice::Auto => Ok(AutoBackend::Cpu {
            reason: fallback_reason(&e),
        }),
        Err(e) => Err(e),
    }
}

/// The backend choice of [`auto`] for any scanner kind: `gpu` builds it on device 0 when the
/// GPU stack is usable, `cpu` on the CPU with the reason it stands in.
pub(crate) fn choose<R>(
    opts: ScanOptions,
    gpu: impl FnOnce(Gpu, ScanOptions) -> Result<R, ScanError>,
    cpu: impl FnOnce(ScanOptions, String) -> R,
) -> Result<R, ScanError> {
    match auto_backend()? {
        AutoBackend::Gpu(g) => gpu(g, opts),
        AutoBackend::Cpu { reason } => Ok(cpu(opts, reason)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_core::builtin::Add;

    #[test]
    fn auto_always_gives_a_working_scanner_here() {
        // With a GPU this runs there; without one it must fall back, not fail.
        match auto::<Add<i64>>(ScanOptions::default()) {
            Ok(mut s) => {
                if !s.is_gpu() {
                    assert!(
                        s.backend_name().starts_with("cpu: rayon, "),
                        "{}",
                        s.backend_name()
                    );
                    assert!(
                        s.backend_name().contains('('),
                        "the fallback says why: {}",
                        s.backend_name()
                    );
                }
                assert_eq!(s.scan(&[1, 2, 3]).unwrap(), vec![1, 3, 6]);
            }
            // A GPU is present but the kernels do not build yet (templates pending).
            Err(ScanError::Codegen(_)) => {}
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn fallback_reasons_are_short() {
        let e = ScanError::NoDriver { detail: "x".into() };
        assert_eq!(fallback_reason(&e), "no CUDA driver found");
        assert!(e.is_unavailable());
        assert!(!ScanError::LengthMismatch {
            input: 1,
            output: 2
        }
        .is_unavailable());
    }
}
