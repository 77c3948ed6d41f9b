//! Sharded scans on GPUs against the CPU reference of the concatenated array: the device
//! reduction they are built on, several ranks as threads on one GPU (the ranks' device logic with
//! the host-staged `ThreadExchange`), and, with the `nccl` feature, NCCL in both process models
//! (one process driving every GPU; one process per GPU, this test binary re-run as each rank).
//! Non-commutative struct ops, uneven and empty shards, both modes, every algorithm, shards past
//! 2^31 elements.
//!
//! Needs an NVIDIA GPU: every test is `#[ignore]`d (see gpu_suite.rs). The NCCL tests need
//! libnccl (as `libnccl.so` on the library path; `.gpu/run-all.sh` links the `nvidia-nccl`
//! wheel's): without it they skip loudly, or fail with `SCANGEN_REQUIRE_NCCL=1`. They use every
//! GPU of the machine (one rank per GPU; a machine with one GPU runs a group of one).
//!
//! ```sh
//! cargo test --release -p scangen-runtime --features nccl --test gpu_sharded -- --ignored --test-threads=1
//! ```

use scan_runtime::builtin::Add;
use scan_runtime::cpu;
use scan_runtime::cudarc::driver::DeviceRepr;
use scan_runtime::{Algorithm, Gpu, ScanMode, ScanOp, ShardError, ShardedScanner, ThreadExchange};
use std::time::Duration;

mod common;
use common::ops::{Compose, MatMul};
use common::{opts, random_values, Rng, TestValue};

const ALGORITHMS: [Algorithm; 3] = [
    Algorithm::SinglePass,
    Algorithm::KoggeStone,
    Algorithm::Blelloch,
];
const MODES: [ScanMode; 2] = [ScanMode::Inclusive, ScanMode::Exclusive];

fn gpu() -> Gpu {
    common::gpu("gpu_sharded")
}

/// The reference: each shard's expected part of the scan of the concatenation, and the total.
fn reference<Op: ScanOp>(
    shards: &[Vec<Op::Elem>],
    mode: ScanMode,
) -> (Vec<Vec<Op::Elem>>, Op::Elem) {
    let mut carry = Op::identity();
    let parts = shards
        .iter()
        .map(|shard| {
            let mut out = shard.clone();
            carry = cpu::scan_parallel_with_init::<Op>(shard, &mut out, carry, mode);
            out
        })
        .collect();
    (parts, carry)
}

fn compare<T: TestValue>(what: &str, got: &[T], want: &[T]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{what}: length {} != {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(g, w)| !T::same(*g, *w)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: element {i}: expected {:?}, got {:?}",
            want[i], got[i]
        )),
    }
}

/// One sharded scan with `shards.len()` thread ranks sharing `gpu`.
fn threads_on_one_gpu<Op: ScanOp>(
    gpu: &Gpu,
    algorithm: Algorithm,
    mode: ScanMode,
    shards: &[Vec<Op::Elem>],
) -> Result<(), String>
where
    Op::Elem: TestValue + DeviceRepr,
{
    let (expected, _) = reference::<Op>(shards, mode);
    let exchanges = ThreadExchange::group_with_timeout(shards.len(), Duration::from_secs(120));
    let results: Vec<Result<Vec<Op::Elem>, ShardError>> = std::thread::scope(|s| {
        let handles: Vec<_> = exchanges
            .into_iter()
            .zip(shards)
            .map(|(x, shard)| {
                s.spawn(move || {
                    let mut scanner = ShardedScanner::<Op, _>::new(gpu, opts(algorithm, mode), x)?;
                    scanner.scan(shard)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (rank, (result, want)) in results.into_iter().zip(&expected).enumerate() {
        let got = result.map_err(|e| format!("rank {rank}: {e}"))?;
        compare(&format!("rank {rank}"), &got, want)?;
    }
    Ok(())
}

fn layouts() -> Vec<Vec<usize>> {
    vec![
        vec![1000, 3],
        vec![0, 70_000],
        vec![70_000, 0, 1],
        vec![0, 0],
        vec![(1 << 20) + 17, 1 << 16, 12_345, 1],
    ]
}

#[derive(Default)]
struct Report {
    passed: usize,
    failures: Vec<String>,
}

impl Report {
    fn record(&mut self, case: String, result: Result<(), String>) {
        match result {
            Ok(()) => self.passed += 1,
            Err(why) => {
                println!("FAIL {case}: {why}");
                self.failures.push(case);
            }
        }
    }
    fn finish(self, test: &str) {
        println!(
            "gpu suite ({test}): {} cases passed, {} failed",
            self.passed,
            self.failures.len()
        );
        assert!(self.failures.is_empty(), "{:?}", self.failures);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn reducer_matches_the_cpu_fold() {
    let gpu = gpu();
    let mut report = Report::default();
    let mut rng = Rng::new("reducer");
    let mut add = gpu.reducer::<Add<i64>>().unwrap();
    let mut mat = gpu.reducer::<MatMul>().unwrap();
    let tile = mat.tile_items() as usize;
    for n in [
        0,
        1,
        2,
        tile - 1,
        tile,
        tile + 1,
        tile * tile + 3,
        3_000_001,
    ] {
        let xs: Vec<i64> = random_values(&mut rng, n);
        let init: i64 = random_values(&mut rng, 1)[0];
        let want = xs.iter().fold(init, |a, &x| a.wrapping_add(x));
        report.record(
            format!("add i64 n={n}"),
            add.reduce(&xs, init)
                .map_err(|e| e.to_string())
                .and_then(|got| compare("total", &[got], &[want])),
        );
        let ms: Vec<common::ops::Mat2> = random_values(&mut rng, n);
        let init = random_values::<common::ops::Mat2>(&mut rng, 1)[0];
        let want = ms.iter().fold(init, |a, &x| MatMul::combine(a, x));
        report.record(
            format!("matmul n={n}"),
            mat.reduce(&ms, init)
                .map_err(|e| e.to_string())
                .and_then(|got| compare("total", &[got], &[want])),
        );
    }
    report.finish("reducer");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn thread_ranks_on_one_gpu_match_the_reference() {
    let gpu = gpu();
    let mut report = Report::default();
    let mut rng = Rng::new("thread ranks");
    for lens in layouts() {
        let mats: Vec<Vec<common::ops::Mat2>> =
            lens.iter().map(|&n| random_values(&mut rng, n)).collect();
        let maps: Vec<Vec<common::ops::Affine>> =
            lens.iter().map(|&n| random_values(&mut rng, n)).collect();
        let ints: Vec<Vec<i32>> = lens.iter().map(|&n| random_values(&mut rng, n)).collect();
        for algorithm in ALGORITHMS {
            for mode in MODES {
                let case = |op: &str| format!("{op} {algorithm:?} {mode:?} {lens:?}");
                report.record(
                    case("matmul"),
                    threads_on_one_gpu::<MatMul>(&gpu, algorithm, mode, &mats),
                );
                report.record(
                    case("compose"),
                    threads_on_one_gpu::<Compose>(&gpu, algorithm, mode, &maps),
                );
                report.record(
                    case("add i32"),
                    threads_on_one_gpu::<Add<i32>>(&gpu, algorithm, mode, &ints),
                );
            }
        }
    }
    report.finish("thread ranks on one gpu");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn thread_ranks_past_2_pow_31_elements() {
    // Two shards of 2^31 + 5 bytes each (u8 wrapping sums): every index past i32 and u32 range
    // on the second rank's global positions, and in each shard past 2^31.
    let gpu = gpu();
    let n = (1usize << 31) + 5;
    let shards: Vec<Vec<u8>> = (0..2u64)
        .map(|r| {
            (0..n as u64)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8 ^ r as u8)
                .collect()
        })
        .collect();
    let mut report = Report::default();
    for mode in MODES {
        report.record(
            format!("add u8 single-pass {mode:?} 2 x (2^31 + 5)"),
            threads_on_one_gpu::<Add<u8>>(&gpu, Algorithm::SinglePass, mode, &shards),
        );
    }
    report.finish("past 2^31");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn thread_ranks_with_mismatched_modes_fail_everywhere() {
    let gpu = gpu();
    let exchanges = ThreadExchange::group_with_timeout(2, Duration::from_secs(60));
    let results: Vec<Result<(), ShardError>> = std::thread::scope(|s| {
        let handles: Vec<_> = exchanges
            .into_iter()
            .enumerate()
            .map(|(rank, x)| {
                let gpu = &gpu;
                s.spawn(move || {
                    let mode = MODES[rank];
                    ShardedScanner::<Add<i32>, _>::new(gpu, opts(Algorithm::SinglePass, mode), x)
                        .map(|_| ())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for result in results {
        assert!(
            matches!(result, Err(ShardError::Mismatch { what: "mode", .. })),
            "{result:?}"
        );
    }
}

#[cfg(feature = "nccl")]
mod nccl {
    use super::*;
    use scan_runtime::cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
    use scan_runtime::sharded::nccl::{
        all_gpus, nccl_available, scan_all, scanners_for_devices, NcclExchange, NcclId,
    };
    use std::sync::Arc;

    /// Whether NCCL tests can run here (skipped loudly without libnccl, unless required).
    fn nccl_or_skip(test: &str) -> bool {
        if std::env::var("NCCL_NVLS_ENABLE").as_deref() != Ok("0") {
            // NVLink multicast must stay off on the shared machines.
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
        match nccl_available() {
            Ok(()) => true,
            Err(e) if std::env::var("SCANGEN_REQUIRE_NCCL").as_deref() == Ok("1") => {
                panic!("{test}: SCANGEN_REQUIRE_NCCL=1 but {e}")
            }
            Err(e) => {
                eprintln!("skipping {test}: {e}");
                false
            }
        }
    }

    /// Shard lengths for `size` ranks: uneven, one empty when there are several.
    fn shard_lens(size: usize, case: usize) -> Vec<usize> {
        (0..size)
            .map(|r| match (case, r) {
                (1, 0) if size > 1 => 0,
                (2, r) if size > 1 && r == size - 1 => 0,
                _ => 100_000 * (r + 1) + 37 * case + r,
            })
            .collect()
    }

    /// Single process, one thread: every GPU, collectives grouped (scan_all), random shards of
    /// the lengths `shard_lens` gives for three cases.
    fn one_process<Op: ScanOp>(
        mode: ScanMode,
        algorithm: Algorithm,
        seed: &str,
    ) -> Result<(), String>
    where
        Op::Elem: TestValue + DeviceRepr,
    {
        let gpus = all_gpus().map_err(|e| e.to_string())?;
        let mut rng = Rng::new(seed);
        for case in 0..3 {
            let shards: Vec<Vec<Op::Elem>> = shard_lens(gpus.len(), case)
                .iter()
                .map(|&n| random_values(&mut rng, n))
                .collect();
            one_process_shards::<Op>(&gpus, mode, algorithm, &shards)
                .map_err(|e| format!("case {case}: {e}"))?;
        }
        Ok(())
    }

    /// One grouped scan of `shards` (one per GPU of `gpus`), compared with the reference.
    fn one_process_shards<Op: ScanOp>(
        gpus: &[Gpu],
        mode: ScanMode,
        algorithm: Algorithm,
        shards: &[Vec<Op::Elem>],
    ) -> Result<(), String>
    where
        Op::Elem: TestValue + DeviceRepr,
    {
        let mut ranks =
            scanners_for_devices::<Op>(gpus, opts(algorithm, mode), Duration::from_secs(60))
                .map_err(|e| e.to_string())?;
        let lens: Vec<usize> = shards.iter().map(Vec::len).collect();
        let (expected, _) = reference::<Op>(shards, mode);
        let streams: Vec<Arc<CudaStream>> = gpus.iter().map(|g| g.new_stream().unwrap()).collect();
        let upload = |s: &Vec<Op::Elem>, st: &Arc<CudaStream>| {
            if s.is_empty() {
                st.null().unwrap()
            } else {
                st.clone_htod(s).unwrap()
            }
        };
        let inputs: Vec<_> = shards
            .iter()
            .zip(&streams)
            .map(|(s, st)| upload(s, st))
            .collect();
        // Outputs start as a copy of the input (never zeros): a rank that writes nothing fails.
        let mut outputs: Vec<_> = shards
            .iter()
            .zip(&streams)
            .map(|(s, st)| upload(s, st))
            .collect();
        let in_ptrs: Vec<u64> = inputs
            .iter()
            .zip(&streams)
            .map(|(b, st)| b.device_ptr(st).0)
            .collect();
        let out_ptrs: Vec<u64> = outputs
            .iter_mut()
            .zip(&streams)
            .map(|(b, st)| b.device_ptr_mut(st).0)
            .collect();
        let lens64: Vec<u64> = lens.iter().map(|&n| n as u64).collect();
        // SAFETY: live buffers of `lens` elements on each rank's device and stream.
        unsafe { scan_all(&mut ranks, &streams, &in_ptrs, &out_ptrs, &lens64) }
            .map_err(|e| e.to_string())?;
        for (r, rank) in ranks.iter().enumerate() {
            rank.synchronize(&streams[r]).map_err(|e| e.to_string())?;
            let got = if lens[r] == 0 {
                Vec::new()
            } else {
                streams[r].clone_dtoh(&outputs[r]).unwrap()
            };
            compare(&format!("rank {r}"), &got, &expected[r])?;
        }
        Ok(())
    }

    #[test]
    #[ignore = "needs NVIDIA GPUs and NCCL"]
    fn nccl_one_process_every_gpu() {
        let _gpu = gpu();
        if !nccl_or_skip("nccl_one_process_every_gpu") {
            return;
        }
        let mut report = Report::default();
        for algorithm in ALGORITHMS {
            for mode in MODES {
                let case = |op: &str| format!("{op} {algorithm:?} {mode:?}");
                report.record(
                    case("matmul"),
                    one_process::<MatMul>(mode, algorithm, "np matmul"),
                );
                report.record(
                    case("compose"),
                    one_process::<Compose>(mode, algorithm, "np compose"),
                );
                report.record(
                    case("add i32"),
                    one_process::<Add<i32>>(mode, algorithm, "np add"),
                );
            }
        }
        report.finish("nccl one process");
    }

    #[test]
    #[ignore = "needs NVIDIA GPUs and NCCL"]
    fn nccl_one_process_past_2_pow_31_elements() {
        // One shard of 2^31 + 5 bytes per GPU (u8 wrapping sums): indices past i32 and u32 range
        // within every shard, and the second rank's global positions past 2^32.
        let _gpu = gpu();
        if !nccl_or_skip("nccl_one_process_past_2_pow_31_elements") {
            return;
        }
        let gpus = all_gpus().unwrap();
        let n = (1usize << 31) + 5;
        let shards: Vec<Vec<u8>> = (0..gpus.len() as u64)
            .map(|r| {
                (0..n as u64)
                    .map(|i| {
                        (i.wrapping_mul(2_654_435_761) >> 7) as u8 ^ (r as u8).wrapping_mul(37)
                    })
                    .collect()
            })
            .collect();
        let mut report = Report::default();
        for mode in MODES {
            report.record(
                format!("add u8 single-pass {mode:?} {} x (2^31 + 5)", gpus.len()),
                one_process_shards::<Add<u8>>(&gpus, mode, Algorithm::SinglePass, &shards),
            );
        }
        report.finish("nccl past 2^31");
    }

    /// The child side of `nccl_process_per_gpu`: runs only when the parent set the rank's
    /// environment; otherwise passes at once.
    #[test]
    #[ignore = "needs NVIDIA GPUs and NCCL"]
    fn nccl_rank_child() {
        let (Ok(rank), Ok(size), Ok(id_file)) = (
            std::env::var("SCANGEN_TEST_RANK"),
            std::env::var("SCANGEN_TEST_WORLD_SIZE"),
            std::env::var("SCANGEN_TEST_NCCL_ID_FILE"),
        ) else {
            return;
        };
        let (rank, size): (usize, usize) = (rank.parse().unwrap(), size.parse().unwrap());
        let id =
            NcclId::read_file(std::path::Path::new(&id_file), Duration::from_secs(60)).unwrap();
        let gpu = Gpu::new(rank).unwrap();
        if std::env::var("SCANGEN_TEST_FAIL_RANK_0").is_ok() {
            rank_0_fails_before_the_collective(&gpu, &id, rank, size);
            return;
        }
        let x = NcclExchange::init_rank(&gpu, &id, rank, size, Duration::from_secs(60)).unwrap();
        let mode = if rank % 2 == 0 || std::env::var("SCANGEN_TEST_MISMATCH").is_err() {
            ScanMode::Exclusive
        } else {
            ScanMode::Inclusive
        };
        let built = ShardedScanner::<MatMul, _>::new(&gpu, opts(Algorithm::SinglePass, mode), x);
        if std::env::var("SCANGEN_TEST_MISMATCH").is_ok() {
            match built {
                Err(ShardError::Mismatch { .. }) => return,
                other => panic!("rank {rank}: expected a mismatch, got {other:?}"),
            }
        }
        let mut scanner = built.unwrap();
        // Every rank makes the same shards from the same seed, scans its own.
        let mut rng = Rng::new("per process");
        let lens = shard_lens(size, 1);
        let shards: Vec<Vec<common::ops::Mat2>> =
            lens.iter().map(|&n| random_values(&mut rng, n)).collect();
        let (expected, _) = reference::<MatMul>(&shards, mode);
        let got = scanner.scan(&shards[rank]).unwrap();
        compare(&format!("rank {rank}"), &got, &expected[rank]).unwrap();
        println!("rank {rank} of {size}: ok");
    }

    /// A rank process of `nccl_rank_failing_before_the_collective_per_process`: rank 0 gives
    /// an output of the wrong length (a typed error before any launch); every other rank must
    /// get an error, not hang, within the exchange's 5 s timeout and some slack.
    fn rank_0_fails_before_the_collective(gpu: &Gpu, id: &NcclId, rank: usize, size: usize) {
        let x = NcclExchange::init_rank(gpu, id, rank, size, Duration::from_secs(5)).unwrap();
        let mut scanner = ShardedScanner::<Add<i32>, _>::new(
            gpu,
            opts(Algorithm::SinglePass, ScanMode::Inclusive),
            x,
        )
        .unwrap();
        let stream = gpu.new_stream().unwrap();
        let input = stream.clone_htod(&vec![1i32; 1000]).unwrap();
        let mut output = stream
            .alloc_zeros::<i32>(if rank == 0 { 999 } else { 1000 })
            .unwrap();
        let start = std::time::Instant::now();
        let result = scanner
            .scan_device(&stream, &input, &mut output)
            .and_then(|()| scanner.synchronize(&stream));
        println!("rank {rank}: {result:?} after {:?}", start.elapsed());
        assert!(result.is_err(), "rank {rank} should fail");
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "rank {rank} took {:?}",
            start.elapsed()
        );
    }

    fn spawn_ranks(size: usize, scenario: Option<&str>) -> Vec<std::process::ExitStatus> {
        let dir = tempfile_dir();
        let id_file = dir.join("nccl-id");
        NcclId::new().unwrap().write_file(&id_file).unwrap();
        let exe = std::env::current_exe().unwrap();
        let children: Vec<_> = (0..size)
            .map(|rank| {
                let mut cmd = std::process::Command::new(&exe);
                cmd.args([
                    "--ignored",
                    "--exact",
                    "nccl::nccl_rank_child",
                    "--nocapture",
                ])
                .env("SCANGEN_TEST_RANK", rank.to_string())
                .env("SCANGEN_TEST_WORLD_SIZE", size.to_string())
                .env("SCANGEN_TEST_NCCL_ID_FILE", &id_file)
                .env("NCCL_NVLS_ENABLE", "0");
                if let Some(var) = scenario {
                    cmd.env(var, "1");
                }
                cmd.spawn().unwrap()
            })
            .collect();
        // A hung rank is the failure this guards against: kill what is still running after
        // the deadline rather than hang the test.
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        let outputs = children
            .into_iter()
            .map(|mut c| loop {
                match c.try_wait().unwrap() {
                    Some(status) => break status,
                    None if std::time::Instant::now() >= deadline => {
                        let _ = c.kill();
                        break c.wait().unwrap();
                    }
                    None => std::thread::sleep(Duration::from_millis(50)),
                }
            })
            .collect();
        let _ = std::fs::remove_dir_all(&dir);
        outputs
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("scangen-nccl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    #[ignore = "needs NVIDIA GPUs and NCCL"]
    fn nccl_process_per_gpu() {
        let _gpu = gpu();
        if !nccl_or_skip("nccl_process_per_gpu") {
            return;
        }
        let size = all_gpus().unwrap().len();
        for (scenario, what) in [
            (None, "scan"),
            (Some("SCANGEN_TEST_MISMATCH"), "mismatched modes"),
            (
                Some("SCANGEN_TEST_FAIL_RANK_0"),
                "rank 0 failing before the collective",
            ),
        ] {
            if scenario.is_some() && size < 2 {
                continue;
            }
            let start = std::time::Instant::now();
            let outputs = spawn_ranks(size, scenario);
            println!(
                "{what}: {size} rank processes done in {:?}",
                start.elapsed()
            );
            for (rank, out) in outputs.iter().enumerate() {
                assert!(out.success(), "{what}: rank {rank} failed: {out:?}");
            }
        }
    }

    #[test]
    #[ignore = "needs NVIDIA GPUs and NCCL"]
    fn nccl_rank_failing_before_the_collective_times_out_the_others() {
        let _gpu = gpu();
        if !nccl_or_skip("nccl_rank_failing_before_the_collective") {
            return;
        }
        let gpus = all_gpus().unwrap();
        if gpus.len() < 2 {
            eprintln!("skipping: needs 2 GPUs");
            return;
        }
        let exchanges = NcclExchange::for_devices(&gpus, Duration::from_secs(5)).unwrap();
        let start = std::time::Instant::now();
        let results: Vec<Result<(), ShardError>> = std::thread::scope(|s| {
            let handles: Vec<_> = gpus
                .iter()
                .zip(exchanges)
                .enumerate()
                .map(|(rank, (gpu, x))| {
                    s.spawn(move || {
                        let mut scanner = ShardedScanner::<Add<i32>, _>::new(
                            gpu,
                            opts(Algorithm::SinglePass, ScanMode::Inclusive),
                            x,
                        )?;
                        let stream = gpu.new_stream().unwrap();
                        let input = stream.clone_htod(&vec![1i32; 1000]).unwrap();
                        let mut output = stream
                            .alloc_zeros::<i32>(if rank == 0 { 999 } else { 1000 })
                            .unwrap();
                        scanner.scan_device(&stream, &input, &mut output)?;
                        scanner.synchronize(&stream)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "took {:?}",
            start.elapsed()
        );
        for (rank, result) in results.into_iter().enumerate() {
            println!("rank {rank}: {result:?}");
            assert!(result.is_err(), "rank {rank} should fail");
        }
    }
}
