//! Scans of data sharded across ranks (GPUs, or threads standing in for them): rank `r` holds
//! one contiguous shard of the whole array (any length, zero included); the result on each rank
//! is its part of the scan of the concatenation in rank order, inclusive or exclusive.
//!
//! # The scheme (per rank, 3 passes over the shard)
//! 1. reduce the local shard to its total (on the device: [`crate::Reducer`]);
//! 2. all-gather the `size` totals (one element per rank) through the [`ShardExchange`];
//! 3. fold the totals of ranks `0..rank` in rank order, on the device (a reduction of the
//!    gathered array's first `rank` elements: the identity for rank 0), into the prefix;
//! 4. scan the shard seeded with that prefix ([`crate::ScanExtras::init`]).
//!
//! No host round trip in steady state with a device-native exchange (NCCL): every step is
//! enqueued on the caller's stream, so the whole scan can be captured into a CUDA graph.
//!
//! # Agreement and failure
//! When a sharded scanner is built, the ranks all-gather a [`ShardDescriptor`] (element size,
//! a hash of the operator, the mode, the group size): any difference is a
//! [`ShardError::Mismatch`] on every rank. A rank that fails before a collective calls
//! [`ShardExchange::abort`]; the others' collectives then return [`ShardError::PeerFailed`] (or,
//! where the failure cannot be signalled, [`ShardError::Timeout`] after the exchange's timeout):
//! never a hang.
//!
//! The communication is the [`ShardExchange`] trait, so the ranks' logic runs in CI without a GPU
//! ([`ThreadExchange`]: ranks as threads, over the CPU backend: [`scan_sharded_cpu`]); the NCCL
//! implementation (`NcclExchange`, cargo feature `nccl`) is what GPUs use.

mod device;
#[cfg(feature = "nccl")]
pub mod nccl;
mod threads;

pub use device::ShardedScanner;
pub use threads::ThreadExchange;

use crate::cpu;
use crate::error::ScanError;
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::CudaStream;
use scan_codegen::ScanMode;
use scan_core::{ScanElement, ScanOp};
use std::sync::Arc;
use std::time::Duration;

/// How long a collective waits for the other ranks by default before it gives up with
/// [`ShardError::Timeout`] (the exchanges take their own).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// What ranks need from their communicator: who they are, and an all-gather of one small value
/// per rank. Implementations must return within bounded time (their timeout) when a peer fails
/// or vanishes, with a typed error.
pub trait ShardExchange {
    /// This rank, `0..size()`.
    fn rank(&self) -> usize;
    /// The number of ranks.
    fn size(&self) -> usize;
    /// Host all-gather: every rank contributes `mine`; returns the `size()` contributions in rank
    /// order. Blocks until all ranks contributed, a peer aborted
    /// ([`ShardError::PeerFailed`]) or the timeout passed ([`ShardError::Timeout`]).
    fn all_gather<T: ScanElement>(&self, mine: T) -> Result<Vec<T>, ShardError>;
    /// Tells the other ranks that this one fails and will take part in no further collective:
    /// their pending and later collectives return [`ShardError::PeerFailed`] naming this rank.
    /// Idempotent; the exchange is unusable afterwards.
    fn abort(&self, reason: &str);
}

/// A [`ShardExchange`] that can also all-gather device memory, for the GPU path.
pub trait DeviceShardExchange: ShardExchange {
    /// Enqueues on `stream` the all-gather of `bytes` bytes at `send` from every rank into
    /// `recv` (`size() * bytes` bytes, rank order). A device-native exchange (NCCL) returns once
    /// it is enqueued; a staged one ([`ThreadExchange`]) copies through the host and returns when
    /// done.
    ///
    /// # Safety
    /// `send` and `recv` must be device addresses in `stream`'s context, valid for `bytes` and
    /// `size() * bytes` bytes, ordered on `stream` after their writers; they must not overlap.
    unsafe fn all_gather_device(
        &self,
        stream: &Arc<CudaStream>,
        send: CUdeviceptr,
        recv: CUdeviceptr,
        bytes: usize,
    ) -> Result<(), ShardError>;

    /// Waits for everything enqueued on `stream`, for at most the exchange's timeout; a peer's
    /// failure or the timeout is an error (and aborts the exchange, so the device stops waiting).
    fn synchronize(&self, stream: &Arc<CudaStream>) -> Result<(), ShardError>;

    /// Whether [`DeviceShardExchange::all_gather_device`] stays on the device (no host round
    /// trip; capturable into a CUDA graph).
    fn device_native(&self) -> bool;

    /// Brackets (`true`, then `false`) a phase in which this rank's thread may block behind a
    /// collective whose peers never come: enqueueing the exchange and the work after it, which
    /// can wait for the device. An exchange that can abort from another thread (NCCL's watchdog)
    /// bounds the phase by its timeout; the default does nothing.
    fn watch_phase(&self, _active: bool) {}
}

/// Why a sharded scan failed. Every rank of a failed collective gets one of these; none hangs.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// This rank's own scan failed (bad input, GPU error, ...).
    #[error(transparent)]
    Scan(#[from] ScanError),

    /// Another rank failed before (or during) a collective and said so.
    #[error("rank {rank} failed: {reason}")]
    PeerFailed {
        /// The rank that failed.
        rank: usize,
        /// Its own account of the failure (its error, as text).
        reason: String,
    },

    /// The collective did not complete in time: the ranks in `missing` never arrived (empty when
    /// unknown, as with NCCL). The exchange is aborted.
    #[error("rank {rank}: timed out after {waited:?} waiting for the other ranks (missing: {missing:?}); the exchange is aborted")]
    Timeout {
        /// The rank that timed out (this one).
        rank: usize,
        /// How long it waited.
        waited: Duration,
        /// The ranks whose contribution never arrived; empty when the exchange cannot tell.
        missing: Vec<usize>,
    },

    /// The ranks disagree on what they scan (element type, operator, mode, group size).
    #[error("the ranks disagree on the scan: rank {rank} has {what} = {mine}, rank {other} has {theirs}")]
    Mismatch {
        /// What differs: `"group size"`, `"element size"`, `"mode"`, the operator, or the
        /// descriptor's own format.
        what: &'static str,
        /// This rank.
        rank: usize,
        /// This rank's value of `what`.
        mine: String,
        /// The first rank whose value differs.
        other: usize,
        /// That rank's value of `what`.
        theirs: String,
    },

    /// This rank's exchange was aborted earlier (by itself or after a failure): make a new one.
    #[error(
        "the exchange of rank {rank} was aborted earlier ({reason}); create a new communicator"
    )]
    Aborted {
        /// This rank.
        rank: usize,
        /// Why the exchange was aborted.
        reason: String,
    },

    /// The group itself is not usable (no ranks, a rank out of range, an unreadable id, ...).
    #[error("invalid shard group: {detail}")]
    Config {
        /// What is wrong with the group, and which setting to fix.
        detail: String,
    },

    /// An NCCL call failed.
    #[error("NCCL failed while {step}: {detail}")]
    Nccl {
        /// The NCCL call or what it was doing.
        step: &'static str,
        /// NCCL's error string, with what it implies for the communicator.
        detail: String,
    },

    /// libnccl could not be loaded (only the `nccl` module, behind the cargo feature of that
    /// name, returns this; without the feature there is no NCCL exchange to build).
    #[error("NCCL is not available: {detail}")]
    NcclUnavailable {
        /// Why, and how to make libnccl loadable.
        detail: String,
    },
}

/// What the ranks of one sharded scan must agree on, exchanged once when the scanner is built.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardDescriptor {
    /// `MAGIC` in the high 32 bits, the format version in the low.
    pub format: u64,
    /// Size of one element in bytes.
    pub elem_bytes: u64,
    /// FNV-1a hash of the operator's lowered form (`ScanOp::device_op`: element type and
    /// bodies), so two operators with the same element type still differ.
    pub op_hash: u64,
    /// The mode (0 inclusive, 1 exclusive) in the low byte, the group size as this rank sees it
    /// in the high 32 bits.
    pub mode_and_size: u64,
}

const DESCRIPTOR_FORMAT: u64 = (0x5343_414e << 32) | 1; // "SCAN", version 1

impl ShardDescriptor {
    /// The descriptor of a scan of `Op` in `mode` over `size` ranks.
    pub fn of<Op: ScanOp>(mode: ScanMode, size: usize) -> ShardDescriptor {
        ShardDescriptor {
            format: DESCRIPTOR_FORMAT,
            elem_bytes: std::mem::size_of::<Op::Elem>() as u64,
            op_hash: fnv1a(format!("{:?}", Op::device_op()).as_bytes()),
            mode_and_size: ((size as u64) << 32) | mode_code(mode),
        }
    }

    fn mode_name(&self) -> String {
        match self.mode_and_size & 0xff {
            0 => "inclusive".into(),
            1 => "exclusive".into(),
            other => format!("unknown ({other})"),
        }
    }

    /// The first way `theirs` (rank `other`'s) differs from `self` (rank `rank`'s), as an error.
    fn compare(&self, rank: usize, theirs: &ShardDescriptor, other: usize) -> Option<ShardError> {
        let mismatch = |what, mine: String, theirs: String| {
            Some(ShardError::Mismatch {
                what,
                rank,
                mine,
                other,
                theirs,
            })
        };
        if self.format != theirs.format {
            mismatch(
                "descriptor format",
                format!("{:#x}", self.format),
                format!("{:#x}", theirs.format),
            )
        } else if self.mode_and_size >> 32 != theirs.mode_and_size >> 32 {
            mismatch(
                "group size",
                (self.mode_and_size >> 32).to_string(),
                (theirs.mode_and_size >> 32).to_string(),
            )
        } else if self.elem_bytes != theirs.elem_bytes {
            mismatch(
                "element size",
                format!("{} bytes", self.elem_bytes),
                format!("{} bytes", theirs.elem_bytes),
            )
        } else if self.op_hash != theirs.op_hash {
            mismatch(
                "operator (hash of its element type and bodies)",
                format!("{:#018x}", self.op_hash),
                format!("{:#018x}", theirs.op_hash),
            )
        } else if self.mode_and_size != theirs.mode_and_size {
            mismatch("mode", self.mode_name(), theirs.mode_name())
        } else {
            None
        }
    }
}

fn mode_code(mode: ScanMode) -> u64 {
    match mode {
        ScanMode::Inclusive => 0,
        ScanMode::Exclusive => 1,
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// All-gathers this rank's descriptor and checks that every rank has the same; every rank sees
/// the same gathered set, so every rank returns the same verdict.
pub fn agree<X: ShardExchange + ?Sized>(
    exchange: &X,
    mine: ShardDescriptor,
) -> Result<(), ShardError> {
    check_group(exchange)?;
    // Field by field (four small collectives, once per scanner): the descriptor is not an
    // element type of its own, so that it stays out of `ScanElement`'s list of implementors.
    let fields = [
        exchange.all_gather(mine.format)?,
        exchange.all_gather(mine.elem_bytes)?,
        exchange.all_gather(mine.op_hash)?,
        exchange.all_gather(mine.mode_and_size)?,
    ];
    let all = (0..exchange.size()).map(|r| ShardDescriptor {
        format: fields[0][r],
        elem_bytes: fields[1][r],
        op_hash: fields[2][r],
        mode_and_size: fields[3][r],
    });
    let rank = exchange.rank();
    for (other, theirs) in all.enumerate() {
        if let Some(error) = mine.compare(rank, &theirs, other) {
            return Err(error);
        }
    }
    Ok(())
}

fn check_group<X: ShardExchange + ?Sized>(exchange: &X) -> Result<(), ShardError> {
    if exchange.size() == 0 || exchange.rank() >= exchange.size() {
        return Err(ShardError::Config {
            detail: format!("rank {} of a group of {}", exchange.rank(), exchange.size()),
        });
    }
    Ok(())
}

/// Runs `f`; if it fails, aborts the exchange first (so that the other ranks, who would wait for
/// this one in the next collective, return [`ShardError::PeerFailed`] instead of hanging).
pub(crate) fn or_abort<X: ShardExchange + ?Sized, R>(
    exchange: &X,
    f: impl FnOnce() -> Result<R, ShardError>,
) -> Result<R, ShardError> {
    let result = f();
    if let Err(error) = &result {
        // A peer's failure is already known to everyone; anything else is news to them.
        if !matches!(
            error,
            ShardError::PeerFailed { .. } | ShardError::Aborted { .. }
        ) {
            exchange.abort(&error.to_string());
        }
    }
    result
}

/// The fold of `items` in order, `identity ⊕ items[0] ⊕ …`.
fn fold<Op: ScanOp>(items: &[Op::Elem]) -> Op::Elem {
    items
        .iter()
        .fold(Op::identity(), |acc, &x| Op::combine(acc, x))
}

/// The total of a shard on the CPU: in order, in parallel for long shards (chunk totals folded
/// in chunk order, so non-commutative operators are fine).
fn reduce_cpu<Op: ScanOp>(shard: &[Op::Elem]) -> Op::Elem {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    if shard.len() <= CHUNK {
        return fold::<Op>(shard);
    }
    let totals: Vec<Op::Elem> = shard.par_chunks(CHUNK).map(fold::<Op>).collect();
    fold::<Op>(&totals)
}

/// One rank's part of a sharded scan on the CPU backend: `output` becomes this rank's part of the
/// scan (in `mode`) of the concatenation of every rank's `input` in rank order. Returns the total
/// of the whole array (the same on every rank).
///
/// Each call agrees on the descriptor first (one extra all-gather; the CPU path is for tests and
/// hosts without GPUs), then follows the scheme in the module docs with the CPU's parallel scan.
/// A local error (length mismatch) aborts the exchange before returning, so the other ranks
/// return [`ShardError::PeerFailed`] instead of waiting.
pub fn scan_sharded_cpu<Op: ScanOp, X: ShardExchange + ?Sized>(
    exchange: &X,
    input: &[Op::Elem],
    output: &mut [Op::Elem],
    mode: ScanMode,
) -> Result<Op::Elem, ShardError> {
    or_abort(exchange, || {
        ScanError::check_lengths(input.len(), output.len())?;
        Ok(())
    })?;
    agree(exchange, ShardDescriptor::of::<Op>(mode, exchange.size()))?;
    let total = reduce_cpu::<Op>(input);
    let totals = exchange.all_gather(total)?;
    let rank = exchange.rank();
    let prefix = fold::<Op>(&totals[..rank]);
    cpu::scan_parallel_with_init::<Op>(input, output, prefix, mode);
    Ok(fold::<Op>(&totals))
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_core::builtin::{Add, Max};

    #[test]
    fn descriptors_differ_in_what_they_should() {
        let a = ShardDescriptor::of::<Add<i32>>(ScanMode::Inclusive, 2);
        assert_eq!(a, ShardDescriptor::of::<Add<i32>>(ScanMode::Inclusive, 2));
        let cases = [
            (
                ShardDescriptor::of::<Add<i32>>(ScanMode::Exclusive, 2),
                "mode",
            ),
            (
                ShardDescriptor::of::<Add<i64>>(ScanMode::Inclusive, 2),
                "element size",
            ),
            (
                ShardDescriptor::of::<Max<i32>>(ScanMode::Inclusive, 2),
                "operator (hash of its element type and bodies)",
            ),
            (
                ShardDescriptor::of::<Add<i32>>(ScanMode::Inclusive, 3),
                "group size",
            ),
        ];
        for (other, expected) in cases {
            match a.compare(0, &other, 1) {
                Some(ShardError::Mismatch { what, .. }) => assert_eq!(what, expected),
                other => panic!("expected a {expected} mismatch, got {other:?}"),
            }
        }
    }
}
