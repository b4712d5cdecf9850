//! The test harness of the reliability and fault tests, of the GPU suite's modules and of
//! `not_nvidia_vulkan` (and of plasma-demo's watchdog tests, which include this file with
//! `#[path]`): run-length knobs from the environment, memory figures, the sizes of resize
//! soaks, a log capture, running a test body in a child process, and the value of a future that
//! is ready at once. (`tests/gpu` sets up the GPU, GL and CUDA.)
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `$name` parsed as a number, or `default` when unset. A value that does not parse fails the
/// test rather than silently running the default.
pub fn env_or(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a whole number")),
        Err(_) => default,
    }
}

/// The resident set size of this process in bytes, from `VmRSS` in `/proc/self/status` (the
/// kernel's figure in KiB, so no page size is assumed).
pub fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS in /proc/self/status");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("VmRSS value");
    kib * 1024
}

/// Device memory in use on the context's GPU (total - free, from `cuMemGetInfo`), in bytes.
pub fn device_used(ctx: &cuda_gl::Context) -> u64 {
    let (free, total) = ctx.mem_info().expect("cuMemGetInfo");
    (total - free) as u64
}

/// The line of a target's `report`, printed (the run's log says which mode and why), once
/// asserted that the target's `mode` is `want` and that the line is one line starting with
/// `starts`: the line, for the caller's own checks.
pub fn report_line(
    report: &cuda_gl::display::Report,
    mode: cuda_gl::display::Mode,
    want: cuda_gl::display::Mode,
    starts: &str,
) -> String {
    let line = report.to_string();
    eprintln!("{line}");
    assert_eq!(mode, want, "{line}");
    assert!(!line.contains('\n') && line.starts_with(starts), "{line}");
    line
}

/// Rows `rows` of `row` bytes each, `pitch` apart from `start` in `bytes`, packed: a plane of
/// a pitched image as a texture holds it.
pub fn packed_rows(bytes: &[u8], start: usize, pitch: usize, row: usize, rows: u32) -> Vec<u8> {
    (0..rows as usize)
        .flat_map(|y| bytes[start + y * pitch..][..row].iter().copied())
        .collect()
}

/// Bytes as signed MiB with three decimals, for the printed figures.
pub fn mib(bytes: i64) -> String {
    format!("{:+.3} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// The sizes a resize soak goes through: xorshift from a fixed seed, so that every pass (a
/// warm-up, then the measured one) makes the same sizes, and a leak shows as growth between
/// passes rather than as a new allocator pool.
pub struct SoakSizes(u64);

impl Default for SoakSizes {
    fn default() -> SoakSizes {
        SoakSizes(0x2545_f491)
    }
}

impl SoakSizes {
    /// The next size, each side from 1 to `max`.
    pub fn next_size(&mut self, max: u64) -> (u32, u32) {
        (self.side(max), self.side(max))
    }

    fn side(&mut self, max: u64) -> u32 {
        let state = &mut self.0;
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        1 + (*state % max) as u32
    }
}

/// The value of a future that is ready at once, as wgpu's native futures are.
pub fn ready<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("a wgpu future was not ready at once"),
    }
}

/// Log records captured by [`capture_log`], as `LEVEL message`.
static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        let line = format!("{} {}", record.level(), record.args());
        eprintln!("log: {line}");
        LOG.lock().unwrap_or_else(|p| p.into_inner()).push(line);
    }
    fn flush(&self) {}
}

static CAPTURE: Capture = Capture;

/// Installs a logger that prints every record (`log: LEVEL message`) and keeps it for
/// [`take_log`]. Idempotent.
pub fn capture_log() {
    if log::set_logger(&CAPTURE).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
}

/// The warnings and errors logged since the last call.
pub fn take_log() -> Vec<String> {
    std::mem::take(&mut *LOG.lock().unwrap_or_else(|p| p.into_inner()))
        .into_iter()
        .filter(|l| l.starts_with("WARN") || l.starts_with("ERROR"))
        .collect()
}

/// The environment variable that tells a re-executed test binary which child body to run.
pub const CHILD_ENV: &str = "CUDA_GL_TEST_CHILD";

/// Whether this process is the child for `name`.
pub fn is_child(name: &str) -> bool {
    std::env::var(CHILD_ENV).is_ok_and(|v| v == name)
}

/// What a child process did.
#[derive(Debug)]
pub struct ChildRun {
    /// Its exit status, `None` when it was killed at the timeout.
    pub status: Option<std::process::ExitStatus>,
    /// Its stdout and stderr, interleaved as far as the pipes allow.
    pub output: String,
    /// How long it ran.
    pub elapsed: Duration,
}

impl ChildRun {
    /// Whether it exited by itself with status 0.
    pub fn exited_cleanly(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

/// The name libtest gives test function `name` of the module whose `module_path!()` is `module`:
/// the module path without the crate's name, then `name` (`gpu_suite::multi_gpu` and `t` give
/// `multi_gpu::t`; a test at the crate root keeps its bare name). What [`run_child`] needs, so
/// that a test keeps working when its module moves to another binary.
pub fn test_path(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{name}"),
        None => name.to_owned(),
    }
}

/// Runs `body` in a child process of this test binary, as test `name` of the module whose
/// `module_path!()` is `module`, and asserts that it passed; in that child, runs `body` itself.
/// For tests that change process-wide state or depend on the process's history (which EGL
/// context handle comes next).
pub fn in_child(module: &str, name: &str, body: impl FnOnce()) {
    if is_child(name) {
        body();
        return;
    }
    let run = run_child(&test_path(module, name), name, Duration::from_secs(120));
    eprintln!("--- child {name}: {:?}\n{}---", run.status, run.output);
    assert!(run.exited_cleanly(), "the child {name} failed");
}

/// Runs test `test` of this test binary in a child process (`--exact`, one thread), with
/// [`CHILD_ENV`] set to `name`, and kills it after `timeout`. A panic, an abort, a signal or a
/// hang in the child is then a status the parent can assert on, not the end of the test run.
///
/// `test` is the full name libtest lists (with its module path, see [`test_path`]). A child that
/// ran no test fails the caller here: `--exact` with a name that matches nothing (a test renamed,
/// or moved into a module) exits 0 having run nothing, which would pass a status check.
pub fn run_child(test: &str, name: &str, timeout: Duration) -> ChildRun {
    run_child_with(test, name, &[], timeout)
}

/// [`run_child`] with extra environment variables for the child (such as
/// `CUDA_VISIBLE_DEVICES`, which the driver reads once per process).
pub fn run_child_with(
    test: &str,
    name: &str,
    envs: &[(&str, String)],
    timeout: Duration,
) -> ChildRun {
    let exe = std::env::current_exe().expect("current_exe");
    let mut command = Command::new(exe);
    command
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, name)
        .env("RUST_BACKTRACE", "1")
        .envs(envs.iter().map(|(k, v)| (k, v)));
    let run = run_command(command, timeout);
    assert_ran_one_test(test, &run);
    run
}

/// Panics unless libtest's first line in the child, `running N test(s)`, says 1. Without that line
/// a child that did not exit by itself (killed at the timeout, crashed) is left to the caller's
/// status checks; one that exited cleanly without it ran no test.
fn assert_ran_one_test(test: &str, run: &ChildRun) {
    let ran = run.output.lines().find_map(|line| {
        let (count, unit) = line.strip_prefix("running ")?.split_once(' ')?;
        matches!(unit, "test" | "tests")
            .then_some(count)?
            .parse::<usize>()
            .ok()
    });
    match ran {
        Some(1) => {}
        None if !run.exited_cleanly() => {}
        _ => panic!(
            "the child for `{test} --exact` ran {} tests, not 1: `--exact` wants the full name \
             libtest lists (a test renamed, or moved into another module?)\n{}",
            ran.map_or_else(|| "no".to_owned(), |n| n.to_string()),
            run.output.trim_end()
        ),
    }
}

/// Runs `command` with its output captured, and kills it after `timeout`.
pub fn run_command(mut command: Command, timeout: Duration) -> ChildRun {
    let start = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child process");
    let mut stdout = child.stdout.take().expect("stdout pipe");
    let mut stderr = child.stderr.take().expect("stderr pipe");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).ok();
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        stderr.read_to_string(&mut s).ok();
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break Some(status);
        }
        if start.elapsed() > timeout {
            child.kill().ok();
            child.wait().ok();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    let output = format!(
        "{}{}",
        out_reader.join().unwrap_or_default(),
        err_reader.join().unwrap_or_default()
    );
    ChildRun {
        status,
        output,
        elapsed,
    }
}

/// `n` pseudo-random bytes (xorshift64*), the same for the same seed.
pub fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}
