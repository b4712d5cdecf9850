//! The windowed run: a GLFW window with an OpenGL 3.3 core context, resizable, vsync off unless
//! `--vsync`. Esc or closing the window quits; a resize reallocates the texture and pixel buffer
//! and registers them with CUDA again (a display target is resized: `DisplayTarget::resize`). The title shows the size, the backend, FPS and the frame
//! time, updated once a second.

use crate::backend;
use crate::bench;
use crate::cli::{RunArgs, Size};
use crate::renderer::Target;
use crate::session::Session;
use crate::timing::{AnimationClock, FpsCounter};
use crate::watchdog;
use crate::{Output, RunSummary};
use anyhow::{Context as _, Result, anyhow};
use glfw::{Action, Context as _, Key, WindowEvent};
use std::ffi::c_void;
use std::sync::Mutex;
use std::time::Instant;

/// The last error GLFW reported through its callback, for error messages.
static LAST_GLFW_ERROR: Mutex<Option<String>> = Mutex::new(None);

fn on_glfw_error(error: glfw::Error, description: String) {
    log::debug!("GLFW error {error:?}: {description}");
    if let Ok(mut last) = LAST_GLFW_ERROR.lock() {
        *last = Some(description);
    }
}

/// `": <GLFW's last error>"`, or nothing when GLFW reported none.
fn glfw_reason() -> String {
    LAST_GLFW_ERROR
        .lock()
        .ok()
        .and_then(|mut e| e.take())
        .map(|e| format!(": {e}"))
        .unwrap_or_default()
}

/// A GLFW window whose OpenGL context is current on this thread. Fields drop in order: the
/// event receiver, the window (and its context), then the GLFW handle.
#[derive(Debug)]
pub struct GlWindow {
    events: glfw::GlfwReceiver<(f64, WindowEvent)>,
    window: glfw::PWindow,
    glfw: glfw::Glfw,
}

impl GlWindow {
    /// The address of GL entry point `name` in the window's context (null when unknown).
    pub fn proc_address(&mut self, name: &str) -> *const c_void {
        self.window
            .get_proc_address(name)
            .map_or(std::ptr::null(), |f| f as *const c_void)
    }

    /// Opens a resizable `size` window with an OpenGL 3.3 core context, makes it current,
    /// loads the `gl` function pointers and sets the swap interval.
    ///
    /// # Errors
    /// When GLFW cannot start (no display) or the context cannot be created, with GLFW's reason.
    pub fn open(size: Size, vsync: bool) -> Result<GlWindow> {
        let mut glfw = glfw::init(on_glfw_error).map_err(|e| {
            anyhow!(
                "cannot open a window: GLFW failed to start ({e}){}",
                glfw_reason()
            )
        })?;
        glfw.window_hint(glfw::WindowHint::ContextVersion(3, 3));
        glfw.window_hint(glfw::WindowHint::OpenGlProfile(
            glfw::OpenGlProfileHint::Core,
        ));
        glfw.window_hint(glfw::WindowHint::OpenGlForwardCompat(true));
        glfw.window_hint(glfw::WindowHint::Resizable(true));
        glfw.window_hint(glfw::WindowHint::DoubleBuffer(true));
        let (mut window, events) = glfw
            .create_window(
                size.width,
                size.height,
                "plasma-demo",
                glfw::WindowMode::Windowed,
            )
            .ok_or_else(|| {
                anyhow!(
                    "cannot create a {size} window with an OpenGL 3.3 core context{}",
                    glfw_reason()
                )
            })?;
        window.make_current();
        window.set_key_polling(true);
        window.set_framebuffer_size_polling(true);
        gl::load_with(|name| {
            window
                .get_proc_address(name)
                .map_or(std::ptr::null(), |f| f as *const c_void)
        });
        glfw.set_swap_interval(if vsync {
            glfw::SwapInterval::Sync(1)
        } else {
            glfw::SwapInterval::None
        });
        Ok(GlWindow {
            events,
            window,
            glfw,
        })
    }

    /// The framebuffer size in pixels; `None` while minimized (0 x 0).
    pub fn framebuffer_size(&self) -> Option<Size> {
        let (w, h) = self.window.get_framebuffer_size();
        Size::new(u32::try_from(w).ok()?, u32::try_from(h).ok()?)
    }

    /// Processes pending events; returns `false` once the window should close (Esc or the
    /// close button).
    pub fn poll(&mut self) -> bool {
        self.glfw.poll_events();
        for (_, event) in glfw::flush_messages(&self.events) {
            if let WindowEvent::Key(Key::Escape, _, Action::Press, _) = event {
                self.window.set_should_close(true);
            }
        }
        !self.window.should_close()
    }

    /// Waits up to `seconds` for an event (while minimized).
    pub fn wait(&mut self, seconds: f64) {
        self.glfw.wait_events_timeout(seconds);
    }

    /// Presents the frame.
    pub fn swap(&mut self) {
        self.window.swap_buffers();
    }

    /// Sets the title.
    pub fn set_title(&mut self, title: &str) {
        self.window.set_title(title);
    }
}

/// Runs the demo (or `--bench`) in `win`, opened with [`GlWindow::open`].
///
/// # Errors
/// Choosing the backend (`--backend cuda` without CUDA interop), any frame's CUDA or GL error,
/// or writing the screenshot.
pub fn run(mut win: GlWindow, args: &RunArgs, out: &Output) -> Result<()> {
    let selected = backend::for_current_gl(args.backend, args.path, args.device)?
        .with_debug_spin(args.debug_spin())?;
    let selected = selected.with_stream_gl(args.path, args.burst)?;
    if let Some(reason) = &selected.fallback {
        out.fallback(backend::fallback_subject(args.path), reason);
    }
    let first_size = win.framebuffer_size().unwrap_or(args.size);
    // Declared after `win`, so dropped before it: CUDA and GL objects go while the context lives.
    let mut session = Session::new(selected.backend, first_size, Target::Window, args.bench)?;
    let label = session.backend().short_label();
    let gl = session.gl_info();
    out.info(&format!(
        "plasma-demo: {} in a window, {first_size}, vsync {}, OpenGL {} on {}; Esc quits",
        session.backend().description(),
        if args.vsync { "on" } else { "off" },
        gl.version,
        gl.renderer
    ));
    if let Some(report) = session.backend().display_report() {
        out.info(&format!("plasma-demo: {report}"));
    }

    let clock = AnimationClock::new(args.time);
    let mut fps = FpsCounter::new();
    let mut title_size = None;
    let mut step = |session: &mut Session| -> Result<bool> {
        if !win.poll() {
            return Ok(false);
        }
        let Some(size) = win.framebuffer_size() else {
            // Minimized: nothing is asked of the GPU while waiting for the window to come back.
            watchdog::enter(watchdog::Stage::Idle);
            win.wait(0.1);
            return Ok(true);
        };
        session.resize(size)?;
        session.render_frame(clock.now(), size)?;
        watchdog::enter(watchdog::Stage::Present);
        win.swap();
        if let Some((rate, frame_us)) = fps.frame() {
            win.set_title(&format!(
                "plasma-demo | {size} | {label} | {rate:.0} FPS | {frame_us:.0} µs/frame"
            ));
            title_size = Some(size);
        } else if title_size != Some(size) {
            win.set_title(&format!("plasma-demo | {size} | {label} | measuring..."));
            title_size = Some(size);
        }
        Ok(true)
    };

    let limit = args.frame_limit();
    if args.bench {
        let result = bench::measure(
            &mut session,
            args.warmup,
            limit.unwrap_or(crate::cli::DEFAULT_BENCH_FRAMES),
            &mut step,
        )?;
        bench::report(&session, args, "window", &result, out)?;
    } else {
        let start = Instant::now();
        while limit.is_none_or(|n| session.frames() < n) {
            if !step(&mut session)? {
                break;
            }
        }
        session.finish()?;
        out.summary(&RunSummary::new(&session, start.elapsed()));
    }
    crate::save_screenshot(&mut session, args.screenshot.as_deref(), out)
        .context("saving the screenshot")?;
    watchdog::enter(watchdog::Stage::Teardown);
    Ok(())
}
