//! The NCCL [`DeviceShardExchange`] (cargo feature `nccl`): shard totals travel by
//! `ncclAllGather` on the scan's stream, so a sharded scan never leaves the device.
//!
//! Communicators are created **non-blocking** (`ncclConfig_t::blocking = 0`, through
//! `ncclCommInitRankConfig`): the call returns at once and scangen polls `ncclCommGetAsyncError`
//! with a deadline, so a peer that never comes is a timeout. Once all are connected, each is
//! replaced by a **blocking** one split from it (`ncclCommSplit`): a blocking collective is
//! enqueued by the calling thread, about 150 µs a scan cheaper than the thread NCCL starts for a
//! non-blocking one. A watchdog thread per communicator (`nccl/watchdog.rs`) bounds every phase
//! that could wait for a peer: past the timeout (a peer that failed before the collective, or
//! vanished) it calls `ncclCommAbort`, which also releases the kernels waiting on the device.
//! Every rank thus returns a typed error within its timeout.
//!
//! Two ways to make the ranks:
//! * one process driving every GPU: [`NcclExchange::for_devices`] (one communicator per device,
//!   created in one NCCL group); then drive each rank from its own thread, or all ranks from one
//!   thread with [`scan_all`], which groups the collectives as NCCL requires;
//! * one process per GPU: rank 0 makes an [`NcclId`] and shares it through a file
//!   ([`NcclId::write_file`] / [`NcclId::read_file`]) or an environment variable
//!   ([`NcclId::to_hex`] / [`NcclId::from_env`]); every rank calls [`NcclExchange::init_rank`].
//!
//! libnccl is loaded at run time by cudarc, which looks for `libnccl.so` (and `libnccl.so.1`,
//! `.9` to `.12`), not `libnccl.so.2`: see the README, "Scans across GPUs".

use super::{DeviceShardExchange, ShardError, ShardExchange, ShardedScanner, DEFAULT_TIMEOUT};
use crate::error::driver;
use crate::gpu::{driver_available, Gpu};
use cudarc::driver::sys::{CUdeviceptr, CUresult};
use cudarc::driver::{result, CudaStream, DeviceRepr};
use cudarc::nccl::sys::{self, ncclComm_t, ncclResult_t};
use scan_core::{ScanElement, ScanOp};
use std::ffi::c_void;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable [`NcclId::from_env`] reads by default.
pub const NCCL_ID_ENV: &str = "SCANGEN_NCCL_ID";

/// Whether libnccl can be loaded (checked once; cudarc panics on the first call into a library it
/// cannot load, so no NCCL call happens before this says yes).
pub fn nccl_available() -> Result<(), ShardError> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    if *PRESENT.get_or_init(culib_present!(sys::is_culib_present())) {
        Ok(())
    } else {
        Err(ShardError::NcclUnavailable {
            detail: "libnccl.so could not be loaded. cudarc looks for libnccl.so (not \
                     libnccl.so.2) on the library path: link it, e.g. `ln -s \
                     <site-packages>/nvidia/nccl/lib/libnccl.so.2 <dir>/libnccl.so` and add <dir> \
                     to LD_LIBRARY_PATH (or `. scripts/nccl-env.sh`)"
                .into(),
        })
    }
}

/// NCCL's version as one number (22703 for 2.27.3).
pub fn nccl_version() -> Result<i32, ShardError> {
    nccl_available()?;
    cudarc::nccl::result::get_nccl_version().map_err(nccl_error("asking NCCL for its version"))
}

fn nccl_error(step: &'static str) -> impl FnOnce(cudarc::nccl::result::NcclError) -> ShardError {
    move |e| ShardError::Nccl {
        step,
        detail: describe(e.0),
    }
}

fn describe(code: ncclResult_t) -> String {
    // SAFETY: ncclGetErrorString returns a static string for any code.
    let text = unsafe { std::ffi::CStr::from_ptr(sys::ncclGetErrorString(code)) };
    format!("{code:?}: {}", text.to_string_lossy())
}

/// The NCCL unique id that ties the ranks of one communicator together: made once (by rank 0),
/// handed to every rank.
#[derive(Clone, Copy)]
pub struct NcclId(sys::ncclUniqueId);

impl std::fmt::Debug for NcclId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NcclId(..)")
    }
}

impl NcclId {
    /// A new id (`ncclGetUniqueId`; with NCCL's socket bootstrap it names this host's address).
    pub fn new() -> Result<NcclId, ShardError> {
        nccl_available()?;
        cudarc::nccl::result::get_uniqueid()
            .map(NcclId)
            .map_err(nccl_error("making a unique id"))
    }

    /// 256 hex digits, for an environment variable or a command line.
    pub fn to_hex(&self) -> String {
        self.0
            .internal
            .iter()
            .map(|&b| format!("{:02x}", b as u8))
            .collect()
    }

    /// The id [`NcclId::to_hex`] wrote (surrounding whitespace ignored); anything but 256 hex
    /// digits is [`ShardError::Config`].
    pub fn from_hex(hex: &str) -> Result<NcclId, ShardError> {
        let hex = hex.trim();
        let bad = || ShardError::Config {
            detail: format!("an NCCL id is 256 hex digits, got {} characters", hex.len()),
        };
        if hex.len() != 256 || !hex.is_ascii() {
            return Err(bad());
        }
        let mut id = sys::ncclUniqueId { internal: [0; 128] };
        for (i, byte) in id.internal.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())? as _;
        }
        Ok(NcclId(id))
    }

    /// Reads the id from the environment variable `var` ([`NCCL_ID_ENV`] by convention).
    pub fn from_env(var: &str) -> Result<NcclId, ShardError> {
        let hex = std::env::var(var).map_err(|_| ShardError::Config {
            detail: format!("{var} is not set (rank 0 prints or writes the NCCL id)"),
        })?;
        NcclId::from_hex(&hex)
    }

    /// Writes the id to `path` atomically (a temporary file renamed into place), for ranks that
    /// poll it with [`NcclId::read_file`]. The file is created private (0600).
    pub fn write_file(&self, path: &Path) -> Result<(), ShardError> {
        let io = |e: std::io::Error| ShardError::Config {
            detail: format!("writing the NCCL id to {}: {e}", path.display()),
        };
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        {
            use std::io::Write;
            let mut file = options.open(&tmp).map_err(io)?;
            file.write_all(self.to_hex().as_bytes()).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// Waits up to `timeout` for `path` to hold an id (written by [`NcclId::write_file`]).
    pub fn read_file(path: &Path, timeout: Duration) -> Result<NcclId, ShardError> {
        let start = Instant::now();
        loop {
            match std::fs::read_to_string(path) {
                Ok(hex) if hex.trim().len() == 256 => return NcclId::from_hex(&hex),
                _ if start.elapsed() >= timeout => {
                    return Err(ShardError::Config {
                        detail: format!(
                            "no NCCL id in {} after {timeout:?} (did rank 0 start?)",
                            path.display()
                        ),
                    })
                }
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

mod watchdog;
use watchdog::Comm;

/// One rank's NCCL communicator (non-blocking), owned: finalized and destroyed when dropped, or
/// aborted after a failure, by its watchdog thread (see `watchdog.rs`). Use it from one thread at
/// a time.
pub struct NcclExchange {
    comm: Arc<Comm>,
    rank: usize,
    size: usize,
    gpu: Gpu,
    timeout: Duration,
}

impl std::fmt::Debug for NcclExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NcclExchange")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("device", &self.gpu.ordinal())
            .finish()
    }
}

/// A config with every field unset (NCCL_CONFIG_INITIALIZER) except `blocking`.
fn config(blocking: bool) -> sys::ncclConfig_t {
    const UNDEF: i32 = i32::MIN;
    sys::ncclConfig_t {
        size: std::mem::size_of::<sys::ncclConfig_t>(),
        magic: 0xcafe_beef,
        // NCCL_VERSION(2, 30, 0): the layout of this struct (cudarc's nccl-02030 bindings). An
        // older library reads only the prefix it knows (it copies min(size, its own size)).
        version: 2 * 10000 + 30 * 100,
        blocking: i32::from(blocking),
        cgaClusterSize: UNDEF,
        minCTAs: UNDEF,
        maxCTAs: UNDEF,
        netName: std::ptr::null(),
        splitShare: UNDEF,
        trafficClass: UNDEF,
        commName: std::ptr::null(),
        collnetEnable: UNDEF,
        CTAPolicy: UNDEF,
        shrinkShare: UNDEF,
        nvlsCTAs: UNDEF,
        nChannelsPerNetPeer: UNDEF,
        nvlinkCentricSched: UNDEF,
        graphUsageMode: UNDEF,
        numRmaCtx: UNDEF,
        maxP2pPeers: UNDEF,
    }
}

/// What a non-blocking call returned: done, still in progress (poll), or failed.
fn started(code: ncclResult_t, step: &'static str) -> Result<(), ShardError> {
    match code {
        ncclResult_t::ncclSuccess | ncclResult_t::ncclInProgress => Ok(()),
        other => Err(ShardError::Nccl {
            step,
            detail: describe(other),
        }),
    }
}

impl NcclExchange {
    /// Joins the communicator `id` as `rank` of `size` on `gpu` (one process per GPU, or one
    /// thread per GPU). Collective: returns when every rank joined, or aborts after `timeout`.
    pub fn init_rank(
        gpu: &Gpu,
        id: &NcclId,
        rank: usize,
        size: usize,
        timeout: Duration,
    ) -> Result<NcclExchange, ShardError> {
        nccl_available()?;
        check_rank(rank, size)?;
        gpu.context()
            .bind_to_thread()
            .map_err(driver("making the device's context current"))?;
        let mut comm: ncclComm_t = std::ptr::null_mut();
        let mut config = config(false);
        // SAFETY: `comm` receives the new communicator; `config` lives across the call (NCCL
        // copies it); `id` is a unique id from ncclGetUniqueId.
        let code = unsafe {
            sys::ncclCommInitRankConfig(&mut comm, size as i32, id.0, rank as i32, &mut config)
        };
        let exchange = NcclExchange {
            comm: Comm::start(comm, gpu, rank, timeout)?,
            rank,
            size,
            gpu: gpu.clone(),
            timeout,
        };
        if let Err(e) = started(code, "creating the communicator (ncclCommInitRankConfig)") {
            exchange.abort_comm(&e);
            return Err(e);
        }
        exchange.wait_ready("creating the communicator")?;
        let mut split = split_blocking(vec![exchange])?;
        Ok(split.remove(0))
    }

    /// One communicator per GPU of `gpus` (rank i on `gpus[i]`), all created by this process in
    /// one NCCL group (the config-taking form of `ncclCommInitAll`). Returns when all are ready,
    /// or aborts them all after `timeout`.
    pub fn for_devices(gpus: &[Gpu], timeout: Duration) -> Result<Vec<NcclExchange>, ShardError> {
        nccl_available()?;
        if gpus.is_empty() {
            return Err(ShardError::Config {
                detail: "no devices given".into(),
            });
        }
        let id = NcclId::new()?;
        let size = gpus.len();
        let mut comms: Vec<ncclComm_t> = vec![std::ptr::null_mut(); size];
        let mut configs: Vec<sys::ncclConfig_t> = (0..size).map(|_| config(false)).collect();
        cudarc::nccl::result::group_start().map_err(nccl_error("starting the init group"))?;
        let mut first_error = None;
        for (rank, gpu) in gpus.iter().enumerate() {
            if let Err(e) = gpu.context().bind_to_thread() {
                first_error.get_or_insert(ShardError::from(crate::ScanError::Driver {
                    step: "making a device's context current",
                    source: e,
                }));
                break;
            }
            // SAFETY: as in init_rank; `comms[rank]` and `configs[rank]` outlive the group.
            let code = unsafe {
                sys::ncclCommInitRankConfig(
                    &mut comms[rank],
                    size as i32,
                    id.0,
                    rank as i32,
                    &mut configs[rank],
                )
            };
            if let Err(e) = started(code, "creating a communicator (ncclCommInitRankConfig)") {
                first_error.get_or_insert(e);
                break;
            }
        }
        // SAFETY: closes the group opened above.
        let end = unsafe { sys::ncclGroupEnd() };
        let exchanges: Vec<NcclExchange> = comms
            .into_iter()
            .zip(gpus)
            .enumerate()
            .map(|(rank, (comm, gpu))| {
                Ok(NcclExchange {
                    comm: Comm::start(comm, gpu, rank, timeout)?,
                    rank,
                    size,
                    gpu: gpu.clone(),
                    timeout,
                })
            })
            .collect::<Result<_, ShardError>>()?;
        let result = match first_error {
            Some(e) => Err(e),
            None => started(end, "ending the init group (ncclGroupEnd)").and_then(|()| {
                exchanges
                    .iter()
                    .try_for_each(|x| x.wait_ready("creating the communicators"))
            }),
        };
        match result {
            Ok(()) => split_blocking(exchanges),
            Err(e) => {
                for x in &exchanges {
                    x.abort_comm(&e);
                }
                Err(e)
            }
        }
    }

    /// The GPU of this rank.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// How long a collective or a [`DeviceShardExchange::synchronize`] waits for the other
    /// ranks before it aborts the communicator with [`ShardError::Timeout`].
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    fn check_usable(&self) -> Result<(), ShardError> {
        if self.comm.is_gone() {
            return Err(self.comm.aborted_error());
        }
        Ok(())
    }

    /// The communicator's asynchronous state: `Ok(true)` ready, `Ok(false)` still in progress.
    fn poll(&self, step: &'static str) -> Result<bool, ShardError> {
        self.check_usable()?;
        let mut state = ncclResult_t::ncclSuccess;
        // SAFETY: a live communicator (under the call lock); `state` receives the result.
        let code = self
            .comm
            .call(|comm| unsafe { sys::ncclCommGetAsyncError(comm, &mut state) })?;
        started(code, step)?;
        match state {
            ncclResult_t::ncclSuccess => Ok(true),
            ncclResult_t::ncclInProgress => Ok(false),
            other => {
                let error = ShardError::Nccl {
                    step,
                    detail: format!(
                        "{} (a peer may have failed or left; the communicator is aborted)",
                        describe(other)
                    ),
                };
                self.abort_comm(&error);
                Err(error)
            }
        }
    }

    /// Polls until the last non-blocking call finished; aborts after the timeout.
    fn wait_ready(&self, step: &'static str) -> Result<(), ShardError> {
        let start = Instant::now();
        let mut backoff = Backoff::default();
        while !self.poll(step)? {
            if start.elapsed() >= self.timeout {
                return Err(self.time_out(start));
            }
            backoff.pause();
        }
        Ok(())
    }

    fn time_out(&self, start: Instant) -> ShardError {
        let error = ShardError::Timeout {
            rank: self.rank,
            waited: start.elapsed(),
            missing: Vec::new(),
        };
        self.abort_comm(&error);
        error
    }

    /// Has the watchdog abort the communicator (`ncclCommAbort`, which frees it and releases the
    /// kernels waiting in it) because of `why`; returns at once.
    fn abort_comm(&self, why: &ShardError) {
        self.comm.request_abort(why.to_string());
    }
}

/// Replaces each (non-blocking) communicator of `parents`, all of this thread, by a blocking one
/// of the same ranks (`ncclCommSplit`, grouped when there are several), then closes the parents.
///
/// Why two communicators: creation must be non-blocking, so that a peer that never comes is a
/// timeout rather than a hang; but a non-blocking communicator hands every collective to a thread
/// NCCL starts for it, which costs about 150 µs a scan (measured on 2 H200: 205-225 µs per scan
/// of 2^16 elements, against 70 µs with blocking collectives). Once every rank is connected a
/// blocking communicator's calls only enqueue, and the watchdog bounds what could still block.
fn split_blocking(parents: Vec<NcclExchange>) -> Result<Vec<NcclExchange>, ShardError> {
    let n = parents.len();
    let mut children: Vec<ncclComm_t> = vec![std::ptr::null_mut(); n];
    let mut configs: Vec<sys::ncclConfig_t> = (0..n).map(|_| config(true)).collect();
    let grouped = n > 1;
    if grouped {
        cudarc::nccl::result::group_start().map_err(nccl_error("starting the split group"))?;
    }
    let mut first_error = None;
    for (i, parent) in parents.iter().enumerate() {
        if let Err(e) = parent.gpu.context().bind_to_thread() {
            first_error.get_or_insert(ShardError::from(crate::ScanError::Driver {
                step: "making a device's context current",
                source: e,
            }));
            break;
        }
        let rank = parent.rank as i32;
        // SAFETY: a live parent (under its call lock); `children[i]` and `configs[i]` outlive
        // the call and the group.
        let code = parent.comm.call(|comm| unsafe {
            sys::ncclCommSplit(comm, 0, rank, &mut children[i], &mut configs[i])
        });
        if let Err(e) =
            code.and_then(|c| started(c, "splitting off a blocking communicator (ncclCommSplit)"))
        {
            first_error.get_or_insert(e);
            break;
        }
    }
    if grouped {
        // SAFETY: closes the group opened above.
        let end = unsafe { sys::ncclGroupEnd() };
        if first_error.is_none() {
            first_error = started(end, "ending the split group (ncclGroupEnd)").err();
        }
    }
    // A non-blocking parent writes the child's handle when the split completes: wait for it.
    let split = match first_error {
        Some(e) => Err(e),
        None => parents
            .iter()
            .try_for_each(|p| p.wait_ready("splitting off the blocking communicator")),
    };
    if let Err(e) = split {
        for p in &parents {
            p.abort_comm(&e);
        }
        return Err(e);
    }
    if children.iter().any(|c| c.is_null()) {
        return Err(ShardError::Nccl {
            step: "splitting off a blocking communicator (ncclCommSplit)",
            detail: "NCCL returned no communicator".into(),
        });
    }
    // The children, owned (and aborted on failure) like their parents.
    let exchanges: Vec<NcclExchange> = children
        .into_iter()
        .zip(&parents)
        .map(|(child, parent)| {
            Ok(NcclExchange {
                comm: Comm::start(child, &parent.gpu, parent.rank, parent.timeout)?,
                rank: parent.rank,
                size: parent.size,
                gpu: parent.gpu.clone(),
                timeout: parent.timeout,
            })
        })
        .collect::<Result<_, ShardError>>()?;
    if let Err(e) = exchanges
        .iter()
        .try_for_each(|x| x.wait_ready("creating the blocking communicator"))
    {
        for x in &exchanges {
            x.abort_comm(&e);
        }
        return Err(e);
    }
    // The parents are finalized and destroyed here (bounded by their timeout).
    drop(parents);
    Ok(exchanges)
}

/// How a polling loop waits between polls. A grouped all-gather of a few bytes is enqueued (by
/// NCCL's own thread, for a non-blocking communicator) within tens of microseconds, and the GPU
/// idles until the host enqueues the scan after it: so poll hot at first (a sleep costs at least
/// 50-60 µs of timer slack), then back off to sleeps so that a long wait does not burn a core.
#[derive(Default)]
struct Backoff {
    polls: u32,
}

impl Backoff {
    /// Polls this many times with only a spin hint between them (about 100-200 µs in all).
    const HOT_POLLS: u32 = 2000;

    fn pause(&mut self) {
        self.polls = self.polls.saturating_add(1);
        if self.polls <= Self::HOT_POLLS {
            std::hint::spin_loop();
        } else if self.polls <= Self::HOT_POLLS + 200 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

fn check_rank(rank: usize, size: usize) -> Result<(), ShardError> {
    if size == 0 || rank >= size || size > i32::MAX as usize {
        return Err(ShardError::Config {
            detail: format!("rank {rank} of a group of {size}"),
        });
    }
    Ok(())
}

impl ShardExchange for NcclExchange {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    /// Through the device: one value up, `ncclAllGather`, all values down, waited for with the
    /// timeout. For setup (the descriptor), not the steady state.
    fn all_gather<T: ScanElement>(&self, mine: T) -> Result<Vec<T>, ShardError> {
        self.check_usable()?;
        let stream = self.gpu.default_stream();
        let bytes = std::mem::size_of::<T>();
        let send = crate::device_buffer::DeviceBuffer::new(
            &stream,
            bytes as u64,
            false,
            "an all-gather's send buffer",
        )?;
        let recv = crate::device_buffer::DeviceBuffer::new(
            &stream,
            (bytes * self.size) as u64,
            false,
            "an all-gather's receive buffer",
        )?;
        let mut all = vec![mine; self.size];
        // SAFETY: the buffers hold one and `size` values of T; copies are ordered on `stream`,
        // which is waited for (bounded) before `all` is read; the driver writes whole values.
        unsafe {
            result::memcpy_htod_async(send.ptr(), &[mine], stream.cu_stream())
                .map_err(driver("uploading a value to all-gather"))?;
            self.all_gather_device(&stream, send.ptr(), recv.ptr(), bytes)?;
            result::memcpy_dtoh_async(&mut all, recv.ptr(), stream.cu_stream())
                .map_err(driver("downloading the all-gathered values"))?;
        }
        self.synchronize(&stream)?;
        Ok(all)
    }

    fn abort(&self, reason: &str) {
        // NCCL carries no reason to the peers: they see their collective time out (or an error).
        self.comm.request_abort(reason.to_string());
    }
}

impl DeviceShardExchange for NcclExchange {
    unsafe fn all_gather_device(
        &self,
        stream: &Arc<CudaStream>,
        send: CUdeviceptr,
        recv: CUdeviceptr,
        bytes: usize,
    ) -> Result<(), ShardError> {
        self.check_usable()?;
        stream
            .context()
            .bind_to_thread()
            .map_err(driver("making the device's context current"))?;
        // SAFETY: the caller's contract: `send`/`recv` hold `bytes` and `size * bytes` bytes on
        // this communicator's device, ordered on `stream`.
        let code = self.comm.call(|comm| unsafe {
            sys::ncclAllGather(
                send as *const c_void,
                recv as *mut c_void,
                bytes,
                sys::ncclDataType_t::ncclUint8,
                comm,
                stream.cu_stream() as sys::cudaStream_t,
            )
        })?;
        if let Err(e) = started(code, "enqueueing the all-gather of the shard totals") {
            self.abort_comm(&e);
            return Err(e);
        }
        // Inside an NCCL group (scan_all) the enqueue completes at ncclGroupEnd.
        if !in_group() {
            self.wait_ready("enqueueing the all-gather of the shard totals")?;
        }
        Ok(())
    }

    fn synchronize(&self, stream: &Arc<CudaStream>) -> Result<(), ShardError> {
        self.check_usable()?;
        stream
            .context()
            .bind_to_thread()
            .map_err(driver("making the device's context current"))?;
        let start = Instant::now();
        let mut backoff = Backoff::default();
        loop {
            // SAFETY: a live stream of this context.
            match unsafe { cudarc::driver::sys::cuStreamQuery(stream.cu_stream()) } {
                CUresult::CUDA_SUCCESS => {
                    self.poll("waiting for the sharded scan")?;
                    return Ok(());
                }
                CUresult::CUDA_ERROR_NOT_READY => {}
                other => {
                    return Err(crate::ScanError::Driver {
                        step: "waiting for the sharded scan",
                        source: cudarc::driver::DriverError(other),
                    }
                    .into())
                }
            }
            // Still running: a peer's error shows up here, a vanished peer as the timeout.
            self.poll("waiting for the sharded scan")?;
            if start.elapsed() >= self.timeout {
                return Err(self.time_out(start));
            }
            backoff.pause();
        }
    }

    fn device_native(&self) -> bool {
        true
    }

    fn watch_phase(&self, active: bool) {
        if active {
            self.comm.arm();
        } else {
            self.comm.disarm();
        }
    }
}

impl Drop for NcclExchange {
    fn drop(&mut self) {
        // Finalize (flushes outstanding operations; non-blocking, so polled with the timeout),
        // then destroy; a finalize that does not finish in time becomes an abort.
        self.comm.close(|| {
            // SAFETY: a live communicator (under the call lock), finalized once, here.
            let code = self
                .comm
                .call(|comm| unsafe { sys::ncclCommFinalize(comm) })?;
            started(code, "finalizing the communicator")?;
            self.wait_ready("finalizing the communicator")
        });
    }
}

thread_local! {
    static GROUP_DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

fn in_group() -> bool {
    GROUP_DEPTH.with(|d| d.get() > 0)
}

/// One process, one thread, every GPU: runs one sharded scan across all `ranks` (rank i scans
/// `inputs[i]` into `outputs[i]` on `streams[i]`), enqueueing the collectives inside one NCCL
/// group as NCCL requires when a thread drives several devices. Waits for nothing; call
/// [`ShardedScanner::synchronize`] on each rank afterwards.
///
/// # Safety
/// For each rank, as for [`ShardedScanner::scan_device_ptr`] with `(streams[i], inputs[i],
/// outputs[i], lens[i])`.
pub unsafe fn scan_all<Op: ScanOp>(
    ranks: &mut [ShardedScanner<Op, NcclExchange>],
    streams: &[Arc<CudaStream>],
    inputs: &[CUdeviceptr],
    outputs: &[CUdeviceptr],
    lens: &[u64],
) -> Result<(), ShardError>
where
    Op::Elem: DeviceRepr,
{
    let k = ranks.len();
    if streams.len() != k || inputs.len() != k || outputs.len() != k || lens.len() != k {
        return Err(ShardError::Config {
            detail: format!(
                "scan_all needs one stream, input, output and length per rank ({k} ranks; got \
                 {}, {}, {}, {})",
                streams.len(),
                inputs.len(),
                outputs.len(),
                lens.len()
            ),
        });
    }
    for rank in ranks.iter() {
        rank.exchange().watch_phase(true);
    }
    // SAFETY: forwarded from the caller.
    let result = unsafe { scan_all_watched(ranks, streams, inputs, outputs, lens) };
    for rank in ranks.iter() {
        rank.exchange().watch_phase(false);
    }
    result
}

/// [`scan_all`] after its checks, while every rank's watchdog is armed.
///
/// # Safety
/// As for [`scan_all`].
unsafe fn scan_all_watched<Op: ScanOp>(
    ranks: &mut [ShardedScanner<Op, NcclExchange>],
    streams: &[Arc<CudaStream>],
    inputs: &[CUdeviceptr],
    outputs: &[CUdeviceptr],
    lens: &[u64],
) -> Result<(), ShardError>
where
    Op::Elem: DeviceRepr,
{
    let k = ranks.len();
    for i in 0..k {
        ranks[i].ready_for(lens[i], &streams[i])?;
    }
    for i in 0..k {
        // SAFETY: forwarded from the caller.
        unsafe { ranks[i].enqueue_reduce(&streams[i], inputs[i], lens[i])? };
    }
    cudarc::nccl::result::group_start().map_err(nccl_error("starting the all-gather group"))?;
    GROUP_DEPTH.with(|d| d.set(d.get() + 1));
    let mut gathered = Ok(());
    for i in 0..k {
        // SAFETY: after enqueue_reduce on the same stream.
        gathered = unsafe { ranks[i].enqueue_exchange(&streams[i]) };
        if gathered.is_err() {
            break;
        }
    }
    GROUP_DEPTH.with(|d| d.set(d.get() - 1));
    // SAFETY: closes the group opened above.
    let end = unsafe { sys::ncclGroupEnd() };
    gathered?;
    started(end, "ending the all-gather group (ncclGroupEnd)")?;
    for rank in ranks.iter() {
        rank.exchange()
            .wait_ready("enqueueing the all-gather of the shard totals")?;
    }
    for i in 0..k {
        // SAFETY: forwarded; after the exchange on the same stream.
        unsafe { ranks[i].enqueue_finish(&streams[i], inputs[i], outputs[i], lens[i])? };
    }
    Ok(())
}

/// One process, every GPU in `gpus`: a communicator per GPU ([`NcclExchange::for_devices`]) and
/// each rank's [`ShardedScanner`], built on one thread per GPU (building is collective: the
/// ranks agree on the descriptor through NCCL, which needs every rank to take part at once).
/// Then drive them from one thread with [`scan_all`], or each from its own thread.
pub fn scanners_for_devices<Op: ScanOp>(
    gpus: &[Gpu],
    opts: crate::ScanOptions,
    timeout: Duration,
) -> Result<Vec<ShardedScanner<Op, NcclExchange>>, ShardError>
where
    Op::Elem: DeviceRepr,
{
    let exchanges = NcclExchange::for_devices(gpus, timeout)?;
    std::thread::scope(|s| {
        let handles: Vec<_> = gpus
            .iter()
            .zip(exchanges)
            .map(|(gpu, x)| s.spawn(move || ShardedScanner::<Op, _>::new(gpu, opts, x)))
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(built) => built,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}

/// [`NcclExchange::for_devices`] with [`DEFAULT_TIMEOUT`].
pub fn for_devices(gpus: &[Gpu]) -> Result<Vec<NcclExchange>, ShardError> {
    NcclExchange::for_devices(gpus, DEFAULT_TIMEOUT)
}

/// Every GPU of this machine, opened (`Gpu::new(0..count)`).
pub fn all_gpus() -> Result<Vec<Gpu>, ShardError> {
    driver_available()?;
    result::init().map_err(driver("initialising the CUDA driver"))?;
    let count = cudarc::driver::CudaContext::device_count()
        .map_err(driver("counting devices"))?
        .max(0) as usize;
    if count == 0 {
        return Err(crate::ScanError::NoDevice { ordinal: 0, count }.into());
    }
    (0..count)
        .map(|i| Gpu::new(i).map_err(ShardError::from))
        .collect()
}
