//! Framebuffer objects: one over a texture or a renderbuffer as colour attachment 0, and the
//! RGBA8 renderbuffer.

use crate::object::{Kind, Owned};
use anyhow::{Result, bail};
use gl::types::{GLsizei, GLuint};

/// What a framebuffer draws into: its colour attachment 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// Level 0 of a 2D texture.
    Texture(GLuint),
    /// A renderbuffer.
    Renderbuffer(GLuint),
}

/// A framebuffer object with `color` as colour attachment 0, complete (checked). The
/// attachment stays the caller's: delete it after the framebuffer ([`delete`]).
///
/// # Errors
/// An incomplete framebuffer (its status), or a GL error.
pub fn with_color(color: Color) -> Result<GLuint> {
    let mut name = 0;
    // SAFETY: a context is current (the crate's contract); `name` receives one name.
    unsafe { gl::GenFramebuffers(1, &mut name) };
    let framebuffer = Owned::new(Kind::Framebuffer, name);
    let attach = gl::COLOR_ATTACHMENT0;
    // SAFETY: a context is current; `framebuffer` is a fresh name, bound before its attachment
    // is set; GL checks that the attached object exists.
    let status = unsafe {
        gl::BindFramebuffer(gl::FRAMEBUFFER, name);
        match color {
            Color::Texture(texture) => {
                gl::FramebufferTexture2D(gl::FRAMEBUFFER, attach, gl::TEXTURE_2D, texture, 0);
            }
            Color::Renderbuffer(rbo) => {
                gl::FramebufferRenderbuffer(gl::FRAMEBUFFER, attach, gl::RENDERBUFFER, rbo);
            }
        }
        let status = gl::CheckFramebufferStatus(gl::FRAMEBUFFER);
        gl::BindFramebuffer(gl::FRAMEBUFFER, 0);
        status
    };
    crate::check(&format!("creating a framebuffer over {color:?}"))?;
    if status != gl::FRAMEBUFFER_COMPLETE {
        bail!("the framebuffer over {color:?} is incomplete (status {status:#06x})");
    }
    Ok(framebuffer.release())
}

/// A renderbuffer with `width` x `height` of `GL_RGBA8` storage. Delete it with
/// [`Kind::Renderbuffer`].
///
/// # Errors
/// A size too large for GL, or a GL error (out of memory).
pub fn renderbuffer_rgba8(width: u32, height: u32) -> Result<GLuint> {
    let (w, h) = (GLsizei::try_from(width)?, GLsizei::try_from(height)?);
    let mut name = 0;
    // SAFETY: a context is current; `name` receives one name, bound before its storage is
    // allocated.
    unsafe {
        gl::GenRenderbuffers(1, &mut name);
        gl::BindRenderbuffer(gl::RENDERBUFFER, name);
        gl::RenderbufferStorage(gl::RENDERBUFFER, gl::RGBA8, w, h);
        gl::BindRenderbuffer(gl::RENDERBUFFER, 0);
    }
    let renderbuffer = Owned::new(Kind::Renderbuffer, name);
    crate::check(&format!("creating a {width}x{height} RGBA8 renderbuffer"))?;
    Ok(renderbuffer.release())
}

/// Deletes framebuffer `name` (GL ignores 0 and names that are not framebuffers); its
/// attachment stays.
pub fn delete(name: GLuint) {
    Kind::Framebuffer.delete(name);
}
