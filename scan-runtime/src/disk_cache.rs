//! The on-disk cache of compiled kernels: one file per key, named after the key, in a directory
//! the cache only reads from when it is yours.
//!
//! The bytes of an entry are `cache_entry`'s; whom the cache believes is `cache_trust`'s. This
//! file does the I/O. Entries are written to a uniquely named temporary file in the same
//! directory, fsynced and renamed over the final name, so readers see either no file or a
//! complete one, and two processes writing the same entry at once both succeed (the last rename
//! wins; both wrote the same bytes).
//!
//! Nothing here is ever an error to the caller: the cache only saves time. An entry that is
//! damaged, built by another compiler, or not trustworthy (see `cache_trust`) is a warned miss
//! (the caller recompiles and rewrites it); an untrusted directory is warned about once and not
//! used; a directory that cannot be created or written is warned about once.

pub use crate::cache_entry::{
    decode, encode, key_hex, CacheKey, Entry, EntryError, FORMAT_VERSION, HEADER_LEN,
};
pub use crate::cache_trust::{CacheTrust, Untrusted, SHARED_ENV};

use crate::cache_trust::{self, OpenError};
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// The largest entry the cache reads. Its kernels' images are well under a megabyte; a bigger
/// file was not written by it, and is not read into memory.
pub const MAX_ENTRY_BYTES: u64 = 64 << 20;

/// Receives cache warnings (the default prints them to stderr).
pub type WarningSink = Arc<dyn Fn(&str) + Send + Sync>;

/// The warning sink of [`DiskCache::new`]: a `tracing` warning (target `scangen::cache`), and,
/// while the program has installed no `tracing` subscriber, the same line on stderr
/// (`scangen: warning: ...`), so that a warning users must act on (an untrusted cache
/// directory, a failed write) is never lost to a program that does not use `tracing`.
pub fn warn_default(msg: &str) {
    tracing::warn!(target: "scangen::cache", "{msg}");
    let subscribed =
        tracing::dispatcher::get_default(|d| !d.is::<tracing::subscriber::NoSubscriber>());
    if !subscribed {
        eprintln!("scangen: warning: {msg}");
    }
}

/// The directory the cache lives in: `$SCANGEN_CACHE_DIR`, else `$XDG_CACHE_HOME/scangen`, else
/// `$HOME/.cache/scangen`. `None` when none of these is set (caching on disk is then off).
pub fn default_cache_dir() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty("SCANGEN_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = non_empty("XDG_CACHE_HOME") {
        return Some(PathBuf::from(xdg).join("scangen"));
    }
    non_empty("HOME").map(|home| PathBuf::from(home).join(".cache").join("scangen"))
}

/// Why a present entry was not loaded; each is one warning.
#[derive(Debug, thiserror::Error)]
enum Refused {
    #[error("cannot read cache entry {}: {source}; recompiling", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error(
        "not loading cache entry {}: {why}, so it may not hold what scangen compiled; \
         recompiling and replacing it",
        path.display()
    )]
    Untrusted { path: PathBuf, why: Untrusted },
    #[error(
        "ignoring cache entry {}: it is {len} bytes, more than scangen ever writes \
         ({MAX_ENTRY_BYTES}); recompiling and replacing it",
        path.display()
    )]
    TooLarge { path: PathBuf, len: u64 },
    #[error("ignoring damaged cache entry {}: {why}; recompiling and rewriting it", path.display())]
    Damaged { path: PathBuf, why: EntryError },
    #[error(
        "ignoring cache entry {}: it was built by `{found}`, and this process compiles with \
         `{expected}`; recompiling and rewriting it",
        path.display()
    )]
    OtherCompiler {
        path: PathBuf,
        found: String,
        expected: String,
    },
}

/// A directory of cached kernel images.
#[derive(Clone)]
pub struct DiskCache {
    dir: Option<PathBuf>,
    trust: CacheTrust,
    warn: WarningSink,
    /// Set after the first write failure: one warning per cache, not one per kernel.
    write_failed: Arc<AtomicBool>,
    /// Set once the directory was found untrusted and said so: one warning per cache.
    dir_refused: Arc<AtomicBool>,
}

impl std::fmt::Debug for DiskCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskCache")
            .field("dir", &self.dir)
            .field("trust", &self.trust)
            .finish()
    }
}

impl DiskCache {
    /// A private cache in `dir` (`None`: disabled) reporting warnings with [`warn_default`]:
    /// a `tracing` warning, and on stderr too while no `tracing` subscriber is installed.
    pub fn new(dir: Option<PathBuf>) -> DiskCache {
        DiskCache::with_warnings(dir, Arc::new(warn_default))
    }

    /// A private cache in `dir` reporting warnings to `warn`.
    pub fn with_warnings(dir: Option<PathBuf>, warn: WarningSink) -> DiskCache {
        DiskCache {
            dir,
            trust: CacheTrust::OwnerOnly,
            warn,
            write_failed: Arc::new(AtomicBool::new(false)),
            dir_refused: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The cache in [`default_cache_dir`], shared only if `SCANGEN_CACHE_SHARED=1`.
    pub fn from_env() -> DiskCache {
        let cache = DiskCache::new(default_cache_dir());
        let trust = CacheTrust::from_env_value(std::env::var_os(SHARED_ENV).as_deref())
            .unwrap_or_else(|why| {
                // Once per process: `from_env` runs for every Gpu and law check.
                static SAID: AtomicBool = AtomicBool::new(false);
                if !SAID.swap(true, Ordering::Relaxed) {
                    (cache.warn)(&why);
                }
                CacheTrust::OwnerOnly
            });
        cache.with_trust(trust)
    }

    /// The same cache with another trust rule. [`CacheTrust::Shared`] loads entries whoever
    /// wrote them: anyone who can write the directory can then make scans compute wrong results.
    pub fn with_trust(mut self, trust: CacheTrust) -> DiskCache {
        self.trust = trust;
        self
    }

    /// Whom the cache believes.
    pub fn trust(&self) -> CacheTrust {
        self.trust
    }

    /// The cache directory, `None` when disabled.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Reports `msg` the way this cache reports its own warnings.
    pub(crate) fn warn(&self, msg: &str) {
        (self.warn)(msg)
    }

    /// The file an entry lives in.
    pub fn entry_path(&self, key: &CacheKey) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{}.scangen", key_hex(key))))
    }

    fn private(&self) -> bool {
        self.trust == CacheTrust::OwnerOnly
    }

    /// The payload stored for `key` by the compiler `identity`, or `None` on a miss. An entry
    /// that is damaged, from another compiler or not trusted is a warned miss.
    pub fn load(&self, key: &CacheKey, identity: &str) -> Option<Vec<u8>> {
        let dir = self.dir.as_deref()?;
        if !fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
            // Nothing cached yet, or unusable: `store` says so (once).
            return None;
        }
        if !self.dir_trusted(dir) {
            return None;
        }
        let path = dir.join(format!("{}.scangen", key_hex(key)));
        match self.read_entry(&path, key, identity) {
            Ok(payload) => payload,
            Err(refused) => {
                (self.warn)(&refused.to_string());
                None
            }
        }
    }

    /// The entry at `path`: `Ok(None)` when there is none.
    fn read_entry(
        &self,
        path: &Path,
        key: &CacheKey,
        identity: &str,
    ) -> Result<Option<Vec<u8>>, Refused> {
        let untrusted = |why| Refused::Untrusted {
            path: path.to_path_buf(),
            why,
        };
        let read_error = |source| Refused::Read {
            path: path.to_path_buf(),
            source,
        };
        let mut file = match cache_trust::open_entry(path) {
            Ok(file) => file,
            Err(OpenError::Io(e)) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(OpenError::Io(e)) => return Err(read_error(e)),
            Err(OpenError::Untrusted(why)) => return Err(untrusted(why)),
        };
        // The metadata of the open file, not of the path: it describes the bytes read below
        // even if the name is replaced in between.
        let meta = file.metadata().map_err(read_error)?;
        if !meta.is_file() {
            return Err(untrusted(Untrusted::NotRegular));
        }
        if self.private() {
            cache_trust::check(&meta).map_err(untrusted)?;
        }
        let too_large = |len| Refused::TooLarge {
            path: path.to_path_buf(),
            len,
        };
        if meta.len() > MAX_ENTRY_BYTES {
            return Err(too_large(meta.len()));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        (&mut file)
            .take(MAX_ENTRY_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(read_error)?;
        if bytes.len() as u64 > MAX_ENTRY_BYTES {
            // It grew while being read.
            return Err(too_large(bytes.len() as u64));
        }
        let entry = decode(&bytes, key).map_err(|why| Refused::Damaged {
            path: path.to_path_buf(),
            why,
        })?;
        if entry.identity != identity {
            return Err(Refused::OtherCompiler {
                path: path.to_path_buf(),
                found: entry.identity.to_string(),
                expected: identity.to_string(),
            });
        }
        Ok(Some(entry.payload.to_vec()))
    }

    /// Whether entries may be loaded from (and written to) `dir`; warns once when not.
    fn dir_trusted(&self, dir: &Path) -> bool {
        if !self.private() {
            return true;
        }
        let verdict = fs::metadata(dir)
            .map_err(|e| e.to_string())
            .and_then(|meta| {
                cache_trust::check(&meta).map_err(|why| {
                    format!(
                        "{why}, so someone else could plant kernels in it that compute wrong \
                         results; compiling without it. To fix it, {}",
                        cache_trust::dir_fix(&why, dir)
                    )
                })
            });
        match verdict {
            Ok(()) => true,
            Err(why) => {
                if !self.dir_refused.swap(true, Ordering::Relaxed) {
                    (self.warn)(&format!(
                        "not using the kernel cache in {}: {why}",
                        dir.display()
                    ));
                }
                false
            }
        }
    }

    /// Stores `payload`, built by the compiler `identity`, for `key`. Failures are warned about
    /// and otherwise ignored: the cache only saves time.
    pub fn store(&self, key: &CacheKey, identity: &str, payload: &[u8]) {
        let Some(dir) = &self.dir else { return };
        let result = cache_trust::create_dir(dir, self.private()).and_then(|()| {
            if !self.dir_trusted(dir) {
                // Said by `dir_trusted`; writing where nothing is read back would only cost.
                return Ok(());
            }
            self.try_store(dir, key, identity, payload)
        });
        if let Err(e) = result {
            if self.write_failed.swap(true, Ordering::Relaxed) {
                return;
            }
            (self.warn)(&format!(
                "cannot write kernel cache in {}: {e}; continuing without caching",
                dir.display()
            ));
        }
    }

    fn try_store(
        &self,
        dir: &Path,
        key: &CacheKey,
        identity: &str,
        payload: &[u8],
    ) -> io::Result<()> {
        let final_path = dir.join(format!("{}.scangen", key_hex(key)));
        // Unique per process, thread and call, so concurrent writers never share a temp file.
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let tmp_path = dir.join(format!(
            ".{}.{}.{}.{nanos}.tmp",
            key_hex(key),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let result = (|| {
            let mut file = cache_trust::create_entry(&tmp_path, self.private())?;
            file.write_all(&encode(key, identity, payload))?;
            file.sync_all()?;
            drop(file);
            // Replaces whatever was there, an untrusted entry included (the directory is ours).
            fs::rename(&tmp_path, &final_path)?;
            // Make the rename itself durable; failure here loses nothing but durability.
            if let Ok(d) = fs::File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp_path);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The compiler identity the tests store and load with.
    const ID: &str = "test compiler";

    fn key(byte: u8) -> CacheKey {
        [byte; 32]
    }

    /// A cache in a fresh temporary directory that collects its warnings.
    fn collecting(dir: PathBuf) -> (DiskCache, Arc<Mutex<Vec<String>>>) {
        let warnings = Arc::new(Mutex::new(Vec::new()));
        let sink = warnings.clone();
        let cache = DiskCache::with_warnings(
            Some(dir),
            Arc::new(move |m: &str| sink.lock().unwrap().push(m.to_string())),
        );
        (cache, warnings)
    }

    #[test]
    fn round_trip_and_miss() {
        let tmp = tempfile::tempdir().unwrap();
        let (cache, warnings) = collecting(tmp.path().join("nested/dir"));
        assert_eq!(cache.load(&key(1), ID), None);
        cache.store(&key(1), ID, b"cubin bytes");
        assert_eq!(
            cache.load(&key(1), ID).as_deref(),
            Some(&b"cubin bytes"[..])
        );
        assert_eq!(cache.load(&key(2), ID), None);
        assert!(
            warnings.lock().unwrap().is_empty(),
            "{:?}",
            warnings.lock().unwrap()
        );
        // No temporary files are left behind.
        let names: Vec<_> = fs::read_dir(cache.dir().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn corrupt_entry_is_a_warned_miss_and_is_rewritten() {
        let tmp = tempfile::tempdir().unwrap();
        let (cache, warnings) = collecting(tmp.path().to_path_buf());
        cache.store(&key(3), ID, b"payload payload");
        let path = cache.entry_path(&key(3)).unwrap();
        let mut bytes = fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.load(&key(3), ID), None);
        assert!(
            warnings.lock().unwrap()[0].contains("checksum"),
            "{:?}",
            warnings.lock().unwrap()
        );
        cache.store(&key(3), ID, b"payload payload");
        assert_eq!(
            cache.load(&key(3), ID).as_deref(),
            Some(&b"payload payload"[..])
        );
    }

    #[test]
    fn truncated_entries_are_misses() {
        let tmp = tempfile::tempdir().unwrap();
        let (cache, warnings) = collecting(tmp.path().to_path_buf());
        cache.store(&key(4), ID, b"0123456789");
        let path = cache.entry_path(&key(4)).unwrap();
        let full = fs::read(&path).unwrap();
        for cut in [0, 5, HEADER_LEN - 1, HEADER_LEN, full.len() - 1] {
            fs::write(&path, &full[..cut]).unwrap();
            assert_eq!(cache.load(&key(4), ID), None, "cut at {cut}");
        }
        assert_eq!(warnings.lock().unwrap().len(), 5);
        assert!(warnings.lock().unwrap()[0].contains("truncated"));
    }

    #[test]
    fn foreign_key_and_foreign_files_are_misses() {
        let tmp = tempfile::tempdir().unwrap();
        let (cache, warnings) = collecting(tmp.path().to_path_buf());
        // An entry for key 5 copied under key 6's name.
        cache.store(&key(5), ID, b"five");
        fs::copy(
            cache.entry_path(&key(5)).unwrap(),
            cache.entry_path(&key(6)).unwrap(),
        )
        .unwrap();
        assert_eq!(cache.load(&key(6), ID), None);
        assert!(warnings.lock().unwrap()[0].contains("belongs to key"));
        // Something that is not a cache file at all.
        fs::write(cache.entry_path(&key(7)).unwrap(), vec![b'x'; 200]).unwrap();
        assert_eq!(cache.load(&key(7), ID), None);
        assert!(warnings.lock().unwrap()[1].contains("bad magic"));
        // Another format version.
        let mut other = encode(&key(8), ID, b"eight");
        other[8] = 99;
        fs::write(cache.entry_path(&key(8)).unwrap(), other).unwrap();
        assert_eq!(cache.load(&key(8), ID), None);
        assert!(warnings.lock().unwrap()[2].contains("format version 99"));
    }

    #[test]
    fn entries_of_another_compiler_are_misses() {
        let tmp = tempfile::tempdir().unwrap();
        let (cache, warnings) = collecting(tmp.path().to_path_buf());
        cache.store(&key(11), "NVRTC 12.4 | sm_90", b"old image");
        assert_eq!(cache.load(&key(11), "NVRTC 12.9 | sm_90"), None);
        let w = warnings.lock().unwrap().clone();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("built by `NVRTC 12.4 | sm_90`")
                && w[0].contains("compiles with `NVRTC 12.9 | sm_90`"),
            "{w:?}"
        );
        // Rewritten by the current compiler, it loads.
        cache.store(&key(11), "NVRTC 12.9 | sm_90", b"new image");
        assert_eq!(
            cache.load(&key(11), "NVRTC 12.9 | sm_90").as_deref(),
            Some(&b"new image"[..])
        );
    }

    #[test]
    fn unwritable_directory_is_a_warning() {
        let tmp = tempfile::tempdir().unwrap();
        // A regular file where the directory should be: creating it fails even for root,
        // unlike a permission bit.
        let blocker = tmp.path().join("blocker");
        fs::write(&blocker, b"").unwrap();
        let (cache, warnings) = collecting(blocker.join("scangen"));
        cache.store(&key(9), ID, b"nine");
        assert_eq!(cache.load(&key(9), ID), None);
        cache.store(&key(10), ID, b"ten");
        let w = warnings.lock().unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("cannot write kernel cache"), "{w:?}");
    }

    #[test]
    fn disabled_cache_does_nothing() {
        let cache = DiskCache::new(None);
        cache.store(&key(1), ID, b"x");
        assert_eq!(cache.load(&key(1), ID), None);
    }

    #[test]
    fn concurrent_writers_and_readers_never_see_a_partial_entry() {
        let tmp = tempfile::tempdir().unwrap();
        let (cache, warnings) = collecting(tmp.path().to_path_buf());
        let payload: Vec<u8> = (0..200_000u32).map(|i| (i * 7 + 3) as u8).collect();
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..10 {
                        cache.store(&key(10), ID, &payload);
                        if let Some(got) = cache.load(&key(10), ID) {
                            assert_eq!(got, payload);
                        }
                    }
                });
            }
        });
        assert_eq!(cache.load(&key(10), ID).unwrap(), payload);
        assert!(
            warnings.lock().unwrap().is_empty(),
            "{:?}",
            warnings.lock().unwrap()
        );
        let leftovers = fs::read_dir(tmp.path()).unwrap().count();
        assert_eq!(leftovers, 1, "temporary files left behind");
    }

    #[test]
    fn cache_dir_prefers_scangen_then_xdg_then_home() {
        // Only checks the pure part: the env of the test process is shared, so no env mutation.
        let dir = default_cache_dir();
        if std::env::var_os("SCANGEN_CACHE_DIR").is_none()
            && std::env::var_os("XDG_CACHE_HOME").is_none()
        {
            if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
                assert_eq!(dir, Some(PathBuf::from(home).join(".cache/scangen")));
            }
        }
    }
}
