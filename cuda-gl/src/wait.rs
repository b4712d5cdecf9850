//! cuda-gl's own waits for the GPU, each with a limit (most: [`wait_limit`]), and the loop that
//! polls a query (`cuEventQuery`, `cuStreamQuery`) until it answers or the limit passes. The
//! driver's blocking waits (`cuStreamSynchronize`, `cuEventSynchronize`) have no timeout, so a
//! kernel that never ends would hang the thread in them; a polled wait gives up with
//! [`Error::Timeout`] instead, and the caller leaks what the work may still use.

use crate::error::{Error, Result};
use crate::result;
use cuda_gl_sys as sys;
use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Condvar, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

pub(crate) use crate::wait_limit::wait_limit;

/// Polls `finished` until it answers `true`, for at most `limit` (a query that answers `true`
/// at once never times out, whatever the limit).
///
/// It polls without pausing for the first 100 µs (short waits, such as a staged display band's
/// copy, end within microseconds of the work), then sleeps between polls, so a long wait costs
/// a little latency (a sleep lasts at least the system's timer slack, 50 µs by default on Linux)
/// rather than a busy core.
///
/// # Errors
/// [`Error::Timeout`] naming `what` when `finished` has not answered `true` within `limit`;
/// `finished`'s own error, at once.
pub(crate) fn poll_within(
    limit: Duration,
    what: &str,
    mut finished: impl FnMut() -> Result<bool>,
) -> Result<()> {
    const SPIN: Duration = Duration::from_micros(100);
    let start = Instant::now();
    let mut pause = Duration::from_micros(1);
    while !finished()? {
        let waited = start.elapsed();
        if waited >= limit {
            return Err(Error::Timeout {
                what: what.into(),
                timeout: limit,
            });
        }
        if waited < SPIN {
            std::hint::spin_loop();
            continue;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_micros(50));
    }
    Ok(())
}

/// How long a wait for a whole context made by a `Drop` gives the earlier waits that gave up on
/// it to end (see [`Abandoned`]) before it gives up too.
pub(crate) const ABANDONED_GRACE: Duration = Duration::from_millis(100);

thread_local! {
    /// How many [`InDrop`] marks this thread holds.
    static IN_DROP: Cell<u32> = const { Cell::new(0) };
}

/// Marks the calling thread, while it lives, as running a `Drop` that waits for the GPU (and
/// leaks what it cannot wait for). A wait for a whole context made under it gives the earlier
/// waits that gave up only [`ABANDONED_GRACE`], so that the drops of several objects behind one
/// stuck kernel take one limit together; any other wait is a call's, whose caller gets an
/// error rather than a leak, and it waits for them as long as its own limit allows: a kernel
/// that runs past one wait's limit and then ends must not fail every call made meanwhile.
/// A thread-local mark rather than an argument: the drops reach these waits through the
/// recoveries that calls use too (a leaked guard's, a ring's `wait_idle`).
#[must_use = "the mark lasts while the value lives"]
pub(crate) struct InDrop(PhantomData<*const ()>);

impl InDrop {
    pub(crate) fn enter() -> InDrop {
        IN_DROP.with(|n| n.set(n.get().saturating_add(1)));
        InDrop(PhantomData)
    }
}

impl Drop for InDrop {
    fn drop(&mut self) {
        IN_DROP.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

/// How long a wait for a whole context with `limit` waits for the earlier waits that gave up on
/// it and still wait: [`ABANDONED_GRACE`] (at most `limit`) under an [`InDrop`] mark, else its
/// whole limit (they must end before any new wait can, so waiting for them costs it nothing).
pub(crate) fn abandoned_grace(limit: Duration) -> Duration {
    if IN_DROP.with(Cell::get) > 0 {
        limit.min(ABANDONED_GRACE)
    } else {
        limit
    }
}

/// A wait on a thread of its own (`cuCtxSynchronize`, which has no timeout) is still waiting.
pub(crate) const WAITING: u8 = 0;
/// Its thread's wait has ended (and its answer was sent).
const ANSWERED: u8 = 1;
/// Its caller gave up on it: the thread still waits, and is counted in [`Abandoned`].
const ABANDONED: u8 = 2;

/// The waits for a whole context that gave up and whose threads still wait: blocked in
/// `cuCtxSynchronize` until the work queued before them has ended. While one is, the context is
/// not idle, and a new wait for it cannot end before that work does: the new wait gives them
/// [`ABANDONED_GRACE`] to end (they end within microseconds of the work) and otherwise gives up
/// at once, rather than wait a whole limit again for work an earlier wait gave up on (the drops
/// of a display target's or a ring's objects would otherwise each add a limit of their own).
#[derive(Debug, Default)]
pub(crate) struct Abandoned {
    count: Mutex<usize>,
    ended: Condvar,
}

impl Abandoned {
    /// Whether no abandoned wait is left, after waiting at most `grace` for them to end.
    pub(crate) fn settled_within(&self, grace: Duration) -> bool {
        let count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        let (count, _) = (self.ended)
            .wait_timeout_while(count, grace, |n| *n > 0)
            .unwrap_or_else(PoisonError::into_inner);
        *count == 0
    }

    /// Gives up on the wait whose state is `state` ([`WAITING`] until its thread answers):
    /// `true` when it is counted as abandoned, `false` when its thread answered first (its
    /// answer was sent before).
    pub(crate) fn give_up(&self, state: &AtomicU8) -> bool {
        let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        // Under the lock, so that the thread's `ended` counts it out only after this counted it.
        let abandoned = state
            .compare_exchange(WAITING, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if abandoned {
            *count += 1;
        }
        abandoned
    }

    /// After the limit of the wait whose state is `state` and whose thread answers on `receive`
    /// passed: its answer if one came (the thread may have sent it as the limit passed, before
    /// it marked itself answered: it then counts itself out of the abandoned ones at once), else
    /// the wait is given up on ([`give_up`](Self::give_up)).
    pub(crate) fn give_up_unless_answered<T>(
        &self,
        state: &AtomicU8,
        receive: &mpsc::Receiver<T>,
    ) -> Late<T> {
        let abandoned = self.give_up(state);
        match receive.try_recv() {
            Ok(answer) => Late::Answered(answer),
            Err(_) if abandoned => Late::GaveUp,
            // Answered (above) with nothing sent: the thread ended without an answer.
            Err(_) => Late::Lost,
        }
    }

    /// Called by a wait's thread once its wait has ended and its answer was sent: counts it out
    /// if its caller gave up on it.
    pub(crate) fn ended(&self, state: &AtomicU8) {
        if state.swap(ANSWERED, Ordering::AcqRel) == ABANDONED {
            let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
            *count = count.saturating_sub(1);
            self.ended.notify_all();
        }
    }
}

/// What [`Abandoned::give_up_unless_answered`] found once a wait's limit passed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Late<T> {
    /// The thread's answer, sent as the limit passed.
    Answered(T),
    /// No answer: the wait is given up on, its thread counted as abandoned.
    GaveUp,
    /// The thread ended without sending an answer.
    Lost,
}

/// `error`, with a timeout's `what` replaced by `what()`: for a caller that names what it waited
/// for better than the wait it called (`the CUDA event after the writes of ring slot 1` for
/// `Event::wait_for`'s `a CUDA event`). Other errors are returned as they are.
pub(crate) fn naming_timeout(error: Error, what: impl FnOnce() -> String) -> Error {
    match error {
        Error::Timeout { timeout, .. } => Error::Timeout {
            what: what(),
            timeout,
        },
        other => other,
    }
}

/// Waits for the work queued so far on the legacy default stream of the bound context, and so
/// for the work before it on blocking streams (not on non-blocking ones), polling
/// `cuStreamQuery` for at most `limit`: for cuda-gl's own synchronous copies (`cuMemcpyHtoD`
/// from pageable memory), which return before their work has landed.
///
/// # Errors
/// [`Error::Timeout`] naming `what` past `limit` (the work may still run: keep what it uses
/// alive); the driver's error from `cuStreamQuery`, such as an earlier kernel's fault.
pub(crate) fn legacy_stream_within(limit: Duration, what: &str) -> Result<()> {
    poll_within(limit, what, || {
        // SAFETY: a special stream handle, valid in the bound context (callers bind it).
        Ok(unsafe { result::stream::query(sys::CU_STREAM_LEGACY) }?)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    #[test]
    fn a_query_that_never_answers_gives_up_at_the_limit() {
        let limit = Duration::from_millis(30);
        let mut polls = 0u32;
        let start = Instant::now();
        let e = poll_within(limit, "the test's work", || {
            polls += 1;
            Ok(false)
        })
        .unwrap_err();
        let took = start.elapsed();
        match &e {
            Error::Timeout { what, timeout } => {
                assert_eq!(what, "the test's work");
                assert_eq!(*timeout, limit);
            }
            other => panic!("expected Error::Timeout, got {other:?}"),
        }
        assert!(took >= limit, "gave up after {took:?}, before the limit");
        assert!(took < limit + Duration::from_secs(2), "took {took:?}");
        assert!(polls > 1, "polled {polls} times");
        assert!(e.to_string().contains("help: "), "{e}");
    }

    #[test]
    fn it_returns_when_the_query_answers() {
        let mut polls = 0u32;
        poll_within(Duration::from_secs(5), "the test's work", || {
            polls += 1;
            Ok(polls == 5)
        })
        .unwrap();
        assert_eq!(polls, 5);
    }

    #[test]
    fn a_finished_query_never_times_out_and_a_zero_limit_polls_once() {
        poll_within(Duration::ZERO, "done work", || Ok(true)).unwrap();
        let mut polls = 0u32;
        let e = poll_within(Duration::ZERO, "running work", || {
            polls += 1;
            Ok(false)
        })
        .unwrap_err();
        assert!(matches!(e, Error::Timeout { .. }), "{e:?}");
        assert_eq!(polls, 1);
    }

    #[test]
    fn a_renamed_timeout_keeps_its_limit_and_other_errors_stay_as_they_are() {
        let limit = Duration::from_millis(7);
        let e = poll_within(limit, "a CUDA event", || Ok(false)).unwrap_err();
        match naming_timeout(e, || "the event of slot 1".into()) {
            Error::Timeout { what, timeout } => {
                assert_eq!(what, "the event of slot 1");
                assert_eq!(timeout, limit);
            }
            other => panic!("expected Error::Timeout, got {other:?}"),
        }
        let internal = Error::Internal {
            what: "not a timeout".into(),
        };
        let kept = naming_timeout(internal, || panic!("named a non-timeout"));
        assert!(
            matches!(&kept, Error::Internal { what } if what == "not a timeout"),
            "{kept:?}"
        );
    }

    #[test]
    fn a_wait_given_up_on_is_counted_until_its_thread_ends() {
        let abandoned = Abandoned::default();
        assert!(abandoned.settled_within(Duration::ZERO));
        let state = AtomicU8::new(WAITING);
        assert!(abandoned.give_up(&state));
        let start = Instant::now();
        assert!(!abandoned.settled_within(Duration::from_millis(20)));
        assert!(start.elapsed() >= Duration::from_millis(20));
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(20));
                abandoned.ended(&state);
            });
            assert!(abandoned.settled_within(Duration::from_secs(5)));
        });
        // A thread that answered before its caller gave up is not counted.
        let answered = AtomicU8::new(WAITING);
        abandoned.ended(&answered);
        assert!(!abandoned.give_up(&answered));
        assert!(abandoned.settled_within(Duration::ZERO));
    }

    #[test]
    fn a_drop_gives_abandoned_waits_the_grace_and_a_call_its_whole_limit() {
        let limit = Duration::from_secs(10);
        assert_eq!(abandoned_grace(limit), limit);
        {
            let _outer = InDrop::enter();
            assert_eq!(abandoned_grace(limit), ABANDONED_GRACE);
            assert_eq!(
                abandoned_grace(Duration::from_millis(5)),
                Duration::from_millis(5)
            );
            {
                // A drop inside a drop (a target's fields): still a drop's wait.
                let _inner = InDrop::enter();
                assert_eq!(abandoned_grace(limit), ABANDONED_GRACE);
            }
            assert_eq!(abandoned_grace(limit), ABANDONED_GRACE);
            // Another thread is not in this one's drop.
            std::thread::scope(|s| {
                s.spawn(|| assert_eq!(abandoned_grace(limit), limit));
            });
        }
        assert_eq!(abandoned_grace(limit), limit);
    }

    #[test]
    fn an_answer_sent_as_the_limit_passed_is_the_answer() {
        let abandoned = Abandoned::default();
        // Sent, not yet marked answered: counted as abandoned for a moment, but answered.
        let (send, receive) = mpsc::channel();
        let state = AtomicU8::new(WAITING);
        send.send(7).unwrap();
        assert_eq!(
            abandoned.give_up_unless_answered(&state, &receive),
            Late::Answered(7)
        );
        abandoned.ended(&state);
        assert!(abandoned.settled_within(Duration::ZERO));
        // Still waiting: given up on, and counted until its thread ends.
        let (send, receive) = mpsc::channel::<i32>();
        let state = AtomicU8::new(WAITING);
        assert_eq!(
            abandoned.give_up_unless_answered(&state, &receive),
            Late::GaveUp
        );
        assert!(!abandoned.settled_within(Duration::ZERO));
        drop(send);
        abandoned.ended(&state);
        assert!(abandoned.settled_within(Duration::ZERO));
        // Ended without an answer.
        let (send, receive) = mpsc::channel::<i32>();
        let state = AtomicU8::new(WAITING);
        drop(send);
        abandoned.ended(&state);
        assert_eq!(
            abandoned.give_up_unless_answered(&state, &receive),
            Late::Lost
        );
        assert!(abandoned.settled_within(Duration::ZERO));
    }

    #[test]
    fn a_query_error_ends_the_wait_with_it() {
        let mut polls = 0u32;
        let e = poll_within(Duration::from_secs(5), "the test's work", || {
            polls += 1;
            if polls == 2 {
                Err(Error::Internal {
                    what: "the query failed".into(),
                })
            } else {
                Ok(false)
            }
        })
        .unwrap_err();
        assert!(
            matches!(&e, Error::Internal { what } if what == "the query failed"),
            "{e:?}"
        );
        assert_eq!(polls, 2);
    }
}
