//! The ring: [`ExternalRing`] and its guards [`CudaWrite`] and [`GlRead`], the state of each
//! slot, and the recovery of leaked guards.

use super::DEFAULT_TIMEOUT;
use super::external_gl::ExternalGl;
use super::slot::{Slot, Slots};
use crate::context::Context;
use crate::error::{Error, Result, UsageError};
use crate::gl_name::BufferName;
use crate::glapi::{Fence, GlOwner};
use crate::memory::DevicePtr;
use crate::result;
use crate::stream::AsStream;
use crate::wait::{InDrop, naming_timeout, wait_limit};
use cuda_gl_sys as sys;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

/// Which of a slot's guards is out. A guard sets it when it is created and clears it when it
/// finishes; the ring finding it set means that the guard was leaked (`mem::forget`) or failed
/// to finish, and that the slot's event or fence does not cover its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// No guard is out: the event and the fence cover the slot's work.
    Idle,
    /// A [`CudaWrite`] is out or was leaked: CUDA work may be writing the slot unrecorded.
    Writing,
    /// A [`GlRead`] is out or was leaked: GL commands may be reading the slot unfenced.
    Reading,
}

/// What a ring tracks for each slot besides its objects.
#[derive(Debug)]
struct RingState {
    /// The event was recorded after CUDA's writes and not yet waited for.
    write_pending: bool,
    access: Access,
}

/// One slot of a ring. [`ExternalRing`]'s drop takes it apart ([`Slot::release`]).
type RingSlot = Slot<Fence, RingState>;

impl RingSlot {
    /// Restores the invariant that the event and the fence cover all of the slot's work after a
    /// guard was leaked: CUDA work of a leaked [`CudaWrite`] is waited for by synchronizing the
    /// whole CUDA context (the guard's stream may be gone), at most the [wait
    /// limit](crate::wait_limit), and GL commands of a leaked [`GlRead`] get the fence the guard
    /// did not place (waited for before the next write).
    ///
    /// # Errors
    /// [`Error::Timeout`] when the context's work has not finished within the limit: the slot
    /// stays marked as being written, and the next call tries again; the driver's error from
    /// `cuCtxSynchronize`; the errors of placing the fence.
    fn recover_leaked_guard(&mut self, index: usize, owner: GlOwner) -> Result<()> {
        match self.state.access {
            Access::Idle => {}
            Access::Writing => {
                let limit = wait_limit();
                log::warn!(
                    "cuda-gl: external ring slot {index} is still being written by CUDA (its \
                     CudaWrite was leaked or could not record its event); synchronizing the CUDA \
                     context (at most {limit:?})"
                );
                self.memory.context().synchronize_within(limit)?;
                self.state.write_pending = false;
            }
            Access::Reading => {
                log::warn!(
                    "cuda-gl: external ring slot {index} is still being read by GL (its GlRead \
                     was leaked or could not place its fence); fencing the GL commands issued so \
                     far"
                );
                // Superseding an older fence is fine: the new one signals after it.
                self.read_fence = Some(Fence::place(owner)?);
            }
        }
        self.state.access = Access::Idle;
        Ok(())
    }

    /// Waits on the CPU, for at most `timeout`, for the CUDA work recorded by the last finished
    /// [`CudaWrite`] of the slot, `index`. A wait that fails leaves the write pending, so that
    /// the next read waits again.
    fn wait_for_writes(&mut self, index: usize, timeout: Duration) -> Result<()> {
        if self.state.write_pending {
            self.written.wait_for(timeout).map_err(|e| {
                naming_timeout(e, || {
                    format!("the CUDA event after the writes of ring slot {index}")
                })
            })?;
            self.state.write_pending = false;
        }
        Ok(())
    }
}

/// A ring of external-memory slots: CUDA writes one slot while GL reads others, ordered with a
/// CUDA event and a GL fence per slot and no map or unmap at all.
///
/// [`write`](Self::write) waits (on the CPU) until GL's last reads of the slot are done and
/// returns a [`CudaWrite`] with the slot's device pointer; finishing it records the slot's
/// event on the stream. [`read`](Self::read) waits (on the CPU) for that event and returns a
/// [`GlRead`] with the slot's GL buffer; finishing it places a GL fence and flushes. Both waits
/// give up after the ring's timeout ([`set_timeout`](Self::set_timeout)). A guard that is
/// leaked instead of finished is caught by the next call on its slot, which recovers with a
/// wait (see [what is checked](super#what-is-checked-and-what-is-unsafe)).
///
/// All calls need the GL context the [`ExternalGl`] was loaded in current on the calling thread
/// ([`Error::WrongGlContext`] or [`Error::NoGlContext`] otherwise), and so does dropping the
/// ring: it waits for every slot's event and fence, then deletes the GL objects, then releases
/// the CUDA memory (see the [module docs](super#release-order)). When a wait of the drop fails
/// (a kernel that does not end), the CUDA memory is leaked instead, and the failure recorded
/// for [`Context::check_drop_errors`]. The ring is neither `Send` nor `Sync`, since its GL
/// calls go to the context current on the calling thread.
pub struct ExternalRing {
    slots: Slots<Fence, RingState>,
    timeout: Duration,
}

impl fmt::Debug for ExternalRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExternalRing")
            .field("slots", &self.slots.len())
            .field("slot_bytes", &self.slot_bytes())
            .field("timeout", &self.timeout)
            .field("owner", &self.slots.owner)
            .finish_non_exhaustive()
    }
}

impl ExternalRing {
    /// Creates `slots` slots (1 to 16; 3 or more for frames in flight, see
    /// [ring depth and lag](super#ring-depth-and-lag)) of `bytes_per_slot` bytes each: one
    /// [`ExportableMemory`], one [`GlMemoryBuffer`] and one CUDA event per slot.
    ///
    /// The GL context `gl` was loaded for must be current.
    ///
    /// # Errors
    /// [`UsageError::BadRingSlots`] for 0 or more than 16 slots; [`UsageError::ZeroSize`] for 0
    /// bytes;
    /// [`Error::WrongGlContext`] or [`Error::NoGlContext`] when the context `gl` was loaded for
    /// is not current; otherwise as [`ExportableMemory::new`], [`GlMemoryBuffer::import`] and
    /// [`Event::new`].
    ///
    /// [`ExportableMemory`]: super::ExportableMemory
    /// [`GlMemoryBuffer`]: super::GlMemoryBuffer
    /// [`ExportableMemory::new`]: super::ExportableMemory::new
    /// [`GlMemoryBuffer::import`]: super::GlMemoryBuffer::import
    /// [`Event::new`]: crate::Event::new
    pub fn new(
        ctx: &Arc<Context>,
        gl: &ExternalGl,
        slots: usize,
        bytes_per_slot: usize,
    ) -> Result<ExternalRing> {
        if !(1..=16).contains(&slots) {
            return Err(UsageError::BadRingSlots { slots, max: 16 }.into());
        }
        let state = || RingState {
            write_pending: false,
            access: Access::Idle,
        };
        Ok(ExternalRing {
            slots: Slots::new(ctx, gl, slots, bytes_per_slot, state)?,
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// How many slots there are.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are no slots (never true: a ring has at least one).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The usable size of each slot in bytes (as asked for).
    pub fn slot_bytes(&self) -> usize {
        self.slots.first().map_or(0, |s| s.memory.requested_size())
    }

    /// The GL buffer name of `slot`, e.g. to create a texture buffer over it once.
    ///
    /// # Errors
    /// [`UsageError::OutOfRange`] for a slot out of range.
    pub fn gl_buffer(&self, slot: usize) -> Result<BufferName> {
        Ok(self.slot_ref(slot)?.gl.buffer())
    }

    /// How long a wait for a slot's GL fence or CUDA event may take before [`Error::Timeout`]
    /// (default [`DEFAULT_TIMEOUT`]). The recovery of a leaked [`CudaWrite`] waits for the CUDA
    /// context at most the [wait limit](crate::wait_limit) (10 s by default), whatever this is.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    fn slot_ref(&self, slot: usize) -> Result<&RingSlot> {
        let len = self.slots.len();
        self.slots.get(slot).ok_or_else(|| out_of_range(slot, len))
    }

    /// The slot, after checking that the owning GL context is current (for `call`) and
    /// recovering a guard of it that was leaked.
    fn slot_checked(&mut self, slot: usize, call: &'static str) -> Result<&mut RingSlot> {
        let owner = self.slots.owner;
        let len = self.slots.len();
        let entry = self
            .slots
            .get_mut(slot)
            .ok_or_else(|| out_of_range(slot, len))?;
        owner.check(call)?;
        entry.recover_leaked_guard(slot, owner)?;
        Ok(entry)
    }

    /// Starts CUDA's writes to `slot` on `stream`: waits on the CPU until GL's reads of the slot
    /// (up to its last [`GlRead`]) have finished, then returns the guard that hands out the
    /// slot's device pointer. Queue the writes on `stream`, then [`CudaWrite::finish`] (or drop)
    /// it.
    ///
    /// A guard of the slot that was leaked is recovered first: the CUDA context is synchronized
    /// (for a [`CudaWrite`]), or GL's commands are fenced and waited for (for a [`GlRead`]).
    ///
    /// # Errors
    /// [`UsageError::OutOfRange`] for a slot out of range; [`UsageError::WrongCudaContext`] for a
    /// stream of another context; [`Error::WrongGlContext`] or [`Error::NoGlContext`] when the
    /// ring's GL context is not current; [`Error::Timeout`] or [`Error::GlCall`] from the fence
    /// wait (`glClientWaitSync`); [`Error::Timeout`] when a leaked [`CudaWrite`]'s recovery finds
    /// the context's work unfinished after the wait limit (the slot stays unusable until a call
    /// recovers it); the driver's error from synchronizing the context or from `cuStreamWaitEvent`
    /// (a second write before a read waits for the first).
    #[doc(alias = "glClientWaitSync")]
    pub fn write<'a, S: AsStream>(
        &'a mut self,
        slot: usize,
        stream: &'a S,
    ) -> Result<CudaWrite<'a>> {
        let timeout = self.timeout;
        if stream.raw_context() != self.slot_ref(slot)?.memory.context().raw() {
            return Err(UsageError::WrongCudaContext {
                what: "stream",
                owner: "the ring's memory".into(),
            }
            .into());
        }
        let ctx = self.slot_ref(slot)?.memory.context().clone();
        crate::stream::refuse_capturing(&ctx, stream, "ExternalRing::write (not begun)")?;
        let entry = self.slot_checked(slot, "glClientWaitSync (not called)")?;
        entry.wait_for_reads(timeout, || format!("ring slot {slot}"))?;
        if entry.state.write_pending {
            // A second write before GL's read, perhaps on another stream: recording the slot's
            // event on this stream alone would forget the first write's work, and `read` would
            // let GL read while it still runs. This stream first waits for that work.
            entry.memory.context().bind()?;
            // SAFETY: the stream is live while borrowed and in the ring's context (checked
            // above); the event is live and in the same context.
            unsafe { result::stream::wait_event(stream.raw_stream(), entry.written.raw()) }?;
        }
        entry.state.access = Access::Writing;
        Ok(CudaWrite {
            slot: entry,
            stream: stream.raw_stream(),
            done: false,
        })
    }

    /// Starts GL's reads of `slot`: waits on the CPU until the CUDA work before the slot's last
    /// [`CudaWrite::finish`] has completed, then returns the guard that hands out the slot's GL
    /// buffer. Issue the GL commands that read it, then [`GlRead::finish`] (or drop) it.
    ///
    /// A guard of the slot that was leaked is recovered first, as in [`write`](Self::write).
    ///
    /// # Errors
    /// [`UsageError::OutOfRange`] for a slot out of range; [`Error::WrongGlContext`] or
    /// [`Error::NoGlContext`] when the ring's GL context is not current; [`Error::Timeout`] when
    /// CUDA's writes have not finished within the ring's timeout (they stay pending: the next read
    /// waits again), or a leaked [`CudaWrite`]'s recovery within the wait limit; the driver's error
    /// from `cuEventQuery` (such as a kernel's fault) or from synchronizing the context.
    #[doc(alias = "cuEventQuery")]
    pub fn read(&mut self, slot: usize) -> Result<GlRead<'_>> {
        self.begin_read(slot, true)
    }

    /// [`read`](Self::read) without waiting for the event of CUDA's last finished write: the
    /// broken ordering, for tests that show that the wait is needed and for measuring what it
    /// costs. The context check and the recovery of a leaked guard still happen.
    ///
    /// # Safety
    /// 1. GL may read the slot while CUDA is still writing it: the caller accepts reading stale
    ///    or torn bytes (there is no other harm: the memory stays allocated).
    ///
    /// # Errors
    /// As [`read`](Self::read), less the event's.
    pub unsafe fn read_unordered(&mut self, slot: usize) -> Result<GlRead<'_>> {
        self.begin_read(slot, false)
    }

    /// [`read`](Self::read), waiting for CUDA's writes only when `ordered`.
    fn begin_read(&mut self, slot: usize, ordered: bool) -> Result<GlRead<'_>> {
        let owner = self.slots.owner;
        let timeout = self.timeout;
        let entry = self.slot_checked(slot, "glFenceSync (not called)")?;
        if ordered {
            entry.wait_for_writes(slot, timeout)?;
        } else {
            entry.state.write_pending = false;
        }
        entry.state.access = Access::Reading;
        Ok(GlRead {
            slot: entry,
            owner,
            done: false,
            _not_send: PhantomData,
        })
    }

    /// Waits on the CPU for every slot's pending CUDA writes and GL reads, recovering leaked guards
    /// first; each wait at most the ring's timeout (a recovery: the [wait
    /// limit](crate::wait_limit)).
    ///
    /// # Errors
    /// [`Error::WrongGlContext`] or [`Error::NoGlContext`] when the ring's GL context is not
    /// current; otherwise the first error of an event wait ([`Error::Timeout`], or the driver's
    /// error from `cuEventQuery`), of a fence wait ([`Error::Timeout`], [`Error::GlCall`]) or
    /// of a recovery.
    pub fn wait_idle(&mut self) -> Result<()> {
        let timeout = self.timeout;
        for i in 0..self.slots.len() {
            let slot = self.slot_checked(i, "glClientWaitSync (not called)")?;
            slot.wait_for_writes(i, timeout)?;
            slot.wait_for_reads(timeout, || format!("ring slot {i}"))?;
        }
        Ok(())
    }
}

fn out_of_range(slot: usize, len: usize) -> Error {
    UsageError::OutOfRange {
        what: "ring slot",
        index: slot,
        len,
    }
    .into()
}

impl Drop for ExternalRing {
    fn drop(&mut self) {
        let _in_drop = InDrop::enter();
        let Some(ctx) = self.slots.first().map(|s| s.memory.context().clone()) else {
            return;
        };
        let gl_current = self.slots.gl_current_for_drop(&ctx, "an external ring");
        let waited = if gl_current { self.wait_idle() } else { Ok(()) };
        self.slots
            .release(&ctx, "an external ring", gl_current, waited);
    }
}

/// CUDA's turn on one ring slot: hands out the slot's device pointer; finishing (or dropping)
/// records the slot's event on the stream given to [`ExternalRing::write`].
///
/// Leaking it (`mem::forget`) is safe: the ring's next call on the slot synchronizes the CUDA
/// context before GL may read it (at most the wait limit: past that the call returns
/// [`Error::Timeout`], and the slot waits for the next one).
#[derive(Debug)]
#[must_use = "queue CUDA's writes to the slot, then finish the guard"]
pub struct CudaWrite<'a> {
    slot: &'a mut RingSlot,
    stream: sys::CUstream,
    done: bool,
}

impl fmt::Debug for RingSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot")
            .field("gl_buffer", &self.gl.buffer().0)
            .field("bytes", &self.memory.requested_size())
            .field("state", &self.state)
            .field("read_fence", &self.read_fence.is_some())
            .finish_non_exhaustive()
    }
}

impl CudaWrite<'_> {
    /// The slot's device address, for kernel arguments. Queue the work on the stream given to
    /// [`ExternalRing::write`]: only that stream's work is covered by the slot's event.
    pub fn device_ptr(&self) -> DevicePtr<'_> {
        self.slot.memory.device_ptr_unchecked()
    }

    /// The usable size of the slot in bytes.
    pub fn len(&self) -> usize {
        self.slot.memory.requested_size()
    }

    /// Whether the slot has no bytes (never true).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records the slot's event on the stream: GL's next [`ExternalRing::read`] of the slot
    /// waits for it.
    ///
    /// # Errors
    /// The driver's error from `cuEventRecord`. The slot then stays marked as being written,
    /// and the ring's next call on it synchronizes the CUDA context (at most the wait limit).
    #[doc(alias = "cuEventRecord")]
    pub fn finish(mut self) -> Result<()> {
        self.done = true;
        self.record()
    }

    /// Records the slot's event on `private`, cuda-gl's private stream of the ring's context,
    /// right after the writes queued on it, inside their run (where `finish` records it in a
    /// run of its own on the guard's stream, after them): one join less, and nothing of
    /// another thread's that reaches the private stream once the run releases its lock comes
    /// before the record. The guard is finished either way (its drop records nothing).
    ///
    /// # Safety
    /// 1. `private` is the private stream of the ring's context, bound, inside a run joined to
    ///    the stream given to [`ExternalRing::write`], after the run's writes of the slot.
    ///
    /// # Errors
    /// The driver's error from `cuEventRecord`: the slot then stays marked as being written, and
    /// the ring's next call on it synchronizes the CUDA context (at most the wait limit).
    pub(crate) unsafe fn finish_in_run(&mut self, private: sys::CUstream) -> Result<()> {
        self.done = true;
        // SAFETY: the event is live, of the ring's context; `private` is that context's live
        // private stream, bound ((1)), which never captures.
        unsafe { result::stream::event_record(self.slot.written.raw(), private) }?;
        self.slot.state.write_pending = true;
        self.slot.state.access = Access::Idle;
        Ok(())
    }

    /// Ends a guard under which nothing was queued (its run was refused before its work, say
    /// by a capture of the stream begun since [`ExternalRing::write`]): no record (the slot's
    /// event still covers its earlier writes), and the slot is idle again, so that the next
    /// call on it does not synchronize the CUDA context. Nothing once the guard is finished
    /// ([`finish_in_run`](Self::finish_in_run) ran).
    pub(crate) fn abandon(mut self) {
        if !self.done {
            self.done = true;
            self.slot.state.access = Access::Idle;
        }
    }

    fn record(&mut self) -> Result<()> {
        let event = self.slot.written.raw();
        // SAFETY: the stream is live (borrowed for 'a by `ExternalRing::write`) and in the
        // ring's context (checked there), as the event is.
        unsafe {
            self.slot
                .memory
                .context()
                .run_now(self.stream, "cuEventRecord (not called)", |p| {
                    Ok(result::stream::event_record(event, p)?)
                })
        }?;
        self.slot.state.write_pending = true;
        self.slot.state.access = Access::Idle;
        Ok(())
    }
}

impl Drop for CudaWrite<'_> {
    fn drop(&mut self) {
        if !self.done
            && let Err(e) = self.record()
        {
            self.slot
                .memory
                .context()
                .record_drop_error("recording an external ring slot's event", e);
        }
    }
}

/// GL's turn on one ring slot: hands out the slot's GL buffer; finishing (or dropping) places a
/// GL fence after the commands issued meanwhile, and flushes them.
///
/// Leaking it (`mem::forget`) is safe: the ring's next call on the slot places the fence, and
/// the next write of the slot waits for it. Neither `Send` nor `Sync`: the fence goes to the
/// context current on the calling thread.
#[must_use = "issue GL's reads of the buffer, then finish the guard"]
pub struct GlRead<'a> {
    slot: &'a mut RingSlot,
    owner: GlOwner,
    done: bool,
    /// `!Send` and `!Sync`: GL calls go to the context current on the calling thread.
    _not_send: PhantomData<*const ()>,
}

impl fmt::Debug for GlRead<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GlRead")
            .field("slot", &self.slot)
            .finish_non_exhaustive()
    }
}

impl GlRead<'_> {
    /// The slot's GL buffer name.
    pub fn buffer(&self) -> BufferName {
        self.slot.gl.buffer()
    }

    /// The usable size of the slot in bytes.
    pub fn len(&self) -> usize {
        self.slot.gl.size()
    }

    /// Whether the slot has no bytes (never true).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Places a fence after the GL commands issued so far (`glFenceSync`) and flushes them
    /// (`glFlush`): CUDA's next [`ExternalRing::write`] of the slot waits for the fence.
    ///
    /// # Errors
    /// [`Error::WrongGlContext`] or [`Error::NoGlContext`] when the ring's GL context is not
    /// current; [`Error::GlCall`] when `glFenceSync` fails. The slot then stays marked as being
    /// read, and the ring's next call on it places the fence.
    #[doc(alias = "glFenceSync")]
    pub fn finish(mut self) -> Result<()> {
        self.done = true;
        self.fence()
    }

    fn fence(&mut self) -> Result<()> {
        // A previous fence of this slot (two reads without a write between) is superseded: the
        // new one signals after it. Dropping it deletes it.
        self.slot.read_fence = Some(Fence::place(self.owner)?);
        self.slot.state.access = Access::Idle;
        Ok(())
    }
}

impl Drop for GlRead<'_> {
    fn drop(&mut self) {
        if !self.done
            && let Err(e) = self.fence()
        {
            self.slot
                .memory
                .context()
                .record_drop_error("fencing an external ring slot's reads", e);
        }
    }
}
