//! A CUDA device: its context, what it is, and the kernels loaded into it.

use crate::compile;
use crate::disk_cache::DiskCache;
use crate::error::{alloc, driver, ScanError};
use crate::launch_plan::Kernel;
use crate::options::ScanOptions;
use crate::register_ladder;
use crate::scanner::engine::{value_bytes, InputShapes, UnalignedTwins};
use crate::scanner::{ScanEngine, Scanner};
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute, CUresult};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits,
};
use scan_codegen::{
    generate_fused, generate_variant, Algorithm, CodegenError, GeneratedScan, InputSize, ScanMode,
    ScanVariant, Segments, TuningPolicy,
};
use scan_core::{OpSpec, ScanOp, TransformSpec};
use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::sync::{Arc, Mutex, OnceLock};

/// Whether libcuda can be loaded. Checked once: cudarc panics on the first call into a library
/// it cannot load, so no driver call happens before this says yes.
pub fn driver_available() -> Result<(), ScanError> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    if *PRESENT.get_or_init(culib_present!(cudarc::driver::sys::is_culib_present())) {
        Ok(())
    } else {
        Err(ScanError::NoDriver {
            detail: "libcuda.so.1 could not be loaded (no NVIDIA driver installed)".into(),
        })
    }
}

/// One GPU, opened for scanning. Cheap to clone (shared); safe to share between threads.
#[derive(Clone)]
pub struct Gpu {
    inner: Arc<GpuInner>,
}

struct GpuInner {
    ctx: Arc<CudaContext>,
    name: String,
    sm: u32,
    sm_count: u32,
    disk: DiskCache,
    /// Loaded kernels, keyed by everything that determines the generated source. A second
    /// scanner for the same operator costs a hash lookup.
    modules: Mutex<HashMap<ModuleKey, Arc<LoadedScan>>>,
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct ModuleKey {
    pub(crate) op: OpSpec,
    pub(crate) algorithm: Algorithm,
    pub(crate) mode: ScanMode,
    pub(crate) variant: ScanVariant,
    pub(crate) policy: TuningPolicy,
    /// A fused lift/project (`generate_fused`); `None` for a plain scan.
    pub(crate) transform: Option<TransformSpec>,
}

/// A generated scan loaded into a context: its module and entry points.
pub(crate) struct LoadedScan {
    pub(crate) generated: GeneratedScan,
    _module: Arc<CudaModule>,
    /// Indexed by `Kernel as usize`; only the algorithm's entries are present.
    functions: [Option<CudaFunction>; 5],
    /// The most local memory (bytes per thread) any of the kernels uses.
    pub(crate) local_bytes: u32,
    /// Resident tiles (policy `resident_tiles`): the most blocks of the single-pass kernel the
    /// GPU holds at once, the largest grid it may launch cooperatively; 0 otherwise, or where
    /// the device cannot launch cooperatively.
    pub(crate) resident_blocks: u64,
}

impl LoadedScan {
    pub(crate) fn function(&self, kernel: Kernel) -> &CudaFunction {
        self.functions[kernel as usize]
            .as_ref()
            .expect("the plan only uses the algorithm's kernels")
    }
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("ordinal", &self.ordinal())
            .field("name", &self.inner.name)
            .field("sm", &self.inner.sm)
            .field("sm_count", &self.inner.sm_count)
            .finish()
    }
}

impl Gpu {
    /// Opens device `ordinal` (its primary context), with the kernel cache in
    /// [`crate::default_cache_dir`].
    pub fn new(ordinal: usize) -> Result<Gpu, ScanError> {
        Gpu::with_disk_cache(ordinal, DiskCache::from_env())
    }

    /// Opens device `ordinal`, caching compiled kernels in `disk`.
    pub fn with_disk_cache(ordinal: usize, disk: DiskCache) -> Result<Gpu, ScanError> {
        driver_available()?;
        if let Err(e) = cudarc::driver::result::init() {
            return Err(match e.0 {
                CUresult::CUDA_ERROR_NO_DEVICE => ScanError::NoDevice { ordinal, count: 0 },
                _ => ScanError::Driver {
                    step: "initialising the CUDA driver",
                    source: e,
                },
            });
        }
        let count = CudaContext::device_count()
            .map_err(driver("counting devices"))?
            .max(0) as usize;
        if ordinal >= count {
            return Err(ScanError::NoDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal).map_err(driver("creating the device context"))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(driver("reading the compute capability"))?;
        let name = ctx.name().map_err(driver("reading the device name"))?;
        let sm_count = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(driver("reading the multiprocessor count"))?;
        Ok(Gpu {
            inner: Arc::new(GpuInner {
                ctx,
                name,
                sm: (major * 10 + minor) as u32,
                sm_count: sm_count as u32,
                disk,
                modules: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The device's name, e.g. `"NVIDIA H100 80GB HBM3"`.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Compute capability as one number: major * 10 + minor (90 for sm_90).
    pub fn sm(&self) -> u32 {
        self.inner.sm
    }

    /// Number of streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.inner.sm_count
    }

    /// The device's ordinal, as passed to [`Gpu::new`].
    pub fn ordinal(&self) -> usize {
        self.inner.ctx.ordinal()
    }

    /// The cudarc context, for allocating and copying device memory.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.inner.ctx
    }

    /// The context's default (NULL) stream; the host-memory scan paths use it.
    pub fn default_stream(&self) -> Arc<CudaStream> {
        self.inner.ctx.default_stream()
    }

    /// A new non-blocking stream.
    pub fn new_stream(&self) -> Result<Arc<CudaStream>, ScanError> {
        self.inner
            .ctx
            .new_stream()
            .map_err(driver("creating a stream"))
    }

    /// Allocates `len` zeroed elements on the default stream. Unlike cudarc's own allocation,
    /// a lack of device memory is [`ScanError::OutOfMemory`] (through the same mapping the
    /// scanner's buffers use), and a byte count that overflows is one too, not a panic.
    ///
    /// Added so that the out-of-memory error path can be tested (tests/error_paths.rs) without
    /// a host buffer as large as the device; also handy for callers' scan buffers.
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        len: usize,
    ) -> Result<CudaSlice<T>, ScanError> {
        const WHAT: &str = "a buffer requested with Gpu::alloc_zeros";
        let Some(bytes) = len.checked_mul(std::mem::size_of::<T>()) else {
            return Err(ScanError::OutOfMemory {
                bytes: u64::MAX,
                what: WHAT,
            });
        };
        self.default_stream()
            .alloc_zeros::<T>(len)
            .map_err(alloc(bytes as u64, WHAT))
    }

    /// `"gpu: NVIDIA H100 80GB HBM3 (sm_90)"`.
    pub fn backend_name(&self) -> String {
        format!("gpu: {} (sm_{})", self.inner.name, self.inner.sm)
    }

    /// A scanner for `Op` with `opts`: generates its default kernel's source (an operator or
    /// policy that cannot be generated is an error here). NVRTC compiles (cached) and the
    /// driver loads each kernel on its first use, so a first scan builds only the shape its
    /// size takes; [`Scanner::prepare`] builds every kernel up to a size ahead of time.
    pub fn scanner<Op: ScanOp>(&self, opts: ScanOptions) -> Result<Scanner<Op>, ScanError>
    where
        Op::Elem: DeviceRepr,
    {
        self.scanner_with::<Op>(opts, None)
    }

    /// [`Gpu::scanner`], fused with `transform` when given.
    pub(crate) fn scanner_with<Op: ScanOp>(
        &self,
        opts: ScanOptions,
        transform: Option<TransformSpec>,
    ) -> Result<Scanner<Op>, ScanError>
    where
        Op::Elem: DeviceRepr,
    {
        let op = crate::op_spec::device_op_of::<Op>();
        let declared = op.element.size();
        let actual = std::mem::size_of::<Op::Elem>();
        if declared != actual {
            return Err(ScanError::ElementLayout { declared, actual });
        }
        let identity = value_bytes(&Op::identity());
        Ok(Scanner::from_engine(
            self.engine(op, opts, transform, identity)?,
        ))
    }

    /// The kernels of `op` (fused with `transform` when given) for `opts`, loaded, with their
    /// launch engine; `identity` is the operator's identity element as bytes.
    pub(crate) fn engine(
        &self,
        op: OpSpec,
        opts: ScanOptions,
        transform: Option<TransformSpec>,
        identity: Box<[MaybeUninit<u8>]>,
    ) -> Result<ScanEngine, ScanError> {
        opts.variant
            .supported_by(opts.algorithm)
            .map_err(|why| ScanError::Codegen(CodegenError::InvalidVariant(why)))?;
        let policy = opts.resolved_policy(self.inner.sm, &op, transform.as_ref());
        // With the default tuning, small and mid-size inputs (and 1-byte inputs of a few or of
        // many waves) get kernels of their own shapes too, built on first use (tuned for
        // unsegmented scans only; a fused scan's small shape is a fused shape).
        let key = ModuleKey {
            op,
            algorithm: opts.algorithm,
            mode: opts.mode,
            variant: opts.variant,
            policy,
            transform,
        };
        let sized_key = |size| match opts.policy {
            Some(_) => None,
            None => TuningPolicy::for_input_size(
                size,
                self.inner.sm,
                key.algorithm,
                &key.op,
                key.variant,
                key.transform.as_ref(),
            )
            .map(|policy| ModuleKey {
                policy,
                ..key.clone()
            }),
        };
        let shapes = InputShapes {
            tiny: sized_key(InputSize::Tiny),
            small: sized_key(InputSize::Small),
            mid: sized_key(InputSize::Mid),
            few_waves: sized_key(InputSize::FewWaves),
            many_waves: sized_key(InputSize::ManyWaves),
        };
        // Under the default tuning, each shape of a flat scan whose paths for buffers off a
        // vector boundary its register ladder may give up has a twin that keeps them (built
        // only if it did). Segmented and fused tiles sit on no buffer's vectors.
        let flat = opts.policy.is_none()
            && key.transform.is_none()
            && key.variant.segments == Segments::None;
        let twin = |key: Option<&ModuleKey>| {
            let key = key.filter(|_| flat)?;
            let policy = key
                .policy
                .unaligned_twin(key.algorithm, key.op.element.size())?;
            Some(ModuleKey {
                policy,
                ..key.clone()
            })
        };
        let twins = UnalignedTwins {
            default: twin(Some(&key)),
            sized: shapes.as_ref().map(|sized| twin(sized.as_ref())),
        };
        // Nothing is compiled here: each shape's kernel is built on first use (or in
        // `prepare`), so a first scan compiles only the shape it takes. The default's source is
        // generated now all the same, so that an operator or a policy that cannot be generated,
        // or a tile over the device's shared memory, is an error here, before any scan.
        let generated = self.generate(&key, key.policy.first_rung())?;
        self.check_dynamic_shared(generated.dynamic_shared_bytes)?;
        Ok(ScanEngine::new(self.clone(), key, shapes, twins, identity))
    }

    /// The kernels of `key` generated with `policy` (one rung of its register ladder).
    fn generate(&self, key: &ModuleKey, policy: TuningPolicy) -> Result<GeneratedScan, ScanError> {
        Ok(match &key.transform {
            None => generate_variant(&key.op, key.algorithm, key.mode, key.variant, policy)?,
            Some(t) => generate_fused(&key.op, t, key.algorithm, key.mode, key.variant, policy)?,
        })
    }

    /// How many blocks of a resident-tiles `function` the GPU holds at once (its occupancy on
    /// every SM): the largest grid `cuLaunchCooperativeKernel` accepts. 0 where the device
    /// does not launch cooperatively.
    fn resident_blocks(
        &self,
        function: &CudaFunction,
        generated: &GeneratedScan,
    ) -> Result<u64, ScanError> {
        let cooperative = self
            .inner
            .ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)
            .map_err(driver("reading whether the device launches cooperatively"))?;
        if cooperative == 0 {
            return Ok(0);
        }
        let per_sm = function
            .occupancy_max_active_blocks_per_multiprocessor(
                generated.policy.block_threads,
                generated.dynamic_shared_bytes as usize,
                None,
            )
            .map_err(driver("reading a kernel's blocks per multiprocessor"))?;
        Ok(u64::from(per_sm) * u64::from(self.inner.sm_count))
    }

    /// Lets `function` launch with `bytes` of dynamic shared memory
    /// ([`scan_codegen::GeneratedScan::dynamic_shared_bytes`]): past the 48 KiB every kernel
    /// may use, a kernel must opt in, up to the device's limit. A tile over that limit is
    /// [`ScanError::SharedMemory`], before any launch.
    fn allow_dynamic_shared(&self, function: &CudaFunction, bytes: u32) -> Result<(), ScanError> {
        if u64::from(bytes) <= TuningPolicy::MAX_STATIC_SHARED_BYTES {
            return Ok(());
        }
        self.check_dynamic_shared(bytes)?;
        function
            .set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
            .map_err(driver("raising a kernel's dynamic shared-memory limit"))
    }

    /// [`ScanError::SharedMemory`] where a tile's `bytes` of dynamic shared memory are over the
    /// device's opt-in limit.
    fn check_dynamic_shared(&self, bytes: u32) -> Result<(), ScanError> {
        if u64::from(bytes) <= TuningPolicy::MAX_STATIC_SHARED_BYTES {
            return Ok(());
        }
        let max = self
            .inner
            .ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .map_err(driver("reading the device's shared-memory limit"))?;
        let max = u32::try_from(max).unwrap_or(0);
        if bytes > max {
            return Err(ScanError::SharedMemory {
                needs: bytes,
                max,
                device: self.inner.name.clone(),
            });
        }
        Ok(())
    }

    pub(crate) fn load(&self, key: ModuleKey) -> Result<Arc<LoadedScan>, ScanError> {
        if let Some(hit) = self
            .inner
            .modules
            .lock()
            .expect("module cache poisoned")
            .get(&key)
        {
            return Ok(hit.clone());
        }
        // Compiled without the lock held, so scanners for different ops build in parallel.
        // A policy's register cap (min_blocks_per_sm) is a request: where the operator needs
        // more registers than it leaves, ptxas spills to local memory, which can cost more than
        // the occupancy the cap buys. Then the next rung of the register ladder is taken (its
        // later rungs compiled side by side: register_ladder.rs). The loaded function's local
        // memory size is the authority (NVRTC's log does not reliably carry ptxas's report).
        let kernels: &[Kernel] = if key.algorithm.is_hierarchical() {
            &[
                Kernel::ReduceTiles,
                Kernel::ReduceSpine,
                Kernel::ScanTiles,
                Kernel::ScanSpine,
            ]
        } else {
            &[Kernel::SinglePass]
        };
        let _span = tracing::debug_span!(
            "load_scan",
            op = %key.op.name,
            algorithm = ?key.algorithm,
            mode = ?key.mode,
            sm = self.inner.sm,
        )
        .entered();
        let rungs = key
            .policy
            .register_ladder(key.op.element.size(), key.variant.direction);
        let next = |tried, local_bytes| TuningPolicy::next_rung_to_try(&rungs, tried, local_bytes);
        let parent = tracing::Span::current();
        let build = |policy: &TuningPolicy| {
            let _span = parent.enter();
            let generated = self.generate(&key, *policy)?;
            let image =
                compile::compile_cached(&generated.source, self.inner.sm, &self.inner.disk)?;
            Ok((generated, image))
        };
        let load = |(generated, image): (GeneratedScan, Arc<compile::KernelImage>)| {
            let module = self
                .inner
                .ctx
                .load_module(image.to_loadable())
                .map_err(driver("loading the compiled module"))?;
            let mut functions: [Option<CudaFunction>; 5] = Default::default();
            let mut local_bytes = 0;
            for &kernel in kernels {
                let function = module
                    .load_function(kernel.name())
                    .map_err(driver("finding a kernel in the module"))?;
                if kernel == Kernel::SinglePass {
                    self.allow_dynamic_shared(&function, generated.dynamic_shared_bytes)?;
                }
                local_bytes = local_bytes.max(
                    function
                        .local_size_bytes()
                        .map_err(driver("reading a kernel's local memory size"))?,
                );
                functions[kernel as usize] = Some(function);
            }
            if local_bytes > 0 {
                tracing::debug!(
                    local_bytes,
                    min_blocks_per_sm = generated.policy.min_blocks_per_sm,
                    "ptxas spilled under the register cap"
                );
            }
            Ok(register_ladder::Loaded {
                loaded: (generated, module, functions),
                local_bytes: local_bytes.max(0) as u32,
            })
        };
        let (rung, climbed) =
            register_ladder::climb(&rungs, compile::compile_threads(), next, build, load)?;
        tracing::debug!(rung, rungs = rungs.len(), "register ladder climbed");
        let (generated, module, functions) = climbed.loaded;
        let local_bytes = climbed.local_bytes;
        let resident_blocks = match &functions[Kernel::SinglePass as usize] {
            Some(function) if generated.policy.resident_tiles => {
                self.resident_blocks(function, &generated)?
            }
            _ => 0,
        };
        tracing::debug!(policy = ?generated.policy, local_bytes, resident_blocks, "module loaded");
        let loaded = Arc::new(LoadedScan {
            generated,
            _module: module,
            functions,
            local_bytes,
            resident_blocks,
        });
        let mut modules = self.inner.modules.lock().expect("module cache poisoned");
        Ok(modules.entry(key).or_insert(loaded).clone())
    }
}
