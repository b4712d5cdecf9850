//! A display target shown in egui through `cuda_gl::egui_interop::EguiImage`, painted by
//! egui_glow's `Painter` into an offscreen framebuffer: each GL name has one owner that deletes
//! it (the target its texture, egui the texture the adapter gave it), through 1,000 resizes,
//! egui freeing the adapter's texture, and either side shutting down first. Needs
//! `--features egl,egui` and a GPU.
#![cfg(all(feature = "egl", feature = "egui"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::display::{assert_pattern, draw_pattern};
use crate::gpu::*;
use crate::harness::{device_used, mib};
use cuda_gl::display::{DisplayTarget, Format, Layout};
use cuda_gl::egl::Offscreen;
use cuda_gl::egui_interop::EguiImage;
use egui_glow::glow;
use std::sync::Arc;

/// The offscreen "window" egui paints into.
const SCREEN: [u32; 2] = [320, 240];

/// egui and its painter in the test's GL context, and the framebuffer it paints into.
struct Egui {
    painter: egui_glow::Painter,
    ctx: egui::Context,
    screen: Offscreen,
}

impl Egui {
    fn new(g: &Gpu) -> Egui {
        // SAFETY: the loader resolves names in the test's EGL context, current on this thread,
        // which outlives the painter (`g` outlives every `Egui`).
        let gl = unsafe { glow::Context::from_loader_function(|name| g.gl.get_proc_address(name)) };
        Egui {
            painter: egui_glow::Painter::new(Arc::new(gl), "", None, false).unwrap(),
            ctx: egui::Context::default(),
            screen: Offscreen::new(SCREEN[0], SCREEN[1]).unwrap(),
        }
    }

    /// One egui frame: a label (egui's own font texture) and `image`, painted.
    fn paint(&mut self, image: Option<egui::load::SizedTexture>) {
        let input = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(SCREEN[0] as f32, SCREEN[1] as f32),
            )),
            ..Default::default()
        };
        let mut out = self.ctx.run_ui(input, |ui| {
            ui.label("cuda-gl");
            if let Some(image) = image {
                ui.image(image);
            }
        });
        let primitives = self.ctx.tessellate(out.shapes, out.pixels_per_point);
        self.screen.bind().unwrap();
        self.painter.clear(SCREEN, [0.0, 0.0, 0.0, 1.0]);
        self.painter.paint_and_update_textures(
            SCREEN,
            out.pixels_per_point,
            &primitives,
            &mut out.textures_delta,
        );
        check_gl();
    }

    /// The GL name of egui's font texture (its first managed texture).
    fn font_texture(&self) -> u32 {
        self.painter
            .texture(egui::TextureId::Managed(0))
            .expect("egui's font texture")
            .0
            .get()
    }
}

/// Draws seed `seed` into the image's target, shows it through egui's texture and paints it;
/// checks that egui's texture holds the frame.
fn show(g: &Gpu, egui: &mut Egui, image: &mut EguiImage, seed: u32) {
    draw_pattern(g, image.target_mut(), seed);
    let sized = image
        .update(|t| egui.painter.register_native_texture(t))
        .unwrap();
    egui.paint(Some(sized));
    let (w, h) = image.target().size();
    let name = image.egui_texture().unwrap().0.get();
    let texels = read_texture_rgba8(name, w as usize, h as usize, 0);
    assert_pattern(&texels, seed, &format!("egui's texture at {w}x{h}"));
}

fn new_image(g: &Gpu, (w, h): (u32, u32)) -> EguiImage {
    let layout = Layout::packed((w, h), Format::Rgba8).unwrap();
    let (target, _) = DisplayTarget::new(&g.ctx, layout, None).unwrap();
    EguiImage::new(target).unwrap()
}

/// egui, an image of `size` already shown through it with seed `seed` (see [`show`]), and the
/// GL name of egui's texture that shows it.
fn egui_showing(g: &Gpu, size: (u32, u32), seed: u32) -> (Egui, EguiImage, u32) {
    let mut egui = Egui::new(g);
    let mut image = new_image(g, size);
    show(g, &mut egui, &mut image, seed);
    let given = image.egui_texture().unwrap().0.get();
    (egui, image, given)
}

/// A 64x64 image shown through egui (frame `seed`), whose texture egui then freed (as when the
/// application frees its id): the tests of what becomes of the freed name start here. Returns
/// the image's egui id and texture name from before the free.
fn egui_freed(g: &Gpu, seed: u32) -> (Egui, EguiImage, egui::TextureId, glow::Texture) {
    let (mut egui, image, _) = egui_showing(g, (64, 64), seed);
    let (id, name) = (image.texture_id().unwrap(), image.egui_texture().unwrap());
    egui.painter.free_texture(id);
    (egui, image, id, name)
}

/// 1,000 resizes to odd sizes, every frame shown through egui: egui's texture keeps its name
/// and id (no stale names for egui to delete later) and holds each frame, and device memory is
/// flat within 1 MiB (at the same size, after a warm-up pass). Then egui shuts down first: it
/// deletes its textures (the adapter's among them), and the target's texture and an
/// application's texture live on, unchanged; then the target goes, leaving the application's.
#[test]
fn a_thousand_resizes_leave_each_name_with_its_one_owner() {
    let Some(g) = gpu() else { return };
    let mut egui = Egui::new(&g);
    let mut image = new_image(&g, (65, 33));
    let mine = gl_texture_rgba8(8, 8, 1);
    let mine_texels = pattern_words(64, 77);
    upload_texels_rgba8(mine, 8, 8, &mine_texels);
    show(&g, &mut egui, &mut image, 1);
    let (id, name) = (image.texture_id().unwrap(), image.egui_texture().unwrap());
    let font = egui.font_texture();
    let mut before = 0;
    for pass in 0..2u32 {
        for round in 0..500u32 {
            // Odd sides from 1 to 1023, and the side of the start among them.
            let (w, h) = (
                1 + 2 * ((round * 37 + pass) % 512),
                1 + 2 * ((round * 53) % 300),
            );
            image.target_mut().resize(w, h).unwrap();
            if round % 50 == 0 {
                show(&g, &mut egui, &mut image, round);
            } else {
                draw_pattern(&g, image.target_mut(), round);
                let sized = image
                    .update(|t| egui.painter.register_native_texture(t))
                    .unwrap();
                egui.paint(Some(sized));
            }
            assert_eq!(
                image.texture_id(),
                Some(id),
                "resize {round}: re-registered"
            );
            assert_eq!(
                image.egui_texture(),
                Some(name),
                "resize {round}: a new name"
            );
        }
        image.target_mut().resize(65, 33).unwrap();
        show(&g, &mut egui, &mut image, 2);
        g.stream.synchronize().unwrap();
        // SAFETY: a context is current; glFinish takes no arguments.
        unsafe { gl::Finish() };
        let used = device_used(&g.ctx) as i64;
        if pass == 0 {
            before = used;
        } else {
            eprintln!("500 egui image resizes: device {}", mib(used - before));
            assert!(
                (used - before).abs() <= 1 << 20,
                "device memory moved by {}",
                mib(used - before)
            );
        }
    }
    let target_texture = image.target().texture().0;
    assert!(image.holds(name).unwrap());

    // egui shuts down first: it deletes its own textures and the one the adapter gave it.
    egui.painter.destroy();
    assert!(
        !gl_is(gl::IsTexture, name.0.get()),
        "egui's texture outlived egui"
    );
    assert!(
        !gl_is(gl::IsTexture, font),
        "egui's font texture outlived egui"
    );
    assert!(!image.holds(name).unwrap());
    // The target's texture is the target's still, with the last frame.
    let texels = read_texture_rgba8(target_texture, 65, 33, 0);
    assert_pattern(&texels, 2, "the target's texture after egui's shutdown");
    drop(image);
    assert!(
        !gl_is(gl::IsTexture, target_texture),
        "the target's texture outlived it"
    );
    end_with_mine_kept(&g, mine, (8, 8), &mine_texels);
}

/// cuda-gl shuts down first: dropping the image deletes the target's texture, shrinks egui's to
/// 1x1 and leaves egui's textures (the one it was given, its font) to egui, which paints on and
/// deletes them at its own shutdown without a GL error.
#[test]
fn dropping_the_image_leaves_egui_its_textures() {
    let Some(g) = gpu() else { return };
    let (mut egui, image, given) = egui_showing(&g, (31, 17), 5);
    let target_texture = image.target().texture().0;
    let font = egui.font_texture();
    drop(image);
    assert!(!gl_is(gl::IsTexture, target_texture));
    // egui's still, shrunk to 1x1: its frame's memory is not kept until egui's shutdown.
    assert!(gl_is(gl::IsTexture, given));
    let mut width = 0;
    // SAFETY: a context is current; `given` is a texture (asserted); a valid out-pointer.
    unsafe {
        gl::BindTexture(gl::TEXTURE_2D, given);
        gl::GetTexLevelParameteriv(gl::TEXTURE_2D, 0, gl::TEXTURE_WIDTH, &mut width);
        gl::BindTexture(gl::TEXTURE_2D, 0);
    }
    assert_eq!(width, 1, "egui's texture after the image dropped");
    assert!(gl_is(gl::IsTexture, font));
    egui.paint(None);
    egui.painter.destroy();
    assert!(!gl_is(gl::IsTexture, given) && !gl_is(gl::IsTexture, font));
    g.check_no_errors();
}

/// While the image holds egui's texture, cuda-gl claims it as it claims the target's own: a
/// registration of it with CUDA (whose map would let a kernel write storage the next resize
/// frees) is refused.
#[test]
fn egui_s_texture_cannot_be_registered_with_cuda() {
    let Some(g) = gpu() else { return };
    let (mut egui, image, given) = egui_showing(&g, (64, 32), 7);
    let registered = cuda_gl::RegisteredImage::register(
        &g.ctx,
        given,
        cuda_gl::ImageTarget::Texture2D,
        cuda_gl::RegisterFlags::SURFACE_LOAD_STORE,
    );
    assert!(
        matches!(registered, Err(cuda_gl::Error::AlreadyRegistered { .. })),
        "{registered:?}"
    );
    drop(image);
    egui.painter.destroy();
    g.check_no_errors();
}

/// egui frees the adapter's texture, and the application gets its name for a texture of its
/// own: the next update neither writes nor claims that one (it has no label of the adapter's),
/// but makes a new texture and registers it again.
#[test]
fn a_texture_egui_freed_is_made_again_and_its_name_left_to_the_next_owner() {
    let Some(g) = gpu() else { return };
    let (mut egui, mut image, id, name) = egui_freed(&g, 9);
    assert!(!gl_is(gl::IsTexture, name.0.get()));
    let mine = texture_named(name.0.get());
    let mine_texels = pattern_words(64 * 64, 1234);
    upload_texels_rgba8(mine, 64, 64, &mine_texels);
    assert!(!image.holds(name).unwrap());
    show(&g, &mut egui, &mut image, 10);
    assert_ne!(image.texture_id(), Some(id), "not registered again");
    assert_ne!(image.egui_texture(), Some(name));
    assert_eq!(read_texture_rgba8(mine, 64, 64, 0), mine_texels);
    drop(image);
    egui.painter.destroy();
    end_with_mine_kept(&g, mine, (64, 64), &mine_texels);
}

/// egui frees the adapter's texture and the application gets its name for a texture of its
/// own, which it registers with CUDA before the image's next update (a hidden panel's image
/// kept without updates, say): the registration is not refused by the image's claim on the name
/// egui freed (the old code returned `Error::AlreadyRegistered` until the next update).
#[test]
fn a_name_egui_freed_can_be_registered_before_the_next_update() {
    let Some(g) = gpu() else { return };
    let (mut egui, mut image, _, name) = egui_freed(&g, 11);
    let mine = texture_named(name.0.get());
    let registered = cuda_gl::RegisteredImage::register(
        &g.ctx,
        mine,
        cuda_gl::ImageTarget::Texture2D,
        cuda_gl::RegisterFlags::SURFACE_LOAD_STORE,
    );
    assert!(registered.is_ok(), "{registered:?}");
    // The image's next update makes a texture of its own again, and leaves the app's claimed.
    show(&g, &mut egui, &mut image, 12);
    assert_ne!(image.egui_texture(), Some(name));
    drop(image);
    drop(registered);
    egui.painter.destroy();
    delete_texture(mine);
    g.check_no_errors();
}

/// A 64x64 RGBA8 texture of the application's with GL name `name` (one egui freed): textures
/// are made until GL gives that name again (at most 256), and the others deleted.
fn texture_named(name: u32) -> u32 {
    let mut others = Vec::new();
    let mine = loop {
        let t = gl_texture_rgba8(64, 64, 1);
        if t == name {
            break t;
        }
        others.push(t);
        assert!(
            others.len() < 256,
            "GL gave the freed name to none of 256 textures"
        );
    };
    others.into_iter().for_each(delete_texture);
    mine
}

/// The end of a test that made the application a texture of its own, `mine` (`w` x `h`): it
/// still holds `texels`, is deleted, and no GL error or drop error is left.
fn end_with_mine_kept(g: &Gpu, mine: u32, (w, h): (usize, usize), texels: &[u32]) {
    assert_eq!(read_texture_rgba8(mine, w, h, 0), texels);
    delete_texture(mine);
    g.check_no_errors();
}
