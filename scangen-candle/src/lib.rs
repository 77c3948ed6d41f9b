//! Scans of [candle](https://github.com/huggingface/candle) tensors on scangen's kernels:
//! `cumsum`, `cumprod`, `cummax`, `cummin`, `logcumsumexp`, and `scan` with any
//! scangen operator (`#[scan_op]` or a built-in), along any dimension, inclusive or exclusive,
//! forward or reverse (`ScanOpts`), for `u32`, `i64`, `f32`, `f64`, `f16` and `bf16`.
//!
//! candle's own `Tensor::cumsum` multiplies by an `n x n` triangular matrix: O(n²) time and
//! memory along the scanned dimension (a 2^16-long dimension of `f32` already needs a 16 GiB
//! matrix). These are O(n) scans.
//!
//! # Features
//!
//! * `candle`: the tensor API (these functions; they are documented when it is on, as on
//!   docs.rs), on candle's CPU device (scangen's CPU backend). Without it
//!   (the default, so that the scangen workspace builds without candle) this crate only has
//!   its operators ([`LogAddExpF32`], [`LogAddExpF64`]).
//! * `cuda`: candle's CUDA device too (candle-core's `cuda` feature): the scan runs as scangen
//!   kernels on candle's own stream, reading and writing candle's buffers (no copies, no second
//!   context). candle compiles its own kernels with `nvcc` when it is built.
//!
//! # Example (CPU)
//!
//! ```
//! # #[cfg(feature = "candle")]
//! # fn main() -> candle_core::Result<()> {
//! use candle_core::{Device, Tensor, D};
//! use scangen_candle::{cumsum, cummax, logcumsumexp, ScanOpts};
//!
//! let t = Tensor::new(&[[1f32, 2., 3.], [4., 5., 6.]], &Device::Cpu)?;
//! assert_eq!(cumsum(&t, D::Minus1)?.to_vec2::<f32>()?, [[1., 3., 6.], [4., 9., 15.]]);
//! assert_eq!(cummax(&t, 0)?.to_vec2::<f32>()?, [[1., 2., 3.], [4., 5., 6.]]);
//! // Exclusive and reverse: the sum of everything after each element in its row.
//! let after = scangen_candle::cumsum_with(&t, 1, ScanOpts::exclusive().reverse())?;
//! assert_eq!(after.to_vec2::<f32>()?, [[5., 3., 0.], [11., 6., 0.]]);
//! // Stable where exp overflows: log(e^1000 + e^1000) = 1000 + ln 2.
//! let big = Tensor::new(&[1000f32, 1000.], &Device::Cpu)?;
//! let l = logcumsumexp(&big, 0)?.to_vec1::<f32>()?;
//! assert!((l[1] - (1000. + 2f32.ln())).abs() < 1e-3);
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "candle"))]
//! # fn main() {}
//! ```
//!
//! # Shapes and strides
//!
//! A tensor of shape `(a, d, b)` scanned along `d` (the dimensions before and after `d`
//! collapsed) is one scangen call: a plain scan when `a = b = 1`; `a` segmented rows
//! (`Segments::Rows`) when `b = 1` (scanning the last dimension); otherwise a column scan
//! (`Segments::Columns`) of each of the `a` blocks, a `d x b` matrix each (one launch per
//! block on the GPU: scangen's column kernel has no batch stride yet, so `a` large with `b`
//! small is launch-bound). A tensor that is not contiguous (a transpose, a narrow) is made
//! contiguous first (one candle copy). The result is a new contiguous tensor; the functions
//! record no gradient.
//!
//! # Errors
//!
//! scangen's errors (no NVRTC, a compile error, out of memory, ...) become
//! `candle_core::Error::Wrapped` around the `scangen::runtime::ScanError`, with its message.

mod cuda;
pub mod ops;
#[cfg(feature = "candle")]
mod tensor;

pub use cuda::CudaElem;
pub use ops::{LogAddExpF32, LogAddExpF64};
#[cfg(feature = "candle")]
pub use tensor::{
    cummax, cummax_with, cummin, cummin_with, cumprod, cumprod_with, cumsum, cumsum_with,
    logcumsumexp, logcumsumexp_with, scan, ScanDType, ScanOpts,
};
