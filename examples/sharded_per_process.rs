//! A scan of data sharded across GPUs, one process per GPU (the way launchers such as `torchrun`
//! or `mpirun` start ranks, on one node or several). Rank 0's NCCL id reaches the others through
//! a file (`SCANGEN_NCCL_ID_FILE`) or an environment variable (`SCANGEN_NCCL_ID`, 256 hex digits).
//!
//! Run without rank variables it is its own launcher: it makes the id, writes it to a private
//! temporary file and starts one copy of itself per GPU with
//! `SCANGEN_RANK`, `SCANGEN_WORLD_SIZE` and `SCANGEN_NCCL_ID_FILE` set:
//!
//! ```sh
//! NCCL_NVLS_ENABLE=0 cargo run --release --features nccl --example sharded_per_process
//! ```
//!
//! Under another launcher, set `SCANGEN_RANK`/`SCANGEN_WORLD_SIZE` (or `RANK`/`WORLD_SIZE`, and
//! `LOCAL_RANK` for the GPU) and one of the id variables in every rank. Without the `nccl`
//! feature, GPUs or libnccl, it says so and runs the ranks as CPU threads (exit status 0).

use scangen::runtime::{cpu, scan_sharded_cpu, ScanMode, ThreadExchange};
use scangen::{scan_op, ScanElement, ScanOp};

/// A 2x2 matrix of wrapping u32; products in sequence order are not commutative.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Mat2 {
    pub a: u32,
    pub b: u32,
    pub c: u32,
    pub d: u32,
}

pub struct MatMul;

#[scan_op]
impl ScanOp for MatMul {
    type Elem = Mat2;
    fn identity() -> Mat2 {
        Mat2 {
            a: 1,
            b: 0,
            c: 0,
            d: 1,
        }
    }
    fn combine(l: Mat2, r: Mat2) -> Mat2 {
        Mat2 {
            a: l.a.wrapping_mul(r.a).wrapping_add(l.b.wrapping_mul(r.c)),
            b: l.a.wrapping_mul(r.b).wrapping_add(l.b.wrapping_mul(r.d)),
            c: l.c.wrapping_mul(r.a).wrapping_add(l.d.wrapping_mul(r.c)),
            d: l.c.wrapping_mul(r.b).wrapping_add(l.d.wrapping_mul(r.d)),
        }
    }
}

/// Rank r's shard (the same in every process): uneven lengths, the last rank's empty when there
/// are several.
fn shard(rank: usize, size: usize) -> Vec<Mat2> {
    let len = if size > 1 && rank == size - 1 {
        0
    } else {
        500_009 * (rank + 1)
    };
    (0..len as u64)
        .map(|i| {
            let h = (i ^ ((rank as u64) << 48)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            Mat2 {
                a: (h >> 32) as u32 | 1,
                b: h as u32,
                c: (h >> 16) as u32,
                d: (h >> 40) as u32 | 1,
            }
        })
        .collect()
}

/// Rank `rank`'s expected part of the inclusive scan of the concatenation.
fn expected(rank: usize, size: usize) -> Vec<Mat2> {
    let mut carry = MatMul::identity();
    for r in 0..rank {
        let mut tmp = shard(r, size);
        carry = cpu::scan_parallel_with_init::<MatMul>(
            &shard(r, size),
            &mut tmp,
            carry,
            ScanMode::Inclusive,
        );
    }
    let mine = shard(rank, size);
    let mut out = mine.clone();
    cpu::scan_parallel_with_init::<MatMul>(&mine, &mut out, carry, ScanMode::Inclusive);
    out
}

fn cpu_threads(size: usize) -> Result<(), Box<dyn std::error::Error>> {
    let exchanges = ThreadExchange::group(size);
    std::thread::scope(|s| {
        for x in exchanges {
            s.spawn(move || {
                let rank = scangen::runtime::ShardExchange::rank(&x);
                let input = shard(rank, size);
                let mut out = input.clone();
                scan_sharded_cpu::<MatMul, _>(&x, &input, &mut out, ScanMode::Inclusive)
                    .expect("sharded scan");
                assert_eq!(out, expected(rank, size), "rank {rank}");
            });
        }
    });
    println!("{size} CPU thread ranks: sharded inclusive scan verified");
    Ok(())
}

#[cfg(feature = "nccl")]
mod nccl {
    use super::*;
    use scangen::runtime::sharded::nccl::{all_gpus, NcclExchange, NcclId, NCCL_ID_ENV};
    use scangen::runtime::{Gpu, ScanOptions, ShardError, ShardedScanner};
    use std::time::Duration;

    fn env_usize(names: &[&str]) -> Option<usize> {
        names
            .iter()
            .find_map(|n| std::env::var(n).ok())
            .and_then(|v| v.parse().ok())
    }

    /// This process is one rank (the rank variables are set).
    pub fn rank() -> Option<Result<(), ShardError>> {
        let rank = env_usize(&["SCANGEN_RANK", "RANK"])?;
        let size = env_usize(&["SCANGEN_WORLD_SIZE", "WORLD_SIZE"])?;
        Some((|| {
            let local = env_usize(&["LOCAL_RANK"]).unwrap_or(rank);
            let id = match std::env::var_os("SCANGEN_NCCL_ID_FILE") {
                Some(path) => NcclId::read_file(path.as_ref(), Duration::from_secs(120))?,
                None => NcclId::from_env(NCCL_ID_ENV)?,
            };
            let gpu = Gpu::new(local)?;
            let x = NcclExchange::init_rank(&gpu, &id, rank, size, Duration::from_secs(60))?;
            let mut scanner = ShardedScanner::<MatMul, _>::new(&gpu, ScanOptions::default(), x)?;
            let got = scanner.scan(&shard(rank, size))?;
            assert_eq!(got, expected(rank, size), "rank {rank}");
            println!(
                "rank {rank} of {size} on {}: {} elements verified",
                gpu.backend_name(),
                got.len()
            );
            Ok(())
        })())
    }

    /// The launcher: one child process per GPU.
    pub fn launch() -> Result<bool, Box<dyn std::error::Error>> {
        let size = match all_gpus().and_then(|g| NcclId::new().map(|id| (g.len(), id))) {
            Ok((size, id)) => {
                let dir = std::env::temp_dir().join(format!("scangen-nccl-{}", std::process::id()));
                std::fs::create_dir_all(&dir)?;
                let file = dir.join("nccl-id");
                id.write_file(&file)?;
                let exe = std::env::current_exe()?;
                let children = (0..size)
                    .map(|rank| {
                        std::process::Command::new(&exe)
                            .env("SCANGEN_RANK", rank.to_string())
                            .env("SCANGEN_WORLD_SIZE", size.to_string())
                            .env("SCANGEN_NCCL_ID_FILE", &file)
                            .env("NCCL_NVLS_ENABLE", "0")
                            .spawn()
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let mut ok = true;
                for (rank, mut child) in children.into_iter().enumerate() {
                    let status = child.wait()?;
                    if !status.success() {
                        eprintln!("rank {rank} failed: {status}");
                        ok = false;
                    }
                }
                let _ = std::fs::remove_dir_all(&dir);
                if !ok {
                    return Err("a rank failed".into());
                }
                println!("{size} GPUs, one process each: sharded inclusive scan verified");
                return Ok(true);
            }
            Err(e) => e,
        };
        let unavailable = match &size {
            ShardError::NcclUnavailable { .. } => true,
            ShardError::Scan(s) => s.is_unavailable(),
            _ => false,
        };
        if unavailable {
            println!("no GPU sharding here ({size}); running the ranks as CPU threads");
            Ok(false)
        } else {
            Err(size.into())
        }
    }
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "nccl")]
    {
        if let Some(result) = nccl::rank() {
            return Ok(result?);
        }
        if nccl::launch()? {
            return Ok(());
        }
    }
    #[cfg(not(feature = "nccl"))]
    println!(
        "built without the `nccl` feature (cargo run --features nccl --example \
         sharded_per_process); running the ranks as CPU threads"
    );
    cpu_threads(3)
}
