//! What the current context says about itself: `glGetString` and its OpenGL version.

use anyhow::{Result, ensure};
use gl::types::GLenum;
use std::ffi::CStr;

/// `glGetString(name)` (`gl::VENDOR`, `gl::RENDERER`, `gl::VERSION`, ...), or `None` where GL
/// returns null (an unknown name).
pub fn string(name: GLenum) -> Option<String> {
    // SAFETY: a context is current (the crate's contract); glGetString takes no pointers.
    let s = unsafe { gl::GetString(name) };
    if s.is_null() {
        return None;
    }
    // SAFETY: a non-null glGetString result is a NUL-terminated string that GL keeps alive; it
    // is copied out at once.
    let text = unsafe { CStr::from_ptr(s.cast()) };
    Some(text.to_string_lossy().into_owned())
}

/// The context's OpenGL version, `(major, minor)` (`GL_MAJOR_VERSION`, OpenGL 3.0 and newer;
/// `(0, 0)` on an older context, with its GL error left pending).
pub fn version() -> (i32, i32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: a context is current; both out-pointers are valid for one integer.
    unsafe {
        gl::GetIntegerv(gl::MAJOR_VERSION, &mut major);
        gl::GetIntegerv(gl::MINOR_VERSION, &mut minor);
    }
    (major, minor)
}

/// Fails unless the context is OpenGL `major.minor` or newer.
///
/// # Errors
/// A GL error while asking, or an older context (naming both versions).
pub fn require_version(major: i32, minor: i32) -> Result<()> {
    let have = version();
    crate::check("querying the OpenGL version")?;
    ensure!(
        have >= (major, minor),
        "OpenGL {major}.{minor} is needed, but the context is {}.{}",
        have.0,
        have.1
    );
    Ok(())
}
