//! Tests' headless GL: whatever this machine has, with no CUDA (Mesa's llvmpipe on CI and on
//! machines without NVIDIA's EGL, NVIDIA's GL on a GPU host), or a skip with the reason where
//! it has no EGL and none is required.
#![allow(clippy::panic)]

use super::{EglError, HeadlessConfig, HeadlessContext};

/// Whether a machine without a usable GL must fail these tests rather than skip them: on a GPU
/// host (`CUDA_GL_REQUIRE_GPU=1`), or under Mesa there (`CUDA_GL_REQUIRE_MESA=1`).
pub(crate) fn required() -> bool {
    ["CUDA_GL_REQUIRE_GPU", "CUDA_GL_REQUIRE_MESA"]
        .iter()
        .any(|knob| std::env::var(knob).is_ok_and(|v| v == "1"))
}

/// A headless GL context of `config` current on this thread, or `None` (after saying why) where
/// this machine has no EGL library and none is required.
pub(crate) fn any_gl_with(test: &str, config: &HeadlessConfig) -> Option<HeadlessContext> {
    match HeadlessContext::any_gl_with(config) {
        Ok(gl) => Some(gl),
        Err(e @ EglError::LibraryNotFound { .. }) if !required() => {
            eprintln!("{test}: skipped, no EGL: {e}");
            None
        }
        Err(e) => panic!("{test}: HeadlessContext::any_gl_with failed: {e}"),
    }
}

/// [`any_gl_with`] the default configuration.
pub(crate) fn any_gl(test: &str) -> Option<HeadlessContext> {
    any_gl_with(test, &HeadlessConfig::default())
}
