//! `--device-time`: each timed launch waits in the stream behind a kernel that spins for a
//! fixed time, so the host has enqueued the start event, the work and the end event before the
//! GPU reaches them. The events then bracket the GPU's own time: without the hold they also
//! count the host's enqueue cost, which at 2^20 elements and below is a large part of a
//! launch (a device copy's enqueue alone is a few microseconds) and moves from call to call.
//!
//! `--host-time` is the other half: behind the same hold the stream never waits on the GPU, so
//! the host's wall time of the call that enqueues a scan (or a copy) is that call's own cost,
//! everything our code and the driver do before the launch is in the queue.

use scangen::runtime::cudarc::driver::{
    CudaFunction, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};
use scangen::runtime::cudarc::nvrtc::Ptx;
use scangen::runtime::ScanError;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

/// How long the hold spins: several times the host's cost of enqueueing an event, a scan and
/// an event (a few microseconds each).
const HOLD_NS: u64 = 60_000;

/// One thread that spins on the global timer for `ns` nanoseconds. Plain PTX, JIT-compiled by
/// the driver: no NVRTC needed.
const HOLD_PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry scangen_bench_hold(.param .u64 ns)
{
    .reg .u64 %start, %now, %elapsed, %limit;
    .reg .pred %waiting;
    ld.param.u64 %limit, [ns];
    mov.u64 %start, %globaltimer;
SPIN:
    mov.u64 %now, %globaltimer;
    sub.u64 %elapsed, %now, %start;
    setp.lt.u64 %waiting, %elapsed, %limit;
    @%waiting bra SPIN;
    ret;
}
"#;

/// What a timed launch of this process measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ruler {
    /// CUDA events around the enqueue on an idle GPU: the host's cost and the GPU's (default).
    Events,
    /// CUDA events behind the hold: the GPU's own time (`--device-time`).
    DeviceTime,
    /// The host's wall time of the enqueue behind the hold (`--host-time`).
    HostTime,
}

static RULER: AtomicU8 = AtomicU8::new(Ruler::Events as u8);
static KERNEL: Mutex<Option<CudaFunction>> = Mutex::new(None);

/// Sets what every timed launch of this process measures (`scangen bench --device-time`,
/// `--host-time`).
pub fn set_ruler(ruler: Ruler) {
    RULER.store(ruler as u8, Ordering::Relaxed);
}

/// What timed launches measure ([`set_ruler`]).
pub fn ruler() -> Ruler {
    match RULER.load(Ordering::Relaxed) {
        r if r == Ruler::DeviceTime as u8 => Ruler::DeviceTime,
        r if r == Ruler::HostTime as u8 => Ruler::HostTime,
        _ => Ruler::Events,
    }
}

/// Enqueues the hold on `stream` when the ruler needs it; nothing otherwise.
pub fn before_timed_work(stream: &Arc<CudaStream>) -> Result<(), ScanError> {
    if ruler() == Ruler::Events {
        return Ok(());
    }
    let mut kernel = KERNEL.lock().unwrap_or_else(|e| e.into_inner());
    if kernel.is_none() {
        let module = stream
            .context()
            .load_module(Ptx::from_src(HOLD_PTX))
            .map_err(loading)?;
        let function = module
            .load_function("scangen_bench_hold")
            .map_err(loading)?;
        *kernel = Some(function);
    }
    let function = kernel.as_ref().expect("loaded above");
    let config = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(function);
    launch.arg(&HOLD_NS);
    // SAFETY: the kernel takes one u64 by value (HOLD_PTX's signature) and touches no memory.
    unsafe { launch.launch(config) }
        .map(|_| ())
        .map_err(|source| ScanError::Driver {
            step: "launching the bench's hold kernel",
            source,
        })
}

fn loading(source: DriverError) -> ScanError {
    ScanError::Driver {
        step: "loading the bench's hold kernel",
        source,
    }
}
