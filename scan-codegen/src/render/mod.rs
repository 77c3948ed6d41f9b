//! Template rendering: [`generate`] fills the kernel templates of `scan-codegen/templates/` for one operator.

mod context;
mod generated;
mod templates;
mod validate;

use context::*;
pub use generated::{snapshot_name, snapshot_source, CodegenError, GeneratedScan};
use templates::*;
pub use validate::MAX_TRANSFORM_INPUTS;
use validate::*;

use crate::layout;
use crate::variant::{Direction, ScanVariant, Segments};
use crate::{Algorithm, ScanMode, TuningPolicy};
use scan_core::{ElementType, OpSpec, TransformSpec, WordForm};
use std::sync::OnceLock;

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
