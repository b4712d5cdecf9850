//! The boilerplate the numbered examples share, and that a program of your own would copy: the
//! command line (`--window`, `--screenshot PATH`), an OpenGL context with the CUDA context on the
//! same GPU (headless through EGL, or a GLFW window), and the one line each example ends with.
//! What they draw with (a mesh, the framebuffer) is in `draw`; GL boilerplate (textures,
//! buffers, shaders, read-back, PNG files, error checks) is gl-kit's.
//!
//! Exit status of every example: 0 when its check passed, 1 on a mismatch or any failure while
//! running, 2 when it cannot run here (no CUDA device, no NVIDIA OpenGL, no display for
//! `--window`, or a bad command line).
// Each example uses a different part of this module.
#![allow(dead_code)]

use anyhow::{Context as _, Result, anyhow, bail};
use cuda_gl::display::{Mode, Report};
use cuda_gl::egl::HeadlessContext;
use cuda_gl::{Context, Device, Module, Stream, StreamFlags};
use std::ffi::c_void;
use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

mod draw;
pub use draw::*;

/// The command line every example takes.
#[derive(Clone, Debug, Default)]
pub struct Args {
    /// `--window`: draw in a GLFW window as well (the check is the same).
    pub window: bool,
    /// `--screenshot PATH`: write the final image as a PNG.
    pub screenshot: Option<PathBuf>,
    /// `--window-secs N`: with `--window`, close the window after N seconds instead of waiting
    /// for the user (for unattended runs, e.g. under Xvfb).
    pub window_secs: Option<f64>,
    /// The flags of the example's own (no value) that were given: of those it names to
    /// [`main_with_flags`] (12's `--gl`).
    pub own: Vec<&'static str>,
}

impl Args {
    /// Parses the command line; `own` are the example's own flags, refused by the others.
    fn parse(mut args: impl Iterator<Item = String>, own: &[&'static str]) -> Result<Args> {
        let mut parsed = Args::default();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--window" => parsed.window = true,
                "--window-secs" => {
                    let secs = args
                        .next()
                        .context("--window-secs needs a number of seconds")?;
                    let secs: f64 = secs
                        .parse()
                        .with_context(|| format!("--window-secs {secs}: not a number"))?;
                    parsed.window_secs = Some(secs);
                }
                "--screenshot" => {
                    let path = args.next().context("--screenshot needs a PATH")?;
                    parsed.screenshot = Some(PathBuf::from(path));
                }
                other => match own.iter().find(|&&flag| flag == other) {
                    Some(&flag) => parsed.own.push(flag),
                    None => bail!(
                        "unknown argument `{other}` (flags: --window, --window-secs N, \
                         --screenshot PATH{})",
                        own.iter().map(|f| format!(", {f}")).collect::<String>()
                    ),
                },
            }
        }
        Ok(parsed)
    }

    /// Whether the example's own `flag` was given.
    pub fn has(&self, flag: &str) -> bool {
        self.own.contains(&flag)
    }
}

/// Why an example cannot run on this machine (exit status 2), as opposed to a failure (1).
#[derive(Debug)]
pub struct Unavailable(pub String);

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unavailable {}

/// What an example's check found: what was compared, with numbers.
#[derive(Debug)]
pub enum Outcome {
    /// The read-back data matched the CPU computation.
    Ok(String),
    /// It did not.
    Mismatch(String),
}

/// The example's name: its binary's (`01_vertex_buffer`). Every example includes this module as
/// its own, so each one gets its own name here.
pub const NAME: &str = env!("CARGO_BIN_NAME");

/// Parses the command line, runs the example and prints its last line:
/// `<NAME>: ok: ...`, `<NAME>: MISMATCH: ...`, or why it failed or cannot run ([`NAME`]).
pub fn main(run: impl FnOnce(&Args) -> Result<Outcome>) -> ExitCode {
    main_with_flags(&[], run)
}

/// [`main`] for an example with flags of its own (no value): `own` (12's `--gl`), given to
/// `run` in [`Args::own`].
pub fn main_with_flags(
    own: &[&'static str],
    run: impl FnOnce(&Args) -> Result<Outcome>,
) -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1), own) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("{NAME}: {e:#}");
            return ExitCode::from(2);
        }
    };
    finish_with(run(&args))
}

/// [`main`] for the examples that draw in a window with `--window` and headless otherwise (11,
/// 14; 12 too, through [`main_with_flags`] for its `--gl`): `window` or `headless` runs the
/// frames and says what it did, or stops at the first [`Mismatch`] ([`outcome_of`]).
pub fn main_window_or_headless(
    window: impl FnOnce(&Args) -> Result<String>,
    headless: impl FnOnce(&Args) -> Result<String>,
) -> ExitCode {
    main(|args| {
        outcome_of(if args.window {
            window(args)
        } else {
            headless(args)
        })
    })
}

/// Prints an example's last line for what it returned, as [`main`] does, and gives its exit
/// status: for an example with a command line of its own (09).
pub fn finish_with(result: Result<Outcome>) -> ExitCode {
    match result {
        Ok(Outcome::Ok(what)) => {
            println!("{NAME}: ok: {what}");
            ExitCode::SUCCESS
        }
        Ok(Outcome::Mismatch(what)) => {
            println!("{NAME}: MISMATCH: {what}");
            ExitCode::from(1)
        }
        Err(e) => {
            // One line, even for cuda-gl's multi-line errors (hints, lists of attempts).
            let text = format!("{e:#}");
            let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
            if e.downcast_ref::<Unavailable>().is_some() {
                println!("{NAME}: cannot run here: {line}");
                ExitCode::from(2)
            } else {
                println!("{NAME}: error: {line}");
                ExitCode::from(1)
            }
        }
    }
}

/// A GLFW window with its OpenGL context. Fields drop in order: the events, the window (and its
/// context), then GLFW.
struct Window {
    _events: glfw::GlfwReceiver<(f64, glfw::WindowEvent)>,
    window: glfw::PWindow,
    glfw: glfw::Glfw,
}

/// Where the GL context comes from.
enum Display {
    Headless(Box<HeadlessContext>),
    Window(Window),
}

/// The examples' kernels (`kernels/examples.cu`), compiled by `cargo xtask ptx`.
pub const PTX: &str = include_str!("../kernels/examples.ptx");

/// [`main`] for the examples that run on the examples' kernels (01 to 05 and 07): opens a
/// `width` x `height` [`Gpu`] ([`Gpu::open`]), makes a non-blocking stream and loads [`PTX`] in
/// its CUDA context, and hands the three to `run`. Parameters drop in reverse order, after
/// everything `run` made: the [`Gpu`], given first, drops last.
pub fn main_with_kernels(
    width: u32,
    height: u32,
    run: impl FnOnce(Gpu, Stream, Module) -> Result<Outcome>,
) -> ExitCode {
    main(|args| {
        let gpu = Gpu::open(args, width, height)?;
        let stream = Stream::new(&gpu.ctx, StreamFlags::NonBlocking)?;
        let module = Module::from_ptx(&gpu.ctx, PTX)?;
        run(gpu, stream, module)
    })
}

/// CUDA device 0 and a headless OpenGL context, current, on the same GPU (EGL finds the device
/// by its CUDA id), for the example to load its GL crate from.
///
/// # Errors
/// [`Unavailable`] without CUDA device 0 or NVIDIA's EGL on it.
pub fn headless_on_device_0() -> Result<(Device, HeadlessContext)> {
    let device = device_0()?;
    // The GL context must be on the same GPU as CUDA for interop.
    let gl = HeadlessContext::for_cuda_device(&device).map_err(|e| {
        anyhow!(Unavailable(format!(
            "no headless OpenGL on CUDA device 0 through EGL: {e}"
        )))
    })?;
    Ok((device, gl))
}

/// CUDA device 0 and a headless OpenGL context, current: on that GPU where NVIDIA's EGL has one,
/// otherwise any GL there is ([`HeadlessContext::for_cuda_device_or_any`], whose
/// `fallback_reason` says why). For the examples that need no interop (10, 11).
///
/// # Errors
/// [`Unavailable`] without CUDA device 0 or any OpenGL.
pub fn any_gl_with_device_0() -> Result<(Device, HeadlessContext)> {
    let device = device_0()?;
    let gl = HeadlessContext::for_cuda_device_or_any(&device)
        .map_err(|e| anyhow!(Unavailable(format!("no OpenGL: {e}"))))?;
    Ok((device, gl))
}

/// [`any_gl_with_device_0`] for a headless-only example (10, 13): [`Unavailable`] with
/// `--window`, which example `number` does not have; when the GL is not on CUDA device 0, one
/// line that says why and which GL it is instead (the target's report would only say to try what
/// failed here). Loads the `gl` crate from the context, for the example's own read-backs.
///
/// # Errors
/// [`Unavailable`] with `--window`, or as [`any_gl_with_device_0`].
pub fn headless_any_gl(args: &Args, number: &str) -> Result<(Device, HeadlessContext)> {
    if args.window {
        bail!(Unavailable(format!(
            "{number} is headless only (no --window)"
        )));
    }
    let (device, gl) = any_gl_with_device_0()?;
    // The example reads back with the `gl` crate (cuda-gl needs no loader).
    gl::load_with(|name| gl.get_proc_address(name));
    if let Some(why) = gl.fallback_reason() {
        let why = why
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        println!("no GL on CUDA device 0 ({why}); using {}", gl.renderer());
    }
    Ok((device, gl))
}

/// With `CUDA_GL_REQUIRE_MESA=1` (as `ci/gpu/suite.sh --mesa` runs 10 and 13): an error unless
/// the target's `report` is of Mesa's GL in staged mode.
///
/// # Errors
/// With `CUDA_GL_REQUIRE_MESA=1`, when the GL is not Mesa's or the mode not staged.
pub fn check_required_mesa(report: &Report) -> Result<()> {
    let require_mesa = std::env::var("CUDA_GL_REQUIRE_MESA").is_ok_and(|v| v == "1");
    if require_mesa && (report.mode != Mode::Staged || !report.vendor.contains("Mesa")) {
        bail!("CUDA_GL_REQUIRE_MESA=1, but this is not Mesa's GL in staged mode: {report}");
    }
    Ok(())
}

/// CUDA device 0, or [`Unavailable`] without it.
pub fn device_0() -> Result<Device> {
    Device::get(0).map_err(|e| anyhow!(Unavailable(format!("no CUDA device 0: {e}"))))
}

/// The size a resizing example (09, 11, 14) gives its image once `drawn` of a run's `frames`
/// frames are drawn, when one is due: the sizes of `sizes` in order, spread evenly over the run
/// (with 3 sizes and 120 frames, after frames 30, 60 and 90).
pub fn size_due(drawn: u32, frames: u32, sizes: &[(u32, u32)]) -> Option<(u32, u32)> {
    let steps = sizes.len() as u64 + 1;
    (1..steps)
        .find(|&i| drawn > 0 && u64::from(drawn) == i * u64::from(frames) / steps)
        .map(|i| sizes[i as usize - 1])
}

/// A current OpenGL context and the CUDA context of the same GPU. Create it first, so that it
/// drops last: CUDA registrations and GL objects must go while the GL context still exists.
pub struct Gpu {
    /// The CUDA context (the device's primary context).
    pub ctx: Arc<Context>,
    /// The command line it was opened with: what [`Gpu::finish`] does.
    args: Args,
    display: Display,
}

impl Gpu {
    /// Makes a GL context current on this thread and finds the CUDA context on the same GPU.
    ///
    /// Headless (the default), the EGL display is chosen by CUDA device 0's identity
    /// (`EGL_CUDA_DEVICE_NV`), so interop works on servers with several GPUs. With `--window`,
    /// GLFW creates a `width` x `height` window titled `cuda-gl <NAME>`, and the CUDA device is
    /// the one behind its context ([`Context::for_current_gl`]); on a laptop whose window runs on
    /// an integrated GPU, that fails with the reason.
    ///
    /// # Errors
    /// [`Unavailable`] when there is no CUDA device, no NVIDIA EGL, or no display.
    pub fn open(args: &Args, width: u32, height: u32) -> Result<Gpu> {
        let (ctx, display) = if args.window {
            Self::open_window(width, height)?
        } else {
            Self::open_headless()?
        };
        let gpu = Gpu {
            ctx,
            args: args.clone(),
            display,
        };
        let gl_string = |name| gl_kit::info::string(name).unwrap_or_else(|| "?".into());
        let (renderer, version) = (gl_string(gl::RENDERER), gl_string(gl::VERSION));
        let device = gpu.ctx.device();
        println!(
            "OpenGL {version} on {renderer}; CUDA device {} ({})",
            device.ordinal(),
            device.name()?
        );
        Ok(gpu)
    }

    fn open_headless() -> Result<(Arc<Context>, Display)> {
        let (device, gl) = headless_on_device_0()?;
        // The example draws with the `gl` crate: load it for its own calls (cuda-gl needs no
        // loader).
        gl::load_with(|name| gl.get_proc_address(name));
        let ctx = Context::new(&device)?;
        Ok((ctx, Display::Headless(Box::new(gl))))
    }

    fn open_window(width: u32, height: u32) -> Result<(Arc<Context>, Display)> {
        let unavailable = |what: String| anyhow!(Unavailable(what));
        let mut glfw = glfw::init(glfw::log_errors)
            .map_err(|e| unavailable(format!("cannot open a window: GLFW failed ({e})")))?;
        // OpenGL 4.5 core: immutable texture storage, glClearTexImage and the debug-free core.
        glfw.window_hint(glfw::WindowHint::ContextVersion(4, 5));
        glfw.window_hint(glfw::WindowHint::OpenGlProfile(
            glfw::OpenGlProfileHint::Core,
        ));
        glfw.window_hint(glfw::WindowHint::Resizable(false));
        let title = format!("cuda-gl {NAME}");
        let (mut window, events) = glfw
            .create_window(width, height, &title, glfw::WindowMode::Windowed)
            .ok_or_else(|| unavailable("cannot create a window with OpenGL 4.5".into()))?;
        glfw::Context::make_current(&mut *window);
        gl::load_with(|name| {
            window
                .get_proc_address(name)
                .map_or(std::ptr::null(), |f| f as *const c_void)
        });
        // The CUDA device that runs this GL context (cuGLGetDevices).
        let ctx = Context::for_current_gl().map_err(|e| {
            unavailable(format!("the window's OpenGL is not on a CUDA device: {e}"))
        })?;
        let window = Window {
            _events: events,
            window,
            glfw,
        };
        Ok((ctx, Display::Window(window)))
    }

    /// The address of GL entry point `name` in the current context (null when unknown), for
    /// loaders such as `ExternalGl::load_with`.
    pub fn proc_address(&mut self, name: &str) -> *const c_void {
        match &mut self.display {
            Display::Headless(gl) => gl.get_proc_address(name),
            Display::Window(win) => win
                .window
                .get_proc_address(name)
                .map_or(std::ptr::null(), |f| f as *const c_void),
        }
    }

    /// With `--window`, copies `frame` into the window and shows it; returns `false` once the
    /// window was closed. Headless, does nothing and returns `true`.
    pub fn present(&mut self, frame: &Framebuffer) -> Result<bool> {
        let Display::Window(win) = &mut self.display else {
            return Ok(true);
        };
        let (w, h) = win.window.get_framebuffer_size();
        // SAFETY: the window's context is current; `frame.framebuffer()` is a complete framebuffer and
        // framebuffer 0 is the window's.
        unsafe {
            gl::BindFramebuffer(gl::READ_FRAMEBUFFER, frame.framebuffer());
            gl::BindFramebuffer(gl::DRAW_FRAMEBUFFER, 0);
            gl::BlitFramebuffer(
                0,
                0,
                frame.width() as i32,
                frame.height() as i32,
                0,
                0,
                w,
                h,
                gl::COLOR_BUFFER_BIT,
                gl::LINEAR,
            );
            gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
        }
        gl_kit::check("copying the frame into the window")?;
        glfw::Context::swap_buffers(&mut *win.window);
        win.glfw.poll_events();
        Ok(!win.window.should_close())
    }

    /// Ends an example: writes `frame` to `--screenshot` when asked, and with `--window` keeps
    /// showing it until the window is closed (or `--window-secs` have passed).
    pub fn finish(&mut self, frame: &Framebuffer) -> Result<()> {
        if let Some(path) = &self.args.screenshot {
            let pixels = frame.read_rgba8()?;
            gl_kit::image::write_png_bottom_up(path, frame.width(), frame.height(), &pixels)?;
            println!(
                "wrote {} ({}x{})",
                path.display(),
                frame.width(),
                frame.height()
            );
        }
        if let Display::Window(_) = self.display {
            let until = self
                .args
                .window_secs
                .map(|secs| std::time::Instant::now() + std::time::Duration::from_secs_f64(secs));
            match until {
                Some(_) => println!("showing the window for {:?} s", self.args.window_secs),
                None => println!("close the window to finish"),
            }
            while self.present(frame)? && until.is_none_or(|t| std::time::Instant::now() < t) {
                if let Display::Window(win) = &mut self.display {
                    win.glfw.wait_events_timeout(0.1);
                }
            }
        }
        Ok(())
    }
}

/// A frame that differs from the CPU's pattern: ends the run with `MISMATCH: ...`.
#[derive(Debug)]
pub struct Mismatch(pub String);

/// The outcome of a run that ends at its first [`Mismatch`] (an error, to stop it there) and
/// otherwise says what it did: the mismatch becomes [`Outcome::Mismatch`], other errors stay.
pub fn outcome_of(run: Result<String>) -> Result<Outcome> {
    match run.map_err(|e| e.downcast::<Mismatch>()) {
        Ok(what) => Ok(Outcome::Ok(what)),
        Err(Ok(mismatch)) => Ok(Outcome::Mismatch(mismatch.0)),
        Err(Err(e)) => Err(e),
    }
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Mismatch {}

/// Writes `--screenshot`, when asked, from `pixels` (`width` x `height` RGBA8, bottom row
/// first, as GL reads them).
pub fn screenshot(
    path: Option<&std::path::Path>,
    (width, height): (u32, u32),
    pixels: &[u8],
) -> Result<()> {
    if let Some(path) = path {
        gl_kit::image::write_png_bottom_up(path, width, height, pixels)?;
        println!("wrote {} ({width}x{height})", path.display());
    }
    Ok(())
}
