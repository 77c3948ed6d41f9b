//! NVRTC compilation of generated sources to device code, with a process-wide memory cache in
//! front of the [`DiskCache`].
//!
//! Kernels are compiled to CUBIN for the device's own architecture (`sm_XX`): a CUBIN loads on
//! any driver that knows the architecture, whereas PTX from an NVRTC newer than the driver would
//! fail to JIT.

use crate::disk_cache::{CacheKey, DiskCache, FORMAT_VERSION};
use crate::error::ScanError;
use cudarc::nvrtc::result as nvrtc;
use cudarc::nvrtc::sys;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::sync::{Arc, Mutex, OnceLock};

/// Name the program is compiled under; NVRTC prefixes log locations with it.
const PROGRAM_NAME: &str = "scangen.cu";

/// Compiled device code, ready for `cuModuleLoadData`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelImage {
    /// Machine code for one architecture.
    Cubin(Vec<u8>),
    /// PTX text (NUL-terminated), kept for completeness; NVRTC of CUDA >= 11.1 gives CUBIN.
    Ptx(Vec<u8>),
}

impl KernelImage {
    /// The image as cudarc's loadable type.
    pub fn to_loadable(&self) -> cudarc::nvrtc::Ptx {
        match self {
            KernelImage::Cubin(bytes) => cudarc::nvrtc::Ptx::from_binary(bytes.clone()),
            KernelImage::Ptx(text) => {
                let text = text.strip_suffix(&[0]).unwrap_or(text);
                cudarc::nvrtc::Ptx::from_src(String::from_utf8_lossy(text).into_owned())
            }
        }
    }

    /// Serialized for the disk cache: one tag byte, then the image.
    fn to_bytes(&self) -> Vec<u8> {
        let (tag, body) = match self {
            KernelImage::Cubin(b) => (b'C', b),
            KernelImage::Ptx(b) => (b'P', b),
        };
        let mut out = Vec::with_capacity(body.len() + 1);
        out.push(tag);
        out.extend_from_slice(body);
        out
    }

    fn from_bytes(bytes: &[u8]) -> Option<KernelImage> {
        match bytes.split_first()? {
            (b'C', body) if !body.is_empty() => Some(KernelImage::Cubin(body.to_vec())),
            (b'P', body) if !body.is_empty() => Some(KernelImage::Ptx(body.to_vec())),
            _ => None,
        }
    }
}

/// Whether libnvrtc can be loaded. Checked once per process: cudarc panics on the first call
/// into a library it cannot load, so nothing calls NVRTC before this says yes.
pub fn nvrtc_available() -> Result<(), ScanError> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    if *PRESENT.get_or_init(culib_present!(sys::is_culib_present())) {
        Ok(())
    } else {
        Err(ScanError::NoNvrtc {
            detail: "libnvrtc.so could not be loaded (searched libnvrtc.so, libnvrtc.so.12, ...); \
                     install the CUDA toolkit's NVRTC or put its lib directory on LD_LIBRARY_PATH"
                .into(),
        })
    }
}

/// The NVRTC version as (major, minor).
pub fn nvrtc_version() -> Result<(i32, i32), ScanError> {
    nvrtc_available()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present; the call writes two ints.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|source| ScanError::Nvrtc {
            step: "querying the NVRTC version",
            source,
        })?;
    Ok((major, minor))
}

/// The NVRTC options used for compute capability `sm` (e.g. 90).
///
/// `--fmad=false`: a multiply and an add stay two IEEE operations, as in the Rust the operator
/// was written in (contracted, they overflow differently: docs/operator-language.md).
pub fn compile_options(sm: u32) -> Vec<String> {
    vec![
        "--std=c++17".into(),
        format!("--gpu-architecture=sm_{sm}"),
        "--fmad=false".into(),
    ]
}

/// The compiler a kernel image comes from, as the disk cache records it in each entry and checks
/// it on load: scangen's version, NVRTC's, the target and the options. (NVRTC reports only
/// major.minor; its patch releases share an identity.)
pub fn compiler_identity(sm: u32, options: &[String], nvrtc: (i32, i32)) -> String {
    format!(
        "scangen {} | NVRTC {}.{} | sm_{sm} | {}",
        env!("CARGO_PKG_VERSION"),
        nvrtc.0,
        nvrtc.1,
        options.join(" ")
    )
}

/// The cache key of a compilation: everything that can change its output, and the layout of
/// the entry that stores it (an entry of an older layout is then a plain miss).
pub fn cache_key(source: &str, sm: u32, options: &[String], nvrtc: (i32, i32)) -> CacheKey {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        // Length-prefixed, so no two different field lists hash the same bytes.
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(b"scangen kernel cache");
    field(&FORMAT_VERSION.to_le_bytes());
    field(env!("CARGO_PKG_VERSION").as_bytes());
    field(source.as_bytes());
    field(format!("sm_{sm}").as_bytes());
    for o in options {
        field(o.as_bytes());
    }
    field(format!("nvrtc {}.{}", nvrtc.0, nvrtc.1).as_bytes());
    h.finalize().into()
}

/// Compiles `source` for `sm`, using the process-wide memory cache, then `disk`, then NVRTC
/// (storing what it compiled in both caches).
pub fn compile_cached(
    source: &str,
    sm: u32,
    disk: &DiskCache,
) -> Result<Arc<KernelImage>, ScanError> {
    static MEMORY: OnceLock<Mutex<HashMap<CacheKey, Arc<KernelImage>>>> = OnceLock::new();
    let options = compile_options(sm);
    let nvrtc = nvrtc_version()?;
    let key = cache_key(source, sm, &options, nvrtc);
    let identity = compiler_identity(sm, &options, nvrtc);
    let _span = tracing::debug_span!("kernel", sm, key = %short_key(&key)).entered();
    let memory = MEMORY.get_or_init(Default::default);
    if let Some(hit) = memory.lock().expect("compile cache poisoned").get(&key) {
        tracing::trace!("kernel cache hit (memory)");
        return Ok(hit.clone());
    }
    let image = match disk
        .load(&key, &identity)
        .as_deref()
        .map(KernelImage::from_bytes)
    {
        Some(Some(image)) => {
            tracing::debug!(dir = ?disk.dir(), "kernel cache hit (disk)");
            image
        }
        found => {
            if found.is_some() {
                disk.warn("cache entry holds no kernel image; recompiling");
            }
            tracing::debug!(dir = ?disk.dir(), "kernel cache miss");
            let image = {
                // At most compile_threads() compiles at once, however many threads ask.
                let asked = std::time::Instant::now();
                let _slot = CompileSlots::process().take();
                tracing::debug!(
                    waited_ms = asked.elapsed().as_millis() as u64,
                    "compile slot taken"
                );
                compile(source, &options)?
            };
            disk.store(&key, &identity, &image.to_bytes());
            image
        }
    };
    let image = Arc::new(image);
    memory
        .lock()
        .expect("compile cache poisoned")
        .insert(key, image.clone());
    Ok(image)
}

/// How many NVRTC compiles may run at once in this process: `SCANGEN_COMPILE_THREADS` if set (at
/// least 1), else the host's cores, at most [`DEFAULT_COMPILE_THREADS`]. The register ladder
/// compiles that many rungs side by side, and `Scanner::prepare` builds its input-size shapes
/// side by side under the same bound.
pub fn compile_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let asked = std::env::var("SCANGEN_COMPILE_THREADS").ok();
        match asked.and_then(|v| v.trim().parse::<usize>().ok()) {
            Some(threads) => threads.max(1),
            None => cores.clamp(1, DEFAULT_COMPILE_THREADS),
        }
    })
}

/// NVRTC compiles at once by default. Compiles side by side slow each other down (each holds a
/// few hundred MB and shares memory bandwidth): on a 16-core H200 host, the 5 rungs a byte max
/// scan's mid-size shape needed after its first took about twice one compile together. Of 1, 2,
/// 4 and 8 at a time, 8 started that scan fastest (2^23 elements, empty cache: first scan 5.9-6.1
/// s -> 2.8-3.6 s) and no width lost at the default shape (BENCHMARKS.md, session 43).
pub const DEFAULT_COMPILE_THREADS: usize = 8;

/// A counting semaphore: at most `n` holders of a slot at once ([`compile_threads`] NVRTC
/// compiles, for the process's one instance, [`CompileSlots::process`]).
struct CompileSlots {
    free: Mutex<usize>,
    freed: std::sync::Condvar,
}

/// A held slot, given back on drop.
struct CompileSlot<'a>(&'a CompileSlots);

impl CompileSlots {
    fn new(n: usize) -> CompileSlots {
        CompileSlots {
            free: Mutex::new(n.max(1)),
            freed: std::sync::Condvar::new(),
        }
    }

    fn process() -> &'static CompileSlots {
        static SLOTS: OnceLock<CompileSlots> = OnceLock::new();
        SLOTS.get_or_init(|| CompileSlots::new(compile_threads()))
    }

    /// Waits for a free slot and holds it.
    fn take(&self) -> CompileSlot<'_> {
        let mut free = self.free.lock().expect("compile slots poisoned");
        while *free == 0 {
            free = self.freed.wait(free).expect("compile slots poisoned");
        }
        *free -= 1;
        CompileSlot(self)
    }
}

impl Drop for CompileSlot<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().expect("compile slots poisoned") += 1;
        self.0.freed.notify_one();
    }
}

/// Compiles `source` with NVRTC and `options` (no caching).
pub fn compile(source: &str, options: &[String]) -> Result<KernelImage, ScanError> {
    nvrtc_available()?;
    let _span = tracing::info_span!("nvrtc_compile", source_bytes = source.len()).entered();
    let started = std::time::Instant::now();
    let program = Program::new(source)?;
    // SAFETY: `program` holds a live nvrtcProgram.
    let compiled = unsafe { nvrtc::compile_program(program.raw, options) };
    let log = program.log();
    if compiled.is_err() {
        let log = log.unwrap_or_else(|e| format!("(log unavailable: {e})"));
        let annotated = annotate(&log, source);
        tracing::debug!(log = %log, "NVRTC compile failed");
        return Err(ScanError::Compile { log, annotated });
    }
    let image = program.cubin().or_else(|_| program.ptx())?;
    tracing::info!(
        ms = started.elapsed().as_millis() as u64,
        image = match &image {
            KernelImage::Cubin(_) => "cubin",
            KernelImage::Ptx(_) => "ptx",
        },
        options = %options.join(" "),
        "compiled with NVRTC"
    );
    Ok(image)
}

/// The first 8 bytes of a cache key in hex, to tell kernels apart in logs.
fn short_key(key: &CacheKey) -> String {
    key[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// An nvrtcProgram, destroyed on drop. Owns the C strings the program points into.
struct Program {
    raw: sys::nvrtcProgram,
    _source: CString,
    _name: CString,
}

impl Program {
    fn new(source: &str) -> Result<Program, ScanError> {
        let source_c = CString::new(source).map_err(|_| ScanError::Compile {
            log: "generated source contains a NUL byte".into(),
            annotated: "generated source contains a NUL byte".into(),
        })?;
        let name = CString::new(PROGRAM_NAME).expect("no NUL");
        let raw =
            nvrtc::create_program(&source_c, Some(&name)).map_err(|source| ScanError::Nvrtc {
                step: "creating the program",
                source,
            })?;
        Ok(Program {
            raw,
            _source: source_c,
            _name: name,
        })
    }

    fn log(&self) -> Result<String, ScanError> {
        // SAFETY: live program; the log is NUL-terminated.
        let raw =
            unsafe { nvrtc::get_program_log(self.raw) }.map_err(|source| ScanError::Nvrtc {
                step: "reading the compile log",
                source,
            })?;
        Ok(c_chars_to_string(&raw))
    }

    fn cubin(&self) -> Result<KernelImage, ScanError> {
        let step = |source| ScanError::Nvrtc {
            step: "reading the CUBIN",
            source,
        };
        let mut size = 0usize;
        // SAFETY: live, compiled program; the buffer has the size NVRTC asked for.
        unsafe { sys::nvrtcGetCUBINSize(self.raw, &mut size) }
            .result()
            .map_err(step)?;
        if size == 0 {
            // Compiled for a virtual architecture: there is no CUBIN, only PTX.
            return Err(ScanError::Nvrtc {
                step: "reading the CUBIN (empty)",
                source: nvrtc::NvrtcError(sys::nvrtcResult::NVRTC_ERROR_INVALID_INPUT),
            });
        }
        let mut buf = vec![0u8; size];
        unsafe { sys::nvrtcGetCUBIN(self.raw, buf.as_mut_ptr() as *mut c_char) }
            .result()
            .map_err(step)?;
        Ok(KernelImage::Cubin(buf))
    }

    fn ptx(&self) -> Result<KernelImage, ScanError> {
        // SAFETY: live, compiled program.
        let raw = unsafe { nvrtc::get_ptx(self.raw) }.map_err(|source| ScanError::Nvrtc {
            step: "reading the PTX",
            source,
        })?;
        Ok(KernelImage::Ptx(raw.iter().map(|&c| c as u8).collect()))
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by create_program, destroyed once.
        let _ = unsafe { nvrtc::destroy_program(self.raw) };
    }
}

fn c_chars_to_string(raw: &[c_char]) -> String {
    let bytes: Vec<u8> = raw.iter().map(|&c| c as u8).collect();
    match CStr::from_bytes_until_nul(&bytes) {
        Ok(s) => s.to_string_lossy().into_owned(),
        Err(_) => String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// How many source lines to show on each side of a reported location.
const CONTEXT_LINES: usize = 3;

/// The compile log followed, for each `file(line): error|warning` location in it, by the
/// numbered source lines around it, the reported line marked with `>`.
pub fn annotate(log: &str, source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = log.trim_end().to_string();
    let mut shown = std::collections::BTreeSet::new();
    for entry in log.lines() {
        let Some((line_no, what)) = parse_location(entry) else {
            continue;
        };
        if !shown.insert(line_no) || line_no == 0 || line_no > lines.len() {
            continue;
        }
        out.push_str(&format!("\n\n{what} at {PROGRAM_NAME}:{line_no}:\n"));
        let first = line_no.saturating_sub(CONTEXT_LINES).max(1);
        let last = (line_no + CONTEXT_LINES).min(lines.len());
        let width = last.to_string().len();
        for n in first..=last {
            let marker = if n == line_no { '>' } else { ' ' };
            out.push_str(&format!("{marker} {n:>width$} | {}\n", lines[n - 1]));
        }
    }
    out
}

/// `scangen.cu(12): error: ...` -> (12, "error").
fn parse_location(entry: &str) -> Option<(usize, &'static str)> {
    let open = entry.find('(')?;
    let close = open + entry[open..].find("): ")?;
    let line_no = entry[open + 1..close].parse().ok()?;
    let rest = &entry[close + 3..];
    let what = if rest.starts_with("error") {
        "error"
    } else if rest.starts_with("warning") {
        "warning"
    } else {
        return None;
    };
    Some((line_no, what))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether NVRTC tests can run here; without NVRTC they skip, loudly, unless
    /// `SCANGEN_REQUIRE_NVRTC=1` makes a missing NVRTC a failure.
    pub(crate) fn nvrtc_or_skip(test: &str) -> bool {
        if nvrtc_available().is_ok() {
            return true;
        }
        if std::env::var("SCANGEN_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!("{test}: SCANGEN_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded (run `. scripts/cuda-tools.sh`)");
        }
        eprintln!("skipping {test}: libnvrtc not found (run `. scripts/cuda-tools.sh` to test compilation)");
        false
    }

    const GOOD: &str = r#"extern "C" __global__ void scangen_test(float* out, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * out[i];
}
"#;

    #[test]
    fn annotation_marks_the_failing_line() {
        let source = (1..=20)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let log = "scangen.cu(10): error: identifier \"x\" is undefined\n\n1 error detected";
        let out = annotate(log, &source);
        assert!(out.starts_with(log), "{out}");
        assert!(out.contains("error at scangen.cu:10:"), "{out}");
        assert!(out.contains("> 10 | line 10\n"), "{out}");
        assert!(
            out.contains("   7 | line 7\n") || out.contains("  7 | line 7\n"),
            "{out}"
        );
        assert!(out.contains("13 | line 13\n"), "{out}");
        assert!(
            !out.contains("line 6\n") && !out.contains("line 14"),
            "{out}"
        );
    }

    #[test]
    fn annotation_clamps_at_the_edges_and_ignores_other_lines() {
        let out = annotate(
            "scangen.cu(1): warning: meh\nscangen.cu(99): error: gone\nnote: x(3): y",
            "a\nb",
        );
        assert!(out.contains("> 1 | a\n  2 | b\n"), "{out}");
        assert!(!out.contains("99:"), "{out}");
    }

    #[test]
    fn cache_keys_depend_on_every_input() {
        let base = cache_key("src", 90, &compile_options(90), (12, 9));
        assert_ne!(base, cache_key("src2", 90, &compile_options(90), (12, 9)));
        assert_ne!(base, cache_key("src", 80, &compile_options(90), (12, 9)));
        assert_ne!(base, cache_key("src", 90, &compile_options(80), (12, 9)));
        assert_ne!(base, cache_key("src", 90, &compile_options(90), (13, 0)));
        assert_eq!(base, cache_key("src", 90, &compile_options(90), (12, 9)));
    }

    #[test]
    fn compiler_identity_names_every_part() {
        let id = compiler_identity(90, &compile_options(90), (12, 9));
        assert_eq!(
            id,
            format!(
                "scangen {} | NVRTC 12.9 | sm_90 | --std=c++17 --gpu-architecture=sm_90 --fmad=false",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert_ne!(id, compiler_identity(80, &compile_options(80), (12, 9)));
        assert_ne!(id, compiler_identity(90, &compile_options(90), (12, 8)));
    }

    #[test]
    fn image_bytes_round_trip() {
        for image in [
            KernelImage::Cubin(vec![1, 2, 3]),
            KernelImage::Ptx(b".version\0".to_vec()),
        ] {
            assert_eq!(KernelImage::from_bytes(&image.to_bytes()), Some(image));
        }
        assert_eq!(KernelImage::from_bytes(b""), None);
        assert_eq!(KernelImage::from_bytes(b"Z123"), None);
    }

    #[scan_testenv::needs(nvrtc)]
    #[test]
    fn nvrtc_compiles_to_cubin() {
        if !nvrtc_or_skip("nvrtc_compiles_to_cubin") {
            return;
        }
        match compile(GOOD, &compile_options(80)).unwrap() {
            KernelImage::Cubin(bytes) => assert_eq!(&bytes[..4], b"\x7fELF"),
            other => panic!("expected a CUBIN, got {other:?}"),
        }
    }

    #[scan_testenv::needs(nvrtc)]
    #[test]
    fn nvrtc_errors_are_annotated() {
        if !nvrtc_or_skip("nvrtc_errors_are_annotated") {
            return;
        }
        let broken = GOOD.replace("2.0f * out[i]", "2.0f * undefined_thing");
        let err = compile(&broken, &compile_options(80)).unwrap_err();
        let ScanError::Compile { log, annotated } = &err else {
            panic!("{err:?}")
        };
        assert!(log.contains("undefined_thing"), "{log}");
        assert!(
            annotated.contains("> 3 |     if (i < n) out[i] = 2.0f * undefined_thing;"),
            "{annotated}"
        );
        assert!(
            err.to_string()
                .starts_with("NVRTC compilation failed:\nscangen.cu(3): error"),
            "{err}"
        );
    }

    #[test]
    fn compile_slots_bound_how_many_hold_one_at_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let slots = CompileSlots::new(2);
        let (held, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|scope| {
            for _ in 0..6 {
                scope.spawn(|| {
                    let _slot = slots.take();
                    let now = held.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    held.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), 2, "two at once, never more");
        assert_eq!(*slots.free.lock().unwrap(), 2, "every slot given back");
    }

    #[scan_testenv::needs(nvrtc)]
    #[test]
    fn compile_cached_fills_disk_and_memory_caches() {
        if !nvrtc_or_skip("compile_cached_fills_disk_and_memory_caches") {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let disk = DiskCache::new(Some(tmp.path().to_path_buf()));
        // A source unique to this test run, so the process-wide memory cache cannot answer.
        let source = format!("{GOOD}// {:?}\n", std::time::SystemTime::now());
        let first = compile_cached(&source, 80, &disk).unwrap();
        let nvrtc = nvrtc_version().unwrap();
        let key = cache_key(&source, 80, &compile_options(80), nvrtc);
        let identity = compiler_identity(80, &compile_options(80), nvrtc);
        let stored = disk.load(&key, &identity).expect("written to disk");
        assert_eq!(KernelImage::from_bytes(&stored).as_ref(), Some(&*first));
        // The memory cache answers the second call with the same Arc.
        let second = compile_cached(&source, 80, &disk).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
    }
}
