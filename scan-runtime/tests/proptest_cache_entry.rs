//! Property tests of the cache-entry decoder, the parser of bytes anyone who can write a cache
//! file controls: it never panics, never accepts anything but the exact bytes `encode` writes,
//! and notices every single-byte change, cut or extension of an entry.
//!
//! Bounded for CI (a few seconds); `PROPTEST_CASES=100000` runs longer. A failing case is saved
//! under `proptest-regressions/` and replayed first on every later run: commit those files.

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use scan_runtime::disk_cache::{decode, encode, CacheKey, FORMAT_VERSION};
use scan_runtime::{CacheTrust, DiskCache};
use std::sync::Arc;

/// `cases` unless `PROPTEST_CASES` asks for another number; failures are saved beside this
/// file (`<test>.proptest-regressions`).
fn config(cases: u32) -> Config {
    let mut config = Config {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..Config::default()
    };
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    config
}

fn key() -> impl Strategy<Value = CacheKey> {
    prop_oneof![Just([0u8; 32]), Just([0x5c; 32]), any::<[u8; 32]>(),]
}

/// A header that passes the magic, version and key checks, then anything: the random bytes
/// reach the length and checksum logic instead of failing at the magic.
fn plausible(key: CacheKey) -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![Just(0u32), Just(u32::MAX), 0u32..64, any::<u32>()],
        prop_oneof![
            Just(0u64),
            Just(u64::MAX),
            Just(u64::MAX - 3),
            0u64..256,
            any::<u64>()
        ],
        any::<[u8; 32]>(),
        proptest::collection::vec(any::<u8>(), 0..300),
    )
        .prop_map(move |(identity_len, payload_len, sum, rest)| {
            let mut b = Vec::new();
            b.extend_from_slice(b"SCANGENK");
            b.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
            b.extend_from_slice(&key);
            b.extend_from_slice(&identity_len.to_le_bytes());
            b.extend_from_slice(&payload_len.to_le_bytes());
            b.extend_from_slice(&sum);
            b.extend_from_slice(&rest);
            b
        })
}

/// Whatever `decode` accepts is exactly what `encode` writes for it.
fn accepted_only_if_canonical(bytes: &[u8], key: &CacheKey) {
    if let Ok(entry) = decode(bytes, key) {
        assert_eq!(encode(key, entry.identity, entry.payload), bytes);
    }
}

proptest! {
    #![proptest_config(config(2048))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), key in key()) {
        accepted_only_if_canonical(&bytes, &key);
    }

    #[test]
    fn arbitrary_bytes_behind_a_valid_header_never_panic(
        (key, bytes) in key().prop_flat_map(|k| (Just(k), plausible(k)))
    ) {
        accepted_only_if_canonical(&bytes, &key);
        // The header's lengths are the writer's word: whatever they say, the result borrows
        // from the input (no allocation of the announced size), and errors say why.
        if let Err(e) = decode(&bytes, &key) {
            prop_assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn entries_round_trip(key in key(), identity in ".{0,40}", payload in proptest::collection::vec(any::<u8>(), 0..300)) {
        let bytes = encode(&key, &identity, &payload);
        let entry = decode(&bytes, &key).unwrap();
        prop_assert_eq!(entry.identity, identity.as_str());
        prop_assert_eq!(entry.payload, &payload[..]);
    }

    #[test]
    fn every_single_byte_change_is_noticed(
        key in key(),
        identity in "[ -~]{0,24}",
        payload in proptest::collection::vec(any::<u8>(), 0..200),
        at in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let mut bytes = encode(&key, &identity, &payload);
        let i = at.index(bytes.len());
        bytes[i] ^= flip;
        prop_assert!(decode(&bytes, &key).is_err(), "byte {} changed unnoticed", i);
    }

    #[test]
    fn every_cut_and_extension_is_noticed(
        key in key(),
        identity in "[ -~]{0,24}",
        payload in proptest::collection::vec(any::<u8>(), 0..200),
        cut in any::<prop::sample::Index>(),
        extra in proptest::collection::vec(any::<u8>(), 1..16),
    ) {
        let bytes = encode(&key, &identity, &payload);
        let short = &bytes[..cut.index(bytes.len())];
        prop_assert!(decode(short, &key).is_err());
        let mut long = bytes.clone();
        long.extend_from_slice(&extra);
        prop_assert!(decode(&long, &key).is_err());
        // And the same bytes are no entry for any other key.
        let mut other = key;
        other[0] ^= 1;
        prop_assert!(decode(&bytes, &other).is_err());
    }
}

proptest! {
    // Each case writes a file: fewer cases.
    #![proptest_config(config(128))]

    /// Whatever a cache file holds, loading it is a miss (with a warning) or exactly what was
    /// stored for this key and compiler; never a panic.
    #[test]
    fn loading_arbitrary_files_is_a_warned_miss(
        bytes in prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..400),
            plausible([0x5c; 32]),
        ]
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let warnings = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let sink = warnings.clone();
        let cache = DiskCache::with_warnings(
            Some(tmp.path().to_path_buf()),
            Arc::new(move |m: &str| sink.lock().unwrap().push(m.to_string())),
        )
        .with_trust(CacheTrust::OwnerOnly);
        let key = [0x5c; 32];
        std::fs::write(cache.entry_path(&key).unwrap(), &bytes).unwrap();
        match cache.load(&key, "id") {
            Some(payload) => prop_assert_eq!(encode(&key, "id", &payload), bytes),
            None => prop_assert_eq!(warnings.lock().unwrap().len(), 1),
        }
    }
}
