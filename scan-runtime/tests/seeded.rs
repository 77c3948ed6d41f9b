//! Scans with an initial value read from device memory and the total written to device memory
//! (`ScanExtras`), for every algorithm and mode, primitive (packed 1- and 2-byte ones too) and
//! non-commutative struct ops, at awkward sizes, against the CPU reference; chained scans that
//! pass a total on as the next initial value without the host, also replayed from a CUDA graph
//! with new data each time.
//!
//! Needs an NVIDIA GPU: every test is `#[ignore]`d (see gpu_suite.rs).

use scan_runtime::builtin::{Add, Max};
use scan_runtime::cpu;
use scan_runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use scan_runtime::{Algorithm, Gpu, ScanError, ScanExtras, ScanMode, ScanOp};

mod common;
use common::ops::{Compose, LastOfRun, MatMul};
use common::{
    awkward_sizes, download, first_mismatch, opts, random_values, upload, Rng, TestValue,
};

fn gpu() -> Gpu {
    common::gpu("seeded")
}

/// Which extras a case asks for.
#[derive(Clone, Copy, Debug)]
enum Extras {
    Init,
    Total,
    Both,
}

fn case<Op: ScanOp>(
    gpu: &Gpu,
    algorithm: Algorithm,
    mode: ScanMode,
    n: usize,
    extras: Extras,
    rng: &mut Rng,
) -> Result<(), String>
where
    Op::Elem: TestValue,
{
    let stream = gpu.new_stream().map_err(|e| e.to_string())?;
    let mut scanner = gpu
        .scanner::<Op>(opts(algorithm, mode))
        .map_err(|e| e.to_string())?;
    let input = random_values::<Op::Elem>(rng, n);
    let init = random_values::<Op::Elem>(rng, 1)[0];
    let (with_init, with_total) = match extras {
        Extras::Init => (true, false),
        Extras::Total => (false, true),
        Extras::Both => (true, true),
    };
    let seed = if with_init { init } else { Op::identity() };
    let mut expected = input.clone();
    let expected_total = cpu::scan_sequential_with_init::<Op>(&input, &mut expected, seed, mode);

    let d_in = upload(&stream, &input);
    let mut d_out = upload(&stream, &input);
    let d_init = upload(&stream, &[init]);
    // Filled with something that is not the answer, so a missing write shows.
    let mut d_total = upload(&stream, &random_values::<Op::Elem>(rng, 1));
    let mut ex = ScanExtras::new();
    if with_init {
        ex = ex.init(&d_init);
    }
    if with_total {
        ex = ex.total(&mut d_total);
    }
    scanner
        .scan_device_with(&stream, &d_in, &mut d_out, ex)
        .map_err(|e| e.to_string())?;
    first_mismatch(&expected, &download(&stream, &d_out, &input))?;
    if with_total {
        let got = download(&stream, &d_total, &[init])[0];
        if !Op::Elem::same(got, expected_total) {
            return Err(format!("total {got:?}, expected {expected_total:?}"));
        }
    }
    Ok(())
}

fn matrix<Op: ScanOp>(gpu: &Gpu, label: &str, passed: &mut usize, failed: &mut Vec<String>)
where
    Op::Elem: TestValue,
{
    let mut rng = Rng::new(label);
    for algorithm in Algorithm::ALL {
        let tile = gpu
            .scanner::<Op>(opts(algorithm, ScanMode::Inclusive))
            .map(|s| s.tile_items() as usize)
            .unwrap_or(1024);
        for mode in ScanMode::ALL {
            let sizes = awkward_sizes(tile);
            let all = [Extras::Init, Extras::Total, Extras::Both];
            for (i, &n) in sizes.iter().enumerate() {
                // Every combination for the empty input (its total comes from a copy, not a
                // kernel), one per size otherwise.
                let extras = if n == 0 {
                    &all[..]
                } else {
                    &all[i % 3..i % 3 + 1]
                };
                for &extras in extras {
                    let name = format!("{label} {algorithm} {mode} n={n} {extras:?}");
                    match case::<Op>(gpu, algorithm, mode, n, extras, &mut rng) {
                        Ok(()) => *passed += 1,
                        Err(why) => {
                            println!("FAIL {name}: {why}");
                            failed.push(name);
                        }
                    }
                }
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn init_and_total_for_every_algorithm_mode_and_op() {
    let gpu = gpu();
    let (mut passed, mut failed) = (0, Vec::new());
    matrix::<Add<u32>>(&gpu, "add u32", &mut passed, &mut failed);
    matrix::<Max<i64>>(&gpu, "max i64", &mut passed, &mut failed);
    // Packed tiles: on sm_90 their thread scans run before the look-back and the prefix (here
    // the initial value, for tile 0) joins at the store (TuningPolicy::defer_tile_prefix).
    matrix::<Add<u8>>(&gpu, "add u8", &mut passed, &mut failed);
    matrix::<Max<i16>>(&gpu, "max i16", &mut passed, &mut failed);
    matrix::<Compose>(&gpu, "compose Affine", &mut passed, &mut failed);
    matrix::<LastOfRun>(&gpu, "last_of_run Tally", &mut passed, &mut failed);
    matrix::<MatMul>(&gpu, "matmul Mat2", &mut passed, &mut failed);
    println!(
        "seeded (init_and_total): {passed} cases passed, {} failed",
        failed.len()
    );
    assert!(failed.is_empty());
}

/// Scans `a` then `b`, the second starting from the first's total through device memory, as
/// one scan of `a ++ b` would; captured once and replayed with new data before each replay.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn chained_scans_pass_the_total_on_without_the_host_also_in_a_graph() {
    let gpu = gpu();
    let mut rng = Rng::new("chained");
    let (mut passed, mut failed) = (0, Vec::new());
    for algorithm in Algorithm::ALL {
        for mode in ScanMode::ALL {
            let name = format!("matmul {algorithm} {mode}");
            match chained(&gpu, algorithm, mode, &mut rng) {
                Ok(()) => passed += 1,
                Err(why) => {
                    println!("FAIL {name}: {why}");
                    failed.push(name);
                }
            }
        }
    }
    println!(
        "seeded (chained): {passed} cases passed, {} failed",
        failed.len()
    );
    assert!(failed.is_empty());
}

fn chained(gpu: &Gpu, algorithm: Algorithm, mode: ScanMode, rng: &mut Rng) -> Result<(), String> {
    let (na, nb) = (70_001usize, 3_333usize);
    let stream = gpu.new_stream().map_err(|e| e.to_string())?;
    let mut scanner = gpu
        .scanner::<MatMul>(opts(algorithm, mode))
        .map_err(|e| e.to_string())?;
    scanner
        .prepare(na as u64, &stream)
        .map_err(|e| e.to_string())?;
    let fresh = |n: usize| {
        // SAFETY: written before every read (uploads, then the scans).
        unsafe { stream.alloc::<common::ops::Mat2>(n) }.expect("alloc")
    };
    let (mut a, mut b, mut out_a, mut out_b, mut carry) =
        (fresh(na), fresh(nb), fresh(na), fresh(nb), fresh(1));
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)
        .map_err(|e| e.to_string())?;
    let recorded = scanner
        .scan_device_with(&stream, &a, &mut out_a, ScanExtras::new().total(&mut carry))
        .and_then(|()| {
            scanner.scan_device_with(&stream, &b, &mut out_b, ScanExtras::new().init(&carry))
        });
    let graph = stream.end_capture(CUgraphInstantiate_flags(0));
    recorded.map_err(|e| format!("capture: {e}"))?;
    let graph = graph
        .map_err(|e| e.to_string())?
        .ok_or("the capture recorded nothing")?;
    for replay in 0..200 {
        let ha = random_values::<common::ops::Mat2>(rng, na);
        let hb = random_values::<common::ops::Mat2>(rng, nb);
        stream.memcpy_htod(&ha, &mut a).map_err(|e| e.to_string())?;
        stream.memcpy_htod(&hb, &mut b).map_err(|e| e.to_string())?;
        graph.launch().map_err(|e| e.to_string())?;
        let joined: Vec<_> = ha.iter().chain(&hb).copied().collect();
        let mut expected = joined.clone();
        cpu::scan_sequential::<MatMul>(&joined, &mut expected, mode);
        let mut got = download(&stream, &out_a, &ha);
        got.extend(download(&stream, &out_b, &hb));
        first_mismatch(&expected, &got).map_err(|e| format!("replay {replay}: {e}"))?;
    }
    Ok(())
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn empty_extra_buffers_are_typed_errors_before_any_launch() {
    let gpu = gpu();
    let stream = gpu.new_stream().expect("stream");
    let mut scanner = gpu
        .scanner::<Add<u32>>(opts(Algorithm::SinglePass, ScanMode::Inclusive))
        .expect("scanner");
    let d_in = upload(&stream, &[1u32, 2, 3]);
    let mut d_out = upload(&stream, &[0u32; 3]);
    let empty = upload::<u32>(&stream, &[]);
    let result =
        scanner.scan_device_with(&stream, &d_in, &mut d_out, ScanExtras::new().init(&empty));
    assert!(
        matches!(result, Err(ScanError::EmptyExtra { what: "init" })),
        "{result:?}"
    );
    assert_eq!(
        download(&stream, &d_out, &[9u32; 3]),
        [0, 0, 0],
        "nothing ran"
    );
    // The host API: init and total round trip, on the same scanner.
    let (scan, total) = scanner
        .scan_with_init(&[1, 2, 3], 10)
        .expect("scan_with_init");
    assert_eq!((scan, total), (vec![11, 13, 16], 16));
    assert_eq!(
        scanner.scan_with_init(&[], 10).expect("empty"),
        (vec![], 10)
    );
}
