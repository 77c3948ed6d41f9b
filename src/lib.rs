//! scangen: specialized GPU scan kernels for any associative operator written in Rust.
pub use scan_core::*;
