//! The registry that refuses a GL object registered twice, which the driver allows, and that
//! holds cuda-gl's own GL objects (the buffers of external-memory imports), so that none of them
//! can be registered at all.
//!
//! Two registrations of one object would give two mapping guards, so two mutable views of the
//! same memory. A GL name alone does not identify an object: unrelated contexts each have their
//! own buffer 1, while contexts that share objects see one buffer 1, and neither EGL nor GLX
//! tells which contexts share. So a claim is keyed by namespace and name alone (not by CUDA
//! device either: one GL context can span several GPUs), and a second claim of the same key from
//! another GL context is told apart with a GL debug label: the first registration labels the object with a tag of
//! its own, and the second reads the label of the name in its context. The tag there means the
//! same object; another label means another object. When either label call cannot be made (no
//! `glObjectLabel`, an older GL), the second registration is refused: a false refusal can be
//! worked around, two aliasing views cannot.
//!
//! The tag is made visible to other contexts (`glFinish`) before the registration goes on, and the
//! object's previous label is given back when it is unregistered. What this cannot catch: an
//! application that relabels a registered object itself (`glObjectLabel`) in one context and
//! registers it again from a context that shares it.

use super::current::GlOwner;
use super::label;
use super::table::GlFns;
use crate::gl_object::Kind;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

type Key = (u8, u32);

/// One live registration of a key.
#[derive(Debug)]
struct Entry {
    id: u64,
    /// The identity of the GL context current at registration ([`GlOwner::id`]).
    gl_context: u64,
    /// Whether the object carries this registration's tag.
    labelled: bool,
}

static REGISTERED: Mutex<Option<HashMap<Key, Vec<Entry>>>> = Mutex::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn tag(id: u64) -> String {
    format!("cuda-gl registration {id}")
}

/// This process's claim on one GL object's registration. Dropping it ends the claim;
/// [`Claim::release`] also gives the object its previous label back.
#[derive(Debug)]
pub(crate) struct Claim {
    key: Key,
    id: u64,
    /// The label the object had before it was tagged, when it was tagged.
    previous_label: Option<String>,
}

/// Claims GL object `name` of `kind` of `owner`, the current GL context (whose table `fns`
/// is); `None` when this process has claimed it already.
pub(crate) fn claim(fns: &GlFns, kind: Kind, name: u32, owner: GlOwner) -> Option<Claim> {
    let gl_context = owner.id();
    let key = (kind.namespace(), name);
    let mut guard = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
    let entries = guard
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_default();
    for other in entries.iter() {
        let unrelated = other.gl_context != gl_context
            && other.labelled
            && label::read(fns, kind, name).is_some_and(|l| l != tag(other.id));
        if !unrelated {
            return None;
        }
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let previous_label = label::read(fns, kind, name);
    let labelled = previous_label.is_some() && label::write(fns, kind, name, &tag(id));
    entries.push(Entry {
        id,
        gl_context,
        labelled,
    });
    Some(Claim {
        key,
        id,
        previous_label: previous_label.filter(|_| labelled),
    })
}

impl Claim {
    /// Ends the claim and gives the object its previous label back, through `fns`, the table
    /// of the owning GL context, which [`GlOwner::check`] found current.
    pub(crate) fn release(mut self, fns: &GlFns, kind: Kind, name: u32) {
        if let Some(previous) = self.previous_label.take() {
            label::write(fns, kind, name, &previous);
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut guard = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(map) = guard.as_mut()
            && let Some(entries) = map.get_mut(&self.key)
        {
            entries.retain(|e| e.id != self.id);
            if entries.is_empty() {
                map.remove(&self.key);
            }
        }
    }
}
