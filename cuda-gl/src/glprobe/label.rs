//! GL debug labels (`glObjectLabel`, `glGetObjectLabel`: OpenGL 4.3 or `KHR_debug`), through
//! the `gl` crate's function pointers. Each call is made only when a GL context is known to be
//! current and the entry point is loaded.
use super::current;
use crate::gl_object::{ImageTarget, Kind};

fn identifier(kind: Kind) -> u32 {
    match kind {
        Kind::Buffer => gl::BUFFER,
        Kind::Image(ImageTarget::Renderbuffer) => gl::RENDERBUFFER,
        Kind::Image(_) => gl::TEXTURE,
    }
}

fn usable() -> bool {
    current::gl_is_current()
        && gl::GetObjectLabel::is_loaded()
        && gl::ObjectLabel::is_loaded()
        && gl::GetError::is_loaded()
}

/// Takes GL's pending error, so that the next check sees only the label call's.
fn take_error() -> u32 {
    // SAFETY: a context is current and the function is loaded (`usable`).
    unsafe { gl::GetError() }
}

/// The label of object `name`, `None` when it cannot be read.
pub(crate) fn read(kind: Kind, name: u32) -> Option<String> {
    if !usable() {
        return None;
    }
    let earlier = take_error();
    let mut buf = vec![0u8; 256];
    let mut len = 0;
    // SAFETY: a context is current and the function is loaded; `buf` has room for the
    // stated size including the terminating NUL; `len` is a valid out-pointer. A name that
    // is not an object of `kind` raises GL_INVALID_VALUE and writes nothing.
    unsafe {
        gl::GetObjectLabel(
            identifier(kind),
            name,
            buf.len() as i32,
            &mut len,
            buf.as_mut_ptr().cast(),
        );
    }
    let failed = take_error() != gl::NO_ERROR;
    if earlier != gl::NO_ERROR {
        log::debug!("cuda-gl: discarded an earlier OpenGL error 0x{earlier:04x}");
    }
    if failed {
        return None;
    }
    buf.truncate(usize::try_from(len).ok()?.min(buf.len()));
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Sets the label of object `name` (an empty label removes it); whether GL took it.
pub(crate) fn write(kind: Kind, name: u32, label: &str) -> bool {
    if !usable() {
        return false;
    }
    take_error();
    // SAFETY: a context is current and the function is loaded; the pointer and length
    // describe `label`'s bytes (no NUL needed with an explicit length).
    unsafe {
        gl::ObjectLabel(
            identifier(kind),
            name,
            label.len() as i32,
            label.as_ptr().cast(),
        );
    }
    let written = take_error() == gl::NO_ERROR;
    if written && gl::Finish::is_loaded() {
        // Another context sees a change to an object's state only once the commands that made
        // it have completed: the tag must be there before a second registration reads it.
        // SAFETY: a context is current and the function is loaded; glFinish takes no arguments.
        unsafe { gl::Finish() };
    }
    written
}
