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
    let key = (owner.group(), kind.namespace(), name);
    let mut guard = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
    guard
        .get_or_insert_with(HashSet::new)
        .insert(key)
        .then_some(Claim { key })
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut guard = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(set) = guard.as_mut() {
            set.remove(&self.key);
        }
    }
}
