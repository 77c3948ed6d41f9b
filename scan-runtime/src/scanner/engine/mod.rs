//! The untyped engine under every scanner: the loaded kernels, their launch plan and scratch,
//! and the launches themselves. It knows the element's size and identity as bytes, not its
//! Rust type, so the typed [`super::Scanner`] and [`super::ByteScanner`] (an operator known
//! only at run time, from a file) share one launch path.
//!
//! This file holds the engine and which kernel serves an input (built on first use, or side by
//! side in `prepare`); `sized.rs` the kernels' slots by input size and their twins, `launch.rs`
//! the checks of a scan's arguments and its launches.

mod launch;
mod sized;

pub(crate) use launch::{copy_empty_total, ReadyLaunch, Seeds, SegmentArgs};
use sized::{holds, SizedVariant};
pub(crate) use sized::{InputShapes, UnalignedTwins};

use crate::abi;
use crate::capture::{self, Capture};
use crate::column_plan::ColumnShape;
use crate::error::ScanError;
use crate::gpu::{Gpu, LoadedScan, ModuleKey};
use crate::launch_plan::{self, LaunchPlan};
use crate::workspace::{Needs, Workspace};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::CudaStream;
use scan_codegen::{
    Algorithm, InputSize, ScanMode, ScanVariant, Segments, SizedShapes, TuningPolicy,
};
use std::mem::MaybeUninit;
use std::sync::Arc;

/// The compiled kernels of one scan and everything their launches need.
pub(crate) struct ScanEngine {
    gpu: Gpu,
    /// What the scan was built for: the default shape's key (its operator, algorithm, mode,
    /// variant and the policy it asks for), known before any kernel is compiled.
    key: Box<ModuleKey>,
    /// The default shape's kernel: its key until a scan first takes it (inputs past the
    /// smaller shapes, or any the smaller shapes cannot launch), `prepare` reaches it or the
    /// built policy is asked for; then its module. Not built up front: a first scan of a small
    /// or mid-size input then compiles only its own shape (on an empty kernel cache, a byte
    /// max's default ladder alone was two rounds of NVRTC compiles, 6-7 s on an H200 host).
    default: SizedVariant,
    /// Elements per tile of the default shape (every rung of its register ladder keeps it).
    tile: u64,
    /// The variants for inputs of a few waves of the default's tiles or fewer
    /// (`TuningPolicy::for_tiny_input`, `TuningPolicy::for_small_input`,
    /// `TuningPolicy::for_mid_input`,
    /// `TuningPolicy::for_few_waves_input`) and for 1-byte inputs of many waves
    /// (`TuningPolicy::for_many_waves_input`), chosen by `TuningPolicy::input_size`: each its
    /// key until first used, then its module. (Boxed: a scanner stays small to move around.)
    shapes: Box<InputShapes<SizedVariant>>,
    /// Each shape's twin for buffers off a vector boundary (`TuningPolicy::unaligned_twin`),
    /// built where that shape's register ladder gave their paths up, on the first scan of such
    /// buffers that takes the shape (or in `prepare`).
    twins: Box<UnalignedTwins<SizedVariant>>,
    workspace: Workspace,
    /// Bytes of one element (the level buffers hold elements).
    elem_bytes: usize,
    /// The operator's identity as the element's bytes (padding included, hence `MaybeUninit`):
    /// the total of an empty scan with no initial value.
    identity: Box<[MaybeUninit<u8>]>,
}

/// The bytes of `value`, padding included, as the device is to see them.
pub(crate) fn value_bytes<T: Copy>(value: &T) -> Box<[MaybeUninit<u8>]> {
    let size = std::mem::size_of::<T>();
    let mut bytes = vec![MaybeUninit::<u8>::uninit(); size].into_boxed_slice();
    // SAFETY: `bytes` holds `size` bytes; copying possibly uninitialised padding into
    // `MaybeUninit<u8>` is sound, and the bytes are only ever handed to the driver.
    unsafe {
        std::ptr::copy_nonoverlapping(
            value as *const T as *const MaybeUninit<u8>,
            bytes.as_mut_ptr(),
            size,
        )
    };
    bytes
}

impl ScanEngine {
    /// `key`: the default shape's (its kernel is built on first use); `identity`: the
    /// operator's identity, one element's bytes.
    pub(crate) fn new(
        gpu: Gpu,
        key: ModuleKey,
        shapes: InputShapes<Option<ModuleKey>>,
        twins: UnalignedTwins<Option<ModuleKey>>,
        identity: Box<[MaybeUninit<u8>]>,
    ) -> ScanEngine {
        let tile = u64::from(key.policy.tile_items());
        let elem_bytes = key.op.element.size();
        assert_eq!(identity.len(), elem_bytes, "the identity is one element");
        ScanEngine {
            gpu,
            default: SizedVariant::new(Some(key.clone())),
            key: Box::new(key),
            tile,
            shapes: Box::new(shapes.map(SizedVariant::new)),
            twins: Box::new(UnalignedTwins {
                default: SizedVariant::new(twins.default),
                sized: twins.sized.map(SizedVariant::new),
            }),
            workspace: Workspace::new(),
            elem_bytes,
            identity,
        }
    }

    /// The GPU the scanner runs on.
    pub(crate) fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The device-wide algorithm the kernels implement (`ScanOptions::algorithm`).
    pub(crate) fn algorithm(&self) -> Algorithm {
        self.key.algorithm
    }

    /// Inclusive or exclusive.
    pub(crate) fn mode(&self) -> ScanMode {
        self.key.mode
    }

    /// The scan's direction and segment rule.
    pub(crate) fn variant(&self) -> ScanVariant {
        self.key.variant
    }

    /// The default shape's kernel and its tile, built and loaded if it is not yet (not inside
    /// a capture, for an input of `n` elements: that is an error naming `prepare`).
    fn default_kernel(
        &mut self,
        n: u64,
        capture: Capture,
    ) -> Result<(Arc<LoadedScan>, u64), ScanError> {
        self.default.load(&self.gpu, n, capture)?;
        match &self.default {
            SizedVariant::Loaded(loaded, tile) => Ok((loaded.clone(), *tile)),
            _ => unreachable!("the default shape always has a kernel, loaded just now"),
        }
    }

    /// The default shape's kernel as built, if it is yet (`None`: no scan, `prepare` or
    /// question about it has needed it).
    pub(crate) fn default_built(&self) -> Option<&LoadedScan> {
        match &self.default {
            SizedVariant::Loaded(loaded, _) => Some(loaded),
            _ => None,
        }
    }

    /// The policy the default shape asks for (the first rung of its register ladder is built
    /// from it).
    pub(crate) fn requested_policy(&self) -> TuningPolicy {
        self.key.policy
    }

    /// The default shape as built: the requested policy, with its register cap loosened where
    /// ptxas would have spilled under it. Builds its kernel if it is not yet.
    pub(crate) fn policy(&mut self) -> Result<TuningPolicy, ScanError> {
        Ok(self.default_kernel(0, Capture::None)?.0.generated.policy)
    }

    /// Local memory of the default shape's kernels in bytes per thread (register spills,
    /// stack): 0 unless even the loosest register cap spills. Builds them if they are not yet.
    pub(crate) fn local_memory_bytes(&mut self) -> Result<u32, ScanError> {
        Ok(self.default_kernel(0, Capture::None)?.0.local_bytes)
    }

    /// Elements per tile of the default shape (one block's share).
    pub(crate) fn tile_items(&self) -> u64 {
        self.tile
    }

    /// The generated CUDA source of the default shape's kernel as built. Builds it if it is not
    /// yet.
    pub(crate) fn source(&mut self) -> Result<&str, ScanError> {
        self.default_kernel(0, Capture::None)?;
        Ok(&self
            .default_built()
            .expect("loaded just now")
            .generated
            .source)
    }

    /// `"gpu: NVIDIA H100 80GB HBM3 (sm_90)"`.
    pub(crate) fn backend_name(&self) -> String {
        self.gpu.backend_name()
    }

    /// Makes the scanner ready to scan up to `n` elements on `stream` without loading a module
    /// or allocating: loads every kernel variant an input of at most `n` elements can use and
    /// sizes the scratch for the largest, enqueued on `stream` (no host synchronisation). Call it
    /// before capturing scans into a CUDA graph, on the capturing stream, and launch the graph
    /// after it (on the same stream, or once the stream has synchronised).
    pub(crate) fn prepare(&mut self, n: u64, stream: &Arc<CudaStream>) -> Result<(), ScanError> {
        self.check_device(stream)?;
        if capture::status(stream)? == Capture::Active {
            return Err(ScanError::NotPreparedForCapture {
                n,
                needs: "Scanner::prepare itself (it loads modules and allocates)".into(),
            });
        }
        let mut needs = Needs::default();
        let sizes = |engine: &ScanEngine| {
            let mut sizes = vec![n];
            sizes.extend(engine.largest_sized_inputs().into_iter().map(|m| n.min(m)));
            sizes
        };
        self.build_side_by_side(&sizes(self));
        // Past the smaller shapes, which of the rest serve depends on the default's cap as
        // built (`settled_input_size`): with it loaded (built above), the sizes are exact.
        self.settled_input_size(n, Capture::None)?;
        for m in sizes(self) {
            let (class, loaded, tile) = self.variant_for(m, Capture::None)?;
            needs = needs.max(self.needs(&loaded, &launch_plan::plan(self.algorithm(), m, tile)?));
            // A capture may scan buffers off a vector boundary too.
            if let Some((_, twin, tile)) =
                self.unaligned_kernel(class, &loaded, m, Capture::None)?
            {
                needs =
                    needs.max(self.needs(&twin, &launch_plan::plan(self.algorithm(), m, tile)?));
            }
            if self.variant().segments == Segments::Columns && m > 0 {
                // A column scan's slots depend on the matrix's shape: reserve for any shape.
                let policy = &loaded.generated.policy;
                let slots =
                    ColumnShape::slot_bound(m, policy.block_threads, policy.items_per_thread);
                needs = needs.max(Needs {
                    level_bytes: 0,
                    tile_state_bytes: abi::tile_state_bytes(&loaded.generated, slots),
                });
            }
        }
        self.workspace.follow(stream, Capture::None)?;
        self.workspace.reserve(stream, needs)?;
        // The total of an empty scan with no initial value is copied from here.
        self.workspace
            .identity(stream, Capture::None, &self.identity)?;
        self.workspace.used(stream, Capture::None);
        Ok(())
    }

    /// Builds the kernels that inputs of `sizes` elements take and that are not loaded yet,
    /// each on its own thread: on an empty kernel cache each is a register ladder of NVRTC
    /// compiles (a 1-byte scan's mid-size shape, six), which one after another would add up.
    /// They are each size's shape; past the mid-size class, the default and the shape that
    /// would serve were the default to give up a block (which of them serves is known only once
    /// the default is built: `settled_input_size`); and a shape's twin for buffers off a vector
    /// boundary where the shape leaves those paths to it
    /// (`TuningPolicy::unaligned_paths_in_twin`: the twin is known to be needed before the shape
    /// is built, and a capture may scan such buffers). Only a warm-up of the GPU's module cache:
    /// [`ScanEngine::variant_for`] and [`ScanEngine::unaligned_kernel`] load them as before, and
    /// report any error a build met (their results are dropped here).
    fn build_side_by_side(&mut self, sizes: &[u64]) {
        let mut keys: Vec<ModuleKey> = Vec::new();
        let mut add = |variant: &SizedVariant| {
            if let SizedVariant::NotLoaded(key) = variant {
                if !keys.contains(key) {
                    keys.push((**key).clone());
                }
            }
        };
        for &m in sizes {
            let mut class = self.input_size(m);
            if !matches!(class, InputSize::Tiny | InputSize::Small | InputSize::Mid) {
                add(&self.default);
                let every_shape = SizedShapes {
                    few_waves: self.shapes.few_waves.exists(),
                    many_waves: self.shapes.many_waves.exists(),
                    ..self.sized_shapes()
                };
                class = self.input_size_with(m, self.mid_blocks_per_sm(), every_shape);
            }
            if let Some(shape) = self.shapes.get(class) {
                add(shape);
                if let SizedVariant::NotLoaded(key) = shape {
                    if key.policy.unaligned_paths_in_twin {
                        add(self.twins.get(class));
                    }
                }
            }
        }
        self.load_side_by_side(keys);
    }

    /// Builds and loads `keys` into the GPU's module cache, each on its own thread (nothing to
    /// gain from threads for fewer than two). Errors are dropped: whoever takes a kernel loads
    /// it again from the cache, or meets the error then.
    fn load_side_by_side(&self, keys: Vec<ModuleKey>) {
        if keys.len() < 2 {
            return;
        }
        let gpu = &self.gpu;
        std::thread::scope(|scope| {
            for key in keys {
                scope.spawn(move || {
                    let _ = gpu.load(key);
                });
            }
        });
    }

    /// The kernel for an input of `n` elements, its tile, and the size class whose shape it is
    /// (`Large`: the default): the tiny-, small- or mid-size variant
    /// when the default tiles would not fill the GPU (`TuningPolicy::input_size`; the scan is
    /// then latency-bound), or the few-waves or many-waves one (1-byte elements), loaded on
    /// first use (not allowed inside a capture); else the default, loaded on first use too.
    /// All share the tile state: its layout does not depend on the tile size.
    pub(crate) fn variant_for(
        &mut self,
        n: u64,
        capture: Capture,
    ) -> Result<(InputSize, Arc<LoadedScan>, u64), ScanError> {
        let class = self.settled_input_size(n, capture)?;
        if let Some(sized) = self.shapes.get_mut(class) {
            sized.load(&self.gpu, n, capture)?;
        }
        // Built, the mid-size shape may fit fewer blocks per SM than it asked for (a register
        // cap loosened where ptxas spilled): inputs past one wave of those take the default, as
        // do those whose grid a resident-tiles shape cannot launch at once.
        let class = self.settled_input_size(n, capture)?;
        if let Some((loaded, tile)) = self.shapes.get_mut(class).and_then(|s| s.holding(n)) {
            return Ok((class, loaded, tile));
        }
        let (loaded, tile) = self.default_kernel(n, capture)?;
        if !holds(&loaded, tile, n) {
            return Err(ScanError::ResidentGrid {
                blocks: n.div_ceil(tile),
                resident: loaded.resident_blocks,
            });
        }
        Ok((InputSize::Large, loaded, tile))
    }

    /// [`Self::input_size`] of `n`, with the default kernel built first where the class
    /// depends on it: the tiny, small and mid-size classes do not, every later one does
    /// (whether the few- and many-waves shapes serve depends on the default's cap as built), so
    /// an input up to the mid-size class never builds the default. Not inside a capture
    /// (`prepare` builds it).
    ///
    /// The default is built side by side with the shape that would serve `n` were the default
    /// to give up a block (the few- or many-waves shape of 1-byte elements; `build_side_by_side`):
    /// one after another their register ladders added up (u8 max at 2^28, empty cache: about
    /// 5 s for the default, then 1.3-1.5 s for the many-waves shape; H200 host, BENCHMARKS.md,
    /// session 49). Where the default keeps its cap, that shape was compiled for nothing,
    /// beside it.
    fn settled_input_size(&mut self, n: u64, capture: Capture) -> Result<InputSize, ScanError> {
        let class = self.input_size(n);
        if matches!(class, InputSize::Tiny | InputSize::Small | InputSize::Mid)
            || self.default_built().is_some()
        {
            return Ok(class);
        }
        if capture != Capture::Active {
            self.build_side_by_side(&[n]);
        }
        self.default_kernel(n, capture)?;
        Ok(self.input_size(n))
    }

    /// The twin of `aligned` (the kernel of size class `class`) for buffers off a vector
    /// boundary, with its tile, where `aligned`'s register ladder gave up a path of such
    /// buffers and the twin kept them without spilling; loaded on first use. Inside a capture
    /// only a twin loaded before (`prepare`) serves; `None` leaves `aligned` to scan them
    /// (correctly, item by item or with shifted vectors where it has them).
    ///
    /// The ladder gives those paths up first because most buffers are aligned and each rung
    /// costs them; the twin loosens the cap instead. H200, both buffers at +1, device time
    /// (BENCHMARKS.md, session 47): exclusive u8 max at 2^25 0.074-0.077 -> 0.029-0.030 ms, u8
    /// xor at 2^26 0.055 -> 0.045 and at 2^28 0.173 -> 0.153 (the aligned scan's 0.152),
    /// reversed u8 xor at 2^26 0.152 -> 0.047.
    fn unaligned_twin(
        &mut self,
        class: InputSize,
        aligned: &LoadedScan,
        n: u64,
        capture: Capture,
    ) -> Result<Option<(Arc<LoadedScan>, u64)>, ScanError> {
        let twin = self.twins.get_mut(class);
        if let SizedVariant::NotLoaded(key) = twin {
            if capture == Capture::Active
                || !key
                    .policy
                    .unaligned_paths_given_up(&aligned.generated.policy)
            {
                return Ok(None);
            }
        }
        twin.load(&self.gpu, n, capture)?;
        Ok(twin
            .holding(n)
            .filter(|(loaded, _)| loaded.local_bytes == 0))
    }

    /// The kernel for a scan of `n` elements from or into buffers off a vector boundary, where
    /// it is not `aligned` (the kernel of size class `class`, `variant_for`'s): `aligned`'s twin
    /// (`unaligned_twin`), or, where that twin is a mid-size one that fits fewer blocks per SM
    /// than the shape asked for and `n` is past one wave of them, the shape after the mid-size
    /// one (or its twin), as `variant_for` chooses for a mid-size kernel built so. (H200, u8
    /// products at 2^24 and +1: the mid-size twin at 3 blocks of 512 threads, 1.3 waves, took
    /// 0.0187-0.0189 ms; the default tile at 5 blocks, which keeps the lead, 0.0144.)
    fn unaligned_kernel(
        &mut self,
        class: InputSize,
        aligned: &LoadedScan,
        n: u64,
        capture: Capture,
    ) -> Result<Option<(InputSize, Arc<LoadedScan>, u64)>, ScanError> {
        let Some((twin, tile)) = self.unaligned_twin(class, aligned, n, capture)? else {
            return Ok(None);
        };
        let blocks = twin.generated.policy.min_blocks_per_sm;
        let next = self.input_size_at(n, blocks);
        if class != InputSize::Mid || next == InputSize::Mid {
            return Ok(Some((class, twin, tile)));
        }
        // Past the mid-size class the default's cap as built decides (`settled_input_size`).
        let next = match self.default_built() {
            Some(_) => next,
            None if capture == Capture::Active => return Ok(Some((class, twin, tile))),
            None => {
                self.default_kernel(n, capture)?;
                self.input_size_at(n, blocks)
            }
        };
        let (loaded, next_tile) = match self.shapes.get_mut(next) {
            None => self.default_kernel(n, capture)?,
            Some(sized) => {
                if capture != Capture::Active {
                    sized.load(&self.gpu, n, capture)?;
                }
                // Not loaded inside a capture (`prepare` did not reach it): the twin serves.
                match sized.holding(n) {
                    Some(held) => held,
                    None => return Ok(Some((class, twin, tile))),
                }
            }
        };
        Ok(Some(
            match self.unaligned_twin(next, &loaded, n, capture)? {
                Some((next_twin, tile)) => (next, next_twin, tile),
                None => (next, loaded, next_tile),
            },
        ))
    }

    /// `ready` again with the kernel for buffers off a vector boundary (`unaligned_kernel`:
    /// the twin of `ready`'s kernel, or the next size class's) where `inputs` or `output` is off
    /// the vectors `ready`'s kernel moves and another kernel serves them; its scratch in place
    /// as `ready` would. `None`: `ready` as it is.
    fn for_buffers(
        &mut self,
        stream: &Arc<CudaStream>,
        capture: Capture,
        ready: &ReadyLaunch,
        inputs: &[CUdeviceptr],
        output: CUdeviceptr,
    ) -> Result<Option<ReadyLaunch>, ScanError> {
        let policy = &ready.loaded.generated.policy;
        let vector = u64::from(policy.vector_items(self.elem_bytes)) * self.elem_bytes as u64;
        let off = |ptr: &CUdeviceptr| !ptr.is_multiple_of(vector);
        if ready.columns.is_some() || vector <= 1 || !(inputs.iter().any(off) || off(&output)) {
            return Ok(None);
        }
        let Some((class, loaded, tile)) =
            self.unaligned_kernel(ready.class, &ready.loaded, ready.n, capture)?
        else {
            return Ok(None);
        };
        let plan = launch_plan::plan(self.algorithm(), ready.n, tile)?;
        let needs = self.needs(&loaded, &plan);
        if capture == Capture::Active {
            // Sized by `prepare` for the twin too; where it was not, the kernel it sized serves.
            if self.workspace.shortfall(needs).is_some() {
                return Ok(None);
            }
        } else {
            self.workspace.reserve(stream, needs)?;
        }
        Ok(Some(ReadyLaunch {
            loaded,
            plan,
            columns: None,
            class,
            n: ready.n,
        }))
    }

    /// The policy of the kernel a scan of `n` elements runs (`TuningPolicy` as built: its
    /// register ladder climbed), from or into buffers off a vector boundary where `unaligned`;
    /// loaded if it is not yet.
    pub(crate) fn policy_for(
        &mut self,
        n: u64,
        unaligned: bool,
    ) -> Result<TuningPolicy, ScanError> {
        if n == 0 {
            return self.policy();
        }
        let (class, loaded, _) = self.variant_for(n, Capture::None)?;
        let twin = match unaligned {
            true => self.unaligned_kernel(class, &loaded, n, Capture::None)?,
            false => None,
        };
        Ok(twin.map_or(loaded, |(_, twin, _)| twin).generated.policy)
    }

    /// The size class of an input of `n` elements, by the default shape's tiles on this GPU.
    fn input_size(&self, n: u64) -> InputSize {
        self.input_size_at(n, self.mid_blocks_per_sm())
    }

    /// [`Self::input_size`] where the mid-size shape fits `mid_blocks_per_sm`.
    fn input_size_at(&self, n: u64, mid_blocks_per_sm: u32) -> InputSize {
        self.input_size_with(n, mid_blocks_per_sm, self.sized_shapes())
    }

    /// [`Self::input_size_at`] as if this scan had `shapes`.
    fn input_size_with(&self, n: u64, mid_blocks_per_sm: u32, shapes: SizedShapes) -> InputSize {
        TuningPolicy::input_size(
            n.div_ceil(self.tile),
            self.gpu.sm_count(),
            mid_blocks_per_sm,
            shapes,
        )
    }

    /// Which smaller shapes this scan has.
    fn sized_shapes(&self) -> SizedShapes {
        SizedShapes {
            tiny: self.shapes.tiny.exists(),
            small: self.shapes.small.exists(),
            mid: self.shapes.mid.exists(),
            few_waves: self.few_waves_takes_a_block(),
            many_waves: self.many_waves_adds_a_block(),
            fused: self.key.transform.is_some(),
        }
    }

    /// Whether the default kernel as built holds more blocks per SM than the few-waves shape
    /// asks for. That shape only takes a block away from the default (`TuningPolicy::
    /// for_few_waves_input`); where the register ladder built the default at its cap already
    /// (byte max, min and products), the default serves those inputs: on an H100 at 2^25 the
    /// two measured 0.806-0.824 of a copy either way, the default's side the higher
    /// (BENCHMARKS.md, session 37).
    fn few_waves_takes_a_block(&self) -> bool {
        self.blocks_beside_default(&self.shapes.few_waves)
            .is_some_and(|(few, default)| default > few)
    }

    /// Whether the many-waves shape holds more blocks per SM than the default kernel as built
    /// (`TuningPolicy::for_many_waves_input`). It reads its run back to keep the default's
    /// first cap where the default gave a block up (byte max, min and products); where the
    /// default kept it (byte sums and xor) or the shape gave it up too, the default serves.
    fn many_waves_adds_a_block(&self) -> bool {
        self.blocks_beside_default(&self.shapes.many_waves)
            .is_some_and(|(many, default)| many > default)
    }

    /// Blocks per SM of `variant` and of the default kernel (`SizedVariant::blocks_per_sm`: as
    /// built, or before it is built the cap it asks for); `None`: no such variant.
    fn blocks_beside_default(&self, variant: &SizedVariant) -> Option<(u32, u32)> {
        let default = self.default.blocks_per_sm()?;
        variant.blocks_per_sm().map(|blocks| (blocks, default))
    }

    /// Blocks per SM of the mid-size shape: its register cap as built, or before it is built
    /// the cap it asks for.
    fn mid_blocks_per_sm(&self) -> u32 {
        self.shapes.mid.blocks_per_sm().unwrap_or(1)
    }

    /// The largest input each extra variant scans, as far as is known before it is built (so
    /// `prepare` can load every variant an input up to its size may use). The many-waves
    /// variant has no largest: it serves the longest inputs, so `prepare(n)` loads it through
    /// `n` itself.
    pub(crate) fn largest_sized_inputs(&self) -> Vec<u64> {
        let limits = TuningPolicy::input_size_limits(
            self.gpu.sm_count(),
            self.mid_blocks_per_sm(),
            self.sized_shapes(),
        );
        [limits.tiny, limits.small, limits.mid, limits.few_waves]
            .into_iter()
            .flatten()
            .map(|tiles| tiles * self.tile)
            .collect()
    }

    /// Scratch `plan` needs with `loaded`'s kernels.
    pub(crate) fn needs(&self, loaded: &LoadedScan, plan: &LaunchPlan) -> Needs {
        let elem = self.elem_bytes as u64;
        Needs {
            level_bytes: plan.level_elems() * elem,
            tile_state_bytes: if plan.single_pass_tiles > 0 {
                // An output off the vectors its tiles sit on can take one tile more than the
                // plan's (`single_pass_grid` below).
                let extra = u64::from(loaded.generated.aligned_tile_bytes > 0);
                abi::tile_state_bytes(&loaded.generated, plan.single_pass_tiles + extra)
            } else {
                0
            },
        }
    }

    /// Bytes of one element.
    pub(crate) fn elem_bytes(&self) -> usize {
        self.elem_bytes
    }
}
