//! 09: a display target in a window of the stack most Rust programs draw with (winit for the
//! window, glutin for its GL context, glow for the GL calls), resized while it runs; or the same
//! frames headless.
//!
//! `DisplayTarget::new(.., None)` ("auto") picks the fastest mode that works with this GL:
//! interop when the GL is NVIDIA's on the CUDA GPU, staged through pinned memory on any other
//! (a laptop's integrated GPU, Mesa); its one-line report, printed first, says which and why.
//! Every frame, the examples' `stripes_rgba8` kernel draws the target through `frame.surface()`,
//! the frame is presented, and glow draws the target's texture into the window with one
//! full-screen triangle. The program resizes its own window a few times (to 1001x333, 77x1201
//! and 640x480, with `request_inner_size`); on each `WindowEvent::Resized` the GL surface and the
//! target take the new framebuffer size (`DisplayTarget::resize`).
//!
//! The check: the first frame, the first frame at each new size and the last frame are read back
//! from the target's texture (after `DisplayTarget::flush`, with glow) and compared pixel by
//! pixel with the CPU's pattern; headless, what the triangle drew is compared as well. The first
//! difference ends the run with `MISMATCH: ...` (exit 1).
//!
//! Headless (`--headless`, or on its own when neither DISPLAY nor WAYLAND_DISPLAY is set, which
//! it says): an EGL context on CUDA device 0 (`cuda_gl::egl::HeadlessContext`), glow loaded
//! from it, and an offscreen framebuffer of the target's size in place of the window, resized
//! through the same list of sizes by the same frame code.
//!
//! Run: `cargo run --release -p cuda-gl --example 09_display_window --features egl,glow`
//! Flags: `--window` (a window, or exit 2 when none can open), `--headless`, `--frames N`
//! (default 240), `--screenshot PATH` (the last frame as shown, PNG).
//!
//! On a GPU host with no display, under Xvfb (`source .xvfb/start.sh`, which sets DISPLAY and
//! NVIDIA's GLX vendor): winit compiles its keymap with xkbcommon, which must find the keyboard
//! data there: `XKB_CONFIG_ROOT=/opt/x/usr/share/X11/xkb .gpu/bin/09_display_window --window`.
//! On X11 glutin asks GLX first (NVIDIA's, through libglvnd), then EGL.

#[path = "common/mod.rs"]
mod common;
#[path = "common/glow_kit.rs"]
mod glow_kit;
#[path = "common/winit_app.rs"]
mod winit_app;

use anyhow::{Context as _, Result, anyhow, bail};
use common::{Mismatch, Outcome, Stripes, Unavailable, screenshot};
use cuda_gl::Context;
use cuda_gl::display::{DisplayTarget, Format, Layout};
use cuda_gl::egl::Offscreen;

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// The size the run starts at.
const START: (u32, u32) = (800, 600);
/// The sizes it is resized to, in order: odd widths and heights, tall and wide.
const SIZES: [(u32, u32); 3] = [(1001, 333), (77, 1201), (640, 480)];
const DEFAULT_FRAMES: u32 = 240;

/// This example's command line.
#[derive(Debug)]
struct Args {
    /// `--window` (`Some(true)`), `--headless` (`Some(false)`), or a window when there is a
    /// display (`None`).
    window: Option<bool>,
    /// `--frames N`.
    frames: u32,
    /// `--screenshot PATH`.
    screenshot: Option<PathBuf>,
}

impl Args {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Args> {
        let mut parsed = Args {
            window: None,
            frames: DEFAULT_FRAMES,
            screenshot: None,
        };
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--window" => parsed.window = Some(true),
                "--headless" => parsed.window = Some(false),
                "--frames" => {
                    let n = args.next().context("--frames needs a number")?;
                    parsed.frames = n
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .with_context(|| format!("--frames {n}: not a number above 0"))?;
                }
                "--screenshot" => {
                    let path = args.next().context("--screenshot needs a PATH")?;
                    parsed.screenshot = Some(PathBuf::from(path));
                }
                other => bail!(
                    "unknown argument `{other}` (flags: --window, --headless, --frames N, \
                     --screenshot PATH)"
                ),
            }
        }
        Ok(parsed)
    }
}

fn main() -> ExitCode {
    match Args::parse(std::env::args().skip(1)) {
        Ok(args) => common::finish_with(run(&args)),
        Err(e) => {
            eprintln!("{}: {e:#}", common::NAME);
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<Outcome> {
    let display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|value| !value.is_empty()));
    let window = args.window.unwrap_or_else(|| {
        if !display {
            println!("no DISPLAY or WAYLAND_DISPLAY: running headless (--window to insist)");
        }
        display
    });
    let result = if window {
        window::run(args)
    } else {
        headless(args)
    };
    common::outcome_of(result)
}

/// What the window and the headless run share: the display target, the kernel that draws its
/// frames, the triangle that shows its texture, and what has been checked.
struct Frames {
    // Dropped first: the target's GL objects go while the GL context is current.
    target: DisplayTarget,
    triangle: glow_kit::Triangle,
    stripes: Stripes,
    /// Frames drawn so far: the next frame's number.
    drawn: u32,
    /// Whether the next frame is read back (the first one, and the first at a new size).
    check_next: bool,
    /// The sizes of the frames read back from the texture, in order.
    checked: Vec<(u32, u32)>,
    /// Pixels compared with the CPU's, in every read-back.
    pixels_compared: u64,
    /// The sizes the run was resized to.
    resized: Vec<(u32, u32)>,
}

impl Frames {
    /// A display target of `width` x `height` in the GL context current on this thread (which
    /// `gl` is loaded from), in the mode `auto` picks; prints its report.
    fn new(ctx: &Arc<Context>, gl: &glow::Context, (width, height): (u32, u32)) -> Result<Frames> {
        let (target, report) =
            DisplayTarget::new(ctx, Layout::packed((width, height), Format::Rgba8)?, None)?;
        println!("{report}");
        Ok(Frames {
            target,
            triangle: glow_kit::Triangle::new(gl)?,
            stripes: Stripes::new(ctx)?,
            drawn: 0,
            check_next: true,
            checked: Vec::new(),
            pixels_compared: 0,
            resized: Vec::new(),
        })
    }

    /// Gives the target a new size (nothing when it has it already); the next frame is checked.
    fn resize(&mut self, (width, height): (u32, u32)) -> Result<()> {
        if (width, height) == self.target.size() {
            return Ok(());
        }
        self.target
            .resize(width, height)
            .with_context(|| format!("resizing the display target to {width}x{height}"))?;
        println!("frame {}: resized to {width}x{height}", self.drawn);
        self.resized.push((width, height));
        self.check_next = true;
        Ok(())
    }

    /// Draws the next frame through the target's surface and presents it. When it is one to
    /// check (or `check`), reads the texture back and compares it with the CPU's pattern, and
    /// returns its number.
    fn draw(&mut self, gl: &glow::Context, check: bool) -> Result<Option<u32>> {
        let number = self.drawn;
        let (width, height) = self.target.size();
        let frame = self.target.frame(&self.stripes.stream)?;
        // SAFETY: opened on the kernel's stream.
        unsafe { self.stripes.present(frame, number) }?;
        self.drawn += 1;
        if !(std::mem::take(&mut self.check_next) || check) {
            return Ok(None);
        }
        // A stream-mode target shows a frame up to two presents late until it is flushed (in
        // the other modes the present is complete and this does nothing).
        self.target.flush()?;
        let pixels = glow_kit::read_texture(gl, self.texture()?, width, height)?;
        self.compare("the target's texture", &pixels, number)?;
        self.checked.push((width, height));
        Ok(Some(number))
    }

    /// Compares `pixels` (the target's size, row 0 first) with what the kernel draws in frame
    /// `number`: a [`Mismatch`] that says where, at the first difference.
    fn compare(&mut self, what: &str, pixels: &[u8], number: u32) -> Result<()> {
        let (width, height) = self.target.size();
        let (wrong, first) = common::stripes_mismatches(pixels, width, number);
        if let Some(((x, y), got)) = first {
            let want = common::stripes_texel(x, y, number);
            return Err(anyhow!(Mismatch(format!(
                "frame {number} at {width}x{height} ({} mode): {wrong} of {} pixels of {what} \
                 differ from the CPU's pattern; the first at ({x}, {y}) is {got:?}, expected \
                 {want:?}",
                self.target.mode(),
                width * height
            ))));
        }
        self.pixels_compared += u64::from(width) * u64::from(height);
        Ok(())
    }

    /// Draws the target's texture over all of `framebuffer` (the window's, `None`), which is
    /// the target's size.
    fn show(&self, gl: &glow::Context, framebuffer: Option<glow::NativeFramebuffer>) -> Result<()> {
        self.triangle
            .draw(gl, framebuffer, self.texture()?, self.target.size())
    }

    /// The target's texture, as glow names it.
    fn texture(&self) -> Result<glow::NativeTexture> {
        NonZeroU32::new(self.target.texture().0)
            .map(glow::NativeTexture)
            .context("the display target has no texture")
    }

    /// Deletes what the run made and says what it did: the example's `ok` line, `how` being
    /// where the frames were shown.
    fn finish(self, gl: &glow::Context, how: &str) -> Result<String> {
        let mode = self.target.mode();
        let ctx = self.target.context().clone();
        self.triangle.delete(gl);
        drop(self.target);
        ctx.check_drop_errors()?;
        let sizes = |list: &[(u32, u32)]| {
            let list: Vec<String> = list.iter().map(|(w, h)| format!("{w}x{h}")).collect();
            list.join(", ")
        };
        Ok(format!(
            "{} frames drawn by CUDA through a display target's surface ({mode} mode) and shown \
             {how}; resized {} times ({}); {} frames read back and equal to the CPU's pattern in \
             every pixel ({} pixels compared in all; sizes {})",
            self.drawn,
            self.resized.len(),
            sizes(&self.resized),
            self.checked.len(),
            self.pixels_compared,
            sizes(&self.checked)
        ))
    }
}

/// The frames without a window: an EGL context on CUDA device 0, an offscreen framebuffer of the
/// target's size in place of the window, resized at the same frames.
fn headless(args: &Args) -> Result<String> {
    let (device, egl) = common::headless_on_device_0()?;
    // SAFETY: the loader resolves names in the EGL context, current on this thread, which
    // outlives `gl` (dropped before `egl`, at the end of this function).
    let gl = unsafe { glow::Context::from_loader_function(|name| egl.get_proc_address(name)) };
    let ctx = Context::new(&device)?;
    let mut frames = Frames::new(&ctx, &gl, START)?;
    let mut screen = Offscreen::new(START.0, START.1)?;
    while frames.drawn < args.frames {
        if let Some(size) = common::size_due(frames.drawn, args.frames, &SIZES) {
            frames.resize(size)?;
            screen = Offscreen::new(size.0, size.1)?;
        }
        let last = frames.drawn + 1 == args.frames;
        let checked = frames.draw(&gl, last)?;
        let framebuffer = NonZeroU32::new(screen.framebuffer()).map(glow::NativeFramebuffer);
        frames.show(&gl, framebuffer)?;
        if let Some(number) = checked {
            let shown = screen.read_rgba8()?;
            frames.compare("the offscreen window", &shown, number)?;
        }
    }
    let size = (screen.width(), screen.height());
    screenshot(args.screenshot.as_deref(), size, &screen.read_rgba8()?)?;
    drop(screen);
    frames.finish(&gl, "in an offscreen framebuffer (headless EGL)")
}

/// The frames in a winit window with a glutin GL context, driven by `winit_app`.
mod window {
    use super::{Args, Frames, SIZES, START, Unavailable, glow_kit, screenshot, winit_app};
    use crate::common;
    use anyhow::{Result, anyhow};
    use cuda_gl::{Context, Device};
    use glutin::config::{ConfigTemplateBuilder, GlConfig};
    use glutin::context::{
        ContextApi, ContextAttributesBuilder, GlProfile, NotCurrentGlContext,
        PossiblyCurrentContext, Version,
    };
    use glutin::display::{Display, DisplayApiPreference, GlDisplay};
    use glutin::surface::{GlSurface, Surface, SurfaceAttributesBuilder, WindowSurface};
    use std::num::NonZeroU32;
    use winit::event_loop::ActiveEventLoop;
    use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};
    use winit::window::Window;
    use winit_app::Redraw;

    pub fn run(args: &Args) -> Result<String> {
        winit_app::run(|event_loop| Shown::open(event_loop, args))
    }

    /// The window, its GL context and surface, and the frames shown in it. Fields drop in
    /// order: the frames (GL objects, while the context is still current), the context, the
    /// surface, the window.
    struct Shown<'a> {
        frames: Frames,
        gl: glow::Context,
        context: PossiblyCurrentContext,
        surface: Surface<WindowSurface>,
        window: Window,
        args: &'a Args,
    }

    impl<'a> Shown<'a> {
        /// Opens the window with a GL 3.3 core context, makes it current, finds CUDA (on the
        /// GPU of the window's GL when it has one), and makes the display target.
        fn open(event_loop: &ActiveEventLoop, args: &'a Args) -> Result<Shown<'a>> {
            let unavailable = |what: String| anyhow!(Unavailable(what));
            let handle = event_loop.display_handle()?.as_raw();
            // GLX first on X11 (NVIDIA's, through libglvnd), EGL otherwise (Wayland).
            let preference = DisplayApiPreference::GlxThenEgl(Box::new(
                winit::platform::x11::register_xlib_error_hook,
            ));
            // SAFETY: the handle is the event loop's display, which outlives everything made
            // with it (all of it is dropped when the run ends, inside the event loop); the
            // hook registrar is winit's own, for that display.
            let display = unsafe { Display::new(handle, preference) }
                .map_err(|e| unavailable(format!("no OpenGL for a window: glutin: {e}")))?;
            let template = ConfigTemplateBuilder::new().build();
            // SAFETY: the template names no window.
            let config = unsafe { display.find_configs(template) }?
                .min_by_key(|config| (config.num_samples(), !config.hardware_accelerated()))
                .ok_or_else(|| unavailable("no OpenGL configuration for a window".into()))?;
            // The window with the configuration's visual (what glutin-winit adds to winit).
            let window =
                glutin_winit::finalize_window(event_loop, winit_app::attributes(START), &config)?;
            let raw_window = window.window_handle()?.as_raw();
            let context_attributes = ContextAttributesBuilder::new()
                .with_profile(GlProfile::Core)
                .with_context_api(ContextApi::OpenGl(Some(Version::new(3, 3))))
                .build(Some(raw_window));
            // SAFETY: the handle is `window`'s, which outlives the context (`Shown`'s fields).
            let context = unsafe { display.create_context(&config, &context_attributes) }
                .map_err(|e| unavailable(format!("no OpenGL 3.3 core context: glutin: {e}")))?;
            let (width, height) = winit_app::area(&window)?;
            let surface_attributes =
                SurfaceAttributesBuilder::<WindowSurface>::new().build(raw_window, width, height);
            // SAFETY: the handle is `window`'s, which outlives the surface (`Shown`'s fields).
            let surface = unsafe { display.create_window_surface(&config, &surface_attributes) }?;
            let context = context.make_current(&surface)?;
            // SAFETY: the loader resolves names in the display's context, current on this
            // thread for the whole run, which outlives `gl` (`Shown`'s fields).
            let gl = unsafe {
                glow::Context::from_loader_function_cstr(|name| display.get_proc_address(name))
            };
            // CUDA on the GPU that runs the window's GL; on a machine where that GPU is not a
            // CUDA one (a laptop's integrated GPU), CUDA device 0, and the target goes staged.
            let ctx = match Context::for_current_gl() {
                Ok(ctx) => ctx,
                Err(e) => {
                    let first = e.to_string();
                    let first = first.lines().next().unwrap_or_default();
                    println!("the window's GL is not on a CUDA device ({first}): CUDA device 0");
                    let device = Device::get(0)
                        .map_err(|e| unavailable(format!("no CUDA device 0: {e}")))?;
                    Context::new(&device)?
                }
            };
            let frames = Frames::new(&ctx, &gl, (width.get(), height.get()))?;
            Ok(Shown {
                frames,
                gl,
                context,
                surface,
                window,
                args,
            })
        }
    }

    impl winit_app::Shown for Shown<'_> {
        fn window(&self) -> &Window {
            &self.window
        }

        /// The GL surface and the target take the window's new size.
        fn resized(&mut self, width: NonZeroU32, height: NonZeroU32) -> Result<()> {
            self.surface.resize(&self.context, width, height);
            self.frames.resize((width.get(), height.get()))
        }

        /// Draws, shows and (when due) checks the next frame; the last one once `--frames`
        /// are drawn and the window has the size last asked for.
        fn redraw(&mut self, settled: bool) -> Result<Redraw> {
            let last = self.frames.drawn + 1 >= self.args.frames && settled;
            self.frames.draw(&self.gl, last)?;
            self.frames.show(&self.gl, None)?;
            if last {
                let (width, height) = self.frames.target.size();
                // The window's framebuffer has the target's size (the last Resized event
                // gave both that size).
                let pixels = glow_kit::read_framebuffer(&self.gl, None, width, height)?;
                screenshot(self.args.screenshot.as_deref(), (width, height), &pixels)?;
            }
            self.surface.swap_buffers(&self.context)?;
            Ok(if last { Redraw::Last } else { Redraw::Drawn })
        }

        fn size_due(&self) -> Option<(u32, u32)> {
            common::size_due(self.frames.drawn, self.args.frames, &SIZES)
        }

        fn finish(self) -> Result<String> {
            let Shown { frames, gl, .. } = self;
            frames.finish(&gl, "in a winit + glutin window")
        }
    }
}
