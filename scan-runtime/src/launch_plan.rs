//! Which kernels to launch, on what, with which grids: the host side of the kernel ABI in
//! ARCHITECTURE.md, as data, so it can be checked on the CPU (see the simulator in the tests).

use crate::error::ScanError;
use scan_codegen::Algorithm;

/// CUDA's limit on `gridDim.x`.
pub const MAX_GRID_BLOCKS: u64 = (1 << 31) - 1;

/// A buffer a launch reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// The caller's input.
    Input,
    /// The caller's output (may be the input: every plan is valid in place).
    Output,
    /// Hierarchy level `l >= 1` of temporary storage: `level_lens[l - 1]` elements of tile
    /// totals, scanned in place into tile prefixes.
    Level(usize),
}

/// A kernel entry of the ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// `scangen_single_pass`: the whole scan in one launch (decoupled look-back).
    SinglePass,
    /// `scangen_reduce_tiles`: one total per tile of the input (in the scan's order), into
    /// level 1.
    ReduceTiles,
    /// `scangen_reduce_spine`: one total per tile of a level of tile totals (always forward),
    /// into the next level.
    ReduceSpine,
    /// `scangen_scan_tiles`: the final pass, scanning each tile of the input in the user's
    /// mode, seeded with its tile prefix.
    ScanTiles,
    /// `scangen_scan_spine`: an exclusive scan of a level of tile totals, in place.
    ScanSpine,
}

impl Kernel {
    /// The kernel that reduces hierarchy level `level` into the next: the input (level 0) is
    /// read in the scan's order (a suffix scan's from the end, a fused scan's lifted), the levels
    /// above hold totals in that order already.
    pub fn level_reduction(level: usize) -> Kernel {
        if level == 0 {
            Kernel::ReduceTiles
        } else {
            Kernel::ReduceSpine
        }
    }

    /// The kernel's entry-point name in the generated module.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::SinglePass => crate::abi::SINGLE_PASS_KERNEL,
            Kernel::ReduceTiles => crate::abi::REDUCE_TILES_KERNEL,
            Kernel::ReduceSpine => crate::abi::REDUCE_SPINE_KERNEL,
            Kernel::ScanTiles => crate::abi::SCAN_TILES_KERNEL,
            Kernel::ScanSpine => crate::abi::SCAN_SPINE_KERNEL,
        }
    }
}

/// One kernel launch: `kernel(input, output, n, prefixes)` on `grid` blocks. For `SinglePass`
/// the tile state and its slot count are appended by the launcher and `prefixes` is `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The kernel launched.
    pub kernel: Kernel,
    /// The buffer it reads.
    pub input: Buffer,
    /// The buffer it writes (the input itself for the spine scans).
    pub output: Buffer,
    /// Elements of `input` the launch covers.
    pub n: u64,
    /// Tile prefixes (`scan_tiles`, `scan_spine`); `None` is passed as NULL (identity seeds).
    pub prefixes: Option<Buffer>,
    /// Blocks in the grid: `ceil(n / tile)`, at most [`MAX_GRID_BLOCKS`].
    pub grid: u32,
}

/// Every launch of one scan, in stream order, and the temporary storage they need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchPlan {
    /// The launches, in stream order (empty for `n = 0`).
    pub launches: Vec<Launch>,

    /// Element count of each temporary level (index 0 is `Buffer::Level(1)`).
    pub level_lens: Vec<u64>,
    /// Tiles of the single-pass launch (0 for hierarchical plans).
    pub single_pass_tiles: u64,
}

impl LaunchPlan {
    /// Offset, in elements, of `Buffer::Level(level)` in one allocation holding all levels.
    pub fn level_offset(&self, level: usize) -> u64 {
        self.level_lens[..level - 1].iter().sum()
    }

    /// Elements of temporary storage for all levels together.
    pub fn level_elems(&self) -> u64 {
        self.level_lens.iter().sum()
    }
}

fn grid(n: u64, tile: u64, total_n: u64) -> Result<u32, ScanError> {
    let blocks = n.div_ceil(tile);
    if blocks > MAX_GRID_BLOCKS {
        return Err(ScanError::TooLarge {
            n: total_n,
            blocks,
            max_blocks: MAX_GRID_BLOCKS,
        });
    }
    Ok(blocks as u32)
}

/// The launches that scan `n` elements with tiles of `tile` elements. Each is a `tracing`
/// event at trace level (`SCANGEN_LOG=scan_runtime=trace`), in stream order.
pub fn plan(algorithm: Algorithm, n: u64, tile: u64) -> Result<LaunchPlan, ScanError> {
    let plan = plan_launches(algorithm, n, tile)?;
    for launch in &plan.launches {
        tracing::trace!(
            kernel = launch.kernel.name(),
            grid = launch.grid,
            n = launch.n,
            "launch"
        );
    }
    Ok(plan)
}

fn plan_launches(algorithm: Algorithm, n: u64, tile: u64) -> Result<LaunchPlan, ScanError> {
    assert!(tile >= 2, "a tile holds at least two elements");
    let empty = LaunchPlan {
        launches: Vec::new(),
        level_lens: Vec::new(),
        single_pass_tiles: 0,
    };
    if n == 0 {
        return Ok(empty);
    }
    if !algorithm.is_hierarchical() {
        let grid = grid(n, tile, n)?;
        let launch = Launch {
            kernel: Kernel::SinglePass,
            input: Buffer::Input,
            output: Buffer::Output,
            n,
            prefixes: None,
            grid,
        };
        return Ok(LaunchPlan {
            launches: vec![launch],
            single_pass_tiles: u64::from(grid),
            ..empty
        });
    }

    // Levels n0 = n, n1 = ceil(n0 / t), ... until nk <= t.
    let mut lens = vec![n];
    while *lens.last().expect("non-empty") > tile {
        let next = lens.last().expect("non-empty").div_ceil(tile);
        lens.push(next);
    }
    let k = lens.len() - 1;
    let buffer = |l: usize| {
        if l == 0 {
            Buffer::Input
        } else {
            Buffer::Level(l)
        }
    };
    let mut launches = Vec::with_capacity(2 * k + 1);
    if k == 0 {
        // One tile: scan it with identity seeds.
        launches.push(Launch {
            kernel: Kernel::ScanTiles,
            input: Buffer::Input,
            output: Buffer::Output,
            n,
            prefixes: None,
            grid: 1,
        });
        return Ok(LaunchPlan { launches, ..empty });
    }
    for (l, &len) in lens[..k].iter().enumerate() {
        launches.push(Launch {
            kernel: Kernel::level_reduction(l),
            input: buffer(l),
            output: Buffer::Level(l + 1),
            n: len,
            prefixes: None,
            grid: grid(len, tile, n)?,
        });
    }
    // The top level fits one tile: one block scans it in place, exclusively.
    launches.push(Launch {
        kernel: Kernel::ScanSpine,
        input: Buffer::Level(k),
        output: Buffer::Level(k),
        n: lens[k],
        prefixes: None,
        grid: 1,
    });
    for l in (1..k).rev() {
        launches.push(Launch {
            kernel: Kernel::ScanSpine,
            input: Buffer::Level(l),
            output: Buffer::Level(l),
            n: lens[l],
            prefixes: Some(Buffer::Level(l + 1)),
            grid: grid(lens[l], tile, n)?,
        });
    }
    launches.push(Launch {
        kernel: Kernel::ScanTiles,
        input: Buffer::Input,
        output: Buffer::Output,
        n,
        prefixes: Some(Buffer::Level(1)),
        grid: grid(n, tile, n)?,
    });
    Ok(LaunchPlan {
        launches,
        level_lens: lens[1..].to_vec(),
        single_pass_tiles: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu;
    use scan_codegen::ScanMode;

    // Elements are affine maps over wrapping u64, `x -> a * x + b` as (a, b), composed in
    // sequence order: not commutative, so a plan that combines anything out of order fails.
    type E = (u64, u64);

    fn identity() -> E {
        (1, 0)
    }

    /// `f` then `g`: x -> g(f(x)).
    fn combine(f: E, g: E) -> E {
        (
            g.0.wrapping_mul(f.0),
            g.0.wrapping_mul(f.1).wrapping_add(g.1),
        )
    }

    fn tile_scan(input: &[E], seed: E, exclusive: bool) -> Vec<E> {
        let mut acc = seed;
        input
            .iter()
            .map(|&x| {
                let before = acc;
                acc = combine(acc, x);
                if exclusive {
                    before
                } else {
                    acc
                }
            })
            .collect()
    }

    /// Runs a plan with CPU versions of the ABI's kernels, exactly as ARCHITECTURE.md
    /// specifies them. `in_place` aliases output to input, as the GPU would. `reverse`: the
    /// kernels that read the caller's buffers (`reduce_tiles`, `scan_tiles`) see them last to
    /// first, as a suffix scan's layout makes them; the spine kernels see levels as stored.
    fn simulate(
        plan: &LaunchPlan,
        input: &[E],
        tile: usize,
        mode: ScanMode,
        in_place: bool,
        reverse: bool,
    ) -> Vec<E> {
        let mut io = vec![input.to_vec(), vec![(0, 0); input.len()]];
        let out_slot = if in_place { 0 } else { 1 };
        let mut levels: Vec<Vec<E>> = plan
            .level_lens
            .iter()
            .map(|&n| vec![(7, 7); n as usize])
            .collect();
        let read = |b: Buffer, io: &Vec<Vec<E>>, levels: &Vec<Vec<E>>| -> Vec<E> {
            match b {
                Buffer::Input => io[0].clone(),
                Buffer::Output => io[out_slot].clone(),
                Buffer::Level(l) => levels[l - 1].clone(),
            }
        };
        for launch in &plan.launches {
            let n = launch.n as usize;
            let mut src = read(launch.input, &io, &levels);
            assert!(src.len() >= n);
            let scan_layout = matches!(launch.kernel, Kernel::ReduceTiles | Kernel::ScanTiles);
            if reverse && scan_layout {
                src[..n].reverse();
            }
            let prefixes = launch.prefixes.map(|p| read(p, &io, &levels));
            let tiles = n.div_ceil(tile);
            assert_eq!(
                launch.grid as usize, tiles,
                "grid is ceil(n / tile) for {launch:?}"
            );
            let mut result = Vec::new();
            for b in 0..tiles {
                let chunk = &src[b * tile..((b + 1) * tile).min(n)];
                let seed = prefixes.as_ref().map_or(identity(), |p| p[b]);
                match launch.kernel {
                    Kernel::ReduceTiles | Kernel::ReduceSpine => {
                        result.push(chunk.iter().fold(identity(), |a, &x| combine(a, x)))
                    }
                    Kernel::ScanTiles => {
                        result.extend(tile_scan(chunk, seed, mode == ScanMode::Exclusive))
                    }
                    Kernel::ScanSpine => result.extend(tile_scan(chunk, seed, true)),
                    Kernel::SinglePass => unreachable!(),
                }
            }
            if reverse && launch.kernel == Kernel::ScanTiles {
                result.reverse();
            }
            match launch.output {
                Buffer::Input => unreachable!("nothing writes the input"),
                Buffer::Output => io[out_slot][..result.len()].copy_from_slice(&result),
                Buffer::Level(l) => levels[l - 1][..result.len()].copy_from_slice(&result),
            }
        }
        io.swap_remove(out_slot)
    }

    fn inputs(n: usize) -> Vec<E> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state | 1, state >> 7)
            })
            .collect()
    }

    fn sequential(input: &[E], mode: ScanMode, reverse: bool) -> Vec<E> {
        if !reverse {
            return tile_scan(input, identity(), mode == ScanMode::Exclusive);
        }
        let backwards: Vec<E> = input.iter().rev().copied().collect();
        let mut scanned = tile_scan(&backwards, identity(), mode == ScanMode::Exclusive);
        scanned.reverse();
        scanned
    }

    /// Forward and suffix scans, from one level to five (tile 2, n = 1000). A suffix scan
    /// catches a plan that reads a level of totals through the scan's reversing layout.
    #[test]
    fn hierarchical_plans_compute_the_scan() {
        for tile in [2usize, 3, 4, 8] {
            for n in [
                1usize, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100, 257, 1000,
            ] {
                let plan = plan(Algorithm::Blelloch, n as u64, tile as u64).unwrap();
                for mode in ScanMode::ALL {
                    for in_place in [false, true] {
                        for reverse in [false, true] {
                            let input = inputs(n);
                            let got = simulate(&plan, &input, tile, mode, in_place, reverse);
                            assert_eq!(
                                got,
                                sequential(&input, mode, reverse),
                                "n={n} tile={tile} {mode} in_place={in_place} reverse={reverse}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn plan_shapes() {
        assert!(plan(Algorithm::SinglePass, 0, 1024)
            .unwrap()
            .launches
            .is_empty());
        assert!(plan(Algorithm::KoggeStone, 0, 1024)
            .unwrap()
            .launches
            .is_empty());

        let sp = plan(Algorithm::SinglePass, 1025, 1024).unwrap();
        assert_eq!(sp.launches.len(), 1);
        assert_eq!((sp.launches[0].grid, sp.single_pass_tiles), (2, 2));

        let one = plan(Algorithm::KoggeStone, 1024, 1024).unwrap();
        assert_eq!(one.launches.len(), 1);
        assert_eq!(
            (one.launches[0].kernel, one.launches[0].prefixes),
            (Kernel::ScanTiles, None)
        );

        // 2^31 + 123 elements with 4096-element tiles: two levels.
        let big = plan(Algorithm::Blelloch, (1 << 31) + 123, 4096).unwrap();
        assert_eq!(big.level_lens, vec![524289, 129]);
        let kernels: Vec<_> = big.launches.iter().map(|l| l.kernel).collect();
        use Kernel::*;
        assert_eq!(
            kernels,
            [ReduceTiles, ReduceSpine, ScanSpine, ScanSpine, ScanTiles]
        );
        assert_eq!(big.launches[2].grid, 1, "the top level is one block");
        assert_eq!(big.launches[3].prefixes, Some(Buffer::Level(2)));
        assert_eq!(big.level_offset(1), 0);
        assert_eq!(big.level_offset(2), 524289);
        assert_eq!(big.level_elems(), 524289 + 129);
    }

    #[test]
    fn levels_agree_with_codegen() {
        let generated = scan_codegen::GeneratedScan {
            source: String::new(),
            algorithm: Algorithm::KoggeStone,
            mode: ScanMode::Inclusive,
            policy: scan_codegen::TuningPolicy::new(128, 4),
            variant: scan_codegen::ScanVariant::FLAT,
            elem_size: 4,
            elem_align: 4,
            scanned_size: 4,
            transform: None,
            dynamic_shared_bytes: 0,
            aligned_tile_bytes: 0,
        };
        let tile = crate::abi::tile_items(&generated);
        for n in [1, 511, 512, 513, 262_144, 262_145, 1 << 38] {
            assert_eq!(
                plan(Algorithm::KoggeStone, n, tile).unwrap().level_lens,
                generated.spine_levels(n),
                "n={n}"
            );
        }
    }

    #[test]
    fn grids_over_the_limit_are_typed_errors() {
        let n = MAX_GRID_BLOCKS * 2 + 1;
        for algo in Algorithm::ALL {
            match plan(algo, n, 2) {
                Err(ScanError::TooLarge {
                    blocks, max_blocks, ..
                }) => {
                    assert_eq!((blocks, max_blocks), (MAX_GRID_BLOCKS + 1, MAX_GRID_BLOCKS))
                }
                other => panic!("{algo}: {other:?}"),
            }
        }
        assert!(plan(Algorithm::SinglePass, MAX_GRID_BLOCKS * 2, 2).is_ok());
    }

    #[test]
    fn simulator_agrees_with_cpu_backend_on_builtin_ops() {
        // Ties the simulator's notion of "scan" to the CPU backend's.
        let input: Vec<u32> = (1..=100).collect();
        let mut out = vec![0; 100];
        cpu::scan_sequential::<scan_core::builtin::Add<u32>>(&input, &mut out, ScanMode::Inclusive);
        assert_eq!(out[99], 5050);
    }
}
