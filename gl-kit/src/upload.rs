//! Pixels into a texture: `glTexSubImage2D` (or `glTexSubImage3D`, every layer) of a whole RGBA8
//! level 0, from host memory or from a pixel buffer on the GPU. (A video plane's level:
//! [`plane::write`](crate::plane::write).)

use anyhow::{Result, ensure};
use gl::types::{GLenum, GLsizei, GLuint};
use std::ffi::c_void;

/// Where the pixels come from.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// Host memory: RGBA8 texels, bottom row first, layer after layer.
    Host(&'a [u8]),
    /// A buffer object, bound as the pixel unpack buffer, from its first byte: a copy on the GPU.
    /// GL refuses a buffer smaller than the image (`GL_INVALID_OPERATION`).
    Buffer(GLuint),
}

impl Source<'_> {
    /// The pixel unpack buffer to bind and the pixel pointer for an upload of `needed` bytes
    /// (`what`, for the error): host pixels with no buffer bound, checked to be long enough, or
    /// offset 0 into the buffer.
    fn unpack(
        self,
        needed: usize,
        what: impl FnOnce() -> String,
    ) -> Result<(GLuint, *const c_void)> {
        match self {
            Source::Host(bytes) => {
                ensure!(
                    bytes.len() >= needed,
                    "{} bytes of pixels for {}",
                    bytes.len(),
                    what()
                );
                Ok((0, bytes.as_ptr().cast()))
            }
            Source::Buffer(buffer) => Ok((buffer, std::ptr::null())),
        }
    }
}

/// Replaces level 0 of `texture` (bound to `target`: `GL_TEXTURE_2D`, or `GL_TEXTURE_2D_ARRAY`
/// and `GL_TEXTURE_3D` with all `depth` layers or slices), `width` x `height` (x `depth`), with
/// RGBA8 pixels from `source`. Leaves the pixel unpack buffer and the texture unbound. Reads no
/// GL error (a timed loop may call it): the caller's next [`check`](fn@crate::check) sees any.
///
/// # Errors
/// A size too large for GL, or host pixels shorter than the image.
pub fn rgba8(
    target: GLenum,
    texture: GLuint,
    (width, height, depth): (u32, u32, u32),
    source: Source<'_>,
) -> Result<()> {
    let (w, h, d) = (
        GLsizei::try_from(width)?,
        GLsizei::try_from(height)?,
        GLsizei::try_from(depth)?,
    );
    let needed = width as usize * height as usize * depth as usize * 4;
    let (unpack, pixels) = source.unpack(needed, || {
        format!("a {width}x{height}x{depth} RGBA8 image of {needed} bytes")
    })?;
    let (format, kind) = (gl::RGBA, gl::UNSIGNED_BYTE);
    // SAFETY: a context is current (the crate's contract). With buffer 0 bound the pointer is
    // host memory of at least the image's size (checked above); with a buffer bound it is offset
    // 0 into it, and GL checks the image against the buffer's size. Rows of RGBA8 texels are
    // whole multiples of the unpack alignment 4.
    unsafe {
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, unpack);
        gl::PixelStorei(gl::UNPACK_ALIGNMENT, 4);
        gl::BindTexture(target, texture);
        if matches!(target, gl::TEXTURE_3D | gl::TEXTURE_2D_ARRAY) {
            gl::TexSubImage3D(target, 0, 0, 0, 0, w, h, d, format, kind, pixels);
        } else {
            gl::TexSubImage2D(target, 0, 0, 0, w, h, format, kind, pixels);
        }
        gl::BindTexture(target, 0);
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
    }
    Ok(())
}

/// Replaces rows `first..first + rows` of level 0 of the 2-D texture `texture`, `width` texels
/// wide, with tightly packed RGBA8 pixels from `source` (`glTexSubImage2D` of a band; a buffer
/// is read from its first byte). Leaves the pixel unpack buffer and the texture unbound; reads
/// no GL error, as [`rgba8`].
///
/// # Errors
/// A size too large for GL, or host pixels shorter than the rows.
pub fn rgba8_rows(
    texture: GLuint,
    width: u32,
    (first, rows): (u32, u32),
    source: Source<'_>,
) -> Result<()> {
    let needed = width as usize * rows as usize * 4;
    let (unpack, pixels) = source.unpack(needed, || {
        format!("{rows} rows of {width} RGBA8 texels ({needed} bytes)")
    })?;
    let (w, y, h) = (
        GLsizei::try_from(width)?,
        GLsizei::try_from(first)?,
        GLsizei::try_from(rows)?,
    );
    // SAFETY: a context is current (the crate's contract). With buffer 0 bound the pointer is
    // host memory of at least the rows' size (checked above), read before the call returns;
    // with a buffer bound it is offset 0 into it, and GL checks the rows against the buffer's
    // size. GL checks the rows against the texture's size.
    unsafe {
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, unpack);
        gl::PixelStorei(gl::UNPACK_ALIGNMENT, 4);
        gl::BindTexture(gl::TEXTURE_2D, texture);
        gl::TexSubImage2D(
            gl::TEXTURE_2D,
            0,
            0,
            y,
            w,
            h,
            gl::RGBA,
            gl::UNSIGNED_BYTE,
            pixels,
        );
        gl::BindTexture(gl::TEXTURE_2D, 0);
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
    }
    Ok(())
}
