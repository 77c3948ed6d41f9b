//! Where an operator comes from on the command line: a built-in name and type, or a
//! `#[scan_op]` impl in a Rust source file.

use clap::Args;
use scan_core::{BuiltinOp, ElementType, OpSpec, PrimType, WordForm};
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
        let spec = proven_word_form(&file, &self.op, spec);
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
                let spec = file.op_spec(&self.op).map_err(|e| e.render(&shown))?;
                Ok(proven_word_form(&file, &self.op, spec))
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

/// `spec` with the word form its operator's evaluated identity and combine prove, where it is a
/// 1-byte integer operator that says none (`WordForm::of_byte_op`: all 65536 pairs), as the
/// runtime does for `ScanOp` operators. An evaluation error proves nothing.
fn proven_word_form(file: &scan_lower::OpsFile, name: &str, mut spec: OpSpec) -> OpSpec {
    let ElementType::Prim(ty @ (PrimType::U8 | PrimType::I8)) = spec.element else {
        return spec;
    };
    if spec.word_form.is_some() {
        return spec;
    }
    let Ok(eval) = file.evaluator(name) else {
        return spec;
    };
    let Ok(identity) = eval.identity() else {
        return spec;
    };
    let failed = std::cell::Cell::new(false);
    let form = WordForm::of_byte_op(ty, identity[0], |a, b| match eval.combine(&[a], &[b]) {
        Ok(out) => out[0],
        Err(_) => {
            failed.set(true);
            0
        }
    });
    if !failed.get() {
        spec.word_form = form;
    }
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_operators_of_a_file_get_the_word_form_they_are() {
        let text = r#"
            use scangen::scan_op;
            pub struct ByteSum;
            #[scan_op]
            impl ScanOp for ByteSum {
                type Elem = u8;
                fn identity() -> u8 { 0 }
                fn combine(a: u8, b: u8) -> u8 { a.wrapping_add(b) }
            }
            pub struct SignedMin;
            #[scan_op]
            impl ScanOp for SignedMin {
                type Elem = i8;
                fn identity() -> i8 { i8::MAX }
                fn combine(a: i8, b: i8) -> i8 { if b < a { b } else { a } }
            }
            pub struct LastNonZero;
            #[scan_op]
            impl ScanOp for LastNonZero {
                type Elem = i8;
                fn identity() -> i8 { 0 }
                fn combine(a: i8, b: i8) -> i8 { if b == 0 { a } else { b } }
            }
            pub struct WideSum;
            #[scan_op]
            impl ScanOp for WideSum {
                type Elem = u16;
                fn identity() -> u16 { 0 }
                fn combine(a: u16, b: u16) -> u16 { a.wrapping_add(b) }
            }
        "#;
        let file = scan_lower::parse_ops_file(text).unwrap();
        let form =
            |name: &str| proven_word_form(&file, name, file.op_spec(name).unwrap()).word_form;
        assert_eq!(form("ByteSum"), Some(WordForm::WrappingAdd));
        assert_eq!(form("SignedMin"), Some(WordForm::Min));
        assert_eq!(form("LastNonZero"), None);
        // Only bytes are proven by trying every pair.
        assert_eq!(form("WideSum"), None);
    }
}
