//! The planes' drops on wgpu's GL backend over the program's GL context (the GL route, and
//! staged mode there): wgpu deletes the textures it made, and its queue's drop (when the planes
//! hold the last clone) retires work and deletes what it held, through whatever GL context is
//! current when they go. The planes are `Send`, so their drop may run on a thread where another
//! context (whose objects of those names would go instead) or none is current: there they are
//! leaked rather than dropped, with an error logged. (The plane textures of cuda-gl's check
//! their context themselves: unregistered and deleted only with it current, leaked otherwise.)

use super::{Backend, Made, WgpuVideoPlanes};
use crate::error::Result;

impl Backend {
    /// Whether the GL context wgpu's deletions for these planes would run in is current: the
    /// GL route's context, or in staged mode the program's context the device runs on; `Ok`
    /// where there is none to check (a Vulkan device, wgpu's own GL context, a context
    /// without object labels).
    ///
    /// # Errors
    /// [`Error::NoGlContext`](crate::Error::NoGlContext),
    /// [`Error::WrongGlContext`](crate::Error::WrongGlContext), naming `call`.
    pub(super) fn check_gl_current(&self, call: &'static str) -> Result<()> {
        match self {
            Backend::GlInterop(gl) => gl.check_current(call),
            Backend::Staged {
                gl: Some(owner), ..
            } => owner.check(call).map(drop),
            _ => Ok(()),
        }
    }
}

impl Drop for Made {
    fn drop(&mut self) {
        if let Err(e) = self
            .backend
            .check_gl_current("glDeleteTextures (wgpu's, not called)")
        {
            log::error!(
                "cuda-gl: wgpu video planes dropped without their GL context current: their \
                 textures are leaked, not deleted in another context: {e}"
            );
            // A clone that is never dropped keeps wgpu's texture (and its device) alive.
            self.textures
                .iter()
                .for_each(|t| std::mem::forget(t.clone()));
        }
    }
}

/// Dropped where the planes' GL context is not current, the queue and device clones are leaked
/// too (`Made`'s drop, after this, leaks the textures), so that wgpu-core's queue, when the
/// planes hold its last clone, is not dropped there (its drop calls GL).
impl Drop for WgpuVideoPlanes {
    fn drop(&mut self) {
        if self
            .made
            .backend
            .check_gl_current("wgpu's queue drop (not called)")
            .is_err()
        {
            super::super::place::leak_queue(&self.device, &self.queue);
        }
    }
}
