//! The bytes of one disk-cache entry: encoding, and decoding bytes that anyone may have written.
//!
//! ```text
//! magic "SCANGENK" (8) | format version u32 LE (4) | key (32) | identity length u32 LE (4)
//! | payload length u64 LE (8) | sha256(identity ‖ payload) (32) | identity (UTF-8) | payload
//! ```
//!
//! The identity names the compiler that produced the payload (scangen, NVRTC version, target,
//! options; see `compile::compiler_identity`), so the cache can refuse an image built by
//! another compiler and say which one built it. The checksum catches damage, not a writer:
//! anyone who can write an entry can compute a matching sha256. Who may write the cache is
//! `cache_trust`'s job.
//!
//! `decode` is the parser of untrusted input here: it never panics and never allocates (it
//! borrows from the bytes it was given), whatever those bytes are; a property test holds it to
//! that.

use sha2::{Digest, Sha256};

/// First bytes of every entry.
pub const MAGIC: &[u8; 8] = b"SCANGENK";
/// Bumped whenever the layout above changes. Part of the cache key too, so entries of an older
/// layout are never even looked up (they are plain misses, not warnings).
pub const FORMAT_VERSION: u32 = 2;
/// Bytes before the identity.
pub const HEADER_LEN: usize = 8 + 4 + 32 + 4 + 8 + 32;

/// A 32-byte cache key (a sha256 digest).
pub type CacheKey = [u8; 32];

/// Hex spelling of a key, used as the file name.
pub fn key_hex(key: &CacheKey) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// A decoded entry, borrowing from the bytes it was decoded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The compiler that built the payload, as the writer recorded it.
    pub identity: &'a str,
    /// The compiled kernel image (CUBIN or PTX), checked against the entry's sha256.
    pub payload: &'a [u8],
}

/// Why bytes are not an intact entry for the key asked for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// Fewer bytes than a header ([`HEADER_LEN`]).
    #[error("truncated header ({len} of {HEADER_LEN} bytes)")]
    TruncatedHeader {
        /// The number of bytes there are.
        len: usize,
    },
    /// The bytes do not start with the magic `SCANGENK`.
    #[error("not a scangen cache file (bad magic)")]
    BadMagic,
    /// The entry has another layout than [`FORMAT_VERSION`].
    #[error("format version {found}, expected {FORMAT_VERSION}")]
    Version {
        /// The version the entry declares.
        found: u32,
    },
    /// The entry was written for another key (a file renamed or copied over this one).
    #[error("entry belongs to key {}", key_hex(.stored))]
    ForeignKey {
        /// The key recorded in the entry.
        stored: CacheKey,
    },
    /// The bytes after the header are not exactly the identity and payload the header
    /// announces (truncated, or with trailing bytes).
    #[error("{actual} bytes follow the header, which announces {identity} (identity) + {payload} (payload)")]
    Length {
        /// Bytes after the header.
        actual: usize,
        /// The identity length the header announces.
        identity: u32,
        /// The payload length the header announces.
        payload: u64,
    },
    /// The identity and payload do not match the header's sha256: the entry is damaged.
    #[error("checksum mismatch")]
    Checksum,
    /// The compiler identity is not valid UTF-8.
    #[error("the compiler identity is not UTF-8")]
    Identity,
}

/// The bytes of a cache entry holding `payload`, built by `identity`, for `key`.
pub fn encode(key: &CacheKey, identity: &str, payload: &[u8]) -> Vec<u8> {
    let identity_len = u32::try_from(identity.len()).expect("a compiler identity under 4 GiB");
    let mut out = Vec::with_capacity(HEADER_LEN + identity.len() + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&identity_len.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(identity.as_bytes(), payload));
    out.extend_from_slice(identity.as_bytes());
    out.extend_from_slice(payload);
    out
}

fn checksum(identity: &[u8], payload: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(identity);
    h.update(payload);
    h.finalize().into()
}

/// Splits `N` bytes off the front of `bytes` (which the caller has checked is long enough).
fn take<'a, const N: usize>(bytes: &mut &'a [u8]) -> &'a [u8; N] {
    let (head, rest) = bytes.split_at(N);
    *bytes = rest;
    head.try_into().expect("split_at gave N bytes")
}

/// The entry in `bytes`, if they are intact and were written for `key`.
pub fn decode<'a>(bytes: &'a [u8], key: &CacheKey) -> Result<Entry<'a>, EntryError> {
    if bytes.len() < HEADER_LEN {
        return Err(EntryError::TruncatedHeader { len: bytes.len() });
    }
    let mut rest = bytes;
    if take::<8>(&mut rest) != MAGIC {
        return Err(EntryError::BadMagic);
    }
    let version = u32::from_le_bytes(*take::<4>(&mut rest));
    if version != FORMAT_VERSION {
        return Err(EntryError::Version { found: version });
    }
    let stored = *take::<32>(&mut rest);
    if &stored != key {
        return Err(EntryError::ForeignKey { stored });
    }
    let identity_len = u32::from_le_bytes(*take::<4>(&mut rest));
    let payload_len = u64::from_le_bytes(*take::<8>(&mut rest));
    let sum = *take::<32>(&mut rest);
    // Compared in u64 arithmetic that cannot overflow (identity_len < 2^32, and a payload
    // length near 2^64 fails the comparison): the header's lengths are the writer's word, not
    // something to allocate or index by before they are checked against the real length.
    let announced = u64::from(identity_len).checked_add(payload_len);
    if announced != Some(rest.len() as u64) {
        return Err(EntryError::Length {
            actual: rest.len(),
            identity: identity_len,
            payload: payload_len,
        });
    }
    let (identity, payload) = rest.split_at(identity_len as usize);
    if checksum(identity, payload) != sum {
        return Err(EntryError::Checksum);
    }
    let identity = std::str::from_utf8(identity).map_err(|_| EntryError::Identity)?;
    Ok(Entry { identity, payload })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: CacheKey = [7; 32];

    #[test]
    fn round_trip() {
        let bytes = encode(&KEY, "nvrtc 12.9 sm_90", b"cubin");
        assert_eq!(bytes.len(), HEADER_LEN + 16 + 5);
        let entry = decode(&bytes, &KEY).unwrap();
        assert_eq!(entry.identity, "nvrtc 12.9 sm_90");
        assert_eq!(entry.payload, b"cubin");
        // Empty identity and payload are still well-formed entries.
        let empty = encode(&KEY, "", b"");
        assert_eq!(
            decode(&empty, &KEY).unwrap(),
            Entry {
                identity: "",
                payload: b""
            }
        );
    }

    #[test]
    fn every_header_field_is_checked() {
        let good = encode(&KEY, "id", b"payload");
        let with = |at: usize, value: &[u8]| {
            let mut b = good.clone();
            b[at..at + value.len()].copy_from_slice(value);
            decode(&b, &KEY).unwrap_err()
        };
        assert_eq!(with(0, b"X"), EntryError::BadMagic);
        assert_eq!(
            with(8, &9u32.to_le_bytes()),
            EntryError::Version { found: 9 }
        );
        assert_eq!(
            with(12, &[1; 32]),
            EntryError::ForeignKey { stored: [1; 32] }
        );
        assert_eq!(
            with(44, &3u32.to_le_bytes()),
            EntryError::Length {
                actual: 9,
                identity: 3,
                payload: 7
            }
        );
        // A payload length of 2^64 - 1 plus any identity length must not overflow.
        assert!(matches!(
            with(48, &u64::MAX.to_le_bytes()),
            EntryError::Length { .. }
        ));
        assert_eq!(with(56, &[0; 32]), EntryError::Checksum);
        // The checksum covers the identity, not only the payload.
        assert_eq!(with(HEADER_LEN, b"ID"), EntryError::Checksum);
    }

    #[test]
    fn a_non_utf8_identity_is_an_error() {
        let mut bytes = encode(&KEY, "ab", b"p");
        bytes[HEADER_LEN] = 0xff;
        // Re-seal so only the identity's encoding is wrong.
        let sum = checksum(&bytes[HEADER_LEN..HEADER_LEN + 2], b"p");
        bytes[56..88].copy_from_slice(&sum);
        assert_eq!(decode(&bytes, &KEY).unwrap_err(), EntryError::Identity);
    }

    #[test]
    fn messages_say_what_is_wrong() {
        assert_eq!(
            EntryError::TruncatedHeader { len: 50 }.to_string(),
            "truncated header (50 of 88 bytes)"
        );
        assert_eq!(
            EntryError::ForeignKey { stored: [0xab; 32] }.to_string(),
            format!("entry belongs to key {}", "ab".repeat(32))
        );
    }
}
