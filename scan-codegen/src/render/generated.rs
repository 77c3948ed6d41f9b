//! What generation returns: the rendered source with what the host needs to launch it
//! ([`GeneratedScan`]), the error when it cannot ([`CodegenError`]), and the snapshot helpers.

use super::*;

/// Why a kernel could not be generated; each variant carries the reason in words.
#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// The tuning policy cannot build or launch for this algorithm and element (block size,
    /// items per thread, shared memory over the static limit, ...).
    #[error("invalid tuning policy: {0}")]
    InvalidPolicy(String),
    /// The [`OpSpec`] is malformed: an empty or multi-line name, operand names that are not
    /// distinct C identifiers, ...
    #[error("invalid operator: {0}")]
    InvalidOp(String),
    /// The algorithm cannot run the [`ScanVariant`] (segmented scans are single-pass only).
    #[error("unsupported scan variant: {0}")]
    InvalidVariant(String),
    /// Tera failed to load or render the kernel templates (a bug in scangen, not in the input).
    #[error("template rendering failed: {0}")]
    Template(String),
}

/// One rendered, self-contained CUDA source plus what the host needs to launch it.
#[derive(Clone, Debug)]
pub struct GeneratedScan {
    /// The complete CUDA C++ source, ready for NVRTC (no includes needed).
    pub source: String,
    /// The algorithm the source implements: which kernels it defines and how they launch.
    pub algorithm: Algorithm,
    /// Inclusive or exclusive.
    pub mode: ScanMode,
    /// The policy the source was built with, after generation's adjustments (the L2 prefetch
    /// is turned off for column, strided-row and resident-tile scans; column scans' tiles are
    /// never resident): launch with its block size, cooperatively where `resident_tiles`.
    pub policy: TuningPolicy,
    /// Direction and segment rule ([`ScanVariant::FLAT`] for a plain forward scan).
    pub variant: ScanVariant,
    /// Size of the element the scan reads and writes (the operator's element).
    pub elem_size: usize,
    /// Alignment in bytes of the operator's element.
    pub elem_align: usize,
    /// Size of the element the block scan and the look-back combine: `elem_size`, or for a
    /// segmented scan the `(value, head)` pair ([`layout::segmented_size`]). Tile-state slots
    /// are sized by it.
    pub scanned_size: usize,
    /// The fused lift and project ([`generate_fused`]): the kernels read `inputs.len()` typed
    /// input arrays and write the output type in place of `in` and `out`. `None`: plain.
    pub transform: Option<TransformSpec>,
    /// Bytes of dynamic shared memory to launch the single-pass kernel with: 0 when its
    /// storage is static (48 KiB or less). Above 48 KiB the launcher must first raise the
    /// function's `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` to this (and the device's
    /// opt-in limit must allow it). The kernel `static_assert`s that its storage fits.
    pub dynamic_shared_bytes: u32,
    /// Bytes of the vectors the tiles are cut to sit on (policy `lead_tiles`), in the
    /// single-pass output or the hierarchy's input; 0 where tiles start at multiples of the
    /// tile (and a suffix scan's where they always did). A buffer off such a vector boundary
    /// can take one tile more than `ceil(n / tile)`: [`GeneratedScan::single_pass_tiles`].
    pub aligned_tile_bytes: u32,
}

impl GeneratedScan {
    /// `scangen_single_pass(const V* in, V* out, unsigned long long n, void* tile_state, unsigned long long tile_state_tiles, const V* init, V* total, <segment parameters>)`
    /// (the segment parameters of each variant: [`GeneratedScan::segment_parameters`]).
    pub const SINGLE_PASS_KERNEL: &'static str = "scangen_single_pass";
    /// `scangen_reduce_tiles(const T* in, T* tile_totals, unsigned long long n)`
    pub const REDUCE_TILES_KERNEL: &'static str = "scangen_reduce_tiles";
    /// `scangen_reduce_spine(const T* in, T* tile_totals, unsigned long long n)`: the same for
    /// the levels of tile totals, which are in scan order already (forward, contiguous, `T`).
    pub const REDUCE_SPINE_KERNEL: &'static str = "scangen_reduce_spine";
    /// `scangen_scan_tiles(const T* in, T* out, unsigned long long n, const T* tile_prefixes, const T* init, T* total)`
    pub const SCAN_TILES_KERNEL: &'static str = "scangen_scan_tiles";
    /// `scangen_scan_spine(const T* in, T* out, unsigned long long n, const T* tile_prefixes)`
    pub const SCAN_SPINE_KERNEL: &'static str = "scangen_scan_spine";

    /// Elements per tile (one block's share).
    pub fn tile_items(&self) -> u64 {
        u64::from(self.policy.tile_items())
    }

    /// Tiles (= blocks) for `n` elements, `ceil(n / tile)`: the hierarchy's grids, and a
    /// single-pass grid of buffers on the vectors its tiles sit on.
    pub fn num_tiles(&self, n: u64) -> u64 {
        n.div_ceil(self.tile_items())
    }

    /// The single-pass grid for `n` elements written to the output at device address `out`
    /// (kernel ABI): `ceil((n + s) / tile)`, where `s` is the first tile's shortfall. Where
    /// tiles sit on the output's vectors (`aligned_tile_bytes`) and the output starts `lead`
    /// elements past one, `s` takes the lead (prefix scans: `lead`; suffix scans: what puts
    /// `n + lead + s` on a whole tile), which can be one tile more than `ceil(n / tile)`. The
    /// kernel cuts its tiles so only where its grid has that tile: a grid of `ceil(n / tile)`
    /// is always valid, and leaves that buffer's tiles off its vectors.
    pub fn single_pass_tiles(&self, n: u64, out: u64) -> u64 {
        let bytes = u64::from(self.aligned_tile_bytes);
        if bytes == 0 || n == 0 {
            return self.num_tiles(n);
        }
        let tile = self.tile_items();
        let lead = out % bytes / self.elem_size as u64;
        let shortfall = match self.variant.direction {
            _ if lead == 0 => 0,
            Direction::Forward => lead,
            Direction::Reverse => (tile - (n + lead) % tile) % tile,
        };
        (n + shortfall).div_ceil(tile)
    }

    /// The most single-pass tiles a launch of `n` elements takes whatever its output's address
    /// ([`GeneratedScan::single_pass_tiles`]): what the tile state is sized for.
    pub fn max_single_pass_tiles(&self, n: u64) -> u64 {
        let tiles = self.num_tiles(n);
        if self.aligned_tile_bytes == 0 || n == 0 {
            tiles
        } else {
            tiles + 1
        }
    }

    /// Bytes of single-pass tile state for `num_tiles` tiles; 0 for the hierarchical algorithms,
    /// which use no tile state. Zero it once when allocating it (see ARCHITECTURE.md).
    ///
    /// Layout (offsets from the start, which must be 128-byte aligned):
    /// * `[0, 128)`: header: the launch word (`u64` at 0: previous launch's epoch << 32 | tiles
    ///   claimed), the sweep cursor (`u64` at 8), the rest unused.
    /// * at 128, [`layout::elem_words`] `u64`s per tile slot (one per 32-bit word of the
    ///   element): low half the status word (`epoch << 2 | state`, state 1 = aggregate,
    ///   2 = inclusive), high half that 32-bit word of the value.
    ///
    /// Only the length depends on `num_tiles`: a state allocated for more tiles can be reused
    /// for any smaller launch (zeroed once, never cleared by the host between launches; pass
    /// its slot count, [`GeneratedScan::tile_state_slots`], as `tile_state_tiles`).
    pub fn tile_state_bytes(&self, num_tiles: u64) -> u64 {
        match self.algorithm {
            Algorithm::SinglePass => layout::tile_state_bytes(self.scanned_size, num_tiles),
            _ => 0,
        }
    }

    /// Tile slots in a single-pass tile state of `bytes` bytes: the kernel's `tile_state_tiles`
    /// argument. 0 for the hierarchical algorithms.
    pub fn tile_state_slots(&self, bytes: u64) -> u64 {
        match self.algorithm {
            Algorithm::SinglePass => layout::tile_state_slots(self.scanned_size, bytes),
            _ => 0,
        }
    }

    /// Input arrays the scanning kernels (and `scangen_reduce_tiles`) take where a plain scan
    /// takes `in`: 1, or the fused transform's input count.
    pub fn input_arrays(&self) -> usize {
        self.transform.as_ref().map_or(1, |t| t.inputs.len())
    }

    /// The parameters the variant appends to `scangen_single_pass`, as C (empty for an
    /// unsegmented scan).
    pub fn segment_parameters(&self) -> &'static str {
        segment_parameters(self.variant.segments).0
    }

    /// The kernels this source defines.
    pub fn kernel_names(&self) -> &'static [&'static str] {
        match self.algorithm {
            Algorithm::SinglePass => &[Self::SINGLE_PASS_KERNEL],
            _ => &[
                Self::REDUCE_TILES_KERNEL,
                Self::REDUCE_SPINE_KERNEL,
                Self::SCAN_TILES_KERNEL,
                Self::SCAN_SPINE_KERNEL,
            ],
        }
    }

    /// Hierarchical plan: element counts of levels 1..=k (tile totals of level 0, of level 1,
    /// ...), stopping at the first level that fits in one tile. Empty when `n` fits in one tile.
    pub fn spine_levels(&self, n: u64) -> Vec<u64> {
        let t = self.tile_items();
        let mut levels = Vec::new();
        let mut m = n;
        while m > t {
            m = m.div_ceil(t);
            levels.push(m);
        }
        levels
    }
}

/// A generated source as its snapshot shows it: the Rust-semantics helpers, the same in every
/// kernel and tested on their own, are cut out (between the markers the prelude writes), so a
/// change there does not touch every snapshot.
pub fn snapshot_source(source: &str) -> String {
    const BEGIN: &str = "// ==== begin templates/rust_semantics.cu.tera ====\n";
    const END: &str = "// ==== end templates/rust_semantics.cu.tera ====\n";
    let start = source.find(BEGIN).expect("begin marker") + BEGIN.len();
    let end = source.find(END).expect("end marker");
    format!(
        "{}// (elided in snapshots)\n{}",
        &source[..start],
        &source[end..]
    )
}

/// `<op>__<type>__<algo>__<mode>`, e.g. `max__i32__single-pass__inclusive`: the name of a
/// snapshot and of `scangen emit` output files.
pub fn snapshot_name(
    op_name: &str,
    type_name: &str,
    algorithm: Algorithm,
    mode: ScanMode,
) -> String {
    format!(
        "{op_name}__{type_name}__{}__{}",
        algorithm.name(),
        mode.name()
    )
}
