//! What the glow examples (08, 09) read back with glow: a texture's pixels, through a framebuffer.
//! Not part of `common/mod.rs`, which builds without the `glow` feature: an example that draws
//! with glow includes it on its own (`#[path = "common/glow_kit.rs"] mod glow_kit;`).

use anyhow::{Context as _, Result};
use glow::HasContext;

/// The `width` x `height` RGBA8 pixels of level 0 of `texture` (`GL_TEXTURE_2D`), row 0 first
/// (GL's first row, the one a surface writes at y = 0), read through a framebuffer of its own.
pub fn read_texture(
    gl: &glow::Context,
    texture: glow::NativeTexture,
    width: u32,
    height: u32,
) -> Result<Vec<u8>> {
    // SAFETY: a GL context is current (the callers'), with `texture` one of its textures; the
    // framebuffer gets it as its colour attachment, and is deleted after the read.
    unsafe {
        let framebuffer = gl
            .create_framebuffer()
            .map_err(anyhow::Error::msg)
            .context("glow: create_framebuffer")?;
        gl.bind_framebuffer(glow::READ_FRAMEBUFFER, Some(framebuffer));
        gl.framebuffer_texture_2d(
            glow::READ_FRAMEBUFFER,
            glow::COLOR_ATTACHMENT0,
            glow::TEXTURE_2D,
            Some(texture),
            0,
        );
        let pixels = read_framebuffer(gl, Some(framebuffer), width, height);
        gl.delete_framebuffer(framebuffer);
        pixels
    }
}

/// The `width` x `height` RGBA8 pixels of `framebuffer`'s colour (`None`: the window's back
/// buffer, what the next swap shows), bottom row first. The read framebuffer binding is left at
/// the default (0).
pub fn read_framebuffer(
    gl: &glow::Context,
    framebuffer: Option<glow::NativeFramebuffer>,
    width: u32,
    height: u32,
) -> Result<Vec<u8>> {
    let mut pixels = vec![0u8; width as usize * height as usize * 4];
    // SAFETY: a GL context is current (the callers'), of which `framebuffer` is a complete
    // framebuffer of at least `width` x `height` pixels (or the default one, at least that
    // size); no pixel pack buffer is bound in these examples, so `pixels` receives the
    // `width` x `height` RGBA8 pixels, rows of `width * 4` bytes, which pack alignment 4 leaves
    // tight.
    unsafe {
        gl.bind_framebuffer(glow::READ_FRAMEBUFFER, framebuffer);
        gl.pixel_store_i32(glow::PACK_ALIGNMENT, 4);
        gl.read_pixels(
            0,
            0,
            width as i32,
            height as i32,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelPackData::Slice(Some(&mut pixels)),
        );
        gl.bind_framebuffer(glow::READ_FRAMEBUFFER, None);
        match gl.get_error() {
            glow::NO_ERROR => Ok(pixels),
            code => anyhow::bail!("reading pixels back with glow: GL error {code:#06x}"),
        }
    }
}
