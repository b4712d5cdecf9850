//! What crate tests provoke inside a run.

use cuda_gl_sys as sys;
use std::cell::Cell;

/// A hook of [`after_next_work`]: the run it waits for (any when `None`, else the first
/// whose call is that name), and what it does.
type Hook = (Option<&'static str>, Box<dyn FnOnce(sys::CUstream)>);

thread_local! {
    /// What runs right after the work of a later run on this thread.
    static AFTER_WORK: Cell<Option<Hook>> = const { Cell::new(None) };
}

/// Has `f` run right after the work of the next run on this thread (cudarc's GPU lib
/// tests), between steps 3 and 4, given the private stream: a capture of the caller's
/// stream begun there leaves the work unordered with it; work queued there on the private
/// stream is what another thread's run may queue as soon as this one releases the lock.
#[cfg(all(feature = "cudarc", feature = "egl"))]
pub(crate) fn after_next_work(f: impl FnOnce(sys::CUstream) + 'static) {
    AFTER_WORK.with(|hook| hook.set(Some((None, Box::new(f)))));
}

/// As [`after_next_work`], for the next run on this thread whose `call` (the name its
/// refusals give) is `call`: for one run among several of a call (a show runs its fill's
/// copy or kernel among the frame's joins, maps and records), the earlier ones passed by.
pub(crate) fn after_next_work_of(call: &'static str, f: impl FnOnce(sys::CUstream) + 'static) {
    AFTER_WORK.with(|hook| hook.set(Some((Some(call), Box::new(f)))));
}

/// Runs the hook set by [`after_next_work`] or [`after_next_work_of`], if any and meant for
/// a run of `call`, with the private stream; another run's hook stays set.
pub(super) fn after_work(private: sys::CUstream, call: &'static str) {
    AFTER_WORK.with(|hook| match hook.take() {
        Some((only, f)) if only.is_none_or(|c| c == call) => f(private),
        other => hook.set(other),
    });
}

/// A hook of [`after_next_work_of`] passes other runs by and runs on its own call's, once.
#[test]
fn a_hook_of_a_call_waits_for_a_run_of_that_call() {
    let ran = std::rc::Rc::new(Cell::new(0));
    let hooked = ran.clone();
    after_next_work_of("the fill", move |_| hooked.set(hooked.get() + 1));
    after_work(std::ptr::null_mut(), "a join");
    assert_eq!(ran.get(), 0, "ran on another call's run");
    after_work(std::ptr::null_mut(), "the fill");
    after_work(std::ptr::null_mut(), "the fill");
    assert_eq!(ran.get(), 1, "ran once, on the fill's run");
}

/// `then`'s `after` runs after the work (the work's flag is set when `after` looks at it) when
/// the work returns, and when it panics too (it may have queued some of its work, which
/// cudarc's event must follow).
#[test]
#[allow(clippy::panic)]
fn then_runs_after_after_the_work_on_return_and_on_unwind() {
    let worked = Cell::new(false);
    let seen = std::cell::RefCell::new(Vec::new());
    let mut after = |_: sys::CUstream| {
        seen.borrow_mut().push(worked.get());
        worked.set(false);
    };
    let work = |_| {
        worked.set(true);
        Ok(7)
    };
    let out = super::then(work, Some(&mut after))(std::ptr::null_mut());
    assert_eq!(out.ok(), Some(7));
    let panicking = super::then(
        |_| -> super::Result<()> {
            worked.set(true);
            panic!("the work")
        },
        Some(&mut after),
    );
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        panicking(std::ptr::null_mut())
    }));
    assert!(unwound.is_err(), "the work's panic");
    assert_eq!(
        *seen.borrow(),
        [true, true],
        "after ran once per work, each time after the work (the panicking one included)"
    );
}
