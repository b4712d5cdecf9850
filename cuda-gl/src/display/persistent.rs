//! The staged mode on NVIDIA's GL, one PCIe copy per frame: CUDA copies each frame straight into
//! a pixel buffer's persistent mapping (`glBufferStorage` + `glMapBufferRange` with
//! `MAP_PERSISTENT_BIT`), which CUDA has registered as host memory (`cuMemHostRegister`), and GL
//! uploads the texture from that buffer on the GPU. No CPU copy.
//!
//! GL owns that memory and frees it with the buffer or its context, which the application may
//! destroy at any time: so every present waits (at most 10 s) for its own copy before it
//! returns, and no CUDA copy into GL's memory is pending while the application runs. Two buffers
//! are used in turn, so that GL's upload from one overlaps the next frame's copy into the other.

use super::gl_side::GlSide;
use super::staged::Source;
use crate::context::Context;
use crate::error::{Error, Result, UsageError};
use crate::gl_object::Kind;
use crate::glapi::{Fence, GlFns, GlOwner, claim, have};
use crate::result;
use crate::stream::{AsStream, Event};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

/// How long a present waits for its copy, or for GL's last upload from the buffer.
const WAIT_LIMIT: Duration = Duration::from_secs(10);

/// The flags of the buffers' storage and mapping.
const MAP_FLAGS: u32 = gl::MAP_WRITE_BIT | gl::MAP_PERSISTENT_BIT | gl::MAP_COHERENT_BIT;

/// One pixel buffer, persistently mapped and registered with CUDA.
#[derive(Debug)]
struct Slot {
    buffer: u32,
    ptr: *mut c_void,
    /// `cuMemHostRegister` succeeded on `ptr`.
    registered: bool,
    /// The claim on the buffer: no registration of the application's can map it.
    claim: Option<claim::Claim>,
    /// Recorded after each copy into the buffer.
    copied: Event,
    /// Placed after GL's last upload from the buffer.
    read: Option<Fence>,
    /// A copy into the buffer may still run: its wait failed. The buffer is then never
    /// unregistered, unmapped or deleted by cuda-gl.
    in_flight: bool,
}

/// The two buffers and whose turn it is.
#[derive(Debug)]
pub(super) struct Persistent {
    owner: GlOwner,
    ctx: Arc<Context>,
    slots: Vec<Slot>,
    next: usize,
}

impl Persistent {
    /// Two buffers of `bytes` bytes in the current context (`owner`, whose table is `fns`).
    ///
    /// # Errors
    /// [`Error::MissingGlFunction`] without `glBufferStorage` (OpenGL 4.4); [`Error::GlCall`]
    /// when GL refuses the storage or the mapping; the driver's error from
    /// `cuMemHostRegister` (a driver that cannot page-lock GL's mapping); everything made so
    /// far is released.
    pub(super) fn new(
        ctx: &Arc<Context>,
        owner: GlOwner,
        fns: &GlFns,
        bytes: usize,
    ) -> Result<Persistent> {
        let mut made = Persistent {
            owner,
            ctx: ctx.clone(),
            slots: Vec::with_capacity(2),
            next: 0,
        };
        for _ in 0..2 {
            // On an error `made` is dropped, which releases the slots made so far.
            made.add_slot(fns, bytes)?;
        }
        Ok(made)
    }

    /// Makes one more buffer: pushed first, then filled in, so that on an error the drop
    /// releases what was made of it.
    fn add_slot(&mut self, fns: &GlFns, bytes: usize) -> Result<()> {
        let storage = have(fns.buffer_storage, "glBufferStorage")?;
        let map = have(fns.map_buffer_range, "glMapBufferRange")?;
        let size = isize::try_from(bytes).map_err(|_| Error::Internal {
            what: "a display frame larger than isize::MAX bytes".into(),
        })?;
        let copied = Event::new(&self.ctx, false)?;
        let (owner, ctx) = (self.owner, self.ctx.clone());
        self.slots.push(Slot {
            buffer: 0,
            ptr: std::ptr::null_mut(),
            registered: false,
            claim: None,
            copied,
            read: None,
            in_flight: false,
        });
        let Some(slot) = self.slots.last_mut() else {
            return Err(Error::Internal {
                what: "a display buffer pushed and gone".into(),
            });
        };
        fns.drain_errors();
        let mut bound = 0;
        // SAFETY: a context is current (the caller checked the owner); a fresh name, bound
        // before use; immutable storage of `size` bytes with no initial data, mapped whole with
        // the flags it was made with; the binding is put back.
        unsafe {
            (fns.get_integerv)(gl::PIXEL_UNPACK_BUFFER_BINDING, &mut bound);
            (fns.gen_buffers)(1, &mut slot.buffer);
            (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, slot.buffer);
            storage(gl::PIXEL_UNPACK_BUFFER, size, std::ptr::null(), MAP_FLAGS);
            slot.ptr = map(gl::PIXEL_UNPACK_BUFFER, 0, size, MAP_FLAGS);
            (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, bound.max(0) as u32);
        }
        fns.check("glBufferStorage / glMapBufferRange (a display target)")?;
        if slot.ptr.is_null() {
            return Err(Error::GlCall {
                call: "glMapBufferRange",
                code: gl::INVALID_OPERATION,
            });
        }
        let Some(claim) = claim::claim(Kind::Buffer, slot.buffer, owner) else {
            let name = slot.buffer;
            // Another context of the group registered the fresh name meanwhile: it is left to
            // that one (not deleted, still mapped).
            slot.buffer = 0;
            slot.ptr = std::ptr::null_mut();
            return Err(Error::AlreadyRegistered {
                name,
                kind: Kind::Buffer.describe().to_string(),
            });
        };
        slot.claim = Some(claim);
        ctx.bind()?;
        // SAFETY: the context is current (bound); `ptr` is GL's mapping of `bytes` bytes,
        // mapped until `release` unregisters it first; nothing copies into it yet.
        unsafe { result::mem::host_register(slot.ptr, bytes, 0) }?;
        slot.registered = true;
        Ok(())
    }

    /// Copies `source` into the next buffer in `stream`'s order, waits for the copy, and has
    /// GL upload the texture from the buffer (in GL's order; no frame is left pending).
    ///
    /// # Errors
    /// The owner check's errors; [`Error::Timeout`] when GL's last upload from the buffer or
    /// the copy takes over 10 s (the buffer is then kept, never freed under the copy); the
    /// driver's errors of the copy; GL's of the upload;
    /// [`UsageError::PinnedBufferUntracked`] once a copy could not be tracked.
    pub(super) fn present(
        &mut self,
        gl: &GlSide,
        source: Source<'_>,
        stream: &impl AsStream,
    ) -> Result<()> {
        self.owner.check("glClientWaitSync (not called)")?;
        let shape = gl.frame_shape();
        let ctx = self.ctx.clone();
        let slot = self
            .slots
            .get_mut(self.next)
            .ok_or_else(|| Error::Internal {
                what: "a display target without its pixel buffers".into(),
            })?;
        if slot.in_flight {
            return Err(UsageError::PinnedBufferUntracked.into());
        }
        if let Some(read) = &slot.read {
            read.client_wait(WAIT_LIMIT, || "GL's upload from a display buffer".into())?;
        }
        slot.read = None;
        let (host, event) = (slot.ptr, slot.copied.raw());
        slot.in_flight = true;
        // SAFETY: the stream is live while borrowed and of this context (the frame checked).
        // In the work: `host` is one frame of GL's mapping, registered with CUDA, and GL no
        // longer reads it (its fence signalled above); it stays mapped until this copy is
        // waited for below (or, when that fails, for good: `in_flight`); the source lives
        // until the target drops this state.
        let queued = unsafe {
            ctx.run_now(stream.raw_stream(), "cuMemcpy2DAsync (not called)", |p| {
                source.queue_to_host(host, shape, p)?;
                Ok(result::stream::event_record(event, p)?)
            })
        };
        if queued.is_ok() {
            // A failed run_now waited for its private stream; a completed one is waited here.
            slot.copied.wait_for(WAIT_LIMIT)?;
        } else {
            // run_now synchronizes its private stream when the work failed after queueing
            // some; if that wait failed too, the copy's end is unknown.
            queued?;
        }
        slot.in_flight = false;
        gl.upload_from_buffer(slot.buffer)?;
        slot.read = Some(Fence::place(self.owner)?);
        self.next = 1 - self.next;
        Ok(())
    }
}

impl Drop for Persistent {
    fn drop(&mut self) {
        for slot in std::mem::take(&mut self.slots) {
            release(slot, self.owner, &self.ctx);
        }
    }
}

/// Unregisters, unmaps and deletes one buffer; keeps it (claimed) when a copy into it may run.
fn release(mut slot: Slot, owner: GlOwner, ctx: &Context) {
    if slot.in_flight && slot.copied.wait_for(WAIT_LIMIT).is_err() {
        log::error!(
            "cuda-gl: display pixel buffer {} leaked: a CUDA copy into it may still run",
            slot.buffer
        );
        std::mem::forget(slot.claim.take());
        return;
    }
    if slot.registered {
        ctx.release_in_drop("unregister a display buffer", "cuMemHostUnregister", || {
            // SAFETY: registered by `make_slot`, unregistered once; no copy into it is pending
            // (every present waits for its own, and an unfinished one returned above).
            unsafe { result::mem::host_unregister(slot.ptr) }
        });
    }
    if slot.buffer == 0 {
        return;
    }
    match owner.check("glDeleteBuffers (not called)") {
        Ok(fns) => {
            let mut bound = 0;
            // SAFETY: the owning context is current (checked); the buffer is ours (claimed
            // since it was made), mapped when `ptr` is set; the binding is put back (0 when it
            // was this buffer).
            unsafe {
                (fns.get_integerv)(gl::PIXEL_UNPACK_BUFFER_BINDING, &mut bound);
                if !slot.ptr.is_null()
                    && let Some(unmap) = fns.unmap_buffer
                {
                    (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, slot.buffer);
                    unmap(gl::PIXEL_UNPACK_BUFFER);
                }
                let bound = (bound.max(0) as u32 != slot.buffer).then_some(bound.max(0) as u32);
                (fns.bind_buffer)(gl::PIXEL_UNPACK_BUFFER, bound.unwrap_or(0));
                (fns.delete_buffers)(1, &slot.buffer);
            }
        }
        Err(e) => {
            log::error!(
                "cuda-gl: display pixel buffer {} leaked, not deleted: {e}",
                slot.buffer
            );
            std::mem::forget(slot.claim.take());
        }
    }
    // The claim ends here, with the buffer deleted.
}
