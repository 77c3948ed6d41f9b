//! Bad input and a missing GPU stack give a clear, typed error: never a panic, never a wrong
//! result.
//!
//! The first part runs without a GPU (a plain `cargo test`): no driver, no NVRTC, the `auto`
//! fallback and `SCANGEN_BACKEND=gpu`, compile errors, damaged disk-cache entries, several
//! processes filling one cache, length and size checks. Where an environment variable must
//! differ (they are process-wide), the test re-runs this executable as a child process
//! (`child_process_entry`, selected by `SCANGEN_ERROR_PATHS_CHILD`) and checks its exit status
//! and output. Tests that need NVRTC skip with a message when it is absent, unless
//! `SCANGEN_REQUIRE_NVRTC=1` (run `. scripts/cuda-tools.sh` first).
//!
//! The second part needs an NVIDIA GPU and is `#[ignore]`d like gpu_suite.rs: run with
//! `--ignored` on a GPU machine; run that way without one it FAILS, saying what is missing.

mod common;

use common::{gpu, nvrtc_or_skip};
use scan_core::{ElementType, OpSpec, PrimType};
use scan_runtime::builtin::Add;
use scan_runtime::compile::{
    cache_key, compile, compile_cached, compile_options, compiler_identity, nvrtc_available,
    nvrtc_version, KernelImage,
};
use scan_runtime::disk_cache::{decode, key_hex, HEADER_LEN};
use scan_runtime::launch_plan::{self, MAX_GRID_BLOCKS};
use scan_runtime::{
    auto, Algorithm, AnyScanner, CpuScanner, DiskCache, Gpu, Scan, ScanError, ScanMode, ScanOp,
    ScanOptions, TuningPolicy,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Child processes

/// Selects the role of a child process; unset in the parent.
const CHILD_ENV: &str = "SCANGEN_ERROR_PATHS_CHILD";
/// The cache directory a child fills.
const DIR_ENV: &str = "SCANGEN_ERROR_PATHS_DIR";
/// Comma-separated tags naming the sources a child compiles (see `source_for`).
const TAG_ENV: &str = "SCANGEN_ERROR_PATHS_TAG";
/// A file whose appearance starts the children that fill one cache at once.
const GO_ENV: &str = "SCANGEN_ERROR_PATHS_GO";
/// The test that runs a child's role.
const CHILD_TEST: &str = "child_process_entry";

/// A command re-running this test executable as a child in `role`: only `child_process_entry`,
/// with the environment of this process minus the variables that steer backend choice.
fn child_command(role: &str) -> Command {
    let exe = std::env::current_exe().expect("the test executable's path");
    let mut cmd = Command::new(exe);
    cmd.args(["--exact", CHILD_TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, role)
        .env_remove("SCANGEN_BACKEND")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

enum ChildOutcome {
    /// The role ran and passed.
    Passed,
    /// The role could not run here (the line saying why).
    Skipped(String),
}

/// Waits for a child, asserting it exited successfully after running its role.
fn wait_child(role: &str, child: std::process::Child) -> ChildOutcome {
    let out = child.wait_with_output().expect("waiting for the child");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "child `{role}` failed ({}); its output:\n{text}",
        out.status
    );
    let skip = format!("CHILD-SKIP {role}:");
    if let Some(line) = text.lines().find_map(|l| l.find(&skip).map(|i| &l[i..])) {
        return ChildOutcome::Skipped(line.to_string());
    }
    // libtest prints "test name ... " before the test's own output, on the same line.
    assert!(
        text.lines()
            .any(|l| l.trim_end().ends_with(&format!("CHILD-OK {role}"))),
        "child `{role}` exited successfully but did not run its role; its output:\n{text}"
    );
    ChildOutcome::Passed
}

fn run_child(role: &str, cmd: &mut Command) -> ChildOutcome {
    wait_child(role, cmd.spawn().expect("spawning the child test process"))
}

/// The child side: does nothing in the parent (where `SCANGEN_ERROR_PATHS_CHILD` is unset).
#[test]
fn child_process_entry() {
    let Ok(role) = std::env::var(CHILD_ENV) else {
        return;
    };
    match role.as_str() {
        "no-nvrtc" => child_no_nvrtc(),
        "auto-default" => child_auto_default(),
        "auto-cpu" => child_auto_cpu(),
        "auto-gpu" => child_auto_gpu(),
        "fill-cache" => child_fill_cache(),
        "fill-same" => child_fill_same(),
        other => panic!("unknown child role {other:?}"),
    }
}

fn child_skip(role: &str, why: &str) {
    println!("CHILD-SKIP {role}: {why}");
}

fn child_ok(role: &str) {
    println!("CHILD-OK {role}");
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

/// A small kernel that compiles: the sources of the cache tests are this plus a comment.
const GOOD: &str = r#"extern "C" __global__ void scangen_test(float* out, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * out[i];
}
"#;

/// The architecture the no-GPU compile tests target (any NVRTC of CUDA 11.1+ knows it).
const SM: u32 = 80;

/// The source named by `tag`: distinct per tag, so no process-wide memory cache holds it.
fn source_for(tag: &str) -> String {
    format!("{GOOD}// scangen error_paths test source {tag}\n")
}

/// A tag no other test run uses.
fn unique_tag(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{what}-{}-{nanos}", std::process::id())
}

type Warnings = Arc<Mutex<Vec<String>>>;

/// A disk cache in `dir` that collects its warnings.
fn collecting_cache(dir: PathBuf) -> (DiskCache, Warnings) {
    let warnings: Warnings = Arc::default();
    let sink = warnings.clone();
    let cache = DiskCache::with_warnings(
        Some(dir),
        Arc::new(move |m: &str| sink.lock().unwrap().push(m.to_string())),
    );
    (cache, warnings)
}

fn key_for(source: &str) -> [u8; 32] {
    cache_key(
        source,
        SM,
        &compile_options(SM),
        nvrtc_version().expect("NVRTC version"),
    )
}

fn cubin(image: &KernelImage) -> &[u8] {
    match image {
        KernelImage::Cubin(bytes) => {
            assert_eq!(&bytes[..4], b"\x7fELF", "a CUBIN is an ELF file");
            bytes
        }
        other => panic!("expected a CUBIN, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// No driver, no NVRTC, and what `auto` makes of it

#[scan_testenv::needs(no_cuda_driver)]
#[test]
fn no_driver_is_a_no_driver_error() {
    if scan_runtime::driver_available().is_ok() {
        println!("skipping no_driver_is_a_no_driver_error: a CUDA driver is present here");
        return;
    }
    for ordinal in [0, 3] {
        let err = Gpu::new(ordinal).unwrap_err();
        assert!(
            matches!(err, ScanError::NoDriver { .. }),
            "Gpu::new({ordinal}): {err:?}"
        );
        assert!(err.is_unavailable());
        insta::allow_duplicates! {
            insta::assert_snapshot!(err.to_string(), @"no CUDA driver: libcuda.so.1 could not be loaded (no NVIDIA driver installed)");
        }
    }
    let err = Gpu::with_disk_cache(0, DiskCache::new(None)).unwrap_err();
    assert!(matches!(err, ScanError::NoDriver { .. }), "{err:?}");
}

#[test]
fn no_nvrtc_is_a_no_nvrtc_error_not_a_panic() {
    // No LD_LIBRARY_PATH: the pip-installed NVRTC of scripts/cuda-tools.sh is out of reach.
    let mut cmd = child_command("no-nvrtc");
    cmd.env("LD_LIBRARY_PATH", "");
    match run_child("no-nvrtc", &mut cmd) {
        ChildOutcome::Passed => {}
        ChildOutcome::Skipped(why) => {
            println!("skipping no_nvrtc_is_a_no_nvrtc_error_not_a_panic: {why}")
        }
    }
}

fn child_no_nvrtc() {
    let role = "no-nvrtc";
    if nvrtc_available().is_ok() {
        return child_skip(
            role,
            "libnvrtc is found even with LD_LIBRARY_PATH empty (through ldconfig or a system \
             CUDA install), so its absence cannot be simulated",
        );
    }
    let err = nvrtc_available().unwrap_err();
    assert!(matches!(err, ScanError::NoNvrtc { .. }), "{err:?}");
    assert!(err.is_unavailable());
    insta::assert_snapshot!(err.to_string(), @"no NVRTC: libnvrtc.so could not be loaded (searched libnvrtc.so, libnvrtc.so.12, ...); install the CUDA toolkit's NVRTC or put its lib directory on LD_LIBRARY_PATH");
    // Every entry point that needs NVRTC says so, rather than panicking inside cudarc.
    let err = compile(GOOD, &compile_options(SM)).unwrap_err();
    assert!(matches!(err, ScanError::NoNvrtc { .. }), "compile: {err:?}");
    let err = compile_cached(GOOD, SM, &DiskCache::new(None)).unwrap_err();
    assert!(
        matches!(err, ScanError::NoNvrtc { .. }),
        "compile_cached: {err:?}"
    );
    let err = nvrtc_version().unwrap_err();
    assert!(
        matches!(err, ScanError::NoNvrtc { .. }),
        "nvrtc_version: {err:?}"
    );
    child_ok(role);
}

/// `"cpu: rayon, 16 threads (x)"` -> `"cpu: rayon, N threads (x)"`.
fn without_thread_count(backend: &str) -> String {
    let Some(rest) = backend.strip_prefix("cpu: rayon, ") else {
        return backend.to_string();
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    format!("cpu: rayon, N{}", &rest[digits..])
}

#[test]
fn auto_falls_back_to_the_cpu_and_says_why() {
    for (role, backend) in [("auto-default", None), ("auto-cpu", Some("cpu"))] {
        let mut cmd = child_command(role);
        if let Some(backend) = backend {
            cmd.env("SCANGEN_BACKEND", backend);
        }
        match run_child(role, &mut cmd) {
            ChildOutcome::Passed => {}
            ChildOutcome::Skipped(why) => {
                println!("skipping auto_falls_back_to_the_cpu_and_says_why ({role}): {why}")
            }
        }
    }
}

fn child_auto_default() {
    let role = "auto-default";
    if scan_runtime::driver_available().is_ok() {
        return child_skip(role, "a CUDA driver is present, so auto does not fall back");
    }
    let mut s = auto::<Add<u32>>(ScanOptions::default()).expect("auto falls back, not fails");
    assert!(matches!(s, AnyScanner::Cpu(_)), "{s:?}");
    assert!(!s.is_gpu());
    insta::assert_snapshot!(without_thread_count(&s.backend_name()), @"cpu: rayon, N threads (no CUDA driver found)");
    assert_eq!(s.scan(&[1, 2, 3]).unwrap(), vec![1, 3, 6]);
    child_ok(role);
}

fn child_auto_cpu() {
    let role = "auto-cpu";
    assert_eq!(std::env::var("SCANGEN_BACKEND").as_deref(), Ok("cpu"));
    let mut s = auto::<Add<u32>>(ScanOptions::default().exclusive()).expect("forced CPU");
    assert!(matches!(s, AnyScanner::Cpu(_)), "{s:?}");
    insta::assert_snapshot!(without_thread_count(&s.backend_name()), @"cpu: rayon, N threads (SCANGEN_BACKEND=cpu)");
    assert_eq!(s.scan(&[1, 2, 3]).unwrap(), vec![0, 1, 3]);
    child_ok(role);
}

#[scan_testenv::needs(no_cuda_driver)]
#[test]
fn scangen_backend_gpu_makes_a_missing_gpu_an_error() {
    let role = "auto-gpu";
    match run_child(role, child_command(role).env("SCANGEN_BACKEND", "gpu")) {
        ChildOutcome::Passed => {}
        ChildOutcome::Skipped(why) => {
            println!("skipping scangen_backend_gpu_makes_a_missing_gpu_an_error: {why}")
        }
    }
}

fn child_auto_gpu() {
    let role = "auto-gpu";
    assert_eq!(std::env::var("SCANGEN_BACKEND").as_deref(), Ok("gpu"));
    if scan_runtime::driver_available().is_ok() {
        return child_skip(role, "a CUDA driver is present, so the GPU is not missing");
    }
    let err = auto::<Add<u32>>(ScanOptions::default()).unwrap_err();
    assert!(matches!(err, ScanError::NoDriver { .. }), "{err:?}");
    insta::assert_snapshot!(err.to_string(), @"no CUDA driver: libcuda.so.1 could not be loaded (no NVIDIA driver installed)");
    child_ok(role);
}

// ---------------------------------------------------------------------------------------------
// Compile errors

#[scan_testenv::needs(nvrtc)]
#[test]
fn compile_error_shows_the_numbered_source_line() {
    if !nvrtc_or_skip("compile_error_shows_the_numbered_source_line") {
        return;
    }
    let broken = GOOD.replace("2.0f * out[i]", "2.0f * undefined_thing");
    let err = compile(&broken, &compile_options(SM)).unwrap_err();
    let ScanError::Compile { log, annotated } = &err else {
        panic!("expected ScanError::Compile, got {err:?}")
    };
    assert!(log.contains("undefined_thing"), "{log}");
    let text = err.to_string();
    assert!(
        text.starts_with("NVRTC compilation failed:\nscangen.cu(3): error"),
        "{text}"
    );
    assert!(text.ends_with(annotated.as_str()), "{text}");
    // The excerpt after NVRTC's own log (whose wording depends on the NVRTC version).
    let excerpt = &text[text.find("\n\nerror at ").expect("an excerpt") + 2..];
    insta::assert_snapshot!(excerpt, @r#"
    error at scangen.cu:3:
      1 | extern "C" __global__ void scangen_test(float* out, unsigned long long n) {
      2 |     unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    > 3 |     if (i < n) out[i] = 2.0f * undefined_thing;
      4 | }
    "#);

    // Through the caching path: the same error, and nothing is cached.
    let tmp = tempfile::tempdir().unwrap();
    let (disk, warnings) = collecting_cache(tmp.path().join("cache"));
    let broken = format!("{broken}// {}\n", unique_tag("broken"));
    let err = compile_cached(&broken, SM, &disk).unwrap_err();
    assert!(matches!(err, ScanError::Compile { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("> 3 |     if (i < n) out[i] = 2.0f * undefined_thing;"),
        "{err}"
    );
    assert!(
        !disk.entry_path(&key_for(&broken)).unwrap().exists(),
        "a failed compile left a cache entry"
    );
    assert!(warnings.lock().unwrap().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Damaged disk-cache entries

/// Damages the valid entry of `tag`'s source with `damage(path, good bytes)`, compiles it
/// again through `compile_cached`, and checks the compile succeeded, exactly one warning was
/// emitted and the entry on disk is valid again. Returns the warning, with the entry's path
/// written as `<entry>`.
fn damage_and_recompile(
    disk: &DiskCache,
    warnings: &Warnings,
    tag: &str,
    damage: impl FnOnce(&Path, &[u8]),
) -> String {
    let source = source_for(tag);
    let key = key_for(&source);
    let path = disk.entry_path(&key).unwrap();
    let good = std::fs::read(&path).expect("the child process wrote the entry");
    decode(&good, &key).expect("the entry the child wrote is valid");
    damage(&path, &good);
    let damaged = std::fs::read(&path).unwrap();
    assert!(
        decode(&damaged, &key).is_err(),
        "{tag}: the damage went unnoticed"
    );

    warnings.lock().unwrap().clear();
    let image = compile_cached(&source, SM, disk)
        .unwrap_or_else(|e| panic!("{tag}: a damaged cache entry must not fail the compile: {e}"));
    let fresh = cubin(&image);

    let after = std::fs::read(&path).unwrap();
    let entry =
        decode(&after, &key).unwrap_or_else(|why| panic!("{tag}: entry not rewritten: {why}"));
    assert!(
        entry.payload.ends_with(fresh),
        "{tag}: the rewritten entry holds another image"
    );
    let w = std::mem::take(&mut *warnings.lock().unwrap());
    assert_eq!(w.len(), 1, "{tag}: expected one warning, got {w:?}");
    w[0].replace(&path.display().to_string(), "<entry>")
}

#[scan_testenv::needs(nvrtc)]
#[test]
fn damaged_cache_entries_are_warned_about_recompiled_and_rewritten() {
    if !nvrtc_or_skip("damaged_cache_entries_are_warned_about_recompiled_and_rewritten") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    let base = unique_tag("damaged");
    let tag = |case: &str| format!("{base}-{case}");
    let cases = [
        "flipped",
        "magic",
        "short-header",
        "short-payload",
        "foreign",
        "other",
    ];
    // A child process writes the valid entries: compiling them here would put the sources in
    // this process's memory cache, and compile_cached would never read the damaged files.
    let tags: Vec<String> = cases.iter().map(|c| tag(c)).collect();
    let fill = run_child(
        "fill-cache",
        child_command("fill-cache")
            .env(DIR_ENV, &dir)
            .env(TAG_ENV, tags.join(",")),
    );
    assert!(matches!(fill, ChildOutcome::Passed));
    let (disk, warnings) = collecting_cache(dir);

    // One payload byte flipped.
    let w = damage_and_recompile(&disk, &warnings, &tag("flipped"), |path, good| {
        let mut bytes = good.to_vec();
        let i = bytes.len() - 10;
        bytes[i] ^= 0x5a;
        std::fs::write(path, bytes).unwrap();
    });
    insta::assert_snapshot!(w, @"ignoring damaged cache entry <entry>: checksum mismatch; recompiling and rewriting it");

    // The magic number overwritten.
    let w = damage_and_recompile(&disk, &warnings, &tag("magic"), |path, good| {
        let mut bytes = good.to_vec();
        bytes[..8].copy_from_slice(b"GARBAGE!");
        std::fs::write(path, bytes).unwrap();
    });
    insta::assert_snapshot!(w, @"ignoring damaged cache entry <entry>: not a scangen cache file (bad magic); recompiling and rewriting it");

    // Truncated inside the header.
    let w = damage_and_recompile(&disk, &warnings, &tag("short-header"), |path, good| {
        std::fs::write(path, &good[..50]).unwrap();
    });
    insta::assert_snapshot!(w, @"ignoring damaged cache entry <entry>: truncated header (50 of 88 bytes); recompiling and rewriting it");

    // Truncated inside the payload.
    let mut lengths = (0, 0, 0);
    let w = damage_and_recompile(&disk, &warnings, &tag("short-payload"), |path, good| {
        let body = &good[HEADER_LEN..];
        let identity = compiler_identity(SM, &compile_options(SM), nvrtc_version().unwrap());
        assert!(
            body.starts_with(identity.as_bytes()),
            "the entry records its compiler"
        );
        lengths = (
            body.len() - 100,
            identity.len(),
            body.len() - identity.len(),
        );
        std::fs::write(path, &good[..good.len() - 100]).unwrap();
    });
    assert_eq!(
        w,
        format!(
            "ignoring damaged cache entry <entry>: {} bytes follow the header, which announces \
             {} (identity) + {} (payload); recompiling and rewriting it",
            lengths.0, lengths.1, lengths.2
        )
    );

    // Replaced by another key's (intact) entry.
    let other_key = key_for(&source_for(&tag("other")));
    let other_path = disk.entry_path(&other_key).unwrap();
    let w = damage_and_recompile(&disk, &warnings, &tag("foreign"), |path, _| {
        std::fs::copy(&other_path, path).unwrap();
    });
    let w = w.replace(&key_hex(&other_key), "<other key>");
    insta::assert_snapshot!(w, @"ignoring damaged cache entry <entry>: entry belongs to key <other key>; recompiling and rewriting it");
    // The other entry itself was left alone.
    let other = std::fs::read(&other_path).unwrap();
    decode(&other, &other_key).expect("the other entry is intact");
}

/// Compiles each tag's source into the cache in `$SCANGEN_ERROR_PATHS_DIR`, with no warning.
fn child_fill_cache() {
    let role = "fill-cache";
    let dir = std::env::var_os(DIR_ENV).expect("cache dir");
    let tags = std::env::var(TAG_ENV).expect("tags");
    compile_each_without_warnings(dir.into(), tags.split(','));
    child_ok(role);
}

/// Compiles each tag's source through a cache in `dir`; the cache must not warn.
fn compile_each_without_warnings<'a>(dir: PathBuf, tags: impl IntoIterator<Item = &'a str>) {
    let (disk, warnings) = collecting_cache(dir);
    for tag in tags {
        let image = compile_cached(&source_for(tag), SM, &disk)
            .unwrap_or_else(|e| panic!("compiling {tag}: {e}"));
        cubin(&image);
    }
    assert!(
        warnings.lock().unwrap().is_empty(),
        "{:?}",
        warnings.lock().unwrap()
    );
}

// ---------------------------------------------------------------------------------------------
// Several processes filling one cache

#[scan_testenv::needs(nvrtc)]
#[test]
fn four_processes_fill_one_cache_entry_at_once() {
    if !nvrtc_or_skip("four_processes_fill_one_cache_entry_at_once") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // The cache directory does not exist yet: the children race to create it too.
    let dir = tmp.path().join("cache");
    let go = tmp.path().join("go");
    let tag = unique_tag("shared");
    let role = "fill-same";
    let children: Vec<_> = (0..4)
        .map(|_| {
            child_command(role)
                .env(DIR_ENV, &dir)
                .env(TAG_ENV, &tag)
                .env(GO_ENV, &go)
                .spawn()
                .expect("spawning a child")
        })
        .collect();
    // Start them together, once all are up (each waits for this file).
    std::thread::sleep(Duration::from_millis(200));
    std::fs::write(&go, b"go").unwrap();
    for child in children {
        assert!(matches!(wait_child(role, child), ChildOutcome::Passed));
    }
    let source = source_for(&tag);
    let key = key_for(&source);
    let (disk, warnings) = collecting_cache(dir.clone());
    let entry = std::fs::read(disk.entry_path(&key).unwrap()).expect("the entry exists");
    let payload = decode(&entry, &key)
        .expect("the final entry decodes")
        .payload;
    // Exactly one file: no temporary files left behind by any writer.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // And this process (whose memory cache never saw the source) loads it without complaint.
    let image = compile_cached(&source, SM, &disk).unwrap();
    assert!(payload.ends_with(cubin(&image)));
    assert!(
        warnings.lock().unwrap().is_empty(),
        "{:?}",
        warnings.lock().unwrap()
    );
}

fn child_fill_same() {
    let role = "fill-same";
    let dir = std::env::var_os(DIR_ENV).expect("cache dir");
    let tag = std::env::var(TAG_ENV).expect("tag");
    let go = PathBuf::from(std::env::var_os(GO_ENV).expect("go file"));
    let started = Instant::now();
    while !go.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the parent never said go"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    compile_each_without_warnings(dir.into(), [tag.as_str()]);
    child_ok(role);
}

// ---------------------------------------------------------------------------------------------
// Lengths and sizes

#[test]
fn cpu_length_mismatch_leaves_the_output_untouched() {
    let mut s = CpuScanner::<Add<u32>>::new(ScanOptions::default());
    let mut short = [9u32; 2];
    let err = s.scan_into(&[1, 2, 3], &mut short).unwrap_err();
    assert!(
        matches!(
            err,
            ScanError::LengthMismatch {
                input: 3,
                output: 2
            }
        ),
        "{err:?}"
    );
    assert_eq!(short, [9, 9]);
    insta::assert_snapshot!(err.to_string(), @"length mismatch: input has 3 elements, output has 2");

    let mut long = [9u32; 5];
    let err = s.scan_into(&[1, 2, 3], &mut long).unwrap_err();
    assert!(
        matches!(
            err,
            ScanError::LengthMismatch {
                input: 3,
                output: 5
            }
        ),
        "{err:?}"
    );
    assert_eq!(long, [9; 5]);
    assert!(!err.is_unavailable());

    // The same through the backend-neutral interface.
    let mut any: AnyScanner<Add<u32>> = AnyScanner::Cpu(CpuScanner::new(ScanOptions::default()));
    let err = Scan::scan_into(&mut any, &[], &mut short).unwrap_err();
    assert!(
        matches!(
            err,
            ScanError::LengthMismatch {
                input: 0,
                output: 2
            }
        ),
        "{err:?}"
    );
    assert_eq!(short, [9, 9]);
    // And the scanner still works.
    let mut out = [0u32; 3];
    s.scan_into(&[1, 2, 3], &mut out).unwrap();
    assert_eq!(out, [1, 3, 6]);
}

#[test]
fn too_large_input_is_a_clear_error() {
    let n = MAX_GRID_BLOCKS * 2 + 1;
    for algorithm in Algorithm::ALL {
        let err = launch_plan::plan(algorithm, n, 2).unwrap_err();
        assert!(
            matches!(
                err,
                ScanError::TooLarge { n: got, blocks, max_blocks }
                    if got == n && blocks == MAX_GRID_BLOCKS + 1 && max_blocks == MAX_GRID_BLOCKS
            ),
            "{algorithm}: {err:?}"
        );
        insta::allow_duplicates! {
            insta::assert_snapshot!(err.to_string(), @"input of 4294967295 elements needs a grid of 2147483648 blocks, more than the 2147483647 CUDA allows; use a larger tile");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// On the GPU

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn gpu_out_of_memory_is_a_typed_error() {
    let gpu = gpu("error paths");
    // 1 TiB: more than any current GPU has.
    let bytes = 1usize << 40;
    let err = gpu.alloc_zeros::<u8>(bytes).unwrap_err();
    assert!(
        matches!(err, ScanError::OutOfMemory { bytes: b, .. } if b == bytes as u64),
        "{err:?}"
    );
    insta::assert_snapshot!(err.to_string(), @"out of device memory allocating 1099511627776 bytes for a buffer requested with Gpu::alloc_zeros");
    // A byte count that does not fit in usize is the same error, not an overflow panic.
    let err = gpu.alloc_zeros::<u64>(usize::MAX / 4).unwrap_err();
    assert!(matches!(err, ScanError::OutOfMemory { .. }), "{err:?}");
    // The failed allocations leave the device usable.
    let ok = gpu.alloc_zeros::<u32>(1000).expect("a small allocation");
    assert_eq!(ok.len(), 1000);
    let mut s = gpu
        .scanner::<Add<u32>>(ScanOptions::default())
        .expect("scanner");
    assert_eq!(s.scan(&[1, 2, 3]).unwrap(), vec![1, 3, 6]);
    println!("gpu suite (gpu_out_of_memory_is_a_typed_error): 1 cases passed, 0 failed");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn gpu_resident_tiles_past_one_wave_are_a_typed_error() {
    let gpu = gpu("error paths");
    // Tiles of 32 elements, one per 32-thread block, tile t in block t under a cooperative launch.
    let policy = TuningPolicy {
        resident_tiles: true,
        ..TuningPolicy::new(32, 1)
    };
    let mut s = gpu
        .scanner::<Add<u32>>(ScanOptions::default().policy(policy))
        .expect("scanner");
    let small: Vec<u32> = (0..1031u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let expected: Vec<u32> = small
        .iter()
        .scan(0u32, |acc, &x| {
            *acc = acc.wrapping_add(x);
            Some(*acc)
        })
        .collect();
    assert_eq!(
        s.scan(&small).unwrap(),
        expected,
        "one wave of resident tiles"
    );
    // More blocks than an SM ever holds (32) times the SMs: refused before any launch.
    let blocks = 32 * u64::from(gpu.sm_count()) + 1;
    let big = vec![1u32; (blocks * 32) as usize];
    let err = s.scan(&big).unwrap_err();
    assert!(
        matches!(err, ScanError::ResidentGrid { blocks: b, resident } if b == blocks && resident < blocks),
        "{err:?}"
    );
    // Nothing was launched: the scanner goes on.
    assert_eq!(s.scan(&small).unwrap(), expected);
    println!(
        "gpu suite (gpu_resident_tiles_past_one_wave_are_a_typed_error): 1 cases passed, 0 failed"
    );
}

/// An operator whose device declaration says 8-byte elements while its Rust type has 4.
struct WrongLayout;

impl ScanOp for WrongLayout {
    type Elem = u32;
    fn identity() -> u32 {
        0
    }
    fn combine(a: u32, b: u32) -> u32 {
        a.wrapping_add(b)
    }
    fn device_op() -> OpSpec {
        OpSpec {
            name: "wrong_layout".into(),
            element: ElementType::Prim(PrimType::U64),
            lhs: "a".into(),
            rhs: "b".into(),
            combine_body: "return a + b;".into(),
            identity_body: "return 0;".into(),
            word_form: None,
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn gpu_element_layout_mismatch_is_caught_before_compiling() {
    let gpu = gpu("error paths");
    let err = gpu
        .scanner::<WrongLayout>(ScanOptions::default())
        .unwrap_err();
    assert!(
        matches!(
            err,
            ScanError::ElementLayout {
                declared: 8,
                actual: 4
            }
        ),
        "{err:?}"
    );
    insta::assert_snapshot!(err.to_string(), @"element layout mismatch: the operator declares 8-byte elements, the Rust type is 4 bytes");
    println!(
        "gpu suite (gpu_element_layout_mismatch_is_caught_before_compiling): 1 cases passed, 0 failed"
    );
}

/// An operator whose combine body does not compile.
struct Broken;

impl ScanOp for Broken {
    type Elem = u32;
    fn identity() -> u32 {
        0
    }
    fn combine(a: u32, b: u32) -> u32 {
        a.wrapping_add(b)
    }
    fn device_op() -> OpSpec {
        OpSpec {
            name: "broken".into(),
            element: ElementType::Prim(PrimType::U32),
            lhs: "a".into(),
            rhs: "b".into(),
            combine_body: "return a + no_such_variable;".into(),
            identity_body: "return 0;".into(),
            word_form: None,
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn gpu_broken_operator_gives_an_annotated_compile_error() {
    let gpu = gpu("error paths");
    for algorithm in Algorithm::ALL {
        // The scanner compiles each kernel on first use: the error comes from the first scan,
        // before anything is launched, and the data is left as it was.
        let mut scanner = gpu
            .scanner::<Broken>(common::opts(algorithm, ScanMode::Inclusive))
            .unwrap_or_else(|e| panic!("{algorithm}: the source generates: {e}"));
        let mut data = vec![7u32, 1, 2];
        let err = scanner.scan_in_place_host(&mut data).unwrap_err();
        assert_eq!(data, [7, 1, 2], "{algorithm}: the data is untouched");
        let ScanError::Compile { annotated, .. } = &err else {
            panic!("{algorithm}: expected ScanError::Compile, got {err:?}")
        };
        let text = err.to_string();
        assert!(
            text.starts_with("NVRTC compilation failed:\n"),
            "{algorithm}: {text}"
        );
        assert!(text.contains(annotated.as_str()));
        // The offending line of the generated source, numbered and marked.
        let marked = text
            .lines()
            .find(|l| l.starts_with("> "))
            .unwrap_or_else(|| panic!("{algorithm}: no marked source line in:\n{text}"));
        assert!(
            marked.contains(" | ") && marked.contains("no_such_variable"),
            "{algorithm}: the marked line is not the broken combine: {marked}\n{text}"
        );
    }
    println!(
        "gpu suite (gpu_broken_operator_gives_an_annotated_compile_error): 3 cases passed, 0 failed"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn gpu_invalid_policy_is_a_codegen_error() {
    let gpu = gpu("error paths");
    let policy = TuningPolicy::new(1000, 4);
    let err = gpu
        .scanner::<Add<u32>>(ScanOptions::default().policy(policy))
        .unwrap_err();
    assert!(matches!(err, ScanError::Codegen(_)), "{err:?}");
    insta::assert_snapshot!(err.to_string(), @"code generation failed: invalid tuning policy: block_threads = 1000 must be a positive multiple of 32 (the warp size)");
    println!("gpu suite (gpu_invalid_policy_is_a_codegen_error): 1 cases passed, 0 failed");
}
