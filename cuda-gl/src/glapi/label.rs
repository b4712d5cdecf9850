//! Object labels (`glObjectLabel`, OpenGL 4.3 or `GL_KHR_debug`): how cuda-gl marks GL objects
//! it makes, so that it can tell them from another object that got the same name. A GL name
//! alone names no object for good: once the application deletes one (a call allowed on any
//! name of its share group), GL hands the name to the next object made, and only the label
//! cuda-gl gave its own object is gone with it. The owner check's canaries
//! ([`current`](super::current)) and the display target's objects are told apart this way.

use super::table::{GlFns, have};
use crate::error::Result;

/// Whether the current context has object labels (OpenGL 4.3 or `GL_KHR_debug`). The version
/// comes from `GL_VERSION`, which every context answers without an error (a context that got
/// a dead one's handle may be older than 3.0, where `GL_MAJOR_VERSION` raises one); the
/// extension list is read, from 3.0 on, only before 4.3.
pub(crate) fn has_labels(fns: &GlFns) -> bool {
    let version = fns.version_string();
    version >= (4, 3) || (version >= (3, 0) && fns.extensions().iter().any(|e| e == "GL_KHR_debug"))
}

/// Labels object `name` of `identifier` (`GL_TEXTURE`, `GL_BUFFER`, `GL_PROGRAM`, ...) with
/// `text`.
///
/// # Errors
/// [`Error::MissingGlFunction`](crate::Error::MissingGlFunction) without `glObjectLabel`.
pub(crate) fn label(fns: &GlFns, identifier: u32, name: u32, text: &str) -> Result<()> {
    let label = have(fns.object_label, "glObjectLabel")?;
    // SAFETY: a context is current and `name` is an object of `identifier` in it (the callers
    // just made it); the pointer and length describe `text`.
    unsafe { label(identifier, name, text.len() as i32, text.as_ptr()) };
    Ok(())
}

/// Whether the current context (of `fns`) has the object `name` of label namespace `identifier`
/// labelled `want`; `is` (`glIsTexture`, `glIsBuffer`, ...) asks whether the name is such an
/// object first, so that the label query raises no error. False without object labels.
pub(crate) fn has_labelled(
    fns: &GlFns,
    identifier: u32,
    name: u32,
    is: unsafe extern "system" fn(u32) -> u8,
    want: &str,
) -> bool {
    // A context that merely got the owner's handle may lack object labels: asked first (the
    // version costs two queries; the extension list is read only before OpenGL 4.3).
    has_labels(fns) && is_labelled(fns, identifier, name, is, want)
}

/// [`has_labelled`] in a context known to have object labels (a caller that asked
/// [`has_labels`] of it before), without asking again.
pub(crate) fn is_labelled(
    fns: &GlFns,
    identifier: u32,
    name: u32,
    is: unsafe extern "system" fn(u32) -> u8,
    want: &str,
) -> bool {
    let Some(get_label) = fns.get_object_label else {
        return false;
    };
    // SAFETY: a context is current; the glIs* queries change no state and raise no error.
    if unsafe { is(name) } != gl::TRUE {
        return false;
    }
    let mut buf = [0u8; 48];
    let mut len = 0;
    // SAFETY: `name` is an object of `identifier` in the current context (above), so GL raises
    // no error; `buf` has room for the stated size, `len` is a valid out-pointer.
    unsafe {
        get_label(
            identifier,
            name,
            buf.len() as i32,
            &mut len,
            buf.as_mut_ptr(),
        )
    };
    usize::try_from(len).is_ok_and(|n| buf.get(..n) == Some(want.as_bytes()))
}
