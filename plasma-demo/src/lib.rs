//! plasma-demo: zero-copy CUDA -> OpenGL interop with [`cuda_gl`], as a program and as pieces
//! that the tests reuse.
//!
//! Every frame a CUDA kernel (`kernels/plasma.cu`) computes a plasma effect, which reaches an
//! OpenGL texture and is then drawn with a fullscreen triangle:
//!
//! - **Display paths** (`--path auto`, the default, `interop`, `staged`): `plasma_pbo` writes
//!   the frame of a `cuda_gl::display::DisplayTarget`, which puts it in its texture: copied on
//!   the GPU into the registered texture (interop, NVIDIA's OpenGL), or through pinned host
//!   memory and a GL upload (staged, any OpenGL). `auto` picks, and its report line says which.
//! - **PBO path**: map the pixel buffer (registered `WRITE_DISCARD`) on a stream, launch
//!   `plasma_pbo` on its device pointer, unmap, `glTexSubImage2D` from the bound buffer.
//! - **surface path**: map the texture itself (registered `SURFACE_LOAD_STORE`), launch
//!   `plasma_surface` on its surface object, unmap. No buffer, no copy.
//! - **CPU backend**: [`plasma_cpu`] into host memory, `glBufferSubData` into the pixel buffer:
//!   what a program without CUDA does, and the reference.
//!
//! Modules: [`cli`] (flags), [`backend`] (CUDA and CPU), [`renderer`] (GL objects and drawing),
//! [`session`] (backend + renderer, one frame at a time), [`window`] (GLFW), [`headless`] (EGL),
//! [`timing`] and [`mod@bench`] (measuring), [`png_io`] and [`mod@reference`] (images),
//! [`watchdog`] (ends a run that the GPU leaves hanging), [`gpu_health`] (what the driver says about
//! a GPU that needs a reset, printed before a benchmark).

pub mod backend;
pub mod bench;
pub mod cli;
pub mod headless;
pub mod plasma_cpu;
pub mod png_io;
pub mod reference;
pub mod renderer;
pub mod session;
pub mod timing;
pub mod window;

// The guards of a run that waits on the GPU live in gl-kit, which the interop benchmark shares;
// the demo names them as its own modules.
pub use gl_kit::{gpu_health, watchdog};

use crate::cli::Size;
use crate::png_io::Image;
use crate::session::Session;
use anyhow::Result;
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// An error and its causes on one line: each cause once, multi-line messages (cuda-gl's `help:`
/// lines, lists of attempts) joined with spaces.
pub fn one_line(error: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in error.chain() {
        let text = cause
            .to_string()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if text.is_empty() || parts.iter().any(|p| p.contains(&text)) {
            continue;
        }
        parts.push(text);
    }
    parts.join(": ")
}

/// Sets up `env_logger`: `RUST_LOG` when set, otherwise warnings and errors (cuda-gl's EGL
/// probing, which logs every display it tries, only errors).
pub fn init_logging() {
    env_logger::Builder::from_env(
        env_logger::Env::default().default_filter_or("warn,cuda_gl::egl=error"),
    )
    .format_timestamp(None)
    .init();
}

/// Where messages go: status lines on stdout, except with `--json`, where stdout carries only
/// the JSON document and status lines go to stderr.
#[derive(Debug, Clone, Copy, Default)]
pub struct Output {
    json: bool,
}

impl Output {
    /// The output of a run with (`json = true`) or without `--json`.
    pub fn new(json: bool) -> Output {
        Output { json }
    }

    /// A status line.
    pub fn info(&self, line: &str) {
        if self.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }

    /// The one line saying why `--backend auto` runs on the CPU (always stderr): `what` (CUDA,
    /// or CUDA interop) is unavailable, because of `reason`.
    pub fn fallback(&self, what: &str, reason: &str) {
        eprintln!("plasma-demo: {what} unavailable, using the CPU backend: {reason}");
    }

    /// The result of the run (a table or the JSON document), on stdout.
    pub fn result(&self, text: &str) {
        println!("{text}");
    }

    /// The end-of-run summary.
    pub fn summary(&self, summary: &RunSummary) {
        self.info(&summary.to_string());
    }
}

/// How a run went: frames, size, backend and time.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Frames rendered.
    pub frames: u64,
    /// The last frame's size.
    pub size: Size,
    /// The backend's short label.
    pub backend: String,
    /// Wall time of the frame loop, GPU drained at the end.
    pub elapsed: Duration,
}

impl RunSummary {
    /// The summary of `session` after a loop of `elapsed`.
    pub fn new(session: &Session, elapsed: Duration) -> RunSummary {
        RunSummary {
            frames: session.frames(),
            size: session.size(),
            backend: session.backend().short_label(),
            elapsed,
        }
    }
}

impl fmt::Display for RunSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.elapsed.as_secs_f64();
        write!(
            f,
            "plasma-demo: rendered {} frame(s) of {} with {} in {secs:.3} s",
            self.frames, self.size, self.backend
        )?;
        if self.frames > 0 && secs > 0.0 {
            write!(
                f,
                ": {:.1} frames/s, {:.0} µs/frame",
                self.frames as f64 / secs,
                secs * 1e6 / self.frames as f64
            )?;
        }
        Ok(())
    }
}

/// Writes the session's current frame to `path` as a PNG (top row first), if a path is given
/// and a frame was rendered.
///
/// # Errors
/// Reading the texture back or writing the file.
pub fn save_screenshot(session: &mut Session, path: Option<&Path>, out: &Output) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    if session.frames() == 0 {
        log::warn!("no frame was rendered, so no screenshot was written");
        return Ok(());
    }
    let size = session.size();
    let pixels = session.read_frame()?;
    // Encoding a large PNG is host work, however long it takes.
    watchdog::enter(watchdog::Stage::Idle);
    Image::from_bottom_up(size.width, size.height, &pixels)?.write_png(path)?;
    out.info(&format!(
        "plasma-demo: wrote the screenshot {} ({size}, frame {})",
        path.display(),
        session.frames()
    ));
    Ok(())
}
