//! The filling of fresh memory (a new allocation's zeroing), on a non-blocking stream of its
//! own, waited for within a limit.
//!
//! Memory that was just allocated is known to no other work, so its fill needs no ordering with
//! any: it goes on a new non-blocking stream, and the wait polls that stream alone. Queued on
//! the legacy default stream instead (`cuMemsetD8`), the fill would run after every kernel on a
//! blocking stream, and its wait would give up behind any such kernel longer than the limit,
//! failing (and leaking) every allocation made meanwhile.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::queue::RelaxedCapture;
use crate::result;
use crate::stream::{Stream, StreamFlags};
use crate::wait::{poll_within, wait_limit};
use cuda_gl_sys as sys;
use std::sync::Arc;

/// How a [`fill_fresh`] failed, which says whether the memory may be freed.
#[derive(Debug)]
pub(crate) enum FillError {
    /// Nothing of the fill was queued (no stream, or the queueing call failed): nothing uses the
    /// memory.
    Idle(Error),
    /// The fill was queued but its wait gave up or failed: it may still write the memory, which
    /// must be leaked, not freed under it.
    Running(Error),
}

impl FillError {
    /// The error, after `leak` ran if the fill may still write the memory.
    pub(crate) fn leaking(self, leak: impl FnOnce()) -> Error {
        match self {
            FillError::Idle(e) => e,
            FillError::Running(e) => {
                leak();
                e
            }
        }
    }
}

/// Queues `fill` (one call that writes only memory allocated by the caller and not yet handed to
/// any other work) on a new non-blocking stream of `ctx`, and waits for it, polling `cuStreamQuery`
/// for at most the [wait limit](crate::wait_limit); `what` names the fill in a timeout. The calls
/// run in the relaxed capture mode, so that another thread's capture does not fail the wait. `fill`
/// gets the stream, and the context is bound when it runs.
///
/// # Errors
/// [`FillError::Idle`] with the driver's errors from setting the capture mode, binding the
/// context, creating the stream, or with `fill`'s own error (its one call queued nothing);
/// [`FillError::Running`] with [`Error::Timeout`] past the limit (only the GPU being full of
/// other work can hold the fill up that long) or the driver's error from `cuStreamQuery` (an
/// earlier kernel's fault).
pub(crate) fn fill_fresh(
    ctx: &Arc<Context>,
    what: &str,
    fill: impl FnOnce(sys::CUstream) -> Result<()>,
) -> std::result::Result<(), FillError> {
    // Declared first, dropped last: the stream is destroyed in the relaxed mode too.
    let _relaxed = RelaxedCapture::enter().map_err(FillError::Idle)?;
    // Destroyed on return, whatever runs on it: the driver releases a stream with work pending
    // once that work has run.
    let stream = Stream::new(ctx, StreamFlags::NonBlocking).map_err(FillError::Idle)?;
    fill(stream.raw()).map_err(FillError::Idle)?;
    poll_within(wait_limit(), what, || {
        // SAFETY: a live stream of `ctx`, which `Stream::new` bound on this thread.
        Ok(unsafe { result::stream::query(stream.raw()) }?)
    })
    .map_err(FillError::Running)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic)]

    use super::*;

    fn timeout() -> Error {
        Error::Timeout {
            what: "the test's fill".into(),
            timeout: std::time::Duration::from_secs(10),
        }
    }

    #[test]
    fn a_fill_that_may_still_run_leaks_and_one_that_never_ran_does_not() {
        let mut leaked = false;
        let e = FillError::Running(timeout()).leaking(|| leaked = true);
        assert!(leaked, "a fill that may still run was not leaked");
        assert!(matches!(e, Error::Timeout { .. }), "{e:?}");
        let e = FillError::Idle(timeout()).leaking(|| panic!("leaked memory nothing uses"));
        assert!(matches!(e, Error::Timeout { .. }), "{e:?}");
    }
}
