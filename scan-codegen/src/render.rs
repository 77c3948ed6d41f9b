//! Template rendering (placeholder until the kernel templates land).

use crate::{Algorithm, ScanMode, TuningPolicy};
use scan_core::OpSpec;

#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    #[error("invalid tuning policy: {0}")]
    InvalidPolicy(String),
    #[error("template rendering failed: {0}")]
    Template(String),
}

/// One rendered, self-contained CUDA source plus what the host needs to launch it.
#[derive(Clone, Debug)]
pub struct GeneratedScan {
    pub source: String,
    pub algorithm: Algorithm,
    pub mode: ScanMode,
    pub policy: TuningPolicy,
    pub elem_size: usize,
}

pub fn generate(
    op: &OpSpec,
    algorithm: Algorithm,
    mode: ScanMode,
    policy: TuningPolicy,
) -> Result<GeneratedScan, CodegenError> {
    let _ = op;
    Err(CodegenError::Template(format!("{algorithm} {mode} {policy:?}: templates not written yet")))
}
