//! The slot both the ring and the stream are made of: made in one step, and taken apart on
//! drop, the GL side only with its context current, then the CUDA side (see the
//! [module docs](super#release-order)).

use super::gl_fns::ExternalGl;
use super::import::GlMemoryBuffer;
use super::memory::ExportableMemory;
use crate::context::Context;
use crate::error::Result;
use crate::glprobe::GlOwner;
use crate::stream::Event;
use std::sync::Arc;

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
        Ok(Slot {
            read_fence: None,
            gl: import,
            memory,
            written: Event::new(ctx, false)?,
            state,
        })
    }

    /// Releases the slot, after its work was waited for: its GL fence and GL import when
    /// `gl_current` (leaked otherwise), then its CUDA memory (whose drop waits for the CUDA
    /// context before unmapping; a leaked GL import keeps the physical memory alive) and event.
    pub(super) fn release(self, gl_current: bool) {
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
        drop(memory);
        drop(written);
    }
}

/// Whether `owner` is current, so that a drop may delete its GL objects. Otherwise the error is
/// recorded for [`Context::take_drop_errors`] (naming `what`), and the objects are to be leaked:
/// deleting them by name with another context current would delete that context's objects.
pub(super) fn gl_current_for_drop(owner: GlOwner, ctx: &Context, what: &str) -> bool {
    match owner.check("glDeleteBuffers (not called)") {
        Ok(()) => true,
        Err(e) => {
            ctx.record_drop_error(&format!("deleting {what}'s GL objects (leaked instead)"), e);
            false
        }
    }
}
