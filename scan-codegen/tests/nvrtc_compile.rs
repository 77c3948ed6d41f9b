//! Compiles every generated kernel with the real NVRTC (no GPU needed), then assembles the PTX
//! with `ptxas -v` and checks that under their default policy no kernel spills and elements of
//! 8 bytes or less take no stack frame either, once the register cap is loosened where ptxas
//! spills, as the runtime does (`TuningPolicy::relaxed_register_cap`).
//!
//! Needs NVRTC and ptxas: `. scripts/cuda-tools.sh`. Without them the test is ignored
//! (`scan_testenv::needs`), unless `SCANGEN_REQUIRE_NVRTC=1` (CI), which makes it fail.

mod common;

use cudarc::nvrtc::{result, sys};
use scan_codegen::{
    generate_fused, generate_variant, snapshot_name, Algorithm, GeneratedScan, InputSize, ScanMode,
    ScanVariant, TuningPolicy,
};
use scan_core::{BuiltinOp, OpSpec, TransformSpec};
use std::ffi::CString;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const ARCHS: [u32; 2] = [80, 90];

struct Job {
    name: String,
    op: OpSpec,
    algorithm: Algorithm,
    mode: ScanMode,
    sm: u32,
    /// None: the default policy for `sm` (held to the no-spill rule, and for elements of 8
    /// bytes or less to no stack frame); Some: an unusual shape, which only has to compile.
    policy: Option<TuningPolicy>,
    variant: ScanVariant,
    /// A fused lift/project (`generate_fused`).
    transform: Option<TransformSpec>,
    /// With `policy` None: which of the runtime's input-size shapes it takes
    /// (`TuningPolicy::for_input_size`).
    input: InputSize,
}

#[derive(Debug, Default, Clone)]
struct FunctionInfo {
    name: String,
    registers: u32,
    stack_frame: u32,
    spill_stores: u32,
    spill_loads: u32,
}

struct Outcome {
    job: usize,
    /// ptxas's report, the NVRTC log and the policy finally compiled.
    result: Result<(Vec<FunctionInfo>, String, TuningPolicy), String>,
}

fn tools_present() -> Result<(), String> {
    // SAFETY: only tries to dlopen the library.
    if !unsafe { sys::is_culib_present() } {
        return Err("NVRTC not found".into());
    }
    match Command::new("ptxas").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err("ptxas not found on PATH".into()),
    }
}

fn c_log(chars: Vec<std::ffi::c_char>) -> String {
    let bytes: Vec<u8> = chars
        .into_iter()
        .map(|c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Compiles `source` to PTX for `compute_<sm>`; returns (ptx, log) or the log with context.
fn nvrtc_compile(source: &str, name: &str, sm: u32) -> Result<(String, String), String> {
    let src = CString::new(source).expect("no NUL in generated source");
    let cname = CString::new(format!("{name}.cu")).unwrap();
    let prog = result::create_program(&src, Some(&cname))
        .map_err(|e| format!("nvrtcCreateProgram: {e:?}"))?;
    // The runtime's options (scan-runtime's compile_options), with a virtual architecture so
    // ptxas can be run on the PTX.
    let options = [
        format!("--gpu-architecture=compute_{sm}"),
        "--std=c++17".to_string(),
        "--fmad=false".to_string(),
    ];
    // SAFETY: prog is a live program; it is destroyed exactly once below.
    let compiled = unsafe { result::compile_program(prog, &options) };
    let log = unsafe { result::get_program_log(prog) }
        .map(c_log)
        .unwrap_or_default();
    let ptx = match compiled {
        Ok(()) => unsafe { result::get_ptx(prog) }
            .map(c_log)
            .map_err(|e| format!("nvrtcGetPTX: {e:?}")),
        Err(e) => Err(format!(
            "NVRTC failed ({e:?}):\n{log}\n{}",
            error_context(source, &log)
        )),
    };
    unsafe { result::destroy_program(prog) }.expect("nvrtcDestroyProgram");
    ptx.map(|p| (p, log))
}

/// The numbered source lines around every `name.cu(LINE): error` of an NVRTC log.
fn error_context(source: &str, log: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::new();
    for entry in log.lines().filter(|l| l.contains("error")) {
        let Some(open) = entry.find(".cu(") else {
            continue;
        };
        let rest = &entry[open + 4..];
        let Some(close) = rest.find(')') else {
            continue;
        };
        let Ok(line) = rest[..close].parse::<usize>() else {
            continue;
        };
        out.push_str(&format!("--- {entry}\n"));
        for n in line.saturating_sub(4).max(1)..=(line + 3).min(lines.len()) {
            let mark = if n == line { ">>" } else { "  " };
            out.push_str(&format!("{mark}{n:5} | {}\n", lines[n - 1]));
        }
    }
    out
}

/// Assembles PTX with `ptxas -v` and parses its per-function resource report.
fn ptxas(ptx: &str, name: &str, sm: u32) -> Result<Vec<FunctionInfo>, String> {
    let dir = std::env::temp_dir().join(format!("scangen-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(format!("{name}.sm{sm}.ptx"));
    std::fs::write(&file, ptx).map_err(|e| e.to_string())?;
    let out = Command::new("ptxas")
        .arg(format!("-arch=sm_{sm}"))
        .arg("-v")
        .arg(&file)
        .arg("-o")
        .arg(dir.join(format!("{name}.sm{sm}.cubin")))
        .output()
        .map_err(|e| format!("running ptxas: {e}"))?;
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(dir.join(format!("{name}.sm{sm}.cubin")));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(format!("ptxas failed:\n{stderr}"));
    }
    Ok(parse_ptxas(&stderr))
}

fn number_before(text: &str, what: &str) -> Option<u32> {
    let at = text.find(what)?;
    text[..at].split_whitespace().last()?.parse().ok()
}

fn parse_ptxas(stderr: &str) -> Vec<FunctionInfo> {
    let mut fns: Vec<FunctionInfo> = Vec::new();
    for line in stderr.lines() {
        if let Some(at) = line.find("Function properties for ") {
            fns.push(FunctionInfo {
                name: line[at + 24..].trim().to_string(),
                ..Default::default()
            });
        } else if let Some(f) = fns.last_mut() {
            if line.contains("bytes stack frame") {
                f.stack_frame = number_before(line, "bytes stack frame").unwrap_or(u32::MAX);
                f.spill_stores = number_before(line, "bytes spill stores").unwrap_or(u32::MAX);
                f.spill_loads = number_before(line, "bytes spill loads").unwrap_or(u32::MAX);
            } else if line.contains("Used ") && line.contains(" registers") {
                f.registers = number_before(line, "registers").unwrap_or(0);
            }
        }
    }
    fns
}

#[test]
fn parses_ptxas_reports() {
    let report = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'scangen_single_pass' for 'sm_90'\n\
ptxas info    : Function properties for scangen_single_pass\n\
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n\
ptxas info    : Used 40 registers, used 1 barriers, 16904 bytes smem, 400 bytes cmem[0]\n";
    let f = parse_ptxas(report);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].name, "scangen_single_pass");
    assert_eq!(
        (
            f[0].registers,
            f[0].stack_frame,
            f[0].spill_stores,
            f[0].spill_loads
        ),
        (40, 8, 4, 4)
    );
}

#[test]
fn error_context_numbers_the_lines() {
    let src = "a\nb\nc\nd\ne\nf\ng\nh\n";
    let ctx = error_context(src, "x.cu(5): error: identifier \"e\" is undefined");
    assert!(ctx.contains(">>    5 | e"), "{ctx}");
    assert!(
        ctx.contains("      1 | a") && ctx.contains("      8 | h"),
        "{ctx}"
    );
}

fn jobs() -> Vec<Job> {
    let mut ops: Vec<(OpSpec, String)> = Vec::new();
    for op in BuiltinOp::ALL {
        for ty in op.types() {
            ops.push((op.spec(ty).unwrap(), ty.name().to_string()));
        }
    }
    for s in common::struct_ops() {
        let ty = s.element.c_name().to_string();
        ops.push((s, ty));
    }
    let mut jobs = Vec::new();
    for (op, ty) in &ops {
        for algorithm in Algorithm::ALL {
            for mode in ScanMode::ALL {
                for sm in ARCHS {
                    jobs.push(Job {
                        name: snapshot_name(&op.name, ty, algorithm, mode),
                        op: op.clone(),
                        algorithm,
                        mode,
                        sm,
                        policy: None,
                        variant: ScanVariant::FLAT,
                        transform: None,
                        input: InputSize::Large,
                    });
                }
            }
        }
    }
    // The runtime's tiny-, small-, mid-size, few-waves and many-waves input shapes (sm_90
    // single-pass), held to the same rule as the defaults.
    for (op, ty) in &ops {
        for (input, label) in [
            (InputSize::Tiny, "tiny"),
            (InputSize::Small, "small"),
            (InputSize::Mid, "mid"),
            (InputSize::FewWaves, "few_waves"),
            (InputSize::ManyWaves, "many_waves"),
        ] {
            jobs.extend(sized_job(op, ty, input, label, ScanVariant::FLAT));
        }
    }
    // Shapes the defaults never produce: a Blelloch tree padded to a power of two (96, 160
    // threads), odd and single items per thread, the largest block, a single warp.
    let shapes = [(96, 3), (160, 1), (1024, 1), (32, 7), (64, 2)];
    let odd_ops = [
        (
            BuiltinOp::Add.spec(scan_core::PrimType::I32).unwrap(),
            "i32".to_string(),
        ),
        (
            BuiltinOp::Max.spec(scan_core::PrimType::F64).unwrap(),
            "f64".to_string(),
        ),
        (
            BuiltinOp::Xor.spec(scan_core::PrimType::U8).unwrap(),
            "u8".to_string(),
        ),
        (common::affine_f32(), "Affine".to_string()),
        (common::stats_12(), "Stats".to_string()),
        (common::byte_pair(), "BytePair".to_string()),
    ];
    for (op, ty) in &odd_ops {
        for (block_threads, items_per_thread) in shapes {
            for algorithm in Algorithm::ALL {
                for mode in ScanMode::ALL {
                    jobs.push(Job {
                        name: format!(
                            "{}__{block_threads}x{items_per_thread}",
                            snapshot_name(&op.name, ty, algorithm, mode)
                        ),
                        op: op.clone(),
                        algorithm,
                        mode,
                        sm: 90,
                        policy: Some(TuningPolicy::new(block_threads, items_per_thread)),
                        variant: ScanVariant::FLAT,
                        transform: None,
                        input: InputSize::Large,
                    });
                }
            }
        }
        // Staged single-pass tiles (TuningPolicy::stage_items; no default stages a plain scan),
        // forward and reverse, with the L2 prefetch on sm_90 and without it on sm_80. At 128 x
        // 64, 8-byte and wider elements take dynamic shared memory (the kernel's static_assert
        // checks the host's bound).
        for (block_threads, items_per_thread, cap, prefetch, sm) in [
            (128, 8, 5, 48, 90),
            (64, 16, 1, 0, 80),
            (128, 64, 2, 96, 90),
        ] {
            for variant in [ScanVariant::FLAT, ScanVariant::FLAT.reverse()] {
                jobs.push(Job {
                    name: format!(
                        "{}__staged_{block_threads}x{items_per_thread}__sm{sm}{}",
                        snapshot_name(&op.name, ty, Algorithm::SinglePass, ScanMode::Exclusive),
                        variant.name_suffix()
                    ),
                    op: op.clone(),
                    algorithm: Algorithm::SinglePass,
                    mode: ScanMode::Exclusive,
                    sm,
                    policy: Some(TuningPolicy {
                        min_blocks_per_sm: cap,
                        l2_prefetch_tiles: prefetch,
                        stage_items: true,
                        ..TuningPolicy::new(block_threads, items_per_thread)
                    }),
                    variant,
                    transform: None,
                    input: InputSize::Large,
                });
            }
        }
        // Packed tiles past static shared memory (64 KiB of 1- and 2-byte items), with word and
        // 16-byte run accesses: the kernel's static_assert checks the host's dynamic bound,
        // which must count the word-sized warp totals and the tile's 16-byte alignment.
        if ty.as_str() == "u8" {
            for (packed_op, packed_ty, items) in [
                (BuiltinOp::Add, scan_core::PrimType::U8, 256),
                (BuiltinOp::Max, scan_core::PrimType::F16, 128),
            ] {
                for packed_access_bytes in [4, 16] {
                    for variant in [ScanVariant::FLAT, ScanVariant::FLAT.reverse()] {
                        let packed = packed_op.spec(packed_ty).unwrap();
                        jobs.push(Job {
                            name: format!(
                                "{}__256x{items}__access{packed_access_bytes}{}",
                                snapshot_name(
                                    &packed.name,
                                    packed_ty.name(),
                                    Algorithm::SinglePass,
                                    ScanMode::Exclusive
                                ),
                                variant.name_suffix()
                            ),
                            op: packed,
                            algorithm: Algorithm::SinglePass,
                            mode: ScanMode::Exclusive,
                            sm: 90,
                            policy: Some(TuningPolicy {
                                min_blocks_per_sm: 3,
                                l2_prefetch_tiles: 48,
                                packed_access_bytes,
                                ..TuningPolicy::new(256, items)
                            }),
                            variant,
                            transform: None,
                            input: InputSize::Large,
                        });
                    }
                }
            }
        }
        // Vector widths, look-back windows and L2 prefetch distances the defaults do not use:
        // single-lane and odd windows, sub-word vectors (2 bytes: no vector word, so scalar),
        // 4- to 16-byte words, prefetch 1 to 4096 tiles ahead; the last one for sm_80, where
        // the bulk prefetch compiles to nothing.
        let variations = [
            (128, 8, 16, 1, 0, 90),
            (64, 16, 8, 7, 1, 90),
            (128, 4, 2, 16, 3, 90),
            (32, 32, 4, 31, 4096, 90),
            (128, 16, 4, 32, 48, 80),
        ];
        for (
            block_threads,
            items_per_thread,
            vector_bytes,
            look_back_window,
            l2_prefetch_tiles,
            sm,
        ) in variations
        {
            for mode in ScanMode::ALL {
                jobs.push(Job {
                    name: format!(
                        "{}__{block_threads}x{items_per_thread}__vec{vector_bytes}__window{look_back_window}__prefetch{l2_prefetch_tiles}__sm{sm}",
                        snapshot_name(&op.name, ty, Algorithm::SinglePass, mode)
                    ),
                    op: op.clone(),
                    algorithm: Algorithm::SinglePass,
                    mode,
                    sm,
                    policy: Some(TuningPolicy {
                        vector_bytes,
                        look_back_window,
                        l2_prefetch_tiles,
                        ..TuningPolicy::new(block_threads, items_per_thread)
                    }),
                    variant: ScanVariant::FLAT,
                    transform: None,
                    input: InputSize::Large,
                });
            }
        }
    }
    // Every scan shape (direction x segment rule) with the default policies, for primitives of
    // every size class and struct ops (non-commutative, 12-byte, sub-word); hierarchical
    // algorithms where the variant allows them (reverse only).
    // (Kept to a few ops, sm_80 for one: each variant is a separate source, and CI has 2 cores.)
    let variant_ops = [
        (
            BuiltinOp::Add.spec(scan_core::PrimType::I32).unwrap(),
            "i32".to_string(),
            &ARCHS[..],
        ),
        (
            BuiltinOp::Add.spec(scan_core::PrimType::U8).unwrap(),
            "u8".to_string(),
            &ARCHS[1..],
        ),
        (common::affine_f32(), "Affine".to_string(), &ARCHS[1..]),
        (common::stats_12(), "Stats".to_string(), &ARCHS[1..]),
    ];
    for (op, ty, archs) in &variant_ops {
        for variant in common::variants() {
            for algorithm in Algorithm::ALL {
                if variant.supported_by(algorithm).is_err() {
                    continue;
                }
                for mode in ScanMode::ALL {
                    for &sm in archs.iter() {
                        jobs.push(Job {
                            name: format!(
                                "{}{}",
                                snapshot_name(&op.name, ty, algorithm, mode),
                                variant.name_suffix()
                            ),
                            op: op.clone(),
                            algorithm,
                            mode,
                            sm,
                            policy: None,
                            variant,
                            transform: None,
                            input: InputSize::Large,
                        });
                    }
                }
            }
        }
    }
    // Suffix scans of every 1- and 2-byte built-in at its default policy and in the tiny-, small-,
    // mid-size and few-waves shapes (sm_90 single-pass): only there is a tile's shortfall not 0
    // (aligned tiles: tile_layout.cu.tera, first_tile_shortfall), and the register ladder of
    // each ends differently from its prefix scan's.
    for (op, ty) in &ops {
        if op.element.size() > 2 || !matches!(op.element, scan_core::ElementType::Prim(_)) {
            continue;
        }
        for (input, label) in [
            (InputSize::Tiny, "tiny"),
            (InputSize::Small, "small"),
            (InputSize::Mid, "mid"),
            (InputSize::FewWaves, "few_waves"),
        ] {
            jobs.extend(sized_job(op, ty, input, label, ScanVariant::FLAT.reverse()));
        }
        for mode in ScanMode::ALL {
            jobs.push(Job {
                name: format!(
                    "{}__default{}",
                    snapshot_name(&op.name, ty, Algorithm::SinglePass, mode),
                    ScanVariant::FLAT.reverse().name_suffix()
                ),
                op: op.clone(),
                algorithm: Algorithm::SinglePass,
                mode,
                sm: 90,
                policy: None,
                variant: ScanVariant::FLAT.reverse(),
                transform: None,
                input: InputSize::Large,
            });
        }
    }
    // Fused lift/project (Kadane from i64, argmin from f32 with the index, an affine
    // recurrence from two f32 arrays): every algorithm and mode, and for the recurrence every
    // variant a fused scan supports (all but column scans).
    for (op, transform) in common::fused_ops() {
        let ty = op.element.c_name().to_string();
        let mut variants = vec![ScanVariant::FLAT];
        if op.name == "affine_compose" {
            variants.extend(
                common::variants()
                    .into_iter()
                    .filter(|v| v.segments != scan_codegen::Segments::Columns),
            );
        }
        for variant in variants {
            for algorithm in Algorithm::ALL {
                if variant.supported_by(algorithm).is_err() {
                    continue;
                }
                for mode in ScanMode::ALL {
                    for sm in ARCHS {
                        jobs.push(Job {
                            name: format!(
                                "{}__fused{}",
                                snapshot_name(&op.name, &ty, algorithm, mode),
                                variant.name_suffix()
                            ),
                            op: op.clone(),
                            algorithm,
                            mode,
                            sm,
                            policy: None,
                            variant,
                            transform: Some(transform.clone()),
                            input: InputSize::Large,
                        });
                    }
                }
            }
        }
        // 8192-item fused tiles: past static shared memory for every fused op.
        for (block_threads, items_per_thread, cap) in [(128, 64, 3), (256, 32, 2)] {
            for variant in [ScanVariant::FLAT, ScanVariant::FLAT.reverse()] {
                jobs.push(Job {
                    name: format!(
                        "{}__fused__{block_threads}x{items_per_thread}{}",
                        snapshot_name(&op.name, &ty, Algorithm::SinglePass, ScanMode::Inclusive),
                        variant.name_suffix()
                    ),
                    op: op.clone(),
                    algorithm: Algorithm::SinglePass,
                    mode: ScanMode::Inclusive,
                    sm: 90,
                    policy: Some(TuningPolicy {
                        min_blocks_per_sm: cap,
                        l2_prefetch_tiles: 96,
                        vector_bytes: 1,
                        stage_items: true,
                        ..TuningPolicy::new(block_threads, items_per_thread)
                    }),
                    variant,
                    transform: Some(transform.clone()),
                    input: InputSize::Large,
                });
            }
        }
    }
    jobs
}

/// The sm_90 inclusive single-pass job of `op` in the runtime's input-size shape `input`
/// (named `label`) for `variant`; `None` where `op` has no such shape.
fn sized_job(
    op: &OpSpec,
    ty: &str,
    input: InputSize,
    label: &str,
    variant: ScanVariant,
) -> Option<Job> {
    let job = Job {
        name: format!(
            "{}__{label}_input{}",
            snapshot_name(&op.name, ty, Algorithm::SinglePass, ScanMode::Inclusive),
            variant.name_suffix()
        ),
        op: op.clone(),
        algorithm: Algorithm::SinglePass,
        mode: ScanMode::Inclusive,
        sm: 90,
        policy: None,
        variant,
        transform: None,
        input,
    };
    sized_policy(&job).map(|_| job)
}

/// Compiles and assembles a job. A default policy's register cap is loosened while ptxas spills
/// or keeps a stack frame under it, as the runtime does (`TuningPolicy::relaxed_register_cap`:
/// a deferred prefix's rungs, a looser cap, or a packed tile widened); the last attempt is the one
/// checked.
///
/// Where a default policy's ladder gave up a path of buffers off a vector boundary (or its first
/// rung leaves them to the twin: `TuningPolicy::unaligned_paths_in_twin`), the runtime builds
/// its twin for such buffers too (`TuningPolicy::unaligned_twin`): that ladder is
/// climbed as well, and its kernels (named `twin:...`) are held to the same rule.
fn run_job(job: &Job) -> Result<(Vec<FunctionInfo>, String, TuningPolicy), String> {
    let first = match job.policy {
        Some(policy) => policy,
        None => sized_policy(job).ok_or("no such input-size shape")?,
    };
    let (mut fns, mut log, built) = climb(job, first)?;
    let twin = first
        .unaligned_twin(job.algorithm, job.op.element.size())
        .filter(|_| job.policy.is_none() && first.unaligned_paths_given_up(&built));
    if let Some(twin) = twin {
        let (twin_fns, twin_log, _) = climb(job, twin)?;
        fns.extend(twin_fns.into_iter().map(|f| FunctionInfo {
            name: format!("twin:{}", f.name),
            ..f
        }));
        log.push_str(&twin_log);
    }
    Ok((fns, log, built))
}

/// Climbs the register ladder from `first` as the runtime does: from its first rung, in the order
/// `TuningPolicy::next_rung_to_try` names (only the first rung for a job of its own policy).
fn climb(
    job: &Job,
    first: TuningPolicy,
) -> Result<(Vec<FunctionInfo>, String, TuningPolicy), String> {
    let ladder = first.register_ladder(job.op.element.size(), job.variant.direction);
    let mut rung = 0;
    loop {
        let policy = ladder[rung];
        let (fns, log) = compile_and_assemble(job, policy)?;
        // Any local memory, as the runtime reads it (the loaded function's local size): ptxas
        // also reports stack frames of spill loads alone.
        let local_bytes = fns
            .iter()
            .map(|f| f.spill_stores.max(f.stack_frame))
            .max()
            .unwrap_or(0);
        // SCANGEN_NVRTC_LADDER=1 prints each rung of the register ladder a job tries.
        if std::env::var("SCANGEN_NVRTC_LADDER").as_deref() == Ok("1") {
            let registers: Vec<u32> = fns.iter().map(|f| f.registers).collect();
            eprintln!(
                "ladder: {}{} sm_{}: {}x{} cap {} deferred {} re-read {} access {} runs {} partial-tile vectors {} shifted {} item unroll {} lead {}: {local_bytes} local bytes, registers {registers:?}",
                job.name,
                if first.keeps_unaligned_paths { "__unaligned_twin" } else { "" },
                job.sm,
                policy.block_threads,
                policy.items_per_thread,
                policy.min_blocks_per_sm,
                policy.defer_tile_prefix,
                policy.deferred_scan_rereads_run,
                policy.packed_access_bytes,
                policy.thread_runs,
                policy.partial_tile_vectors,
                policy.shifted_tile_vectors,
                policy.item_path_unroll,
                policy.lead_tiles
            );
        }
        match TuningPolicy::next_rung_to_try(&ladder, rung, local_bytes) {
            Some(next) if job.policy.is_none() => rung = next,
            _ => return Ok((fns, log, policy)),
        }
    }
}

/// The runtime's default policy for `job`'s input size (None: no such shape for it).
fn sized_policy(job: &Job) -> Option<TuningPolicy> {
    TuningPolicy::for_input_size(
        job.input,
        job.sm,
        job.algorithm,
        &job.op,
        job.variant,
        job.transform.as_ref(),
    )
}

fn compile_and_assemble(
    job: &Job,
    policy: TuningPolicy,
) -> Result<(Vec<FunctionInfo>, String), String> {
    let generated: GeneratedScan = match &job.transform {
        None => generate_variant(&job.op, job.algorithm, job.mode, job.variant, policy),
        Some(t) => generate_fused(&job.op, t, job.algorithm, job.mode, job.variant, policy),
    }
    .map_err(|e| format!("generate: {e}"))?;
    let (ptx, log) = nvrtc_compile(&generated.source, &job.name, job.sm)?;
    // SCANGEN_NVRTC_DUMP=dir writes each source and its PTX there, for inspection.
    if let Ok(dir) = std::env::var("SCANGEN_NVRTC_DUMP") {
        let base = std::path::Path::new(&dir).join(format!("{}.sm{}", job.name, job.sm));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        std::fs::write(
            base.with_extension(format!("sm{}.cu", job.sm)),
            &generated.source,
        )
        .map_err(|e| e.to_string())?;
        std::fs::write(base.with_extension(format!("sm{}.ptx", job.sm)), &ptx)
            .map_err(|e| e.to_string())?;
    }
    let fns = ptxas(&ptx, &job.name, job.sm)?;
    for k in generated.kernel_names() {
        if !fns.iter().any(|f| f.name == *k) {
            return Err(format!("kernel {k} missing from the ptxas report: {fns:?}"));
        }
    }
    Ok((fns, log))
}

#[scan_testenv::needs(nvrtc, ptxas)]
#[test]
fn every_generated_kernel_compiles_without_local_memory() {
    if let Err(why) = tools_present() {
        let msg = format!(
            "skipped: {why} (install with scripts/cuda-tools.sh: `. scripts/cuda-tools.sh`)"
        );
        if std::env::var("SCANGEN_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!("{msg}; SCANGEN_REQUIRE_NVRTC=1 requires it");
        }
        eprintln!("{msg}");
        return;
    }
    // SCANGEN_NVRTC_FILTER=substring[,substring...] keeps only the sources whose name holds one
    // of them (for quick iteration, e.g. `__u8__,__u16__`).
    let filter = std::env::var("SCANGEN_NVRTC_FILTER").unwrap_or_default();
    let jobs: Vec<Job> = jobs()
        .into_iter()
        .filter(|j| filter.split(',').any(|f| j.name.contains(f)))
        .collect();
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .max(1);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let result = run_job(job);
                outcomes.lock().unwrap().push(Outcome { job: i, result });
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap();
    outcomes.sort_by_key(|o| o.job);

    let mut failures = Vec::new();
    let mut warnings = Vec::new();
    let mut registers = Vec::new();
    for o in &outcomes {
        let job = &jobs[o.job];
        let size = job.op.element.size();
        match &o.result {
            Err(e) => failures.push(format!("{} (sm_{}): {e}", job.name, job.sm)),
            Ok((fns, log, policy)) => {
                if log.contains("warning") {
                    warnings.push(format!("{} (sm_{}):\n{log}", job.name, job.sm));
                }
                for f in fns {
                    let local = f.stack_frame + f.spill_stores + f.spill_loads;
                    // (Wider elements may keep a stack frame without spilling: the 24-byte
                    // Mixed exclusive scan on sm_80 keeps 8 bytes.)
                    let spills = f.spill_stores + f.spill_loads != 0;
                    if job.policy.is_none() && (spills || (local != 0 && size <= 8)) {
                        failures.push(format!(
                            "{} (sm_{}) {}: {} bytes stack frame, {} bytes spill stores, {} bytes spill loads",
                            job.name, job.sm, f.name, f.stack_frame, f.spill_stores, f.spill_loads
                        ));
                    } else if local != 0 {
                        eprintln!(
                            "note: {} (sm_{}) {}: {} bytes stack frame, {} spill stores, {} spill loads ({size}-byte element{})",
                            job.name,
                            job.sm,
                            f.name,
                            f.stack_frame,
                            f.spill_stores,
                            f.spill_loads,
                            if job.policy.is_some() { ", custom policy" } else { "" }
                        );
                    }
                    if job.mode == ScanMode::Inclusive
                        && (job.op.name == "add" || job.op.name == "affine_compose")
                    {
                        registers.push(format!(
                            "{} sm_{} {}: {} registers (asked for {} blocks per SM)",
                            job.name, job.sm, f.name, f.registers, policy.min_blocks_per_sm
                        ));
                    }
                }
            }
        }
    }
    for r in &registers {
        eprintln!("{r}");
    }
    for w in warnings.iter().take(5) {
        eprintln!("NVRTC warnings in {w}");
    }
    eprintln!(
        "nvrtc_compile: {} of {} sources compiled and assembled (sm_80, sm_90; default and unusual policies); {} with NVRTC warnings; {} failures",
        outcomes.len() - outcomes.iter().filter(|o| o.result.is_err()).count(),
        jobs.len(),
        warnings.len(),
        failures.len()
    );
    if !failures.is_empty() {
        let shown: Vec<&String> = failures.iter().take(5).collect();
        panic!(
            "{} failures; first {}:\n\n{}",
            failures.len(),
            shown.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n\n")
        );
    }
    assert!(
        warnings.is_empty(),
        "NVRTC warnings in {} sources",
        warnings.len()
    );
}
