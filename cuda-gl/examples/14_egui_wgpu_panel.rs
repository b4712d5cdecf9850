//! 14: a CUDA image in an egui app on wgpu: an eframe window on eframe's wgpu renderer, with a
//! side panel whose slider sets the kernel's parameter and the image in the central panel; or
//! the same frames headless, painted by egui-wgpu's renderer into an offscreen texture. Example
//! 11 is the same app on eframe's glow renderer.
//!
//! The image is a `WgpuTarget` (feature `wgpu`) shown through
//! `cuda_gl::egui_interop::EguiWgpuImage` (feature `egui-wgpu`), which registers the target's
//! texture with egui-wgpu's renderer as it is (no copy: egui-wgpu never destroys a texture it did
//! not make). Every frame the examples' `stripes_rgba8` kernel draws the target through
//! `frame.surface()` with the slider's value as its `frame` parameter, the frame is presented,
//! and `EguiWgpuImage::update` keeps the registration on the target's texture. The program
//! resizes the image to odd sizes (1001x333, 77x1201, 513x257) while it runs; the image keeps
//! its egui `TextureId`.
//!
//! The device. egui-wgpu's renderer must be of the target's device, and the target writes in
//! place (interop mode) only on a device opened by `wgpu_interop::open_device` on the adapter
//! `wgpu_interop::find_adapter` finds: on the CUDA GPU, with the external memory and semaphore
//! extensions. So the program opens it and gives it to
//! eframe (`WgpuSetup::Existing`). eframe makes the window's surface after that, and the adapter
//! may be unable to present to it (NVIDIA's Vulkan driver may not present to an X server that is
//! not NVIDIA's, such as Xvfb): eframe then finds no surface format for it and stops, or wgpu
//! refuses the surface's configuration. The program then starts eframe again (eframe keeps its
//! event loop for that) with an adapter selector (`WgpuSetup::CreateNew`) that takes the first
//! adapter that can present there (under Xvfb, Mesa's lavapipe); the target then runs in staged
//! mode on eframe's device, copying each frame through host memory. The lines printed and the
//! `ok` line name the adapter, the mode and why.
//!
//! The check: every frame the target's texture, the one egui samples, is read back
//! (`WgpuTarget::read_pixels`) and compared pixel by pixel with the CPU's pattern for the
//! slider's value; headless, the screen egui-wgpu painted is read back as well and the image's
//! rectangle in it compared the same way (the image is painted at one pixel per point, its
//! corners on whole pixels, sampled `Nearest`, so each pixel shows one texel). The first
//! difference ends the run with `MISMATCH: ...` (exit 1).
//!
//! Headless (the default, as for the other examples): the device on the CUDA GPU, an
//! `egui::Context` run by the program and an `egui_wgpu::Renderer` painting into an RGBA8
//! texture. `--window`: an eframe window (exit 2 when none can open); `--window-secs N` ends it
//! after N seconds instead of after the frames. Cannot run here (exit 2): no CUDA device 0;
//! headless, no Vulkan adapter on the CUDA GPU (cuda-gl's typed error, with what to install); in
//! a window, no display or no adapter that can present to it.
//!
//! Run: `cargo run --release -p cuda-gl --example 14_egui_wgpu_panel --features egl,egui-wgpu`
//! (`-- --screenshot 14.png` keeps the last screen painted headless, the last image read back in
//! a window). On a GPU host with no Vulkan driver registered with the loader:
//! `VK_DRIVER_FILES=/usr/share/vulkan/icd.d/nvidia_icd.json`. Under Xvfb see example 09
//! (`XKB_CONFIG_ROOT`); where NVIDIA's Vulkan cannot present to Xvfb, the loader needs a driver
//! that can beside it (`ci/gpu/suite.sh --window-examples` adds lavapipe's).

#[path = "common/mod.rs"]
mod common;
#[path = "common/eframe_app.rs"]
mod eframe_app;
#[path = "common/egui_panel.rs"]
mod egui_panel;
#[path = "common/egui_wgpu_paint.rs"]
mod egui_wgpu_paint;
#[path = "common/wgpu_device.rs"]
mod wgpu_device;
#[path = "common/wgpu_kit.rs"]
mod wgpu_kit;
#[path = "common/wgpu_texture.rs"]
mod wgpu_texture;

use anyhow::{Result, anyhow, bail};
use common::Stripes;
use cuda_gl::Context;
use cuda_gl::display::{Format, Layout};
use cuda_gl::egui_interop::EguiWgpuImage;
use cuda_gl::wgpu_interop::WgpuTarget;
use egui::load::SizedTexture;
use egui_panel::{Controls, FRAMES, SCREEN, START};
use std::process::ExitCode;
use std::sync::Arc;
use wgpu_device::{Wgpu, cuda, instance};
use wgpu_kit::{Offscreen, ReadBack, screenshot};

fn main() -> ExitCode {
    common::main_window_or_headless(window::run, headless)
}

/// The image, the kernel that draws it and the side panel's state: the same in the window and
/// headless.
struct Panel {
    image: EguiWgpuImage,
    stripes: Stripes,
    controls: Controls,
    /// The last texture read back, for `--screenshot` in a window.
    last: Vec<u8>,
}

impl Panel {
    /// A panel whose target is made on `gpu`'s device, in the mode `auto` picks (its report is
    /// printed).
    fn new(ctx: &Arc<Context>, gpu: &Wgpu) -> Result<Panel> {
        let layout = Layout::packed(START, Format::Rgba8)?;
        let (target, report) = WgpuTarget::new(ctx, &gpu.device, &gpu.queue, layout, None)?;
        println!("{report}");
        let mut image = EguiWgpuImage::new(target);
        // Pixels as blocks when egui magnifies the image; at one pixel per point, one texel each.
        image.set_filter(wgpu::FilterMode::Nearest);
        Ok(Panel {
            image,
            stripes: Stripes::new(ctx)?,
            controls: Controls::new(),
            last: Vec::new(),
        })
    }

    /// Draws the next frame (resized first when one of the sizes is due), reads the target's
    /// texture back and compares it with the CPU's pattern, and registers the image with
    /// `renderer` (or points its registration at the new texture): the image to paint.
    fn frame(&mut self, renderer: &mut egui_wgpu::Renderer) -> Result<SizedTexture> {
        if let Some((w, h)) = self.controls.size_due() {
            self.image.target_mut().resize(w, h)?;
            println!("frame {}: image resized to {w}x{h}", self.controls.drawn);
        }
        let size = self.image.target().size();
        let target = self.image.target_mut();
        let frame = target.frame(&self.stripes.stream)?;
        // SAFETY: opened on the kernel's stream.
        unsafe { self.stripes.present(frame, self.controls.phase) }?;
        let pixels = target.read_pixels()?;
        let what = "the target's texture (read_pixels)";
        self.controls.check(what, &pixels, size.0, (0, 0), size)?;
        self.last = pixels;
        Ok(self.image.update(renderer)?)
    }

    /// The app's UI (see `Controls::ui`): where the image was painted, in points.
    fn ui(&mut self, ui: &mut egui::Ui, image: SizedTexture) -> egui::Rect {
        let target = self.image.target();
        let status = format!(
            "{}x{}, {} mode",
            target.size().0,
            target.size().1,
            target.mode()
        );
        self.controls.ui(ui, &status, image)
    }

    /// Writes `--screenshot` (`shot`, the screen as painted, where there is one: else the last
    /// texture read back) and says what the run did (`how`: where it was shown; `checked`: what
    /// was read back); the target goes here.
    fn finish(
        self,
        args: &common::Args,
        how: &str,
        checked: &str,
        shot: Option<((u32, u32), Vec<u8>)>,
    ) -> Result<String> {
        let mode = self.image.target().mode();
        // Both read back top row first (wgpu's row 0), as the PNG writer wants them.
        let (size, pixels) = shot.unwrap_or((self.image.target().size(), self.last));
        screenshot(args.screenshot.as_deref(), size, &pixels)?;
        let ctx = self.image.target().context().clone();
        drop(self.image);
        ctx.check_drop_errors()?;
        Ok(self
            .controls
            .summary(&format!("({mode} mode) {how}"), checked))
    }
}

/// The frames without a window: egui run by the program, painted by egui-wgpu's renderer into an
/// offscreen texture that is read back; the image's rectangle in it is checked every frame.
fn headless(args: &common::Args) -> Result<String> {
    let ctx = cuda()?;
    let gpu = Wgpu::open(&instance(), &ctx)?;
    let mut panel = Panel::new(&ctx, &gpu)?;
    // No dithering, and the texel under each pixel for `Nearest`: the pixels egui-wgpu paints
    // from the image are the image's own.
    let mut renderer = egui_wgpu::Renderer::new(
        &gpu.device,
        wgpu::TextureFormat::Rgba8Unorm,
        egui_wgpu::RendererOptions::PREDICTABLE,
    );
    let screen = Offscreen::new(&gpu.device, SCREEN);
    let egui_ctx = egui::Context::default();
    let input = egui_panel::headless_input();
    gpu.check_errors("making egui-wgpu's renderer")?;
    let mut last = Vec::new();
    while panel.controls.drawn < FRAMES {
        let image = panel.frame(&mut renderer)?;
        let mut placed = egui::Rect::NOTHING;
        let output = egui_ctx.run_ui(input.clone(), |ui| placed = panel.ui(ui, image));
        let mut read = None;
        let submitted = egui_wgpu_paint::paint(
            &gpu.device,
            &gpu.queue,
            &mut renderer,
            &egui_ctx,
            output,
            screen.texture(),
            |encoder| read = Some(ReadBack::copy(&gpu.device, encoder, screen.texture())),
        );
        let read = read.ok_or_else(|| anyhow!("no read-back of the screen was recorded"))??;
        let pixels = read.pixels(&gpu.device, submitted)?;
        gpu.check_errors("painting egui")?;
        let size = panel.image.target().size();
        let origin = on_screen(placed, size)?;
        let what = "the image in the screen egui-wgpu painted";
        panel
            .controls
            .check(what, &pixels, SCREEN.0, origin, size)?;
        last = pixels;
        panel.controls.next();
    }
    panel.finish(
        args,
        "painted by egui-wgpu into an offscreen texture (headless)",
        "the target's texture (read_pixels) and the image in the painted screen",
        Some((SCREEN, last)),
    )
}

/// The top-left pixel of the image painted at `placed` (in points, at one pixel per point), when
/// the whole `size` image is on the screen; an error otherwise (a layout that puts it elsewhere
/// would make the comparison meaningless).
fn on_screen(placed: egui::Rect, (w, h): (u32, u32)) -> Result<(u32, u32)> {
    let (x, y) = (placed.min.x, placed.min.y);
    let whole = x >= 0.0 && y >= 0.0 && x.fract() == 0.0 && y.fract() == 0.0;
    let fits = x + w as f32 <= SCREEN.0 as f32 && y + h as f32 <= SCREEN.1 as f32;
    if !whole || !fits || placed.size() != egui::vec2(w as f32, h as f32) {
        bail!(
            "egui placed the {w}x{h} image at {placed:?}: not whole pixels of the {}x{} screen",
            SCREEN.0,
            SCREEN.1
        );
    }
    Ok((x as u32, y as u32))
}

/// The frames in an eframe window on eframe's wgpu renderer.
mod window {
    use super::{FRAMES, Panel, Wgpu, cuda, instance};
    use crate::common::{Args, Unavailable};
    use crate::eframe_app::{self, NoPresent};
    use crate::wgpu_device::{describe, presenting_adapter};
    use anyhow::{Result, anyhow};
    use cuda_gl::Context;
    use egui_wgpu::{WgpuSetup, WgpuSetupCreateNew, WgpuSetupExisting};
    use std::sync::Arc;

    /// eframe on the device on the CUDA GPU; where that GPU's adapter cannot present to the
    /// window, eframe again on an adapter that can.
    pub fn run(args: &Args) -> Result<String> {
        let ctx = cuda()?;
        let instance = instance();
        let (why, cuda_adapter) = match Wgpu::open(&instance, &ctx) {
            Ok(gpu) => {
                let (name, info) = (describe(&gpu.adapter), gpu.adapter.get_info());
                let setup = WgpuSetup::Existing(WgpuSetupExisting {
                    instance: instance.clone(),
                    adapter: gpu.adapter.clone(),
                    device: gpu.device.clone(),
                    queue: gpu.queue.clone(),
                });
                match start(args, &ctx, setup, Ok(gpu)) {
                    Err(e) => match e.downcast::<NoPresent>() {
                        Ok(no) => (
                            format!(
                                "the CUDA GPU's Vulkan adapter, {name}, cannot present to this \
                                 window ({no})"
                            ),
                            Some(info),
                        ),
                        Err(e) => return Err(e),
                    },
                    done => return done,
                }
            }
            // No Vulkan adapter on the CUDA GPU: a window on another one still shows the frames.
            Err(e) if e.is::<Unavailable>() => (format!("{e:#}"), None),
            Err(e) => return Err(e),
        };
        let mut create = WgpuSetupCreateNew::without_display_handle();
        create.instance_descriptor.backends = wgpu::Backends::VULKAN;
        create.native_adapter_selector = Some(Arc::new(move |adapters, surface| {
            let surface = surface.ok_or("eframe gave no window surface to present to")?;
            presenting_adapter(adapters, surface, cuda_adapter.as_ref())
        }));
        start(args, &ctx, WgpuSetup::CreateNew(create), Err(why.clone())).map_err(|e| {
            match e.downcast::<NoPresent>() {
                Ok(no) => anyhow!(Unavailable(format!("{why}, and {no}"))),
                Err(e) => e,
            }
        })
    }

    /// Runs eframe on `setup`. `opened`: the device given to eframe in `setup` (`Ok`), or why
    /// eframe is to choose one that can present to the window (`Err`).
    fn start(
        args: &Args,
        ctx: &Arc<Context>,
        setup: WgpuSetup,
        opened: Result<Wgpu, String>,
    ) -> Result<String> {
        let options = eframe::NativeOptions {
            renderer: eframe::Renderer::Wgpu,
            viewport: egui::ViewportBuilder::default().with_inner_size([1300.0, 1000.0]),
            wgpu_options: egui_wgpu::WgpuConfiguration {
                wgpu_setup: setup,
                // No wait for the display's refresh: a virtual X server's may be slow.
                surface: egui_wgpu::SurfaceConfig {
                    present_mode: wgpu::PresentMode::AutoNoVsync,
                    ..egui_wgpu::SurfaceConfig::LOW_LATENCY
                },
                ..Default::default()
            },
            ..Default::default()
        };
        let (args, ctx) = (args.clone(), ctx.clone());
        let title = format!("cuda-gl {}", crate::common::NAME);
        eframe_app::run(&title, options, FRAMES, args.window_secs, move |cc| {
            let state = cc
                .wgpu_render_state
                .as_ref()
                .ok_or_else(|| anyhow!("eframe runs no wgpu renderer"))?;
            let gpu = match opened {
                // wgpu reports a surface it cannot configure to the device's error handler.
                Ok(gpu) => gpu
                    .check_errors("eframe configured the window's surface")
                    .map(|()| gpu)
                    .map_err(|e| anyhow!(NoPresent(format!("{e:#}"))))?,
                Err(why) => Wgpu::watch(
                    state.adapter.clone(),
                    state.device.clone(),
                    state.queue.clone(),
                    Some(why),
                ),
            };
            Ok(Shown {
                panel: Panel::new(&ctx, &gpu)?,
                gpu,
                args,
            })
        })
    }

    /// The panel in the window, on eframe's device.
    struct Shown {
        panel: Panel,
        gpu: Wgpu,
        args: Args,
    }

    impl eframe_app::Shown for Shown {
        fn show(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) -> Result<()> {
            let state = frame
                .wgpu_render_state()
                .ok_or_else(|| anyhow!("eframe runs no wgpu renderer"))?;
            let image = self.panel.frame(&mut state.renderer.write())?;
            self.panel.ui(ui, image);
            self.gpu.check_errors("drawing a frame")?;
            self.panel.controls.next();
            Ok(())
        }

        fn drawn(&self) -> u32 {
            self.panel.controls.drawn
        }

        fn finish(self) -> Result<String> {
            let how = format!(
                "in an eframe window (wgpu renderer, {})",
                self.gpu.where_shown()
            );
            let checked = "the target's texture (read_pixels), which egui samples,";
            self.panel.finish(&self.args, &how, checked, None)
        }
    }
}
