//! RGBA8 textures: 2D (with mip levels), arrays and 3D, with immutable storage; a mutable 2D
//! one for contexts without `glTexStorage2D`.

use crate::object::{Kind, Owned};
use anyhow::{Context as _, Result};
use gl::types::{GLenum, GLint, GLsizei, GLuint};

/// A size as GL's `GLsizei`.
fn gl_dim(value: u32) -> Result<GLsizei> {
    GLsizei::try_from(value).with_context(|| format!("{value} texels is too large for GL"))
}

/// A texture of `target` with `levels` levels of immutable `GL_RGBA8` storage, `width` x
/// `height` and, for the targets of `glTexStorage3D` (`GL_TEXTURE_3D`, `GL_TEXTURE_2D_ARRAY`),
/// `depth` slices or layers (ignored for the others, which get `glTexStorage2D`). Contents
/// undefined, sampling parameters at GL's defaults. Delete it with [`delete`].
///
/// # Errors
/// A size too large for GL, or a GL error (a size or level count GL refuses, out of memory).
pub fn storage(target: GLenum, levels: u32, size: (u32, u32, u32)) -> Result<GLuint> {
    storage_of(target, gl::RGBA8, levels, size)
}

/// [`storage`] of another sized internal format (`GL_R8`, `GL_RG16`, ...).
///
/// # Errors
/// As [`storage`].
pub fn storage_of(
    target: GLenum,
    internal: GLenum,
    levels: u32,
    (width, height, depth): (u32, u32, u32),
) -> Result<GLuint> {
    let levels = gl_dim(levels)?;
    let (w, h, d) = (gl_dim(width)?, gl_dim(height)?, gl_dim(depth)?);
    let texture = Owned::texture(generate());
    // SAFETY: a context is current (the crate's contract); `texture` is a fresh name, bound to
    // `target` before its storage is allocated; no pointer is passed.
    unsafe {
        gl::BindTexture(target, *texture);
        if matches!(target, gl::TEXTURE_3D | gl::TEXTURE_2D_ARRAY) {
            gl::TexStorage3D(target, levels, internal, w, h, d);
        } else {
            gl::TexStorage2D(target, levels, internal, w, h);
        }
        gl::BindTexture(target, 0);
    }
    let format = match internal {
        gl::RGBA8 => "RGBA8".to_owned(),
        gl::R8 => "R8".to_owned(),
        gl::RG8 => "RG8".to_owned(),
        gl::R16 => "R16".to_owned(),
        gl::RG16 => "RG16".to_owned(),
        other => format!("internal format {other:#06x}"),
    };
    crate::check(&format!(
        "creating a {width}x{height}x{depth} {format} texture of {levels} levels"
    ))?;
    Ok(texture.release())
}

/// A `width` x `height` `GL_RGBA8` 2D texture with `levels` levels of immutable storage (level
/// n is `width >> n` x `height >> n`), sampled with `filter` (`gl::NEAREST`: one texel per pixel
/// when drawn at its size, or `gl::LINEAR`) both ways. Contents undefined.
///
/// # Errors
/// As [`storage`].
pub fn rgba8(width: u32, height: u32, levels: u32, filter: GLenum) -> Result<GLuint> {
    let texture = Owned::texture(storage(gl::TEXTURE_2D, levels, (width, height, 1))?);
    set_filter(gl::TEXTURE_2D, *texture, filter);
    crate::check("setting a texture's filter")?;
    Ok(texture.release())
}

/// A `width` x `height` `GL_RGBA8` 2D array texture of `layers` layers and one level of
/// immutable storage. Contents undefined.
///
/// # Errors
/// As [`storage`].
pub fn rgba8_array(width: u32, height: u32, layers: u32) -> Result<GLuint> {
    storage(gl::TEXTURE_2D_ARRAY, 1, (width, height, layers))
}

/// A `width` x `height` `GL_RGBA8` 2D texture of one level made with `glTexImage2D` (mutable
/// storage, for contexts without `glTexStorage2D`), sampled with `filter` both ways. Contents
/// undefined.
///
/// # Errors
/// As [`storage`].
pub fn rgba8_mutable(width: u32, height: u32, filter: GLenum) -> Result<GLuint> {
    let (w, h) = (gl_dim(width)?, gl_dim(height)?);
    let texture = Owned::texture(generate());
    // SAFETY: a context is current; with no pixel unpack buffer bound (bound to 0 first) the
    // null data pointer only allocates the level.
    unsafe {
        gl::BindBuffer(gl::PIXEL_UNPACK_BUFFER, 0);
        gl::BindTexture(gl::TEXTURE_2D, *texture);
        let (format, kind) = (gl::RGBA, gl::UNSIGNED_BYTE);
        let internal = gl::RGBA8 as GLint;
        gl::TexImage2D(
            gl::TEXTURE_2D,
            0,
            internal,
            w,
            h,
            0,
            format,
            kind,
            std::ptr::null(),
        );
        gl::BindTexture(gl::TEXTURE_2D, 0);
    }
    set_filter(gl::TEXTURE_2D, *texture, filter);
    crate::check(&format!("creating a {width}x{height} RGBA8 texture"))?;
    Ok(texture.release())
}

/// Sets the minification and magnification filters of `texture` (bound to `target`) to
/// `filter`.
pub fn set_filter(target: GLenum, texture: GLuint, filter: GLenum) {
    set_parameters(
        target,
        texture,
        &[
            (gl::TEXTURE_MIN_FILTER, filter),
            (gl::TEXTURE_MAG_FILTER, filter),
        ],
    );
}

/// Sets integer parameters `(pname, value)` of `texture` (bound to `target`) with
/// `glTexParameteri`. GL refuses a bad pair with an error, left pending for the caller's
/// [`check`](fn@crate::check).
pub fn set_parameters(target: GLenum, texture: GLuint, parameters: &[(GLenum, GLenum)]) {
    // SAFETY: a context is current; no pointers are passed.
    unsafe {
        gl::BindTexture(target, texture);
        for &(pname, value) in parameters {
            gl::TexParameteri(target, pname, value as GLint);
        }
        gl::BindTexture(target, 0);
    }
}

/// Deletes texture `name` (GL ignores 0 and names that are not textures).
pub fn delete(name: GLuint) {
    Kind::Texture.delete(name);
}

/// A fresh texture name (`glGenTextures`).
fn generate() -> GLuint {
    let mut name = 0;
    // SAFETY: a context is current; `name` receives one name.
    unsafe { gl::GenTextures(1, &mut name) };
    name
}
