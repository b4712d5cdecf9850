//! GL errors: what `glGetError` has pending, as an error that says what was being done.

use anyhow::{Result, bail};
use gl::types::GLenum;

/// At most this many pending errors are read at once: a lost context may report one forever.
const MAX_PENDING: usize = 8;

/// The names of GL's error codes.
const NAMES: [(GLenum, &str); 8] = [
    (gl::INVALID_ENUM, "GL_INVALID_ENUM"),
    (gl::INVALID_VALUE, "GL_INVALID_VALUE"),
    (gl::INVALID_OPERATION, "GL_INVALID_OPERATION"),
    (gl::STACK_OVERFLOW, "GL_STACK_OVERFLOW"),
    (gl::STACK_UNDERFLOW, "GL_STACK_UNDERFLOW"),
    (gl::OUT_OF_MEMORY, "GL_OUT_OF_MEMORY"),
    (
        gl::INVALID_FRAMEBUFFER_OPERATION,
        "GL_INVALID_FRAMEBUFFER_OPERATION",
    ),
    (gl::CONTEXT_LOST, "GL_CONTEXT_LOST"),
];

/// Fails when GL has errors pending, naming each (`GL_INVALID_VALUE (0x0501)`) and `what` was
/// being done. Reads them all (up to eight), so none is left pending either way.
///
/// # Errors
/// `OpenGL error GL_INVALID_VALUE (0x0501) while {what}`, with every pending error.
pub fn check(what: &str) -> Result<()> {
    let codes = take_errors();
    if codes.is_empty() {
        return Ok(());
    }
    let named: Vec<String> = codes
        .iter()
        .map(|&code| format!("{} ({code:#06x})", error_name(code)))
        .collect();
    bail!("OpenGL error {} while {what}", named.join(", "))
}

/// Reads and so clears GL's pending error codes (up to eight), oldest first; empty when none
/// is pending. For a caller that expects an error, or clears what an earlier step left.
pub fn take_errors() -> Vec<GLenum> {
    let mut codes = Vec::new();
    while codes.len() < MAX_PENDING {
        // SAFETY: a context is current (the crate's contract); glGetError takes no pointers.
        let code = unsafe { gl::GetError() };
        if code == gl::NO_ERROR {
            break;
        }
        codes.push(code);
    }
    codes
}

/// The name of GL error `code` (`GL_INVALID_ENUM`, ...), or `(unknown)`.
pub fn error_name(code: GLenum) -> &'static str {
    NAMES
        .iter()
        .find(|(known, _)| *known == code)
        .map_or("(unknown)", |(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::error_name;

    #[test]
    fn names_the_codes() {
        assert_eq!(error_name(0x0501), "GL_INVALID_VALUE");
        assert_eq!(error_name(0x0507), "GL_CONTEXT_LOST");
        assert_eq!(error_name(0x1234), "(unknown)");
    }
}
