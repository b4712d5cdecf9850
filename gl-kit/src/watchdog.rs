//! A watchdog for programs that wait on the GPU: when the current stage of the work has lasted
//! longer than a limit, it prints one line naming the stage and what to look for in the kernel
//! log, and ends the process with [`EXIT_CODE`].
//!
//! A GPU that can no longer switch graphics contexts (after a CUDA kernel's MMU fault, Xid 31,
//! every later GL program on it logs Xid 109 `CTX SWITCH TIMEOUT`) hangs its programs inside a
//! driver call that never returns: a swap, `glFinish`, a map, a stream synchronize. The stuck
//! thread cannot notice that itself, so the watchdog is a thread of its own that reads one atomic
//! word, the current [`Stage`] and when it began, which the working threads set with [`enter`].
//! The state is per process (one GPU program per process), so that code deep in a frame can mark
//! its stage without a handle passed down to it.
//!
//! Self-contained (std only); the plasma demo (its runs and GPU tests) and the interop benchmark
//! use it.

use std::io::Write as _;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The exit status of a process the watchdog ends.
pub const EXIT_CODE: i32 = 3;

/// The limit when neither a flag nor [`LIMIT_ENV`] sets one.
pub const DEFAULT_LIMIT_SECS: u64 = 10;

/// The environment variable that sets the limit in seconds where no flag does (`0` turns the
/// watchdog off).
pub const LIMIT_ENV: &str = "CUDA_GL_WATCHDOG_SECS";

/// What a program is doing; the watchdog names it when it fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Stage {
    /// Not waiting on the GPU (host work, a window that is minimized, a skipped test): the
    /// watchdog never fires in this stage. The state before the first [`enter`].
    Idle = 0,
    /// Opening the GPU: contexts, loading kernels, registering GL objects.
    Setup,
    /// Mapping a GL object for CUDA.
    Map,
    /// Computing a frame: the CUDA kernel's launch, or the CPU backend.
    Kernel,
    /// Unmapping a GL object.
    Unmap,
    /// Copying pixels into the texture (`glBufferSubData`, `glTexSubImage2D`).
    Upload,
    /// Drawing the frame with GL.
    Draw,
    /// Presenting the frame (swapping the window's buffers).
    Present,
    /// Waiting for a GPU timer (a CUDA event or a GL timer query).
    TimingWait,
    /// Waiting for the GPU to finish everything queued (end of a run).
    Finish,
    /// Reading a frame back from the GPU.
    Readback,
    /// One iteration of a benchmark case.
    Measure,
    /// Releasing GL and CUDA objects at the end.
    Teardown,
}

impl Stage {
    /// Every stage, in `repr` order.
    const ALL: [Stage; 13] = [
        Stage::Idle,
        Stage::Setup,
        Stage::Map,
        Stage::Kernel,
        Stage::Unmap,
        Stage::Upload,
        Stage::Draw,
        Stage::Present,
        Stage::TimingWait,
        Stage::Finish,
        Stage::Readback,
        Stage::Measure,
        Stage::Teardown,
    ];

    /// The stage's name in the watchdog's message.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Idle => "idle",
            Stage::Setup => "setup",
            Stage::Map => "map",
            Stage::Kernel => "kernel",
            Stage::Unmap => "unmap",
            Stage::Upload => "upload",
            Stage::Draw => "draw",
            Stage::Present => "present",
            Stage::TimingWait => "timing wait",
            Stage::Finish => "finish",
            Stage::Readback => "readback",
            Stage::Measure => "benchmark iteration",
            Stage::Teardown => "teardown",
        }
    }

    fn from_bits(bits: u8) -> Stage {
        Stage::ALL
            .get(usize::from(bits))
            .copied()
            .unwrap_or(Stage::Idle)
    }
}

/// The current stage (low 8 bits) and the millisecond since [`epoch`] when it began (the rest):
/// one word, so the watchdog never pairs one stage with another's start.
static STATE: AtomicU64 = AtomicU64::new(0);

/// The origin of the millisecond stamps.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    u64::try_from(epoch().elapsed().as_millis()).unwrap_or(u64::MAX >> 8)
}

/// Marks the start of `stage` on any thread: the watchdog measures from now. Cheap (one atomic
/// store), and harmless when no watchdog runs.
pub fn enter(stage: Stage) {
    STATE.store((now_ms() << 8) | stage as u64, Ordering::Release);
}

/// The current stage and how long ago it began.
fn current() -> (Stage, Duration) {
    let state = STATE.load(Ordering::Acquire);
    let since = now_ms().saturating_sub(state >> 8);
    (
        Stage::from_bits((state & 0xff) as u8),
        Duration::from_millis(since),
    )
}

/// The limit: `flag` when given, else [`LIMIT_ENV`], else [`DEFAULT_LIMIT_SECS`]; `None` when it
/// is 0 (no watchdog).
///
/// # Errors
/// When [`LIMIT_ENV`] is set to something other than a whole number of seconds.
pub fn limit(flag: Option<u64>) -> Result<Option<Duration>, String> {
    let secs = match (flag, std::env::var(LIMIT_ENV)) {
        (Some(secs), _) => secs,
        (None, Ok(text)) => text.trim().parse().map_err(|_| {
            format!("{LIMIT_ENV}={text:?} is not a whole number of seconds (0 turns it off)")
        })?,
        (None, Err(_)) => DEFAULT_LIMIT_SECS,
    };
    Ok((secs > 0).then(|| Duration::from_secs(secs)))
}

/// Starts the watchdog of `program` with the limit of [`limit`]`(flag)` unless that is off, and
/// marks [`Stage::Setup`], in which the program opens the GPU.
///
/// # Errors
/// A bad [`LIMIT_ENV`], or a thread that cannot be spawned.
pub fn arm(program: &'static str, flag: Option<u64>) -> Result<(), String> {
    if let Some(limit) = limit(flag)? {
        start(program, limit).map_err(|e| format!("cannot start the watchdog thread: {e}"))?;
    }
    enter(Stage::Setup);
    Ok(())
}

/// The one line the watchdog prints when `program` has been in `stage` for `limit`.
pub fn message(program: &str, stage: Stage, limit: Duration) -> String {
    format!(
        "{program}: watchdog: stuck for {} s in stage \"{}\", so exiting with status \
         {EXIT_CODE}: the GPU did not finish, or a driver call did not return. Check the kernel \
         log (`dmesg | grep Xid`): Xid 31 (MMU fault) then Xid 109 (CTX SWITCH TIMEOUT) means a \
         kernel fault earlier on this GPU leaves it unable to switch graphics contexts until \
         reset; reset the GPU (`nvidia-smi -r`) or use another one",
        limit.as_secs_f64(),
        stage.name()
    )
}

/// Starts the watchdog thread of this process, once: when a stage other than [`Stage::Idle`] has
/// lasted longer than `limit`, it prints [`message`] on stderr and ends the process with
/// [`EXIT_CODE`]. Later calls do nothing. Returns whether this call started it.
///
/// # Errors
/// When the thread cannot be spawned.
pub fn start(program: &'static str, limit: Duration) -> std::io::Result<bool> {
    static STARTED: OnceLock<()> = OnceLock::new();
    if STARTED.set(()).is_err() {
        return Ok(false);
    }
    epoch();
    let tick = (limit / 20).clamp(Duration::from_millis(10), Duration::from_millis(250));
    std::thread::Builder::new()
        .name("watchdog".into())
        .spawn(move || {
            loop {
                std::thread::sleep(tick);
                let (stage, since) = current();
                if stage != Stage::Idle && since > limit {
                    // A write error has nowhere else to go; the exit status still tells.
                    let _ = writeln!(std::io::stderr(), "{}", message(program, stage, limit));
                    exit_now(EXIT_CODE);
                }
            }
        })?;
    Ok(true)
}

/// Ends the process with `status` at once, without atexit handlers or destructors: the GPU
/// driver's exit handlers (which `std::process::exit` runs) wait for the GPU, or for the lock that
/// the stuck call holds, and would hang the exit too.
fn exit_now(status: i32) -> ! {
    unsafe extern "C" {
        fn _exit(status: std::ffi::c_int) -> !;
    }
    // SAFETY: `_exit` (POSIX, and the C runtime on Windows) takes any status and does not return;
    // skipping every handler and destructor is its purpose here, and nothing of this process is
    // used afterwards.
    unsafe { _exit(status) }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn stages_round_trip_through_their_bits() {
        for stage in Stage::ALL {
            assert_eq!(Stage::from_bits(stage as u8), stage);
        }
        assert_eq!(Stage::from_bits(200), Stage::Idle);
    }

    #[test]
    fn the_message_is_one_line_naming_the_stage_and_the_xids() {
        let m = message("plasma-demo", Stage::Present, Duration::from_secs(10));
        assert!(!m.contains('\n'), "{m}");
        for part in [
            "plasma-demo: watchdog: stuck for 10 s in stage \"present\"",
            "status 3",
            "dmesg | grep Xid",
            "Xid 31",
            "Xid 109",
            "until reset",
        ] {
            assert!(m.contains(part), "`{part}` missing from: {m}");
        }
    }

    #[test]
    fn enter_sets_the_stage_and_restarts_the_clock() {
        enter(Stage::Kernel);
        let (stage, since) = current();
        assert_eq!(stage, Stage::Kernel);
        assert!(since < Duration::from_secs(1), "{since:?}");
        enter(Stage::Idle);
        assert_eq!(current().0, Stage::Idle);
    }

    #[test]
    fn a_flag_wins_and_zero_turns_it_off() {
        assert_eq!(limit(Some(0)), Ok(None));
        assert_eq!(limit(Some(2)), Ok(Some(Duration::from_secs(2))));
    }
}
