//! 12: a display target on wgpu (`cuda_gl::wgpu_interop::WgpuTarget`, feature `wgpu`): CUDA
//! writes a `wgpu::Texture` every frame and a wgpu render pass samples it, in a winit window
//! (`--window`) or headless into an offscreen texture; resized by the program to odd sizes. On
//! wgpu's Vulkan backend, or with `--gl` (feature `wgpu-gl`, headless) on its GL backend.
//!
//! CUDA device 0, a wgpu instance with the Vulkan backend only, `wgpu_interop::find_adapter`,
//! which finds the Vulkan adapter whose device UUID is the CUDA device's, and
//! `wgpu_interop::open_device`, which opens the wgpu device on it with the external memory and
//! semaphore extensions (wgpu's Vulkan route). With `--gl`, the GL route instead: a headless GL
//! context on CUDA device 0 (`egl::HeadlessContext::for_cuda_device`, current on this thread
//! from then on), `wgpu_interop::open_gl_adapter`, which opens wgpu's GL backend over that
//! context once it is found on the CUDA GPU (`unsafe`: the context must be current whenever
//! wgpu is used, so it is declared first and dropped after every wgpu object), and
//! `open_gl_device` with the adapter's own limits (`Wgpu::open_gl` in `common/wgpu_device.rs`);
//! the frames, the render pass and the check are the same.
//! In a window, wgpu makes the window's Vulkan surface first; where that adapter cannot present
//! to it
//! (`Adapter::is_surface_supported`: NVIDIA's Vulkan driver and an X server that is not NVIDIA's,
//! such as Xvfb), the device is opened on the first adapter that can (under Xvfb, Mesa's
//! lavapipe), and the lines printed and the `ok` line say which and why (`common/wgpu_device.rs`,
//! shared with example 14). `WgpuTarget::new(.., None)` ("auto") picks interop (the Vulkan image
//! CUDA writes in place, handed over by a timeline semaphore on the GPU; a device from
//! `open_device`) or staged (any other device); its one-line report is printed first. Every frame the
//! examples' `stripes_rgba8` kernel draws the target through `frame.surface()` with the frame's
//! number, the frame is presented, and one full-screen triangle whose WGSL fragment shader
//! samples `target.texture()` with a nearest sampler is drawn into the window's surface texture
//! (headless: an RGBA8 texture of the target's size). The target starts at 640x480 and is
//! resized to 333x217, 1001x555 and 77x1201, 12 frames at each size (48 frames): in a window
//! the program asks the window for each size (`request_inner_size`), and on each
//! `WindowEvent::Resized` the surface is configured and the target resized to the window's new
//! size (a window manager may give another size: it is said, and that size is used).
//!
//! The check, every frame: the target's texture read back (`WgpuTarget::read_pixels`) equals the
//! CPU's pattern (`common::stripes_texel`) in every pixel; and so does what the render pass drew,
//! copied into a buffer (`copy_texture_to_buffer`) and mapped (waiting at most 10 s): headless
//! the offscreen texture; in a window the surface texture when the surface allows `COPY_SRC` in
//! an 8-bit UNORM format (BGRA is swapped to RGBA), otherwise the same pass drawn into an
//! offscreen texture as well. The render target has the texture's size and the sampler is
//! nearest, so pixel (x, y) samples texel (x, y). Rows: row 0 of every read-back is the top row
//! of the render target, where the triangle puts uv (0, 0), that is row 0 of the texture, the
//! row the kernel writes as `y = 0`: nothing is flipped. The first frame that differs ends the
//! run with `MISMATCH: ...` (how many pixels, the first one) and exit 1. wgpu's uncaptured errors
//! (its default handler panics) are recorded and end the run as errors.
//!
//! Cannot run here (exit 2): no CUDA device 0; no Vulkan adapter that is the CUDA GPU, or one
//! without external memory and semaphores (cuda-gl's typed error, with what to install; headless
//! only: a window runs on another adapter); with `--window`, no display, or no adapter that can
//! present to the window; with `--gl`, no NVIDIA EGL on CUDA device 0, a build without the
//! feature `wgpu-gl`, or `--window` beside it.
//!
//! Run: `cargo run --release -p cuda-gl --example 12_wgpu_window --features egl,wgpu` (`egl` for
//! the examples' shared command line; the Vulkan route uses no GL), or `--features
//! wgpu-gl -- --gl` for the GL route (`wgpu-gl` turns on `wgpu` and `egl`). Flags: `--gl`,
//! `--window`, `--window-secs N` (with `--window`: keep drawing and checking frames until N
//! seconds have passed), `--screenshot PATH` (the last frame as the render pass drew it, PNG). On a GPU host
//! with no Vulkan driver registered with the loader, point it at NVIDIA's ICD file:
//! `VK_DRIVER_FILES=/usr/share/vulkan/icd.d/nvidia_icd.json .gpu/bin/12_wgpu_window`. Under Xvfb
//! see example 09 (`XKB_CONFIG_ROOT`); where NVIDIA's Vulkan driver cannot present to Xvfb,
//! the loader needs a driver that can beside it (`ci/gpu/suite.sh --window-examples` adds lavapipe's),
//! or the run says it cannot run here.

#[path = "common/mod.rs"]
mod common;
#[path = "common/wgpu_device.rs"]
mod wgpu_device;
#[path = "common/wgpu_kit.rs"]
mod wgpu_kit;
#[path = "common/wgpu_texture.rs"]
mod wgpu_texture;
#[path = "common/winit_app.rs"]
mod winit_app;

use anyhow::{Context as _, Result, anyhow, bail};
use common::{Mismatch, Stripes, Unavailable};
use cuda_gl::Context;
use cuda_gl::display::{Format, Layout};
use cuda_gl::wgpu_interop::WgpuTarget;
use std::process::ExitCode;
use std::sync::Arc;
use wgpu_device::{Wgpu, cuda, instance};
use wgpu_kit::{Blit, Offscreen, ReadBack, screenshot};

/// The target's first size.
const START: (u32, u32) = (640, 480);
/// The sizes it is resized to, in order: odd widths and heights, wide and tall.
const SIZES: [(u32, u32); 3] = [(333, 217), (1001, 555), (77, 1201)];
/// Frames drawn at each size.
const FRAMES_PER_SIZE: u32 = 12;
/// Frames in a run (a window with `--window-secs` draws more).
const FRAMES: u32 = FRAMES_PER_SIZE * (SIZES.len() as u32 + 1);

fn main() -> ExitCode {
    common::main_with_flags(&["--gl"], |args| {
        common::outcome_of(if args.has("--gl") {
            headless_gl(args)
        } else if args.window {
            window::run(args)
        } else {
            headless(args)
        })
    })
}

/// The size to resize to once `drawn` frames are drawn: the next of [`SIZES`] every
/// [`FRAMES_PER_SIZE`] frames.
fn resize_due(drawn: u32) -> Option<(u32, u32)> {
    if drawn == 0 || !drawn.is_multiple_of(FRAMES_PER_SIZE) {
        return None;
    }
    SIZES.get((drawn / FRAMES_PER_SIZE - 1) as usize).copied()
}

/// The display target, the kernel that draws its frames, and what has been checked: the same
/// in the window and headless.
struct Frames {
    target: WgpuTarget,
    stripes: Stripes,
    /// Frames drawn so far: the next frame's number.
    drawn: u32,
    /// Pixels compared with the CPU's pattern, in every read-back.
    pixels_compared: u64,
    /// The sizes the frames were drawn at, in order.
    sizes: Vec<(u32, u32)>,
}

impl Frames {
    /// An RGBA8 target of `size` on `gpu`'s device, in the mode `auto` picks; prints its report.
    fn new(ctx: &Arc<Context>, gpu: &Wgpu, size: (u32, u32)) -> Result<Frames> {
        let layout = Layout::packed(size, Format::Rgba8)?;
        let (target, report) = WgpuTarget::new(ctx, &gpu.device, &gpu.queue, layout, None)?;
        println!("{report}");
        Ok(Frames {
            target,
            stripes: Stripes::new(ctx)?,
            drawn: 0,
            pixels_compared: 0,
            sizes: vec![size],
        })
    }

    /// Gives the target a new size (nothing when it has it already). Its texture changes.
    fn resize(&mut self, (width, height): (u32, u32)) -> Result<()> {
        if (width, height) == self.target.size() {
            return Ok(());
        }
        self.target
            .resize(width, height)
            .with_context(|| format!("resizing the target to {width}x{height}"))?;
        println!("frame {}: target resized to {width}x{height}", self.drawn);
        self.sizes.push((width, height));
        Ok(())
    }

    /// Draws the next frame through the target's surface, presents it, reads the texture back
    /// and compares it with the CPU's pattern: the frame's number. After this, the next submit
    /// on the queue sees the frame in `target.texture()`.
    fn draw(&mut self) -> Result<u32> {
        let number = self.drawn;
        let (width, height) = self.target.size();
        let frame = self.target.frame(&self.stripes.stream)?;
        // SAFETY: opened on the kernel's stream.
        unsafe { self.stripes.present(frame, number) }?;
        self.drawn += 1;
        let pixels = self.target.read_pixels()?;
        self.compare(
            "the target's texture (read_pixels)",
            &pixels,
            (width, height),
            number,
        )?;
        Ok(number)
    }

    /// Compares `pixels` (`width` x `height` RGBA8, row 0 first) with what the kernel draws in
    /// frame `number`: a [`Mismatch`] that says how many differ and where the first is.
    fn compare(
        &mut self,
        what: &str,
        pixels: &[u8],
        (width, height): (u32, u32),
        number: u32,
    ) -> Result<()> {
        let expected = width as usize * height as usize * 4;
        if pixels.len() != expected {
            return Err(anyhow!(Mismatch(format!(
                "frame {number} at {width}x{height}: {what} holds {} bytes, not {expected}",
                pixels.len()
            ))));
        }
        let (wrong, first) = common::stripes_mismatches(pixels, width, number);
        if let Some(((x, y), got)) = first {
            return Err(anyhow!(Mismatch(format!(
                "frame {number} at {width}x{height} ({} mode): {wrong} of {} pixels of {what} \
                 differ from the CPU's pattern; the first at ({x}, {y}) (row 0 = the top) is \
                 {got:?}, expected {:?}",
                self.target.mode(),
                u64::from(width) * u64::from(height),
                common::stripes_texel(x, y, number)
            ))));
        }
        self.pixels_compared += u64::from(width) * u64::from(height);
        Ok(())
    }

    /// Drops the target (checking what its drop reported) and says what the run did: the
    /// example's `ok` line (mode, `how`, frames and pixels compared first), `how` being where
    /// the frames were drawn and `rendered` what of the render pass's output was read back.
    fn finish(self, how: &str, rendered: &str) -> Result<String> {
        let mode = self.target.mode();
        let ctx = self.target.context().clone();
        drop(self.target);
        ctx.check_drop_errors()?;
        let sizes: Vec<String> = self.sizes.iter().map(|(w, h)| format!("{w}x{h}")).collect();
        Ok(format!(
            "{mode} mode, {how}, {} frames, {} pixels compared: every frame drawn by CUDA \
             through the target's surface (sizes {}); the target's texture (read_pixels) and \
             {rendered}, read back, equal to the CPU's pattern in every pixel of every frame",
            self.drawn,
            self.pixels_compared,
            sizes.join(", ")
        ))
    }

    /// Draws the target's texture (frame `number`, just presented) into `offscreen`, which has
    /// the target's size, with `blit` (for RGBA8), reads it back and compares it with the CPU's
    /// pattern: the pixels, row 0 (the top) first.
    fn check_offscreen(
        &mut self,
        gpu: &Wgpu,
        blit: &Blit,
        offscreen: &Offscreen,
        number: u32,
    ) -> Result<Vec<u8>> {
        let pixels = offscreen.draw(&gpu.device, &gpu.queue, blit, self.target.texture())?;
        gpu.check_errors("drawing into the offscreen texture")?;
        self.compare(
            "the offscreen texture the render pass drew",
            &pixels,
            offscreen.size(),
            number,
        )?;
        Ok(pixels)
    }
}

/// The frames without a window, on wgpu's Vulkan backend ([`draw_offscreen`]).
fn headless(args: &common::Args) -> Result<String> {
    let ctx = cuda()?;
    let gpu = Wgpu::open(&instance(), &ctx)?;
    draw_offscreen(args, &ctx, &gpu, "headless")
}

/// `--gl`: the frames without a window ([`draw_offscreen`]) on wgpu's GL backend over a headless GL
/// context on the CUDA GPU (the GL route).
#[cfg(feature = "wgpu-gl")]
fn headless_gl(args: &common::Args) -> Result<String> {
    if args.window {
        bail!(Unavailable("--gl runs headless only (no --window)".into()));
    }
    // Current on this thread from here on, and declared before the wgpu device and everything
    // made from it, so dropped after them (on an early return by `?` too).
    let (device, gl) = common::headless_on_device_0()?;
    let ctx = Context::new(&device)?;
    // SAFETY: (1) `gl` stays current on this thread, the only one that uses wgpu: nothing here
    // makes another context current, and the device, its queue and everything made from them
    // (the target, the render pass, the offscreen textures, all dropped inside `draw_offscreen`)
    // drop before `gl`, declared first. (2) This program makes no GL calls of its own.
    let gpu = unsafe { Wgpu::open_gl(&ctx) }?;
    let how = format!(
        "headless on wgpu's GL backend over a headless EGL context ({})",
        gl.renderer()
    );
    draw_offscreen(args, &ctx, &gpu, &how)
}

/// `--gl` in a build without the GL route.
#[cfg(not(feature = "wgpu-gl"))]
fn headless_gl(_: &common::Args) -> Result<String> {
    bail!(Unavailable(
        "--gl runs wgpu's GL route, which this build lacks; help: build with --features \
         wgpu-gl"
            .into()
    ))
}

/// The frames on `gpu`'s device without a window (`how`, for the `ok` line): the render pass
/// draws into an offscreen RGBA8 texture of the target's size, made anew at each size.
fn draw_offscreen(
    args: &common::Args,
    ctx: &Arc<Context>,
    gpu: &Wgpu,
    how: &str,
) -> Result<String> {
    let mut frames = Frames::new(ctx, gpu, START)?;
    let blit = Blit::new(&gpu.device, wgpu::TextureFormat::Rgba8Unorm);
    let mut offscreen = Offscreen::new(&gpu.device, START);
    gpu.check_errors("creating the render pipeline")?;
    let mut last = Vec::new();
    while frames.drawn < FRAMES {
        if let Some(size) = resize_due(frames.drawn) {
            frames.resize(size)?;
            offscreen = Offscreen::new(&gpu.device, size);
        }
        let number = frames.draw()?;
        last = frames.check_offscreen(gpu, &blit, &offscreen, number)?;
    }
    screenshot(args.screenshot.as_deref(), offscreen.size(), &last)?;
    frames.finish(how, "the offscreen RGBA8 texture the render pass drew")
}

/// The frames in a winit window, drawn into its wgpu surface, driven by `winit_app`.
mod window {
    use super::{
        Blit, FRAMES, Frames, Offscreen, ReadBack, Wgpu, cuda, instance, resize_due, screenshot,
        winit_app,
    };
    use crate::common::{Args, Unavailable};
    use anyhow::{Result, anyhow, bail};
    use std::num::NonZeroU32;
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    use winit::event_loop::ActiveEventLoop;
    use winit::window::Window;
    use winit_app::Redraw;

    /// Redraws in a row without a surface texture (timeouts, an occluded or outdated surface)
    /// before the run gives up.
    const MAX_SKIPPED: u32 = 50;

    pub fn run(args: &Args) -> Result<String> {
        let until = match args.window_secs {
            None => None,
            Some(secs) => Some(
                Duration::try_from_secs_f64(secs)
                    .map_err(|e| anyhow!("--window-secs {secs}: {e}"))?,
            ),
        };
        winit_app::run(|event_loop| Shown::open(event_loop, args, until))
    }

    /// The window, its surface and the frames drawn into it. Fields drop in order: the frames
    /// (the target and its CUDA objects), the wgpu objects, the surface, the window.
    struct Shown<'a> {
        frames: Frames,
        /// The pass into the surface (its format).
        blit: Blit,
        /// With `offscreen`: the pass into it (RGBA8).
        offscreen_blit: Blit,
        /// When the surface cannot be read back exactly: the render target that is checked.
        offscreen: Option<Offscreen>,
        gpu: Wgpu,
        surface: wgpu::Surface<'static>,
        config: wgpu::SurfaceConfiguration,
        window: Arc<Window>,
        args: &'a Args,
        /// When the run may end (`--window-secs`; `None`: after [`FRAMES`] frames).
        until: Option<Instant>,
        /// Redraws in a row without a surface texture.
        skipped: u32,
        /// The last frame as read back from the render pass's output, and its size.
        last: Option<((u32, u32), Vec<u8>)>,
    }

    impl<'a> Shown<'a> {
        /// Opens the window, its Vulkan surface, CUDA and the wgpu device: on the CUDA GPU when
        /// its adapter can present to the surface, on one that can otherwise
        /// (`Wgpu::for_surface`); configures the surface and makes the target at the window's
        /// size.
        fn open(
            event_loop: &ActiveEventLoop,
            args: &'a Args,
            until: Option<Duration>,
        ) -> Result<Shown<'a>> {
            let unavailable = |what: String| anyhow!(Unavailable(what));
            let window = Arc::new(
                event_loop
                    .create_window(winit_app::attributes(super::START))
                    .map_err(|e| unavailable(format!("no window: winit: {e}")))?,
            );
            let ctx = cuda()?;
            let instance = instance();
            // Before the device: the adapter chosen must be able to present to it.
            let surface = instance
                .create_surface(window.clone())
                .map_err(|e| unavailable(format!("no Vulkan surface for the window: {e}")))?;
            let (width, height) = winit_app::area(&window)?;
            let size = (width.get(), height.get());
            let gpu = Wgpu::for_surface(&instance, &ctx, &surface, size)?;
            let name = gpu.adapter.get_info().name;
            let mut config = surface
                .get_default_config(&gpu.adapter, size.0, size.1)
                .ok_or_else(|| unavailable(format!("{name} offers no format for the surface")))?;
            let caps = surface.get_capabilities(&gpu.adapter);
            // An 8-bit UNORM format, where the pass writes the sampled bytes unchanged (an
            // sRGB one would encode them); else the surface's first one.
            let exact = [
                wgpu::TextureFormat::Bgra8Unorm,
                wgpu::TextureFormat::Rgba8Unorm,
            ];
            if let Some(&format) = caps.formats.iter().find(|f| exact.contains(f)) {
                config.format = format;
            }
            let readable = exact.contains(&config.format)
                && caps.usages.contains(wgpu::TextureUsages::COPY_SRC);
            if readable {
                config.usage |= wgpu::TextureUsages::COPY_SRC;
            }
            // No wait for the display's refresh: a virtual X server's may be slow.
            config.present_mode = wgpu::PresentMode::AutoNoVsync;
            surface.configure(&gpu.device, &config);
            println!(
                "surface: {:?}, {}x{}; {}",
                config.format,
                config.width,
                config.height,
                if readable {
                    "read back after each pass (COPY_SRC)"
                } else {
                    "not readable exactly (no COPY_SRC, or not 8-bit UNORM): the pass is \
                     checked in an offscreen texture"
                }
            );
            let frames = Frames::new(&ctx, &gpu, size)?;
            let blit = Blit::new(&gpu.device, config.format);
            let offscreen_blit = Blit::new(&gpu.device, wgpu::TextureFormat::Rgba8Unorm);
            let offscreen = (!readable).then(|| Offscreen::new(&gpu.device, size));
            gpu.check_errors("configuring the surface and creating the render pipelines")?;
            Ok(Shown {
                frames,
                blit,
                offscreen_blit,
                offscreen,
                gpu,
                surface,
                config,
                window,
                args,
                until: until.map(|d| Instant::now() + d),
                skipped: 0,
                last: None,
            })
        }

        /// A redraw without a frame (`why`): tried again, up to [`MAX_SKIPPED`] in a row.
        fn skip(&mut self, why: &str) -> Result<Redraw> {
            self.skipped += 1;
            if self.skipped > MAX_SKIPPED {
                bail!("no surface texture in {MAX_SKIPPED} redraws in a row (the last: {why})");
            }
            Ok(Redraw::Skipped)
        }
    }

    impl winit_app::Shown for Shown<'_> {
        fn window(&self) -> &Window {
            &self.window
        }

        /// The surface, the target and the offscreen texture take the window's new size.
        fn resized(&mut self, width: NonZeroU32, height: NonZeroU32) -> Result<()> {
            let now = (width.get(), height.get());
            if now != (self.config.width, self.config.height) {
                self.config.width = now.0;
                self.config.height = now.1;
                self.surface.configure(&self.gpu.device, &self.config);
            }
            self.frames.resize(now)?;
            if let Some(offscreen) = &mut self.offscreen
                && offscreen.size() != now
            {
                *offscreen = Offscreen::new(&self.gpu.device, now);
            }
            Ok(())
        }

        /// Draws, presents and checks the next frame; the last one once [`FRAMES`] are drawn,
        /// the window has the size last asked for and `--window-secs` (if any) have passed.
        fn redraw(&mut self, settled: bool) -> Result<Redraw> {
            let surface_texture = match self.surface.get_current_texture() {
                wgpu::CurrentSurfaceTexture::Success(texture)
                | wgpu::CurrentSurfaceTexture::Suboptimal(texture) => texture,
                wgpu::CurrentSurfaceTexture::Timeout => return self.skip("timeout"),
                wgpu::CurrentSurfaceTexture::Occluded => return self.skip("occluded"),
                wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                    self.surface.configure(&self.gpu.device, &self.config);
                    return self.skip("outdated or lost, configured again");
                }
                wgpu::CurrentSurfaceTexture::Validation => {
                    self.gpu.check_errors("acquiring the surface texture")?;
                    bail!("wgpu refused to give the surface's next texture");
                }
            };
            self.skipped = 0;
            let size = self.frames.target.size();
            let texture = &surface_texture.texture;
            if (texture.width(), texture.height()) != size {
                bail!(
                    "the surface texture is {}x{}, the target {}x{}",
                    texture.width(),
                    texture.height(),
                    size.0,
                    size.1
                );
            }
            let number = self.frames.draw()?;
            let device = &self.gpu.device;
            let mut encoder = device.create_command_encoder(&Default::default());
            self.blit
                .encode(device, &mut encoder, self.frames.target.texture(), texture);
            let read = match self.offscreen {
                None => Some(ReadBack::copy(device, &mut encoder, texture)?),
                Some(_) => None,
            };
            let submitted = self.gpu.queue.submit([encoder.finish()]);
            self.window.pre_present_notify();
            self.gpu.queue.present(surface_texture);
            if let Some(read) = read {
                let pixels = read.pixels(device, submitted)?;
                self.gpu.check_errors("drawing into the surface")?;
                self.frames
                    .compare("the window's surface texture", &pixels, size, number)?;
                self.last = Some((size, pixels));
            }
            if let Some(offscreen) = &self.offscreen {
                let pixels = self.frames.check_offscreen(
                    &self.gpu,
                    &self.offscreen_blit,
                    offscreen,
                    number,
                )?;
                self.last = Some((size, pixels));
            }
            self.gpu.check_errors("drawing a frame")?;
            let done = self.frames.drawn >= FRAMES
                && settled
                && self.until.is_none_or(|t| Instant::now() >= t);
            if !done {
                return Ok(Redraw::Drawn);
            }
            if let Some((size, pixels)) = &self.last {
                screenshot(self.args.screenshot.as_deref(), *size, pixels)?;
            }
            Ok(Redraw::Last)
        }

        fn size_due(&self) -> Option<(u32, u32)> {
            resize_due(self.frames.drawn)
        }

        fn finish(self) -> Result<String> {
            let rendered = if self.offscreen.is_some() {
                "the render pass's output drawn into an offscreen RGBA8 texture as well (the \
                 surface cannot be read back exactly)"
            } else {
                "the window's surface texture the render pass drew"
            };
            let how = format!(
                "in a winit window (wgpu surface, {})",
                self.gpu.where_shown()
            );
            self.frames.finish(&how, rendered)
        }
    }
}
