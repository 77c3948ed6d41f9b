//! Template rendering: [`generate`] fills the kernel templates of `scan-codegen/templates/` for one operator.

use crate::layout;
use crate::variant::{Direction, ScanVariant, Segments};
use crate::{Algorithm, ScanMode, TuningPolicy};
use scan_core::{ElementType, OpSpec, TransformSpec, WordForm};
use std::sync::OnceLock;

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

const TEMPLATES: [(&str, &str); 17] = [
    ("rust_semantics.cu.tera", scan_core::RUST_SEMANTICS_CU),
    (
        "prelude.cu.tera",
        include_str!("../templates/prelude.cu.tera"),
    ),
    (
        "warp_scan.cu.tera",
        include_str!("../templates/warp_scan.cu.tera"),
    ),
    (
        "block_scan_kogge_stone.cu.tera",
        include_str!("../templates/block_scan_kogge_stone.cu.tera"),
    ),
    (
        "block_scan_blelloch.cu.tera",
        include_str!("../templates/block_scan_blelloch.cu.tera"),
    ),
    ("tile.cu.tera", include_str!("../templates/tile.cu.tera")),
    (
        "tile_words.cu.tera",
        include_str!("../templates/tile_words.cu.tera"),
    ),
    (
        "tile_vectors.cu.tera",
        include_str!("../templates/tile_vectors.cu.tera"),
    ),
    (
        "tile_layout.cu.tera",
        include_str!("../templates/tile_layout.cu.tera"),
    ),
    (
        "tile_shifted.cu.tera",
        include_str!("../templates/tile_shifted.cu.tera"),
    ),
    ("fused.cu.tera", include_str!("../templates/fused.cu.tera")),
    (
        "segments.cu.tera",
        include_str!("../templates/segments.cu.tera"),
    ),
    (
        "look_back.cu.tera",
        include_str!("../templates/look_back.cu.tera"),
    ),
    (
        "single_pass.cu.tera",
        include_str!("../templates/single_pass.cu.tera"),
    ),
    (
        "hierarchical.cu.tera",
        include_str!("../templates/hierarchical.cu.tera"),
    ),
    (
        "columns.cu.tera",
        include_str!("../templates/columns.cu.tera"),
    ),
    ("scan.cu.tera", include_str!("../templates/scan.cu.tera")),
];

fn engine() -> Result<&'static tera::Tera, CodegenError> {
    static ENGINE: OnceLock<Result<tera::Tera, String>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut t = tera::Tera::default();
            t.autoescape_on(vec![]);
            t.add_raw_templates(TEMPLATES.to_vec())
                .map_err(|e| error_chain(&e))?;
            Ok(t)
        })
        .as_ref()
        .map_err(|e| CodegenError::Template(e.clone()))
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

#[derive(serde::Serialize)]
struct Field {
    ty: String,
    name: String,
}

fn is_c_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Indents every line of a function body and drops trailing whitespace.
fn indent_body(body: &str) -> String {
    body.trim()
        .lines()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                format!("    {}", l.trim_end())
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn validate_op(op: &OpSpec) -> Result<(), CodegenError> {
    let bad = |m: String| Err(CodegenError::InvalidOp(m));
    for (what, name) in [
        ("operator name", op.name.as_str()),
        ("lhs parameter", &op.lhs),
        ("rhs parameter", &op.rhs),
    ] {
        if name.is_empty() || name.contains(['\n', '\r']) {
            return bad(format!("{what} `{name}` must be a non-empty single line"));
        }
    }
    for (what, name) in [("lhs parameter", &op.lhs), ("rhs parameter", &op.rhs)] {
        if !is_c_identifier(name) {
            return bad(format!("{what} `{name}` is not a C identifier"));
        }
    }
    if op.lhs == op.rhs {
        return bad(format!(
            "lhs and rhs parameters are both named `{}`",
            op.lhs
        ));
    }
    if let ElementType::Struct(s) = &op.element {
        if !is_c_identifier(&s.name) {
            return bad(format!("struct name `{}` is not a C identifier", s.name));
        }
        if s.fields.is_empty() {
            return bad(format!("struct `{}` has no fields", s.name));
        }
        for f in &s.fields {
            if !is_c_identifier(&f.name) {
                return bad(format!(
                    "field `{}` of `{}` is not a C identifier",
                    f.name, s.name
                ));
            }
        }
        if s.align == 0 || !s.align.is_power_of_two() || s.size % s.align != 0 {
            return bad(format!(
                "struct `{}` has an impossible layout (size {}, align {})",
                s.name, s.size, s.align
            ));
        }
    }
    Ok(())
}

/// Renders the complete CUDA source for `op` scanned by `algorithm` in `mode` (a flat forward
/// scan).
pub fn generate(
    op: &OpSpec,
    algorithm: Algorithm,
    mode: ScanMode,
    policy: TuningPolicy,
) -> Result<GeneratedScan, CodegenError> {
    generate_variant(op, algorithm, mode, ScanVariant::FLAT, policy)
}

/// Most input arrays a fused transform may read (kernel parameters, one register each).
pub const MAX_TRANSFORM_INPUTS: usize = 8;

fn validate_transform(
    op: &OpSpec,
    t: &TransformSpec,
    variant: ScanVariant,
) -> Result<(), CodegenError> {
    let bad = |m: String| Err(CodegenError::InvalidOp(m));
    if t.inputs.is_empty() || t.inputs.len() > MAX_TRANSFORM_INPUTS {
        return bad(format!(
            "a fused lift reads 1 to {MAX_TRANSFORM_INPUTS} input arrays, not {}",
            t.inputs.len()
        ));
    }
    if t.lift_params.len() != t.inputs.len() + 1 {
        return bad(format!(
            "lift has {} parameters for {} inputs and the index",
            t.lift_params.len(),
            t.inputs.len()
        ));
    }
    let mut names: Vec<&str> = Vec::new();
    for name in t.lift_params.iter().chain([&t.project_param]) {
        if !is_c_identifier(name) {
            return bad(format!(
                "transform parameter `{name}` is not a C identifier"
            ));
        }
    }
    for name in &t.lift_params {
        if names.contains(&name.as_str()) {
            return bad(format!("lift has two parameters named `{name}`"));
        }
        names.push(name);
    }
    // Input and output arrays hold primitives or the element itself: those are the types the
    // generated source declares.
    for (what, ty) in t
        .inputs
        .iter()
        .map(|i| ("input", i))
        .chain([("output", &t.output)])
    {
        if matches!(ty, ElementType::Struct(_)) && *ty != op.element {
            return bad(format!(
                "a fused {what} array holds a primitive or the element `{}`, not `{}`",
                op.element.c_name(),
                ty.c_name()
            ));
        }
    }
    if variant.segments == Segments::Columns {
        return Err(CodegenError::InvalidVariant(
            "column scans cannot fuse lift and project yet: their kernel stages rows of a strip, not the tile loads the fused reads plug into".into(),
        ));
    }
    Ok(())
}

/// Renders the fused scan of `op` with `transform`: the kernels read the transform's input
/// arrays (lifting each position with its index as they load a tile) and write its output type
/// (projecting as they store): one read of the inputs, one write of the outputs. Every
/// algorithm and variant but column scans ([`CodegenError::InvalidVariant`]). Full tiles use
/// scalar (warp-coalesced) accesses: no vectors and no L2 prefetch, which assume one array of
/// elements.
pub fn generate_fused(
    op: &OpSpec,
    transform: &TransformSpec,
    algorithm: Algorithm,
    mode: ScanMode,
    variant: ScanVariant,
    policy: TuningPolicy,
) -> Result<GeneratedScan, CodegenError> {
    validate_op(op)?;
    validate_transform(op, transform, variant)?;
    render_scan(op, Some(transform), algorithm, mode, variant, policy)
}

/// The C type of a fused array's values.
fn array_c_type(op: &OpSpec, ty: &ElementType) -> String {
    if *ty == op.element {
        "V".into()
    } else {
        ty.c_name().to_string()
    }
}

/// The kernel parameters a segment rule adds (C), and the `ScanSegments` initializer that
/// reads them.
fn segment_parameters(segments: Segments) -> (&'static str, &'static str) {
    match segments {
        Segments::None => ("", ""),
        Segments::Flags => (", const u8* flags", "{flags}"),
        Segments::Keys(_) => (", const K* keys", "{keys}"),
        Segments::Offsets(_) => (
            ", const O* offsets, unsigned long long num_offsets",
            "{offsets, num_offsets}",
        ),
        Segments::Rows { .. } => (
            ", unsigned long long cols, unsigned long long row_stride",
            "{cols, ~0ull / cols}",
        ),
        Segments::Columns => (
            ", unsigned long long cols, unsigned long long row_stride, unsigned int tile_cols_log2",
            "",
        ),
    }
}

/// Renders the complete CUDA source for `op` scanned by `algorithm` in `mode`, in the shape
/// `variant` (direction, segments).
pub fn generate_variant(
    op: &OpSpec,
    algorithm: Algorithm,
    mode: ScanMode,
    variant: ScanVariant,
    policy: TuningPolicy,
) -> Result<GeneratedScan, CodegenError> {
    validate_op(op)?;
    render_scan(op, None, algorithm, mode, variant, policy)
}

fn render_scan(
    op: &OpSpec,
    transform: Option<&TransformSpec>,
    algorithm: Algorithm,
    mode: ScanMode,
    variant: ScanVariant,
    policy: TuningPolicy,
) -> Result<GeneratedScan, CodegenError> {
    let elem_size = op.element.size();
    let elem_align = op.element.align();
    let mut policy = policy;
    // A plain scan whose policy stages its items keeps them in its own transpose buffer
    // (tile.cu.tera, `items_in_tile`); the kernel and its ABI are the plain ones.
    let items_in_tile =
        transform.is_none() && stages_plain_items(&policy, algorithm, variant, elem_size);
    if transform.is_some() {
        // The fused exchange stages the arrays' own values, not elements: shared memory is
        // checked below, at the size it really takes.
        policy.validate_shape(elem_size)?;
    } else {
        policy.validate(algorithm, elem_size, elem_align)?;
    }
    variant
        .supported_by(algorithm)
        .map_err(CodegenError::InvalidVariant)?;
    let segmented = variant.segments.lifts_elements();
    let columns = variant.segments == Segments::Columns;
    if segmented || columns {
        // A segmented tile lifts its items into pairs as it folds them, and a column tile
        // folds a column's rows: one chain each.
        policy.thread_runs = 1;
    }
    let scanned_size = if segmented {
        layout::segmented_size(elem_size, elem_align)
    } else {
        elem_size
    };
    if transform.is_some() {
        // Fused reads and writes go through lift and project one element at a time (arrays of
        // other types than the element); the vector path assumes one array of elements. (The
        // L2 prefetch asks for each input array's share of a tile.)
        policy.vector_bytes = 1;
    }
    let strided = matches!(variant.segments, Segments::Rows { strided: true });
    if strided {
        // The L2 prefetch asks for a tile's bytes as one contiguous range; strided rows have none.
        policy.l2_prefetch_tiles = 0;
    }
    // Column tiles are always claimed (columns.cu.tera), so the host launches them as usual.
    policy.resident_tiles &= algorithm == Algorithm::SinglePass && !columns;
    if policy.resident_tiles {
        // Resident tiles are one wave: no later tile to prefetch for.
        policy.l2_prefetch_tiles = 0;
    }
    // Claimed single-pass tiles stagger their first wave's loads by the bytes a tile loads (a
    // fused tile loads its input arrays). Resident tiles are one wave; column tiles
    // (columns.cu.tera) claim chunks of strips.
    let first_wave_stagger_ns =
        if algorithm == Algorithm::SinglePass && !policy.resident_tiles && !columns {
            let loaded_bytes = transform.map_or(elem_size, |t| t.input_sizes().iter().sum());
            policy.first_wave_stagger_ns(u64::from(policy.tile_items()) * loaded_bytes as u64)
        } else {
            0
        };
    // A fused scan's exchange stages the input arrays, then the output, in the transpose
    // buffer, which is sized for them (fused.cu.tera). Without segments the inputs stay staged
    // from the tile's load to its finish (no lifted items in registers).
    let staging = transform.map(|t| {
        layout::fused_staging(
            policy.items_per_thread,
            &t.input_sizes(),
            t.output.size(),
            !segmented,
        )
    });
    let plain_tile_elems = layout::smem_tile_elems(&policy, elem_size);
    let tile_elems = staging.as_ref().map_or(plain_tile_elems, |staging| {
        layout::fused_smem_tile_elems(&policy, algorithm, elem_size, staging.warp_bytes)
    });
    let smem = if columns {
        layout::column_shared_bytes(&policy, elem_size, elem_align)
    } else {
        layout::static_shared_bytes(&policy, algorithm, elem_size, elem_align)
            + layout::variant_shared_bytes(&policy, variant, elem_size, scanned_size)
            + u64::from(tile_elems) * elem_size as u64
            - u64::from(plain_tile_elems) * elem_size as u64
    };
    // Past the static limit the single-pass block's storage is dynamic shared memory; the
    // column kernel keeps its own static storage.
    let smem_limit = if columns {
        TuningPolicy::MAX_STATIC_SHARED_BYTES
    } else {
        TuningPolicy::max_shared_bytes(algorithm)
    };
    if smem > smem_limit {
        return Err(CodegenError::InvalidPolicy(format!(
            "a {algorithm} block{} needs {smem} bytes of shared memory with {} threads x {} items; at most {smem_limit} fit: use fewer items per thread",
            if variant.segments.is_segmented() {
                format!(" of the {} scan", variant.segments)
            } else {
                String::new()
            },
            policy.block_threads,
            policy.items_per_thread,
        )));
    }
    let dynamic_shared_bytes = if smem > TuningPolicy::MAX_STATIC_SHARED_BYTES {
        smem.div_ceil(16) as u32 * 16
    } else {
        0
    };
    if segmented && policy.items_per_thread > 64 {
        return Err(CodegenError::InvalidPolicy(format!(
            "items_per_thread = {} must be at most 64 for a segmented scan (one head bit per item in a 64-bit mask)",
            policy.items_per_thread
        )));
    }

    let mut ctx = tera::Context::new();
    ctx.insert("op_name", &op.name);
    ctx.insert("elem_name", op.element.c_name());
    ctx.insert("elem_size", &elem_size);
    ctx.insert("elem_align", &elem_align);
    let (is_struct, fields) = match &op.element {
        ElementType::Prim(_) => (false, Vec::new()),
        ElementType::Struct(s) => (
            true,
            s.fields
                .iter()
                .map(|f| Field {
                    ty: f.ty.c_type(),
                    name: f.name.clone(),
                })
                .collect(),
        ),
    };
    // Structs nested in the element (by its fields, or by arrays), declared before it.
    let nested: Vec<String> = match &op.element {
        ElementType::Prim(_) => Vec::new(),
        ElementType::Struct(s) => s
            .nested_structs()
            .iter()
            .map(|n| n.c_declaration())
            .collect(),
    };
    ctx.insert("nested_structs", &nested);
    ctx.insert("is_struct", &is_struct);
    ctx.insert("fields", &fields);
    ctx.insert("lhs", &op.lhs);
    ctx.insert("rhs", &op.rhs);
    ctx.insert("combine_body", &indent_body(&op.combine_body));
    ctx.insert("identity_body", &indent_body(&op.identity_body));

    ctx.insert("algorithm", algorithm.name());
    ctx.insert("mode", mode.name());
    ctx.insert("single_pass", &(algorithm == Algorithm::SinglePass));
    ctx.insert("blelloch", &(algorithm == Algorithm::Blelloch));
    ctx.insert("exclusive", &(mode == ScanMode::Exclusive));

    ctx.insert("segmented", &segmented);
    ctx.insert("columns", &columns);
    ctx.insert("column_window", &layout::column_look_back_window(elem_size));
    ctx.insert("segments", variant.segments.kind_name());
    ctx.insert("reverse", &(variant.direction == Direction::Reverse));
    ctx.insert("strided", &strided);
    let (params, init) = segment_parameters(variant.segments);
    let params = match variant.segments {
        Segments::Keys(k) => params.replace('K', k.name()),
        Segments::Offsets(w) => params.replace("O*", &format!("{}*", w.prim().name())),
        _ => params.to_string(),
    };
    ctx.insert("segment_params", &params);
    ctx.insert("segment_init", init);
    if let Segments::Keys(k) = variant.segments {
        ctx.insert("key_type", k.name());
    }
    if let Segments::Offsets(w) = variant.segments {
        ctx.insert("offset_type", w.prim().name());
        ctx.insert("offset_reads", &policy.offset_reads);
    }
    ctx.insert(
        "layout_args",
        if strided {
            "(n, cols, row_stride)"
        } else {
            "(n)"
        },
    );

    insert_io(
        &mut ctx,
        op,
        transform.zip(staging.as_ref()),
        policy.items_per_thread,
    );

    ctx.insert("block_threads", &policy.block_threads);
    ctx.insert("items_per_thread", &policy.items_per_thread);
    ctx.insert("min_blocks_per_sm", &policy.min_blocks_per_sm.max(1));
    ctx.insert("tile_items", &policy.tile_items());
    ctx.insert("dynamic_shared_bytes", &dynamic_shared_bytes);
    ctx.insert("thread_runs", &policy.thread_runs);
    ctx.insert("warp_scan_branches", &policy.warp_scan_branches);
    ctx.insert("warps", &(policy.block_threads / 32));
    ctx.insert("words", &layout::elem_words(scanned_size));

    let (pad_every, pad_elems) = layout::smem_padding(
        elem_size,
        policy.items_per_thread,
        policy.packed_access_bytes,
    );
    ctx.insert(
        "packed",
        &layout::packs_items(elem_size, policy.items_per_thread),
    );
    // Packed items of a standard integer monoid fold and scan a word at a time (words.rs).
    let plain_tile = !segmented && !columns && transform.is_none();
    let word_combine = crate::words::word_combine(op, &policy, plain_tile);
    // The tile's prefix joins the scanned items after the look-back (policy defer_tile_prefix):
    // plain single-pass tiles, except half-float sums, which would round prefix + (the tile's sum
    // so far) where the running sum rounds item by item.
    let deferred_prefix = policy.defer_tile_prefix
        && algorithm == Algorithm::SinglePass
        && plain_tile
        && word_combine
            .as_ref()
            .is_none_or(|w| w.form != WordForm::HalfAdd.name());
    // A guarded word form (half max/min) keeps the item-by-item thread functions too, under
    // other names, for the warps whose values its guard turns away.
    let item_path_suffix = match &word_combine {
        Some(w) if w.guarded => "_by_item",
        _ => "",
    };
    ctx.insert("item_path_suffix", item_path_suffix);
    ctx.insert("word_combine", &word_combine);
    ctx.insert("deferred_prefix", &deferred_prefix);
    let deferred_rereads_run = deferred_prefix
        && policy.deferred_scan_rereads_run
        && layout::packs_items(elem_size, policy.items_per_thread);
    ctx.insert("deferred_rereads_run", &deferred_rereads_run);
    // A run read back above the deferral's floor of blocks (1-byte tiles of many waves,
    // TuningPolicy::for_many_waves_input): the partial tile splits its run addresses as full
    // tiles do, or it alone spills (36 bytes for u8 max at 6 blocks per SM). At the floor (half
    // max/min, the mid-size shapes) it keeps the summed addresses: splitting them there let byte
    // max/min's mid-size shape read back where it had been seeded, and lose 0.01-0.05 of a copy
    // at 2^24 (BENCHMARKS.md, session 33).
    ctx.insert(
        "partial_runs_split",
        &(deferred_rereads_run && policy.min_blocks_per_sm > TuningPolicy::DEFERRED_MIN_BLOCKS),
    );
    ctx.insert("items_in_tile", &items_in_tile);
    ctx.insert("pad_every", &pad_every);
    ctx.insert("pad_elems", &pad_elems);
    ctx.insert("bank_row_bytes", &layout::BANK_ROW_BYTES);
    ctx.insert("smem_tile_elems", &tile_elems);
    // A fused single-pass kernel exchanges only the arrays' own values (fused.cu.tera checks
    // that its slices fit); every other kernel exchanges elements through the whole tile.
    ctx.insert(
        "tile_exchanges_elements",
        &(transform.is_none() || algorithm != Algorithm::SinglePass),
    );

    let leaves = layout::blelloch_leaves(policy.block_threads);
    ctx.insert("blelloch_leaves", &leaves);
    ctx.insert("blelloch_padded", &(leaves != policy.block_threads));
    ctx.insert(
        "blelloch_smem_elems",
        &layout::blelloch_smem_elems(policy.block_threads),
    );
    ctx.insert("log_num_banks", &layout::LOG_NUM_BANKS);

    ctx.insert("status_words", &layout::elem_words(scanned_size));
    ctx.insert("tile_state_header", &layout::TILE_STATE_HEADER_BYTES);
    ctx.insert("max_epoch", &policy.max_epoch);
    ctx.insert("look_back_sleep_ns", &TuningPolicy::LOOK_BACK_SLEEP_NS);
    ctx.insert("look_back_window", &policy.look_back_window);
    ctx.insert("resident_tiles", &policy.resident_tiles);
    ctx.insert("l2_prefetch_tiles", &policy.l2_prefetch_tiles);
    ctx.insert("first_wave_stagger_ns", &first_wave_stagger_ns);
    ctx.insert(
        "max_first_wave_stagger_ns",
        &TuningPolicy::MAX_FIRST_WAVE_STAGGER_NS,
    );
    ctx.insert(
        "max_l2_prefetch_tiles",
        &TuningPolicy::MAX_L2_PREFETCH_TILES,
    );
    let vector_items = policy.vector_items(elem_size);
    ctx.insert("vector_items", &vector_items);
    ctx.insert(
        "partial_tile_vectors",
        &(vector_items > 1 && policy.partial_tile_vectors),
    );
    // Segmented and column scans keep tiles at whole multiples of the tile (their rules place
    // them so), and strided rows have no vectors to sit on.
    let aligned_tiles =
        vector_items > 1 && policy.aligned_tiles && !segmented && !columns && !strided;
    ctx.insert("aligned_tiles", &aligned_tiles);
    // A fused scan's arrays are several, of other types: its tiles follow none of them.
    let lead_tiles = aligned_tiles && policy.lead_tiles && transform.is_none();
    ctx.insert("lead_tiles", &lead_tiles);
    let aligned_tile_bytes = if lead_tiles {
        vector_items * elem_size as u32
    } else {
        0
    };
    let element_vectors = policy.element_vectors(elem_size, elem_align);
    ctx.insert("element_vectors", &element_vectors);
    // (0: every item of a thread's.)
    let item_path_unroll = match policy.item_path_unroll {
        0 => policy.items_per_thread,
        unroll => unroll.min(policy.items_per_thread),
    };
    ctx.insert("item_path_unroll", &item_path_unroll);
    // Whole tiles of packed items off a vector boundary move shifted vectors (policy
    // shifted_tile_vectors): plain tiles, whose loads and stores are scan_load_tile's.
    ctx.insert(
        "shifted_tile_vectors",
        &(vector_items > 1
            && policy.shifted_tile_vectors
            && layout::packs_items(elem_size, policy.items_per_thread)
            && plain_tile),
    );
    ctx.insert("shifted_store_rereads", &policy.shifted_store_rereads);
    let vector_bytes = if element_vectors > 0 {
        elem_size / element_vectors as usize
    } else {
        vector_items as usize * elem_size
    };
    ctx.insert("vector_bytes", &vector_bytes);
    // The word a vector access moves (vector_items and element_vectors guarantee 4, 8 or 16
    // bytes when they apply).
    let vector_word = match vector_bytes {
        16 => "uint4",
        8 => "uint2",
        _ => "u32",
    };
    ctx.insert("vector_word", vector_word);

    let raw = engine()?
        .render("scan.cu.tera", &ctx)
        .map_err(|e| CodegenError::Template(error_chain(&e)))?;
    Ok(GeneratedScan {
        source: normalize(&raw),
        algorithm,
        mode,
        policy,
        variant,
        elem_size,
        elem_align,
        scanned_size,
        transform: transform.cloned(),
        dynamic_shared_bytes,
        aligned_tile_bytes,
    })
}

/// Whether a plain scan in `policy` keeps its items staged ([`TuningPolicy::stage_items`]):
/// single-pass tiles without segments (a segmented tile lifts its items into pairs as it
/// combines them, and a column tile has its own exchange) of unpacked elements (packed 1- and
/// 2-byte items take a quarter or half of the registers already, and fold whole words).
fn stages_plain_items(
    policy: &TuningPolicy,
    algorithm: Algorithm,
    variant: ScanVariant,
    elem_size: usize,
) -> bool {
    policy.stage_items
        && algorithm == Algorithm::SinglePass
        && !variant.segments.is_segmented()
        && !layout::packs_items(elem_size, policy.items_per_thread)
}

/// The kernels' array parameters (`in_params`, `out_param`), the lines that wrap them for the
/// tile code (`in_setup`, `out_setup`), and the fused section's values.
fn insert_io(
    ctx: &mut tera::Context,
    op: &OpSpec,
    fused: Option<(&TransformSpec, &layout::FusedStaging)>,
    items_per_thread: u32,
) {
    let Some((t, staging)) = fused else {
        ctx.insert("fused", &false);
        ctx.insert("in_params", "const V* in");
        ctx.insert("out_param", "V* out");
        ctx.insert("in_setup", "");
        ctx.insert("out_setup", "");
        return;
    };
    ctx.insert("fused", &true);
    let types: Vec<String> = t.inputs.iter().map(|i| array_c_type(op, i)).collect();
    let in_params: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(k, ty)| format!("const {ty}* in{k}"))
        .collect();
    ctx.insert("in_params", &in_params.join(", "));
    let output = array_c_type(op, &t.output);
    ctx.insert("out_param", &format!("{output}* out_values"));
    let arrays: Vec<String> = (0..types.len()).map(|k| format!("in{k}")).collect();
    ctx.insert(
        "in_setup",
        &format!("const ScanFusedInput in = {{{}}};", arrays.join(", ")),
    );
    ctx.insert("out_setup", "const ScanFusedOutput out = {out_values};");
    #[derive(serde::Serialize)]
    struct Input {
        ty: String,
        param: String,
    }
    let inputs: Vec<Input> = types
        .iter()
        .zip(&t.lift_params)
        .map(|(ty, p)| Input {
            ty: ty.clone(),
            param: p.clone(),
        })
        .collect();
    ctx.insert("fused_inputs", &inputs);
    ctx.insert("fused_index", &t.lift_params[t.inputs.len()]);
    ctx.insert("fused_output", &output);
    ctx.insert("fused_output_size", &t.output.size());
    let sizes = t.input_sizes();
    ctx.insert("fused_input_sizes", &sizes);
    // The tile exchange stages each input array, then the output, in its own type.
    let pads: Vec<u32> = sizes
        .iter()
        .map(|&size| layout::stage_padding(size, items_per_thread))
        .collect();
    ctx.insert("fused_input_pads", &pads);
    ctx.insert(
        "fused_output_pad",
        &layout::stage_padding(t.output.size(), items_per_thread),
    );
    ctx.insert("fused_warp_bytes", &staging.warp_bytes);
    ctx.insert("fused_input_offsets", &staging.input_offsets);
    ctx.insert("fused_output_in_place", &staging.output_in_place);
    ctx.insert("lift_body", &indent_body(&t.lift_body));
    ctx.insert("project_param", &t.project_param);
    ctx.insert("project_body", &indent_body(&t.project_body));
}

/// Deterministic layout: no trailing whitespace, at most one blank line in a row, no blank line
/// right after an opening brace or before a closing one, exactly one final newline.
fn normalize(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut blank_pending = false;
    let mut last_opens = true; // start of file: drop leading blank lines
    for line in raw.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_pending = true;
            continue;
        }
        let closes = line.trim_start().starts_with('}');
        if blank_pending && !last_opens && !closes {
            out.push('\n');
        }
        blank_pending = false;
        out.push_str(line);
        out.push('\n');
        last_opens = line.ends_with('{');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_core::{BuiltinOp, PrimType};

    #[test]
    fn snapshot_names() {
        assert_eq!(
            snapshot_name("max", "i32", Algorithm::SinglePass, ScanMode::Inclusive),
            "max__i32__single-pass__inclusive"
        );
        assert_eq!(
            snapshot_name("add", "f64", Algorithm::KoggeStone, ScanMode::Exclusive),
            "add__f64__kogge-stone__exclusive"
        );
    }

    #[test]
    fn normalize_is_tidy() {
        assert_eq!(
            normalize("\n\na {  \n\n\n  b;\n\n\n\nc\n\n}\n\n"),
            "a {\n  b;\n\nc\n}\n"
        );
    }

    /// A single-pass inclusive i32 sum of `segments` under `policy`.
    fn single_pass_i32_sum(segments: Segments, policy: TuningPolicy) -> GeneratedScan {
        let variant = ScanVariant {
            segments,
            ..ScanVariant::FLAT
        };
        let spec = BuiltinOp::Add.spec(PrimType::I32).unwrap();
        generate_variant(
            &spec,
            Algorithm::SinglePass,
            ScanMode::Inclusive,
            variant,
            policy,
        )
        .unwrap()
    }

    #[test]
    fn resident_tiles_are_single_pass_tiles_and_never_column_ones() {
        let spec = BuiltinOp::Add.spec(PrimType::I32).unwrap();
        let policy = TuningPolicy {
            resident_tiles: true,
            l2_prefetch_tiles: 48,
            ..TuningPolicy::new(128, 16)
        };
        let render = |segments| single_pass_i32_sum(segments, policy);
        let flat = render(Segments::None);
        assert!(flat.policy.resident_tiles && flat.policy.l2_prefetch_tiles == 0);
        assert!(flat.source.contains("const u32 tile = blockIdx.x;"));
        let columns = render(Segments::Columns);
        assert!(!columns.policy.resident_tiles);
        // Other algorithms refuse it.
        let err = generate_variant(
            &spec,
            Algorithm::Blelloch,
            ScanMode::Inclusive,
            ScanVariant::FLAT,
            policy,
        )
        .unwrap_err();
        assert!(err.to_string().contains("resident_tiles"), "{err}");
    }

    #[test]
    fn first_wave_stagger_only_in_claimed_single_pass_tiles() {
        let render = |segments, resident_tiles| {
            let policy = TuningPolicy {
                resident_tiles,
                first_wave_bytes_per_ns: 1024,
                ..TuningPolicy::new(128, 16)
            };
            single_pass_i32_sum(segments, policy).source
        };
        // 128 x 16 i32: 8 KiB a tile at 1 KiB per ns.
        let claimed = render(Segments::None, false);
        assert!(claimed.contains("constexpr u32 SCAN_FIRST_WAVE_STAGGER_NS = 8;"));
        assert!(claimed.contains("        scan_stagger_first_wave(tile, num_tiles);"));
        for source in [
            render(Segments::None, true),
            render(Segments::Columns, false),
        ] {
            assert!(!source.contains("scan_stagger_first_wave"));
        }
    }

    #[test]
    fn every_builtin_renders_and_reports_its_abi() {
        for op in BuiltinOp::ALL {
            for ty in op.types() {
                let spec = op.spec(ty).unwrap();
                for alg in Algorithm::ALL {
                    for mode in ScanMode::ALL {
                        let p = TuningPolicy::for_target(90, alg, ty.size());
                        let g = generate(&spec, alg, mode, p).unwrap();
                        assert!(g.source.ends_with("}\n") && !g.source.ends_with("\n\n"));
                        assert!(!g
                            .source
                            .lines()
                            .any(|l| l.ends_with(' ') || l.ends_with('\t')));
                        assert!(!g.source.contains("{{") && !g.source.contains("{%"));
                        for k in g.kernel_names() {
                            assert!(g.source.contains(&format!("\n{k}(")), "{k} missing");
                        }
                        assert_eq!(g.elem_size, ty.size());
                    }
                }
            }
        }
    }

    #[test]
    fn abi_numbers() {
        let spec = BuiltinOp::Add.spec(PrimType::F64).unwrap();
        let p = TuningPolicy::new(128, 4);
        let g = generate(&spec, Algorithm::SinglePass, ScanMode::Inclusive, p).unwrap();
        assert_eq!(g.tile_items(), 512);
        assert_eq!(g.num_tiles(1025), 3);
        assert_eq!(g.tile_state_bytes(3), 128 + 3 * 16);
        assert_eq!(g.kernel_names(), &["scangen_single_pass"]);
        let h = generate(&spec, Algorithm::Blelloch, ScanMode::Inclusive, p).unwrap();
        assert_eq!(h.tile_state_bytes(3), 0);
        assert_eq!(h.kernel_names().len(), 4);
        assert_eq!(h.spine_levels(512), Vec::<u64>::new());
        assert_eq!(h.spine_levels(513), vec![2]);
        assert_eq!(h.spine_levels(512 * 512 + 1), vec![513, 2]);
    }

    /// A buffer off the vectors the tiles sit on takes its lead off the first tile, which can
    /// take one tile more than ceil(n / tile); what the kernel cuts (first_tile_shortfall).
    #[test]
    fn single_pass_tiles_take_the_outputs_lead() {
        let spec = BuiltinOp::Add.spec(PrimType::U16).unwrap();
        let p = TuningPolicy {
            aligned_tiles: true,
            lead_tiles: true,
            ..TuningPolicy::new(128, 16)
        };
        let tile = 2048;
        let forward = generate(&spec, Algorithm::SinglePass, ScanMode::Inclusive, p).unwrap();
        assert_eq!(
            (forward.tile_items(), forward.aligned_tile_bytes),
            (tile, 16)
        );
        let reverse = generate_variant(
            &spec,
            Algorithm::SinglePass,
            ScanMode::Inclusive,
            ScanVariant {
                direction: Direction::Reverse,
                ..ScanVariant::FLAT
            },
            p,
        )
        .unwrap();
        let base = 1 << 20; // a vector boundary
        for g in [&forward, &reverse] {
            // Aligned, or n = 0: ceil(n / tile).
            for n in [0, 1, tile - 1, tile, tile + 1, 5 * tile] {
                assert_eq!(g.single_pass_tiles(n, base), n.div_ceil(tile));
                assert_eq!(
                    g.max_single_pass_tiles(n),
                    n.div_ceil(tile) + u64::from(n > 0)
                );
            }
        }
        // Forward: the lead (3 elements at +6 bytes) comes off the first tile.
        let at = base + 6;
        assert_eq!(forward.single_pass_tiles(tile, at), 2);
        assert_eq!(forward.single_pass_tiles(tile - 3, at), 1);
        assert_eq!(forward.single_pass_tiles(tile - 2, at), 2);
        assert_eq!(forward.single_pass_tiles(1, at), 1);
        // Reverse: the first tile is short so that n + lead + shortfall is whole tiles.
        assert_eq!(reverse.single_pass_tiles(tile, at), 2);
        assert_eq!(reverse.single_pass_tiles(tile - 3, at), 1);
        assert_eq!(reverse.single_pass_tiles(2 * tile - 3, at), 2);
        assert_eq!(reverse.single_pass_tiles(2 * tile - 2, at), 3);
        for g in [&forward, &reverse] {
            for n in [1, 33, tile - 1, tile, tile + 1, 3 * tile + 17] {
                for lead in 0..8 {
                    let tiles = g.single_pass_tiles(n, base + 2 * lead);
                    assert!(tiles >= n.div_ceil(tile) && tiles <= g.max_single_pass_tiles(n));
                }
            }
        }
        // Tiles that sit on no buffer's vectors: a fused scan, or the policy's off.
        let off = generate(
            &spec,
            Algorithm::SinglePass,
            ScanMode::Inclusive,
            TuningPolicy {
                lead_tiles: false,
                ..p
            },
        )
        .unwrap();
        assert_eq!(off.aligned_tile_bytes, 0);
        assert_eq!(off.single_pass_tiles(tile, at), 1);
        assert_eq!(off.max_single_pass_tiles(tile), 1);
    }

    #[test]
    fn invalid_policy_is_an_error() {
        let spec = BuiltinOp::Add.spec(PrimType::I32).unwrap();
        let p = TuningPolicy::new(48, 4);
        let e = generate(&spec, Algorithm::SinglePass, ScanMode::Inclusive, p).unwrap_err();
        assert!(matches!(e, CodegenError::InvalidPolicy(_)));
        assert!(e.to_string().contains("multiple of 32"));
    }

    #[test]
    fn invalid_op_is_an_error() {
        let mut spec = BuiltinOp::Add.spec(PrimType::I32).unwrap();
        spec.rhs = "a".into();
        let p = TuningPolicy::for_target(90, Algorithm::SinglePass, 4);
        let e = generate(&spec, Algorithm::SinglePass, ScanMode::Inclusive, p).unwrap_err();
        assert!(matches!(e, CodegenError::InvalidOp(_)), "{e}");
    }

    #[test]
    fn generation_is_deterministic() {
        let spec = BuiltinOp::Max.spec(PrimType::U16).unwrap();
        let p = TuningPolicy::for_target(80, Algorithm::Blelloch, 2);
        let a = generate(&spec, Algorithm::Blelloch, ScanMode::Exclusive, p)
            .unwrap()
            .source;
        let b = generate(&spec, Algorithm::Blelloch, ScanMode::Exclusive, p)
            .unwrap()
            .source;
        assert_eq!(a, b);
    }
}
