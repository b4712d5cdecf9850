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
/// Each entry holds the raw context handle of its `Context` (as `usize`, for `Send`), so that
/// an unmap upgrades only the entries of its own CUDA context ([`unordered_on`]).
static UNORDERED: Mutex<Vec<(usize, Weak<Context>)>> = Mutex::new(Vec::new());

/// The live `Context`s on raw context `raw` whose queue is unordered, taken out of
/// [`UNORDERED`] (whose lock is released before they are used or dropped).
fn unordered_on(raw: cuda_gl_sys::CUcontext) -> Vec<Arc<Context>> {
    // Upgraded under the lock, dropped after it: dropping the last `Arc` of a context runs its
    // `Drop`, which takes the lock.
    let list = UNORDERED.lock().unwrap_or_else(|p| p.into_inner());
    upgrade_on(&list, raw as usize, Weak::upgrade)
}

/// `upgrade` of the entries of `list` on raw context `raw`, those it gives. Only those are
/// upgraded: an upgraded `Arc` may turn out to be the last one once its owner drops it, and its
/// `Drop` then runs where the caller drops it, in an unmap; a `Context` of another CUDA context
/// (another device) would bind that context there, between the unmap's settling and its
/// `cuGraphicsUnmapResources`. (`upgrade` is `Weak::upgrade` but in the tests.)
fn upgrade_on<W, S>(list: &[(usize, W)], raw: usize, upgrade: impl Fn(&W) -> Option<S>) -> Vec<S> {
    list.iter()
        .filter(|(on, _)| *on == raw)
        .filter_map(|(_, c)| upgrade(c))
        .collect()
}

/// Drops the entries of [`UNORDERED`] whose `Context` is gone (called by a `Context`'s drop,
/// whose own entry can no longer be upgraded).
pub(super) fn forget_dropped() {
    UNORDERED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|(_, c)| c.strong_count() > 0);
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
            list.retain(|(_, c)| c.strong_count() > 0 && !c.ptr_eq(&self.this));
            if unordered {
                list.push((self.raw as usize, self.this.clone()));
            }
        }
    }

    /// Before a call that ends the life of memory that cuda-gl's private stream may touch (an
    /// unmap, which is ordered only on the caller's stream): when an earlier call gave up
    /// waiting for private work that it could not order the caller's stream after, waits for the
    /// private stream, at most the [wait limit](crate::wait_limit) (see
    /// [`PrivateQueue::settle`]); nothing otherwise. `before` names the call in the timeout.
    /// This context is bound on return (the caller bound it before).
    ///
    /// # Errors
    /// [`Error::Timeout`] past the limit: the caller must then refuse, or leak the memory; the
    /// driver's errors from binding the context and `cuStreamQuery`.
    pub(crate) fn settle_queued(&self, before: &str) -> Result<()> {
        // Every `Context` on this CUDA context, this one or another: the callers' checks
        // compare raw context handles (a copy between a mapping of this `Context` and one of
        // another on the same primary context is queued on one of them), so the work that may
        // touch the memory may be on another `Context`'s private stream (see `UNORDERED`).
        let others = unordered_on(self.raw);
        for ctx in &others {
            ctx.settle_own(before)?;
        }
        if others.is_empty() {
            return Ok(());
        }
        // Dropped here, where a last `Arc` runs its `Drop` (on this CUDA context: `unordered_on`
        // upgrades no other), then this context bound again: the caller's next call (the unmap)
        // is made in this context, whatever a `Drop` bound meanwhile.
        drop(others);
        self.bind()
    }

    /// [`settle_queued`](Self::settle_queued) for this `Context`'s own private stream.
    fn settle_own(&self, before: &str) -> Result<()> {
        let _held = self.hold_queue()?;
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

#[cfg(test)]
mod tests {
    use super::upgrade_on;
    use std::cell::RefCell;

    /// Only the entries on the asked raw context are upgraded (an upgrade of another's may run
    /// its `Drop`, binding another CUDA context inside an unmap); those whose upgrade fails
    /// (gone) are left out.
    #[test]
    fn only_the_entries_of_the_asked_context_are_upgraded() {
        // (raw handle, name, live)
        let list = [
            (0x10, ("a", true)),
            (0x20, ("b", true)),
            (0x10, ("c", false)),
            (0x30, ("d", true)),
            (0x10, ("e", true)),
        ];
        let upgraded = RefCell::new(Vec::new());
        let got = upgrade_on(&list, 0x10, |&(name, live)| {
            upgraded.borrow_mut().push(name);
            live.then_some(name)
        });
        assert_eq!(got, ["a", "e"], "the live entries of raw context 0x10");
        assert_eq!(
            upgraded.into_inner(),
            ["a", "c", "e"],
            "upgraded: only the entries of raw context 0x10"
        );
        assert!(upgrade_on(&list, 0x40, |_| Some(())).is_empty());
    }
}
