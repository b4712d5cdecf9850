//! GL fence sync objects: placed after GL's commands, waited on by the CPU, deleted only with
//! their own context current.

use super::current::GlOwner;
use super::table::{GlFns, GlSync};
use crate::error::{Error, Result};
use std::time::Duration;

/// A GL fence sync object, deleted on drop (leaked when its context is not current).
///
/// Neither `Send` nor `Sync` (the raw `GLsync` pointer): its drop calls `glDeleteSync`, which
/// goes to the context current on the dropping thread.
#[derive(Debug)]
pub(crate) struct Fence {
    owner: GlOwner,
    sync: GlSync,
}

impl Fence {
    /// Places a fence after the GL commands issued so far (`glFenceSync`) and flushes them
    /// (`glFlush`), so that the GPU starts them now.
    ///
    /// # Errors
    /// As [`GlOwner::check`]; [`Error::GlCall`] when `glFenceSync` fails.
    pub(crate) fn place(owner: GlOwner) -> Result<Fence> {
        let fns = owner.check("glFenceSync (not called)")?;
        fns.take_pending_errors("glFenceSync");
        // SAFETY: the condition and flags are the only values glFenceSync accepts; the owning
        // GL context is current (checked above).
        let sync = unsafe { (fns.fence_sync)(gl::SYNC_GPU_COMMANDS_COMPLETE, 0) };
        if sync.is_null() {
            fns.check("glFenceSync")?;
            return Err(Error::GlCall {
                call: "glFenceSync",
                code: gl::INVALID_OPERATION,
            });
        }
        let fence = Fence { owner, sync };
        // SAFETY: no arguments; the owning context is current (above).
        unsafe { (fns.flush)() };
        Ok(fence)
    }

    /// Whether the fence is signalled, without waiting and without flushing (it was flushed
    /// when placed).
    ///
    /// # Errors
    /// As [`GlOwner::check`]; [`Error::GlCall`] when the status query fails.
    pub(crate) fn signalled(&self) -> Result<bool> {
        let fns = self.owner.check("glClientWaitSync (not called)")?;
        // A failed wait's error code is read after it: not one the application left pending.
        fns.take_pending_errors("glClientWaitSync");
        // SAFETY: a live sync object of the owning context, which is current (above); a
        // timeout of 0 only asks for the status.
        let status = unsafe { (fns.client_wait_sync)(self.sync, 0, 0) };
        wait_status(fns, status)
    }

    /// Waits on the CPU until the fence is signalled, for at most `timeout`.
    ///
    /// # Errors
    /// As [`GlOwner::check`]; [`Error::Timeout`] naming `what()`; [`Error::GlCall`] when the
    /// wait fails.
    pub(crate) fn client_wait(
        &self,
        timeout: Duration,
        what: impl FnOnce() -> String,
    ) -> Result<()> {
        let fns = self.owner.check("glClientWaitSync (not called)")?;
        let ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        fns.take_pending_errors("glClientWaitSync");
        // SAFETY: a live sync object of the owning context, which is current (above).
        let status = unsafe { (fns.client_wait_sync)(self.sync, gl::SYNC_FLUSH_COMMANDS_BIT, ns) };
        if wait_status(fns, status)? {
            Ok(())
        } else {
            Err(Error::Timeout {
                what: what(),
                timeout,
            })
        }
    }
}

/// `glClientWaitSync`'s status as signalled (`true`) or not yet (`false`), or its error.
fn wait_status(fns: &GlFns, status: u32) -> Result<bool> {
    match status {
        gl::ALREADY_SIGNALED | gl::CONDITION_SATISFIED => Ok(true),
        gl::TIMEOUT_EXPIRED => Ok(false),
        _ => {
            // SAFETY: no arguments; the context is current (callers).
            let code = unsafe { (fns.get_error)() };
            Err(Error::GlCall {
                call: "glClientWaitSync",
                code: if code == gl::NO_ERROR { status } else { code },
            })
        }
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        match self.owner.check("glDeleteSync (not called)") {
            // SAFETY: the sync object came from glFenceSync and is deleted once, with its
            // context current (checked).
            Ok(fns) => unsafe { (fns.delete_sync)(self.sync) },
            Err(e) => log::error!("cuda-gl: a GL fence is leaked, not deleted: {e}"),
        }
    }
}
