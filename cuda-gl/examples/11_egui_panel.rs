//! 11: a CUDA image in an egui app: an eframe window (glow renderer) with a side panel, whose
//! slider sets the kernel's parameter, and the image in the central panel; or the same frames
//! headless, painted by egui_glow into an offscreen framebuffer.
//!
//! The image is a display target shown through `cuda_gl::egui_interop::EguiImage` (feature
//! `egui`): every frame the examples' `stripes_rgba8` kernel draws the target through
//! `frame.surface()` with the slider's value as its `frame` parameter, the frame is presented,
//! and `EguiImage::update` copies the target's texture on the GPU into a texture egui owns
//! (registered once with `register_native_glow_texture`, never deleted by cuda-gl). The program
//! resizes the image to odd sizes (1001x333, 77x1201, 513x257) while it runs; the egui texture
//! keeps its name and takes each new size.
//!
//! The check: every frame, the egui texture is read back (`glGetTexImage`, with egui_glow's
//! own glow) and compared pixel by pixel with the CPU's pattern for the slider's value. The
//! first difference ends the run with `MISMATCH: ...` (exit 1).
//!
//! Headless (the default, as for the other examples): a GL context on CUDA device 0 where EGL
//! has one, otherwise any GL (the target then copies through host memory, staged mode), an
//! `egui::Context` run by the program and an `egui_glow::Painter` painting into a
//! `cuda_gl::egl::Offscreen`. `--window`: an eframe window (exit 2 when none can open);
//! `--window-secs N` ends it after N seconds instead of after the frames.
//!
//! Run: `cargo run --release -p cuda-gl --example 11_egui_panel --features egl,egui`
//! (`-- --screenshot 11.png` keeps the last screen painted headless, the last egui texture in a
//! window). Under Xvfb, see
//! example 09 (`XKB_CONFIG_ROOT`).

#[path = "common/mod.rs"]
mod common;
#[path = "common/eframe_app.rs"]
mod eframe_app;
#[path = "common/egui_panel.rs"]
mod egui_panel;

use anyhow::{Result, anyhow};
use common::Stripes;
use cuda_gl::Context;
use cuda_gl::display::{DisplayTarget, Format, Layout};
use cuda_gl::egl::Offscreen;
use cuda_gl::egui_interop::EguiImage;
use egui::load::SizedTexture;
use egui_glow::glow::{self, HasContext};
use egui_panel::{Controls, FRAMES, SCREEN, START};
use std::process::ExitCode;
use std::sync::Arc;

fn main() -> ExitCode {
    common::main_window_or_headless(window::run, headless)
}

/// The image, the kernel that draws it and the side panel's state: the same in the window and
/// headless.
struct Panel {
    image: EguiImage,
    stripes: Stripes,
    controls: Controls,
    /// The last egui texture read back, for `--screenshot`.
    last: Vec<u8>,
}

impl Panel {
    /// A panel whose display target is made in the GL context current on this thread.
    fn new(ctx: &Arc<Context>) -> Result<Panel> {
        let (target, report) =
            DisplayTarget::new(ctx, Layout::packed(START, Format::Rgba8)?, None)?;
        println!("{report}");
        Ok(Panel {
            image: EguiImage::new(target)?,
            stripes: Stripes::new(ctx)?,
            controls: Controls::new(),
            last: Vec::new(),
        })
    }

    /// Draws the next frame (resized first when one of the sizes is due), shows it through the
    /// egui texture (`register` hands a new one to egui's painter), reads that texture back and
    /// compares it with the CPU's pattern: the texture to put in the central panel.
    fn frame(
        &mut self,
        gl: &glow::Context,
        register: impl FnOnce(glow::Texture) -> egui::TextureId,
    ) -> Result<SizedTexture> {
        if let Some((w, h)) = self.controls.size_due() {
            self.image.target_mut().resize(w, h)?;
            println!("frame {}: image resized to {w}x{h}", self.controls.drawn);
        }
        let (w, h) = self.image.target().size();
        let target = self.image.target_mut();
        let frame = target.frame(&self.stripes.stream)?;
        // SAFETY: opened on the kernel's stream.
        unsafe { self.stripes.present(frame, self.controls.phase) }?;
        // Stream mode shows a frame late until flushed (the other modes: nothing to do).
        target.flush()?;
        let sized = self.image.update(register)?;
        let texture = self
            .image
            .egui_texture()
            .ok_or_else(|| anyhow!("no egui texture after EguiImage::update"))?;
        let pixels = read_texture(gl, texture, w, h);
        self.controls
            .check("the egui texture", &pixels, w, (0, 0), (w, h))?;
        self.controls.next();
        self.last = pixels;
        Ok(sized)
    }

    /// The app's UI (see `Controls::ui`).
    fn ui(&mut self, ui: &mut egui::Ui, image: SizedTexture) {
        let target = self.image.target();
        let (w, h) = target.size();
        let status = format!("{w}x{h}, {} mode", target.mode());
        self.controls.ui(ui, &status, image);
    }

    /// Writes `--screenshot` (`shot`, the screen as painted, where there is one: else the last
    /// egui texture read back) and says what the run did; the target goes here, while its GL
    /// context is current.
    fn finish(
        self,
        args: &common::Args,
        how: &str,
        shot: Option<((u32, u32), Vec<u8>)>,
    ) -> Result<String> {
        let mode = self.image.target().mode();
        // Both read back bottom row first (GL's row 0), as the PNG writer wants them.
        let (size, pixels) = shot.unwrap_or((self.image.target().size(), self.last));
        common::screenshot(args.screenshot.as_deref(), size, &pixels)?;
        let ctx = self.image.target().context().clone();
        drop(self.image);
        ctx.check_drop_errors()?;
        Ok(self
            .controls
            .summary(&format!("({mode} mode) {how}"), "the egui texture"))
    }
}

/// The `w` x `h` RGBA8 pixels of `texture`, row 0 first (`glGetTexImage`).
fn read_texture(gl: &glow::Context, texture: glow::Texture, w: u32, h: u32) -> Vec<u8> {
    let mut pixels = vec![0u8; w as usize * h as usize * 4];
    // SAFETY: a GL context is current, of which `texture` is an RGBA8 texture of w x h (the
    // egui texture, just given the target's size); no pixel pack buffer is bound (egui binds
    // none), and rows of w * 4 bytes need no padding at pack alignment 4: `pixels` has room.
    unsafe {
        gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        gl.get_tex_image(
            glow::TEXTURE_2D,
            0,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelPackData::Slice(Some(&mut pixels)),
        );
        gl.bind_texture(glow::TEXTURE_2D, None);
    }
    pixels
}

/// The frames without a window: egui run by the program, painted into an offscreen framebuffer.
fn headless(args: &common::Args) -> Result<String> {
    let (device, egl) = common::any_gl_with_device_0()?;
    // SAFETY: the loader resolves names in the EGL context, current on this thread, which
    // outlives `gl` and the painter (both dropped before `egl`, at the end of this function).
    let gl =
        Arc::new(unsafe { glow::Context::from_loader_function(|name| egl.get_proc_address(name)) });
    let ctx = Context::new(&device)?;
    let mut panel = Panel::new(&ctx)?;
    let mut painter = egui_glow::Painter::new(gl.clone(), "", None, false)?;
    let screen = Offscreen::new(SCREEN.0, SCREEN.1)?;
    let egui_ctx = egui::Context::default();
    let input = egui_panel::headless_input();
    let painted = (|| {
        while panel.controls.drawn < FRAMES {
            let image = panel.frame(&gl, |t| painter.register_native_texture(t))?;
            let mut output = egui_ctx.run_ui(input.clone(), |ui| panel.ui(ui, image));
            let primitives = egui_ctx.tessellate(output.shapes, output.pixels_per_point);
            screen.bind()?;
            painter.clear([SCREEN.0, SCREEN.1], [0.1, 0.1, 0.1, 1.0]);
            painter.paint_and_update_textures(
                [SCREEN.0, SCREEN.1],
                output.pixels_per_point,
                &primitives,
                &mut output.textures_delta,
            );
        }
        Ok::<_, anyhow::Error>(())
    })();
    let shot = painted.and_then(|()| Ok((SCREEN, screen.read_rgba8()?)));
    // The painter deletes its textures, the egui image's among them: the adapter never does.
    painter.destroy();
    let how = "painted by egui_glow into an offscreen framebuffer (headless EGL)";
    panel.finish(args, how, Some(shot?))
}

/// The frames in an eframe window (glow renderer).
mod window {
    use super::Panel;
    use crate::common::Args;
    use crate::eframe_app;
    use crate::egui_panel::FRAMES;
    use anyhow::{Result, anyhow};
    use std::sync::Arc;

    pub fn run(args: &Args) -> Result<String> {
        let options = eframe::NativeOptions {
            renderer: eframe::Renderer::Glow,
            viewport: egui::ViewportBuilder::default().with_inner_size([1300.0, 1000.0]),
            ..Default::default()
        };
        let args = args.clone();
        let title = format!("cuda-gl {}", crate::common::NAME);
        eframe_app::run(&title, options, FRAMES, args.window_secs, move |cc| {
            let ctx = cuda_gl::Context::for_current_gl_or(&crate::common::device_0()?)?;
            let gl = cc
                .gl
                .clone()
                .ok_or_else(|| anyhow!("eframe gave no glow context"))?;
            Ok(Shown {
                panel: Panel::new(&ctx)?,
                gl,
                args,
            })
        })
    }

    /// The panel in the window, and eframe's glow context to read egui's texture back with.
    struct Shown {
        panel: Panel,
        gl: Arc<egui_glow::glow::Context>,
        args: Args,
    }

    impl eframe_app::Shown for Shown {
        fn show(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) -> Result<()> {
            let image = self
                .panel
                .frame(&self.gl, |t| frame.register_native_glow_texture(t))?;
            self.panel.ui(ui, image);
            Ok(())
        }

        fn drawn(&self) -> u32 {
            self.panel.controls.drawn
        }

        /// Called inside eframe, while its GL context is current.
        fn finish(self) -> Result<String> {
            self.panel
                .finish(&self.args, "in an eframe window (glow)", None)
        }
    }
}
