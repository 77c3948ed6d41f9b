#![warn(missing_docs)]

//! The scangen runtime: compiles generated scan kernels with NVRTC (cached in memory and on
//! disk), launches them on a CUDA device, and provides a CPU backend with the same interface.
//!
//! ```no_run
//! use scan_runtime::{Gpu, ScanOptions, builtin::Add};
//!
//! # fn main() -> Result<(), scan_runtime::ScanError> {
//! let gpu = Gpu::new(0)?;
//! let mut scanner = gpu.scanner::<Add<u32>>(ScanOptions::default().exclusive())?;
//! assert_eq!(scanner.scan(&[1, 2, 3])?, vec![0, 1, 3]);
//! # Ok(())
//! # }
//! ```
//!
//! Without a GPU, [`auto`] returns a CPU scanner (and says why in its `backend_name`). The CPU
//! backend ([`CpuScanner`]) runs the same operators with the same options anywhere, on rayon's
//! pool, a pool of its own or the calling thread; it is also the reference the GPU is tested
//! against:
//!
//! ```
//! use scan_runtime::builtin::{Add, Max};
//! use scan_runtime::{CpuScanner, HostSegments, ScanOptions, Segments};
//!
//! # fn main() -> Result<(), scan_runtime::ScanError> {
//! let mut running_max = CpuScanner::<Max<i32>>::new(ScanOptions::default().cpu_threads(2));
//! assert_eq!(running_max.scan(&[3, 1, 4, 1, 5])?, [3, 3, 4, 4, 5]);
//!
//! // A suffix sum, and a sum that restarts at every head flag: the direction and the segment
//! // rule are fixed when the scanner is built (on a GPU they are compiled into its kernel).
//! let mut suffix = CpuScanner::<Add<u32>>::new(ScanOptions::default().reverse());
//! assert_eq!(suffix.scan(&[1, 2, 3, 4])?, [10, 9, 7, 4]);
//! let mut sums = CpuScanner::<Add<u32>>::new(ScanOptions::new().segmented(Segments::Flags));
//! let flags = HostSegments::Flags(&[1, 0, 1, 0, 0]);
//! assert_eq!(sums.scan_segmented(&[1, 2, 3, 4, 5], flags)?, [1, 3, 3, 7, 12]);
//! # Ok(())
//! # }
//! ```
//!
//! The module map: [`Gpu`] opens a device and builds [`Scanner`]s (scans of host slices or of
//! device buffers on your stream, with [`ScanExtras`] for an initial value, a total and
//! [`DeviceSegments`]) and [`Reducer`]s; [`compile`] and [`disk_cache`] turn generated source
//! into cached kernel images; [`launch_plan`] is the host side of the kernel ABI; [`sharded`]
//! scans data spread across GPUs (or threads, in tests).
//!
//! The launch protocol is the kernel ABI in ARCHITECTURE.md; libcuda and libnvrtc are loaded
//! when first needed, and their absence is a [`ScanError`], never a panic.

/// A closure saying whether a CUDA library can be used, for the `OnceLock`s of
/// `driver_available`, `nvrtc_available` and `nccl_available`: tries to load it (cudarc panics on
/// the first call into a library it cannot load).
#[cfg(not(feature = "dynamic-linking"))]
macro_rules! culib_present {
    // SAFETY: `is_culib_present` only tries to dlopen the library under its candidate names.
    ($check:expr) => {
        || unsafe { $check }
    };
}
/// With the `dynamic-linking` feature the library is linked (the executable would not have
/// started without it), and cudarc has no `is_culib_present`.
#[cfg(feature = "dynamic-linking")]
macro_rules! culib_present {
    ($check:expr) => {
        || true
    };
}

mod abi;
mod auto;
mod cache_entry;
mod cache_trust;
mod capture;
mod column_plan;
pub mod compile;
pub mod cpu;
mod cpu_variant;
mod device_buffer;
pub mod disk_cache;
mod error;
mod extras;
mod gpu;
pub mod launch_plan;
mod op_spec;
mod options;
mod reduce;
mod register_ladder;
mod scanner;
mod segments;
pub mod sharded;
mod transform;
mod workspace;

pub use auto::{auto, auto_backend, AnyScanner, AutoBackend, Scan};
pub use cpu::CpuScanner;
pub use disk_cache::{default_cache_dir, CacheTrust, DiskCache};
pub use error::ScanError;
pub use extras::ScanExtras;
pub use gpu::{driver_available, Gpu};
pub use options::{CpuThreads, ScanOptions};
pub use reduce::Reducer;
pub use scanner::{ByteScanner, Scanner};
pub use segments::{DeviceSegments, HostKeys, HostSegments, SegmentKey, SegmentOffset};
pub use sharded::{
    scan_sharded_cpu, DeviceShardExchange, ShardError, ShardExchange, ShardedScanner,
    ThreadExchange,
};
pub use transform::{
    auto_transform, AnyTransformScanner, DeviceInputs, HostInputs, TransformReducer,
    TransformScanner,
};

/// cudarc, re-exported: device buffers and streams (`cudarc::driver::{CudaSlice, CudaStream}`)
/// and the `DeviceRepr` trait element types implement.
pub use cudarc;
pub use scan_codegen::{
    Algorithm, Direction, OffsetWidth, ScanMode, ScanVariant, Segments, TuningPolicy,
};
pub use scan_core::builtin;
pub use scan_core::{ScanElement, ScanOp, Transform};
