//! The registry that refuses a GL object registered twice, which the driver allows, and that
//! holds cuda-gl's own GL objects (the buffers of external-memory imports), so that none of them
//! can be registered at all.
//!
//! Two registrations of one object would give two mapping guards, so two mutable views of the
//! same memory. A GL name alone does not identify an object: unrelated contexts each have their
//! own buffer 1, while contexts that share objects see one buffer 1. So a claim is keyed by the
//! share group's identity, which cuda-gl itself plants and no GL call of the application's own
//! can change ([`GlOwner::group`]), and by the object's namespace and name. It is not keyed by
//! CUDA device: one GL context can span several GPUs.
//!
//! A claim lasts as long as the driver may hold the object registered and mapped: a registration
//! whose unregister was refused while mapped leaks its claim (the object then stays refused for
//! the life of the process), never ends it.

use super::current::GlOwner;
use crate::gl_object::Kind;
use std::collections::HashSet;
use std::sync::Mutex;

/// Share group, namespace, name.
type Key = (u64, u8, u32);

static REGISTERED: Mutex<Option<HashSet<Key>>> = Mutex::new(None);

/// This process's claim on one GL object's registration. Dropping it ends the claim.
#[derive(Debug)]
pub(crate) struct Claim {
    key: Key,
}

/// Claims GL object `name` of `kind` of `owner`'s share group; `None` when this process has
/// claimed it already.
pub(crate) fn claim(kind: Kind, name: u32, owner: GlOwner) -> Option<Claim> {
    claim_in(owner.group(), kind, name)
}

fn claim_in(group: u64, kind: Kind, name: u32) -> Option<Claim> {
    let key = (group, kind.namespace(), name);
    let inserted = REGISTERED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert(key);
    // The claim is made only after the lock is released, and only when it was inserted: a
    // `Claim` built for a refused key (`bool::then_some` builds its value eagerly) would be
    // dropped at once, removing the other registration's claim, and with the lock still held
    // here its `Drop` would deadlock.
    if inserted { Some(Claim { key }) } else { None }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut guard = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(set) = guard.as_mut() {
            set.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// A second claim of a claimed object is refused without ending the first (on the GPU, the
    /// old code's refusal deadlocked on the registry's lock: every "registered twice" test hung).
    #[test]
    fn a_refused_claim_neither_deadlocks_nor_ends_the_first() {
        let (send, recv) = mpsc::channel();
        std::thread::spawn(move || {
            let group = u64::MAX - 7;
            let first = claim_in(group, Kind::Buffer, 5);
            let second = claim_in(group, Kind::Buffer, 5);
            let third = claim_in(group, Kind::Buffer, 5);
            let other_group = claim_in(group - 1, Kind::Buffer, 5);
            let _ = send.send((
                first.is_some(),
                second.is_none(),
                third.is_none(),
                other_group.is_some(),
            ));
            drop(first);
            let again = claim_in(group, Kind::Buffer, 5);
            let _ = send.send((again.is_some(), true, true, true));
        });
        let outcome = recv.recv_timeout(Duration::from_secs(10));
        assert_eq!(
            outcome,
            Ok((true, true, true, true)),
            "second claim deadlocked or ended the first"
        );
        let after_drop = recv.recv_timeout(Duration::from_secs(10));
        assert_eq!(
            after_drop,
            Ok((true, true, true, true)),
            "dropping the claim did not end it"
        );
    }
}
