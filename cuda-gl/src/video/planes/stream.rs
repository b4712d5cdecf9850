//! The stream mode of [`VideoPlanes`](super::VideoPlanes): no map or unmap. Both planes are
//! copied by CUDA, in the caller's stream order (on cuda-gl's private stream joined to it, as
//! every copy of cuda-gl's), into a slot of CUDA memory that GL imports (an [`ExternalRing`] of
//! two slots, used in turn); the upload waits on the CPU for those copies (the slot's event),
//! then GL writes each plane into its texture out of the slot (`glTexSubImage2D` with the
//! slot's buffer bound as the pixel unpack buffer), and a GL fence after those writes is what
//! the slot's next copy waits for. NVIDIA's GL on the CUDA GPU with `GL_EXT_memory_object_fd`.

use super::gl_write::{HeldTextures, PlaneSource};
use super::{PlaneFrame, PlaneTextures};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::external::{ExternalGl, ExternalRing};
use crate::queue::{AfterWork, then};
use crate::result;
use crate::stream::{AsStream, wait_limit};
use cuda_gl_sys as sys;
use std::sync::Arc;

/// Slots of the ring: the copies of one frame need not wait for GL's writes out of the last.
const SLOTS: usize = 2;

/// The call name of the copies' run (refusals name it).
const COPY_RUN: &str = "cuMemcpy2DAsync (not called)";

/// The ring, `Send` and `Sync`: see the `unsafe impl`s.
#[derive(Debug)]
struct Ring(ExternalRing);

// SAFETY: an `ExternalRing` is `!Send` because its GL objects (its buffers' imports, its
// fences) must be used and deleted with their own context current, which is thread-local
// state. Every one of its calls checks that the owning context is current on the calling
// thread before any GL call (`GlOwner::check`, as `ExternalRing`'s docs say), and its drop
// deletes its GL objects only when that context is current there, leaking them otherwise
// (`Slots::gl_current_for_drop`); its CUDA objects are `Send`. Its guards, which are not
// `Send`, live within one `upload` on one thread. So moving it to another thread can only turn
// a call into `WrongGlContext`/`NoGlContext`, or its drop into a logged leak.
unsafe impl Send for Ring {}
// SAFETY: shared references to `Ring` reach only its derived `Debug`, which reads plain fields
// of the ring (slot count and size, timeout, owner) and makes no GL or CUDA call.
unsafe impl Sync for Ring {}

/// The stream mode's state.
#[derive(Debug)]
pub(super) struct Streamed {
    /// Dropped before the claims: with the owning GL context current its drop waits for the
    /// slots' work and deletes the GL side; with another (or none) it leaks the GL side, which
    /// keeps the memory (see `VideoPlanes`' docs: drop the planes with the context current).
    ring: Ring,
    /// The slot the next upload uses.
    next: usize,
    /// The textures, of the ring's GL context; their claims end after the ring's drop.
    held: HeldTextures,
    /// The luma's bytes (rows tightly packed): the chroma's offset in a slot, whose size is
    /// both planes' bytes (fixed at `new`, the frame size being fixed).
    luma_bytes: usize,
    ctx: Arc<Context>,
}

impl Streamed {
    /// The state for frames into `textures` (of the GL context current on this thread): two
    /// slots of both planes' bytes, in `ctx`.
    ///
    /// # Errors
    /// As [`ExternalGl::current`] (a GL without `GL_EXT_memory_object_fd`); as
    /// [`HeldTextures::new`] ([`Error::AlreadyRegistered`] for a texture registered or held
    /// already); as [`ExternalRing::new`] (a GL of another GPU than `ctx`'s among them:
    /// [`Error::WrongDevice`] from the import's device check).
    pub(super) fn new(ctx: &Arc<Context>, textures: PlaneTextures) -> Result<Streamed> {
        let gl = ExternalGl::current()?;
        let (held, [luma, chroma]) = HeldTextures::new(textures)?;
        let bytes = luma.checked_add(chroma).ok_or(Error::Internal {
            what: "a video frame's planes of more bytes than usize holds".into(),
        })?;
        let ring = Ring(ExternalRing::new(ctx, &gl, SLOTS, bytes)?);
        let ctx = ctx.clone();
        Ok(Streamed {
            ring,
            next: 0,
            held,
            luma_bytes: luma,
            ctx,
        })
    }

    /// Copies both planes of the frame into the next slot in `stream`'s order (after GL's
    /// writes out of it last time, waited for on the CPU), on cuda-gl's private stream in one
    /// run joined to `stream`, with `after` and the slot's event right after the copies, in
    /// that run (see [`AfterWork`]; a run refused before its work leaves the slot idle,
    /// unrecorded: `CudaWrite::abandon`); waits on the CPU for the copies (the slot's event),
    /// then has GL write each plane into its
    /// texture out of the slot: GL's commands issued after this returns see the planes. Before
    /// any copy, [`HeldTextures::check_frame`]. Each wait at most the [wait
    /// limit](crate::wait_limit).
    ///
    /// # Safety
    /// 1. The frame lies at its address (its layout's `bytes()` bytes), device memory of the
    ///    ring's context, which stays allocated until the work queued on `stream` before this
    ///    returns has run.
    ///
    /// # Errors
    /// [`HeldTextures::check_frame`]'s (nothing is copied); as [`ExternalRing::write`] and
    /// [`ExternalRing::read`] (a capturing stream, [`Error::Timeout`]); the copies' errors;
    /// as the staged mode's GL writes.
    pub(super) unsafe fn upload(
        &mut self,
        frame: PlaneFrame<'_>,
        stream: &impl AsStream,
        after: AfterWork<'_>,
    ) -> Result<()> {
        let (fns, planes) = self.held.check_frame(frame)?;
        let offsets = [0, self.luma_bytes];
        let slot = self.next;
        self.ctx.bind()?;
        let ring = &mut self.ring.0;
        ring.set_timeout(wait_limit());
        let bytes = ring.slot_bytes();
        let mut write = ring.write(slot, stream)?;
        let base = write.device_ptr().as_raw();
        let mut copies = [sys::CUDA_MEMCPY2D::default(); 2];
        for ((((src, pitch), (row, height)), offset), copy) in
            planes.into_iter().zip(offsets).zip(&mut copies)
        {
            let end = row.checked_mul(height).and_then(|n| n.checked_add(offset));
            if end.is_none_or(|end| end > bytes) {
                write.abandon();
                return Err(Error::Internal {
                    what: "a video plane outside its slot of imported memory".into(),
                });
            }
            *copy = sys::CUDA_MEMCPY2D {
                srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                srcDevice: src,
                srcPitch: pitch,
                dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                dstDevice: base + offset as u64,
                dstPitch: row,
                WidthInBytes: row,
                Height: height,
                ..Default::default()
            };
        }
        // On the private stream, not on `stream`: a capture another thread begins on `stream`
        // could take copies queued there (the safety model's rule for cuda-gl's copies).
        let copy_both = |p| {
            for copy in &copies {
                // SAFETY: `copy_2d_async`'s (1): the source rows lie in the frame (this
                // function's (1)), the destination's `height` rows of `row` bytes from `offset`
                // lie within the slot's `bytes` (checked), device memory of the same context,
                // which the ring keeps allocated until its drop has waited for the slot's work;
                // (2): `p` is the private stream of the ring's context, bound by the run.
                unsafe { result::array::copy_2d_async(copy, p) }?;
            }
            Ok(())
        };
        // The slot's event right after the copies (and `after`), in their run: no join of its
        // own, and recorded only when the copies' run was not refused.
        let mut slot_event = Ok(());
        let copy_run = |p| {
            let copied = then(copy_both, after)(p);
            // SAFETY: `finish_in_run`'s (1): `p` is the private stream of the ring's context
            // (`self.ctx`'s), bound by this run, joined to `stream`, after the copies.
            slot_event = unsafe { write.finish_in_run(p) };
            copied
        };
        #[cfg(test)]
        tests::before_copy_run();
        // SAFETY: the stream is live while borrowed and of the ring's context (`write`
        // checked).
        let copied = unsafe { self.ctx.run_now(stream.raw_stream(), COPY_RUN, copy_run) };
        // A run refused before its work (a capture of `stream` begun since `write`'s check)
        // queued nothing: the slot goes back to idle, unrecorded (nothing once recorded).
        write.abandon();
        copied?;
        // A record that failed leaves the slot for the ring to recover.
        slot_event?;
        let read = ring.read(slot)?;
        let source = PlaneSource::Buffer {
            name: read.buffer().0,
            size: bytes,
            offsets,
        };
        let written = self.held.write(fns, frame.layout, source);
        // The fence after GL's writes, which the slot's next copy waits for, placed even when a
        // write was refused (GL may have read part of the slot). One that fails leaves the
        // slot marked as being read, and the ring's next call on it places the fence: the
        // textures hold the frame all the same, so that failure is logged, not returned.
        if let Err(e) = read.finish() {
            log::warn!("cuda-gl: the fence after a video plane upload's GL writes: {e}");
        }
        self.next = (slot + 1) % SLOTS;
        written
    }
}

/// What crate tests provoke between an upload's `ExternalRing::write` and its copies' run.
#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    thread_local! {
        /// What runs before the next stream-mode upload's copies' run on this thread.
        static BEFORE_COPY_RUN: Cell<Option<Box<dyn FnOnce()>>> = const { Cell::new(None) };
    }

    /// Has `f` run in the next stream-mode upload on this thread, between its ring write's
    /// checks and its copies' run (where another thread may begin a capture of the stream).
    #[cfg(all(feature = "cudarc", feature = "egl"))]
    pub(crate) fn before_next_copy_run(f: impl FnOnce() + 'static) {
        BEFORE_COPY_RUN.with(|hook| hook.set(Some(Box::new(f))));
    }

    /// Runs the hook set by [`before_next_copy_run`], if any.
    pub(super) fn before_copy_run() {
        if let Some(f) = BEFORE_COPY_RUN.with(Cell::take) {
            f();
        }
    }
}
