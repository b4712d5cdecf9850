//! Streaming: [`FrameStream`], frames that CUDA produces and GL consumes in bursts, so that the
//! two APIs hand over to each other once per burst instead of once per frame.

use super::DEFAULT_TIMEOUT;
use super::external_gl::ExternalGl;
use super::frame::{FrameRead, FrameWrite};
use super::slot::{Slot, Slots};
use crate::context::Context;
use crate::error::{Error, Result, UsageError};
use crate::gl_name::BufferName;
use crate::glapi::Fence;
use crate::stream::{AsStream, check_same_context};
use crate::wait::{InDrop, wait_limit};
use std::cell::Cell;
use std::collections::VecDeque;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most slots a [`FrameStream`] may have.
pub const MAX_STREAM_SLOTS: usize = 64;

/// The longest pause between two polls of a wait: short against a frame, long enough not to keep
/// a core busy.
const MAX_POLL_PAUSE: Duration = Duration::from_micros(50);

/// What a stream tracks for each slot besides its objects.
struct StreamState {
    /// The producer of the slot's frame returned `Ok`: the consumer gets the frame.
    produced: bool,
    /// The event may not cover the slot's writes (it was not recorded after them): the next wait
    /// for the slot synchronizes the CUDA context instead (at most the [wait
    /// limit](crate::wait_limit), 10 s by default). A `Cell`, so that the recording clears it
    /// through the shared borrow the producer also holds.
    unrecorded: Cell<bool>,
}

/// One slot: the memory both APIs see, the event after CUDA's last write of it, and the fence
/// after GL's last reads of it (shared by every slot of that burst).
type StreamSlot = Slot<Rc<Fence>, StreamState>;

impl StreamSlot {
    /// Waits on the CPU, for at most `limit`, for CUDA's writes of the slot; when no event covers
    /// them, for the whole CUDA context, at most the [wait limit](crate::wait_limit) (not `limit`:
    /// a zero timeout that polls the event would never see a context wait end). A wait that fails
    /// leaves the slot as it was, so that the next wait for it waits again.
    fn wait_written(&mut self, limit: Duration) -> Result<()> {
        if self.state.unrecorded.get() {
            self.memory.context().synchronize_within(wait_limit())?;
            self.state.unrecorded.set(false);
            return Ok(());
        }
        self.written.wait_for(limit)
    }

    /// Whether CUDA's writes of the slot are done, without waiting.
    fn is_written(&self) -> Result<bool> {
        if self.state.unrecorded.get() {
            return Ok(false);
        }
        self.written.query()
    }
}

/// A stream of frames from CUDA to GL, ordered on the CPU in bursts: the fastest ordered way from
/// a CUDA kernel to a GL draw that cuda-gl knows of (see `docs/benchmarks.md`, "Streaming").
///
/// Each frame goes into one of `slots` slots of external memory (CUDA's
/// [`ExportableMemory`], imported into GL as a [`GlMemoryBuffer`]). Frame `n` uses slot
/// `n % slots`. Frames go in bursts of `burst` frames. [`push_burst`](Self::push_burst) calls
/// the producer once per frame of the next burst, back to back (each call queues CUDA's writes
/// of one frame on a stream), and records the slots' events after them. GL is given a burst when
/// all its writes are done: the consumer is called for each of its frames in order, followed by
/// one GL fence for the whole burst. The producer of frame `n` waits for that fence of frame
/// `n - slots`. CUDA and GL therefore hand over to each other once per burst rather than once
/// per frame, and that is what costs: each handover makes the GPU switch between the two APIs,
/// while the work of both APIs, queued with nothing ordered, interleaves almost for free.
///
/// The price is latency: GL sees frame `n` once the burst that holds it is complete and written,
/// so between `burst` and `slots` frames after it was pushed
/// ([`FrameRead::frames_behind`]). With `slots = 2 * burst`, CUDA writes one burst while GL reads
/// the previous one.
///
/// # Ordering and safety
/// - GL never reads a slot before CUDA's writes of it have finished: the consumer is called only
///   after the event recorded on the producer's stream completed. Queue the writes on the stream
///   given to [`push_burst`](Self::push_burst): the events cover only that stream's work.
/// - CUDA never writes a slot before GL's reads of its previous frame have finished: the
///   producer is called only after the fence placed after those reads signalled.
/// - A producer or consumer that returns an error or panics leaves the stream consistent: the
///   events are recorded (or, if that fails, the next wait synchronizes the context), and the
///   fence is placed (if placing it fails, or the consumer switched GL contexts, the next call
///   places it before anything else, and no slot of that burst is written until it has). A
///   failed or panicking producer's burst is not given to the consumer from that frame on (a
///   panic: not at all); a consumer's error ends its burst there.
/// - The waits of [`push_burst`](Self::push_burst), [`flush`](Self::flush) and
///   [`wait_idle`](Self::wait_idle) have a limit ([`set_timeout`](Self::set_timeout)). When
///   recording a slot's event failed, the next wait for the slot synchronizes the whole CUDA
///   context instead, at most the wait limit. Creating the stream (the import check) and dropping
///   it (releasing the CUDA memory) wait for the context too, at most the wait limit: a drop that
///   gives up leaks the CUDA memory, and records why for
///   [`Context::check_drop_errors`](crate::Context::check_drop_errors). While waiting for a slot,
///   the stream keeps handing GL every burst that CUDA has finished.
/// - Every call needs the GL context the [`ExternalGl`] was loaded in current on the calling
///   thread ([`Error::WrongGlContext`] or [`Error::NoGlContext`] otherwise), and so does
///   dropping the stream. The stream is neither `Send` nor `Sync`.
///
/// [`ExportableMemory`]: super::ExportableMemory
/// [`GlMemoryBuffer`]: super::GlMemoryBuffer
pub struct FrameStream {
    slots: Slots<Rc<Fence>, StreamState>,
    burst: u64,
    /// The index of the next frame to push.
    pushed: u64,
    /// Complete bursts not given to GL yet, oldest first, as frame ranges.
    complete: VecDeque<(u64, u64)>,
    /// Frames below this were given to GL.
    consumed: u64,
    /// A burst whose reads have no fence yet: its consumer panicked, or placing the fence
    /// failed. Every call fences it first; its slots are not written until then.
    reading: Option<(u64, u64)>,
    ordered: bool,
    ctx: Arc<Context>,
    timeout: Duration,
}

impl fmt::Debug for FrameStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameStream")
            .field("slots", &self.slots.len())
            .field("burst", &self.burst)
            .field("frame_bytes", &self.frame_bytes())
            .field("pushed", &self.pushed)
            .field("consumed", &self.consumed)
            .field("ordered", &self.ordered)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Records the events of a burst's slots on the producer's stream when dropped, so that a
/// producer that panics still leaves its writes covered.
struct RecordOnDrop<'a, S: AsStream> {
    slots: &'a [StreamSlot],
    burst: std::ops::Range<usize>,
    stream: &'a S,
    done: bool,
}

impl<S: AsStream> RecordOnDrop<'_, S> {
    /// Records the event of every slot of the burst, after all of the burst's writes; a slot
    /// whose event is recorded is no longer marked as unrecorded.
    fn record(&mut self) -> Result<()> {
        self.done = true;
        let len = self.slots.len();
        for i in self.burst.clone() {
            let slot = &self.slots[i % len];
            slot.written
                .record_ordered(self.stream, "cuEventRecord (not called)")?;
            slot.state.unrecorded.set(false);
        }
        Ok(())
    }
}

impl<S: AsStream> Drop for RecordOnDrop<'_, S> {
    fn drop(&mut self) {
        // Only a producer that panicked gets here. A slot whose event cannot be recorded stays
        // marked as unrecorded, so the next wait for it synchronizes the context.
        if !self.done
            && let Err(e) = self.record()
        {
            log::error!("cuda-gl: recording a frame stream's events failed: {e}");
        }
    }
}

impl FrameStream {
    /// Creates a stream of `slots` slots of `bytes_per_frame` bytes each, handed from CUDA to GL
    /// in bursts of `burst` frames (1 to `slots`; `slots` at most [`MAX_STREAM_SLOTS`]).
    /// `slots = 2 * burst` lets CUDA write one burst while GL reads the previous one.
    ///
    /// The GL context `gl` was loaded for must be current.
    ///
    /// # Errors
    /// [`UsageError::BadFrameStreamShape`] for a burst of 0 or more frames than slots, or more
    /// than [`MAX_STREAM_SLOTS`] slots; [`UsageError::ZeroSize`] for 0 bytes; [`Error::WrongGlContext`] or [`Error::NoGlContext`] when
    /// the context `gl` was loaded for is not current; otherwise as [`ExportableMemory::new`],
    /// [`GlMemoryBuffer::import`] and [`Event::new`].
    ///
    /// [`ExportableMemory::new`]: super::ExportableMemory::new
    /// [`GlMemoryBuffer::import`]: super::GlMemoryBuffer::import
    /// [`Event::new`]: crate::Event::new
    pub fn new(
        ctx: &Arc<Context>,
        gl: &ExternalGl,
        bytes_per_frame: usize,
        slots: usize,
        burst: usize,
    ) -> Result<FrameStream> {
        if burst == 0 || burst > slots || slots > MAX_STREAM_SLOTS {
            return Err(UsageError::BadFrameStreamShape {
                slots,
                burst,
                max_slots: MAX_STREAM_SLOTS,
            }
            .into());
        }
        let state = || StreamState {
            produced: false,
            unrecorded: Cell::new(false),
        };
        Ok(FrameStream {
            slots: Slots::new(ctx, gl, slots, bytes_per_frame, state)?,
            burst: burst as u64,
            pushed: 0,
            complete: VecDeque::new(),
            consumed: 0,
            reading: None,
            ordered: true,
            ctx: ctx.clone(),
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// How many slots there are.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// How many frames make a burst.
    pub fn burst(&self) -> usize {
        // The burst was a usize at creation.
        usize::try_from(self.burst).unwrap_or(usize::MAX)
    }

    /// The usable size of each frame in bytes (as asked for).
    pub fn frame_bytes(&self) -> usize {
        self.slots.first().map_or(0, |s| s.memory.requested_size())
    }

    /// The GL buffer name of `slot`, e.g. to create a texture buffer over it once. Read the
    /// slot (through it or any object made on it) only inside the consumer, with the stream's
    /// GL context: the burst's fence covers the GL commands issued there, and nothing else.
    ///
    /// # Errors
    /// [`UsageError::OutOfRange`] for a slot out of range.
    pub fn gl_buffer(&self, slot: usize) -> Result<BufferName> {
        let len = self.slots.len();
        self.slots.get(slot).map(|s| s.gl.buffer()).ok_or_else(|| {
            UsageError::OutOfRange {
                what: "frame stream slot",
                index: slot,
                len,
            }
            .into()
        })
    }

    /// How many frames were pushed so far.
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// How many frames were given to GL so far (consumed, or skipped after a failed producer).
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// How long one wait may take before [`Error::Timeout`] (default [`DEFAULT_TIMEOUT`]).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Turns the ordering off: the consumer is called for complete bursts without waiting for
    /// CUDA's writes, and the producer without waiting for GL's reads. For tests that show that
    /// the ordering is needed, and for measuring what it costs.
    ///
    /// # Safety
    /// 1. GL may read a frame while CUDA is still writing it, and CUDA may overwrite a frame
    ///    while GL still reads it: the caller accepts reading stale or torn frames. There is no
    ///    other harm: the drop still waits for CUDA's work before releasing the memory, GL
    ///    defers deleting buffers that queued commands use, and a GL import keeps the physical
    ///    memory alive.
    pub unsafe fn disable_ordering(&mut self) {
        self.ordered = false;
    }

    /// Pushes the next burst of frames: waits until its slots are free (GL's reads of their
    /// previous frames done), calls `produce` once for each frame of the burst, back to back, to
    /// queue CUDA's writes on `stream`, and records the slots' events on `stream` after the last
    /// one. Then GL is given every burst whose writes are done: `consume` is called for each of
    /// its frames, in order, here or in a later call.
    ///
    /// The producer runs back to back for the whole burst on purpose: CUDA then runs the burst
    /// in one turn on the GPU, instead of one turn per frame between GL's draws.
    ///
    /// A producer that fails ends the burst there: its frame and the rest of the burst are not
    /// given to GL, and the error is returned.
    ///
    /// # Errors
    /// `produce`'s or `consume`'s error (the stream stays usable); [`UsageError::WrongCudaContext`]
    /// for a stream of another CUDA context; [`Error::WrongGlContext`] or [`Error::NoGlContext`]
    /// when the stream's GL context is not current; [`Error::Timeout`] when a wait for GL's reads
    /// or CUDA's writes outlasts the timeout (or, for writes whose event could not be recorded, the
    /// wait for the whole context outlasts the wait limit); [`Error::GlCall`] from `glFenceSync` or
    /// `glClientWaitSync`; the driver's error from `cuEventRecord`, `cuEventQuery` or
    /// `cuCtxSynchronize` (such as a kernel's fault).
    #[doc(alias = "cuEventRecord")]
    #[doc(alias = "glFenceSync")]
    pub fn push_burst<S, E, P, C>(
        &mut self,
        stream: &S,
        produce: &mut P,
        consume: &mut C,
    ) -> Result<(), E>
    where
        S: AsStream,
        E: From<Error>,
        P: FnMut(&FrameWrite<'_>) -> Result<(), E>,
        C: FnMut(&FrameRead) -> Result<(), E>,
    {
        check_same_context(&self.ctx, stream, "the frame stream")?;
        crate::stream::refuse_capturing(
            &self.ctx,
            stream,
            "FrameStream::push_burst (nothing pushed)",
        )?;
        self.begin("glClientWaitSync (not called)")?;
        let (first, end) = (self.pushed, self.pushed + self.burst);
        let len = self.slots.len() as u64;
        if end > len && self.consumed < end - len {
            // The burst's slots hold frames not given to GL yet: those go now.
            self.consume_until(end - len, consume)?;
        }
        for f in first..end {
            let s = self.slot_of(f);
            self.wait_for_reads(s, consume)?;
        }
        for f in first..end {
            let s = self.slot_of(f);
            // Until its event is recorded, a wait for the slot synchronizes the whole context.
            self.slots[s].state.produced = false;
            self.slots[s].state.unrecorded.set(true);
        }
        self.pushed = end;
        self.complete.push_back((first, end));
        let (produced, recorded) = {
            let mut record = RecordOnDrop {
                slots: &self.slots,
                burst: self.slot_of(first)..self.slot_of(first) + self.burst(),
                stream,
                done: false,
            };
            let mut produced = (0, Ok(()));
            for f in first..end {
                let s = self.slot_of(f);
                let write = FrameWrite {
                    index: f,
                    slot: s,
                    memory: &self.slots[s].memory,
                };
                produced.1 = produce(&write);
                if produced.1.is_err() {
                    break;
                }
                produced.0 += 1;
            }
            (produced, record.record())
        };
        for (i, f) in (first..end).enumerate() {
            let s = self.slot_of(f);
            self.slots[s].state.produced = i < produced.0;
        }
        produced.1?;
        recorded?;
        self.consume_ready(consume)
    }

    /// Gives every pushed frame to GL: waits for CUDA's writes of each burst (at most the
    /// timeout per slot) and calls `consume` for its frames. It does not wait
    /// for GL: [`wait_idle`](Self::wait_idle) does.
    ///
    /// # Errors
    /// As [`push_burst`](Self::push_burst), less the producer's.
    pub fn flush<E, C>(&mut self, consume: &mut C) -> Result<(), E>
    where
        E: From<Error>,
        C: FnMut(&FrameRead) -> Result<(), E>,
    {
        self.begin("glFenceSync (not called)")?;
        self.consume_until(self.pushed, consume)
    }

    /// Waits on the CPU for every pushed frame's CUDA writes and every fence of GL's reads, at
    /// most the timeout each (writes whose event could not be recorded: the whole context, at
    /// most the wait limit). Frames not yet given to GL stay pushed.
    ///
    /// # Errors
    /// [`Error::WrongGlContext`] or [`Error::NoGlContext`] when the stream's GL context is not
    /// current; [`Error::Timeout`]; [`Error::GlCall`] from `glClientWaitSync`; the driver's
    /// error from `cuEventQuery` or `cuCtxSynchronize`.
    #[doc(alias = "glClientWaitSync")]
    pub fn wait_idle(&mut self) -> Result<()> {
        self.begin("glClientWaitSync (not called)")?;
        let timeout = self.timeout;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            slot.wait_written(timeout)?;
            slot.wait_for_reads(timeout, || format!("frame stream slot {i}"))?;
        }
        Ok(())
    }

    fn slot_of(&self, frame: u64) -> usize {
        // The remainder is below the slot count, a usize.
        (frame % self.slots.len() as u64) as usize
    }

    /// Checks that the owning GL context is current (for `call`), and fences the reads of a
    /// burst left without a fence (its consumer panicked, or placing the fence failed).
    fn begin(&mut self, call: &'static str) -> Result<()> {
        self.slots.owner.check(call)?;
        if let Some((first, end)) = self.reading {
            log::warn!(
                "cuda-gl: the GL reads of a frame stream's frames {first}..{end} have no fence \
                 (the consumer panicked or the fence could not be placed); fencing the GL \
                 commands issued so far"
            );
            self.fence_burst(first, end)?;
            self.reading = None;
        }
        Ok(())
    }

    /// Gives GL every complete burst whose writes are done, without waiting.
    fn consume_ready<E, C>(&mut self, consume: &mut C) -> Result<(), E>
    where
        E: From<Error>,
        C: FnMut(&FrameRead) -> Result<(), E>,
    {
        while let Some(&(first, end)) = self.complete.front() {
            if self.ordered {
                for f in first..end {
                    if !self.slots[self.slot_of(f)].is_written()? {
                        return Ok(());
                    }
                }
            }
            self.consume_burst(consume)?;
        }
        Ok(())
    }

    /// Gives GL every frame below `end`, waiting for CUDA's writes.
    fn consume_until<E, C>(&mut self, end: u64, consume: &mut C) -> Result<(), E>
    where
        E: From<Error>,
        C: FnMut(&FrameRead) -> Result<(), E>,
    {
        while self.consumed < end {
            let Some(&(first, last)) = self.complete.front() else {
                // Every pushed frame is in a complete burst or consumed, so this cannot happen;
                // writing the slots now could overwrite frames GL has not been given.
                return Err(Error::Internal {
                    what: format!(
                        "frames {}..{end} of the frame stream cannot be given to GL: no burst \
                         holds them",
                        self.consumed
                    ),
                }
                .into());
            };
            if self.ordered {
                let timeout = self.timeout;
                for f in first..last {
                    let s = self.slot_of(f);
                    self.slots[s].wait_written(timeout)?;
                }
            }
            self.consume_burst(consume)?;
        }
        Ok(())
    }

    /// Calls the consumer for each frame of the oldest complete burst, then fences GL's reads.
    fn consume_burst<E, C>(&mut self, consume: &mut C) -> Result<(), E>
    where
        E: From<Error>,
        C: FnMut(&FrameRead) -> Result<(), E>,
    {
        let Some((first, end)) = self.complete.pop_front() else {
            return Ok(());
        };
        self.reading = Some((first, end));
        let mut outcome = Ok(());
        for f in first..end {
            let s = self.slot_of(f);
            let slot = &self.slots[s];
            if !slot.state.produced {
                continue;
            }
            let frame = FrameRead {
                index: f,
                slot: s,
                buffer: slot.gl.buffer().0,
                bytes: slot.gl.size(),
                behind: self.pushed - 1 - f,
            };
            outcome = consume(&frame);
            if outcome.is_err() {
                break;
            }
        }
        // `reading` stays set until the fence is placed: if placing it fails (the consumer may
        // have switched GL contexts), the next call places it before any slot is written.
        if let Err(e) = self.fence_burst(first, end) {
            if outcome.is_err() {
                log::error!(
                    "cuda-gl: fencing a frame stream's burst failed after its consumer failed \
                     (the consumer's error is dropped): {e}"
                );
            }
            return Err(e.into());
        }
        self.reading = None;
        outcome
    }

    /// Places one fence after GL's reads of frames `first..end` (and flushes), for their slots.
    fn fence_burst(&mut self, first: u64, end: u64) -> Result<()> {
        let fence = Rc::new(Fence::place(self.slots.owner)?);
        for f in first..end {
            let s = self.slot_of(f);
            self.slots[s].read_fence = Some(fence.clone());
        }
        self.consumed = self.consumed.max(end);
        Ok(())
    }

    /// Waits until GL's reads of slot `s`'s previous frame are done, giving GL every burst that
    /// becomes ready meanwhile.
    fn wait_for_reads<E, C>(&mut self, s: usize, consume: &mut C) -> Result<(), E>
    where
        E: From<Error>,
        C: FnMut(&FrameRead) -> Result<(), E>,
    {
        let start = Instant::now();
        let mut pause = Duration::from_micros(1);
        while let Some(fence) = self.slots[s].read_fence.clone() {
            if !self.ordered || fence.signalled()? {
                self.slots[s].read_fence = None;
                break;
            }
            self.consume_ready(consume)?;
            // The consumer's own time counts against the limit: look at the fence once more
            // before giving up.
            if start.elapsed() >= self.timeout && !fence.signalled()? {
                return Err(Error::Timeout {
                    what: format!("the GL fence after the reads of frame stream slot {s}"),
                    timeout: self.timeout,
                }
                .into());
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(MAX_POLL_PAUSE);
        }
        Ok(())
    }
}

impl Drop for FrameStream {
    fn drop(&mut self) {
        let _in_drop = InDrop::enter();
        let gl_current = self.slots.gl_current_for_drop(&self.ctx, "a frame stream");
        // `wait_idle` first fences a burst left without a fence.
        let waited = if gl_current { self.wait_idle() } else { Ok(()) };
        self.slots
            .release(&self.ctx, "a frame stream", gl_current, waited);
    }
}
