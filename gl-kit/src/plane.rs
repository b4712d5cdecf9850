//! Video plane textures (`GL_R8`, `GL_RG8`, `GL_R16`, `GL_RG16`, ...): the transfer format of
//! their texels, and the state those texels move in and out under, rows tightly packed
//! ([`write`](fn@write), [`readback::plane`](crate::readback::plane)).

use anyhow::{Result, bail, ensure};
use gl::types::{GLenum, GLsizei, GLuint};

/// The pixel transfer format and type of texels of `channels` samples (1: `GL_RED`, 2:
/// `GL_RG`) of `sample_bytes` bytes each (1: `GL_UNSIGNED_BYTE`, 2: `GL_UNSIGNED_SHORT`).
///
/// # Errors
/// Another number of channels or sample bytes.
pub fn transfer(channels: usize, sample_bytes: usize) -> Result<(GLenum, GLenum)> {
    let format = match channels {
        1 => gl::RED,
        2 => gl::RG,
        _ => bail!("a plane of {channels} channels (1 or 2)"),
    };
    let kind = match sample_bytes {
        1 => gl::UNSIGNED_BYTE,
        2 => gl::UNSIGNED_SHORT,
        _ => bail!("a plane of {sample_bytes}-byte samples (1 or 2)"),
    };
    Ok((format, kind))
}

/// Replaces level `level` of the 2-D plane texture `texture`, `width` x `height`, with
/// `texels`: `channels` samples of `sample_bytes` bytes each ([`transfer`]), rows
/// tightly packed (`glTexSubImage2D` at unpack alignment 1, put back to 4), as
/// [`readback::plane`](crate::readback::plane) reads them. Leaves no pixel unpack buffer and
/// the texture unbound.
///
/// # Errors
/// Another number of channels or sample bytes, a size too large for GL, `texels` of another
/// length than the level's, or a GL error.
pub fn write(
    texture: GLuint,
    level: i32,
    (width, height): (u32, u32),
    (channels, sample_bytes): (usize, usize),
    texels: &[u8],
) -> Result<()> {
    let (format, kind) = transfer(channels, sample_bytes)?;
    let needed = width as usize * height as usize * channels * sample_bytes;
    ensure!(
        texels.len() == needed,
        "{} bytes of texels for a {width}x{height} plane level of {needed} bytes",
        texels.len()
    );
    let (w, h) = (GLsizei::try_from(width)?, GLsizei::try_from(height)?);
    let pixels = texels.as_ptr().cast();
    let unpack = (gl::PIXEL_UNPACK_BUFFER, gl::UNPACK_ALIGNMENT);
    tightly_packed(texture, unpack, || {
        // SAFETY: a context is current (the crate's contract). With no unpack buffer bound and
        // unpack alignment 1 GL reads the level's w * h texels of `channels` samples of
        // `sample_bytes` bytes, tightly packed: the length of `texels` (checked above).
        unsafe { gl::TexSubImage2D(gl::TEXTURE_2D, level, 0, 0, w, h, format, kind, pixels) };
    });
    crate::check("writing a plane texture")
}

/// Runs `move_texels` (one `glTexSubImage2D` or `glGetTexImage` of a level) with 2-D texture
/// `texture` bound, no buffer bound at `buffer` (`GL_PIXEL_UNPACK_BUFFER` or
/// `GL_PIXEL_PACK_BUFFER`) and row alignment 1 at `alignment` (`GL_UNPACK_ALIGNMENT` or
/// `GL_PACK_ALIGNMENT`): rows tightly packed in host memory. Then unbinds the texture and puts
/// the alignment back to GL's initial 4.
pub(crate) fn tightly_packed(
    texture: GLuint,
    (buffer, alignment): (GLenum, GLenum),
    move_texels: impl FnOnce(),
) {
    // SAFETY: a context is current (the crate's contract); binding buffer 0 and a texture name
    // and setting an alignment of 1 take no pointers.
    unsafe {
        gl::BindBuffer(buffer, 0);
        gl::PixelStorei(alignment, 1);
        gl::BindTexture(gl::TEXTURE_2D, texture);
    }
    move_texels();
    // SAFETY: as above: an unbinding and a valid alignment.
    unsafe {
        gl::BindTexture(gl::TEXTURE_2D, 0);
        gl::PixelStorei(alignment, 4);
    }
}
