//! The slot both the ring and the stream are made of: made in one step, and taken apart on
//! drop, the GL side only with its context current, then the CUDA side (see the
//! [module docs](super#release-order)).

use super::exportable::ExportableMemory;
use super::external_gl::ExternalGl;
use super::import::GlMemoryBuffer;
use crate::context::Context;
use crate::error::Result;
use crate::glapi::{Fence, GlOwner};
use crate::stream::Event;
use crate::wait::wait_limit;
use std::borrow::Borrow;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Duration;

/// One slot: CUDA memory, its GL import, the event recorded after CUDA's writes of it, the
/// fence `F` placed after GL's reads of it, and what its owner tracks besides (`S`).
pub(super) struct Slot<F, S> {
    pub(super) read_fence: Option<F>,
    pub(super) gl: GlMemoryBuffer,
    pub(super) memory: ExportableMemory,
    pub(super) written: Event,
    pub(super) state: S,
}

impl<F, S> Slot<F, S> {
    /// `bytes` bytes of CUDA memory, imported into GL, with a new event and no fence.
    pub(super) fn new(ctx: &Arc<Context>, gl: &ExternalGl, bytes: usize, state: S) -> Result<Self> {
        let memory = ExportableMemory::new(ctx, bytes)?;
        let import = GlMemoryBuffer::import(gl, &memory)?;
        // Its own statement: should it fail, `import` is dropped before `memory` (the GL side
        // first, as on release).
        let written = Event::new(ctx, false)?;
        Ok(Slot {
            read_fence: None,
            gl: import,
            memory,
            written,
            state,
        })
    }

    /// Releases the slot, after its work was waited for: its GL fence and GL import when
    /// `gl_current` (leaked otherwise), then its CUDA memory when `cuda_idle` (leaked
    /// otherwise: CUDA work may still use it; its drop waits for the CUDA context before
    /// unmapping, and a leaked GL import keeps the physical memory alive) and its event (which
    /// the driver destroys once its work is done).
    pub(super) fn release(self, gl_current: bool, cuda_idle: bool) {
        let Slot {
            read_fence,
            gl,
            memory,
            written,
            ..
        } = self;
        if gl_current {
            drop(read_fence);
            drop(gl);
        } else {
            std::mem::forget(read_fence);
            std::mem::forget(gl);
        }
        if cuda_idle {
            drop(memory);
        } else {
            memory.leak();
        }
        drop(written);
    }
}

impl<F: Borrow<Fence>, S> Slot<F, S> {
    /// Waits on the CPU, for at most `timeout`, for the GL commands before the slot's read
    /// fence, then drops the fence. A wait that fails keeps it, so that the slot's next write
    /// still waits for GL's reads. `slot` names the slot in a timeout error.
    pub(super) fn wait_for_reads(
        &mut self,
        timeout: Duration,
        slot: impl FnOnce() -> String,
    ) -> Result<()> {
        if let Some(fence) = &self.read_fence {
            fence.borrow().client_wait(timeout, || {
                format!("the GL fence after the reads of {}", slot())
            })?;
            self.read_fence = None;
        }
        Ok(())
    }
}

/// The slots of a ring or a stream, with the GL context (the owner) their GL objects belong
/// to. Neither `Send` nor `Sync`, and so neither is what holds it: GL
/// calls go to the context current on the calling thread.
///
/// It has no `Drop`: its holder waits for the slots' work, then calls [`Slots::release`].
pub(super) struct Slots<F, S> {
    list: Vec<Slot<F, S>>,
    pub(super) owner: GlOwner,
    _not_send: PhantomData<*const ()>,
}

impl<F, S> Slots<F, S> {
    /// `count` slots of `bytes` bytes each, each with the state `state()` returns. The GL
    /// context `gl` was loaded for must be current.
    pub(super) fn new(
        ctx: &Arc<Context>,
        gl: &ExternalGl,
        count: usize,
        bytes: usize,
        mut state: impl FnMut() -> S,
    ) -> Result<Self> {
        gl.check("glImportMemoryFdEXT (not called)")?;
        let list = (0..count)
            .map(|_| Slot::new(ctx, gl, bytes, state()))
            .collect::<Result<Vec<_>>>()?;
        Ok(Slots {
            list,
            owner: gl.owner,
            _not_send: PhantomData,
        })
    }

    /// Whether the owner is current, so that dropping the holder (named `what`) may delete the
    /// slots' GL objects. Otherwise the error is recorded for [`Context::take_drop_errors`], and
    /// the objects are to be leaked: deleting them by name with another context current would
    /// delete that context's objects.
    pub(super) fn gl_current_for_drop(&self, ctx: &Context, what: &str) -> bool {
        match self.owner.check("glDeleteBuffers (not called)") {
            Ok(_) => true,
            Err(e) => {
                ctx.record_drop_error(&format!("deleting {what}'s GL objects (leaked instead)"), e);
                false
            }
        }
    }

    /// Releases every slot ([`Slot::release`]) for the drop of their holder, named `what` (e.g. "an
    /// external ring"), in CUDA context `ctx`. `waited` is the holder's wait for the slots' events
    /// and fences (`Ok` when it could not wait, its GL context not being current). The whole CUDA
    /// context is then waited for once, at most the [wait limit](crate::wait_limit) (kernels that
    /// no event covers may use the memory): when either wait failed, every slot's CUDA memory is
    /// leaked rather than unmapped under work that may still use it, and the failure is recorded
    /// for [`Context::take_drop_errors`]. Waiting once here, rather than in each allocation's drop,
    /// bounds the drop at one limit, not one per slot.
    pub(super) fn release(
        &mut self,
        ctx: &Arc<Context>,
        what: &str,
        gl_current: bool,
        waited: Result<()>,
    ) {
        let idle = match waited {
            Err(e) => Err((e, "cuEventQuery, glClientWaitSync or cuCtxSynchronize")),
            Ok(()) => ctx
                .synchronize_within(wait_limit())
                .map_err(|e| (e, "cuCtxSynchronize")),
        };
        let cuda_idle = match idle {
            Ok(()) => true,
            Err((e, waited_with)) => {
                let what = format!("waiting for {what}'s work (its CUDA memory is leaked)");
                ctx.record_drop_wait(&what, waited_with, e);
                false
            }
        };
        for slot in self.list.drain(..) {
            slot.release(gl_current, cuda_idle);
        }
    }
}

impl<F, S> Deref for Slots<F, S> {
    type Target = [Slot<F, S>];

    fn deref(&self) -> &Self::Target {
        &self.list
    }
}

impl<F, S> DerefMut for Slots<F, S> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.list
    }
}
