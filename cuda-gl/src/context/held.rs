//! Which private queues this thread holds locked. A run's work that queued through the same
//! context's private queue again (a mapped array's copy, inside `graphics::on_private_stream`'s
//! work, say) would wait for its own lock for ever: it gets an error instead.

use crate::error::{Error, Result};
use std::cell::RefCell;

thread_local! {
    /// The keys of the private queues this thread holds, innermost last.
    static HELD: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// This thread's hold of one context's private queue, given up on drop (`None`: taken while
/// the thread's list was being torn down, at its exit, where no run is in progress).
pub(super) struct Held(Option<usize>);

impl Held {
    /// Marks the queue of `key` (its lock's address) held by this thread.
    ///
    /// # Errors
    /// [`Error::Internal`] when this thread holds it already: a run inside a run of the same
    /// queue, which would deadlock.
    pub(super) fn enter(key: usize) -> Result<Held> {
        // `try_with`: in a thread-local's destructor at the thread's exit, after this list was
        // torn down (a shared texture kept in a thread-local queues its return when dropped),
        // `with` would panic, and the process abort.
        let entered = HELD.try_with(|held| {
            let mut held = held.borrow_mut();
            if held.contains(&key) {
                return Err(Error::Internal {
                    what: "cuda-gl queued through a CUDA context's private queue from inside a \
                           run of the same queue (that would wait for its own lock for ever)"
                        .into(),
                });
            }
            held.push(key);
            Ok(Held(Some(key)))
        });
        entered.unwrap_or(Ok(Held(None)))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(key) = self.0 else { return };
        // `try_with`: a thread-local being torn down holds nothing any more.
        let _ = HELD.try_with(|held| {
            if let Ok(mut held) = held.try_borrow_mut()
                && let Some(at) = held.iter().rposition(|k| *k == key)
            {
                held.swap_remove(at);
            }
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A hold taken in a thread-local's destructor after this file's own thread-local was torn
    /// down (a `SharedTexture` kept in a thread-local, dropped at the thread's exit, queues its
    /// return): taken, tracking nothing, never a panic (a panic in a thread-local's destructor
    /// aborts the process: it did before).
    #[test]
    fn a_hold_taken_after_the_threads_list_is_torn_down_does_not_panic() {
        struct DropsLate;
        impl Drop for DropsLate {
            fn drop(&mut self) {
                let held = Held::enter(7);
                assert!(held.is_ok(), "{:?}", held.err());
            }
        }
        thread_local! {
            static LATE: RefCell<Option<DropsLate>> = const { RefCell::new(None) };
        }
        std::thread::spawn(|| {
            // Registered first, so torn down after `HELD`, which the hold below registers.
            LATE.with(|late| *late.borrow_mut() = Some(DropsLate));
            drop(Held::enter(7).unwrap());
        })
        .join()
        .unwrap();
    }

    /// A second hold of the same queue on one thread is refused (it would deadlock); another
    /// queue's, and the same one once the first is given up, are not.
    #[test]
    fn a_queue_held_by_this_thread_is_refused_until_given_up() {
        let first = Held::enter(1).unwrap();
        let again = Held::enter(1);
        assert!(
            matches!(again, Err(Error::Internal { .. })),
            "a second hold was taken"
        );
        let other = Held::enter(2).unwrap();
        drop(first);
        let after = Held::enter(1).unwrap();
        drop((other, after));
        // Another thread holds nothing of this one's.
        let _mine = Held::enter(3).unwrap();
        std::thread::spawn(|| Held::enter(3).map(drop))
            .join()
            .unwrap()
            .unwrap();
    }
}
