//! A `WgpuTarget` shown in egui through egui-wgpu (`cuda_gl::egui_interop::EguiWgpuImage`): an
//! egui frame that paints the image over the whole screen, rendered by egui-wgpu's renderer
//! into an offscreen texture, equals what the target shows in every pixel, in both modes;
//! after a resize the same id shows the new texture, and an id the application freed is
//! registered anew; a one-channel target is refused; `into_target` frees the id. Needs `--features egui-wgpu,egl`, a GPU and NVIDIA's Vulkan driver.
#![cfg(all(feature = "egui-wgpu", feature = "egl"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../examples/common/egui_wgpu_paint.rs"]
mod egui_wgpu_paint;

use super::wgpu_interop::{Setup, read_back, setup};
use crate::wgpu_texture::texture_2d;
use cuda_gl::DeviceBuffer;
use cuda_gl::display::{DisplayError, Format, Layout, Mode};
use cuda_gl::egui_interop::EguiWgpuImage;
use cuda_gl::wgpu_interop::WgpuTarget;
use egui::load::SizedTexture;

/// Opaque RGBA8 pixels that differ from pixel to pixel and with `seed` (opaque: egui blends).
fn opaque(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32)
        .flat_map(|i| {
            let v = i.wrapping_mul(2_654_435_761) ^ seed.wrapping_mul(40_503);
            [v as u8, (v >> 8) as u8, (v >> 16) as u8, 255]
        })
        .collect()
}

/// Shows `pixels` (RGBA8 of `size`) on the image's target.
fn show(s: &Setup, image: &mut EguiWgpuImage, size: (u32, u32), pixels: &[u8]) {
    let layout = Layout::packed(size, Format::Rgba8).unwrap();
    let src = DeviceBuffer::from_slice(&s.ctx, pixels).unwrap();
    image.target_mut().show(&src, layout, &s.stream).unwrap();
}

/// One egui frame painting `sized` over the whole `size` screen at 1 pixel per point, rendered
/// by `renderer` into a new RGBA8 texture; its pixels, row 0 at the top.
fn paint(
    s: &Setup,
    renderer: &mut egui_wgpu::Renderer,
    sized: SizedTexture,
    size: (u32, u32),
) -> Vec<u32> {
    let (w, h) = size;
    let ctx = egui::Context::default();
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(w as f32, h as f32));
    let input = egui::RawInput {
        screen_rect: Some(screen),
        ..Default::default()
    };
    let out = ctx.run_ui(input, |ui| {
        let uv = egui::Rect::from_min_max(egui::pos2(0.0, 0.0), egui::pos2(1.0, 1.0));
        ui.ctx().layer_painter(egui::LayerId::background()).image(
            sized.id,
            screen,
            uv,
            egui::Color32::WHITE,
        );
    });
    let target = texture_2d(
        &s.device,
        size,
        wgpu::TextureFormat::Rgba8Unorm,
        wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        "egui_wgpu test: the screen",
    );
    egui_wgpu_paint::paint(&s.device, &s.queue, renderer, &ctx, out, &target, |_| {});
    read_back(s, &target)
}

/// Every pixel of `got` (egui's output) within 1 per channel of `want` (RGBA8 bytes).
fn assert_painted(got: &[u32], want: &[u8], what: &str) {
    assert_eq!(got.len() * 4, want.len(), "{what}: size");
    let far = got
        .iter()
        .zip(want.chunks_exact(4))
        .filter(|(g, w)| {
            g.to_le_bytes()
                .iter()
                .zip(w.iter())
                .any(|(a, b)| a.abs_diff(*b) > 1)
        })
        .count();
    assert_eq!(
        far,
        0,
        "{what}: {far} of {} pixels differ by more than 1",
        got.len()
    );
}

#[test]
fn egui_wgpu_paints_the_targets_pixels_across_resizes_and_frees() {
    let Some(s) = setup() else { return };
    for mode in [Mode::Interop, Mode::Staged] {
        let layout = Layout::packed((96, 64), Format::Rgba8).unwrap();
        let (target, report) =
            WgpuTarget::new(&s.ctx, &s.device, &s.queue, layout, Some(mode)).unwrap();
        println!("{report}");
        let mut renderer = egui_wgpu::Renderer::new(
            &s.device,
            wgpu::TextureFormat::Rgba8Unorm,
            egui_wgpu::RendererOptions::PREDICTABLE,
        );
        let mut image = EguiWgpuImage::new(target);
        image.set_filter(wgpu::FilterMode::Nearest);
        let mut ids = Vec::new();
        // A resize, then a show of another size alone (which makes the new texture itself).
        for (k, size) in [(96, 64), (333, 101), (77, 120)].into_iter().enumerate() {
            if k == 1 {
                image.target_mut().resize(size.0, size.1).unwrap();
            }
            let want = opaque(size.0 as usize * size.1 as usize, k as u32 + 1);
            show(&s, &mut image, size, &want);
            let sized = image.update(&mut renderer).unwrap();
            assert_eq!(sized.size, egui::vec2(size.0 as f32, size.1 as f32));
            ids.push(sized.id);
            let got = paint(&s, &mut renderer, sized, size);
            assert_painted(&got, &want, &format!("{mode} {size:?}"));
        }
        assert!(
            ids.windows(2).all(|p| p[0] == p[1]),
            "{mode}: one id across resizes: {ids:?}"
        );
        // The application frees the id: the next update registers the image anew.
        renderer.free_texture(&ids[0]);
        let sized = image.update(&mut renderer).unwrap();
        assert_ne!(sized.id, ids[0], "{mode}: a freed id is not reused");
        let size = image.target().size();
        let want = opaque(size.0 as usize * size.1 as usize, 9);
        show(&s, &mut image, size, &want);
        let sized = image.update(&mut renderer).unwrap();
        let got = paint(&s, &mut renderer, sized, size);
        assert_painted(&got, &want, &format!("{mode} after a free"));
        // A filter set after the registration takes effect (the same pixels at 1:1).
        image.set_filter(wgpu::FilterMode::Linear);
        image.set_filter(wgpu::FilterMode::Nearest);
        let sized = image.update(&mut renderer).unwrap();
        let got = paint(&s, &mut renderer, sized, size);
        assert_painted(&got, &want, &format!("{mode} after set_filter"));
        // One-channel pixels without a colour map are refused, not shown red.
        let field = DeviceBuffer::from_slice(&s.ctx, &vec![0.5f32; 64 * 32]).unwrap();
        let r32f = Layout::packed((64, 32), Format::R32F).unwrap();
        image.target_mut().show(&field, r32f, &s.stream).unwrap();
        let e = image.update(&mut renderer).unwrap_err();
        assert!(
            matches!(e, cuda_gl::Error::Display(DisplayError::NotRgba8 { .. })),
            "{e}"
        );
        let id = sized.id;
        drop(image.into_target(&mut renderer));
        assert!(
            renderer.texture(&id).is_none(),
            "{mode}: into_target freed the id"
        );
    }
    s.ctx.check_drop_errors().unwrap();
}
