//! A scan of data sharded across every GPU of the machine, one process driving them all: one
//! NCCL communicator per GPU, one thread enqueueing every rank's work (the collectives grouped).
//! The operator is affine composition, which is not commutative: the shards' totals must be
//! folded in rank order.
//!
//! ```sh
//! NCCL_NVLS_ENABLE=0 cargo run --release --features nccl --example sharded_one_process
//! ```
//!
//! Without the `nccl` feature, GPUs or libnccl, it says so and runs the same sharded scan with
//! ranks as threads over the CPU backend (exit status 0).

use scangen::runtime::{cpu, scan_sharded_cpu, ScanMode, ThreadExchange};
use scangen::{scan_op, ScanElement, ScanOp};

/// The affine map x -> a*x + b.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Affine {
    pub a: f32,
    pub b: f32,
}

/// Composition "first l, then r".
pub struct Compose;

#[scan_op]
impl ScanOp for Compose {
    type Elem = Affine;
    fn identity() -> Affine {
        Affine { a: 1.0, b: 0.0 }
    }
    fn combine(l: Affine, r: Affine) -> Affine {
        Affine {
            a: l.a * r.a,
            b: r.a * l.b + r.b,
        }
    }
}

/// Rank r's shard: uneven lengths, rank 1's empty. Values a = ±1, small integer b, so every
/// composition is exact and the check can be bit for bit.
fn shard(rank: usize) -> Vec<Affine> {
    let len = if rank == 1 { 0 } else { 1_000_003 * (rank + 1) };
    (0..len)
        .map(|i| {
            let h = (i as u64 ^ ((rank as u64) << 40)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
            Affine {
                a: if h & 1 == 0 { 1.0 } else { -1.0 },
                b: (h % 7) as f32 - 3.0,
            }
        })
        .collect()
}

/// Each rank's expected part of the scan of the concatenation.
fn reference(shards: &[Vec<Affine>], mode: ScanMode) -> Vec<Vec<Affine>> {
    let mut carry = Compose::identity();
    shards
        .iter()
        .map(|s| {
            let mut out = s.clone();
            carry = cpu::scan_sequential_with_init::<Compose>(s, &mut out, carry, mode);
            out
        })
        .collect()
}

fn cpu_threads(size: usize) -> Result<(), Box<dyn std::error::Error>> {
    let shards: Vec<Vec<Affine>> = (0..size).map(shard).collect();
    let expected = reference(&shards, ScanMode::Exclusive);
    let exchanges = ThreadExchange::group(size);
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = exchanges
            .into_iter()
            .zip(&shards)
            .map(|(x, input)| {
                s.spawn(move || {
                    let mut out = input.clone();
                    scan_sharded_cpu::<Compose, _>(&x, input, &mut out, ScanMode::Exclusive)
                        .map(|_| out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank panicked"))
            .collect::<Vec<_>>()
    });
    for (rank, (got, want)) in results.into_iter().zip(&expected).enumerate() {
        assert_eq!(&got?, want, "rank {rank}");
    }
    println!("{size} CPU thread ranks: sharded exclusive scan verified");
    Ok(())
}

#[cfg(feature = "nccl")]
fn gpus_over_nccl() -> Result<(), scangen::runtime::ShardError> {
    use scangen::runtime::sharded::nccl::{all_gpus, scan_all, scanners_for_devices};
    use scangen::runtime::ScanOptions;

    let gpus = all_gpus()?;
    let mut ranks = scanners_for_devices::<Compose>(
        &gpus,
        ScanOptions::default().exclusive(),
        std::time::Duration::from_secs(60),
    )?;
    let shards: Vec<Vec<Affine>> = (0..gpus.len()).map(shard).collect();
    let expected = reference(&shards, ScanMode::Exclusive);
    let streams = gpus
        .iter()
        .map(|g| g.new_stream())
        .collect::<Result<Vec<_>, _>>()?;
    // Raw device memory without cudarc's event tracking, addressed by pointer.
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for (s, stream) in shards.iter().zip(&streams) {
        let device = |what| {
            if s.is_empty() {
                stream.null::<Affine>()
            } else {
                stream.clone_htod(s)
            }
            .map_err(|source| scangen::runtime::ScanError::Driver { step: what, source })
        };
        inputs.push(device("uploading a shard")?);
        outputs.push(device("allocating a result")?);
    }
    use scangen::runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
    let in_ptrs: Vec<u64> = inputs
        .iter()
        .zip(&streams)
        .map(|(b, s)| b.device_ptr(s).0)
        .collect();
    let out_ptrs: Vec<u64> = outputs
        .iter_mut()
        .zip(&streams)
        .map(|(b, s)| b.device_ptr_mut(s).0)
        .collect();
    let lens: Vec<u64> = shards.iter().map(|s| s.len() as u64).collect();
    // SAFETY: each rank's buffers live on its device and hold `lens[i]` elements.
    unsafe { scan_all(&mut ranks, &streams, &in_ptrs, &out_ptrs, &lens)? };
    for (r, rank) in ranks.iter().enumerate() {
        rank.synchronize(&streams[r])?;
        let got = if lens[r] == 0 {
            Vec::new()
        } else {
            streams[r].clone_dtoh(&outputs[r]).expect("download")
        };
        assert_eq!(got, expected[r], "rank {r}");
        println!(
            "rank {r} on {}: {} elements verified",
            gpus[r].backend_name(),
            lens[r]
        );
    }
    println!(
        "{} GPUs, one process: sharded exclusive scan verified",
        gpus.len()
    );
    Ok(())
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "nccl")]
    {
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            // NVLink multicast stays off on shared machines.
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
        match gpus_over_nccl() {
            Ok(()) => return Ok(()),
            Err(e) if is_unavailable(&e) => {
                println!("no GPU sharding here ({e}); running the ranks as CPU threads")
            }
            Err(e) => return Err(e.into()),
        }
    }
    #[cfg(not(feature = "nccl"))]
    println!(
        "built without the `nccl` feature (cargo run --features nccl --example \
         sharded_one_process); running the ranks as CPU threads"
    );
    cpu_threads(4)
}

#[cfg(feature = "nccl")]
fn is_unavailable(e: &scangen::runtime::ShardError) -> bool {
    use scangen::runtime::ShardError;
    match e {
        ShardError::NcclUnavailable { .. } => true,
        ShardError::Scan(s) => s.is_unavailable(),
        _ => false,
    }
}
