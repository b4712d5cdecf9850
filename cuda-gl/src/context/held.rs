//! Which private queues this thread holds locked. A run's work that queued through the same
//! context's private queue again (a mapped array's copy, inside `graphics::on_private_stream`'s
//! work, say) would wait for its own lock for ever: it gets an error instead.

use crate::error::{Error, Result};
use std::cell::RefCell;

thread_local! {
    /// The keys of the private queues this thread holds, innermost last.
    static HELD: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// This thread's hold of one context's private queue, given up on drop.
pub(super) struct Held(usize);

impl Held {
    /// Marks the queue of `key` (its lock's address) held by this thread.
    ///
    /// # Errors
    /// [`Error::Internal`] when this thread holds it already: a run inside a run of the same
    /// queue, which would deadlock.
    pub(super) fn enter(key: usize) -> Result<Held> {
        HELD.with(|held| {
            let mut held = held.borrow_mut();
            if held.contains(&key) {
                return Err(Error::Internal {
                    what: "cuda-gl queued through a CUDA context's private queue from inside a \
                           run of the same queue (that would wait for its own lock for ever)"
                        .into(),
                });
            }
            held.push(key);
            Ok(Held(key))
        })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // `try_with`: a thread-local being torn down holds nothing any more.
        let _ = HELD.try_with(|held| {
            if let Ok(mut held) = held.try_borrow_mut()
                && let Some(at) = held.iter().rposition(|k| *k == self.0)
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
