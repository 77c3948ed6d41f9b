//! The templates' context for one kernel: every constant and flag a template reads, computed
//! from the operator, the algorithm, the mode, the scan shape and the policy ([`render_scan`]).

use super::*;

#[derive(serde::Serialize)]
pub(super) struct Field {
    pub(super) ty: String,
    pub(super) name: String,
}

/// The C type of a fused array's values.
pub(super) fn array_c_type(op: &OpSpec, ty: &ElementType) -> String {
    if *ty == op.element {
        "V".into()
    } else {
        ty.c_name().to_string()
    }
}

/// The kernel parameters a segment rule adds (C), and the `ScanSegments` initializer that
/// reads them.
pub(super) fn segment_parameters(segments: Segments) -> (&'static str, &'static str) {
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

pub(super) fn render_scan(
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
pub(super) fn stages_plain_items(
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
pub(super) fn insert_io(
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
