//! The GL buffer objects a display mode keeps beside the texture (interop's pixel buffer, the
//! staged mode's buffer per band on NVIDIA's GL): made, labelled with the target's label and
//! claimed together, deleted together (those still the target's), as the texture is.

use super::texture::{Label, Object, Texture};
use crate::error::{Error, Result};
use crate::gl_object::Kind;
use crate::glapi::{GlOwner, claim};

/// Buffers of one target, made together.
#[derive(Debug)]
pub(super) struct GlBuffers {
    owner: GlOwner,
    names: Vec<u32>,
    /// The claims on the buffers.
    claims: Vec<claim::Claim>,
    label: Label,
}

impl GlBuffers {
    /// One buffer of each size of `sizes` (bytes), with storage of `usage` and no data, in
    /// `texture`'s context, labelled and claimed as the texture is (none, and no GL call, for
    /// no sizes). `call` names the making in errors.
    ///
    /// # Errors
    /// The owner check's errors when the target's context is not current;
    /// [`Error::GlCall`](crate::Error::GlCall) when GL refuses a buffer;
    /// [`Error::AlreadyRegistered`] when another context registered a name in the moment
    /// between its making and its claim (that one is left to it, never deleted). The buffers
    /// made are deleted on an error.
    pub(super) fn new(
        texture: &Texture,
        sizes: impl IntoIterator<Item = usize>,
        usage: u32,
        call: &'static str,
    ) -> Result<GlBuffers> {
        let owner = texture.owner();
        let sizes: Vec<usize> = sizes.into_iter().collect();
        let mut buffers = GlBuffers {
            owner,
            names: Vec::new(),
            claims: Vec::new(),
            label: texture.label().clone(),
        };
        if sizes.is_empty() {
            return Ok(buffers);
        }
        let fns = owner.check(call)?;
        fns.take_pending_errors(call);
        let mut saved = 0;
        // SAFETY: a context is current (checked); a valid out-pointer.
        unsafe { (fns.get_integerv)(gl::COPY_WRITE_BUFFER_BINDING, &mut saved) };
        for &bytes in &sizes {
            // The application's copy write binding is put back below.
            let name = fns.new_buffer(gl::COPY_WRITE_BUFFER, bytes, usage);
            if name != 0 {
                buffers.label.mark(fns, Object::Buffer, name);
                buffers.names.push(name);
            }
        }
        // Read before the binding is put back, so that the error is the making's.
        let made = fns.check(call);
        // SAFETY: a context is current; the name was read from it. A name another context of
        // the share group deleted since is refused with an error, drained here: the binding
        // then stays on the last buffer made, whose deletion (with these) unbinds it.
        unsafe { (fns.bind_buffer)(gl::COPY_WRITE_BUFFER, saved.max(0) as u32) };
        fns.drain_errors();
        // On failure the buffers made are deleted with `buffers`.
        made?;
        if buffers.names.len() != sizes.len() {
            return Err(Error::Internal {
                what: "glGenBuffers gave no name for a display buffer".into(),
            });
        }
        for name in buffers.names.clone() {
            let Some(claim) = claim::claim(Kind::Buffer, name, owner) else {
                // Registered by a context sharing this one's objects in the moment since: left
                // to that one (forgotten here, never deleted).
                buffers.names.retain(|&b| b != name);
                return Err(Error::AlreadyRegistered {
                    name,
                    kind: Kind::Buffer.describe().to_string(),
                });
            };
            buffers.claims.push(claim);
        }
        Ok(buffers)
    }

    /// The buffers' names, in the order of their sizes.
    pub(super) fn names(&self) -> &[u32] {
        &self.names
    }

    /// The first buffer's name (0: none), for a set of one.
    pub(super) fn first(&self) -> u32 {
        self.names.first().copied().unwrap_or(0)
    }

    /// Leaks the buffers: never deleted, claimed for good (the driver may still hold one
    /// mapped).
    pub(super) fn leak(&mut self) {
        if self.names.is_empty() {
            return;
        }
        log::error!(
            "cuda-gl: display target's pixel buffers {:?} leaked: CUDA may still hold them",
            self.names
        );
        std::mem::forget(std::mem::take(&mut self.claims));
        self.names.clear();
    }
}

impl Drop for GlBuffers {
    fn drop(&mut self) {
        if self.names.is_empty() {
            // Leaked (`leak`), or never made.
            return;
        }
        match self.owner.check("glDeleteBuffers (not called)") {
            Ok(fns) => {
                // A name the application deleted may name its own object now: left alone.
                let own: Vec<u32> = (self.names.iter().copied())
                    .filter(|&name| self.label.is_own(fns, Object::Buffer, name))
                    .collect();
                if own.len() != self.names.len() {
                    log::warn!(
                        "cuda-gl: display target's pixel buffers {:?}: only {own:?} are still \
                         the target's (the application deleted or relabelled the others); those \
                         alone are deleted",
                        self.names
                    );
                }
                // SAFETY: the names came from `new`, still name the target's buffers
                // (labelled) and are deleted once, with their context current (checked); the
                // count is the vector's own (at most 32 names).
                unsafe { (fns.delete_buffers)(own.len() as i32, own.as_ptr()) };
            }
            Err(e) => {
                log::error!(
                    "cuda-gl: display target's pixel buffers {:?} leaked, not deleted: {e}",
                    self.names
                );
                // The buffers live on: they stay claimed, so they are never registered.
                std::mem::forget(std::mem::take(&mut self.claims));
            }
        }
        // The claims end here, once the buffers are deleted.
    }
}
