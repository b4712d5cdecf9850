//! The unordered queues of all `Context`s: work that cuda-gl's private streams still run and
//! that no caller's stream is ordered after ([`PrivateQueue::is_unordered`]), which the unmaps
//! of every `Context` on the same CUDA context wait for ([`Context::settle_queued`]).

use super::Context;
use crate::error::{Error, Result};
use crate::queue::PrivateQueue;
use std::sync::{Arc, Mutex, Weak};

/// The `Context`s whose private queue is unordered ([`PrivateQueue::is_unordered`]): work on
/// it that the caller's stream is not ordered after may still run.
///
/// Process-wide, because the unordered flag must hold per CUDA context, not per `Context`
/// object: two `Context`s can share one primary context (`Context::new` twice, or
/// `from_cudarc` beside `new`), each with its own private queue, and cuda-gl's checks accept
/// them as one (a copy between mappings of both, a batch of both), comparing raw context
/// handles. An unmap of a mapping of one must then wait for the other's unordered work too.
/// Keeping one queue per raw handle instead would hand a new `Context` the dangling stream of
/// a primary context that was reset and made again at the same address; this list holds only
/// `Context` objects, each with the streams it made, and is consulted by unmaps
/// ([`Context::settle_queued`]), which find it empty unless a run gave up.
static UNORDERED: Mutex<Vec<Weak<Context>>> = Mutex::new(Vec::new());

/// The live `Context`s on raw context `raw` whose queue is unordered, taken out of
/// [`UNORDERED`] (whose lock is released before they are used or dropped).
fn unordered_on(raw: cuda_gl_sys::CUcontext) -> Vec<Arc<Context>> {
    // All upgraded under the lock, filtered after it: dropping the last `Arc` of another
    // context runs its `Drop`, which takes the lock.
    let all: Vec<Arc<Context>> = UNORDERED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    all.into_iter().filter(|c| c.raw == raw).collect()
}

/// Drops the entries of [`UNORDERED`] whose `Context` is gone (called by a `Context`'s drop,
/// whose own entry can no longer be upgraded).
pub(super) fn forget_dropped() {
    UNORDERED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|c| c.strong_count() > 0);
}

impl Context {
    /// [`finish_queued`](Self::finish_queued) after the ordering of cuda-gl's queued work with
    /// a caller's stream was lost (see [`PrivateQueue::finish_marking`]): a wait that fails
    /// leaves the queue unordered, so that unmaps wait for that work.
    ///
    /// # Errors
    /// As [`finish_queued`](Self::finish_queued).
    #[cfg(feature = "cudarc")]
    pub(crate) fn finish_queued_marking(&self) -> Result<()> {
        self.with_queue(PrivateQueue::finish_marking)
    }

    /// Makes [`UNORDERED`] agree with `queue` (this context's, locked by the caller) when its
    /// unordered flag changed. Under the queue's lock, so that the list holds this context
    /// whenever its queue is unordered; the list's lock is taken inside the queue's, never the
    /// other way round.
    pub(super) fn relist(&self, queue: &mut PrivateQueue) {
        if let Some(unordered) = queue.relist() {
            let mut list = UNORDERED.lock().unwrap_or_else(|p| p.into_inner());
            list.retain(|c| c.strong_count() > 0 && !c.ptr_eq(&self.this));
            if unordered {
                list.push(self.this.clone());
            }
        }
    }

    /// Before a call that ends the life of memory that cuda-gl's private stream may touch (an
    /// unmap, which is ordered only on the caller's stream): when an earlier call gave up
    /// waiting for private work that it could not order the caller's stream after, waits for the
    /// private stream, at most the [wait limit](crate::wait_limit) (see
    /// [`PrivateQueue::settle`]); nothing otherwise. `before` names the call in the timeout.
    ///
    /// # Errors
    /// [`Error::Timeout`] past the limit: the caller must then refuse, or leak the memory; the
    /// driver's errors from binding the context and `cuStreamQuery`.
    pub(crate) fn settle_queued(&self, before: &str) -> Result<()> {
        // Every `Context` on this CUDA context, this one or another: the callers' checks
        // compare raw context handles (a copy between a mapping of this `Context` and one of
        // another on the same primary context is queued on one of them), so the work that may
        // touch the memory may be on another `Context`'s private stream (see `UNORDERED`).
        for ctx in unordered_on(self.raw) {
            ctx.settle_own(before)?;
        }
        Ok(())
    }

    /// [`settle_queued`](Self::settle_queued) for this `Context`'s own private stream.
    fn settle_own(&self, before: &str) -> Result<()> {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if !queue.is_unordered() {
            return Ok(());
        }
        self.bind()?;
        let settled = queue.settle();
        self.relist(&mut queue);
        settled.map_err(|e| match e {
            Error::Timeout { what, timeout } => Error::Timeout {
                what: format!(
                    "{what}, before {before}: an earlier call of cuda-gl gave up waiting for its \
                     copy and could not order your stream after it, so the copy may still touch \
                     the memory"
                ),
                timeout,
            },
            other => other,
        })
    }
}
