//! Questions to GL, asked only to check a registration or to explain a refusal. Each answers
//! `None` (or `false`) unless a GL context is known to be current and the `gl` crate's function
//! pointers are loaded (by [`egl`](crate::egl), or by the application with the same `gl`
//! crate); the DSA queries also need OpenGL 4.5. No query changes GL state or raises a GL error.

use super::current::gl_is_current;
use crate::gl_object::ImageTarget;

/// Whether the current context is OpenGL 4.5 or newer.
fn has_dsa() -> bool {
    if !gl::GetIntegerv::is_loaded() {
        return false;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: a GL context is current (checked by the callers) and the function is loaded;
    // GL_MAJOR_VERSION and GL_MINOR_VERSION are valid queries since OpenGL 3.0.
    unsafe {
        gl::GetIntegerv(gl::MAJOR_VERSION, &mut major);
        gl::GetIntegerv(gl::MINOR_VERSION, &mut minor);
    }
    (major, minor) >= (4, 5)
}

/// Whether `name` is a texture (or, for [`ImageTarget::Renderbuffer`], a renderbuffer).
pub(crate) fn image_exists(target: ImageTarget, name: u32) -> bool {
    if !gl_is_current() {
        return false;
    }
    if target == ImageTarget::Renderbuffer {
        // SAFETY: a GL context is current and the function is loaded; glIsRenderbuffer
        // changes no state.
        gl::IsRenderbuffer::is_loaded() && unsafe { gl::IsRenderbuffer(name) } == gl::TRUE
    } else {
        // SAFETY: as above, for glIsTexture.
        gl::IsTexture::is_loaded() && unsafe { gl::IsTexture(name) } == gl::TRUE
    }
}

/// The target texture `name` was created with (`GL_TEXTURE_TARGET`).
pub(crate) fn texture_target(name: u32) -> Option<u32> {
    if !image_exists(ImageTarget::Texture2D, name)
        || !gl::GetTextureParameteriv::is_loaded()
        || !has_dsa()
    {
        return None;
    }
    let mut target = 0;
    // SAFETY: a GL 4.5 context is current, `name` is a texture object of it, and
    // GL_TEXTURE_TARGET is a valid query for any texture object.
    unsafe { gl::GetTextureParameteriv(name, gl::TEXTURE_TARGET, &mut target) };
    u32::try_from(target).ok().filter(|&t| t != 0)
}

/// The size in bytes of buffer `name`'s storage.
pub(crate) fn buffer_size(name: u32) -> Option<i64> {
    // SAFETY: a GL context is current and the function is loaded; glIsBuffer changes no
    // state.
    let is_buffer =
        gl_is_current() && gl::IsBuffer::is_loaded() && unsafe { gl::IsBuffer(name) } == gl::TRUE;
    if !is_buffer || !gl::GetNamedBufferParameteri64v::is_loaded() || !has_dsa() {
        return None;
    }
    let mut size = -1;
    // SAFETY: a GL 4.5 context is current, `name` is a buffer object of it, and
    // GL_BUFFER_SIZE is a valid query for any buffer object.
    unsafe { gl::GetNamedBufferParameteri64v(name, gl::BUFFER_SIZE, &mut size) };
    (size >= 0).then_some(size)
}
