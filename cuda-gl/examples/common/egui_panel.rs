//! What the egui examples (11 on egui_glow, 14 on egui-wgpu) show and check, whoever paints it:
//! the image's sizes over a run, the side panel's controls (a slider that sets the kernel's
//! parameter), the image placed in the central panel, and the comparison of what was read back
//! with the CPU's pattern at the slider's value.
//! Not part of `common/mod.rs`, which builds without egui: an egui example includes it on its own
//! (`#[path = "common/egui_panel.rs"] mod egui_panel;`).

use crate::common::{Mismatch, stripes_mismatches_in, stripes_texel};
use anyhow::{Result, anyhow};
use eframe::egui;
use egui::emath::GuiRounding as _;
use egui::load::SizedTexture;

/// The image's first size.
pub const START: (u32, u32) = (640, 480);
/// The sizes it takes, in order, spread over the run: odd widths and heights, tall and wide.
pub const SIZES: [(u32, u32); 3] = [(1001, 333), (77, 1201), (513, 257)];
/// Frames drawn (and checked) in a run.
pub const FRAMES: u32 = 120;
/// The headless "window": room for the side panel and the largest image.
pub const SCREEN: (u32, u32) = (1300, 1300);

/// The input of every headless egui frame: the [`SCREEN`], at one pixel per point (egui's
/// default without a window).
pub fn headless_input() -> egui::RawInput {
    egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(SCREEN.0 as f32, SCREEN.1 as f32),
        )),
        ..Default::default()
    }
}

/// The side panel's state and what the run has checked so far.
pub struct Controls {
    /// The slider: the kernel's `frame` parameter (its pattern's phase).
    pub phase: u32,
    /// Whether the program moves the slider itself after each frame.
    pub animate: bool,
    /// Frames drawn and checked.
    pub drawn: u32,
    /// Pixels compared with the CPU's pattern, in every read-back.
    pub pixels_compared: u64,
}

impl Controls {
    pub fn new() -> Controls {
        Controls {
            phase: 0,
            animate: true,
            drawn: 0,
            pixels_compared: 0,
        }
    }

    /// The size the image takes before the next frame, when one of [`SIZES`] is due.
    pub fn size_due(&self) -> Option<(u32, u32)> {
        crate::common::size_due(self.drawn, FRAMES, &SIZES)
    }

    /// Compares the `size` image at `origin` in `pixels` (RGBA8 rows of `stride` pixels, row 0
    /// first: `what`, read back) with the CPU's pattern at the slider's value: a [`Mismatch`]
    /// that says how many pixels differ and which is the first.
    pub fn check(
        &mut self,
        what: &str,
        pixels: &[u8],
        stride: u32,
        origin: (u32, u32),
        (w, h): (u32, u32),
    ) -> Result<()> {
        let (wrong, first) = stripes_mismatches_in(pixels, stride, origin, (w, h), self.phase);
        if let Some(((x, y), got)) = first {
            return Err(anyhow!(Mismatch(format!(
                "frame {} at {w}x{h} (phase {}): {wrong} of {} pixels of {what} differ from the \
                 CPU's pattern; the first at ({x}, {y}) of the image is {got:?}, expected {:?}",
                self.drawn,
                self.phase,
                w * h,
                stripes_texel(x, y, self.phase)
            ))));
        }
        self.pixels_compared += u64::from(w) * u64::from(h);
        Ok(())
    }

    /// Counts the frame just checked; the slider moves on when animated.
    pub fn next(&mut self) {
        self.drawn += 1;
        if self.animate {
            self.phase = (self.phase + 7) % 256;
        }
    }

    /// The app's UI: the slider in a side panel, with `status` (the image's size and mode)
    /// under it, and `image` in the central panel at its size in points, its corners on whole
    /// pixels (so that at one pixel per point each pixel shows one texel): where it was painted.
    pub fn ui(&mut self, ui: &mut egui::Ui, status: &str, image: SizedTexture) -> egui::Rect {
        egui::Panel::left("controls").show(ui, |ui| {
            ui.heading("CUDA kernel");
            ui.add(egui::Slider::new(&mut self.phase, 0..=255).text("phase"));
            ui.checkbox(&mut self.animate, "animate");
            ui.label(status);
            ui.label(format!("frame {} of {FRAMES}", self.drawn));
        });
        egui::CentralPanel::default()
            .show(ui, |ui| {
                let (rect, _) = ui.allocate_exact_size(image.size, egui::Sense::hover());
                let rect = rect.round_to_pixels(ui.pixels_per_point());
                let uv = egui::Rect::from_min_max(egui::pos2(0.0, 0.0), egui::pos2(1.0, 1.0));
                ui.painter().image(image.id, rect, uv, egui::Color32::WHITE);
                rect
            })
            .inner
    }

    /// What the run did, for the example's `ok` line: `how` (where the image was shown) and
    /// `checked` (what was read back every frame).
    pub fn summary(&self, how: &str, checked: &str) -> String {
        format!(
            "{} frames drawn by CUDA and shown in an egui panel {how}, resized to {SIZES:?}; \
             {checked} read back every frame and equal to the CPU's pattern ({} pixels compared)",
            self.drawn, self.pixels_compared
        )
    }
}
