//! A ring's or a stream's slot objects: made together, and taken apart on drop, the GL side
//! only with its context current, then the CUDA side (see the
//! [module docs](super#release-order)).

use super::gl_fns::ExternalGl;
use super::import::GlMemoryBuffer;
use super::memory::ExportableMemory;
use crate::context::Context;
use crate::error::Result;
use crate::glprobe::GlOwner;
use crate::stream::Event;
use std::sync::Arc;

/// One slot's objects: `bytes` bytes of CUDA memory, its GL import, and an event.
pub(super) fn make_slot(
    ctx: &Arc<Context>,
    gl: &ExternalGl,
    bytes: usize,
) -> Result<(GlMemoryBuffer, ExportableMemory, Event)> {
    let memory = ExportableMemory::new(ctx, bytes)?;
    let import = GlMemoryBuffer::import(gl, &memory)?;
    Ok((import, memory, Event::new(ctx, false)?))
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

/// Releases one slot, after its work was waited for: its GL fence and GL import when
/// `gl_current` (leaked otherwise), then its CUDA memory (whose drop waits for the CUDA context
/// before unmapping; a leaked GL import keeps the physical memory alive) and event.
pub(super) fn release_slot<F>(
    fence: Option<F>,
    gl: GlMemoryBuffer,
    memory: ExportableMemory,
    event: Event,
    gl_current: bool,
) {
    if gl_current {
        drop(fence);
        drop(gl);
    } else {
        std::mem::forget(fence);
        std::mem::forget(gl);
    }
    drop(memory);
    drop(event);
}
