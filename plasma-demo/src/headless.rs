//! The headless run: no window, an OpenGL context through EGL, frames drawn into an offscreen
//! framebuffer. Also what the default run does where it cannot open its window
//! ([`run_fallback`]).
//!
//! - `--backend cuda`: the EGL device that *is* CUDA device `--device`
//!   ([`HeadlessContext::for_cuda_device`]), so interop works; fails with the reason otherwise.
//! - `--backend cpu`: any OpenGL that EGL offers ([`HeadlessContext::any_gl`]): an NVIDIA GPU,
//!   or Mesa (llvmpipe) on machines without one.
//! - `--backend auto`: the CUDA device when CUDA and NVIDIA's EGL are there; otherwise one line
//!   saying why, then any OpenGL and the CPU backend.
//! - The display paths (`--path auto`, the default, `interop`, `staged`): the EGL device of CUDA
//!   device `--device` where EGL has one; where it has none (no NVIDIA EGL), `auto` and `staged`
//!   run on any OpenGL EGL offers, staging the frames through host memory, and say so in one
//!   line. `--backend auto` falls back to the CPU only without CUDA (no driver, no device).

use crate::backend::{self, Backend, CpuBackend, CudaBackend, DisplayBackend, Selected};
use crate::bench;
use crate::cli::{BackendChoice, FALLBACK_SECONDS, PathChoice, RunArgs};
use crate::one_line;
use crate::renderer::Target;
use crate::session::Session;
use crate::timing::AnimationClock;
use crate::watchdog;
use crate::{Output, RunSummary};
use anyhow::{Context as _, Result};
use cuda_gl::Device;
use cuda_gl::display::Mode;
use cuda_gl::egl::HeadlessContext;
use std::path::Path;
use std::time::Instant;

/// An OpenGL context on CUDA device `ordinal` and the CUDA backend on the same device.
///
/// # Errors
/// [`cuda_gl::Error::Load`] without a CUDA driver, `CUDA_ERROR_INVALID_DEVICE` for an ordinal
/// out of range, [`cuda_gl::Error::Egl`] when EGL has no device for it (e.g. NVIDIA's EGL vendor
/// library is not installed), or the backend's errors.
pub fn open_cuda(
    ordinal: usize,
    path: PathChoice,
) -> Result<(HeadlessContext, CudaBackend), cuda_gl::Error> {
    let device = Device::get(ordinal)?;
    let gl = HeadlessContext::for_cuda_device(&device)?;
    // The renderer draws with the `gl` crate; cuda-gl needs nothing loaded.
    gl::load_with(|name| gl.get_proc_address(name));
    let backend = CudaBackend::on_device(&device, path)?;
    Ok((gl, backend))
}

/// Any headless OpenGL context, for the CPU backend.
///
/// # Errors
/// When EGL offers no OpenGL at all.
pub fn open_any() -> Result<HeadlessContext> {
    let gl = HeadlessContext::any_gl().context("no headless OpenGL context through EGL")?;
    gl::load_with(|name| gl.get_proc_address(name));
    Ok(gl)
}

/// The headless context and the backend for `choice` on `path` (the display paths: see
/// `open_display`). The backend must be dropped before the context.
///
/// # Errors
/// With `--backend cuda`, why CUDA cannot be used on device `ordinal`; with `auto`, CUDA errors
/// other than "unavailable"; without any EGL OpenGL, that.
pub fn open(
    choice: BackendChoice,
    path: PathChoice,
    ordinal: usize,
) -> Result<(HeadlessContext, Selected)> {
    if choice != BackendChoice::Cpu && path.is_display() {
        return open_display(choice, backend::display::forced_mode(path), ordinal);
    }
    let cuda = |(gl, backend): (HeadlessContext, CudaBackend)| {
        (gl, Selected::plain(Backend::Cuda(Box::new(backend))))
    };
    match choice {
        BackendChoice::Cpu => Ok((
            open_any()?,
            Selected::plain(Backend::Cpu(CpuBackend::new())),
        )),
        BackendChoice::Cuda => open_cuda(ordinal, path).map(cuda).with_context(|| {
            format!("the CUDA backend cannot run headless on CUDA device {ordinal}")
        }),
        BackendChoice::Auto => match open_cuda(ordinal, path) {
            Ok(pair) => Ok(cuda(pair)),
            Err(e) if backend::is_unavailable(&e) => Ok((open_any()?, Selected::cpu_fallback(e))),
            Err(e) => Err(e).with_context(|| format!("starting CUDA on device {ordinal}")),
        },
    }
}

/// [`open`] for the display paths (`mode`: the one forced, `None` for auto): an OpenGL context
/// on CUDA device `ordinal`, or, unless interop is forced, any OpenGL EGL offers where it has
/// none there (the target stages the frames; the selection's note says why). With `auto`, no
/// CUDA driver or device (or a PTX the driver cannot load) means the CPU backend instead.
///
/// # Errors
/// With `--backend cuda`, why CUDA cannot run; a forced interop without OpenGL on the CUDA
/// device; no OpenGL through EGL at all; CUDA errors that do not mean "no CUDA".
fn open_display(
    choice: BackendChoice,
    mode: Option<Mode>,
    ordinal: usize,
) -> Result<(HeadlessContext, Selected)> {
    let no_cuda = |e: cuda_gl::Error| -> Result<(HeadlessContext, Selected)> {
        if choice == BackendChoice::Auto && e.is_unsupported_setup() {
            return Ok((open_any()?, Selected::cpu_fallback(e)));
        }
        Err(e).with_context(|| {
            format!("the CUDA backend cannot run headless on CUDA device {ordinal}")
        })
    };
    let device = match Device::get(ordinal) {
        Ok(device) => device,
        Err(e) => return no_cuda(e),
    };
    let (gl, note) = match HeadlessContext::for_cuda_device(&device) {
        Ok(gl) => (gl, None),
        // Any EGL failure there: the staged mode needs GL, not GL on that device.
        Err(e) if mode != Some(Mode::Interop) => {
            let gl = open_any()?;
            let note = format!(
                "plasma-demo: no OpenGL through EGL on CUDA device {ordinal} ({}); drawing with                  {} instead",
                one_line(&anyhow::Error::new(e)),
                gl.renderer()
            );
            (gl, Some(note))
        }
        Err(e) => {
            return Err(e).with_context(|| {
                format!(
                    "--path interop needs OpenGL on CUDA device {ordinal} (--path auto would                      stage the frames through another OpenGL)"
                )
            });
        }
    };
    // The renderer draws with the `gl` crate; cuda-gl needs nothing loaded.
    gl::load_with(|name| gl.get_proc_address(name));
    match DisplayBackend::on_device(&device, mode) {
        Ok(backend) => {
            let mut selected = Selected::plain(Backend::Display(Box::new(backend)));
            selected.note = note;
            Ok((gl, selected))
        }
        Err(e) => {
            // The CPU backend's context replaces this one.
            drop(gl);
            no_cuda(e)
        }
    }
}

/// How long a headless run renders.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    /// This many frames.
    Frames(u64),
    /// Frames until this many seconds have passed.
    Seconds(f64),
}

impl Length {
    fn done(self, frames: u64, elapsed: std::time::Duration) -> bool {
        match self {
            Length::Frames(n) => frames >= n,
            Length::Seconds(s) => elapsed.as_secs_f64() >= s,
        }
    }
}

/// Runs the demo (or `--bench`) headless.
///
/// # Errors
/// Creating the context or the backend, any frame's CUDA or GL error, or writing the
/// screenshot.
pub fn run(args: &RunArgs, out: &Output) -> Result<()> {
    let frames = args
        .frame_limit()
        .unwrap_or(crate::cli::DEFAULT_HEADLESS_FRAMES);
    run_for(
        args,
        out,
        Length::Frames(frames),
        args.screenshot.as_deref(),
    )
}

/// Runs headless in place of the default window, which could not be opened (`why`, said in one
/// line first): [`FALLBACK_SECONDS`] of frames (or `--frames`), frames per second, and a
/// screenshot at `--screenshot` or, without it, in the temporary folder; its path is printed.
///
/// # Errors
/// As [`run`].
pub fn run_fallback(args: &RunArgs, out: &Output, why: &str) -> Result<()> {
    let length = args
        .frames
        .map_or(Length::Seconds(FALLBACK_SECONDS), Length::Frames);
    let screenshot = args.screenshot.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("plasma-demo-{}.png", std::process::id()))
    });
    let what = match length {
        Length::Frames(n) => format!("{n} frames"),
        Length::Seconds(s) => format!("{s} s"),
    };
    out.info(&format!(
        "plasma-demo: {why}: rendering headless instead for {what}, then a screenshot \
         (--headless skips the window)"
    ));
    run_for(args, out, length, Some(&screenshot))
}

fn run_for(args: &RunArgs, out: &Output, length: Length, screenshot: Option<&Path>) -> Result<()> {
    let (gl, selected) = open(args.backend, args.path, args.device)?;
    let selected = selected.with_debug_spin(args.debug_spin())?;
    let selected = selected.with_stream_gl(args.path, args.burst)?;
    if let Some(reason) = &selected.fallback {
        out.fallback(backend::fallback_subject(args.path), reason);
    }
    if let Some(note) = &selected.note {
        out.info(note);
    }
    let size = args.size;
    // Declared after `gl`, so dropped before it.
    let mut session = Session::new(selected.backend, size, Target::Offscreen, args.bench)?;
    out.info(&format!(
        "plasma-demo: {}, headless ({}), {size}, OpenGL {} on {}",
        session.backend().description(),
        gl.platform(),
        gl.version(),
        gl.renderer()
    ));
    if let Some(report) = session.backend().display_report() {
        out.info(&format!("plasma-demo: {report}"));
    }
    let clock = AnimationClock::new(args.time);
    let mut step = |session: &mut Session| -> Result<bool> {
        session.render_frame(clock.now(), size)?;
        Ok(true)
    };
    match length {
        Length::Frames(limit) if args.bench => {
            let result = bench::measure(&mut session, args.warmup, limit, &mut step)?;
            bench::report(&session, args, "headless", &result, out)?;
        }
        _ => {
            let start = Instant::now();
            while !length.done(session.frames(), start.elapsed()) {
                step(&mut session)?;
            }
            session.finish()?;
            out.summary(&RunSummary::new(&session, start.elapsed()));
            if let Some((mean, max)) = session.backend().stream_latency() {
                out.info(&format!(
                    "plasma-demo: stream latency: GL drew each frame {mean:.1} frames (at most \
                     {max}) after it was pushed"
                ));
            }
        }
    }
    crate::save_screenshot(&mut session, screenshot, out).context("saving the screenshot")?;
    watchdog::enter(watchdog::Stage::Teardown);
    drop(session);
    drop(gl);
    Ok(())
}
