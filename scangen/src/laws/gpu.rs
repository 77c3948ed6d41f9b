//! Law evaluation with the generated CUDA, on the GPU: the same `scan_combine` and
//! `scan_identity` every scan kernel uses, called from a small kernel appended to the
//! generated source.

use super::{LawEvaluator, LawResults};
use scan_codegen::{generate, Algorithm, ScanMode, TuningPolicy};
use scan_core::{ElementType, OpSpec};
use scan_runtime::compile::compile_cached;
use scan_runtime::cudarc::driver::{LaunchConfig, PushKernelArg};
use scan_runtime::{DiskCache, Gpu, ScanError};

const KERNEL: &str = "scangen_check_laws";

/// Evaluates the laws with the operator's generated CUDA on `gpu`.
pub struct GpuLaws<'g> {
    gpu: &'g Gpu,
    spec: OpSpec,
}

impl<'g> GpuLaws<'g> {
    /// An evaluator of `spec` (`Op::device_op()`, or an operator of a file) on `gpu`. Nothing
    /// is compiled yet: each [`LawEvaluator::evaluate`] compiles the kernel with NVRTC (or
    /// finds it in the kernel cache), so errors show there.
    pub fn new(gpu: &'g Gpu, spec: OpSpec) -> Self {
        GpuLaws { gpu, spec }
    }

    fn source(&self) -> Result<String, Box<dyn std::error::Error>> {
        let size = self.spec.element.size();
        let policy = TuningPolicy::for_target(self.gpu.sm(), Algorithm::SinglePass, size);
        let mut source = generate(
            &self.spec,
            Algorithm::SinglePass,
            ScanMode::Inclusive,
            policy,
        )?
        .source;
        let t = self.spec.element.c_name();
        source.push_str(&format!(
            r#"
// Law checker: out[4i..4i+4] = ((a⊕b)⊕c, a⊕(b⊕c), e⊕a, a⊕e) for sample i.
extern "C" __global__ void {KERNEL}(const {t}* a, const {t}* b, const {t}* c, {t}* out, unsigned long long n)
{{
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const {t} x = a[i], y = b[i], z = c[i];
    out[4 * i + 0] = scan_combine(scan_combine(x, y), z);
    out[4 * i + 1] = scan_combine(x, scan_combine(y, z));
    out[4 * i + 2] = scan_combine(scan_identity(), x);
    out[4 * i + 3] = scan_combine(x, scan_identity());
}}
"#
        ));
        Ok(source)
    }
}

fn driver(
    step: &'static str,
) -> impl FnOnce(scan_runtime::cudarc::driver::DriverError) -> ScanError {
    move |source| ScanError::Driver { step, source }
}

impl LawEvaluator for GpuLaws<'_> {
    fn name(&self) -> String {
        format!("gpu (generated CUDA, {})", self.gpu.name())
    }

    fn element(&self) -> &ElementType {
        &self.spec.element
    }

    fn evaluate(
        &mut self,
        triples: &[[Vec<u8>; 3]],
    ) -> Result<Vec<LawResults>, Box<dyn std::error::Error>> {
        let size = self.spec.element.size();
        let n = triples.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let image = compile_cached(&self.source()?, self.gpu.sm(), &DiskCache::from_env())?;
        let module = self
            .gpu
            .context()
            .load_module(image.to_loadable())
            .map_err(driver("loading the law-check module"))?;
        let function = module
            .load_function(KERNEL)
            .map_err(driver("finding the law-check kernel"))?;
        let stream = self.gpu.default_stream();
        let column = |k: usize| {
            triples
                .iter()
                .flat_map(|t| t[k].iter().copied())
                .collect::<Vec<u8>>()
        };
        let a = stream
            .clone_htod(&column(0))
            .map_err(driver("uploading law samples"))?;
        let b = stream
            .clone_htod(&column(1))
            .map_err(driver("uploading law samples"))?;
        let c = stream
            .clone_htod(&column(2))
            .map_err(driver("uploading law samples"))?;
        let mut out = stream
            .alloc_zeros::<u8>(4 * n * size)
            .map_err(driver("allocating law results"))?;
        let n64 = n as u64;
        let mut launch = stream.launch_builder(&function);
        launch.arg(&a).arg(&b).arg(&c).arg(&mut out).arg(&n64);
        let cfg = LaunchConfig {
            grid_dim: (n.div_ceil(128) as u32, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the kernel's parameters are four element pointers of the sizes allocated
        // above and the count n.
        unsafe { launch.launch(cfg) }.map_err(|source| ScanError::Launch {
            kernel: KERNEL,
            source,
        })?;
        let bytes = stream
            .clone_dtoh(&out)
            .map_err(driver("downloading law results"))?;
        Ok(bytes
            .chunks_exact(4 * size)
            .map(|r| {
                [
                    r[..size].to_vec(),
                    r[size..2 * size].to_vec(),
                    r[2 * size..3 * size].to_vec(),
                    r[3 * size..].to_vec(),
                ]
            })
            .collect())
    }
}
