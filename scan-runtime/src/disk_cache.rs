//! The on-disk cache of compiled kernels.
//!
//! One file per key, named after the key. Each file is
//!
//! ```text
//! magic "SCANGENK" (8) | format version u32 LE (4) | key (32) | payload length u64 LE (8)
//! | sha256(payload) (32) | payload
//! ```
//!
//! Files are written to a uniquely named temporary file in the same directory, fsynced and
//! renamed over the final name, so readers see either no file or a complete one, and two
//! processes writing the same entry at once both succeed (the last rename wins; both wrote the
//! same bytes). Anything wrong with an entry (truncated, corrupt, written for another key or by
//! another format version) is reported as a warning and treated as a miss; the caller recompiles
//! and rewrites it. A directory that cannot be created or written is a warning, never an error.

use sha2::{Digest, Sha256};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"SCANGENK";
const FORMAT_VERSION: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 32 + 8 + 32;

/// A 32-byte cache key (a sha256 digest).
pub type CacheKey = [u8; 32];

/// Receives cache warnings (the default prints them to stderr).
pub type WarningSink = Arc<dyn Fn(&str) + Send + Sync>;

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

/// Hex spelling of a key, used as the file name.
pub fn key_hex(key: &CacheKey) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// A directory of cached kernel images.
#[derive(Clone)]
pub struct DiskCache {
    dir: Option<PathBuf>,
    warn: WarningSink,
    /// Set after the first write failure: one warning per cache, not one per kernel.
    write_failed: Arc<AtomicBool>,
}

impl std::fmt::Debug for DiskCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskCache").field("dir", &self.dir).finish()
    }
}

impl DiskCache {
    /// A cache in `dir` (`None`: disabled) reporting warnings to stderr.
    pub fn new(dir: Option<PathBuf>) -> DiskCache {
        DiskCache::with_warnings(
            dir,
            Arc::new(|msg: &str| eprintln!("scangen: warning: {msg}")),
        )
    }

    /// A cache in `dir` reporting warnings to `warn`.
    pub fn with_warnings(dir: Option<PathBuf>, warn: WarningSink) -> DiskCache {
        DiskCache {
            dir,
            warn,
            write_failed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The cache in [`default_cache_dir`].
    pub fn from_env() -> DiskCache {
        DiskCache::new(default_cache_dir())
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The file an entry lives in.
    pub fn entry_path(&self, key: &CacheKey) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{}.scangen", key_hex(key))))
    }

    /// The payload stored for `key`, or `None` on a miss. A damaged entry is a warned miss.
    pub fn load(&self, key: &CacheKey) -> Option<Vec<u8>> {
        let path = self.entry_path(key)?;
        if !self.dir.as_ref().is_some_and(|d| d.is_dir()) {
            // Nothing cached yet, or unusable: `store` says so (once).
            return None;
        }
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
            Err(e) => {
                (self.warn)(&format!(
                    "cannot read cache entry {}: {e}; recompiling",
                    path.display()
                ));
                return None;
            }
        };
        match decode(&bytes, key) {
            Ok(payload) => Some(payload),
            Err(why) => {
                (self.warn)(&format!(
                    "ignoring damaged cache entry {}: {why}; recompiling and rewriting it",
                    path.display()
                ));
                None
            }
        }
    }

    /// Stores `payload` for `key`. Failures are warned about and otherwise ignored: the cache
    /// only saves time.
    pub fn store(&self, key: &CacheKey, payload: &[u8]) {
        let Some(dir) = &self.dir else { return };
        if let Err(e) = self.try_store(dir, key, payload) {
            if self.write_failed.swap(true, Ordering::Relaxed) {
                return;
            }
            (self.warn)(&format!(
                "cannot write kernel cache in {}: {e}; continuing without caching",
                dir.display()
            ));
        }
    }

    fn try_store(&self, dir: &Path, key: &CacheKey, payload: &[u8]) -> io::Result<()> {
        fs::create_dir_all(dir)?;
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
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp_path)?;
            file.write_all(&encode(key, payload))?;
            file.sync_all()?;
            drop(file);
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

/// The bytes of a cache file holding `payload` for `key`.
pub fn encode(key: &CacheKey, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(payload));
    out.extend_from_slice(payload);
    out
}

/// The payload of a cache file, if the file is intact and was written for `key`.
pub fn decode(bytes: &[u8], key: &CacheKey) -> Result<Vec<u8>, String> {
    if bytes.len() < HEADER_LEN {
        return Err(format!(
            "truncated header ({} of {HEADER_LEN} bytes)",
            bytes.len()
        ));
    }
    let (magic, rest) = bytes.split_at(8);
    if magic != MAGIC {
        return Err("not a scangen cache file (bad magic)".into());
    }
    let (version, rest) = rest.split_at(4);
    let version = u32::from_le_bytes(version.try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(format!(
            "format version {version}, expected {FORMAT_VERSION}"
        ));
    }
    let (stored_key, rest) = rest.split_at(32);
    if stored_key != key {
        return Err(format!(
            "entry belongs to key {}",
            key_hex(stored_key.try_into().expect("32"))
        ));
    }
    let (len, rest) = rest.split_at(8);
    let len = u64::from_le_bytes(len.try_into().expect("8 bytes"));
    let (checksum, payload) = rest.split_at(32);
    if payload.len() as u64 != len {
        return Err(format!(
            "payload is {} bytes, header says {len}",
            payload.len()
        ));
    }
    if Sha256::digest(payload).as_slice() != checksum {
        return Err("payload checksum mismatch".into());
    }
    Ok(payload.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

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
        assert_eq!(cache.load(&key(1)), None);
        cache.store(&key(1), b"cubin bytes");
        assert_eq!(cache.load(&key(1)).as_deref(), Some(&b"cubin bytes"[..]));
        assert_eq!(cache.load(&key(2)), None);
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
        cache.store(&key(3), b"payload payload");
        let path = cache.entry_path(&key(3)).unwrap();
        let mut bytes = fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.load(&key(3)), None);
        assert!(
            warnings.lock().unwrap()[0].contains("checksum"),
            "{:?}",
            warnings.lock().unwrap()
        );
        cache.store(&key(3), b"payload payload");
        assert_eq!(
            cache.load(&key(3)).as_deref(),
            Some(&b"payload payload"[..])
        );
    }

    #[test]
    fn truncated_entries_are_misses() {
        let tmp = tempfile::tempdir().unwrap();
        let (cache, warnings) = collecting(tmp.path().to_path_buf());
        cache.store(&key(4), b"0123456789");
        let path = cache.entry_path(&key(4)).unwrap();
        let full = fs::read(&path).unwrap();
        for cut in [0, 5, HEADER_LEN - 1, HEADER_LEN, full.len() - 1] {
            fs::write(&path, &full[..cut]).unwrap();
            assert_eq!(cache.load(&key(4)), None, "cut at {cut}");
        }
        assert_eq!(warnings.lock().unwrap().len(), 5);
        assert!(warnings.lock().unwrap()[0].contains("truncated"));
    }

    #[test]
    fn foreign_key_and_foreign_files_are_misses() {
        let tmp = tempfile::tempdir().unwrap();
        let (cache, warnings) = collecting(tmp.path().to_path_buf());
        // An entry for key 5 copied under key 6's name.
        cache.store(&key(5), b"five");
        fs::copy(
            cache.entry_path(&key(5)).unwrap(),
            cache.entry_path(&key(6)).unwrap(),
        )
        .unwrap();
        assert_eq!(cache.load(&key(6)), None);
        assert!(warnings.lock().unwrap()[0].contains("belongs to key"));
        // Something that is not a cache file at all.
        fs::write(cache.entry_path(&key(7)).unwrap(), vec![b'x'; 200]).unwrap();
        assert_eq!(cache.load(&key(7)), None);
        assert!(warnings.lock().unwrap()[1].contains("bad magic"));
        // Another format version.
        let mut other = encode(&key(8), b"eight");
        other[8] = 99;
        fs::write(cache.entry_path(&key(8)).unwrap(), other).unwrap();
        assert_eq!(cache.load(&key(8)), None);
        assert!(warnings.lock().unwrap()[2].contains("format version 99"));
    }

    #[test]
    fn unwritable_directory_is_a_warning() {
        let tmp = tempfile::tempdir().unwrap();
        // A regular file where the directory should be: creating it fails even for root,
        // unlike a permission bit.
        let blocker = tmp.path().join("blocker");
        fs::write(&blocker, b"").unwrap();
        let (cache, warnings) = collecting(blocker.join("scangen"));
        cache.store(&key(9), b"nine");
        assert_eq!(cache.load(&key(9)), None);
        cache.store(&key(10), b"ten");
        let w = warnings.lock().unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("cannot write kernel cache"), "{w:?}");
    }

    #[test]
    fn disabled_cache_does_nothing() {
        let cache = DiskCache::new(None);
        cache.store(&key(1), b"x");
        assert_eq!(cache.load(&key(1)), None);
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
                        cache.store(&key(10), &payload);
                        if let Some(got) = cache.load(&key(10)) {
                            assert_eq!(got, payload);
                        }
                    }
                });
            }
        });
        assert_eq!(cache.load(&key(10)).unwrap(), payload);
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
