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
//!
//! A texture that cuda-gl makes and hands to another owner (an egui image's, which egui's painter
//! deletes when the application frees its id) is claimed with its label
//! ([`claim_labelled_texture`]): once another owner deleted it, GL gives its name to the next
//! texture made, which is not the claimed object. A later claim of the name asks GL whether the
//! texture still carries the label, and takes the name over when it does not; the stale claim's
//! drop then leaves the new one alone.

use super::current::GlOwner;
use super::label;
use crate::gl_object::{ImageTarget, Kind};
use std::collections::HashMap;
use std::sync::Mutex;

/// Share group, namespace, name.
type Key = (u64, u8, u32);

/// A claim in the registry: its serial number (which claim of the key it is), and the label of
/// a texture claimed with one.
struct Entry {
    serial: u64,
    label: Option<String>,
}

/// The registry and the next serial number.
struct Registry {
    claims: HashMap<Key, Entry>,
    next: u64,
}

static REGISTERED: Mutex<Option<Registry>> = Mutex::new(None);

/// This process's claim on one GL object's registration. Dropping it ends the claim (unless a
/// later claim took the name over from it: see the module docs).
#[derive(Debug)]
pub(crate) struct Claim {
    key: Key,
    serial: u64,
}

/// Claims GL object `name` of `kind` of `owner`'s share group (whose context is current); `None`
/// when this process has claimed it already (a texture claimed with a label: while it still
/// carries it).
pub(crate) fn claim(kind: Kind, name: u32, owner: GlOwner) -> Option<Claim> {
    claim_in(owner, kind, name, None)
}

/// [`claim`] of texture `name`, which carries `label` (a label of cuda-gl's, given it by the
/// caller): a later claim of the name succeeds once the texture no longer carries it (deleted
/// by its other owner, and the name perhaps another texture's).
// Called by the egui (glow) adapter only.
#[cfg_attr(not(feature = "egui"), allow(dead_code))]
pub(crate) fn claim_labelled_texture(name: u32, owner: GlOwner, label: &str) -> Option<Claim> {
    let kind = Kind::Image(ImageTarget::Texture2D);
    claim_in(owner, kind, name, Some(label.to_owned()))
}

fn claim_in(owner: GlOwner, kind: Kind, name: u32, label: Option<String>) -> Option<Claim> {
    let key = (owner.group(), kind.namespace(), name);
    match insert(key, label.clone(), None) {
        Ok(claim) => Some(claim),
        // Held with a label: taken over when GL says the texture no longer carries it. Asked
        // with the registry unlocked (the owner check takes locks of its own), then taken over
        // only if the same claim still holds the name.
        Err(Some((serial, held))) if gone(owner, kind, name, &held) => {
            insert(key, label, Some(serial)).ok()
        }
        Err(_) => None,
    }
}

/// Inserts a claim of `key`, or replaces the one whose serial is `replacing`. Otherwise `Err`,
/// with the holder's serial and label when it has one.
fn insert(
    key: Key,
    label: Option<String>,
    replacing: Option<u64>,
) -> Result<Claim, Option<(u64, String)>> {
    let mut guard = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
    let registry = guard.get_or_insert_with(|| Registry {
        claims: HashMap::new(),
        next: 0,
    });
    if let Some(held) = registry.claims.get(&key)
        && Some(held.serial) != replacing
    {
        return Err(held.label.clone().map(|l| (held.serial, l)));
    }
    let serial = registry.next;
    registry.next += 1;
    registry.claims.insert(key, Entry { serial, label });
    // The claim is made only when it was inserted: a `Claim` built for a refused key would be
    // dropped at once, removing the other registration's claim (and, with the lock still held
    // here, its `Drop` would deadlock).
    Ok(Claim { key, serial })
}

/// Whether texture `name` no longer carries `label` in `owner`'s context, which is current: false
/// (the claim stands) whenever GL cannot say (another context current, no object labels).
fn gone(owner: GlOwner, kind: Kind, name: u32, label: &str) -> bool {
    if kind.namespace() != Kind::Image(ImageTarget::Texture2D).namespace() {
        return false;
    }
    let Ok(fns) = owner.check("glGetObjectLabel (a claimed texture's)") else {
        return false;
    };
    label::has_labels(fns)
        && fns.get_object_label.is_some()
        && !label::is_labelled(fns, gl::TEXTURE, name, fns.is_texture, label)
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut guard = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(registry) = guard.as_mut()
            && registry
                .claims
                .get(&self.key)
                .is_some_and(|e| e.serial == self.serial)
        {
            registry.claims.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// A claim in share group `group`, unlabelled (no GL context needed).
    fn claim_group(group: u64, kind: Kind, name: u32) -> Option<Claim> {
        insert((group, kind.namespace(), name), None, None).ok()
    }

    /// A second claim of a claimed object is refused without ending the first (on the GPU, the
    /// old code's refusal deadlocked on the registry's lock: every "registered twice" test hung).
    #[test]
    fn a_refused_claim_neither_deadlocks_nor_ends_the_first() {
        let (send, recv) = mpsc::channel();
        std::thread::spawn(move || {
            let group = u64::MAX - 7;
            let first = claim_group(group, Kind::Buffer, 5);
            let second = claim_group(group, Kind::Buffer, 5);
            let third = claim_group(group, Kind::Buffer, 5);
            let other_group = claim_group(group - 1, Kind::Buffer, 5);
            let _ = send.send((
                first.is_some(),
                second.is_none(),
                third.is_none(),
                other_group.is_some(),
            ));
            drop(first);
            let again = claim_group(group, Kind::Buffer, 5);
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
