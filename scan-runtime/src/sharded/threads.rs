//! Ranks as threads of one process: an in-process [`ShardExchange`] (a shared table of
//! contributions, a condition variable, a timeout). Used by the CI tests over the CPU backend,
//! and, through the host, for several ranks sharing one GPU (`DeviceShardExchange`, staged).

use super::{DeviceShardExchange, ShardError, ShardExchange, DEFAULT_TIMEOUT};
use crate::error::driver;
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{result, CudaStream};
use scan_core::ScanElement;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One rank of an in-process group made by [`ThreadExchange::group`]; move each into its own
/// thread. Collectives are matched by order: the k-th collective of every rank forms round k.
///
/// Dropping a rank while others still wait for it counts as that rank failing ("dropped"), so a
/// rank whose thread panics or returns early never leaves the others hanging.
pub struct ThreadExchange {
    rank: usize,
    shared: Arc<Shared>,
    /// This rank's next round.
    round: std::cell::Cell<u64>,
}

struct Shared {
    size: usize,
    timeout: Duration,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    rounds: HashMap<u64, Round>,
    /// The first failure: (rank, reason).
    failed: Option<(usize, String)>,
}

struct Round {
    contributions: Vec<Option<Box<dyn Any + Send>>>,
    /// Ranks that took the result; the round is removed when all have.
    taken: usize,
}

impl std::fmt::Debug for ThreadExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadExchange")
            .field("rank", &self.rank)
            .field("size", &self.shared.size)
            .finish()
    }
}

impl ThreadExchange {
    /// `size` ranks whose collectives give up after [`DEFAULT_TIMEOUT`].
    pub fn group(size: usize) -> Vec<ThreadExchange> {
        ThreadExchange::group_with_timeout(size, DEFAULT_TIMEOUT)
    }

    /// `size` ranks whose collectives give up after `timeout` ([`ShardError::Timeout`]).
    pub fn group_with_timeout(size: usize, timeout: Duration) -> Vec<ThreadExchange> {
        let shared = Arc::new(Shared {
            size,
            timeout,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        (0..size)
            .map(|rank| ThreadExchange {
                rank,
                shared: shared.clone(),
                round: std::cell::Cell::new(0),
            })
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking rank poisons nothing we rely on: the table stays consistent per operation.
        self.shared
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The all-gather of any cloneable value (the typed one is the trait's).
    fn gather_any<T: Any + Send + Clone>(&self, mine: T) -> Result<Vec<T>, ShardError> {
        let size = self.shared.size;
        let round = self.round.get();
        let mut state = self.lock();
        if let Some((rank, reason)) = &state.failed {
            return Err(self.failure(*rank, reason));
        }
        self.round.set(round + 1);
        let entry = state.rounds.entry(round).or_insert_with(|| Round {
            contributions: (0..size).map(|_| None).collect(),
            taken: 0,
        });
        entry.contributions[self.rank] = Some(Box::new(mine));
        self.shared.changed.notify_all();
        let start = Instant::now();
        loop {
            let complete = state
                .rounds
                .get(&round)
                .is_some_and(|r| r.contributions.iter().all(Option::is_some));
            if complete {
                let entry = state.rounds.get_mut(&round).expect("present");
                let mut values = Vec::with_capacity(size);
                for (other, value) in entry.contributions.iter().enumerate() {
                    let value = value.as_ref().expect("complete");
                    match value.downcast_ref::<T>() {
                        Some(v) => values.push(v.clone()),
                        None => {
                            return Err(ShardError::Mismatch {
                                what: "type of an all-gathered value",
                                rank: self.rank,
                                mine: std::any::type_name::<T>().into(),
                                other,
                                theirs: "another type".into(),
                            })
                        }
                    }
                }
                entry.taken += 1;
                if entry.taken == size {
                    state.rounds.remove(&round);
                }
                return Ok(values);
            }
            if let Some((rank, reason)) = &state.failed {
                return Err(self.failure(*rank, reason));
            }
            let waited = start.elapsed();
            if waited >= self.shared.timeout {
                let missing: Vec<usize> = state.rounds[&round]
                    .contributions
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.is_none())
                    .map(|(r, _)| r)
                    .collect();
                // Nobody else will complete this round either: tell them now.
                state.failed = Some((
                    self.rank,
                    format!("timed out after {waited:?} waiting for rank(s) {missing:?}"),
                ));
                self.shared.changed.notify_all();
                return Err(ShardError::Timeout {
                    rank: self.rank,
                    waited,
                    missing,
                });
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, self.shared.timeout - waited)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }

    fn failure(&self, rank: usize, reason: &str) -> ShardError {
        if rank == self.rank {
            ShardError::Aborted {
                rank,
                reason: reason.into(),
            }
        } else {
            ShardError::PeerFailed {
                rank,
                reason: reason.into(),
            }
        }
    }
}

impl ShardExchange for ThreadExchange {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.shared.size
    }

    fn all_gather<T: ScanElement>(&self, mine: T) -> Result<Vec<T>, ShardError> {
        self.gather_any(mine)
    }

    fn abort(&self, reason: &str) {
        let mut state = self.lock();
        if state.failed.is_none() {
            state.failed = Some((self.rank, reason.into()));
        }
        self.shared.changed.notify_all();
    }
}

impl Drop for ThreadExchange {
    fn drop(&mut self) {
        // Only a rank that leaves rounds open behind it is a failure: one that took part in every
        // round that exists has nothing anyone waits for.
        let mut state = self.lock();
        let owes = state.rounds.keys().any(|&round| round >= self.round.get());
        if owes && state.failed.is_none() {
            state.failed = Some((
                self.rank,
                "the rank was dropped (its thread ended or panicked) before the collective".into(),
            ));
            self.shared.changed.notify_all();
        }
    }
}

/// Staged through the host: copies the local bytes down, all-gathers them between the threads,
/// copies the gathered bytes up. Synchronises the stream (a host round trip, not capturable): for
/// tests of the device path with several ranks on one GPU, never for performance.
impl DeviceShardExchange for ThreadExchange {
    unsafe fn all_gather_device(
        &self,
        stream: &Arc<CudaStream>,
        send: CUdeviceptr,
        recv: CUdeviceptr,
        bytes: usize,
    ) -> Result<(), ShardError> {
        let mut mine = vec![0u8; bytes];
        stream
            .context()
            .bind_to_thread()
            .map_err(driver("making the device's context current"))?;
        // SAFETY: `send` holds `bytes` bytes ordered on `stream` (caller's contract); the stream is
        // synchronised before `mine` is read.
        unsafe { result::memcpy_dtoh_async(&mut mine, send, stream.cu_stream()) }
            .map_err(driver("copying this rank's bytes to the host"))?;
        stream
            .synchronize()
            .map_err(driver("waiting for this rank's bytes"))?;
        let all = self.gather_any(mine)?;
        let flat: Vec<u8> = all.concat();
        if flat.len() != bytes * self.shared.size {
            return Err(ShardError::Mismatch {
                what: "bytes per rank of a device all-gather",
                rank: self.rank,
                mine: bytes.to_string(),
                other: self.rank,
                theirs: format!("{} in all", flat.len()),
            });
        }
        // SAFETY: `recv` holds `size * bytes` bytes (caller's contract); the copy from pageable
        // memory is staged before the call returns, and the stream is synchronised below anyway.
        unsafe { result::memcpy_htod_async(recv, &flat, stream.cu_stream()) }
            .map_err(driver("copying the gathered bytes to the device"))?;
        stream
            .synchronize()
            .map_err(driver("waiting for the gathered bytes"))?;
        Ok(())
    }

    fn synchronize(&self, stream: &Arc<CudaStream>) -> Result<(), ShardError> {
        // Nothing of this exchange runs on the device: the stream finishes on its own.
        stream
            .synchronize()
            .map_err(driver("waiting for the sharded scan"))?;
        Ok(())
    }

    fn device_native(&self) -> bool {
        false
    }
}
