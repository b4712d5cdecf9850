//! Releasing a [`SharedTexture`]'s image to CUDA ahead of its next write
//! ([`SharedTexture::release_ahead`]), a write taking an image released ahead, and the return of
//! one that no write took: the [`Owner::Ahead`] state's calls.

use super::SharedTexture;
use super::group::{After, release_all_for_write, signal_then_mark};
use super::turn::Owner;
use crate::error::Result;
use crate::result;
#[cfg(doc)]
use {super::CudaWrite, crate::wgpu_interop::WgpuError};

impl SharedTexture {
    /// Hands the image to CUDA now, after every wgpu use of the texture submitted so far, ahead
    /// of its next [`write`](Self::write), which then submits nothing to wgpu and only makes its
    /// stream wait on the GPU.
    ///
    /// For frames in flight (several textures written round-robin while wgpu uses the last
    /// frame): release each texture right after submitting its last use. Each hand-back to
    /// wgpu ([`CudaWrite::finish`]) waits on the GPU for CUDA's kernel, and wgpu's queue runs
    /// its submits in order, so a release submitted by the next `write` (after that hand-back)
    /// runs only once CUDA has written the frame before, and CUDA's next frame waits for it: the
    /// frames do not overlap. A release made ahead is already on the queue, before that hand-back.
    ///
    /// A texture already released ahead is left as it is. A texture released ahead and dropped
    /// with no write after is first handed back to wgpu on the GPU (CUDA waits for the release
    /// and signals on cuda-gl's private stream, which waits for no stream of yours; the drop
    /// then waits for that signal on the CPU, as for every write, at most the [wait
    /// limit](crate::wait_limit)).
    ///
    /// # Safety
    /// 1. From this call until a later [`write`](Self::write)'s guard hands the image back (a
    ///    [`finish`](CudaWrite::finish) or
    ///    [`finish_then_release`](CudaWrite::finish_then_release) that returned `Ok`, or a drop
    ///    that recorded no error), or this texture's drop has (recording no error), no wgpu
    ///    command uses the texture (a clone of [`texture`](Self::texture)): no submitted pass
    ///    or copy (a pass that sets a bind group holding a view of it uses it), and no
    ///    `Queue::write_texture`. The image is CUDA's, in a layout and queue family wgpu does
    ///    not track, as during a write.
    ///
    /// # Errors
    /// [`WgpuError::TextureDestroyed`] when the texture was destroyed through wgpu; what the
    /// recovery of an image that an earlier write left CUDA's returns; [`WgpuError::Refused`] or
    /// [`WgpuError::OutOfMemory`] from the release's submits (refused before the barriers were
    /// submitted, nothing was released; after, the image is CUDA's and the next `write`
    /// recovers it); [`Error::Timeout`](crate::Error::Timeout) or [`WgpuError::Vulkan`] when a
    /// refused signal could not be made from the host either.
    pub unsafe fn release_ahead(&mut self) -> Result<()> {
        if self.turn.owner == Owner::Ahead {
            return Ok(());
        }
        self.check_alive()?;
        // Not released ahead (checked above): the recovery of an image an earlier write left
        // CUDA's, then the release at its next value.
        release_all_for_write(std::array::from_mut(self))?;
        self.turn.released_ahead();
        Ok(())
    }

    /// The value that a write's CUDA wait waits for: the release made ahead
    /// ([`Owner::Ahead`], taken by the write with no submit of wgpu's), or one made now, after
    /// the recovery of an image an earlier write left CUDA's (`release_all_for_write` of this
    /// texture alone). From here the image is CUDA's, also when the caller's wait is not
    /// queued (then the next write or the drop recovers it).
    ///
    /// # Errors
    /// As [`recover`](Self::recover) and the release's submits.
    pub(super) fn release_for_write(&mut self) -> Result<u64> {
        let [value] = release_all_for_write(std::array::from_mut(self))?;
        Ok(value)
    }

    /// Hands an image released ahead ([`Owner::Ahead`]) that no write took back to wgpu, on
    /// the GPU: CUDA's wait for the release, then CUDA's signal of the next value and `done`,
    /// queued on cuda-gl's private stream joined to no caller's stream (no CUDA work of the
    /// application's uses the image, so none is waited for), then wgpu's acquire of that signal.
    /// The CPU waits for nothing.
    ///
    /// # Errors
    /// The driver's errors from the wait or the signal (the image is then CUDA's, and its
    /// recovery waits for the release on the CPU, then signals); as [`acquire`](Self::acquire)
    /// (the signal is queued: the recovery acquires it again).
    pub(super) fn return_released(&mut self) -> Result<()> {
        let (semaphore, done) = (
            self.resources.held.cuda_timeline.raw,
            self.resources.done.raw(),
        );
        let (released, signal) = (self.turn.value, self.turn.next());
        // CUDA's from the moment its wait may be queued.
        self.turn.taken();
        let mut queued = None;
        let ran = self.ctx.run_alone(|p| {
            // SAFETY: `wait_semaphore`'s (1): `p` is the private stream; the semaphore lives
            // as long as the resources, which outlive the private stream's use of it (`done`,
            // recorded after the signal below on the same stream, is waited for before they
            // go); wgpu signals `released` (the release ahead was accepted with its signal:
            // `Owner::Ahead`).
            unsafe { result::external::wait_semaphore(semaphore, released, p) }?;
            // SAFETY: `signal_then_mark`'s (1) as above, and `done` is a live event of this
            // context; (2): nothing waits for a value above `signal`, the turn's next, and it
            // follows the wait for the release.
            let marked = unsafe { signal_then_mark(semaphore, done, signal, p) }?;
            queued = Some(marked.is_ok());
            Ok(())
        });
        if let Some(marked) = queued {
            self.turn.signalled(signal, marked);
        }
        ran?;
        self.acquire(After::Nothing).map(drop)
    }
}
