//! Where an operator comes from on the command line: a built-in name and type, or a
//! `#[scan_op]` impl in a Rust source file.

use clap::Args;
use scan_core::{BuiltinOp, OpSpec, PrimType};
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct OpSource {
    /// Operator: a built-in (`scangen ops` lists them) or, with --file, the name of the type
    /// that has a `#[scan_op] impl ScanOp` in that file.
    #[arg(long)]
    pub op: String,
    /// Element type of a built-in operator.
    #[arg(long = "type", value_name = "TYPE", default_value = "i32")]
    pub ty: String,
    /// Rust source file defining the operator with `#[scan_op]`.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

impl OpSource {
    /// The `--file` file parsed, and its path as errors show it; `missing` is the error
    /// without `--file`.
    fn parse_file(
        &self,
        missing: &str,
    ) -> Result<(scan_lower::OpsFile, String), Box<dyn std::error::Error>> {
        let path = self.file.as_ref().ok_or(missing)?;
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read operator file {}: {e}", path.display()))?;
        let shown = path.display().to_string();
        let file = scan_lower::parse_ops_file(&text).map_err(|e| e.render(&shown))?;
        Ok((file, shown))
    }

    /// The `--file` operator as a CPU evaluator of its lowered IR.
    pub fn evaluator(&self) -> Result<scan_lower::EvalOp, Box<dyn std::error::Error>> {
        let (file, shown) =
            self.parse_file("the CPU evaluator runs operators from a file (--file FILE)")?;
        Ok(file.evaluator(&self.op).map_err(|e| e.render(&shown))?)
    }

    /// The `--file` operator and its `lift`/`project` when it has them (a fused scan's
    /// transform).
    pub fn resolve_with_transform(
        &self,
    ) -> Result<(OpSpec, Option<scan_core::TransformSpec>), Box<dyn std::error::Error>> {
        let (file, shown) = self.parse_file(
            "an operator with `fn lift`/`fn project` comes from a file (--file FILE)",
        )?;
        Ok(file.op_transform(&self.op).map_err(|e| e.render(&shown))?)
    }

    /// A GPU scanner of the `--file` operator (fused with its `lift`/`project` when it has
    /// them): its generated kernels over byte buffers, with its identity from the evaluator.
    pub fn byte_scanner(
        &self,
        gpu: &scangen::runtime::Gpu,
        opts: scangen::runtime::ScanOptions,
    ) -> Result<scangen::runtime::ByteScanner, Box<dyn std::error::Error>> {
        let (file, shown) = self.parse_file("a GPU scan of an operator needs --file FILE")?;
        let render = |e: scan_lower::FileError| e.render(&shown);
        let (spec, transform) = file.op_transform(&self.op).map_err(render)?;
        let identity = file.evaluator(&self.op).map_err(render)?.identity()?;
        Ok(gpu.byte_scanner(&spec, transform.as_ref(), &identity, opts)?)
    }

    /// The `--file` operator and its `lift`/`project` (a fused scan's transform).
    pub fn resolve_fused(
        &self,
    ) -> Result<(OpSpec, scan_core::TransformSpec), Box<dyn std::error::Error>> {
        let (spec, transform) = self.resolve_with_transform()?;
        let transform = transform.ok_or_else(|| {
            format!(
                "--fused: `{}` in {} has no `fn lift` or `fn project` in its #[scan_op] impl",
                self.op,
                self.file
                    .as_ref()
                    .map_or(String::new(), |p| p.display().to_string())
            )
        })?;
        Ok((spec, transform))
    }

    pub fn resolve(&self) -> Result<OpSpec, Box<dyn std::error::Error>> {
        match &self.file {
            Some(_) => {
                let (file, shown) = self.parse_file("")?;
                Ok(file.op_spec(&self.op).map_err(|e| e.render(&shown))?)
            }
            None => {
                let op = BuiltinOp::from_name(&self.op).ok_or_else(|| {
                    let names: Vec<_> = BuiltinOp::ALL.iter().map(|o| o.name()).collect();
                    format!(
                        "unknown built-in op `{}`: expected one of {} (or use --file FILE for a #[scan_op] operator)",
                        self.op,
                        names.join(", ")
                    )
                })?;
                let ty = PrimType::from_name(&self.ty).ok_or_else(|| {
                    let names: Vec<_> = PrimType::ALL.iter().map(|t| t.name()).collect();
                    format!(
                        "unknown element type `{}`: expected one of {}",
                        self.ty,
                        names.join(", ")
                    )
                })?;
                Ok(op.spec(ty)?)
            }
        }
    }
}
