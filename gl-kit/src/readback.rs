//! Reading textures and framebuffers back to the host, bottom row first (GL's order, the order
//! the CUDA kernels and the CPU references lay frames out in).
//!
//! Any GL work that wrote the object, and any CUDA work ordered before an unmap, is done before
//! the pixels arrive. No pixel pack buffer is bound while reading, and none is left bound.

use crate::plain::{self, Plain};
use anyhow::{Context as _, Result, bail};
use gl::types::{GLenum, GLint, GLsizei, GLuint};

/// Every texel of level `level` of `texture` (bound to `target`: `GL_TEXTURE_2D`, or every
/// layer or slice of a `GL_TEXTURE_2D_ARRAY` or `GL_TEXTURE_3D`) as RGBA8 (`glGetTexImage`),
/// in values of `T`: bytes (`u8`), texels (`[u8; 4]`, or `u32` packed), layer after layer.
///
/// # Errors
/// A level whose size is not a whole number of `T`s, or a GL error.
pub fn texture<T: Plain>(target: GLenum, texture: GLuint, level: i32) -> Result<Vec<T>> {
    let (w, h, d) = level_size(target, texture, level);
    let bytes = w * h * d * 4;
    let Some(len) = plain::count_of::<T>(bytes) else {
        bail!("a {w}x{h}x{d} RGBA8 level is {bytes} bytes, not a whole number of values");
    };
    let mut data = vec![T::default(); len];
    // SAFETY: a context is current (the crate's contract). With no pack buffer bound GL writes
    // the level's w * h * d RGBA8 texels (rows need no padding at pack alignment 4), which is
    // `bytes`, the byte length of `data`; any bytes are a valid `T` (plain data).
    unsafe {
        gl::BindBuffer(gl::PIXEL_PACK_BUFFER, 0);
        gl::PixelStorei(gl::PACK_ALIGNMENT, 4);
        gl::BindTexture(target, texture);
        let pixels = data.as_mut_ptr().cast();
        gl::GetTexImage(target, level, gl::RGBA, gl::UNSIGNED_BYTE, pixels);
        gl::BindTexture(target, 0);
    }
    crate::check("reading a texture back")?;
    Ok(data)
}

/// Every texel of level `level` of 2-D texture `texture` with `channels` samples (1: `GL_RED`,
/// 2: `GL_RG`) of `sample_bytes` bytes each (1: `GL_UNSIGNED_BYTE`, 2: `GL_UNSIGNED_SHORT`),
/// rows tightly packed (`glGetTexImage` at pack alignment 1, put back to 4): what video plane
/// textures (`GL_R8`, `GL_RG16`, ...) hold, byte for byte.
///
/// # Errors
/// Another number of channels or sample bytes; a GL error.
pub fn plane(texture: GLuint, level: i32, channels: usize, sample_bytes: usize) -> Result<Vec<u8>> {
    let (format, kind) = crate::plane::transfer(channels, sample_bytes)?;
    let (w, h, _) = level_size(gl::TEXTURE_2D, texture, level);
    let mut data = vec![0u8; w * h * channels * sample_bytes];
    let pixels = data.as_mut_ptr().cast();
    let pack = (gl::PIXEL_PACK_BUFFER, gl::PACK_ALIGNMENT);
    crate::plane::tightly_packed(texture, pack, || {
        // SAFETY: a context is current (the crate's contract). With no pack buffer bound and
        // pack alignment 1 GL writes the level's w * h texels of `channels` samples of
        // `sample_bytes` bytes, tightly packed: the length of `data`.
        unsafe { gl::GetTexImage(gl::TEXTURE_2D, level, format, kind, pixels) };
    });
    crate::check("reading a plane texture back")?;
    Ok(data)
}

/// The size of level `level` of `texture` (bound to `target`), in texels: width, height and
/// depth (layers, slices, or 1).
fn level_size(target: GLenum, texture: GLuint, level: i32) -> (usize, usize, usize) {
    let mut size: [GLint; 3] = [0; 3];
    // SAFETY: a context is current; each query writes one integer into its element of `size`.
    unsafe {
        gl::BindTexture(target, texture);
        let names = [gl::TEXTURE_WIDTH, gl::TEXTURE_HEIGHT, gl::TEXTURE_DEPTH];
        for (value, name) in size.iter_mut().zip(names) {
            gl::GetTexLevelParameteriv(target, level, name, value);
        }
        gl::BindTexture(target, 0);
    }
    let [w, h, d] = size.map(|v| usize::try_from(v).unwrap_or(0));
    (w, h, d.max(1))
}

/// Layer `layer` of level 0 of the `width` x `height` array texture `texture`, read with
/// `glGetTextureSubImage` (OpenGL 4.5) as `format`/`kind` into `len` values of `T` (e.g.
/// `gl::RGBA` / `gl::UNSIGNED_BYTE` into `[u8; 4]` texels, or `gl::RED` / `gl::FLOAT` into
/// `f32`s).
///
/// # Errors
/// A GL error (among them a layer that does not fit in `len` values).
pub fn texture_layer<T: Plain>(
    texture: GLuint,
    layer: u32,
    (width, height): (u32, u32),
    (format, kind): (GLenum, GLenum),
    len: usize,
) -> Result<Vec<T>> {
    let mut data = vec![T::default(); len];
    let size = GLsizei::try_from(size_of_val(data.as_slice())).context("a layer that large")?;
    let (w, h, z) = (
        GLsizei::try_from(width)?,
        GLsizei::try_from(height)?,
        GLint::try_from(layer)?,
    );
    // SAFETY: a context is current; with no pack buffer bound GL writes at most `size` bytes,
    // the byte length of `data` (GL_INVALID_OPERATION instead when the layer needs more), and
    // any bytes are a valid `T`.
    unsafe {
        gl::BindBuffer(gl::PIXEL_PACK_BUFFER, 0);
        gl::PixelStorei(gl::PACK_ALIGNMENT, 4);
        let pixels = data.as_mut_ptr().cast();
        gl::GetTextureSubImage(texture, 0, 0, 0, z, w, h, 1, format, kind, size, pixels);
    }
    crate::check("reading a texture layer back")?;
    Ok(data)
}

/// The `width` x `height` RGBA8 pixels at the origin of colour attachment 0 of framebuffer
/// `framebuffer` (`glReadPixels`), `width * height * 4` bytes. Leaves the read framebuffer at 0.
///
/// # Errors
/// A GL error (an incomplete framebuffer, a size beyond it).
pub fn framebuffer(framebuffer: GLuint, (width, height): (u32, u32)) -> Result<Vec<u8>> {
    let (w, h) = (GLsizei::try_from(width)?, GLsizei::try_from(height)?);
    let mut pixels = vec![0u8; width as usize * height as usize * 4];
    // SAFETY: a context is current; with no pack buffer bound GL writes `w * h` RGBA8 pixels
    // (rows need no padding at pack alignment 4), the length of `pixels`.
    unsafe {
        gl::BindBuffer(gl::PIXEL_PACK_BUFFER, 0);
        gl::PixelStorei(gl::PACK_ALIGNMENT, 4);
        gl::BindFramebuffer(gl::READ_FRAMEBUFFER, framebuffer);
        gl::ReadBuffer(gl::COLOR_ATTACHMENT0);
        let data = pixels.as_mut_ptr().cast();
        gl::ReadPixels(0, 0, w, h, gl::RGBA, gl::UNSIGNED_BYTE, data);
        gl::BindFramebuffer(gl::READ_FRAMEBUFFER, 0);
    }
    crate::check("reading a framebuffer back")?;
    Ok(pixels)
}
