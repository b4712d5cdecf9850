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

use anyhow::{Result, anyhow};
use common::{Mismatch, Stripes, Unavailable};
use cuda_gl::Context;
use cuda_gl::display::{DisplayTarget, Format, Layout};
use cuda_gl::egl::Offscreen;
use cuda_gl::egui_interop::EguiImage;
use egui::load::SizedTexture;
use egui_glow::glow::{self, HasContext};
use std::process::ExitCode;
use std::sync::Arc;

/// The image's first size.
const START: (u32, u32) = (640, 480);
/// The sizes it takes, in order, spread over the run: odd widths and heights, tall and wide.
const SIZES: [(u32, u32); 3] = [(1001, 333), (77, 1201), (513, 257)];
/// Frames drawn (and checked) in a run.
const FRAMES: u32 = 120;
/// The headless "window": room for the side panel and the largest image.
const SCREEN: (u32, u32) = (1300, 1300);

fn main() -> ExitCode {
    common::main_window_or_headless(window::run, headless)
}

/// The image, the kernel that draws it, the slider's state and what has been checked: the
/// same in the window and headless.
struct Panel {
    image: EguiImage,
    stripes: Stripes,
    /// The slider: the kernel's `frame` parameter (its pattern's phase).
    phase: u32,
    /// Whether the program moves the slider itself each frame.
    animate: bool,
    drawn: u32,
    pixels_compared: u64,
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
            phase: 0,
            animate: true,
            drawn: 0,
            pixels_compared: 0,
            last: Vec::new(),
        })
    }

    /// Draws the next frame (resized first when one of [`SIZES`] is due), shows it through the
    /// egui texture (`register` hands a new one to egui's painter), reads that texture back and
    /// compares it with the CPU's pattern: the texture to put in the central panel.
    fn frame(
        &mut self,
        gl: &glow::Context,
        register: impl FnOnce(glow::Texture) -> egui::TextureId,
    ) -> Result<SizedTexture> {
        let steps = SIZES.len() as u32 + 1;
        if let Some(i) = (1..steps).find(|&i| self.drawn == i * FRAMES / steps) {
            let (w, h) = SIZES[i as usize - 1];
            self.image.target_mut().resize(w, h)?;
            println!("frame {}: image resized to {w}x{h}", self.drawn);
        }
        let (w, h) = self.image.target().size();
        let target = self.image.target_mut();
        let frame = target.frame(&self.stripes.stream)?;
        // SAFETY: the frame is RGBA8 of the image's size, w x h, on the kernel's stream.
        unsafe { self.stripes.draw(frame.surface()?, (w, h), self.phase) }?;
        frame.present()?;
        // Stream mode shows a frame late until flushed (the other modes: nothing to do).
        target.flush()?;
        let sized = self.image.update(register)?;
        let texture = self
            .image
            .egui_texture()
            .ok_or_else(|| anyhow!("no egui texture after EguiImage::update"))?;
        let pixels = read_texture(gl, texture, w, h);
        let (wrong, first) = common::stripes_mismatches(&pixels, w, self.phase);
        if let Some(((x, y), got)) = first {
            return Err(anyhow!(Mismatch(format!(
                "frame {} at {w}x{h} (phase {}): {wrong} of {} pixels of the egui texture differ \
                 from the CPU's pattern; the first at ({x}, {y}) is {got:?}, expected {:?}",
                self.drawn,
                self.phase,
                w * h,
                common::stripes_texel(x, y, self.phase)
            ))));
        }
        self.pixels_compared += u64::from(w) * u64::from(h);
        self.drawn += 1;
        self.last = pixels;
        if self.animate {
            self.phase = (self.phase + 7) % 256;
        }
        Ok(sized)
    }

    /// The app's UI: the slider in a side panel, the image in the central one.
    fn ui(&mut self, ui: &mut egui::Ui, image: SizedTexture) {
        egui::Panel::left("controls").show(ui, |ui| {
            ui.heading("CUDA kernel");
            ui.add(egui::Slider::new(&mut self.phase, 0..=255).text("phase"));
            ui.checkbox(&mut self.animate, "animate");
            let (w, h) = self.image.target().size();
            ui.label(format!("{w}x{h}, {} mode", self.image.target().mode()));
            ui.label(format!("frame {} of {FRAMES}", self.drawn));
        });
        egui::CentralPanel::default().show(ui, |ui| {
            ui.image(image);
        });
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
        Ok(format!(
            "{} frames drawn by CUDA ({mode} mode) and shown in an egui panel {how}, resized to \
             {SIZES:?}; the egui texture read back every frame and equal to the CPU's pattern \
             ({} pixels compared)",
            self.drawn, self.pixels_compared
        ))
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
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(SCREEN.0 as f32, SCREEN.1 as f32),
        )),
        ..Default::default()
    };
    let painted = (|| {
        while panel.drawn < FRAMES {
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
    use super::{FRAMES, Panel, Unavailable};
    use anyhow::{Result, anyhow};
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::{Duration, Instant};

    pub fn run(args: &crate::common::Args) -> Result<String> {
        let outcome: Rc<RefCell<Option<Result<String>>>> = Rc::default();
        let options = eframe::NativeOptions {
            renderer: eframe::Renderer::Glow,
            viewport: egui::ViewportBuilder::default().with_inner_size([1300.0, 1000.0]),
            ..Default::default()
        };
        let args = args.clone();
        let shared = outcome.clone();
        let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            eframe::run_native(
                "cuda-gl 11_egui_panel",
                options,
                Box::new(move |cc| {
                    let ctx = cuda_gl::Context::for_current_gl_or(&cuda_gl::Device::get(0)?)?;
                    let gl = cc.gl.clone().ok_or("eframe gave no glow context")?;
                    Ok(Box::new(App {
                        panel: Some(Panel::new(&ctx)?),
                        gl,
                        args,
                        until: None,
                        outcome: shared,
                    }))
                }),
            )
        }));
        match started {
            Err(_) => Err(anyhow!(Unavailable(
                "winit could not start (no libxkbcommon-x11, or no keyboard data: under Xvfb \
                 set XKB_CONFIG_ROOT)"
                    .into()
            ))),
            Ok(Err(e)) => Err(anyhow!(Unavailable(format!("no window: eframe: {e}")))),
            Ok(Ok(())) => outcome
                .borrow_mut()
                .take()
                .unwrap_or_else(|| Err(anyhow!("the window closed before the first frame"))),
        }
    }

    /// The eframe app: the panel until the run ends, and where its outcome goes.
    struct App {
        panel: Option<Panel>,
        gl: std::sync::Arc<egui_glow::glow::Context>,
        args: crate::common::Args,
        /// When `--window-secs` ends the run.
        until: Option<Instant>,
        outcome: Rc<RefCell<Option<Result<String>>>>,
    }

    impl App {
        /// Ends the run with `outcome` (the first one given wins); the target goes now, while
        /// eframe's GL context is current.
        fn end(&mut self, ui: &egui::Ui, outcome: Result<()>) {
            let finished = self.panel.take().map(|panel| {
                outcome.and_then(|()| panel.finish(&self.args, "in an eframe window (glow)", None))
            });
            if let Some(result) = finished {
                self.outcome.borrow_mut().get_or_insert(result);
            }
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    impl eframe::App for App {
        fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
            let Some(panel) = self.panel.as_mut() else {
                return;
            };
            let secs = self.args.window_secs;
            let until = *self.until.get_or_insert_with(|| {
                Instant::now() + Duration::from_secs_f64(secs.unwrap_or(0.0))
            });
            match panel.frame(&self.gl, |t| frame.register_native_glow_texture(t)) {
                Ok(image) => panel.ui(ui, image),
                Err(e) => return self.end(ui, Err(e)),
            }
            let done = match secs {
                Some(_) => Instant::now() >= until,
                None => panel.drawn >= FRAMES,
            };
            if done {
                self.end(ui, Ok(()));
            } else {
                ui.ctx().request_repaint();
            }
        }

        fn on_exit(&mut self, _gl: Option<&egui_glow::glow::Context>) {
            if let Some(panel) = self.panel.take() {
                let result = panel.finish(&self.args, "in an eframe window (glow)", None);
                self.outcome.borrow_mut().get_or_insert(result);
            }
        }
    }
}
