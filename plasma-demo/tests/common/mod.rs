//! Shared by plasma-demo's GPU tests: a headless GL context on CUDA device 0, or why there is
//! none (printed, or a failure under `CUDA_GL_REQUIRE_GPU=1`), and the [`watchdog`] that turns a
//! GPU that hangs into a failed test (exit status 3) instead of a hung one.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cuda_gl::Device;
use cuda_gl::egl::HeadlessContext;
use plasma_demo::backend::Backend;
use plasma_demo::cli::Size;
use plasma_demo::png_io::Difference;
use plasma_demo::renderer::Target;
use plasma_demo::session::Session;
use plasma_demo::timing::{Clock, Stage, StageStats};
use plasma_demo::watchdog;
use std::path::{Path, PathBuf};

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
        Ok(gl) => {
            gl::load_with(|name| gl.get_proc_address(name));
            Some((gl, device))
        }
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

/// Runs `test` on [`gpu`]'s GL context (current, and alive until `test` returns) and CUDA
/// device 0; without them, returns after printing why (a failure under
/// `CUDA_GL_REQUIRE_GPU=1`).
pub fn on_gpu(program: &'static str, test: impl FnOnce(&HeadlessContext, &Device)) {
    if let Some((gl, device)) = gpu(program) {
        test(&gl, &device);
    }
}

/// Prints the CUDA device and the GL context a GPU test runs on.
pub fn announce(gl: &HeadlessContext, device: &Device) {
    eprintln!(
        "{} on {}, OpenGL {}",
        device.name().unwrap(),
        gl.renderer(),
        gl.version()
    );
}

/// A session of `backend` drawing offscreen at `size`, profiled or not.
pub fn offscreen_session(backend: Backend, size: Size, profile: bool) -> Session {
    Session::new(backend, size, Target::Offscreen, profile).unwrap()
}

/// Renders `frames` frames at `size` (times 0, 0.1, 0.2, ...), finishes the session, and returns
/// its profiler's statistics.
pub fn profiled_frames(s: &mut Session, size: Size, frames: usize) -> Vec<StageStats> {
    for i in 0..frames {
        s.render_frame(i as f32 * 0.1, size).unwrap();
    }
    s.finish().unwrap();
    s.profiler().stats()
}

/// What a profiled session records when its frames reach the texture by an upload (the CPU
/// backend; a display target, in every mode): each stage and its clock.
pub const UPLOAD_STAGES: [(Stage, Clock); 5] = [
    (Stage::Kernel, Clock::CpuWall),
    (Stage::Upload, Clock::CpuWall),
    (Stage::Upload, Clock::GlTimer),
    (Stage::Draw, Clock::GlTimer),
    (Stage::Total, Clock::CpuWall),
];

/// The statistics of `stage` timed by `clock`; a failure naming `label` when there are none.
pub fn stat<'s>(
    stats: &'s [StageStats],
    stage: Stage,
    clock: Clock,
    label: &str,
) -> &'s StageStats {
    stats
        .iter()
        .find(|st| (st.stage, st.clock) == (stage, clock))
        .unwrap_or_else(|| panic!("{label}: no {stage:?}/{clock:?} in {stats:?}"))
}

/// Renders one frame of `size` at t = 1.5 and reads it back.
pub fn one_frame(s: &mut Session, size: Size) -> Vec<u8> {
    s.render_frame(1.5, size).unwrap();
    s.read_frame().unwrap()
}

/// Fails, saying `what` differs and by how much, unless `d` is within its tolerance.
pub fn assert_close(d: &Difference, what: &str) {
    assert!(
        d.within_tolerance(),
        "{what}: max {}, {} channels",
        d.max_channel_diff,
        d.channels_over
    );
}

/// The demo: `PLASMA_DEMO_BIN` when set; else the one Cargo built, if it is still there; else
/// `../bin/plasma-demo` beside this test binary's folder (the layout of a GPU bundle, which is
/// copied to another machine, where Cargo's path does not exist).
pub fn demo_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("PLASMA_DEMO_BIN") {
        return PathBuf::from(path);
    }
    let built = PathBuf::from(env!("CARGO_BIN_EXE_plasma-demo"));
    if built.exists() {
        return built;
    }
    let exe = std::env::current_exe().expect("current_exe");
    let bundled = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("bin/plasma-demo"));
    bundled
        .filter(|p| p.exists())
        .unwrap_or_else(|| panic!("no plasma-demo at {built:?} or ../bin/; set PLASMA_DEMO_BIN"))
}

/// How far a GPU frame's channels may be from the CPU reference's.
pub const TOLERANCE: u8 = 2;

/// Reads the session's frame at time `t` (drawn at `size`), compares it with the CPU reference
/// within [`TOLERANCE`], prints the difference, adds a failure line named `label` when it is
/// over, and asserts that the frame drawn from the texture is the frame read back.
pub fn check_frame(
    s: &mut plasma_demo::session::Session,
    label: &str,
    size: plasma_demo::cli::Size,
    t: f32,
    failures: &mut Vec<String>,
) {
    let got = s.read_frame().unwrap();
    watchdog::enter(watchdog::Stage::Idle);
    let (w, h) = (size.width, size.height);
    let mut expected = vec![0u8; size.rgba_bytes()];
    plasma_demo::plasma_cpu::render_cpu(&mut expected, w, h, t);
    let d = plasma_demo::png_io::compare_rgba(&got, &expected, w, TOLERANCE);
    eprintln!(
        "{label} {size} t={t}: max channel diff {}, {} channels over ±{TOLERANCE}",
        d.max_channel_diff, d.channels_over
    );
    if !d.within_tolerance() {
        failures.push(format!(
            "{label} {size} t={t}: {} of {} channels differ by more than {TOLERANCE} (max {}, \
             first at {:?} from the bottom)",
            d.channels_over, d.channels, d.max_channel_diff, d.first_over
        ));
    }
    // The frame drawn from the texture is the texture.
    let drawn = s.read_drawn().unwrap().unwrap();
    assert_eq!(drawn, got, "{label} {size} t={t}: drawn frame");
}

/// The animation times at which [`check_frames`] checks the frames.
pub const TIMES: [f32; 3] = [0.0, 1.5, 42.75];

/// Checks `s`'s frames against the CPU reference ([`check_frame`], named `label`) at each of
/// `sizes`, resizing the session first as a window resize does, and at each of [`TIMES`], where
/// it draws `renders` frames and checks the last; returns how many frames it checked.
pub fn check_frames(
    s: &mut Session,
    label: &str,
    sizes: &[(u32, u32)],
    renders: usize,
    failures: &mut Vec<String>,
) -> usize {
    let mut checked = 0;
    for &(w, h) in sizes {
        let size = Size::new(w, h).unwrap();
        s.resize(size).unwrap();
        for t in TIMES {
            for _ in 0..renders {
                s.render_frame(t, size).unwrap();
            }
            // The read-back finishes first: the texture is the last frame.
            check_frame(s, label, size, t, failures);
            checked += 1;
        }
    }
    checked
}

/// What a run of the demo binary printed.
pub struct DemoRun {
    pub stdout: String,
    pub stderr: String,
}

impl DemoRun {
    /// Both streams, for failure messages.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// Runs the demo binary with `args` and `--screenshot shot`, without the environment variables
/// `unset`, and asserts that it exited with success.
pub fn run_demo(args: &[&str], shot: &Path, unset: &[&str]) -> DemoRun {
    let mut command = std::process::Command::new(demo_binary());
    for name in unset {
        command.env_remove(name);
    }
    let output = command
        .args(args)
        .arg("--screenshot")
        .arg(shot)
        .output()
        .unwrap();
    let run = DemoRun {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    assert!(
        output.status.success(),
        "{:?}: {}",
        output.status,
        run.all()
    );
    run
}

/// The time of the frames [`run_headless`] draws.
pub const SHOT_TIME: f32 = 1.5;

/// Runs the demo headless (`--headless`, the default backend and path) for 3 frames of `size`
/// at [`SHOT_TIME`], its screenshot in a temporary file named after `tag`: what it printed and
/// the screenshot's path (for [`compare_shot`]).
pub fn run_headless(tag: &str, size: Size) -> (DemoRun, PathBuf) {
    let shot = std::env::temp_dir().join(format!("plasma-demo-{tag}-{}.png", std::process::id()));
    let size = size.to_string();
    let time = SHOT_TIME.to_string();
    let args = [
        "--headless",
        "--size",
        &size,
        "--frames",
        "3",
        "--time",
        &time,
    ];
    (run_demo(&args, &shot, &[]), shot)
}

/// Reads the screenshot `shot` of a [`run_headless`] run at `size`, deletes it, and compares it
/// with the CPU reference within `tolerance`.
pub fn compare_shot(shot: &Path, size: Size, tolerance: u8) -> Difference {
    let got = plasma_demo::png_io::Image::read_png(shot).unwrap();
    std::fs::remove_file(shot).unwrap();
    let expected = plasma_demo::reference::reference_image(size, SHOT_TIME).unwrap();
    plasma_demo::png_io::compare(&got, &expected, tolerance).unwrap()
}
