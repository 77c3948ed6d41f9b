//! `scangen scan --file ops.rs --op X --input data.npy [--output out.npy]`: scans a `.npy` or
//! raw binary file with an operator from a Rust file (no rustc): on a GPU with the operator's
//! generated kernels (the runtime's `ByteScanner`) when one can be used, else on the CPU with
//! the evaluator of the operator's lowered IR (`--backend` chooses). An operator with
//! `lift`/`project` reads one `--input` per input array of `lift` (in its parameters' order),
//! of those types, and writes `project`'s outputs; on a GPU they are fused into the kernels.

mod npy;

use super::op_source::OpSource;
use super::CliResult;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use scan_core::{ElementType, PrimType};
use scan_lower::EvalOp;
use scangen::runtime::{auto_backend, AutoBackend, ByteScanner, Gpu, ScanOptions};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    pub source: OpSource,
    /// Input: a `.npy` array of the element type (any shape, scanned flat in C order), or any
    /// other file as raw elements back to back (little-endian, `#[repr(C)]` layout). For an
    /// operator with `lift`: once per input array, of `lift`'s parameter types, in order.
    #[arg(long, value_name = "FILE", required = true)]
    pub input: Vec<PathBuf>,
    /// Output: `.npy` (the input's dtype and shape) or raw; default: print the last element
    /// (the total) only.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exclusive scan (each output excludes its own element).
    #[arg(long)]
    pub exclusive: bool,
    /// Where to scan: `auto` (a GPU when one can be used, with its driver and NVRTC; else the
    /// CPU), `gpu` (an error without one) or `cpu` (the evaluator of the operator's IR).
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: ScanBackend,
    /// The same as `--backend cpu`.
    #[arg(long)]
    pub cpu: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScanBackend {
    Auto,
    Gpu,
    Cpu,
}

/// Where the scan runs: the GPU, or the CPU evaluator (with the reason when the GPU was wanted
/// by `auto` but cannot be used).
enum Target {
    Gpu(Box<ByteScanner>),
    Cpu(Option<String>),
}

impl Target {
    fn choose(args: &ScanArgs) -> Result<Target, Box<dyn std::error::Error>> {
        let backend = if args.cpu {
            ScanBackend::Cpu
        } else {
            args.backend
        };
        let gpu = match backend {
            ScanBackend::Cpu => return Ok(Target::Cpu(None)),
            ScanBackend::Gpu => Gpu::new(0)?,
            ScanBackend::Auto => match auto_backend()? {
                AutoBackend::Gpu(gpu) => gpu,
                AutoBackend::Cpu { reason } => return Ok(Target::Cpu(Some(reason))),
            },
        };
        let mut opts = ScanOptions::default();
        if args.exclusive {
            opts = opts.exclusive();
        }
        Ok(Target::Gpu(Box::new(args.source.byte_scanner(&gpu, opts)?)))
    }

    /// "on gpu: NVIDIA H100 ... (the operator's generated kernels)" or the CPU's words.
    fn describe(&self) -> String {
        match self {
            Target::Gpu(s) => format!("on {} (the operator's generated kernels)", s.backend_name()),
            Target::Cpu(None) => "on the CPU (the evaluator of the operator's IR)".into(),
            Target::Cpu(Some(why)) => {
                format!("on the CPU (the evaluator of the operator's IR; no GPU: {why})")
            }
        }
    }
}

/// The input's element bytes and, for a `.npy`, its header.
struct Input {
    bytes: Vec<u8>,
    header: Option<npy::NpyHeader>,
}

fn is_npy(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

fn read_input(path: &Path, element: &ElementType) -> Result<Input, String> {
    let prim = match element {
        ElementType::Prim(p) => Some(*p),
        ElementType::Struct(_) => None,
    };
    read_values(path, element.size(), prim, "element")
}

/// A file of values of `size` bytes (of the primitive `prim`, when one: a `.npy`'s dtype must be
/// it); `what` names them in errors.
fn read_values(
    path: &Path,
    size: usize,
    prim: Option<PrimType>,
    what: &str,
) -> Result<Input, String> {
    let mut bytes =
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let shown = path.display();
    let header = if is_npy(path) {
        let h = npy::parse(&bytes).map_err(|e| format!("{shown}: {e}"))?;
        if h.fortran_order && h.shape.iter().filter(|&&d| d > 1).count() > 1 {
            return Err(format!(
                "{shown}: a Fortran-order array of several dimensions; save it in C order (np.ascontiguousarray)"
            ));
        }
        if let Some(p) = prim {
            let want = npy::typestr(p);
            if h.descr != want {
                return Err(format!(
                    "{shown}: dtype {} but the operator's {what} is {p} ({want}); convert with arr.astype(...)",
                    h.descr
                ));
            }
        }
        let data = bytes.len() - h.data_offset;
        if h.len().checked_mul(size as u64) != Some(data as u64) {
            return Err(format!(
                "{shown}: {} elements of shape {:?} are {} bytes of data at {size} bytes each, the file has {data}",
                h.len(),
                h.shape,
                h.len().saturating_mul(size as u64)
            ));
        }
        bytes.drain(..h.data_offset);
        Some(h)
    } else {
        None
    };
    if bytes.len() % size != 0 {
        return Err(format!(
            "{shown}: {} bytes is not a whole number of {size}-byte values",
            bytes.len()
        ));
    }
    Ok(Input { bytes, header })
}

pub fn run(args: ScanArgs) -> CliResult {
    if args.source.file.is_none() {
        return Err("scangen scan runs an operator from a file: --file ops.rs --op NAME".into());
    }
    let op = args.source.evaluator()?;
    if op.has_transform() {
        return run_transform(&args, &op);
    }
    let element = op.element().clone();
    let [path] = args.input.as_slice() else {
        return Err(format!(
            "`{}` has no `lift`: it scans one --input of its elements, {} given",
            op.name(),
            args.input.len()
        )
        .into());
    };
    let input = read_input(path, &element)?;
    let size = element.size();
    let n = input.bytes.len() / size;
    let mut output = vec![0u8; input.bytes.len()];
    let mut target = Target::choose(&args)?;
    let total = match &mut target {
        Target::Gpu(scanner) => {
            scanner.scan_host(&[&input.bytes], &mut output)?;
            // The scan's total: its last output, or for an exclusive scan the last output
            // combined with the last input.
            match n {
                0 => op.identity()?,
                _ if args.exclusive => {
                    let last = (n - 1) * size..n * size;
                    op.combine(&output[last.clone()], &input.bytes[last])?
                }
                _ => output[(n - 1) * size..].to_vec(),
            }
        }
        Target::Cpu(_) => {
            // A bar for inputs that take more than a moment (the evaluator does a few million
            // elements a second); hidden, as indicatif is, where stderr is not a terminal.
            let bar = ProgressBar::new(n as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "[{bar:30}] {pos}/{len} elements {elapsed} (eta {eta})",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            if n < 1 << 20 {
                bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
            }
            let total = op.scan(
                &input.bytes,
                &mut output,
                args.exclusive,
                1 << 16,
                &mut |done| bar.set_position(done as u64),
            )?;
            bar.finish_and_clear();
            total
        }
    };

    let describe = |b: &[u8]| describe(&element, b);
    eprintln!(
        "scanned {n} elements of {} with `{}` {}",
        element.c_name(),
        op.name(),
        target.describe()
    );
    match &args.output {
        Some(path) => {
            let mut file = Vec::with_capacity(output.len() + 128);
            if is_npy(path) {
                let (descr, shape) = match &input.header {
                    Some(h) => (h.descr.clone(), h.shape.clone()),
                    None => (npy::descr_of(&element), vec![n as u64]),
                };
                file.extend(npy::header(&descr, &shape));
            }
            file.extend(&output);
            std::fs::write(path, file)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        None => {
            if n > 0 {
                println!("last: {}", describe(&output[(n - 1) * size..]));
            }
        }
    }
    println!("total: {}", describe(&total));
    Ok(())
}

/// An operator with `lift`/`project`: one input file per input array, outputs of `project`'s
/// type.
fn run_transform(args: &ScanArgs, op: &EvalOp) -> CliResult {
    let layouts = op.input_layouts()?;
    if args.input.len() != layouts.len() {
        return Err(format!(
            "`{}`'s lift reads {} input array(s): give one --input each, in its parameters' order ({} given)",
            op.name(),
            layouts.len(),
            args.input.len()
        )
        .into());
    }
    let inputs = args
        .input
        .iter()
        .zip(&layouts)
        .enumerate()
        .map(|(k, (path, l))| read_values(path, l.size, l.prim, &format!("input {k}")))
        .collect::<Result<Vec<_>, _>>()?;
    let arrays: Vec<&[u8]> = inputs.iter().map(|i| i.bytes.as_slice()).collect();
    let out = op.output_layout()?;
    let mut target = Target::choose(args)?;
    let output = match &mut target {
        Target::Gpu(scanner) => {
            let n = scanner.positions(&arrays)?;
            let mut output = vec![0u8; n as usize * out.size];
            scanner.scan_host(&arrays, &mut output)?;
            output
        }
        Target::Cpu(_) => op.transform_scan(&arrays, args.exclusive)?,
    };
    let n = output.len() / out.size.max(1);
    eprintln!(
        "scanned {n} positions of {} input array(s) with `{}` (lift, scan, project) {}",
        arrays.len(),
        op.name(),
        target.describe()
    );
    let shown = |b: &[u8]| match out.prim {
        Some(p) => describe(&ElementType::Prim(p), b),
        None => format!("{b:02x?}"),
    };
    match &args.output {
        Some(path) => {
            let mut file = Vec::with_capacity(output.len() + 128);
            if is_npy(path) {
                let Some(p) = out.prim else {
                    return Err(format!(
                        "{}: `project`'s output is not a primitive, which .npy cannot describe here; write a raw file",
                        path.display()
                    )
                    .into());
                };
                let shape = match &inputs[0].header {
                    Some(h) => h.shape.clone(),
                    None => vec![n as u64],
                };
                file.extend(npy::header(&npy::typestr(p), &shape));
            }
            file.extend(&output);
            std::fs::write(path, file)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        None if n > 0 => println!("last: {}", shown(&output[(n - 1) * out.size..])),
        None => println!("no input values"),
    }
    Ok(())
}

/// An element for the terminal: `-3` or `Name { a: 1.5, b: 2 }`.
fn describe(element: &ElementType, bytes: &[u8]) -> String {
    let read = |ty: scan_core::PrimType, off: usize| {
        let mut buf = [0u8; 8];
        buf[..ty.size()].copy_from_slice(&bytes[off..off + ty.size()]);
        let raw = u64::from_le_bytes(buf);
        use scan_core::PrimType::*;
        match ty {
            I8 => (raw as i8).to_string(),
            I16 => (raw as i16).to_string(),
            I32 => (raw as i32).to_string(),
            I64 => (raw as i64).to_string(),
            F32 => format!("{:?}", f32::from_bits(raw as u32)),
            F64 => format!("{:?}", f64::from_bits(raw)),
            F16 => format!("{:?}", scan_core::half::f16::from_bits(raw as u16)),
            BF16 => format!("{:?}", scan_core::half::bf16::from_bits(raw as u16)),
            _ => raw.to_string(),
        }
    };
    match element {
        ElementType::Prim(p) => read(*p, 0),
        ElementType::Struct(s) => {
            let fields: Vec<String> = s
                .leaves()
                .iter()
                .map(|l| format!("{}: {}", l.path, read(l.ty, l.offset)))
                .collect();
            format!("{} {{ {} }}", s.name, fields.join(", "))
        }
    }
}
