//! One NCCL communicator, owned together with the watchdog thread that aborts it.
//!
//! Why a thread: a sharded scan enqueues the all-gather of the shard totals, then more work on the
//! same stream. If a peer never joins the collective (it failed before it, or vanished), NCCL's
//! kernel waits on the device forever, and a host call that waits for the device (a lazily loaded
//! kernel, an allocation, `ncclCommAbort` itself joining NCCL's own threads) blocks the rank's
//! thread before any deadline of ours can run. Only another thread can then release it. While a
//! rank is inside such a phase it arms the watchdog; past the timeout the watchdog aborts the
//! communicator, which makes NCCL's kernels return, and the rank's calls fail with a typed error.
//! Every abort (a timeout, a peer's error, a local failure) goes through the watchdog, so the
//! caller never waits for `ncclCommAbort`.

use super::super::ShardError;
use crate::gpu::Gpu;
use cudarc::nccl::sys::{self, ncclComm_t, ncclResult_t};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// A live communicator, its abort state and its watchdog's schedule.
pub(super) struct Comm {
    raw: ncclComm_t,
    gpu: Gpu,
    rank: usize,
    /// Held across every NCCL call on `raw` (they only enqueue, so briefly), and by the abort: the
    /// communicator is not freed under a call (unless the call is stuck: see `abort_now`).
    calls: Mutex<()>,
    /// Set once an abort is requested or the communicator is destroyed: no call starts after it.
    gone: AtomicBool,
    /// Why it was aborted, for the errors of later calls.
    reason: OnceLock<String>,
    watch: Mutex<Watch>,
    wake: Condvar,
    timeout: Duration,
}

#[derive(Default)]
struct Watch {
    armed_since: Option<Instant>,
    abort: bool,
    stop: bool,
    /// The watchdog has returned (after its abort, if any).
    done: bool,
}

// SAFETY: an NCCL communicator may be used from any thread; every call on it is serialized by
// `calls`, and the abort (from the watchdog thread) takes the same lock.
unsafe impl Send for Comm {}
// SAFETY: as above; the rest is atomics and mutexes.
unsafe impl Sync for Comm {}

impl Comm {
    /// Takes ownership of `raw` (a communicator of `gpu`, being created or live) and starts its
    /// watchdog.
    pub(super) fn start(
        raw: ncclComm_t,
        gpu: &Gpu,
        rank: usize,
        timeout: Duration,
    ) -> Result<Arc<Comm>, ShardError> {
        let comm = Arc::new(Comm {
            raw,
            gpu: gpu.clone(),
            rank,
            calls: Mutex::new(()),
            gone: AtomicBool::new(raw.is_null()),
            reason: OnceLock::new(),
            watch: Mutex::new(Watch::default()),
            wake: Condvar::new(),
            timeout,
        });
        let watched = comm.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("scangen-nccl-watchdog-{rank}"))
            .spawn(move || watched.run());
        if let Err(e) = spawned {
            // Without a watchdog nothing could abort it later: abort it here, synchronously.
            comm.abort_now();
            return Err(ShardError::Config {
                detail: format!("starting the NCCL watchdog thread of rank {rank}: {e}"),
            });
        }
        Ok(comm)
    }

    /// Runs `f` on the raw communicator under the call lock; an error if it was aborted.
    pub(super) fn call<R>(&self, f: impl FnOnce(ncclComm_t) -> R) -> Result<R, ShardError> {
        let _call = lock(&self.calls);
        if self.gone.load(Ordering::Acquire) {
            return Err(self.aborted_error());
        }
        Ok(f(self.raw))
    }

    /// The error of a call on an aborted communicator.
    pub(super) fn aborted_error(&self) -> ShardError {
        ShardError::Aborted {
            rank: self.rank,
            reason: self
                .reason
                .get()
                .cloned()
                .unwrap_or_else(|| "the NCCL communicator was aborted after a failure".into()),
        }
    }

    /// Whether the communicator is aborted (or destroyed).
    pub(super) fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Acquire)
    }

    /// Asks the watchdog to abort the communicator (once; later requests keep the first reason)
    /// and returns at once: no call starts on it after this.
    pub(super) fn request_abort(&self, reason: String) {
        if self.gone.swap(true, Ordering::AcqRel) {
            // Aborted already (or destroyed): nothing left to abort.
            return;
        }
        let _ = self.reason.set(reason);
        let mut watch = lock(&self.watch);
        watch.abort = true;
        self.wake.notify_all();
    }

    /// From now until [`Comm::disarm`], the watchdog aborts the communicator once the timeout has
    /// passed.
    pub(super) fn arm(&self) {
        let mut watch = lock(&self.watch);
        if watch.armed_since.is_none() {
            watch.armed_since = Some(Instant::now());
            self.wake.notify_all();
        }
    }

    /// Ends the phase [`Comm::arm`] began.
    pub(super) fn disarm(&self) {
        lock(&self.watch).armed_since = None;
    }

    /// Finalizes and destroys a live communicator (bounded by `finalize`'s wait), or leaves an
    /// aborted one to the watchdog; then stops the watchdog.
    pub(super) fn close(&self, finalize: impl FnOnce() -> Result<(), ShardError>) {
        if !self.is_gone() {
            let _ = self.gpu.context().bind_to_thread();
            // A blocking communicator's finalize waits for its outstanding collectives.
            self.arm();
            let finalized = finalize();
            self.disarm();
            if finalized.is_ok() {
                let _call = lock(&self.calls);
                if !self.gone.swap(true, Ordering::AcqRel) {
                    // SAFETY: a live, finalized communicator, destroyed once (the flag above),
                    // never used again.
                    let _ = unsafe { sys::ncclCommDestroy(self.raw) };
                }
            } else {
                self.request_abort("finalizing the communicator failed or timed out".into());
            }
        }
        // Wait (bounded: an abort can hang in NCCL) for the watchdog to finish, so that an abort
        // in flight is not cut off by the process exiting under it.
        let deadline = Instant::now() + self.timeout.max(Duration::from_secs(1));
        let mut watch = lock(&self.watch);
        watch.stop = true;
        self.wake.notify_all();
        while !watch.done {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tracing::warn!(
                    rank = self.rank,
                    "the NCCL watchdog did not finish its abort in time"
                );
                return;
            }
            watch = self
                .wake
                .wait_timeout(watch, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// The watchdog thread: waits for an abort request, an armed phase past its deadline, or the
    /// stop.
    fn run(&self) {
        self.watch_until_done();
        lock(&self.watch).done = true;
        self.wake.notify_all();
    }

    fn watch_until_done(&self) {
        let mut watch = lock(&self.watch);
        loop {
            if watch.abort {
                drop(watch);
                self.abort_now();
                return;
            }
            if watch.stop {
                return;
            }
            watch = match watch.armed_since {
                Some(_) if self.gone.load(Ordering::Acquire) => {
                    // Destroyed, or its abort already requested (handled at the top).
                    watch.armed_since = None;
                    continue;
                }
                Some(since) if since.elapsed() >= self.timeout => {
                    let _ = self.reason.set(format!(
                        "no progress within the timeout ({:?}): a peer failed before the \
                         collective or left",
                        self.timeout
                    ));
                    self.gone.store(true, Ordering::Release);
                    watch.abort = true;
                    continue;
                }
                Some(since) => {
                    let left = self.timeout.saturating_sub(since.elapsed());
                    self.wake
                        .wait_timeout(watch, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => self.wake.wait(watch).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }

    /// `ncclCommAbort`, under the call lock: frees the communicator and makes NCCL's kernels
    /// waiting for peers return.
    fn abort_now(&self) {
        if self.raw.is_null() {
            return;
        }
        // A blocking communicator's call may itself be what waits for the lost peer: then abort
        // without the lock, concurrently with that call, as NCCL allows to release it.
        let deadline = Instant::now() + Duration::from_millis(100);
        let _call = loop {
            match self.calls.try_lock() {
                Ok(guard) => break Some(guard),
                Err(std::sync::TryLockError::Poisoned(p)) => break Some(p.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) if Instant::now() >= deadline => {
                    break None
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    std::thread::sleep(Duration::from_millis(1))
                }
            }
        };
        self.gone.store(true, Ordering::Release);
        let _ = self.gpu.context().bind_to_thread();
        // SAFETY: a live communicator (destroy sets `gone` first and never requests an abort);
        // this is the only abort (the watchdog returns after it); no call runs under the lock.
        let code = unsafe { sys::ncclCommAbort(self.raw) };
        if code != ncclResult_t::ncclSuccess && code != ncclResult_t::ncclInProgress {
            tracing::warn!(rank = self.rank, ?code, "ncclCommAbort failed");
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
