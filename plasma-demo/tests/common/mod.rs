//! Shared by plasma-demo's GPU tests: a headless GL context on CUDA device 0, or why there is
//! none (printed, or a failure under `CUDA_GL_REQUIRE_GPU=1`), and the [`watchdog`] that turns a
//! GPU that hangs into a failed test (exit status 3) instead of a hung one.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cuda_gl::Device;
use cuda_gl::egl::HeadlessContext;
use plasma_demo::watchdog;

/// Whether a GPU test that cannot run must fail instead of skipping.
pub fn require_gpu() -> bool {
    std::env::var("CUDA_GL_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// An error's message on one line.
pub fn one_line(e: &dyn std::fmt::Display) -> String {
    let text = e.to_string();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines.join(" ")
}

/// A headless GL context on CUDA device 0, or `None` after printing why (a failure under
/// `CUDA_GL_REQUIRE_GPU=1`). Starts no watchdog: for a test that only checks for the GPU.
pub fn open_gpu() -> Option<(HeadlessContext, Device)> {
    let skip = |reason: String| {
        if require_gpu() {
            panic!("CUDA_GL_REQUIRE_GPU=1, but the GPU test cannot run: {reason}");
        }
        eprintln!("skipped: {reason}");
        None
    };
    let device = match Device::get(0) {
        Ok(d) => d,
        Err(e) => return skip(format!("no CUDA device 0: {}", one_line(&e))),
    };
    match HeadlessContext::for_cuda_device(&device) {
        Ok(gl) => Some((gl, device)),
        Err(e) => skip(format!(
            "no headless OpenGL on CUDA device 0: {}",
            one_line(&e)
        )),
    }
}

/// [`open_gpu`] with the watchdog of this test process started first (limit:
/// `CUDA_GL_WATCHDOG_SECS`, default 10 s), named `program` in its message. The test marks its
/// host-only work [`watchdog::Stage::Idle`]; the session marks the GPU stages.
pub fn gpu(program: &'static str) -> Option<(HeadlessContext, Device)> {
    watchdog::arm(program, None).unwrap();
    let gpu = open_gpu();
    if gpu.is_none() {
        watchdog::enter(watchdog::Stage::Idle);
    }
    gpu
}
