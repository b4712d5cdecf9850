//! cuda-gl's owner check (`glapi::GlOwner`) against a context that reports no GL errors, on
//! whatever headless GL this machine has (Mesa's llvmpipe here):
//! `EGL_KHR_create_context_no_error`.
#![allow(clippy::unwrap_used, clippy::panic)]

use super::HeadlessConfig;
use super::test_gl::any_gl_with;
use crate::error::Error;
use crate::glapi::{GlOwner, current_gl};

/// `GL_CONTEXT_FLAG_NO_ERROR_BIT_KHR`.
const NO_ERROR_BIT: i32 = 0x8;

/// A context made without error checking (`KHR_no_error`) reports no GL error and checks no
/// call: cuda-gl's error checks would pass whatever GL refused, and the calls it relies on GL
/// to refuse (a read past a buffer's end, a binding of a deleted name) would be undefined
/// behaviour. The owner check refuses such a context before cuda-gl makes any call in it.
#[test]
fn a_context_without_gl_errors_is_refused() {
    let test = "a_context_without_gl_errors_is_refused";
    let config = HeadlessConfig {
        no_error: true,
        ..HeadlessConfig::default()
    };
    let Some(gl) = any_gl_with(test, &config) else {
        return;
    };
    let (_, _, fns) = current_gl(test).unwrap();
    let mut flags = 0;
    // SAFETY: a context is current (above); GL_CONTEXT_FLAGS is a valid query since OpenGL
    // 3.0 (the config asks for 4.5 or 3.3); a valid out-pointer.
    unsafe { (fns.get_integerv)(gl::CONTEXT_FLAGS, &mut flags) };
    if flags & NO_ERROR_BIT == 0 {
        eprintln!(
            "{test}: skipped, {} made a context with error checking (flags {flags:#x})",
            gl.renderer()
        );
        return;
    }
    match GlOwner::current(test) {
        Err(e @ Error::GlNoErrorContext { call }) => {
            assert_eq!(call, test);
            assert!(e.to_string().contains("KHR_no_error"), "{e}");
        }
        other => panic!("{test}: a KHR_no_error context was not refused: {other:?}"),
    }
}
