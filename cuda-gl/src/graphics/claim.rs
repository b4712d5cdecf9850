//! The registry that refuses a GL object registered twice, which the driver allows.
//!
//! Two registrations of one object would give two mapping guards, so two mutable views of the
//! same memory. A GL name alone does not identify an object: unrelated contexts each have their
//! own buffer 1, while contexts that share objects see one buffer 1, and neither EGL nor GLX
//! tells which contexts share. So a claim is keyed by CUDA device, namespace and name (contexts
//! on different GPUs cannot share), and a second claim of the same key from another GL context
//! is told apart with a GL debug label: the first registration labels the object with a tag of
//! its own, and the second reads the label of the name in its context. The tag there means the
//! same object; another label means another object. When either label call cannot be made (no
//! `glObjectLabel`, an older GL), the second registration is refused: a false refusal can be
//! worked around, two aliasing views cannot.
//!
//! The object's previous label is given back when it is unregistered.

use crate::graphics::Kind;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

type Key = (i32, u8, u32);

/// One live registration of a key.
#[derive(Debug)]
struct Entry {
    id: u64,
    /// The GL context current at registration (0 when it could not be told).
    gl_context: usize,
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

/// Claims GL object `name` of `kind`, current in GL context `gl_context` (0: unknown), on CUDA
/// device `device`; `None` when this process has registered it already.
pub(crate) fn claim(device: i32, kind: Kind, name: u32, gl_context: usize) -> Option<Claim> {
    let key = (device, kind.namespace(), name);
    let mut guard = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
    let entries = guard
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_default();
    for other in entries.iter() {
        let unrelated = other.gl_context != gl_context
            && gl_context != 0
            && other.labelled
            && label::read(kind, name).is_some_and(|l| l != tag(other.id));
        if !unrelated {
            return None;
        }
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let previous_label = label::read(kind, name);
    let labelled = previous_label.is_some() && label::write(kind, name, &tag(id));
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
    /// Ends the claim and gives the object its previous label back. Call with the owning GL
    /// context current.
    pub(crate) fn release(mut self, kind: Kind, name: u32) {
        if let Some(previous) = self.previous_label.take() {
            label::write(kind, name, &previous);
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

/// GL debug labels (`glObjectLabel`, `glGetObjectLabel`: OpenGL 4.3 or `KHR_debug`), through
/// the `gl` crate's function pointers. Each call is made only when a GL context is known to be
/// current and the entry point is loaded.
mod label {
    use crate::glcurrent;
    use crate::graphics::{ImageTarget, Kind};

    fn identifier(kind: Kind) -> u32 {
        match kind {
            Kind::Buffer => gl::BUFFER,
            Kind::Image(ImageTarget::Renderbuffer) => gl::RENDERBUFFER,
            Kind::Image(_) => gl::TEXTURE,
        }
    }

    fn usable() -> bool {
        matches!(glcurrent::current(), glcurrent::Current::Context(_))
            && gl::GetObjectLabel::is_loaded()
            && gl::ObjectLabel::is_loaded()
            && gl::GetError::is_loaded()
    }

    /// Takes GL's pending error, so that the next check sees only the label call's.
    fn take_error() -> u32 {
        // SAFETY: a context is current and the function is loaded (`usable`).
        unsafe { gl::GetError() }
    }

    /// The label of object `name`, `None` when it cannot be read.
    pub(super) fn read(kind: Kind, name: u32) -> Option<String> {
        if !usable() {
            return None;
        }
        let earlier = take_error();
        let mut buf = vec![0u8; 256];
        let mut len = 0;
        // SAFETY: a context is current and the function is loaded; `buf` has room for the
        // stated size including the terminating NUL; `len` is a valid out-pointer. A name that
        // is not an object of `kind` raises GL_INVALID_VALUE and writes nothing.
        unsafe {
            gl::GetObjectLabel(
                identifier(kind),
                name,
                buf.len() as i32,
                &mut len,
                buf.as_mut_ptr().cast(),
            );
        }
        let failed = take_error() != gl::NO_ERROR;
        if earlier != gl::NO_ERROR {
            log::debug!("cuda-gl: discarded an earlier OpenGL error 0x{earlier:04x}");
        }
        if failed {
            return None;
        }
        buf.truncate(usize::try_from(len).ok()?.min(buf.len()));
        Some(String::from_utf8_lossy(&buf).into_owned())
    }

    /// Sets the label of object `name` (an empty label removes it); whether GL took it.
    pub(super) fn write(kind: Kind, name: u32, label: &str) -> bool {
        if !usable() {
            return false;
        }
        take_error();
        // SAFETY: a context is current and the function is loaded; the pointer and length
        // describe `label`'s bytes (no NUL needed with an explicit length).
        unsafe {
            gl::ObjectLabel(
                identifier(kind),
                name,
                label.len() as i32,
                label.as_ptr().cast(),
            );
        }
        take_error() == gl::NO_ERROR
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graphics::ImageTarget;

    #[test]
    fn a_second_claim_is_refused_until_the_first_is_dropped() {
        // No GL context here: labels cannot be read, so a claim from another GL context is
        // refused as well (it might be the same object).
        let first = claim(0, Kind::Buffer, 4_000_000_001, 11);
        assert!(first.is_some());
        assert!(claim(0, Kind::Buffer, 4_000_000_001, 11).is_none());
        assert!(claim(0, Kind::Buffer, 4_000_000_001, 12).is_none());
        let texture = claim(0, Kind::Image(ImageTarget::Texture2D), 4_000_000_001, 11);
        assert!(texture.is_some(), "textures are another namespace");
        let other_gpu = claim(1, Kind::Buffer, 4_000_000_001, 11);
        assert!(
            other_gpu.is_some(),
            "another GPU's contexts cannot share it"
        );
        drop(first);
        assert!(claim(0, Kind::Buffer, 4_000_000_001, 12).is_some());
    }
}
