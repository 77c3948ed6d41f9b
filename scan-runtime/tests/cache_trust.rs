#![cfg(unix)]
//! The disk cache loads only what the user owns: one test per rule of `cache_trust`, on real
//! directories and files.
//!
//! Ownership by another user is simulated with `chown`, which needs root (CI runs as root);
//! elsewhere those tests skip, saying so. Permission bits need no privilege.

mod common;

use common::nvrtc_or_skip;
use scan_runtime::compile::{
    cache_key, compile_cached, compile_options, compiler_identity, nvrtc_version, KernelImage,
};
use scan_runtime::disk_cache::{decode, encode, MAX_ENTRY_BYTES};
use scan_runtime::{CacheTrust, DiskCache};
use std::fs;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Not the test user, not root: the owner of planted files.
const OTHER_UID: u32 = 4242;
const ID: &str = "test compiler";
const KEY: [u8; 32] = [0x5c; 32];

type Warnings = Arc<Mutex<Vec<String>>>;

fn collecting(dir: &Path, trust: CacheTrust) -> (DiskCache, Warnings) {
    let warnings: Warnings = Arc::default();
    let sink = warnings.clone();
    let cache = DiskCache::with_warnings(
        Some(dir.to_path_buf()),
        Arc::new(move |m: &str| sink.lock().unwrap().push(m.to_string())),
    )
    .with_trust(trust);
    (cache, warnings)
}

fn taken(warnings: &Warnings) -> Vec<String> {
    std::mem::take(&mut *warnings.lock().unwrap())
}

/// A cache directory holding a valid entry for `KEY`, written by the cache itself.
fn filled(tmp: &Path) -> PathBuf {
    let dir = tmp.join("cache");
    let (cache, warnings) = collecting(&dir, CacheTrust::OwnerOnly);
    cache.store(&KEY, ID, b"image");
    assert_eq!(cache.load(&KEY, ID).as_deref(), Some(&b"image"[..]));
    assert!(taken(&warnings).is_empty());
    dir
}

fn entry(dir: &Path) -> PathBuf {
    DiskCache::new(Some(dir.to_path_buf()))
        .entry_path(&KEY)
        .unwrap()
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

/// Whether files can be given to another user here; says why not when they cannot.
fn can_chown(test: &str) -> bool {
    // SAFETY: geteuid cannot fail and touches no memory.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    eprintln!("skipping {test}: simulating another user's files needs root (chown)");
    false
}

fn chown_other(path: &Path) {
    std::os::unix::fs::chown(path, Some(OTHER_UID), Some(OTHER_UID)).unwrap();
}

#[test]
fn new_directories_are_private_and_new_entries_owner_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a/b/cache");
    let (cache, _) = collecting(&dir, CacheTrust::OwnerOnly);
    cache.store(&KEY, ID, b"image");
    // Exact bits: the umask only removes bits, so anything looser means the code asked for it.
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&tmp.path().join("a")), 0o700, "created parents too");
    assert_eq!(mode(&entry(&dir)), 0o600);
}

#[test]
fn a_directory_of_another_user_is_not_used() {
    if !can_chown("a_directory_of_another_user_is_not_used") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = filled(tmp.path());
    chown_other(&dir);
    let (cache, warnings) = collecting(&dir, CacheTrust::OwnerOnly);
    assert_eq!(cache.load(&KEY, ID), None);
    let w = taken(&warnings);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(
        w[0],
        format!(
            "not using the kernel cache in {}: it is owned by uid {OTHER_UID}, not by you (uid 0), \
             so someone else could plant kernels in it that compute wrong results; compiling \
             without it. To fix it, point SCANGEN_CACHE_DIR at a directory of your own, or set \
             SCANGEN_CACHE_SHARED=1 if you trust everyone who can write it (see the README's \
             threat model)",
            dir.display()
        )
    );
    // One warning per cache, not one per kernel; nothing is written there either.
    let before = fs::read(entry(&dir)).unwrap();
    cache.store(&KEY, ID, b"other image");
    assert_eq!(cache.load(&[1; 32], ID), None);
    assert!(taken(&warnings).is_empty());
    assert_eq!(fs::read(entry(&dir)).unwrap(), before);
}

#[test]
fn a_directory_your_group_or_everyone_can_write_is_not_used() {
    for (bits, who) in [
        (0o770, "your group can write it (mode 0770)"),
        (0o703, "every user can write it (mode 0703)"),
        (0o1777, "your group and every user can write it (mode 1777)"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = filled(tmp.path());
        chmod(&dir, bits);
        let (cache, warnings) = collecting(&dir, CacheTrust::OwnerOnly);
        assert_eq!(cache.load(&KEY, ID), None, "{bits:o}");
        let w = taken(&warnings);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains(who), "{w:?}");
        assert!(
            w[0].contains(&format!("run `chmod go-w {}`", dir.display())),
            "{w:?}"
        );
        // The fix the warning gives works.
        chmod(&dir, bits & !0o022);
        let (cache, warnings) = collecting(&dir, CacheTrust::OwnerOnly);
        assert_eq!(cache.load(&KEY, ID).as_deref(), Some(&b"image"[..]));
        assert!(taken(&warnings).is_empty());
    }
}

#[test]
fn a_directory_others_can_only_read_is_used() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = filled(tmp.path());
    chmod(&dir, 0o755);
    chmod(&entry(&dir), 0o644);
    let (cache, warnings) = collecting(&dir, CacheTrust::OwnerOnly);
    assert_eq!(cache.load(&KEY, ID).as_deref(), Some(&b"image"[..]));
    assert!(taken(&warnings).is_empty());
}

/// Loads `KEY` from `dir` whose entry was made untrusted: a miss with one warning containing
/// `why`; storing replaces the entry with one of the user's own, which then loads.
fn refused_then_replaced(dir: &Path, why: &str) {
    let (cache, warnings) = collecting(dir, CacheTrust::OwnerOnly);
    assert_eq!(cache.load(&KEY, ID), None);
    let w = taken(&warnings);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(
        w[0],
        format!(
            "not loading cache entry {}: {why}, so it may not hold what scangen compiled; \
             recompiling and replacing it",
            entry(dir).display()
        )
    );
    cache.store(&KEY, ID, b"fresh image");
    assert_eq!(cache.load(&KEY, ID).as_deref(), Some(&b"fresh image"[..]));
    assert!(taken(&warnings).is_empty());
    let meta = fs::symlink_metadata(entry(dir)).unwrap();
    assert!(meta.is_file());
    assert_eq!(meta.mode() & 0o7777, 0o600);
}

#[test]
fn an_entry_of_another_user_is_refused_and_replaced() {
    if !can_chown("an_entry_of_another_user_is_refused_and_replaced") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = filled(tmp.path());
    chown_other(&entry(&dir));
    refused_then_replaced(
        &dir,
        &format!("it is owned by uid {OTHER_UID}, not by you (uid 0)"),
    );
    assert_eq!(fs::metadata(entry(&dir)).unwrap().uid(), 0);
}

#[test]
fn an_entry_your_group_or_everyone_can_write_is_refused_and_replaced() {
    for (bits, who) in [
        (0o620, "your group can write it (mode 0620)"),
        (0o602, "every user can write it (mode 0602)"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = filled(tmp.path());
        chmod(&entry(&dir), bits);
        refused_then_replaced(&dir, who);
    }
}

#[test]
fn a_symlinked_entry_is_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = filled(tmp.path());
    // A valid entry of the user's own, elsewhere: the link is refused, not its target judged.
    let elsewhere = tmp.path().join("elsewhere");
    fs::rename(entry(&dir), &elsewhere).unwrap();
    symlink(&elsewhere, entry(&dir)).unwrap();
    refused_then_replaced(&dir, "it is a symbolic link");
    assert!(
        fs::read(&elsewhere).is_ok(),
        "the link's target was left alone"
    );
}

#[test]
fn a_fifo_entry_neither_blocks_nor_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = filled(tmp.path());
    fs::remove_file(entry(&dir)).unwrap();
    let c_path = std::ffi::CString::new(entry(&dir).as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    // Opening a FIFO without O_NONBLOCK waits for a writer forever; bound the wait.
    let (done, finished) = std::sync::mpsc::channel();
    let dir2 = dir.clone();
    std::thread::spawn(move || {
        let (cache, warnings) = collecting(&dir2, CacheTrust::OwnerOnly);
        let loaded = cache.load(&KEY, ID);
        let _ = done.send((loaded, taken(&warnings)));
    });
    let (loaded, w) = finished
        .recv_timeout(Duration::from_secs(20))
        .expect("loading a FIFO entry blocked");
    assert_eq!(loaded, None);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("it is not a regular file"), "{w:?}");
}

#[test]
fn an_oversized_entry_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = filled(tmp.path());
    // Sparse: claims more than the cache ever writes without using the disk.
    fs::OpenOptions::new()
        .write(true)
        .open(entry(&dir))
        .unwrap()
        .set_len(MAX_ENTRY_BYTES + 1)
        .unwrap();
    let (cache, warnings) = collecting(&dir, CacheTrust::OwnerOnly);
    let started = Instant::now();
    assert_eq!(cache.load(&KEY, ID), None);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "read the whole file?"
    );
    let w = taken(&warnings);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains(&format!("it is {} bytes", MAX_ENTRY_BYTES + 1)),
        "{w:?}"
    );
}

#[test]
fn a_shared_cache_loads_what_others_wrote_but_still_checks_the_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = filled(tmp.path());
    chmod(&dir, 0o777);
    chmod(&entry(&dir), 0o666);
    if can_chown("a_shared_cache_loads_what_others_wrote (ownership part)") {
        chown_other(&dir);
        chown_other(&entry(&dir));
    }
    let (cache, warnings) = collecting(&dir, CacheTrust::Shared);
    assert_eq!(cache.load(&KEY, ID).as_deref(), Some(&b"image"[..]));
    // Another compiler's entry and a damaged one are still misses.
    assert_eq!(cache.load(&KEY, "another compiler"), None);
    let mut bytes = fs::read(entry(&dir)).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    fs::write(entry(&dir), bytes).unwrap();
    assert_eq!(cache.load(&KEY, ID), None);
    let w = taken(&warnings);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].contains("built by `test compiler`"), "{w:?}");
    assert!(w[1].contains("checksum mismatch"), "{w:?}");
    // What a shared cache writes, the group can read: the umask decides, not scangen, so it
    // gets the modes of a directory and a file made the ordinary way.
    let fresh = tmp.path().join("fresh");
    let (cache, _) = collecting(&fresh, CacheTrust::Shared);
    cache.store(&KEY, ID, b"image");
    let ordinary = tmp.path().join("ordinary");
    fs::create_dir(&ordinary).unwrap();
    fs::write(ordinary.join("file"), b"").unwrap();
    assert_eq!(mode(&fresh), mode(&ordinary));
    assert_eq!(mode(&entry(&fresh)), mode(&ordinary.join("file")));
}

// ---------------------------------------------------------------------------------------------
// The opt-in through the environment (process-wide, so checked in child processes)

const CHILD_ENV: &str = "SCANGEN_CACHE_TRUST_CHILD";

/// The child side: does nothing in the parent (where `SCANGEN_CACHE_TRUST_CHILD` is unset).
/// Reports the trust `DiskCache::from_env` chose and whether it loads the planted entry.
#[test]
fn child_process_entry() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let cache = DiskCache::from_env();
    let loaded = cache.load(&KEY, ID).is_some();
    println!("CHILD {:?} loaded={loaded}", cache.trust());
}

/// Runs the child with `SCANGEN_CACHE_DIR=dir` and `SCANGEN_CACHE_SHARED=shared`; its stdout
/// and stderr.
fn from_env_in_child(dir: &Path, shared: Option<&str>) -> (String, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "child_process_entry",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD_ENV, "1")
    .env("SCANGEN_CACHE_DIR", dir)
    .env_remove("SCANGEN_CACHE_SHARED")
    .stdin(Stdio::null());
    if let Some(v) = shared {
        cmd.env("SCANGEN_CACHE_SHARED", v);
    }
    let out = cmd.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

#[test]
fn scangen_cache_shared_opts_in_and_nothing_else_does() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = filled(tmp.path());
    chmod(&dir, 0o777);
    let (out, err) = from_env_in_child(&dir, Some("1"));
    assert!(out.contains("CHILD Shared loaded=true"), "{out}\n{err}");
    assert!(!err.contains("warning"), "{err}");

    let (out, err) = from_env_in_child(&dir, None);
    assert!(out.contains("CHILD OwnerOnly loaded=false"), "{out}\n{err}");
    assert!(
        err.contains("scangen: warning: not using the kernel cache"),
        "{err}"
    );

    // A value that is not 0 or 1 keeps the cache private, and says so.
    let (out, err) = from_env_in_child(&dir, Some("yes"));
    assert!(out.contains("CHILD OwnerOnly loaded=false"), "{out}\n{err}");
    assert!(
        err.contains("scangen: warning: SCANGEN_CACHE_SHARED=\"yes\" is not understood"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Through the compiler: an entry of another compiler is recompiled and rewritten

const SM: u32 = 80;

#[scan_testenv::needs(nvrtc)]
#[test]
fn compile_cached_replaces_an_entry_built_by_another_compiler() {
    if !nvrtc_or_skip("compile_cached_replaces_an_entry_built_by_another_compiler") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    // Unique, so this process's memory cache has never seen it and the disk entry is read.
    let source = format!(
        "extern \"C\" __global__ void scangen_trust_test(int* p) {{ *p = 1; }}\n// {nanos}\n"
    );
    let nvrtc = nvrtc_version().unwrap();
    let key = cache_key(&source, SM, &compile_options(SM), nvrtc);
    let current = compiler_identity(SM, &compile_options(SM), nvrtc);
    let older = compiler_identity(SM, &compile_options(SM), (nvrtc.0, nvrtc.1 - 1));
    let (cache, warnings) = collecting(&tmp.path().join("cache"), CacheTrust::OwnerOnly);
    // An intact entry under the right key, but from another NVRTC: not a kernel to trust.
    cache.store(&key, &older, b"Cnot a cubin");

    let image = compile_cached(&source, SM, &cache).unwrap();
    let KernelImage::Cubin(cubin) = &*image else {
        panic!("expected a CUBIN, got {image:?}")
    };
    assert_eq!(&cubin[..4], b"\x7fELF");
    let w = taken(&warnings);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains(&format!("built by `{older}`"))
            && w[0].contains(&format!("compiles with `{current}`")),
        "{w:?}"
    );
    let bytes = fs::read(cache.entry_path(&key).unwrap()).unwrap();
    let entry = decode(&bytes, &key).unwrap();
    assert_eq!(entry.identity, current);
    assert!(entry.payload.ends_with(cubin));
    // Sanity of the planted bytes: they were an intact entry, refused only for their compiler.
    assert!(decode(&encode(&key, &older, b"Cnot a cubin"), &key).is_ok());
}
