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
//! Without a GPU, [`auto`] returns a CPU scanner (and says why in its `backend_name`).
//!
//! The launch protocol is the kernel ABI in ARCHITECTURE.md; libcuda and libnvrtc are loaded
//! when first needed, and their absence is a [`ScanError`], never a panic.

mod abi;
mod auto;
mod cache_entry;
mod cache_trust;
mod capture;
mod column_plan;
pub mod compile;
pub mod cpu;
pub mod cpu_variant;
mod device_buffer;
pub mod disk_cache;
mod error;
mod extras;
mod gpu;
pub mod launch_plan;
mod options;
mod reduce;
mod scanner;
mod segments;
pub mod sharded;
mod workspace;

pub use auto::{auto, AnyScanner, Scan};
pub use cpu::CpuScanner;
pub use disk_cache::{default_cache_dir, CacheTrust, DiskCache};
pub use error::ScanError;
pub use extras::ScanExtras;
pub use gpu::{driver_available, Gpu};
pub use options::{CpuThreads, ScanOptions};
pub use reduce::Reducer;
pub use scanner::Scanner;
pub use segments::{DeviceSegments, HostKeys, HostSegments, SegmentKey, SegmentOffset};
pub use sharded::{
    scan_sharded_cpu, DeviceShardExchange, ShardError, ShardExchange, ShardedScanner,
    ThreadExchange,
};

/// cudarc, re-exported: device buffers and streams (`cudarc::driver::{CudaSlice, CudaStream}`)
/// and the `DeviceRepr` trait element types implement.
pub use cudarc;
pub use scan_codegen::{
    Algorithm, Direction, OffsetWidth, ScanMode, ScanVariant, Segments, TuningPolicy,
};
pub use scan_core::builtin;
pub use scan_core::{ScanElement, ScanOp};
