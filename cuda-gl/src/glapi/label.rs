//! GL debug labels of registered objects (`glObjectLabel`, `glGetObjectLabel`: OpenGL 4.3 or
//! `GL_KHR_debug`, which every context with an owner has: see [`current`](super::current)).
//! Each call takes GL's pending error first, so that only its own is seen; an earlier error is
//! logged at debug level.

use super::table::GlFns;
use crate::gl_object::{ImageTarget, Kind};

fn identifier(kind: Kind) -> u32 {
    match kind {
        Kind::Buffer => gl::BUFFER,
        Kind::Image(ImageTarget::Renderbuffer) => gl::RENDERBUFFER,
        Kind::Image(_) => gl::TEXTURE,
    }
}

/// Takes GL's pending error, so that the next check sees only the label call's.
fn take_error(fns: &GlFns) -> u32 {
    // SAFETY: a context is current (callers' contract); no arguments.
    unsafe { (fns.get_error)() }
}

/// The label of object `name`, `None` when it cannot be read (not an object of `kind`).
pub(crate) fn read(fns: &GlFns, kind: Kind, name: u32) -> Option<String> {
    let get_label = fns.get_object_label?;
    let earlier = take_error(fns);
    let mut buf = vec![0u8; 256];
    let mut len = 0;
    // SAFETY: a context is current; `buf` has room for the stated size including the
    // terminating NUL; `len` is a valid out-pointer. A name that is not an object of `kind`
    // raises GL_INVALID_VALUE and writes nothing.
    unsafe {
        get_label(
            identifier(kind),
            name,
            buf.len() as i32,
            &mut len,
            buf.as_mut_ptr(),
        );
    }
    let failed = take_error(fns) != gl::NO_ERROR;
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
pub(crate) fn write(fns: &GlFns, kind: Kind, name: u32, label: &str) -> bool {
    let Some(set_label) = fns.object_label else {
        return false;
    };
    take_error(fns);
    // SAFETY: a context is current; the pointer and length describe `label`'s bytes (no NUL
    // needed with an explicit length).
    unsafe { set_label(identifier(kind), name, label.len() as i32, label.as_ptr()) };
    let written = take_error(fns) == gl::NO_ERROR;
    if written {
        // Another context sees a change to an object's state only once the commands that made
        // it have completed: the tag must be there before a second registration reads it.
        // SAFETY: a context is current; glFinish takes no arguments.
        unsafe { (fns.finish)() };
    }
    written
}
